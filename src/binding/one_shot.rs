//! `authenticateRequest(...)`: the one-shot form. Authenticators are kept by a digest of
//! their settings, so passing the same config again reuses prepared keys, rate-limit buckets
//! and revocations (`Authenticator.shared` hands out the same ones). `native.js` wraps this
//! export with a per-config-object cache that skips the validation while the object's values
//! are unchanged.
//!
//! The table is never emptied, in whole or in part: it holds security state (an exhausted
//! bucket, a revoked token) that no other place keeps, and forgetting it would let 64 other
//! configs, which a client may be able to influence (per-tenant audiences), reset a limit or
//! un-revoke a token. It is bounded instead: past [`MAX_SHARED_CONFIGS`] distinct settings a
//! new one is refused (`ERR_AUTH_SHIELD_CONFIG_LIMIT`); the configs already kept go on working.
//! The JS engine keeps the same table (js/one-shot.js).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::config::read_settings;
use super::js_error::{throw, CallError, ErrorClass};
use super::request::{self, Handle};
use crate::authenticator::Authenticator;
use crate::settings::Settings;

/// Distinct settings kept for `authenticateRequest` and `Authenticator.shared` (a process
/// normally has one): each holds its own buckets, debt sketch and revocations, so the bound
/// keeps memory bounded (docs/api.md).
pub const MAX_SHARED_CONFIGS: usize = 64;

type Table = HashMap<[u8; 32], Arc<Authenticator>>;

fn table() -> &'static Mutex<Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

/// The refusal of one more distinct config; the same words as js/one-shot.js.
pub fn config_limit() -> CallError {
    CallError::new(
        ErrorClass::Range,
        "ERR_AUTH_SHIELD_CONFIG_LIMIT",
        format!(
            "authenticateRequest and Authenticator.shared keep at most {MAX_SHARED_CONFIGS} distinct configs, and never forget one (their rate limits and revocations live there); build an authenticator per config with new Authenticator(config) and reuse it"
        ),
    )
}

/// The authenticator shared by every caller with equal settings, or `config_limit()` when
/// these settings would be one too many.
pub fn shared_core(settings: Settings) -> std::result::Result<Arc<Authenticator>, CallError> {
    let mut table = table()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let fingerprint = settings.fingerprint();
    if let Some(core) = table.get(&fingerprint) {
        return Ok(core.clone());
    }
    if table.len() >= MAX_SHARED_CONFIGS {
        return Err(config_limit());
    }
    let core = Arc::new(Authenticator::new(settings));
    table.insert(fingerprint, core.clone());
    Ok(core)
}

/// Same chain and result as `Authenticator#authenticate`, configured per call. Keys,
/// rate-limit buckets and revocations are shared by equal configs (and with
/// `Authenticator.shared`); reusing one config object skips the validation while its values
/// are unchanged. At most 64 distinct configs are kept, never forgotten: one more throws a
/// `RangeError` with code `ERR_AUTH_SHIELD_CONFIG_LIMIT` (use `new Authenticator(config)`).
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
    let core = shared_core(settings).map_err(|e| throw(&env, e))?;
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
