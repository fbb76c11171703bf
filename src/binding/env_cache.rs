//! Per-environment values made once and reused on every call: the JS factory that assembles
//! `AuthResult` objects and the interned error strings.
//!
//! Why a JS factory: an object literal built by JS runs through V8's inline caches and costs
//! tens of nanoseconds, while setting twelve properties one by one through Node-API costs
//! about a microsecond, more than the whole JWT verification.

use napi::sys;
use std::ffi::c_void;
use std::ptr;

use crate::error::AuthError;

const FACTORY_SOURCE: &str = "(function makeAuthResult(authenticated, userId, email, role, tenantId, requestId, \
rateLimitRemaining, rateLimitLimit, retryAfterMs, error, errorCode, errorStatus) { return { authenticated, userId, \
email, role, tenantId, requestId, rateLimitRemaining, rateLimitLimit, retryAfterMs, error, errorCode, errorStatus }; })";

pub struct EnvCache {
    factory: sys::napi_ref,
    /// `(message, code)` per [`AuthError`], in `AuthError::ALL` order.
    error_strings: Vec<(sys::napi_ref, sys::napi_ref)>,
}

impl EnvCache {
    /// The cache of `env`, created on first use and freed with the environment.
    ///
    /// # Safety
    /// `env` must be the live env of the current call.
    pub unsafe fn get<'e>(env: sys::napi_env) -> Option<&'e EnvCache> {
        let mut data: *mut c_void = ptr::null_mut();
        if sys::napi_get_instance_data(env, &mut data) == sys::Status::napi_ok && !data.is_null() {
            return Some(&*(data as *const EnvCache));
        }
        let cache = Box::into_raw(Box::new(EnvCache::create(env)?));
        if sys::napi_set_instance_data(env, cache.cast(), Some(finalize), ptr::null_mut()) != sys::Status::napi_ok {
            drop(Box::from_raw(cache));
            return None;
        }
        Some(&*cache)
    }

    unsafe fn create(env: sys::napi_env) -> Option<EnvCache> {
        let mut source = ptr::null_mut();
        let mut factory = ptr::null_mut();
        ok(sys::napi_create_string_utf8(env, FACTORY_SOURCE.as_ptr().cast(), FACTORY_SOURCE.len() as isize, &mut source))?;
        ok(sys::napi_run_script(env, source, &mut factory))?;
        let mut error_strings = Vec::with_capacity(AuthError::ALL.len());
        for err in AuthError::ALL {
            error_strings.push((persistent_string(env, err.message())?, persistent_string(env, err.code())?));
        }
        Some(EnvCache { factory: persistent(env, factory)?, error_strings })
    }

    /// # Safety
    /// `env` must be the env this cache belongs to.
    pub unsafe fn factory(&self, env: sys::napi_env) -> sys::napi_value {
        deref(env, self.factory)
    }

    /// `(message, code)` JS strings of `err`.
    ///
    /// # Safety
    /// `env` must be the env this cache belongs to.
    pub unsafe fn error_strings(&self, env: sys::napi_env, err: AuthError) -> (sys::napi_value, sys::napi_value) {
        let index = AuthError::ALL.iter().position(|e| *e == err).unwrap_or(0);
        let (message, code) = self.error_strings[index];
        (deref(env, message), deref(env, code))
    }
}

unsafe extern "C" fn finalize(env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    let cache = Box::from_raw(data as *mut EnvCache);
    sys::napi_delete_reference(env, cache.factory);
    for (message, code) in cache.error_strings {
        sys::napi_delete_reference(env, message);
        sys::napi_delete_reference(env, code);
    }
}

fn ok(status: sys::napi_status) -> Option<()> {
    (status == sys::Status::napi_ok).then_some(())
}

unsafe fn persistent(env: sys::napi_env, value: sys::napi_value) -> Option<sys::napi_ref> {
    let mut reference = ptr::null_mut();
    ok(sys::napi_create_reference(env, value, 1, &mut reference))?;
    Some(reference)
}

unsafe fn persistent_string(env: sys::napi_env, s: &str) -> Option<sys::napi_ref> {
    let mut value = ptr::null_mut();
    ok(sys::napi_create_string_latin1(env, s.as_ptr().cast(), s.len() as isize, &mut value))?;
    persistent(env, value)
}

unsafe fn deref(env: sys::napi_env, reference: sys::napi_ref) -> sys::napi_value {
    let mut value = ptr::null_mut();
    sys::napi_get_reference_value(env, reference, &mut value);
    value
}
