//! Token issuance and stand-alone verification, so users need no other JWT library.

use napi::bindgen_prelude::*;
use napi::{JsValue, ValueType};
use serde_json::{Map, Value};

use super::js_error::ArgError;
use crate::authenticator::Authenticator;
use crate::error::AuthError;
use crate::jwt::{sign::sign_payload, Claim, Claims};
use crate::request_id::new_request_id;
use crate::tenant::is_valid_tenant_id;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Access,
    Refresh,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Access => "access",
            Kind::Refresh => "refresh",
        }
    }
}

/// Claims auth-shield sets itself; a caller passing one is told so instead of being ignored.
const RESERVED: &[(&str, &str)] = &[
    ("iat", "the signing time"),
    ("exp", "accessTtlSec / refreshTtlSec"),
    ("jti", "a fresh UUID"),
    ("type", "the signing method"),
    ("iss", "config.issuer"),
];

/// Result of `verifyRefreshToken` / `verifyAccessToken`.
#[napi_derive::napi(object)]
pub struct TokenVerification {
    /// `true` when the token passed every check.
    pub valid: bool,
    /// The `sub` claim.
    pub user_id: Option<String>,
    pub email: Option<String>,
    pub role: Option<String>,
    /// The `tenant_id` claim.
    pub tenant_id: Option<String>,
    /// The token id (`jti`), the key for revocation lists.
    pub jti: Option<String>,
    /// `exp` in seconds since the epoch.
    pub expires_at: Option<f64>,
    /// Human-readable reason (invalid tokens only).
    pub error: Option<String>,
    /// Stable machine code, as in `AuthResult.errorCode` (invalid tokens only).
    pub error_code: Option<String>,
    /// 200 when valid, else the HTTP status of the error.
    pub error_status: u32,
}

pub fn sign(env: &Env, core: &Authenticator, claims: Unknown, kind: Kind) -> Result<String> {
    let key = match kind {
        Kind::Access => core.access_key(),
        Kind::Refresh => core
            .refresh_key()
            .ok_or_else(|| no_refresh_secret("signRefreshToken"))?,
    };
    let mut payload = claims_to_map(env, claims).map_err(|e| e.throw(env))?;
    check_user_claims(&payload).map_err(|e| e.throw(env))?;
    let s = core.settings();
    let now = core.now_sec();
    let ttl = if kind == Kind::Access {
        s.access_ttl_sec
    } else {
        s.refresh_ttl_sec
    };
    // Whole seconds, as RFC 7519 NumericDate is usually written (and as `jsonwebtoken` writes it).
    payload.insert("iat".into(), (now.floor() as i64).into());
    payload.insert("exp".into(), ((now + ttl).floor() as i64).into());
    if let Some(iss) = s.issuers.first() {
        payload.insert("iss".into(), iss.clone().into());
    }
    if let (Some(aud), false) = (s.audiences.first(), payload.contains_key("aud")) {
        payload.insert("aud".into(), aud.clone().into());
    }
    let jti = new_request_id();
    payload.insert(
        "jti".into(),
        String::from_utf8_lossy(&jti).into_owned().into(),
    );
    payload.insert("type".into(), kind.name().into());
    let json = serde_json::to_vec(&payload).map_err(|e| Error::from_reason(e.to_string()))?;
    let token = sign_payload(key, &json);
    if token.len() > s.max_token_bytes {
        return Err(ArgError::Range(format!(
            "the signed token is {} bytes, over maxTokenBytes ({}); it would be refused",
            token.len(),
            s.max_token_bytes
        ))
        .throw(env));
    }
    Ok(token)
}

