//! Per-environment values made once and reused on every call: the JS factories that assemble
//! `AuthResult` and `TokenVerification` objects.
//!
//! Why a JS factory: an object literal built by JS runs through V8's inline caches and costs
//! tens of nanoseconds, while setting a dozen properties one by one through Node-API costs
//! about a microsecond, more than the whole JWT verification.
//!
//! Where the cache lives: in a thread-local list keyed by the `napi_env`, not in Node-API's
//! single instance-data slot, which napi-rs (`Env::set_instance_data`) or other code in the
//! same addon may claim. Each env runs on one thread (the main thread or a worker), and an env
//! cleanup hook removes its entry and deletes its references when the env is torn down.

use napi::sys;
use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;

use crate::error::AuthError;
use crate::schema::schema;

/// `AuthResult.tenantSource` values, in the order the success factory indexes them (0 is
/// `undefined`); see `TenantId::source`.
pub const TENANT_SOURCES: [&str; 3] = ["token", "header", "host"];

/// The `TokenVerification` fields, in order (`valid` replaces `authenticated`).
pub const VERIFICATION_FIELDS: [&str; 10] = [
    "valid",
    "userId",
    "email",
    "role",
    "tenantId",
    "jti",
    "expiresAt",
    "error",
    "errorCode",
    "errorStatus",
];

const SUCCESS: usize = 0;
const FAILURE: usize = 1;
const VERIFIED: usize = 2;
const REFUSED: usize = 3;

pub struct EnvCache {
    env: sys::napi_env,
    factories: [sys::napi_ref; 4],
}

thread_local! {
    static CACHES: RefCell<Vec<*mut EnvCache>> = const { RefCell::new(Vec::new()) };
}

/// The JS expression of one result field on success (valid) and on failure (refused), from
/// the factories' parameters; `AuthResult` and `TokenVerification` share the names they have
/// in common. `None` for a field this build does not know (a test fails then).
fn field(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "authenticated" | "valid" => ("true", "false"),
        "userId" => ("userId", "undefined"),
        "email" => ("email", "undefined"),
        "role" => ("role", "undefined"),
        "tenantId" => ("tenantId", "undefined"),
        "tenantSource" => ("SOURCES[tenantSource]", "undefined"),
        "jti" => ("jti", "undefined"),
        "expiresAt" => ("expiresAt", "undefined"),
        "requestId" => ("requestId", "requestId"),
        "rateLimitRemaining" => (
            "rateLimitRemaining",
            "index === RATE_LIMITED ? 0 : undefined",
        ),
        "rateLimitLimit" => ("rateLimitLimit", "rateLimitLimit"),
        "retryAfterMs" => ("0", "retryAfterMs"),
        "error" => ("undefined", "MESSAGES[index]"),
        "errorCode" => ("undefined", "CODES[index]"),
        "errorStatus" => ("200", "STATUSES[index]"),
        _ => return None,
    })
}

/// The success and failure object literals for `names`, or the first unknown name.
fn literals<'a>(names: impl Iterator<Item = &'a str>) -> Result<(String, String), String> {
    let mut ok = Vec::new();
    let mut err = Vec::new();
    for name in names {
        let (on_ok, on_err) = field(name).ok_or_else(|| name.to_owned())?;
        ok.push(format!("{name}: {on_ok}"));
        err.push(format!("{name}: {on_err}"));
    }
    Ok((
        format!("{{ {} }}", ok.join(", ")),
        format!("{{ {} }}", err.join(", ")),
    ))
}

