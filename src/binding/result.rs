//! Builds the flat `AuthResult` and `TokenVerification` objects through the cached factories
//! (`env_cache`): every key always present, `undefined` where it does not apply, keys in the
//! order `contract/results.json` lists them.

use napi::sys;
use std::ptr;

use super::env_cache::EnvCache;
use super::factories::TENANT_SOURCES;
use super::js_error::{internal, CallError};
use crate::authenticator::Outcome;
use crate::error::AuthError;
use crate::jwt::validate::Scopes;
use crate::jwt::{Claim, Claims};

/// The fields of every `AuthResult`, documented for `index.d.ts` (never converted at run time:
/// the factories in `env_cache` build the objects). Its fields follow `contract/results.json`'s
/// `AuthResult` list, which a test checks. `AuthResult` itself is the union `AuthSuccess |
/// AuthFailure` on `authenticated` (types/index-header.d.ts), so TypeScript narrows.
#[napi_derive::napi(object, object_to_js = false, js_name = "AuthResultFields")]
#[cfg_attr(test, derive(serde::Serialize, Default))]
#[cfg_attr(test, serde(rename_all = "camelCase"))]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "declared for index.d.ts only: env_cache's factories build the objects"
    )
)]
pub struct AuthResult {
    /// `true` when every check passed.
    pub authenticated: bool,
    /// The token's `sub` claim (success only).
    #[napi(ts_type = "string | undefined")]
    pub user_id: Option<String>,
    /// The token's `email` claim, when present (success only).
    #[napi(ts_type = "string | undefined")]
    pub email: Option<String>,
    /// The token's `role` claim, when present (success only).
    #[napi(ts_type = "string | undefined")]
    pub role: Option<String>,
    /// Resolved tenant: `tenant_id` claim > `X-Tenant-ID` header > Host subdomain (success only).
    #[napi(ts_type = "string | undefined")]
    pub tenant_id: Option<String>,
    /// Where `tenantId` came from: `'token'` (the `tenant_id` claim), `'header'`
    /// (X-Tenant-ID), `'host'` or `'issuer'` (the trusted issuer's tenant, `issuers[].tenant`);
    /// `undefined` when no tenant was resolved or on failure.
    #[napi(ts_type = "'token' | 'header' | 'host' | 'issuer' | undefined")]
    pub tenant_source: Option<String>,
    /// The scopes the token grants (success only), space-delimited (RFC 6749 §3.3): the
    /// scope-tokens of its `scope`, then `scp` (a string or a list), then Auth0's
    /// `permissions`; `''` when they grant none, `undefined` without any of those claims,
    /// `null` when one has a type that grants nothing (a route's `requireScopes` answers
    /// `invalid_claims`).
    #[napi(ts_type = "string | null | undefined")]
    pub scope: Option<String>,
    /// A fresh UUID v4 for this request, failures included.
    pub request_id: String,
    /// Tokens left in the caller's bucket after this request (success and `rate_limited`).
    #[napi(ts_type = "number | undefined")]
    pub rate_limit_remaining: Option<u32>,
    /// Bucket capacity (`rateLimitMax`); `undefined` when rate limiting is off.
    #[napi(ts_type = "number | undefined")]
    pub rate_limit_limit: Option<u32>,
    /// Milliseconds until a retry can succeed; 0 unless `errorCode` is `rate_limited`.
    pub retry_after_ms: f64,
    /// Human-readable reason, safe to return to clients (failure only).
    #[napi(ts_type = "string | undefined")]
    pub error: Option<String>,
    /// Stable machine code, see the README's table (failure only).
    #[napi(ts_type = "ErrorCode | undefined")]
    pub error_code: Option<String>,
    /// HTTP status to answer with: 400, 401, 403 or 429 (failure only).
    #[napi(ts_type = "number | undefined")]
    pub error_status: Option<u32>,
    /// A request admitted with a DPoP proof: the proof's replay key, SHA-256(thumbprint `.`
    /// jti) in hex, for a replay check shared across processes (success of a DPoP request only).
    #[napi(ts_type = "string | undefined")]
    pub dpop_replay_key: Option<String>,
    /// Until when (seconds since the epoch: the proof's `iat` plus `dpopIatWindowSec`) the
    /// proof stays a replay (success of a DPoP request only).
    #[napi(ts_type = "number | undefined")]
    pub dpop_replay_until_sec: Option<f64>,
}

