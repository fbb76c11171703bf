//! The `Authenticator` class: built once from a config, then one native call per request.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::cell::Cell;
use std::sync::Arc;

use super::config::read_settings;
use super::fast_call;
use super::js_error::{ArgError, ErrorClass, HelperError};
use super::one_shot::shared_core;
use super::request::{self, Handle};
use super::tokens;
use crate::authenticator::Authenticator as Core;
use crate::jwt::TokenKind;
use crate::rate_limit::{monotonic_nanos, MAX_KEYS_BOUND, MAX_LEASE};

/// Authenticates requests with settings validated and keys prepared once, at construction.
#[napi]
pub struct Authenticator {
    core: Arc<Core>,
    /// Whether this instance already carries the fast per-request methods (see `fast_call`).
    fast_call_installed: Cell<bool>,
}

#[napi]
impl Authenticator {
    /// Validates `config` and prepares keys, claim rules, tenant rules and the rate limiter.
    /// Throws a `TypeError` or `RangeError` naming the offending field.
    #[napi(catch_unwind, constructor, ts_args_type = "config: AuthConfig")]
    pub fn new(env: Env, config: Unknown) -> Result<Self> {
        let settings = read_settings(config).map_err(|e| e.throw(&env))?;
        Ok(Authenticator::of(Arc::new(Core::new(settings))))
    }

    /// An authenticator that shares keys and rate-limit buckets with every other one made by
    /// `shared` (or by `authenticateRequest`) from equal settings. At most 64 distinct
    /// settings are kept; past that the shared set starts over.
    #[napi(catch_unwind, factory, ts_args_type = "config: AuthConfig")]
    pub fn shared(env: Env, config: Unknown) -> Result<Self> {
        let settings = read_settings(config).map_err(|e| e.throw(&env))?;
        Ok(Authenticator::of(shared_core(settings)))
    }

    fn of(core: Arc<Core>) -> Self {
        Authenticator {
            core,
            fast_call_installed: Cell::new(false),
        }
    }

    /// The first per-request call gives this instance its fast methods.
    fn install_fast_methods(&self, env: &Env, this: &This) {
        if !self.fast_call_installed.replace(true) {
            // SAFETY: `env` and `this` are the live env and receiver of the call in progress.
            unsafe { fast_call::install(env.raw(), this.raw(), &self.core) };
        }
    }

