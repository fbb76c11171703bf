//! Builds the flat `AuthResult` object: every key always present, `undefined` where it does not apply.

use napi::sys;
use std::ffi::CStr;
use std::ptr;

use super::env_cache::{tenant_source, tenant_source_index, EnvCache};
use crate::authenticator::Outcome;
use crate::error::AuthError;

/// The JS-visible `AuthResult`, documented for `index.d.ts`.
#[napi_derive::napi(object, object_to_js = false)]
pub struct AuthResult {
    /// `true` when every check passed.
    pub authenticated: bool,
    /// The token's `sub` claim (success only).
    pub user_id: Option<String>,
    /// The token's `email` claim, when present (success only).
    pub email: Option<String>,
    /// The token's `role` claim, when present (success only).
    pub role: Option<String>,
    /// Resolved tenant: `tenant_id` claim > `X-Tenant-ID` header > Host subdomain (success only).
    pub tenant_id: Option<String>,
    /// Where `tenantId` came from: `'token'` (the `tenant_id` claim), `'header'` (`X-Tenant-ID`)
    /// or `'host'` (the Host subdomain); `undefined` when no tenant was resolved or on failure.
    /// A header or Host tenant is what the client asked for: authorize it in the app.
    #[napi(ts_type = "TenantSource")]
    pub tenant_source: Option<String>,
    /// A fresh UUID v4 for this request, failures included.
    pub request_id: String,
    /// Tokens left in the caller's bucket after this request (success and `rate_limited`).
    pub rate_limit_remaining: Option<u32>,
    /// Bucket capacity (`rateLimitMax`); `undefined` when rate limiting is off.
    pub rate_limit_limit: Option<u32>,
    /// Milliseconds until a retry can succeed; 0 unless `errorCode` is `rate_limited`.
    pub retry_after_ms: f64,
    /// Human-readable reason, safe to return to clients (failure only).
    pub error: Option<String>,
    /// Stable machine code, see the README's table (failure only).
    pub error_code: Option<String>,
    /// HTTP status to answer with: 200 on success, else 400, 401, 403 or 429.
    pub error_status: u32,
}

struct Builder {
    env: sys::napi_env,
    obj: sys::napi_value,
    undefined: sys::napi_value,
}

impl Builder {
    unsafe fn set(&self, key: &CStr, value: sys::napi_value) {
        sys::napi_set_named_property(self.env, self.obj, key.as_ptr(), value);
    }

    unsafe fn set_str(&self, key: &CStr, value: Option<&[u8]>) {
        let v = match value {
            Some(bytes) => {
                let mut out = ptr::null_mut();
                sys::napi_create_string_utf8(
                    self.env,
                    bytes.as_ptr().cast(),
                    bytes.len() as isize,
                    &mut out,
                );
                out
            }
            None => self.undefined,
        };
        self.set(key, v);
    }

    unsafe fn set_num(&self, key: &CStr, value: Option<f64>) {
        let v = match value {
            Some(n) => {
                let mut out = ptr::null_mut();
                sys::napi_create_double(self.env, n, &mut out);
                out
            }
            None => self.undefined,
        };
        self.set(key, v);
    }

    unsafe fn set_bool(&self, key: &CStr, value: bool) {
        let mut out = ptr::null_mut();
        sys::napi_get_boolean(self.env, value, &mut out);
        self.set(key, out);
    }
}

/// # Safety
/// `env` must be the live env of the current call.
pub unsafe fn build_auth_result(env: sys::napi_env, outcome: &Outcome<'_>) -> sys::napi_value {
    match EnvCache::get(env) {
        Some(cache) => build_with_factory(env, cache, outcome),
        None => build_with_property_sets(env, outcome),
    }
}