/// The fields of `verifyAccessToken` / `verifyRefreshToken`'s result. Every key is always
/// present, `undefined` where it does not apply (absent claims, or an invalid token).
/// `TokenVerification` is the union `TokenValid | TokenInvalid` on `valid` (index-header).
#[napi_derive::napi(object, object_to_js = false, js_name = "TokenVerificationFields")]
#[cfg_attr(test, derive(serde::Serialize, Default))]
#[cfg_attr(test, serde(rename_all = "camelCase"))]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "declared for index.d.ts only: env_cache's factories build the objects"
    )
)]
pub struct TokenVerification {
    /// `true` when the token passed every check.
    pub valid: bool,
    /// The `sub` claim.
    #[napi(ts_type = "string | undefined")]
    pub user_id: Option<String>,
    /// The `email` claim.
    #[napi(ts_type = "string | undefined")]
    pub email: Option<String>,
    /// The `role` claim.
    #[napi(ts_type = "string | undefined")]
    pub role: Option<String>,
    /// The `tenant_id` claim.
    #[napi(ts_type = "string | undefined")]
    pub tenant_id: Option<String>,
    /// The token id (`jti`), the key for revocation lists.
    #[napi(ts_type = "string | undefined")]
    pub jti: Option<String>,
    /// The `exp` claim: a JWT NumericDate, seconds since the epoch (not milliseconds).
    #[napi(ts_type = "number | undefined")]
    pub expires_at_sec: Option<f64>,
    /// Human-readable reason (invalid tokens only).
    #[napi(ts_type = "string | undefined")]
    pub error: Option<String>,
    /// Stable machine code, as in `AuthResult.errorCode` (invalid tokens only).
    #[napi(ts_type = "ErrorCode | undefined")]
    pub error_code: Option<String>,
    /// The HTTP status of the error (invalid tokens only).
    #[napi(ts_type = "number | undefined")]
    pub error_status: Option<u32>,
}

/// One factory call with the varying fields only.
///
/// # Safety
/// `env` must be the live env of the current call.
pub unsafe fn build_auth_result(
    env: sys::napi_env,
    outcome: &Outcome<'_>,
) -> Result<sys::napi_value, CallError> {
    // SAFETY: `env` is live (caller's contract) for this and every Node-API call below; all
    // handles passed on were made in this call.
    unsafe {
        let cache = EnvCache::get(env).ok_or_else(internal)?;
        let undefined = undefined(env);
        let limit = outcome.rate_limit_limit.map_or(undefined, |n| uint(env, n));
        let request_id = string(env, &outcome.request_id);
        match &outcome.result {
            Ok(id) => {
                let opt = |s: Option<&str>| s.map_or(undefined, |s| string(env, s.as_bytes()));
                let source = id.tenant.source().map_or(0, |s| {
                    1 + TENANT_SOURCES.iter().position(|t| *t == s).unwrap_or(0)
                });
                let args = [
                    string(env, id.user_id.as_bytes()),
                    opt(id.email.as_deref()),
                    opt(id.role.as_deref()),
                    opt(id.tenant.as_str()),
                    uint(env, source as u32),
                    request_id,
                    id.rate_limit_remaining.map_or(undefined, |n| uint(env, n)),
                    limit,
                    match &id.scope {
                        Scopes::Absent => undefined,
                        Scopes::Malformed => null(env),
                        Scopes::Granted(s) => string(env, s.as_bytes()),
                    },
                ];
                match &id.dpop_replay {
                    None => call(env, cache.success(env), &args),
                    Some(replay) => {
                        let mut hex = [0u8; 64];
                        for (pair, byte) in hex.chunks_exact_mut(2).zip(replay.key) {
                            pair[0] = HEX[(byte >> 4) as usize];
                            pair[1] = HEX[(byte & 15) as usize];
                        }
                        let mut with_dpop = [undefined; 11];
                        with_dpop[..9].copy_from_slice(&args);
                        with_dpop[9] = string(env, &hex);
                        with_dpop[10] = double(env, replay.until_sec);
                        call(env, cache.success_dpop(env), &with_dpop)
                    }
                }
            }
            Err(failure) => {
                let args = [
                    uint(env, error_index(failure.error)),
                    request_id,
                    limit,
                    double(env, failure.retry_after_ms as f64),
                ];
                call(env, cache.failure(env), &args)
            }
        }
    }
}