    /// Runs the whole chain for one request. Each argument is a header value, `null` or
    /// `undefined`; nothing a client can send makes it throw.
    #[napi(
        catch_unwind,
        ts_args_type = "authorization?: string | null, tenantHeader?: string | null, host?: string | null",
        ts_return_type = "AuthResult"
    )]
    pub fn authenticate(
        &self,
        env: Env,
        this: This,
        authorization: Unknown,
        tenant_header: Unknown,
        host: Unknown,
    ) -> Result<Handle> {
        self.install_fast_methods(&env, &this);
        // SAFETY: the handles are the arguments of the call in progress.
        unsafe {
            request::authenticate(
                env.raw(),
                &self.core,
                [authorization.raw(), tenant_header.raw(), host.raw()],
            )
        }
        .map(Handle)
        .map_err(|e| e.throw(&env))
    }

    /// Signs an access token (HS256 with `accessSecret`). `claims.sub` is required; `iat`,
    /// `exp` (`accessTtlSec`), `jti`, `type: "access"`, and `iss`/`aud` when configured are added.
    #[napi(catch_unwind, ts_args_type = "claims: TokenClaims")]
    pub fn sign_access_token(&self, env: Env, claims: Unknown) -> Result<String> {
        tokens::sign(&env, &self.core, claims, TokenKind::Access)
    }

    /// Signs a refresh token (HS256 with `refreshSecret`, `type: "refresh"`, `refreshTtlSec`).
    #[napi(catch_unwind, ts_args_type = "claims: TokenClaims")]
    pub fn sign_refresh_token(&self, env: Env, claims: Unknown) -> Result<String> {
        tokens::sign(&env, &self.core, claims, TokenKind::Refresh)
    }

    /// Verifies a refresh token (signature with `refreshSecret`, `type` must be `"refresh"`,
    /// size, expiry, issuer, audience). Never throws for a bad token: read `valid` and `errorCode`.
    #[napi(
        catch_unwind,
        ts_args_type = "token: string",
        ts_return_type = "TokenVerification"
    )]
    pub fn verify_refresh_token(&self, env: Env, this: This, token: Unknown) -> Result<Handle> {
        self.verify(env, this, token, TokenKind::Refresh)
    }

    /// Verifies a bare access token (no `Bearer ` prefix) without tenant resolution or rate
    /// limiting: the same checks as `authenticate`'s token step.
    #[napi(
        catch_unwind,
        ts_args_type = "token: string",
        ts_return_type = "TokenVerification"
    )]
    pub fn verify_access_token(&self, env: Env, this: This, token: Unknown) -> Result<Handle> {
        self.verify(env, this, token, TokenKind::Access)
    }

    fn verify(&self, env: Env, this: This, token: Unknown, kind: TokenKind) -> Result<Handle> {
        self.install_fast_methods(&env, &this);
        // SAFETY: `token` is an argument of the call in progress.
        unsafe { request::verify(env.raw(), &self.core, kind, token.raw()) }
            .map(Handle)
            .map_err(|e| e.throw(&env))
    }

    /// Bucket capacity (`rateLimitMax`, 0 when rate limiting is off).
    #[napi(catch_unwind, getter)]
    pub fn rate_limit_max(&self) -> u32 {
        self.core.settings().rate_limit_max()
    }

    /// Tokens added back per second (`rateLimitRefill`).
    #[napi(catch_unwind, getter)]
    pub fn rate_limit_refill(&self) -> f64 {
        self.core.settings().rate_limit_refill()
    }

    /// Lifetime of issued access tokens in seconds (`accessTtlSec`).
    #[napi(catch_unwind, getter)]
    pub fn access_ttl_sec(&self) -> f64 {
        self.core.settings().ttl_sec(TokenKind::Access)
    }

    /// Lifetime of issued refresh tokens in seconds (`refreshTtlSec`).
    #[napi(catch_unwind, getter)]
    pub fn refresh_ttl_sec(&self) -> f64 {
        self.core.settings().ttl_sec(TokenKind::Refresh)
    }

    /// Number of rate-limit buckets currently held in memory.
    #[napi(catch_unwind, getter)]
    pub fn rate_limit_buckets(&self) -> u32 {
        self.core.limiter().map_or(0, |l| l.len() as u32)
    }

    // --- Shared limit: the store-facing side (docs/scale-out.md). A store (auth-shield/redis)
    // calls these from its background loop; the request path only reads the lease table.

    /// Switches the rate limit to leases of a shared bucket: from now on a request spends a
    /// credit leased by the store, or gets `rate_limit_pending` while one is fetched. Once per
    /// authenticator; `lease` is an integer from 1 to 1e6 (1 when `strict`), `maxKeys` the most
    /// identities whose leases are held, an integer from 1 to 1e8.
    #[napi(catch_unwind)]
    pub fn enable_shared_limit(
        &self,
        env: Env,
        lease: f64,
        strict: bool,
        max_keys: f64,
    ) -> Result<()> {
        let check = |name: &str, v: f64, max: f64| {
            if v.fract() == 0.0 && v >= 1.0 && v <= max {
                Ok(())
            } else {
                Err(ArgError::Range(format!(
                    "{name} must be an integer from 1 to {max}, got {v}"
                ))
                .throw(&env))
            }
        };
        check("lease", lease, MAX_LEASE as f64)?;
        check("maxKeys", max_keys, MAX_KEYS_BOUND)?;
        self.core
            .enable_leases(lease as u32, strict, max_keys as usize)
            .map_err(|message| {
                let e = HelperError::new(
                    ErrorClass::Plain,
                    "ERR_AUTH_SHIELD_SHARED_LIMIT",
                    message.to_owned(),
                );
                super::js_error::throw(&env, e)
            })
    }

    /// The identities waiting for a lease, each with the tokens it wants; empties the queue.
    #[napi(catch_unwind)]
    pub fn take_lease_requests(&self) -> Vec<LeaseRequest> {
        self.core.leases().map_or_else(Vec::new, |leases| {
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
    #[napi(catch_unwind)]
    pub fn grant_lease(
        &self,
        key: String,
        tokens: u32,
        shared_remaining: u32,
        retry_after_ms: f64,
    ) {
        if let Some(leases) = self.core.leases() {
            let retry = if retry_after_ms.is_finite() {
                retry_after_ms.max(0.0) as u64
            } else {
                u64::MAX / 2_000_000
            };
            leases.grant(
                key.as_bytes(),
                tokens,
                shared_remaining,
                retry,
                monotonic_nanos(),
            );
        }
    }

    /// Identities whose leases are held (0 without a store).
    #[napi(catch_unwind, getter)]
    pub fn shared_limit_keys(&self) -> u32 {
        self.core.leases().map_or(0, |l| l.len() as u32)
    }
}

/// One identity waiting for a lease (`takeLeaseRequests`).
#[napi(object)]
pub struct LeaseRequest {
    /// The rate-limit key, `<tenant_id claim>:<sub>`.
    pub key: String,
    /// Tokens wanted: the lease minus the credits still held.
    pub want: u32,
}
