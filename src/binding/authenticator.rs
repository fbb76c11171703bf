//! The `Authenticator` class: built once from a config, then one native call per request.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::cell::Cell;
use std::sync::Arc;

use super::config::{read_settings, read_value, Level};
use super::fast_call;
use super::js_error::to_js;
use super::js_error::{shared_keys, throw, ArgError, CallError, CallResult};
use super::one_shot::shared_core;
use super::request::{self, Handle};
use super::revocation;
use super::tokens;
use crate::authenticator::Authenticator as Core;
use crate::jwt::TokenKind;
use crate::raw_value::RawValue;

/// Authenticates requests with settings validated and keys prepared once, at construction.
#[napi]
pub struct Authenticator {
    core: Arc<Core>,
    /// Whether this instance already carries the fast per-request methods (see `fast_call`).
    fast_call_installed: Cell<bool>,
    /// Made by `shared`: its keys are its config's, `setKeys` refuses.
    shared: bool,
}

/// The public JWK of one verification key (RFC 7517), as `jwks()` lists it.
#[napi(object)]
pub struct PublicJwk {
    /// `RSA`, `EC` or `OKP`.
    pub kty: String,
    pub kid: Option<String>,
    pub alg: String,
    /// Always `sig`.
    #[napi(js_name = "use")]
    pub use_: String,
    /// `P-256`, `P-384` or `Ed25519` (EC and OKP keys).
    pub crv: Option<String>,
    pub n: Option<String>,
    pub e: Option<String>,
    pub x: Option<String>,
    pub y: Option<String>,
}

/// `{ keys: [...] }`, ready to serve at `/.well-known/jwks.json`.
#[napi(object)]
pub struct PublicJwks {
    pub keys: Vec<PublicJwk>,
}

