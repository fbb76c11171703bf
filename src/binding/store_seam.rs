//! The store-facing side of `Authenticator` (docs/scale-out.md): free functions the binding
//! exports for the stores in lib/store/ and that the package entry does not re-export, so they
//! stay off the public class. A store calls them from its background loop; the request path
//! only reads the lease table. The JS engine's twin is the seam in js/authenticator.js; both
//! reach the stores through `STORE_SEAM` (base/store-seam.js).

use napi_derive::napi;

use super::args;
use super::authenticator::Authenticator;
use super::js_error::{self, to_js, ArgError, CallError, CallResult, ErrorClass};
use crate::rate_limit::{check_grant, check_lease_options, monotonic_nanos};
use napi::bindgen_prelude::*;

/// Switches the rate limit to leases of a shared bucket: from now on a request spends a
/// credit leased by the store, or gets `rate_limit_pending` while one is fetched. Once per
/// authenticator; `lease` is an integer from 1 to 1e6 (1 when `strict`), `maxKeys` the most
/// identities whose leases are held, an integer from 1 to 1e8.
#[napi(catch_unwind, skip_typescript)]
pub fn enable_shared_limit(
    env: Env,
    authenticator: &Authenticator,
    lease: Unknown,
    strict: Unknown,
    max_keys: Unknown,
) -> Result<()> {
    let read = || -> CallResult<(f64, bool, f64)> {
        let lease = required_number(lease, "lease")?;
        let strict = args::boolean(&Some(strict), "strict")?
            .ok_or_else(|| CallError::not_boolean("strict"))?;
        let max_keys = required_number(max_keys, "maxKeys")?;
        check_lease_options(lease, max_keys).map_err(|m| CallError::from(ArgError::Range(m)))?;
        Ok((lease, strict, max_keys))
    };
    let (lease, strict, max_keys) = read().map_err(|e| js_error::throw(&env, e))?;
    authenticator
        .core()
        .enable_leases(lease as u32, strict, max_keys as usize)
        .map_err(|message| {
            let e = CallError::new(ErrorClass::Plain, "ERR_AUTH_SHIELD_SHARED_LIMIT", message);
            js_error::throw(&env, e)
        })
}

/// The identities waiting for a lease, each with the tokens it wants; empties the queue.
#[napi(catch_unwind, skip_typescript)]
pub fn take_lease_requests(authenticator: &Authenticator) -> Vec<LeaseRequest> {
    authenticator
        .core()
        .leases()
        .map_or_else(Vec::new, |leases| {
            leases
                .drain()
                .into_iter()
                .map(|(key, want)| LeaseRequest {
                    key: String::from_utf8_lossy(&key).into_owned(),
                    want,
                })
                .collect()
        })
}

/// Records the store's answer for `key`: `tokens` granted (0: refused, blocked for
/// `retryAfterMs`) and the tokens the shared bucket held after it.
#[napi(catch_unwind, skip_typescript)]
pub fn grant_lease(
    env: Env,
    authenticator: &Authenticator,
    key: Unknown,
    tokens: Unknown,
    shared_remaining: Unknown,
    retry_after_ms: Unknown,
) -> Result<()> {
    let read = || -> CallResult<(String, f64, f64, f64)> {
        let key = args::string(&key, "key", MAX_GRANT_KEY_BYTES)?;
        let tokens = required_number(tokens, "tokens")?;
        let shared = required_number(shared_remaining, "sharedRemaining")?;
        let retry = required_number(retry_after_ms, "retryAfterMs")?;
        check_grant(tokens, shared, retry).map_err(|m| CallError::from(ArgError::Range(m)))?;
        Ok((key, tokens, shared, retry))
    };
    let (key, tokens, shared, retry) = read().map_err(|e| js_error::throw(&env, e))?;
    if let Some(leases) = authenticator.core().leases() {
        leases.grant(
            key.as_bytes(),
            tokens as u32,
            shared as u32,
            retry as u64,
            monotonic_nanos(),
        );
    }
    Ok(())
}

/// Identities whose leases are held (0 without a store).
#[napi(catch_unwind, skip_typescript)]
pub fn shared_limit_keys(authenticator: &Authenticator) -> u32 {
    authenticator.core().leases().map_or(0, |l| l.len() as u32)
}

/// Sets `revocationUnavailable` (a revocation feed past `maxRevocationLagMs` with
/// `onStale: 'closed'`, docs/revocation.md).
#[napi(catch_unwind, skip_typescript)]
pub fn set_revocation_unavailable(
    env: Env,
    authenticator: &Authenticator,
    unavailable: Option<Unknown>,
) -> Result<()> {
    let flag = to_js(&env, args::boolean(&unavailable, "unavailable"))?;
    let flag = to_js(
        &env,
        flag.ok_or_else(|| CallError::not_boolean("unavailable")),
    )?;
    authenticator.core().set_revocation_unavailable(flag);
    Ok(())
}

/// A number argument that must be present (`TypeError` otherwise).
fn required_number(v: Unknown, name: &str) -> CallResult<f64> {
    args::number(&Some(v), name)?.ok_or_else(|| CallError::not_number(name))
}

/// Longest key `grantLease` accepts: a rate-limit key is a tenant id, `:` and a `sub`.
const MAX_GRANT_KEY_BYTES: usize = crate::contract::limits::MAX_GRANT_KEY_BYTES as usize;

/// One identity waiting for a lease (`takeLeaseRequests`). The store functions are left out of
/// the types (`skip_typescript`): only lib/store/ calls them.
#[napi(object)]
pub struct LeaseRequest {
    /// The rate-limit key, `<tenant_id claim>:<sub>`.
    pub key: String,
    /// Tokens wanted: the lease minus the credits still held.
    pub want: u32,
}
