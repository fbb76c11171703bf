//! Per-environment values made once and reused on every call: the compiled result factories
//! (`factories.rs`), held by references.
//!
//! Where the cache lives: in a thread-local list keyed by the `napi_env`, not in Node-API's
//! single instance-data slot, which napi-rs (`Env::set_instance_data`) or other code in the
//! same addon may claim. Each env runs on one thread (the main thread or a worker), and an env
//! cleanup hook removes its entry and deletes its references when the env is torn down.

use napi::sys;
use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;

use super::factories::factory_source;

const SUCCESS: usize = 0;
const FAILURE: usize = 1;
const VERIFIED: usize = 2;
const REFUSED: usize = 3;
const SUCCESS_DPOP: usize = 4;
const FACTORIES: usize = 5;

pub struct EnvCache {
    env: sys::napi_env,
    factories: [sys::napi_ref; FACTORIES],
}

thread_local! {
    static CACHES: RefCell<Vec<*mut EnvCache>> = const { RefCell::new(Vec::new()) };
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
            factories: [ptr::null_mut(); FACTORIES],
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

    /// `authSuccess(userId, email, role, tenantId, tenantSource, requestId, rateLimitRemaining, rateLimitLimit, scope)`
    ///
    /// # Safety
    /// `env` must be the env this cache belongs to, inside a call.
    pub unsafe fn success(&self, env: sys::napi_env) -> sys::napi_value {
        // SAFETY: forwarded contract.
        unsafe { self.factory(env, SUCCESS) }
    }

    /// `authSuccessDpop(…the arguments of authSuccess, dpopReplayKey, dpopReplayUntilSec)`: a
    /// request admitted with a DPoP proof. Bearer successes keep the shorter call.
    ///
    /// # Safety
    /// As for [`EnvCache::success`].
    pub unsafe fn success_dpop(&self, env: sys::napi_env) -> sys::napi_value {
        // SAFETY: forwarded contract.
        unsafe { self.factory(env, SUCCESS_DPOP) }
    }

    /// `authFailure(errorIndex, requestId, rateLimitLimit, retryAfterMs)`
    ///
    /// # Safety
    /// As for [`EnvCache::success`].
    pub unsafe fn failure(&self, env: sys::napi_env) -> sys::napi_value {
        // SAFETY: forwarded contract.
        unsafe { self.factory(env, FAILURE) }
    }

    /// `tokenVerified(userId, email, role, tenantId, jti, expiresAtSec)`
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