#[napi]
impl Authenticator {
    /// Validates `config` and prepares keys, claim rules, tenant rules and the rate limiter.
    /// Throws a `TypeError` or `RangeError` naming the offending field. `config.store` (a JS
    /// object) is taken out by the native engine's JS side (native.js), which attaches the new
    /// authenticator to it: this binding never sees it.
    #[napi(
        catch_unwind,
        constructor,
        ts_args_type = "config: AuthenticatorConfig"
    )]
    pub fn new(env: Env, config: Unknown) -> Result<Self> {
        let settings = read_settings(config).map_err(|e| e.throw(&env))?;
        Ok(Authenticator::of(Arc::new(Core::new(settings)), false))
    }

    /// An authenticator that shares keys, rate-limit buckets and revocations with every other
    /// one made by `shared` (or by `authenticateRequest`) from equal settings. At most 64
    /// distinct settings are kept, and none is ever forgotten: one more throws a `RangeError`
    /// with code `ERR_AUTH_SHIELD_CONFIG_LIMIT` (build it with `new Authenticator(config)`).
    #[napi(catch_unwind, factory, ts_args_type = "config: AuthConfig")]
    pub fn shared(env: Env, config: Unknown) -> Result<Self> {
        let settings = read_settings(config).map_err(|e| e.throw(&env))?;
        let core = shared_core(settings).map_err(|e| throw(&env, e))?;
        Ok(Authenticator::of(core, true))
    }

    fn of(core: Arc<Core>, shared: bool) -> Self {
        Authenticator {
            core,
            fast_call_installed: Cell::new(false),
            shared,
        }
    }

    /// The core, for the store seam (`store_seam.rs`).
    pub(super) fn core(&self) -> &Core {
        &self.core
    }

    /// Replaces the access-token keys at once (requests see the old set or the new one, never
    /// a mix) and empties the verified-token cache; the same checks as the constructor's
    /// `keys`. Takes raw keys `{ kid?, alg, key: Buffer }`: the native engine's JS side (native.js)
    /// turns PEM, JWK and `KeyObject` keys into them (`base/keys/normalize.js`). Returns the new `keySetGeneration`.
    /// With `issuers` configured, `options.issuer` names the trusted issuer whose key set
    /// `keys` replace (byte for byte); the other issuers' sets are kept.
    #[napi(
        catch_unwind,
        ts_args_type = "keys: ReadonlyArray<KeyInput>, options?: SetKeysOptions | null"
    )]
    pub fn set_keys(&self, env: Env, keys: Unknown, options: Option<Unknown>) -> Result<u32> {
        if self.shared {
            return Err(throw(&env, shared_keys()));
        }
        let not_list = || ArgError::Type("keys must be an array of keys".into());
        let items = match read_value(keys, Level::Option) {
            Ok(RawValue::List(items)) => items,
            _ => return Err(not_list().throw(&env)),
        };
        let issuer = read_set_keys_issuer(options).map_err(|e| e.throw(&env))?;
        let generation = self
            .core
            .replace_keys(items, issuer.as_deref())
            .map_err(|e| e.throw(&env))?;
        Ok(generation.min(u32::MAX as u64) as u32)
    }

    /// The DPoP nonce to hand out now (the `DPoP-Nonce` header, RFC 9449 §8), or `undefined`
    /// without `dpopNonceSecret`. Every process with the same secret gives the same one.
    #[napi(catch_unwind, ts_return_type = "string | undefined")]
    pub fn dpop_nonce(&self) -> Either<String, ()> {
        match self.core.dpop_nonce() {
            Some(nonce) => Either::A(nonce),
            None => Either::B(()),
        }
    }

    /// Seconds a DPoP proof's `iat` may be from now, either side (`dpopIatWindowSec`).
    #[napi(catch_unwind, getter)]
    pub fn dpop_iat_window_sec(&self) -> f64 {
        self.core.settings().dpop_iat_window_sec()
    }

    /// The algorithms a DPoP proof may use (`dpopAlgorithms`, else the default list), in the
    /// order the DPoP challenge's `algs` names them.
    #[napi(catch_unwind, getter)]
    pub fn dpop_algorithms(&self) -> Vec<String> {
        self.core
            .dpop_algorithms()
            .into_iter()
            .map(String::from)
            .collect()
    }

    /// DPoP proofs held by the replay cache (at most `dpopMaxReplayEntries`; 0 without `dpop`).
    #[napi(catch_unwind, getter)]
    pub fn dpop_replay_entries(&self) -> u32 {
        self.core.dpop_replay_len().min(u32::MAX as usize) as u32
    }

    /// Forgets the DPoP proof of a request that a later check refused after `authenticate`
    /// admitted it (`replayKey`: the result's `dpopReplayKey`), so a refused request takes no
    /// room in the replay cache; the middleware calls it. True if the proof was held. Anything
    /// but 64 lowercase hex digits throws a `TypeError` (`ERR_INVALID_ARG_TYPE`).
    #[napi(catch_unwind, ts_args_type = "replayKey: string")]
    pub fn release_dpop_proof(&self, env: Env, replay_key: Unknown) -> Result<bool> {
        let key = match replay_key.get_type() {
            Ok(ValueType::String) => String::from_unknown(replay_key)
                .ok()
                .and_then(|s| crate::dpop::replay::parse_replay_key(s.as_bytes())),
            _ => None,
        };
        match key {
            Some(key) => Ok(self.core.release_dpop_proof(&key)),
            None => Err(throw(
                &env,
                ArgError::Type(crate::contract::messages::REPLAY_KEY_MALFORMED.to_string()).into(),
            )),
        }
    }

    /// Holds what the introspection endpoint answered for the opaque `token` (RFC 7662), so
    /// that `authenticate` accepts it from then on with every check a verified JWT's claims
    /// get (docs/resource-server.md#opaque-tokens-introspection): `claimsJson` is the answer
    /// mapped to claims (a JSON object of at most 16384 bytes), or `null` for an inactive token
    /// (`token_inactive` until `cacheUntilSec`); `cacheUntilSec` (seconds since the epoch) ends
    /// the entry. Only the token's SHA-256 is kept. False when the cache's bounds refused it;
    /// a `TypeError` for a bad argument, or when `introspectionCacheMaxEntries` is 0.
    #[napi(
        catch_unwind,
        ts_args_type = "token: string, claimsJson: string | null, cacheUntilSec: number"
    )]
    pub fn admit_introspection(
        &self,
        env: Env,
        token: Unknown,
        claims_json: Option<Unknown>,
        cache_until_sec: Option<Unknown>,
    ) -> Result<bool> {
        // Every wrong type becomes a value the core refuses with its own message, so that the
        // checks run in one order (the JS engine's): token, claims, then the time.
        let max = self.core.settings().max_token_bytes();
        let token = super::args::string(&token, "token", max).unwrap_or_default();
        let claims = if super::args::is_nullish(&claims_json) {
            None
        } else {
            let v = claims_json.as_ref().expect("not nullish");
            let limit = crate::introspection::MAX_CLAIMS_BYTES;
            Some(super::args::string(v, "claimsJson", limit).unwrap_or_default())
        };
        let until = super::args::number(&cache_until_sec, "cacheUntilSec")
            .ok()
            .flatten()
            .unwrap_or(f64::NAN);
        let admitted = self.core.admit_introspection(
            token.as_bytes(),
            claims.as_deref().map(str::as_bytes),
            until,
        );
        admitted.map_err(|e| throw(&env, e.into()))
    }

    /// The claims JSON `admitIntrospection` holds for the opaque `token` while it is active, or
    /// `null` (none held, inactive, past its end, or introspection off): what the middleware
    /// hands the application as the token's claims.
    #[napi(
        catch_unwind,
        ts_args_type = "token: string",
        ts_return_type = "string | null"
    )]
    pub fn introspection_claims(&self, token: Unknown) -> Option<String> {
        let max = self.core.settings().max_token_bytes();
        let token = super::args::string(&token, "token", max).ok()?;
        let json = self.core.introspection_claims(token.as_bytes())?;
        String::from_utf8(json).ok()
    }

    /// Answers held by the introspection cache (at most `introspectionCacheMaxEntries`).
    #[napi(catch_unwind, getter)]
    pub fn introspection_cache_entries(&self) -> u32 {
        self.core.introspection_cache_len().min(u32::MAX as usize) as u32
    }

    /// Tokens held by the verified-token cache (at most `verifiedTokenCacheMaxEntries`).
    #[napi(catch_unwind, getter)]
    pub fn verified_token_cache_entries(&self) -> u32 {
        self.core.verified_token_cache_len() as u32
    }

    /// The counters of this authenticator, read now: verdicts by error code, rate-limit
    /// decisions, verified-token cache lookups, revocations and the call-duration histogram
    /// (docs/observability.md). Counting costs a few relaxed atomic increments per call;
    /// authenticators made by `shared` from equal settings share their counters.
    #[napi(
        catch_unwind,
        ts_args_type = "",
        ts_return_type = "AuthenticatorMetrics"
    )]
    pub fn metrics(&self, mut into: Float64ArraySlice) -> u32 {
        // The counters written into native.js's typed array (src/binding/metrics.rs); its
        // subclass builds the documented object from them, the method users call.
        // SAFETY: the array is an argument of the call in progress, alive until it returns,
        // and no other Rust reference to its memory exists.
        super::metrics::counters_into(&self.core, unsafe { into.as_mut() })
    }

    /// Times every later `authenticate` call into `metrics().duration`, or stops. Off by
    /// default: the second clock read per call costs more than every counter together on
    /// machines without a fast clock (docs/observability.md).
    #[napi(catch_unwind, ts_args_type = "enabled: boolean")]
    pub fn set_duration_metrics(&self, env: Env, enabled: Option<Unknown>) -> Result<()> {
        let flag = to_js(&env, super::args::boolean(&enabled, "enabled"))?;
        let flag = to_js(
            &env,
            flag.ok_or_else(|| super::js_error::CallError::not_boolean("enabled")),
        )?;
        self.core.set_duration_metrics(flag);
        Ok(())
    }

    /// Counts key-set replacements: 0 after construction, +1 per `setKeys`.
    #[napi(catch_unwind, getter)]
    pub fn key_set_generation(&self) -> u32 {
        self.core.key_set_generation().min(u32::MAX as u64) as u32
    }

    /// The public JWKS of the asymmetric verification keys (never an HMAC secret), in the
    /// order they were configured.
    #[napi(catch_unwind)]
    pub fn jwks(&self) -> PublicJwks {
        let keys = self
            .core
            .keys()
            .public_jwks()
            .into_iter()
            .map(|k| PublicJwk {
                kty: k.kty.into(),
                kid: k.kid,
                alg: k.alg.into(),
                use_: "sig".into(),
                crv: k.crv.map(Into::into),
                n: k.n,
                e: k.e,
                x: k.x,
                y: k.y,
            })
            .collect();
        PublicJwks { keys }
    }

    /// The first per-request call gives this instance its fast methods.
    fn install_fast_methods(&self, env: &Env, this: &This) {
        if !self.fast_call_installed.replace(true) {
            // SAFETY: `env` and `this` are the live env and receiver of the call in progress.
            unsafe { fast_call::install(env.raw(), this.raw(), &self.core) };
        }
    }

    /// Runs the whole chain for one request. Each of the first three arguments is a header
    /// value, `null` or `undefined`; nothing a client can send makes it throw. `sender` says
    /// what the connection proves about the client (its certificate's thumbprint) and carries
    /// the `DPoP` proof, method and URL; it is read only when certificate-bound tokens or `dpop`
    /// are checked.
    #[napi(
        catch_unwind,
        ts_args_type = "authorization?: string | null, tenantHeader?: string | null, host?: string | null, sender?: SenderContext | null",
        ts_return_type = "AuthResult"
    )]
    pub fn authenticate(
        &self,
        env: Env,
        this: This,
        authorization: Unknown,
        tenant_header: Unknown,
        host: Unknown,
        sender: Unknown,
    ) -> Result<Handle> {
        self.install_fast_methods(&env, &this);
        // SAFETY: the handles are the arguments of the call in progress.
        unsafe {
            request::authenticate(
                env.raw(),
                &self.core,
                [
                    authorization.raw(),
                    tenant_header.raw(),
                    host.raw(),
                    sender.raw(),
                ],
            )
        }
        .map(Handle)
        .map_err(|e| e.throw(&env))
    }

    /// Signs an access token (with `signingKey`, else HS256 with `accessSecret`). `claims.sub` is required; `iat`,
    /// `exp` (`accessTtlSec`), `jti`, `type: "access"`, and `iss`/`aud` when configured are added.
    #[napi(catch_unwind, ts_args_type = "claims: TokenClaims")]
    pub fn sign_access_token(&self, env: Env, claims: Unknown) -> Result<String> {
        tokens::sign(&env, &self.core, claims, TokenKind::Access)
    }

    /// Signs a refresh token (`type: "refresh"`, `refreshTtlSec`): HS256 with `refreshSecret`,
    /// else with `signingKey`.
    #[napi(catch_unwind, ts_args_type = "claims: TokenClaims")]
    pub fn sign_refresh_token(&self, env: Env, claims: Unknown) -> Result<String> {
        tokens::sign(&env, &self.core, claims, TokenKind::Refresh)
    }

    /// Verifies a refresh token (signature with `refreshSecret`, else with `signingKey`'s public
    /// half alone; `type` must be `"refresh"`; size, expiry, issuer, audience, revocation).
    /// Never throws for a bad token: read `valid` and `errorCode`.
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

    /// Whether `authenticate` checks certificate-bound tokens (`certificateBoundTokens` or
    /// `requireCertificateBoundTokens`): the adapters read the client certificate only then.
    #[napi(catch_unwind, getter)]
    pub fn certificate_bound_tokens(&self) -> bool {
        self.core.settings().certificate_binding() != crate::cert_binding::CertificateBinding::Off
    }

    /// The scopes every access token must grant (`requiredScope`), in their configured order;
    /// empty when scopes are not checked. The middleware names them in its challenges.
    #[napi(catch_unwind, getter)]
    pub fn required_scope(&self) -> Vec<String> {
        self.core.settings().required_scopes().to_vec()
    }

    /// The acr values a step-up accepts (`requiredAcr`); empty when not checked.
    #[napi(catch_unwind, getter)]
    pub fn required_acr(&self) -> Vec<String> {
        self.core.settings().required_acr().to_vec()
    }

    /// The most seconds since the user authenticated (`maxAuthAgeSec`); `null` when not
    /// checked.
    #[napi(catch_unwind, getter)]
    pub fn max_auth_age_sec(&self) -> Option<f64> {
        self.core.settings().max_auth_age_sec()
    }

    /// Bucket capacity (`rateLimitMax`, 0 when rate limiting is off).
    #[napi(catch_unwind, getter)]
    pub fn rate_limit_max(&self) -> u32 {
        self.core.settings().rate_limit_max()
    }

    /// Tokens added back per second (`rateLimitRefillPerSec`).
    #[napi(catch_unwind, getter)]
    pub fn rate_limit_refill_per_sec(&self) -> f64 {
        self.core.settings().rate_limit_refill()
    }

    /// @deprecated The old name of `rateLimitRefillPerSec` (a one-time DeprecationWarning,
    /// `AUTH_SHIELD_DEP_RATE_LIMIT_REFILL`, given by native.js's getter of the same name).
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

    /// Refuses the token whose `jti` claim is `jti` (and whose `iss` is `options.iss`, default
    /// the first configured `issuer`, else none) with `token_revoked` until `expiresAtSec` (its
    /// `exp`, NumericDate seconds) plus `clockToleranceSec`. Throws a `RangeError` with code
    /// `ERR_AUTH_SHIELD_REVOCATION_LIMIT` when `maxRevocations` live revocations are held.
    /// `revokeToken(v.jti, v.expiresAtSec)` takes a verified token's fields as they are: one
    /// without a `jti` claim (tokens this library signs always have one) or without `exp` cannot
    /// be revoked by id and throws a `TypeError` (`ERR_INVALID_ARG_TYPE`): revoke its subject.
    /// Returns nothing; once a `RevocationFeed` is attached, a Promise of `'delivered'` or
    /// `'queued'` that never rejects (docs/revocation.md).
    #[napi(
        catch_unwind,
        ts_args_type = "jti: string | undefined, expiresAtSec: number | undefined, options?: RevokeTokenOptions",
        ts_return_type = "void | Promise<'delivered' | 'queued'>"
    )]
    pub fn revoke_token(
        &self,
        env: Env,
        jti: Unknown,
        expires_at_sec: Option<Unknown>,
        options: Option<Unknown>,
    ) -> Result<()> {
        to_js(
            &env,
            revocation::revoke_token(&self.core, jti, expires_at_sec, options),
        )
    }

    /// Refuses the tokens of `sub` (and `options.iss`) whose `iat` is before
    /// `options.issuedBeforeSec` (NumericDate seconds, default now), and those without `iat`, with `token_revoked`, for
    /// the longest token lifetime (`max(accessTtlSec, refreshTtlSec) + clockToleranceSec`).
    /// Returns as `revokeToken`.
    #[napi(
        catch_unwind,
        ts_args_type = "sub: string, options?: RevokeSubjectOptions",
        ts_return_type = "void | Promise<'delivered' | 'queued'>"
    )]
    pub fn revoke_subject(&self, env: Env, sub: Unknown, options: Option<Unknown>) -> Result<()> {
        to_js(&env, revocation::revoke_subject(&self.core, sub, options))
    }

    /// Live revocations held (expired ones are dropped first).
    #[napi(catch_unwind, getter)]
    pub fn revocation_count(&self) -> u32 {
        self.core.revocation_count() as u32
    }

    /// Whether tokens not known to be revoked are refused with `revocation_unavailable` (set by
    /// a revocation feed past `maxRevocationLagMs` with `onStale: 'closed'`).
    #[napi(catch_unwind, getter)]
    pub fn revocation_unavailable(&self) -> bool {
        self.core.revocation_unavailable()
    }

    /// Number of rate-limit buckets currently held in memory.
    #[napi(catch_unwind, getter)]
    pub fn rate_limit_buckets(&self) -> u32 {
        self.core.limiter().map_or(0, |l| l.len() as u32)
    }
}