/// The four factories; the failure ones map an [`AuthError`] index to its message, code and
/// status from tables embedded once, so no error string crosses the boundary per call.
/// `Err(field)` when the schema lists a result field this build cannot fill.
pub fn factory_source() -> Result<String, String> {
    let json = |items: Vec<String>| serde_json::to_string(&items).unwrap_or_default();
    let messages = json(
        AuthError::ALL
            .iter()
            .map(|e| e.message().to_owned())
            .collect(),
    );
    let codes = json(AuthError::ALL.iter().map(|e| e.code().to_owned()).collect());
    let statuses: Vec<_> = AuthError::ALL.iter().map(|e| e.status()).collect();
    let statuses = serde_json::to_string(&statuses).unwrap_or_default();
    let rate_limited = AuthError::ALL
        .iter()
        .position(|e| *e == AuthError::RateLimited)
        .unwrap_or(0);
    // Keys in the order `js/schema.json` lists them.
    let (success, failure) = literals(schema().result.iter().map(|f| f.name.as_str()))?;
    let (verified, refused) = literals(VERIFICATION_FIELDS.into_iter())?;
    Ok(format!(
        "(function () {{\n\
         'use strict';\n\
         const MESSAGES = {messages}, CODES = {codes}, STATUSES = {statuses};\n\
         const SOURCES = [undefined, {sources}], RATE_LIMITED = {rate_limited};\n\
         return [\n\
         function authSuccess(userId, email, role, tenantId, tenantSource, requestId, rateLimitRemaining, rateLimitLimit) {{\n\
           return {success};\n\
         }},\n\
         function authFailure(index, requestId, rateLimitLimit, retryAfterMs) {{\n\
           return {failure};\n\
         }},\n\
         function tokenVerified(userId, email, role, tenantId, jti, expiresAt) {{\n\
           return {verified};\n\
         }},\n\
         function tokenRefused(index) {{\n\
           return {refused};\n\
         }}];\n\
         }})()",
        sources = json(TENANT_SOURCES.iter().map(|s| s.to_string()).collect())
            .trim_matches(['[', ']']),
    ))
}

impl EnvCache {
    /// The cache of `env`, created on first use and freed with the environment. `None` when
    /// Node-API could not make it (an exception may then be pending).
    ///
    /// # Safety
    /// `env` must be the live env of the current call, on this thread.
    pub unsafe fn get<'e>(env: sys::napi_env) -> Option<&'e EnvCache> {
        let found = CACHES.with(|list| {
            list.borrow()
                .iter()
                .copied()
                // SAFETY: entries are live boxes; `cleanup` removes an entry before freeing it.
                .find(|&cache| unsafe { (*cache).env } == env)
        });
        if let Some(cache) = found {
            // SAFETY: the box lives until the env's cleanup hook, after the current call.
            return Some(unsafe { &*cache });
        }
        // SAFETY: `env` is live (caller's contract).
        let cache = Box::into_raw(Box::new(unsafe { EnvCache::create(env) }?));
        // SAFETY: `env` is live; `cache` stays valid until `cleanup` takes it back.
        let status = unsafe { sys::napi_add_env_cleanup_hook(env, Some(cleanup), cache.cast()) };
        if status != sys::Status::napi_ok {
            // SAFETY: `cache` came from `Box::into_raw` above and was never shared.
            unsafe { Box::from_raw(cache).release() };
            return None;
        }
        CACHES.with(|list| list.borrow_mut().push(cache));
        // SAFETY: as for a found entry.
        Some(unsafe { &*cache })
    }

    /// Runs the factory script and keeps a reference to each factory. On any failure, the
    /// references made so far are deleted.
    ///
    /// # Safety
    /// `env` must be the live env of the current call.
    unsafe fn create(env: sys::napi_env) -> Option<EnvCache> {
        let source_text = factory_source().ok()?;
        let mut source = ptr::null_mut();
        let mut list = ptr::null_mut();
        // SAFETY: `env` is live; the text pointer and length describe `source_text`, which
        // outlives the call; out-pointers are valid locals.
        unsafe {
            ok(sys::napi_create_string_utf8(
                env,
                source_text.as_ptr().cast(),
                source_text.len() as isize,
                &mut source,
            ))?;
            ok(sys::napi_run_script(env, source, &mut list))?;
        }
        let mut cache = EnvCache {
            env,
            factories: [ptr::null_mut(); 4],
        };
        for (i, slot) in cache.factories.iter_mut().enumerate() {
            let mut factory = ptr::null_mut();
            let mut reference = ptr::null_mut();
            // SAFETY: `env` and `list` are live handles of this call; out-pointers are locals.
            let made = unsafe {
                ok(sys::napi_get_element(env, list, i as u32, &mut factory))
                    .and_then(|()| ok(sys::napi_create_reference(env, factory, 1, &mut reference)))
            };
            if made.is_none() {
                // SAFETY: only the references made so far are non-null; each is deleted once.
                unsafe { cache.release() };
                return None;
            }
            *slot = reference;
        }
        Some(cache)
    }

    /// Deletes the references this cache holds.
    ///
    /// # Safety
    /// `self.env` must still be alive (the current call's, or in its cleanup hook).
    unsafe fn release(self) {
        for reference in self.factories.into_iter().filter(|r| !r.is_null()) {
            // SAFETY: every non-null entry is a reference created in `create` on `self.env`.
            unsafe { sys::napi_delete_reference(self.env, reference) };
        }
    }

