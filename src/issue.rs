//! Token issuance: the caller's claims plus the ones auth-shield owns (`iat`, `exp`, `jti`,
//! `type`, and `iss` / `aud` from the config), signed HS256.

use serde_json::{Map, Value};

use crate::call_error::ArgError;
use crate::contract::messages;
use crate::jwt::sign::sign_payload;
use crate::jwt::{HmacKey, TokenKind};
use crate::tenant::is_valid_tenant_id;
use signing_key::SigningKey;

/// Claims auth-shield sets itself; a caller passing one is told so instead of being ignored.
const RESERVED: &[(&str, &str)] = &[
    ("iat", "the signing time"),
    ("exp", "accessTtlSec / refreshTtlSec"),
    ("jti", "a fresh UUID"),
    ("type", "the signing method"),
    ("iss", "config.issuer"),
];

/// What signs a token: an HMAC secret (`HS256` header) or a `signingKey` (its own header, with `kid`).
pub enum Signer<'a> {
    Hmac(&'a HmacKey),
    Key(&'a SigningKey),
}

/// What the config says every token of one kind carries (`Settings::issue_rules`): issuance
/// reads these values, not the settings, which sit above it (they hold a [`SigningKey`]).
pub struct IssueRules<'a> {
    /// `accessTtlSec` or `refreshTtlSec`.
    pub ttl_sec: f64,
    /// The first configured `issuer`, written as `iss`.
    pub issuer: Option<&'a str>,
    /// The first configured `audience`, written as `aud` unless the claims have one.
    pub audience: Option<&'a str>,
    /// `maxTokenBytes`: a token we would refuse ourselves is never handed out.
    pub max_token_bytes: usize,
}

/// Everything that varies per issued token besides the claims.
pub struct Issue<'a> {
    pub kind: TokenKind,
    pub key: Signer<'a>,
    /// Seconds since the epoch, millisecond precision: the `iat`.
    pub now: f64,
    /// The token id, unique per token (a UUID).
    pub jti: &'a str,
}

/// Signs `claims_json` (a JSON object, as `JSON.stringify` wrote it) as a token of `kind`.
pub fn issue(
    rules: &IssueRules<'_>,
    claims_json: &str,
    token: Issue<'_>,
) -> Result<String, ArgError> {
    let mut payload: Map<String, Value> = serde_json::from_str(claims_json)
        .map_err(|e| ArgError::Range(format!("claims could not be encoded: {e}")))?;
    check_user_claims(&payload)?;
    let now = token.now;
    // Millisecond precision (RFC 7519 §2 allows a fractional NumericDate): "log out everywhere"
    // can then refuse every token issued before the call and accept the next login, even in
    // the same second (docs/revocation.md). Written as JSON.stringify writes it: whole numbers
    // without a fraction. `exp` stays whole seconds, as most verifiers expect.
    payload.insert("iat".into(), numeric_date(now));
    let exp = (now + rules.ttl_sec).floor() as i64;
    payload.insert("exp".into(), exp.into());
    if let Some(iss) = rules.issuer {
        payload.insert("iss".into(), iss.into());
    }
    if let (Some(aud), false) = (rules.audience, payload.contains_key("aud")) {
        payload.insert("aud".into(), aud.into());
    }
    payload.insert("jti".into(), token.jti.into());
    payload.insert("type".into(), token.kind.claim().into());
    let json = serde_json::to_vec(&payload)
        .map_err(|e| ArgError::Range(format!("claims could not be encoded: {e}")))?;
    let signed = match token.key {
        Signer::Hmac(key) => sign_payload(key, &json),
        Signer::Key(key) => key.sign_payload(&json),
    };
    // A token we would refuse ourselves is a bug to report now, not a 401 later.
    if signed.len() > rules.max_token_bytes {
        return Err(ArgError::Range(messages::signed_token_too_large(
            signed.len() as f64,
            rules.max_token_bytes as f64,
        )));
    }
    Ok(signed)
}

fn numeric_date(t: f64) -> Value {
    if t.fract() == 0.0 {
        (t as i64).into()
    } else {
        serde_json::Number::from_f64(t).map_or(Value::Null, Value::Number)
    }
}

fn check_user_claims(payload: &Map<String, Value>) -> Result<(), ArgError> {
    for (name, setter) in RESERVED {
        if payload.contains_key(*name) {
            return Err(ArgError::Type(format!(
                "claims.{name} is set by auth-shield ({setter}); remove it"
            )));
        }
    }
    match payload.get("sub") {
        Some(Value::String(s)) if !s.is_empty() => {}
        _ => return Err(ArgError::Type(messages::CLAIMS_SUB_REQUIRED.into())),
    }
    for name in ["email", "role"] {
        if payload.get(name).is_some_and(|v| !v.is_string()) {
            return Err(ArgError::not_string(&format!("claims.{name}")));
        }
    }
    match payload.get("tenant_id") {
        None => {}
        Some(Value::String(t)) if is_valid_tenant_id(t.as_bytes()) => {}
        Some(_) => return Err(ArgError::Range(messages::CLAIMS_TENANT_ID_INVALID.into())),
    }
    if let Some(aud) = payload.get("aud") {
        let ok = aud.is_string()
            || aud
                .as_array()
                .is_some_and(|a| a.iter().all(Value::is_string));
        if !ok {
            return Err(ArgError::Type(messages::CLAIMS_AUD_INVALID.into()));
        }
    }
    if payload.get("nbf").is_some_and(|v| !v.is_number()) {
        return Err(ArgError::not_number("claims.nbf"));
    }
    Ok(())
}

pub mod signing_key;

#[cfg(test)]
mod tests;
