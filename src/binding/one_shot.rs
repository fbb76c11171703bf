//! `authenticateRequest(...)`: the one-shot form. Authenticators are cached by a digest of
//! their settings, so passing the same config again reuses prepared keys and rate-limit state.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::authenticator::{authenticate_raw, RawValue};
use super::config::read_settings;
use crate::authenticator::Authenticator;

/// Distinct configurations kept; past this the cache starts over (a process normally has one).
const MAX_CACHED_CONFIGS: usize = 64;

fn cache() -> &'static Mutex<HashMap<[u8; 32], Arc<Authenticator>>> {
    static CACHE: OnceLock<Mutex<HashMap<[u8; 32], Arc<Authenticator>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Same chain and result as `Authenticator#authenticate`, configured per call. The config is
/// validated on every call, but keys and rate-limit buckets are shared by equal configs.
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
) -> Result<RawValue> {
    let settings = read_settings(config).map_err(|e| e.throw(&env))?;
    let core = {
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
    };
    authenticate_raw(&env, &core, authorization, tenant_header, host)
}