    /// # Safety
    /// `env` must be the env this cache belongs to, inside a call.
    unsafe fn factory(&self, env: sys::napi_env, which: usize) -> sys::napi_value {
        let mut value = ptr::null_mut();
        // SAFETY: the reference belongs to `env` (caller's contract) and is alive until cleanup.
        unsafe { sys::napi_get_reference_value(env, self.factories[which], &mut value) };
        value
    }

    /// `authSuccess(userId, email, role, tenantId, tenantSource, requestId, rateLimitRemaining, rateLimitLimit)`
    ///
    /// # Safety
    /// `env` must be the env this cache belongs to, inside a call.
    pub unsafe fn success(&self, env: sys::napi_env) -> sys::napi_value {
        // SAFETY: forwarded contract.
        unsafe { self.factory(env, SUCCESS) }
    }

    /// `authFailure(errorIndex, requestId, rateLimitLimit, retryAfterMs)`
    ///
    /// # Safety
    /// As for [`EnvCache::success`].
    pub unsafe fn failure(&self, env: sys::napi_env) -> sys::napi_value {
        // SAFETY: forwarded contract.
        unsafe { self.factory(env, FAILURE) }
    }

    /// `tokenVerified(userId, email, role, tenantId, jti, expiresAt)`
    ///
    /// # Safety
    /// As for [`EnvCache::success`].
    pub unsafe fn verified(&self, env: sys::napi_env) -> sys::napi_value {
        // SAFETY: forwarded contract.
        unsafe { self.factory(env, VERIFIED) }
    }

    /// `tokenRefused(errorIndex)`
    ///
    /// # Safety
    /// As for [`EnvCache::success`].
    pub unsafe fn refused(&self, env: sys::napi_env) -> sys::napi_value {
        // SAFETY: forwarded contract.
        unsafe { self.factory(env, REFUSED) }
    }
}

/// Env teardown: forget the entry, then delete the references and free the box.
unsafe extern "C" fn cleanup(arg: *mut c_void) {
    let cache = arg as *mut EnvCache;
    // `try_with`: the thread-local may already be gone if the thread itself is exiting.
    let _ = CACHES.try_with(|list| list.borrow_mut().retain(|&c| c != cache));
    // SAFETY: `arg` is the box registered with this hook, removed from the list above, so
    // nothing else reaches it; the env is alive while its cleanup hooks run.
    unsafe { Box::from_raw(cache).release() };
}

fn ok(status: sys::napi_status) -> Option<()> {
    (status == sys::Status::napi_ok).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of the object literal returned by the factory named `name`.
    fn keys_of(source: &str, name: &str) -> Vec<String> {
        let start = source.find(&format!("function {name}(")).unwrap();
        let body = &source[start..];
        let open = body.find("return {").unwrap() + "return {".len();
        let close = open + body[open..].find("};").unwrap();
        body[open..close]
            .split(", ")
            .map(|kv| kv.split(':').next().unwrap().trim().to_owned())
            .filter(|k| !k.is_empty())
            .collect()
    }

    #[test]
    fn auth_result_factories_list_the_schema_fields_in_order() {
        let source = factory_source().expect("every schema field has an expression");
        let wanted: Vec<String> = schema().result.iter().map(|f| f.name.clone()).collect();
        assert_eq!(keys_of(&source, "authSuccess"), wanted);
        assert_eq!(keys_of(&source, "authFailure"), wanted);
    }

    #[test]
    fn verification_factories_list_the_same_fields() {
        let source = factory_source().unwrap();
        assert_eq!(keys_of(&source, "tokenVerified"), VERIFICATION_FIELDS);
        assert_eq!(keys_of(&source, "tokenRefused"), VERIFICATION_FIELDS);
    }

    #[test]
    fn tenant_sources_match_the_core() {
        use crate::authenticator::TenantId;
        let claim = TenantId::Claim("t".into());
        let header = TenantId::Header(b"t");
        assert_eq!(claim.source(), Some(TENANT_SOURCES[0]));
        assert_eq!(header.source(), Some(TENANT_SOURCES[1]));
        assert_eq!(TenantId::None.source(), None);
        let doc = &schema()
            .result
            .iter()
            .find(|f| f.name == "tenantSource")
            .unwrap()
            .ty;
        for s in TENANT_SOURCES {
            assert!(doc.contains(&format!("'{s}'")), "{doc}");
        }
    }
}
