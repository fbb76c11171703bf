//! Config validation and token issuance on hostile input: any option values, any claims text.
//!
//! Validation must refuse or accept without panicking, an accepted config must respect the
//! schema's bounds, and a token we issue must verify as its own kind and never as the other.
#![no_main]

use auth_shield::internals::Authenticator;
use auth_shield::internals::{RawConfig, RawValue};
use auth_shield::internals::TokenKind;
use auth_shield::internals::schema;
use auth_shield::internals::Settings;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Value {
    Absent,
    Bool(bool),
    Number(f64),
    Text(String),
    Bytes(Vec<u8>),
    List(Vec<String>),
    Other,
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// (index into the schema's options, or an unknown name past the end; value)
    options: Vec<(u8, Value)>,
    claims: String,
    refresh: bool,
}

fn raw(value: Value) -> RawValue {
    match value {
        Value::Absent => RawValue::Absent,
        Value::Bool(b) => RawValue::Bool(b),
        Value::Number(n) => RawValue::Number(n),
        Value::Text(s) => RawValue::Text(s),
        Value::Bytes(b) => RawValue::from(&b[..]),
        Value::List(l) => RawValue::List(l.into_iter().map(RawValue::Text).collect()),
        Value::Other => RawValue::Other,
    }
}

fuzz_target!(|input: Input| {
    let options = &schema().options;
    let mut config = RawConfig::new();
    let mut seen = std::collections::HashSet::new();
    for (index, value) in input.options {
        let name = options
            .get(index as usize)
            .map_or_else(|| format!("unknown{index}"), |o| o.name.clone());
        // A JS object has each key once.
        if seen.insert(name.clone()) {
            config.push(name, raw(value));
        }
    }
    if !seen.contains("accessSecret") {
        config.push(
            "accessSecret".into(),
            RawValue::from(&b"fuzz-secret-fuzz-secret-fuzz-secret!"[..]),
        );
    }
    let Ok(settings) = Settings::from_config(config) else {
        return;
    };
    assert!(settings.max_token_bytes() >= 64 && settings.max_token_bytes() <= 1 << 20);
    assert!(settings.rate_limit_refill() > 0.0);
    assert!(settings.access_secret().is_some_and(|s| !s.is_empty()));
    let auth = Authenticator::new(settings);
    let kind = if input.refresh {
        TokenKind::Refresh
    } else {
        TokenKind::Access
    };
    let Ok(token) = auth.issue(kind, &input.claims) else {
        return;
    };
    let mut scratch = Vec::new();
    let other = if input.refresh {
        TokenKind::Access
    } else {
        TokenKind::Refresh
    };
    if let Some(verdict) = auth.verify(other, token.as_bytes(), &mut scratch) {
        assert!(verdict.is_err(), "a {kind:?} token verified as {other:?}");
    }
    let verdict = auth
        .verify(kind, token.as_bytes(), &mut scratch)
        .expect("issued, so a key exists");
    // Only claims the config rejects on verification (say an `nbf` in the future or an
    // `aud` outside the configured list) may refuse a token we issued; never its shape.
    if let Err(e) = verdict {
        assert!(
            !matches!(
                e.code(),
                "malformed_token" | "invalid_signature" | "token_too_large" | "wrong_token_type"
            ),
            "issued token refused: {e:?}"
        );
    }
});
