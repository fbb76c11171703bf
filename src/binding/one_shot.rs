//! The table behind `Authenticator.shared`, and so behind the one-shot
//! `authenticateRequest(...)` (native.js: a per-config-object cache in front of
//! `Authenticator.shared`, the one place the native engine keeps it). Cores are kept by a
//! digest of their settings, so an equal config reuses prepared keys, rate-limit buckets and
//! revocations.
//!
//! The table is never emptied, in whole or in part: it holds security state (an exhausted
//! bucket, a revoked token) that no other place keeps, and forgetting it would let 64 other
//! configs, which a client may be able to influence (per-tenant audiences), reset a limit or
//! un-revoke a token. It is bounded instead: past [`MAX_SHARED_CONFIGS`] distinct settings a
//! new one is refused (`ERR_AUTH_SHIELD_CONFIG_LIMIT`); the configs already kept go on working.
//! The JS engine keeps the same table (`sharedCore` in js/authenticator.js).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::js_error::{CallError, ErrorClass};
use crate::authenticator::Authenticator;
use crate::settings::Settings;

/// Distinct settings kept for `authenticateRequest` and `Authenticator.shared` (a process
/// normally has one): each holds its own buckets, debt sketch and revocations, so the bound
/// keeps memory bounded (docs/api.md).
pub const MAX_SHARED_CONFIGS: usize = crate::contract::limits::MAX_SHARED_CONFIGS as usize;

type Table = HashMap<[u8; 32], Arc<Authenticator>>;

fn table() -> &'static Mutex<Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

/// The refusal of one more distinct config (contract/messages.json `sharedConfigLimit`).
pub fn config_limit() -> CallError {
    CallError::new(
        ErrorClass::Range,
        "ERR_AUTH_SHIELD_CONFIG_LIMIT",
        crate::contract::messages::shared_config_limit(MAX_SHARED_CONFIGS as f64),
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