pub fn verify(
    env: &Env,
    core: &Authenticator,
    token: Unknown,
    kind: Kind,
) -> Result<TokenVerification> {
    if token.get_type().ok() != Some(ValueType::String) {
        return Err(ArgError::Type("token must be a string".into()).throw(env));
    }
    let token: String = unsafe { token.cast() }?;
    let mut scratch = Vec::new();
    let verified = match kind {
        Kind::Refresh => core
            .verify_refresh(token.as_bytes(), &mut scratch)
            .ok_or_else(|| no_refresh_secret("verifyRefreshToken"))?,
        Kind::Access if token.len() > core.settings().max_token_bytes => {
            Err(AuthError::TokenTooLarge)
        }
        Kind::Access => core.verify_access(token.as_bytes(), &mut scratch),
    };
    Ok(match verified {
        Ok(claims) => verification_of(&claims),
        Err(err) => TokenVerification {
            valid: false,
            user_id: None,
            email: None,
            role: None,
            tenant_id: None,
            jti: None,
            expires_at: None,
            error: Some(err.message().into()),
            error_code: Some(err.code().into()),
            error_status: err.status().into(),
        },
    })
}

fn verification_of(c: &Claims<'_>) -> TokenVerification {
    let text = |claim: &Claim<'_>| claim.as_str().map(str::to_owned);
    TokenVerification {
        valid: true,
        user_id: text(&c.sub),
        email: text(&c.email),
        role: text(&c.role),
        tenant_id: text(&c.tenant_id),
        jti: text(&c.jti),
        expires_at: c.exp.as_num(),
        error: None,
        error_code: None,
        error_status: 200,
    }
}

fn no_refresh_secret(method: &str) -> Error {
    Error::new(
        Status::GenericFailure,
        format!("{method} needs config.refreshSecret"),
    )
}

/// Serializes through the engine's own `JSON.stringify`, which turns cycles, BigInts and the
/// like into exceptions instead of letting them recurse through native code.
fn claims_to_map(env: &Env, claims: Unknown) -> std::result::Result<Map<String, Value>, ArgError> {
    let not_object = || ArgError::Type("claims must be a plain object".into());
    if claims.get_type().ok() != Some(ValueType::Object) || claims.is_array().unwrap_or(true) {
        return Err(not_object());
    }
    let json: Object = env
        .get_global()
        .and_then(|g| g.get_named_property_unchecked("JSON"))
        .map_err(|_| not_object())?;
    let stringify: Function<Unknown, Unknown> = json
        .get_named_property_unchecked("stringify")
        .map_err(|_| not_object())?;
    let text = stringify
        .apply(Some(&json), claims)
        .map_err(|e| ArgError::Type(format!("claims could not be serialized: {}", e.reason)))?;
    if text.get_type().ok() != Some(ValueType::String) {
        return Err(not_object());
    }
    let text: String = unsafe { text.cast() }.map_err(|_| not_object())?;
    serde_json::from_str(&text)
        .map_err(|e| ArgError::Range(format!("claims could not be encoded: {e}")))
}

fn check_user_claims(payload: &Map<String, Value>) -> std::result::Result<(), ArgError> {
    for (name, setter) in RESERVED {
        if payload.contains_key(*name) {
            return Err(ArgError::Type(format!(
                "claims.{name} is set by auth-shield ({setter}); remove it"
            )));
        }
    }
    match payload.get("sub") {
        Some(Value::String(s)) if !s.is_empty() => {}
        _ => {
            return Err(ArgError::Type(
                "claims.sub must be a non-empty string (the user id)".into(),
            ))
        }
    }
    for name in ["email", "role"] {
        if payload.get(name).is_some_and(|v| !v.is_string()) {
            return Err(ArgError::Type(format!("claims.{name} must be a string")));
        }
    }
    match payload.get("tenant_id") {
        None => {}
        Some(Value::String(t)) if is_valid_tenant_id(t.as_bytes()) => {}
        Some(_) => {
            return Err(ArgError::Range(
                "claims.tenant_id must be 1-63 characters of [A-Za-z0-9_-], starting with a letter or digit".into(),
            ))
        }
    }
    if let Some(aud) = payload.get("aud") {
        let ok = aud.is_string()
            || aud
                .as_array()
                .is_some_and(|a| a.iter().all(Value::is_string));
        if !ok {
            return Err(ArgError::Type(
                "claims.aud must be a string or an array of strings".into(),
            ));
        }
    }
    for name in ["nbf"] {
        if payload.get(name).is_some_and(|v| !v.is_number()) {
            return Err(ArgError::Type(format!("claims.{name} must be a number")));
        }
    }
    Ok(())
}
