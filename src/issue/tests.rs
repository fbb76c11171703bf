use super::*;
use crate::config::RawConfig;
use crate::jwt::verify::decode_verified;
use crate::settings::Settings;

const SECRET: &[u8] = b"issue-secret-issue-secret-issue-secret";
const NOW: f64 = 1_700_000_000.5;

fn settings(raw: RawConfig) -> Settings {
    Settings::from_config(raw.with("accessSecret", SECRET)).unwrap()
}

fn sign(s: &Settings, claims: &str, kind: TokenKind) -> Result<String, ArgError> {
    let key = HmacKey::new(SECRET);
    issue(
        &s.issue_rules(kind),
        claims,
        Issue {
            kind,
            key: Signer::Hmac(&key),
            now: NOW,
            jti: "id-1",
        },
    )
}

fn payload(token: &str) -> Value {
    let mut scratch = Vec::new();
    decode_verified(token.as_bytes(), &HmacKey::new(SECRET), &mut scratch).unwrap();
    let middle = token.split('.').nth(1).unwrap();
    let mut json = Vec::new();
    crate::jwt::base64url::decode_into(middle.as_bytes(), &mut json).unwrap();
    serde_json::from_slice(&json).unwrap()
}

#[test]
fn adds_the_claims_auth_shield_owns() {
    let s = settings(
        RawConfig::new()
            .with("issuer", vec!["iss-a", "iss-b"])
            .with("audience", "api")
            .with("accessTtlSec", 60.0),
    );
    let p = payload(&sign(&s, r#"{"sub":"u1","custom":{"a":1}}"#, TokenKind::Access).unwrap());
    // The signing time to the millisecond; `exp` in whole seconds.
    assert_eq!(p["iat"], 1_700_000_000.5);
    assert_eq!(p["exp"], 1_700_000_060i64);
    assert_eq!(p["iss"], "iss-a");
    assert_eq!(p["aud"], "api");
    assert_eq!(p["jti"], "id-1");
    assert_eq!(p["type"], "access");
    assert_eq!(p["custom"]["a"], 1);
}

#[test]
fn refresh_tokens_get_their_own_type_and_lifetime() {
    let s = settings(RawConfig::new().with("refreshTtlSec", 3600.0));
    let p = payload(&sign(&s, r#"{"sub":"u1"}"#, TokenKind::Refresh).unwrap());
    assert_eq!(p["type"], "refresh");
    assert_eq!(
        p["exp"].as_i64().unwrap() - p["iat"].as_f64().unwrap().floor() as i64,
        3600
    );
}

#[test]
fn a_caller_audience_is_kept() {
    let s = settings(RawConfig::new().with("audience", "api"));
    let p = payload(&sign(&s, r#"{"sub":"u","aud":["x","y"]}"#, TokenKind::Access).unwrap());
    assert_eq!(p["aud"], serde_json::json!(["x", "y"]));
}

#[test]
fn refuses_reserved_and_malformed_claims() {
    let s = settings(RawConfig::new());
    for claims in [
        r#"{}"#,
        r#"{"sub":""}"#,
        r#"{"sub":5}"#,
        r#"{"sub":"u","exp":1}"#,
        r#"{"sub":"u","iat":1}"#,
        r#"{"sub":"u","jti":"x"}"#,
        r#"{"sub":"u","type":"refresh"}"#,
        r#"{"sub":"u","iss":"me"}"#,
        r#"{"sub":"u","email":1}"#,
        r#"{"sub":"u","role":true}"#,
        r#"{"sub":"u","aud":[1]}"#,
        r#"{"sub":"u","nbf":"soon"}"#,
    ] {
        assert!(
            matches!(sign(&s, claims, TokenKind::Access), Err(ArgError::Type(_))),
            "{claims}"
        );
    }
    for claims in [
        r#"{"sub":"u","tenant_id":"bad:tenant"}"#,
        r#"[1]"#,
        "not json",
    ] {
        assert!(
            matches!(sign(&s, claims, TokenKind::Access), Err(ArgError::Range(_))),
            "{claims}"
        );
    }
}

#[test]
fn refuses_tokens_it_would_not_accept() {
    let s = settings(RawConfig::new().with("maxTokenBytes", 64.0));
    let err = sign(&s, r#"{"sub":"a-rather-long-user-id"}"#, TokenKind::Access).unwrap_err();
    assert!(err.message().contains("maxTokenBytes"), "{err:?}");
}

#[test]
fn a_whole_second_iat_is_written_without_a_fraction_as_json_stringify_does() {
    assert_eq!(numeric_date(1_700_000_000.0).to_string(), "1700000000");
    assert_eq!(
        numeric_date(1_700_000_000.123).to_string(),
        "1700000000.123"
    );
    assert_eq!(
        numeric_date(1_700_000_000.001).to_string(),
        "1700000000.001"
    );
}
