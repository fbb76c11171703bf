//! `authenticateRequest(...)`: the one-shot form. Authenticators are cached by a digest of
//! their settings, so passing the same config again reuses prepared keys and rate-limit state.
//! `native.js` wraps this export with a per-config-object cache that skips the validation
//! while the object's values are unchanged.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::config::read_settings;
use super::request::{self, Handle};
use crate::authenticator::Authenticator;
use crate::settings::Settings;

/// Distinct configurations kept; past this the cache starts over (a process normally has one).
const MAX_CACHED_CONFIGS: usize = 64;

fn cache() -> &'static Mutex<HashMap<[u8; 32], Arc<Authenticator>>> {
    static CACHE: OnceLock<Mutex<HashMap<[u8; 32], Arc<Authenticator>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The authenticator shared by every caller with equal settings.
pub fn shared_core(settings: Settings) -> Arc<Authenticator> {
    let mut cache = cache()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let fingerprint = settings.fingerprint();
    match cache.get(&fingerprint) {
        Some(core) => core.clone(),
        None => {
            if cache.len() >= MAX_CACHED_CONFIGS {
                cache.clear();
            }
            let core = Arc::new(Authenticator::new(settings));
            cache.insert(fingerprint, core.clone());
            core
        }
    }
}

/// Same chain and result as `Authenticator#authenticate`, configured per call. Keys and
/// rate-limit buckets are shared by equal configs; reusing one config object skips the
/// validation while its values are unchanged.
#[napi(
    catch_unwind,
    ts_args_type = "authorization: string | null | undefined, tenantHeader: string | null | undefined, host: string | null | undefined, config: AuthConfig",
    ts_return_type = "AuthResult"
)]
pub fn authenticate_request(
    env: Env,
    authorization: Unknown,
    tenant_header: Unknown,
    host: Unknown,
    config: Unknown,
) -> Result<Handle> {
    let settings = read_settings(config).map_err(|e| e.throw(&env))?;
    let core = shared_core(settings);
    // SAFETY: the handles are the arguments of the call in progress.
    unsafe {
        request::authenticate(
            env.raw(),
            &core,
            [authorization.raw(), tenant_header.raw(), host.raw()],
        )
    }
    .map(Handle)
    .map_err(|e| e.throw(&env))
}