/// The `TokenVerification` of a verdict, in one factory call.
///
/// # Safety
/// `env` must be the live env of the current call.
pub unsafe fn build_verification(
    env: sys::napi_env,
    verdict: Result<&Claims<'_>, &AuthError>,
) -> Result<sys::napi_value, CallError> {
    // SAFETY: as in `build_auth_result`.
    unsafe {
        let cache = EnvCache::get(env).ok_or_else(internal)?;
        let undefined = undefined(env);
        match verdict {
            Ok(c) => {
                let text = |claim: &Claim<'_>| {
                    claim
                        .as_str()
                        .map_or(undefined, |s| string(env, s.as_bytes()))
                };
                let args = [
                    text(&c.sub),
                    text(&c.email),
                    text(&c.role),
                    text(&c.tenant_id),
                    text(&c.jti),
                    c.exp.as_num().map_or(undefined, |n| double(env, n)),
                ];
                call(env, cache.verified(env), &args)
            }
            Err(err) => call(env, cache.refused(env), &[uint(env, error_index(*err))]),
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn error_index(error: AuthError) -> u32 {
    AuthError::ALL.iter().position(|e| *e == error).unwrap_or(0) as u32
}

/// # Safety
/// `env` live; `function` and `args` handles of the current call.
unsafe fn call(
    env: sys::napi_env,
    function: sys::napi_value,
    args: &[sys::napi_value],
) -> Result<sys::napi_value, CallError> {
    let mut undefined = ptr::null_mut();
    let mut result = ptr::null_mut();
    // SAFETY: the caller's contract; `args` outlives the call and its length is passed.
    let status = unsafe {
        sys::napi_get_undefined(env, &mut undefined);
        sys::napi_call_function(
            env,
            undefined,
            function,
            args.len(),
            args.as_ptr(),
            &mut result,
        )
    };
    if status == sys::Status::napi_ok && !result.is_null() {
        Ok(result)
    } else {
        Err(internal())
    }
}

/// # Safety
/// `env` must be live.
unsafe fn undefined(env: sys::napi_env) -> sys::napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live; `out` is a valid local.
    unsafe { sys::napi_get_undefined(env, &mut out) };
    out
}

/// ASCII (the usual case) goes through the one-byte constructor, which skips UTF-8 decoding.
///
/// # Safety
/// `env` must be live.
unsafe fn string(env: sys::napi_env, bytes: &[u8]) -> sys::napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live; pointer and length describe `bytes`; `out` is a valid local.
    unsafe {
        if bytes.is_ascii() {
            sys::napi_create_string_latin1(
                env,
                bytes.as_ptr().cast(),
                bytes.len() as isize,
                &mut out,
            );
        } else {
            sys::napi_create_string_utf8(
                env,
                bytes.as_ptr().cast(),
                bytes.len() as isize,
                &mut out,
            );
        }
    }
    out
}

/// # Safety
/// `env` must be live.
unsafe fn null(env: sys::napi_env) -> sys::napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live; `out` is a valid local.
    unsafe { sys::napi_get_null(env, &mut out) };
    out
}

/// # Safety
/// `env` must be live.
unsafe fn uint(env: sys::napi_env, n: u32) -> sys::napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live; `out` is a valid local.
    unsafe { sys::napi_create_uint32(env, n, &mut out) };
    out
}

/// # Safety
/// `env` must be live.
unsafe fn double(env: sys::napi_env, n: f64) -> sys::napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is live; `out` is a valid local.
    unsafe { sys::napi_create_double(env, n, &mut out) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::schema;

    /// Top-level keys of a serialized struct, in declaration order.
    fn keys<T: serde::Serialize>(value: &T) -> Vec<String> {
        let text = serde_json::to_string(value).unwrap();
        let mut keys = Vec::new();
        let mut depth = 0;
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' | '[' => depth += 1,
                '}' | ']' => depth -= 1,
                '"' if depth == 1 => {
                    let end = text[i + 1..].find('"').unwrap() + i + 1;
                    if text[end + 1..].starts_with(':') {
                        keys.push(text[i + 1..end].to_owned());
                    }
                    while chars.peek().is_some_and(|(j, _)| *j <= end) {
                        chars.next();
                    }
                }
                _ => {}
            }
        }
        keys
    }

    #[test]
    fn typed_auth_result_follows_the_schema_fields_in_order() {
        let wanted: Vec<String> = schema().result.iter().map(|f| f.name.clone()).collect();
        assert_eq!(keys(&AuthResult::default()), wanted);
    }

    #[test]
    fn typed_verification_follows_the_factory_fields() {
        let wanted: Vec<String> = schema()
            .verification
            .iter()
            .map(|f| f.name.clone())
            .collect();
        assert_eq!(keys(&TokenVerification::default()), wanted);
    }
}
