//! The `Authenticator` class: built once from a config, then one native call per request.

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use std::cell::{Cell, RefCell};
use std::sync::Arc;

use super::args::read_optional_str;
use super::config::read_settings;
use super::fast_call;
use super::js_error::ArgError;
use super::result::build_auth_result;
use super::tokens::{self, TokenVerification};
use crate::authenticator::Authenticator as Core;

/// Room for the `Bearer` scheme and separating spaces on top of `maxTokenBytes`.
const AUTHORIZATION_SLACK: usize = 1024;
/// Tenant ids are at most 63 bytes and hosts at most ~260; reading more cannot change a verdict.
const TENANT_HEADER_CAP: usize = 1024;
const HOST_CAP: usize = 1024;

thread_local! {
    static ARG_BUFFERS: RefCell<[Vec<u8>; 3]> = const { RefCell::new([Vec::new(), Vec::new(), Vec::new()]) };
}

/// A raw JS value handed back as is.
pub struct RawValue(pub sys::napi_value);

impl ToNapiValue for RawValue {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        Ok(val.0)
    }
}

/// Authenticates requests with settings validated and keys prepared once, at construction.
#[napi]
pub struct Authenticator {
    core: Arc<Core>,
    /// Whether this instance already carries the fast `authenticate` (see `fast_call`).
    fast_call_installed: Cell<bool>,
}

#[napi]
impl Authenticator {
    /// Validates `config` and prepares keys, claim rules, tenant rules and the rate limiter.
    /// Throws a `TypeError` or `RangeError` naming the offending field.
    #[napi(catch_unwind, constructor, ts_args_type = "config: AuthConfig")]
    pub fn new(env: Env, config: Unknown) -> Result<Self> {
        let settings = read_settings(config).map_err(|e| e.throw(&env))?;
        Ok(Authenticator {
            core: Arc::new(Core::new(settings)),
            fast_call_installed: Cell::new(false),
        })
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
    ) -> Result<RawValue> {
        if !self.fast_call_installed.replace(true) {
            // SAFETY: `this` is the receiver of the call in progress.
            unsafe { fast_call::install(env.raw(), this.raw(), &self.core) };
        }
        authenticate_raw(&env, &self.core, authorization, tenant_header, host)
    }

    /// Signs an access token (HS256 with `accessSecret`). `claims.sub` is required; `iat`,
    /// `exp` (`accessTtlSec`), `jti`, `type: "access"`, and `iss`/`aud` when configured are added.
    #[napi(catch_unwind, ts_args_type = "claims: TokenClaims")]
    pub fn sign_access_token(&self, env: Env, claims: Unknown) -> Result<String> {
        tokens::sign(&env, &self.core, claims, tokens::Kind::Access)
    }

    /// Signs a refresh token (HS256 with `refreshSecret`, `type: "refresh"`, `refreshTtlSec`).
    #[napi(catch_unwind, ts_args_type = "claims: TokenClaims")]
    pub fn sign_refresh_token(&self, env: Env, claims: Unknown) -> Result<String> {
        tokens::sign(&env, &self.core, claims, tokens::Kind::Refresh)
    }

    /// Verifies a refresh token (signature with `refreshSecret`, `type` must be `"refresh"`,
    /// expiry, issuer, audience). Never throws for a bad token: read `valid` and `errorCode`.
    #[napi(catch_unwind, ts_args_type = "token: string")]
    pub fn verify_refresh_token(&self, env: Env, token: Unknown) -> Result<TokenVerification> {
        tokens::verify(&env, &self.core, token, tokens::Kind::Refresh)
    }

    /// Verifies a bare access token (no `Bearer ` prefix) without tenant resolution or rate limiting.
    #[napi(catch_unwind, ts_args_type = "token: string")]
    pub fn verify_access_token(&self, env: Env, token: Unknown) -> Result<TokenVerification> {
        tokens::verify(&env, &self.core, token, tokens::Kind::Access)
    }

    /// Bucket capacity (`rateLimitMax`, 0 when rate limiting is off).
    #[napi(catch_unwind, getter)]
    pub fn rate_limit_max(&self) -> u32 {
        self.core.settings().rate_limit_max
    }

    /// Tokens added back per second (`rateLimitRefill`).
    #[napi(catch_unwind, getter)]
    pub fn rate_limit_refill(&self) -> f64 {
        self.core.settings().rate_limit_refill
    }

    /// Lifetime of issued access tokens in seconds (`accessTtlSec`).
    #[napi(catch_unwind, getter)]
    pub fn access_ttl_sec(&self) -> f64 {
        self.core.settings().access_ttl_sec
    }

    /// Lifetime of issued refresh tokens in seconds (`refreshTtlSec`).
    #[napi(catch_unwind, getter)]
    pub fn refresh_ttl_sec(&self) -> f64 {
        self.core.settings().refresh_ttl_sec
    }

    /// Number of rate-limit buckets currently held in memory.
    #[napi(catch_unwind, getter)]
    pub fn rate_limit_buckets(&self) -> u32 {
        self.core.limiter().map_or(0, |l| l.len() as u32)
    }
}

pub(crate) fn authenticate_raw(
    env: &Env,
    core: &Core,
    authorization: Unknown,
    tenant_header: Unknown,
    host: Unknown,
) -> Result<RawValue> {
    // SAFETY: the handles are the arguments of the call in progress.
    unsafe {
        authenticate_values(
            env.raw(),
            core,
            [authorization.raw(), tenant_header.raw(), host.raw()],
        )
    }
    .map(RawValue)
    .map_err(|e| e.throw(env))
}

/// Reads the three header arguments, runs the chain and builds the `AuthResult`.
///
/// # Safety
/// `env` and `args` must be live handles of the current call.
pub(crate) unsafe fn authenticate_values(
    env: sys::napi_env,
    core: &Core,
    [authorization, tenant_header, host]: [sys::napi_value; 3],
) -> std::result::Result<sys::napi_value, ArgError> {
    let auth_cap = core.settings().max_token_bytes + AUTHORIZATION_SLACK;
    ARG_BUFFERS.with(|cell| {
        let mut fresh: [Vec<u8>; 3] = Default::default();
        let mut borrowed = cell.try_borrow_mut();
        let [a, t, h] = match borrowed.as_deref_mut() {
            Ok(bufs) => bufs,
            Err(_) => &mut fresh,
        };
        let authorization = read_optional_str(env, authorization, a, auth_cap, "authorization")?;
        let tenant_header =
            read_optional_str(env, tenant_header, t, TENANT_HEADER_CAP, "tenantHeader")?;
        let host = read_optional_str(env, host, h, HOST_CAP, "host")?;
        Ok(
            core.authenticate(authorization, tenant_header, host, |outcome| {
                build_auth_result(env, outcome)
            }),
        )
    })
}
