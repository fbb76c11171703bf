//! Per-environment values made once and reused on every call: the JS factories that assemble
//! `AuthResult` objects.
//!
//! Why a JS factory: an object literal built by JS runs through V8's inline caches and costs
//! tens of nanoseconds, while setting twelve properties one by one through Node-API costs
//! about a microsecond, more than the whole JWT verification.

use napi::sys;
use std::ffi::c_void;
use std::ptr;

use crate::authenticator::TenantId;
use crate::error::AuthError;

pub struct EnvCache {
    success: sys::napi_ref,
    failure: sys::napi_ref,
}

/// `AuthResult.tenantSource` by [`tenant_source_index`]: where the tenant id came from.
const TENANT_SOURCES: [Option<&str>; 4] = [None, Some("token"), Some("header"), Some("host")];

/// The index into [`TENANT_SOURCES`] that `authSuccess` receives for a resolved tenant.
pub fn tenant_source_index(tenant: &TenantId<'_>) -> u32 {
    match tenant {
        TenantId::None => 0,
        TenantId::Claim(_) => 1,
        TenantId::Header(_) => 2,
        TenantId::Host(_) => 3,
    }
}

/// The `tenantSource` string of a resolved tenant, `None` when there is none.
pub fn tenant_source(tenant: &TenantId<'_>) -> Option<&'static str> {
    TENANT_SOURCES[tenant_source_index(tenant) as usize]
}

/// The two factories; the failure one maps an [`AuthError`] index to its message, code and
/// status from tables embedded once, so no error string crosses the boundary per call.
fn factory_source() -> String {
    let table = |f: &dyn Fn(AuthError) -> String| {
        AuthError::ALL
            .iter()
            .map(|e| f(*e))
            .collect::<Vec<_>>()
            .join(",")
    };
    let rate_limited = AuthError::ALL
        .iter()
        .position(|e| *e == AuthError::RateLimited)
        .unwrap_or(0);
    format!(
        "(function () {{\n\
         const MESSAGES = [{messages}], CODES = [{codes}], STATUSES = [{statuses}];\n\
         const TENANT_SOURCES = [{tenant_sources}];\n\
         return [\n\
         function authSuccess(userId, email, role, tenantId, source, requestId, rateLimitRemaining, rateLimitLimit) {{\n\
           return {{ authenticated: true, userId, email, role, tenantId, tenantSource: TENANT_SOURCES[source], requestId,\n\
             rateLimitRemaining, rateLimitLimit, retryAfterMs: 0, error: undefined, errorCode: undefined, errorStatus: 200 }};\n\
         }},\n\
         function authFailure(index, requestId, rateLimitLimit, retryAfterMs) {{\n\
           return {{ authenticated: false, userId: undefined, email: undefined, role: undefined, tenantId: undefined,\n\
             tenantSource: undefined, requestId, rateLimitRemaining: index === {rate_limited} ? 0 : undefined, rateLimitLimit, retryAfterMs,\n\
             error: MESSAGES[index], errorCode: CODES[index], errorStatus: STATUSES[index] }};\n\
         }}];\n\
         }})()",
        messages = table(&|e| format!("{:?}", e.message())),
        codes = table(&|e| format!("{:?}", e.code())),
        statuses = table(&|e| e.status().to_string()),
        tenant_sources = TENANT_SOURCES
            .iter()
            .map(|s| s.map_or("undefined".to_string(), |s| format!("{s:?}")))
            .collect::<Vec<_>>()
            .join(","),
    )
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
        if sys::napi_set_instance_data(env, cache.cast(), Some(finalize), ptr::null_mut())
            != sys::Status::napi_ok
        {
            drop(Box::from_raw(cache));
            return None;
        }
        Some(&*cache)
    }

    unsafe fn create(env: sys::napi_env) -> Option<EnvCache> {
        let source_text = factory_source();
        let mut source = ptr::null_mut();
        let mut pair = ptr::null_mut();
        ok(sys::napi_create_string_utf8(
            env,
            source_text.as_ptr().cast(),
            source_text.len() as isize,
            &mut source,
        ))?;
        ok(sys::napi_run_script(env, source, &mut pair))?;
        let (mut success, mut failure) = (ptr::null_mut(), ptr::null_mut());
        ok(sys::napi_get_element(env, pair, 0, &mut success))?;
        ok(sys::napi_get_element(env, pair, 1, &mut failure))?;
        Some(EnvCache {
            success: persistent(env, success)?,
            failure: persistent(env, failure)?,
        })
    }

    /// `authSuccess(userId, email, role, tenantId, tenantSourceIndex, requestId, rateLimitRemaining, rateLimitLimit)`
    ///
    /// # Safety
    /// `env` must be the env this cache belongs to.
    pub unsafe fn success(&self, env: sys::napi_env) -> sys::napi_value {
        deref(env, self.success)
    }

    /// `authFailure(errorIndex, requestId, rateLimitLimit, retryAfterMs)`
    ///
    /// # Safety
    /// `env` must be the env this cache belongs to.
    pub unsafe fn failure(&self, env: sys::napi_env) -> sys::napi_value {
        deref(env, self.failure)
    }
}

unsafe extern "C" fn finalize(env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    let cache = Box::from_raw(data as *mut EnvCache);
    sys::napi_delete_reference(env, cache.success);
    sys::napi_delete_reference(env, cache.failure);
}

fn ok(status: sys::napi_status) -> Option<()> {
    (status == sys::Status::napi_ok).then_some(())
}

unsafe fn persistent(env: sys::napi_env, value: sys::napi_value) -> Option<sys::napi_ref> {
    let mut reference = ptr::null_mut();
    ok(sys::napi_create_reference(env, value, 1, &mut reference))?;
    Some(reference)
}

unsafe fn deref(env: sys::napi_env, reference: sys::napi_ref) -> sys::napi_value {
    let mut value = ptr::null_mut();
    sys::napi_get_reference_value(env, reference, &mut value);
    value
}