/// `setKeys`'s `options.issuer`: `None` when options or the member are null or undefined.
fn read_set_keys_issuer(options: Option<Unknown<'_>>) -> CallResult<Option<String>> {
    let wrong = || {
        CallError::from(ArgError::Type(
            "options must be an object { issuer? }".into(),
        ))
    };
    let Some(options) = options else {
        return Ok(None);
    };
    match options.get_type().map_err(|_| wrong())? {
        napi::ValueType::Undefined | napi::ValueType::Null => return Ok(None),
        napi::ValueType::Object => {}
        _ => return Err(wrong()),
    }
    // SAFETY: the value was just checked to be an object.
    let obj: Object = unsafe { options.cast() }.map_err(|_| wrong())?;
    // `{ isuer }` must not replace the config's keys in place of one issuer's (callOptions
    // `SetKeysOptions`, as the JS engine checks).
    super::args::known_options(&obj, "SetKeysOptions", "options")?;
    let issuer: Unknown = obj
        .get_named_property_unchecked("issuer")
        .map_err(|_| wrong())?;
    match read_value(issuer, Level::Member) {
        Ok(RawValue::Absent) => Ok(None),
        Ok(RawValue::Text(s)) => Ok(Some(s)),
        _ => Err(ArgError::Type("options.issuer must be a string".into()).into()),
    }
}