/// One call into a cached JS factory with the varying fields only.
unsafe fn build_with_factory(
    env: sys::napi_env,
    cache: &EnvCache,
    outcome: &Outcome<'_>,
) -> sys::napi_value {
    let mut undefined = ptr::null_mut();
    sys::napi_get_undefined(env, &mut undefined);
    let limit = outcome.rate_limit_limit.map_or(undefined, |n| uint(env, n));
    let request_id = string(env, &outcome.request_id);
    let mut result = ptr::null_mut();
    match &outcome.result {
        Ok(id) => {
            let opt = |s: Option<&str>| s.map_or(undefined, |s| string(env, s.as_bytes()));
            let args = [
                string(env, id.user_id.as_bytes()),
                opt(id.email.as_deref()),
                opt(id.role.as_deref()),
                opt(id.tenant.as_str()),
                uint(env, tenant_source_index(&id.tenant)),
                request_id,
                id.rate_limit_remaining.map_or(undefined, |n| uint(env, n)),
                limit,
            ];
            sys::napi_call_function(
                env,
                undefined,
                cache.success(env),
                args.len(),
                args.as_ptr(),
                &mut result,
            );
        }
        Err(failure) => {
            let index = AuthError::ALL
                .iter()
                .position(|e| *e == failure.error)
                .unwrap_or(0);
            let args = [
                uint(env, index as u32),
                request_id,
                limit,
                double(env, failure.retry_after_ms as f64),
            ];
            sys::napi_call_function(
                env,
                undefined,
                cache.failure(env),
                args.len(),
                args.as_ptr(),
                &mut result,
            );
        }
    }
    result
}

/// ASCII (the usual case) goes through the one-byte constructor, which skips UTF-8 decoding.
unsafe fn string(env: sys::napi_env, bytes: &[u8]) -> sys::napi_value {
    let mut out = ptr::null_mut();
    if bytes.is_ascii() {
        sys::napi_create_string_latin1(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut out);
    } else {
        sys::napi_create_string_utf8(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut out);
    }
    out
}

unsafe fn uint(env: sys::napi_env, n: u32) -> sys::napi_value {
    let mut out = ptr::null_mut();
    sys::napi_create_uint32(env, n, &mut out);
    out
}

unsafe fn double(env: sys::napi_env, n: f64) -> sys::napi_value {
    let mut out = ptr::null_mut();
    sys::napi_create_double(env, n, &mut out);
    out
}

/// Fallback when the factory could not be made (e.g. script compilation disabled).
unsafe fn build_with_property_sets(env: sys::napi_env, outcome: &Outcome<'_>) -> sys::napi_value {
    let mut obj = ptr::null_mut();
    sys::napi_create_object(env, &mut obj);
    let mut undefined = ptr::null_mut();
    sys::napi_get_undefined(env, &mut undefined);
    let b = Builder {
        env,
        obj,
        undefined,
    };
    let limit = outcome.rate_limit_limit.map(f64::from);
    match &outcome.result {
        Ok(id) => {
            b.set_bool(c"authenticated", true);
            b.set_str(c"userId", Some(id.user_id.as_bytes()));
            b.set_str(c"email", id.email.as_deref().map(str::as_bytes));
            b.set_str(c"role", id.role.as_deref().map(str::as_bytes));
            b.set_str(c"tenantId", id.tenant.as_str().map(str::as_bytes));
            b.set_str(
                c"tenantSource",
                tenant_source(&id.tenant).map(str::as_bytes),
            );
            b.set_str(c"requestId", Some(&outcome.request_id));
            b.set_num(
                c"rateLimitRemaining",
                id.rate_limit_remaining.map(f64::from),
            );
            b.set_num(c"rateLimitLimit", limit);
            b.set_num(c"retryAfterMs", Some(0.0));
            b.set_str(c"error", None);
            b.set_str(c"errorCode", None);
            b.set_num(c"errorStatus", Some(200.0));
        }
        Err(failure) => {
            let err = failure.error;
            let limited = err == crate::error::AuthError::RateLimited;
            b.set_bool(c"authenticated", false);
            b.set_str(c"userId", None);
            b.set_str(c"email", None);
            b.set_str(c"role", None);
            b.set_str(c"tenantId", None);
            b.set_str(c"tenantSource", None);
            b.set_str(c"requestId", Some(&outcome.request_id));
            b.set_num(c"rateLimitRemaining", limited.then_some(0.0));
            b.set_num(c"rateLimitLimit", limit);
            b.set_num(c"retryAfterMs", Some(failure.retry_after_ms as f64));
            b.set_str(c"error", Some(err.message().as_bytes()));
            b.set_str(c"errorCode", Some(err.code().as_bytes()));
            b.set_num(c"errorStatus", Some(err.status() as f64));
        }
    }
    obj
}
