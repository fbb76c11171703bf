//! The fused chain: bearer extraction, JWT verification, token type, tenant, rate limit and
//! request id, run in one call with everything prepared at construction.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use crate::bearer::{extract_bearer, is_b64token};
use crate::call_error::ArgError;
use crate::call_error::CallError;
use crate::cert_binding;
use crate::clock::{unix_millis, unix_seconds_at};
use crate::dpop::nonce::NonceKey;
use crate::dpop::replay::{Admission, ReplayCache};
use crate::dpop::{dpop_scheme, read_proof, ProofAlgs, SenderContext};
use crate::error::AuthError;
use crate::introspection::{is_jwt_shaped, IntrospectionCache, Lookup};
use crate::issue::signing_key::SigningKey;
use crate::issue::{issue, Issue, Signer};
use crate::issuers::{Issuer, IssuerKeys};
use crate::jwt::validate::{granted_scopes, Scopes};
use crate::jwt::{
    signed_with, Alg, Claim, Claims, HmacKey, KeyLookup, KeySet, KeySpec, TokenKind, Verifier,
};
use crate::metrics::{Metrics, Snapshot};
use crate::rate_limit::{
    identity_key, monotonic_nanos, random_seeds, seeds_from_secret, Decision, LeaseDecision,
    LeaseTable, RateLimiter,
};
use crate::refresh_key::RefreshKey;
use crate::request_id::{new_request_id, REQUEST_ID_LEN};
use crate::revocation::{Revocations, TokenIds};
use crate::secret::Secret;
use crate::settings::{AccessKeys, Settings};
use crate::tenant::{HostLabel, TenantRules, TenantSource};
use crate::verified_cache::{VerifiedCache, DEFAULT_CAPACITY};

/// The header arguments of a call: Authorization, X-Tenant-ID (which the outcome may borrow as
/// the tenant id, hence its own lifetime) and Host.
type Headers<'h, 't> = (Option<&'h [u8]>, Option<&'t [u8]>, Option<&'h [u8]>);

/// The trusted issuers (fixed) and their key sets (replaced whole, one issuer at a time).
type TrustedIssuers = (Arc<[Issuer]>, RwLock<Arc<IssuerKeys>>);

/// What one authentication produced. Strings borrow from the request or the decoded token.
pub struct Outcome<'a> {
    pub request_id: [u8; REQUEST_ID_LEN],
    /// Bucket capacity, `None` when rate limiting is off.
    pub rate_limit_limit: Option<u32>,
    pub result: Result<Identity<'a>, Failure>,
}

pub struct Identity<'a> {
    pub user_id: Cow<'a, str>,
    pub email: Option<Cow<'a, str>>,
    pub role: Option<Cow<'a, str>>,
    pub tenant: TenantId<'a>,
    /// The scopes the token grants (`AuthResult.scope`).
    pub scope: Scopes<'a>,
    /// Tokens left in the bucket after this request, `None` when rate limiting is off.
    pub rate_limit_remaining: Option<u32>,
    /// The DPoP proof this request was admitted with, for a replay check shared across
    /// processes (`AuthResult.dpopReplayKey`); `None` for Bearer.
    pub dpop_replay: Option<ProofReplay>,
}

/// What a shared replay store needs of an admitted DPoP proof: the in-process cache's key and
/// the second until which the proof stays a replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProofReplay {
    /// SHA-256(thumbprint `.` jti).
    pub key: [u8; 32],
    /// Until when the proof is a replay, seconds since the epoch: the second after its `iat`
    /// plus `dpopIatWindowSec`, plus the skew allowance (src/dpop.rs `replay_until`).
    pub until_sec: f64,
}

/// The resolved tenant id; every variant holds only `[A-Za-z0-9_-]`.
pub enum TenantId<'a> {
    None,
    Claim(Cow<'a, str>),
    Header(&'a [u8]),
    Host(HostLabel),
    /// The tenant of the trusted issuer that issued the token (`issuers[].tenant`).
    Issuer(&'a str),
}

impl TenantId<'_> {
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            TenantId::None => b"",
            TenantId::Claim(s) => s.as_bytes(),
            TenantId::Header(h) => h,
            TenantId::Host(label) => label.as_bytes(),
            TenantId::Issuer(t) => t.as_bytes(),
        }
    }

    /// Where the id came from, as `AuthResult.tenantSource` names it: `token` (the
    /// `tenant_id` claim), `header` (X-Tenant-ID), `host`, `issuer` (the trusted issuer's
    /// tenant), or `None` when there is no tenant.
    pub fn source(&self) -> Option<&'static str> {
        match self {
            TenantId::None => None,
            TenantId::Claim(_) => Some("token"),
            TenantId::Header(_) => Some("header"),
            TenantId::Host(_) => Some("host"),
            TenantId::Issuer(_) => Some("issuer"),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            TenantId::None => None,
            // Validated as ASCII by the tenant rules.
            _ => std::str::from_utf8(self.as_bytes()).ok(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Failure {
    pub error: AuthError,
    /// Milliseconds until a retry can succeed (rate-limited requests only, else 0).
    pub retry_after_ms: u64,
}

impl From<AuthError> for Failure {
    fn from(error: AuthError) -> Self {
        Failure {
            error,
            retry_after_ms: 0,
        }
    }
}

/// Why a token could not be issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IssueError {
    /// The claims were refused (reserved, wrong type, too large).
    Claims(ArgError),
    /// Refresh tokens need `refreshSecret` or `signingKey`.
    NoRefreshSecret,
    /// Access tokens are signed with `accessSecret`; a `keys` config has no signing key.
    NoAccessSecret,
}

pub struct Authenticator {
    settings: Settings,
    access: Verifier,
    /// The access-token keys; `set_keys` swaps the whole set. A request takes the read lock
    /// once (one uncontended atomic), so it sees the old set or the new one, never a mix.
    access_keys: RwLock<Arc<KeySet>>,
    /// The trusted-issuer registry (`issuers`, src/issuers.rs), `None` when not configured: the
    /// issuers (fixed) and their key sets (one replaced per `setKeys(keys, { issuer })`).
    /// `access_keys` then stays empty.
    trusted: Option<TrustedIssuers>,
    /// Whether some trusted issuer has a tenant (only then is it looked up after verification).
    issuer_tenants: bool,
    /// Signs access tokens: the `accessSecret` shorthand only.
    access_signing: Option<HmacKey>,
    /// Signs and checks refresh tokens: `refreshSecret`, else `signingKey` (src/refresh_key.rs).
    refresh: Option<(Verifier, RefreshKey)>,
    /// Access tokens verified before (src/verified_cache.rs); `None` when off.
    cache: Option<VerifiedCache>,
    /// Whether the cache also serves HMAC-only key sets (only when its size was given).
    cache_hmac: bool,
    /// Answers of the introspection endpoint for opaque tokens (src/introspection.rs); `None`
    /// when off (`introspectionCacheMaxEntries` 0).
    introspection: Option<IntrospectionCache>,
    /// `signingKey` and its public half, which every key set (the constructor's and each
    /// `setKeys`) holds beside the configured keys, so our own tokens always verify.
    signing: Option<(Arc<SigningKey>, KeySpec)>,
    tenant_rules: TenantRules,
    limiter: Option<RateLimiter>,
    /// Leases of a shared limit, once a store is attached (docs/scale-out.md); they replace the
    /// local buckets from then on.
    leases: OnceLock<LeaseTable>,
    revocations: Revocations,
    /// Counters of the calls and their verdicts, read by `metrics()` (src/metrics.rs).
    metrics: Metrics,
    /// DPoP proofs seen inside their window (src/dpop/replay.rs); `None` when `dpop` is off.
    dpop_replay: Option<ReplayCache>,
    /// DPoP server nonces (src/dpop/nonce.rs); `None` without `dpopNonceSecret`.
    dpop_nonces: Option<NonceKey>,
    /// The algorithms a DPoP proof may use (`dpopAlgorithms`).
    dpop_algs: ProofAlgs,
}

/// The longest a signature waits for the clock to pass a subject revocation's cut-off (it is
/// at most 2 ms ahead); past it the token takes the cut-off as its `iat`.
const CUTOFF_WAIT_NANOS: u64 = 5_000_000;

thread_local! {
    /// Reused buffers for the decoded token and the rate-limit key: no allocation per request.
    static SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

impl Authenticator {
    pub fn new(settings: Settings) -> Self {
        let limiter = (settings.rate_limit_max() > 0).then(|| {
            RateLimiter::with_seeds(
                settings.rate_limit_max(),
                settings.rate_limit_refill(),
                settings.rate_limit_max_keys(),
                sketch_seeds(&settings),
            )
        });
        let verifier =
            |kind: TokenKind| Verifier::new(settings.claim_rules(kind), settings.max_token_bytes());
        let signing = settings
            .signing_key()
            .map(|key| (Arc::clone(key), signing_spec(key)));
        let keys = match (settings.access_keys(), &signing) {
            (AccessKeys::Secret(secret), None) => KeySet::hs256(secret.expose()),
            (AccessKeys::Keys(specs), None) => KeySet::new(specs, 0),
            (access, Some((_, own))) => {
                let mut specs = match access {
                    AccessKeys::Secret(secret) => vec![KeySpec {
                        kid: None,
                        alg: Alg::Hs256,
                        key: Secret::from(secret.expose()),
                    }],
                    AccessKeys::Keys(specs) => specs.clone(),
                };
                specs.push(own.clone());
                KeySet::new(&specs, 0)
            }
        };
        // A subject entry must outlive every token issued before its cut-off: the longest
        // lifetime this authenticator issues, plus the leeway `exp` is checked with.
        let retention_sec = settings
            .ttl_sec(TokenKind::Access)
            .max(settings.ttl_sec(TokenKind::Refresh))
            + settings.clock_tolerance_sec();
        let revocations = Revocations::new(
            settings.max_revocations(),
            settings.clock_tolerance_sec(),
            retention_sec,
        );
        let trusted = (!settings.trusted_issuers().is_empty()).then(|| {
            let ring = IssuerKeys::new(
                settings.trusted_issuers(),
                &settings.claim_rules(TokenKind::Access),
            );
            (ring.issuers(), RwLock::new(Arc::new(ring)))
        });
        let issuer_tenants = settings
            .trusted_issuers()
            .iter()
            .any(|i| i.tenant.is_some());
        Authenticator {
            revocations,
            trusted,
            issuer_tenants,
            access: verifier(TokenKind::Access),
            access_keys: RwLock::new(Arc::new(keys)),
            access_signing: settings.access_secret().map(|s| HmacKey::new(s.expose())),
            refresh: RefreshKey::new(
                settings.refresh_secret().map(Secret::expose),
                signing.as_ref().map(|(key, own)| (key, own)),
            )
            .map(|key| (verifier(TokenKind::Refresh), key)),
            tenant_rules: settings.tenant_rules(),
            limiter,
            leases: OnceLock::new(),
            cache: VerifiedCache::new(
                settings
                    .verified_token_cache_size()
                    .unwrap_or(DEFAULT_CAPACITY),
            ),
            cache_hmac: settings.verified_token_cache_size().is_some(),
            introspection: {
                let (entries, bytes) = settings.introspection_cache();
                IntrospectionCache::new(entries, bytes)
            },
            signing,
            dpop_replay: settings
                .dpop()
                .then(|| ReplayCache::new(settings.dpop_max_replay_entries())),
            dpop_algs: ProofAlgs::from_names(settings.dpop_algorithms()),
            dpop_nonces: settings
                .dpop_nonce_secret()
                .map(|s| NonceKey::new(s.expose(), settings.dpop_nonce_lifetime_sec())),
            settings,
            metrics: Metrics::default(),
        }
    }

    /// Switches the rate limit to leases of a shared bucket (a store attached). Once per
    /// authenticator; `Err` when rate limiting is off or leases are already on.
    pub fn enable_leases(
        &self,
        lease: u32,
        strict: bool,
        max_keys: usize,
    ) -> Result<(), &'static str> {
        if self.limiter.is_none() {
            return Err(crate::contract::messages::RATE_LIMIT_OFF);
        }
        let table = LeaseTable::new(self.settings.rate_limit_max(), lease, strict, max_keys);
        self.leases
            .set(table)
            .map_err(|_| "a store is already attached to this authenticator")
    }

    pub fn leases(&self) -> Option<&LeaseTable> {
        self.leases.get()
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The access-token key set in force.
    pub fn keys(&self) -> Arc<KeySet> {
        Arc::clone(
            &self
                .access_keys
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Counts key-set replacements (`keySetGeneration`): of the one set, or of the trusted
    /// issuers' sets together.
    pub fn key_set_generation(&self) -> u64 {
        match &self.trusted {
            Some((_, ring)) => ring
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .generation(),
            None => self.keys().generation(),
        }
    }

    /// Replaces the key set of the trusted issuer named `iss` (byte for byte) with `specs`;
    /// returns the registry's new generation. `Err` without `issuers` or for another name.
    pub fn set_issuer_keys(&self, iss: &str, specs: &[KeySpec]) -> Result<u64, ArgError> {
        let Some((_, ring)) = &self.trusted else {
            return Err(ArgError::Type(
                "options.issuer needs an authenticator configured with issuers".into(),
            ));
        };
        let mut slot = ring.write().unwrap_or_else(PoisonError::into_inner);
        let next = slot.replaced(iss, specs).ok_or_else(|| {
            ArgError::Range(format!("options.issuer {iss:?} is not a configured issuer"))
        })?;
        let generation = next.generation();
        *slot = Arc::new(next);
        // Cleared under the write lock: no request can verify against the old set meanwhile.
        if let Some(cache) = &self.cache {
            cache.clear();
        }
        Ok(generation)
    }

    /// Replaces the access-token keys at once with `specs` (validated by the caller, as for
    /// the constructor); returns the new set's generation.
    pub fn set_keys(&self, specs: &[KeySpec]) -> u64 {
        let mut with_own;
        let specs = match &self.signing {
            Some((_, own)) => {
                with_own = specs.to_vec();
                with_own.push(own.clone());
                &with_own[..]
            }
            None => specs,
        };
        let mut slot = self
            .access_keys
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let generation = slot.generation() + 1;
        *slot = Arc::new(KeySet::new(specs, generation));
        // Cleared under the write lock: no request can verify against the old set meanwhile.
        if let Some(cache) = &self.cache {
            cache.clear();
        }
        generation
    }

    /// The DPoP nonce to hand out now, `None` without `dpopNonceSecret`.
    pub fn dpop_nonce(&self) -> Option<String> {
        let now = self.now_sec();
        self.dpop_nonces.as_ref().map(|k| k.current(now))
    }

    /// The algorithms a DPoP proof may use, in the configured order (the default list when
    /// `dpopAlgorithms` is not given).
    pub fn dpop_algorithms(&self) -> Vec<&'static str> {
        let names = self.settings.dpop_algorithms();
        if names.is_empty() {
            return crate::dpop::DEFAULT_ALGS.map(Alg::name).to_vec();
        }
        let mut algs: Vec<&'static str> = Vec::with_capacity(names.len());
        for name in names
            .iter()
            .filter_map(|n| crate::dpop::proof_alg(n).map(Alg::name))
        {
            // A name given twice is listed once, as the JS engine's Set does.
            if !algs.contains(&name) {
                algs.push(name);
            }
        }
        algs
    }

    /// Forgets the proof of a request the engine admitted and a later stage refused
    /// (`isRevoked`, a route requirement): only admitted requests take room in the replay cache.
    /// Safe because a replay of that proof meets the same refusal: the same token, and the same
    /// method and URL bound by its `htm`/`htu`. True if the proof was held.
    pub fn release_dpop_proof(&self, key: &[u8; 32]) -> bool {
        self.dpop_replay.as_ref().is_some_and(|c| c.release(key))
    }

    /// DPoP proofs held by the replay cache (0 when `dpop` is off).
    pub fn dpop_replay_len(&self) -> usize {
        self.dpop_replay.as_ref().map_or(0, ReplayCache::len)
    }

    /// Tokens held by the verified-token cache.
    pub fn verified_token_cache_len(&self) -> usize {
        self.cache.as_ref().map_or(0, VerifiedCache::len)
    }

    /// Access-token verification, through the cache when it serves `keys` (on by default for
    /// key sets with an asymmetric key, for HMAC-only sets only when its size was given; an
    /// HMAC-verified token is remembered only when the size was given).
    fn verify_access<'s>(
        &self,
        token: &[u8],
        keys: &impl KeyLookup,
        now: f64,
        scratch: &'s mut Vec<u8>,
    ) -> Result<Claims<'s>, AuthError> {
        match &self.cache {
            Some(cache) if self.cache_hmac || !keys.all_hmac() => {
                self.access
                    .verify_cached(token, keys, cache, self.cache_hmac, now, scratch)
            }
            _ => self.access.verify(token, keys, now, scratch),
        }
    }

    /// Access-token verification under the keys in force: the one set, or the trusted issuers'.
    fn verify_access_now<'s>(
        &self,
        token: &[u8],
        now: f64,
        scratch: &'s mut Vec<u8>,
    ) -> Result<Claims<'s>, AuthError> {
        match &self.trusted {
            Some((_, ring)) => {
                let ring = ring.read().unwrap_or_else(PoisonError::into_inner);
                self.verify_access(token, &**ring, now, scratch)
            }
            None => {
                let keys = self
                    .access_keys
                    .read()
                    .unwrap_or_else(PoisonError::into_inner);
                self.verify_access(token, &**keys, now, scratch)
            }
        }
    }

    /// The claims the introspection cache holds for an opaque `token`, checked as a verified
    /// JWT's are (exp, nbf, iat, iss, aud, scope, step-up under the issuer's rules); every
    /// check after verification then runs as for a JWT. `introspection_required` when nothing
    /// is held (the middleware introspects and runs the request again), `token_inactive` for a
    /// held `active: false`.
    fn introspected<'s>(
        &self,
        cache: &IntrospectionCache,
        token: &[u8],
        now: f64,
        scratch: &'s mut Vec<u8>,
    ) -> Result<Claims<'s>, AuthError> {
        if !is_b64token(token) {
            return Err(AuthError::InvalidAuthorizationFormat);
        }
        match cache.lookup(&VerifiedCache::digest(token), now, scratch) {
            Lookup::Missing => Err(AuthError::IntrospectionRequired),
            Lookup::Inactive => Err(AuthError::TokenInactive),
            Lookup::Active => {
                let json: &'s [u8] = scratch;
                match &self.trusted {
                    Some((_, ring)) => {
                        let ring = ring.read().unwrap_or_else(PoisonError::into_inner);
                        self.access.validate_claims(json, &**ring, now)
                    }
                    None => {
                        let keys = self
                            .access_keys
                            .read()
                            .unwrap_or_else(PoisonError::into_inner);
                        self.access.validate_claims(json, &**keys, now)
                    }
                }
            }
        }
    }

    /// Holds the introspection answer for `token` (`claims`: the mapped claims JSON, `None`
    /// for an inactive token) until `until` (seconds since the epoch). `Ok(false)`: refused by
    /// the cache's bounds (src/introspection.rs). The token itself is only hashed.
    pub fn admit_introspection(
        &self,
        token: &[u8],
        claims: Option<&[u8]>,
        until: f64,
    ) -> Result<bool, ArgError> {
        use crate::contract::messages;
        let cache = self
            .introspection
            .as_ref()
            .ok_or_else(|| ArgError::Type(messages::INTROSPECTION_OFF.into()))?;
        if token.is_empty() || token.len() > self.settings.max_token_bytes() {
            return Err(ArgError::Type(messages::INTROSPECTION_TOKEN.into()));
        }
        let claims = match claims {
            None => None,
            Some(json) => {
                let object = json.first() == Some(&b'{');
                if !object
                    || json.len() > crate::introspection::MAX_CLAIMS_BYTES
                    || Claims::parse(json).is_none()
                {
                    return Err(ArgError::Type(messages::INTROSPECTION_CLAIMS.into()));
                }
                Some(Box::from(json))
            }
        };
        if !until.is_finite() {
            return Err(ArgError::Type(messages::INTROSPECTION_UNTIL.into()));
        }
        Ok(cache.admit(VerifiedCache::digest(token), claims, until))
    }

    /// The claims JSON held for an active opaque `token` now (what a pass hands the application
    /// as its claims), or `None`.
    pub fn introspection_claims(&self, token: &[u8]) -> Option<Vec<u8>> {
        let cache = self.introspection.as_ref()?;
        let mut out = Vec::new();
        let found = cache.lookup(&VerifiedCache::digest(token), self.now_sec(), &mut out);
        (found == Lookup::Active).then_some(out)
    }

    /// Answers held by the introspection cache (0 when off).
    pub fn introspection_cache_len(&self) -> usize {
        self.introspection
            .as_ref()
            .map_or(0, IntrospectionCache::len)
    }

    /// The tenant of the trusted issuer a verified token names, if it has one.
    fn issuer_tenant(&self, claims: &Claims<'_>) -> Option<&str> {
        let (issuers, _) = self.trusted.as_ref().filter(|_| self.issuer_tenants)?;
        let iss = claims.iss.as_str()?;
        issuers.iter().find(|i| i.name() == iss)?.tenant()
    }

    /// Reads, checks and installs `items` (raw keys as the binding read them), as the one key
    /// set, or as the key set of the trusted issuer `issuer`.
    pub fn replace_keys(
        &self,
        items: Vec<crate::raw_value::RawValue>,
        issuer: Option<&str>,
    ) -> Result<u64, ArgError> {
        let specs =
            crate::jwt::key_set::read_keys(items, "keys", self.settings.allow_short_secret())?;
        match (issuer, &self.trusted) {
            (Some(iss), _) => return self.set_issuer_keys(iss, &specs),
            (None, Some(_)) => {
                return Err(ArgError::Type(
                    "with issuers, setKeys takes { issuer } naming whose keys these are".into(),
                ))
            }
            (None, None) => {}
        }
        if let Some((own, _)) = &self.signing {
            crate::config::check_signing_kid(&specs, own.kid(), "keys")?;
        }
        Ok(self.set_keys(&specs))
    }

    pub fn limiter(&self) -> Option<&RateLimiter> {
        self.limiter.as_ref()
    }

    /// Whole milliseconds since the epoch (like `Date.now()`), or the fixed clock's.
    fn now_ms(&self) -> f64 {
        self.settings
            .clock_timestamp()
            .map_or_else(unix_millis, |t| (t * 1000.0).floor())
    }

    /// The `iat` of a token signed now, to the millisecond. Right after a subject revocation
    /// (its cut-off is the next millisecond) it waits for the clock to reach the cut-off, at
    /// most [`CUTOFF_WAIT_NANOS`]: the token is then after this cut-off and before any later one,
    /// which every process computes from its own clock (docs/revocation.md).
    fn issue_time(&self) -> f64 {
        let cutoff = self.revocations.recent_cutoff();
        let mut now = self.now_ms() / 1000.0;
        if cutoff > now && self.settings.clock_timestamp().is_none() {
            let deadline = monotonic_nanos() + CUTOFF_WAIT_NANOS;
            while now < cutoff && monotonic_nanos() < deadline {
                std::hint::spin_loop();
                now = unix_millis() / 1000.0;
            }
        }
        self.revocations.issued_at(now)
    }

    /// Seconds since the epoch, whole (like `Math.floor(Date.now() / 1000)`), or the fixed clock.
    pub fn now_sec(&self) -> f64 {
        self.now_sec_at(monotonic_nanos())
    }

    fn now_sec_at(&self, mono: u64) -> f64 {
        self.settings
            .clock_timestamp()
            .unwrap_or_else(|| unix_seconds_at(mono))
    }

    /// Runs the whole chain and hands the outcome to `f` while its borrowed strings are alive.
    #[cfg(any(test, feature = "internals"))]
    pub fn authenticate<R>(
        &self,
        authorization: Option<&[u8]>,
        tenant_header: Option<&[u8]>,
        host: Option<&[u8]>,
        f: impl FnOnce(&Outcome<'_>) -> R,
    ) -> R {
        let sender = SenderContext::default();
        self.authenticate_sender(authorization, tenant_header, host, &sender, f)
    }

    /// [`Authenticator::authenticate`] with what the request says of its sender (a DPoP proof).
    pub fn authenticate_sender<R>(
        &self,
        authorization: Option<&[u8]>,
        tenant_header: Option<&[u8]>,
        host: Option<&[u8]>,
        sender: &SenderContext<'_>,
        f: impl FnOnce(&Outcome<'_>) -> R,
    ) -> R {
        let headers = (authorization, tenant_header, host);
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => {
                let (payload, key) = &mut *scratch;
                self.authenticate_with(headers, sender, payload, key, f)
            }
            // Re-entered from inside `f`: fall back to fresh buffers.
            Err(_) => self.authenticate_with(headers, sender, &mut Vec::new(), &mut Vec::new(), f),
        })
    }

    fn authenticate_with<R>(
        &self,
        (authorization, tenant_header, host): Headers<'_, '_>,
        sender: &SenderContext<'_>,
        payload: &mut Vec<u8>,
        key: &mut Vec<u8>,
        f: impl FnOnce(&Outcome<'_>) -> R,
    ) -> R {
        // One clock read serves the expiry checks, the rate limiter and (when timed) the call
        // duration.
        let mono = monotonic_nanos();
        let request_id = new_request_id();
        let result = self.run_chain(
            (authorization, tenant_header, host),
            sender,
            payload,
            key,
            mono,
        );
        let outcome = Outcome {
            request_id,
            // An identity without a bucket (a client-credentials token, docs/rate-limiting.md)
            // gets no limit, so no RateLimit headers.
            rate_limit_limit: match &result {
                Ok(identity) if identity.rate_limit_remaining.is_none() => None,
                _ => self.limiter.as_ref().map(RateLimiter::capacity),
            },
            result,
        };
        self.metrics.record(
            match &outcome.result {
                Ok(identity) => Ok(identity.rate_limit_remaining.is_some()),
                Err(failure) => Err(failure.error),
            },
            self.metrics
                .timing()
                .then(|| monotonic_nanos().saturating_sub(mono)),
        );
        f(&outcome)
    }

    fn run_chain<'a>(
        &'a self,
        (authorization, tenant_header, host): Headers<'_, 'a>,
        sender: &SenderContext<'_>,
        payload: &'a mut Vec<u8>,
        key: &mut Vec<u8>,
        mono: u64,
    ) -> Result<Identity<'a>, Failure> {
        let max_token_bytes = self.settings.max_token_bytes();
        let dpop_token = match &self.dpop_replay {
            Some(_) => dpop_scheme(authorization),
            None => None,
        };
        let (token, proof) = match dpop_token {
            // The same checks as a Bearer token's, in the JS engine's order, before the proof's
            // claims; its signature waits for the token (src/dpop.rs `UncheckedProof`).
            Some(token) => {
                if token.is_empty() {
                    return Err(AuthError::InvalidAuthorizationFormat.into());
                }
                if token.len() > max_token_bytes {
                    return Err(AuthError::TokenTooLarge.into());
                }
                if !is_b64token(token) {
                    return Err(AuthError::InvalidAuthorizationFormat.into());
                }
                let window = self.settings.dpop_iat_window_sec();
                let now = self.now_sec_at(mono);
                let nonces = self.dpop_nonces.as_ref();
                let proof = read_proof(sender, now, window, self.dpop_algs, nonces)?;
                (token, Some(proof))
            }
            None => (extract_bearer(authorization, max_token_bytes)?, None),
        };
        let now = self.now_sec_at(mono);
        let mut claims = match self.introspection.as_ref() {
            // An opaque token (any token with introspectJwts): what its issuer's introspection
            // endpoint said of it.
            Some(cache) if self.settings.introspect_jwts() || !is_jwt_shaped(token) => {
                self.introspected(cache, token, now, payload)?
            }
            _ => self
                .verify_access_now(token, now, payload)
                .map_err(|err| match err {
                    // Not a JWT: say so as RFC 6750 does when it is not even a b64token.
                    AuthError::MalformedToken if !is_b64token(token) => {
                        AuthError::InvalidAuthorizationFormat
                    }
                    other => self.explain(TokenKind::Access, token, other),
                })?,
        };
        // RFC 9449 §7.1: a bound token needs the proof of its key; no downgrade to Bearer. The
        // cheap checks first (ath, the key's thumbprint), the proof's signature last.
        match (&proof, &claims.cnf_jkt) {
            (None, Claim::Absent) => {}
            (None, _) => return Err(AuthError::DpopBoundTokenAsBearer.into()),
            (Some(p), Claim::Str(jkt)) => {
                p.check_ath(token)?;
                if *jkt != p.thumbprint() {
                    return Err(AuthError::DpopKeyMismatch.into());
                }
                p.check_signature()?;
            }
            (Some(p), _) => {
                p.check_ath(token)?;
                return Err(AuthError::DpopKeyMismatch.into());
            }
        }
        self.revocations.check(token_ids(&claims))?;
        cert_binding::check(
            self.settings.certificate_binding(),
            &claims.cnf,
            sender.client_cert_thumbprint,
        )?;
        // Checked here so that a config without issuer tenants pays no call.
        let issuer_tenant = if self.issuer_tenants {
            self.issuer_tenant(&claims)
        } else {
            None
        };
        if let (Some(t), Some(claim)) = (issuer_tenant, claims.tenant_id.as_str()) {
            // The issuer vouches for the tenant: a token naming another one is refused.
            if !claim.is_empty() && !claim.eq_ignore_ascii_case(t) {
                return Err(AuthError::TenantMismatch.into());
            }
        }
        let tenant_source = self.tenant_rules.resolve(
            issuer_tenant
                .or(claims.tenant_id.as_str())
                .map(str::as_bytes),
            tenant_header,
            host,
        )?;
        let tenant = match tenant_source {
            TenantSource::None => TenantId::None,
            TenantSource::Claim => match issuer_tenant {
                Some(t) => TenantId::Issuer(t),
                None => TenantId::Claim(take_str(&mut claims.tenant_id).unwrap_or_default()),
            },
            TenantSource::Header => TenantId::Header(tenant_header.unwrap_or_default()),
            TenantSource::Host(label) => TenantId::Host(label),
        };
        let user_id = take_str(&mut claims.sub).unwrap_or_default();
        // The bucket key (rate_limit::identity_key, docs/rate-limiting.md): what the signature
        // vouches for, tenant claim and subject; none for a client-credentials token unless
        // `rateLimitClientCredentials`.
        let claim_tenant = match &tenant {
            TenantId::Claim(_) | TenantId::Issuer(_) => Some(tenant.as_bytes()),
            _ => None,
        };
        let limit_clients = self.settings.rate_limit_client_credentials();
        let client_id = claims.client_id.as_str();
        let rate_limit_remaining = match &self.limiter {
            Some(limiter)
                if identity_key(key, claim_tenant, &user_id, client_id, limit_clients) =>
            {
                if let Some(leases) = self.leases.get() {
                    match leases.take(key, mono) {
                        LeaseDecision::Allowed { remaining } => Some(remaining),
                        LeaseDecision::Limited { retry_after_ms } => {
                            return Err(Failure {
                                error: AuthError::RateLimited,
                                retry_after_ms,
                            })
                        }
                        LeaseDecision::Pending => return Err(AuthError::RateLimitPending.into()),
                    }
                } else {
                    match limiter.take(key, mono) {
                        Decision::Allowed { remaining } => Some(remaining),
                        Decision::Limited { retry_after_ms, .. } => {
                            return Err(Failure {
                                error: AuthError::RateLimited,
                                retry_after_ms,
                            })
                        }
                    }
                }
            }
            _ => None,
        };
        // State is written after the decision: the proof takes room in the replay cache only
        // now that every other check admitted the request, so a refused request (revoked, rate
        // limited, waiting for its lease and retried) never makes its own proof a replay.
        let dpop_replay = match (&proof, &self.dpop_replay) {
            (Some(p), Some(cache)) => {
                match cache.admit(p.replay_key, p.expires_at, self.now_sec_at(mono)) {
                    Admission::Fresh => Some(ProofReplay {
                        key: p.replay_key,
                        until_sec: p.expires_at,
                    }),
                    Admission::Replayed => return Err(AuthError::DpopProofReplayed.into()),
                    Admission::Full => return Err(AuthError::DpopReplayCacheFull.into()),
                }
            }
            _ => None,
        };
        Ok(Identity {
            user_id,
            email: take_str(&mut claims.email),
            role: take_str(&mut claims.role),
            tenant,
            scope: granted_scopes(&mut claims),
            rate_limit_remaining,
            dpop_replay,
        })
    }

    /// Verifies a bare token of `kind`: size, signature, claims and type (an access token may
    /// also carry no type unless `requireTokenType`; a refresh token must say `"refresh"`).
    /// The same path as the request chain's. `None` for a refresh token when there is no
    /// refresh key (neither `refreshSecret` nor `signingKey`).
    ///
    /// There is no request, so no sender: an access token is judged as `authenticate` judges it
    /// sent as `Bearer` without a client certificate, in the same order. A sender-constrained
    /// token fails closed (`dpop_bound_token_as_bearer`; with certificate-bound tokens on,
    /// `certificate_required`, `unbound_token`, `invalid_claims`): `valid` never says a stolen
    /// bound token is good.
    pub fn verify<'s>(
        &self,
        kind: TokenKind,
        token: &[u8],
        scratch: &'s mut Vec<u8>,
    ) -> Option<Result<Claims<'s>, AuthError>> {
        let now = self.now_sec();
        let verdict = match kind {
            TokenKind::Access => self.verify_access_now(token, now, scratch),
            TokenKind::Refresh => {
                let (verifier, key) = self.refresh.as_ref()?;
                verifier.verify(token, key, now, scratch)
            }
        };
        Some(
            verdict
                .map_err(|err| self.explain(kind, token, err))
                .and_then(|claims| {
                    let access = kind == TokenKind::Access;
                    if access && !matches!(claims.cnf_jkt, Claim::Absent) {
                        return Err(AuthError::DpopBoundTokenAsBearer);
                    }
                    self.revocations.check(token_ids(&claims))?;
                    if access {
                        cert_binding::check(
                            self.settings.certificate_binding(),
                            &claims.cnf,
                            None,
                        )?;
                    }
                    Ok(claims)
                }),
        )
    }

    /// The issuer a revocation names when the caller gives none: the one signed tokens get
    /// (the first configured), else none (tokens without `iss`).
    fn default_issuer(&self) -> &str {
        self.settings.issuers().first().map_or("", String::as_str)
    }

    /// Refuses the token `(iss, jti)` until it expires (`expires_at_sec`, its `exp`).
    pub fn revoke_token(
        &self,
        jti: &str,
        expires_at_sec: f64,
        iss: Option<&str>,
    ) -> Result<(), CallError> {
        let iss = iss.unwrap_or_else(|| self.default_issuer());
        let done = self
            .revocations
            .revoke_token(iss, jti, expires_at_sec, self.now_sec());
        self.count_refused_revocation(&done);
        done
    }

    /// Refuses the tokens of `(iss, sub)` issued before `before`; by default every token
    /// issued up to and including the current millisecond (the cut-off is the next one, and
    /// tokens this library signs carry a millisecond `iat`: docs/revocation.md).
    pub fn revoke_subject(
        &self,
        sub: &str,
        before: Option<f64>,
        iss: Option<&str>,
    ) -> Result<(), CallError> {
        let now_ms = self.now_ms();
        let iss = iss.unwrap_or_else(|| self.default_issuer());
        let before = before.unwrap_or_else(|| self.revocations.default_cutoff(now_ms));
        let done = self
            .revocations
            .revoke_subject(iss, sub, before, now_ms / 1000.0);
        self.count_refused_revocation(&done);
        done
    }

    fn count_refused_revocation(&self, done: &Result<(), CallError>) {
        if matches!(done, Err(e) if e.code == crate::revocation::LIMIT_CODE) {
            self.metrics.revocation_refused();
        }
    }

    /// Times every later call into the duration histogram, or stops (off by default).
    pub fn set_duration_metrics(&self, on: bool) {
        self.metrics.set_timing(on);
    }

    /// The counters of this authenticator (src/metrics.rs) and of its verified-token cache
    /// (`(hits, misses)`, zero when the cache is off).
    pub fn metrics(&self) -> (Snapshot, (u64, u64)) {
        (
            self.metrics.snapshot(),
            self.cache.as_ref().map_or((0, 0), VerifiedCache::lookups),
        )
    }

    /// Live revocations held, after dropping the expired ones.
    pub fn revocation_count(&self) -> usize {
        self.revocations.len(self.now_sec())
    }

    /// Marks the deny list as possibly incomplete (a revocation feed past its allowed lag
    /// with `onStale: 'closed'`): tokens not known to be revoked get `revocation_unavailable`.
    pub fn set_revocation_unavailable(&self, unavailable: bool) {
        self.revocations.set_unavailable(unavailable);
    }

    pub fn revocation_unavailable(&self) -> bool {
        self.revocations.unavailable()
    }

    /// Makes a failure of `kind`'s check precise: a token that `kind`'s keys refuse (no key
    /// for its `kid` or `alg`, or a bad signature) but the other kind's keys verify is one of
    /// our tokens of the wrong type (a refresh token presented as access under separate keys,
    /// or the reverse), not a forgery. Runs only after the check failed, so accepted tokens pay
    /// nothing for it; it only ever turns one refusal into another.
    fn explain(&self, kind: TokenKind, token: &[u8], err: AuthError) -> AuthError {
        if !matches!(
            err,
            AuthError::InvalidSignature | AuthError::UnknownKey | AuthError::UnsupportedAlgorithm
        ) {
            return err;
        }
        let by_other = match kind {
            TokenKind::Access => self
                .refresh
                .as_ref()
                .is_some_and(|(_, key)| signed_with(token, key)),
            TokenKind::Refresh => match &self.trusted {
                Some((_, ring)) => signed_with(
                    token,
                    &**ring.read().unwrap_or_else(PoisonError::into_inner),
                ),
                None => signed_with(token, &*self.keys()),
            },
        };
        if by_other {
            AuthError::WrongTokenType
        } else {
            err
        }
    }

    /// Signs `claims_json` (a JSON object) as a token of `kind`, adding `iat`, `exp`, `jti`,
    /// `type` and the configured `iss` / `aud`.
    pub fn issue(&self, kind: TokenKind, claims_json: &str) -> Result<String, IssueError> {
        let key = match (kind, &self.signing) {
            (TokenKind::Access, Some((key, _))) => Signer::Key(key),
            (TokenKind::Access, None) => Signer::Hmac(
                self.access_signing
                    .as_ref()
                    .ok_or(IssueError::NoAccessSecret)?,
            ),
            (TokenKind::Refresh, _) => self
                .refresh
                .as_ref()
                .ok_or(IssueError::NoRefreshSecret)?
                .1
                .signer(),
        };
        let jti = new_request_id();
        let jti = std::str::from_utf8(&jti).unwrap_or_default();
        let token = Issue {
            kind,
            key,
            now: self.issue_time(),
            jti,
        };
        issue(&self.settings.issue_rules(kind), claims_json, token).map_err(IssueError::Claims)
    }
}

/// The rate limiter's sketch seeds: derived from the first HMAC secret of the config (the
/// `accessSecret` shorthand, else the first HMAC key of `keys`), so both engines built from one
/// config hash alike; random when the config holds no secret (public keys only).
fn sketch_seeds(settings: &Settings) -> (u32, u32) {
    let secret = match settings.access_keys() {
        AccessKeys::Secret(secret) => Some(secret.expose()),
        AccessKeys::Keys(specs) => specs
            .iter()
            .find(|spec| spec.alg.hmac_algorithm().is_some())
            .map(|spec| spec.key.expose()),
    };
    secret.map_or_else(random_seeds, seeds_from_secret)
}

fn token_ids<'c>(claims: &'c Claims<'_>) -> TokenIds<'c> {
    TokenIds {
        iss: claims.iss.as_str(),
        jti: claims.jti.as_str(),
        sub: claims.sub.as_str(),
        iat: claims.iat.as_num(),
    }
}

/// Moves a string claim out of the parsed claims (they are validated, so types are right).
fn take_str<'a>(claim: &mut Claim<'a>) -> Option<Cow<'a, str>> {
    match std::mem::take(claim) {
        Claim::Str(s) => Some(s),
        _ => None,
    }
}

/// The verification key of `key`'s public half, bound to its kid and alg.
fn signing_spec(key: &SigningKey) -> KeySpec {
    KeySpec {
        kid: Some(key.kid().to_owned()),
        alg: Alg::from_name(key.alg().name()).expect("every signing alg verifies"),
        key: Secret::from(key.public_key()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RawConfig;

    const ACCESS: &[u8] = b"access-secret-of-at-least-32-bytes!!";
    const REFRESH: &[u8] = b"refresh-secret-of-at-least-32-bytes!";

    /// An authenticator that signs with a fresh Ed25519 `signingKey` (kid "own").
    fn signing_core() -> Authenticator {
        signing_core_with(RawConfig::new())
    }

    /// As [`signing_core`], on top of `raw` (other options).
    fn signing_core_with(raw: RawConfig) -> Authenticator {
        use crate::raw_value::RawValue;
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let key = RawValue::List(vec![RawValue::Fields(vec![
            ("kid", "own".into()),
            ("alg", "EdDSA".into()),
            ("key", pkcs8.as_ref().into()),
        ])]);
        let raw = raw.with("signingKey", key).with("rateLimitMax", 0.0);
        Authenticator::new(Settings::from_config(raw).unwrap())
    }

    #[test]
    fn signing_key_signs_access_tokens_that_its_key_set_verifies() {
        let core = signing_core();
        let token = core.issue(TokenKind::Access, r#"{"sub":"u"}"#).unwrap();
        assert!(token.starts_with(&crate::jwt::base64url::encode(
            br#"{"alg":"EdDSA","kid":"own","typ":"JWT"}"#
        )));
        let mut scratch = Vec::new();
        assert!(core
            .verify(TokenKind::Access, token.as_bytes(), &mut scratch)
            .unwrap()
            .is_ok());
    }

    #[test]
    fn set_keys_keeps_the_signing_keys_public_half_and_refuses_its_kid() {
        let core = signing_core();
        let token = core.issue(TokenKind::Access, r#"{"sub":"u"}"#).unwrap();
        let hmac = crate::jwt::KeySpec {
            kid: Some("other".into()),
            alg: crate::jwt::Alg::Hs256,
            key: Secret::from(ACCESS),
        };
        core.set_keys(&[hmac]);
        let mut scratch = Vec::new();
        assert!(core
            .verify(TokenKind::Access, token.as_bytes(), &mut scratch)
            .unwrap()
            .is_ok());
        use crate::raw_value::RawValue;
        let same_kid = vec![RawValue::Fields(vec![
            ("kid", "own".into()),
            ("alg", "HS256".into()),
            ("key", ACCESS.into()),
        ])];
        let err = core.replace_keys(same_kid, None).unwrap_err();
        assert_eq!(
            err,
            ArgError::DuplicateKid(r#"keys: kid "own" is the signingKey's kid"#.into())
        );
    }

    fn verdict(core: &Authenticator, kind: TokenKind, token: &str) -> Result<(), AuthError> {
        core.verify(kind, token.as_bytes(), &mut Vec::new())
            .expect("a refresh key is configured")
            .map(|_| ())
    }

    fn header_of(token: &str) -> String {
        let mut out = Vec::new();
        let segment = token.split('.').next().unwrap();
        crate::jwt::base64url::decode_into(segment.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn signing_key_signs_refresh_tokens_without_a_refresh_secret() {
        let core = signing_core();
        let refresh = core.issue(TokenKind::Refresh, r#"{"sub":"u"}"#).unwrap();
        assert_eq!(
            header_of(&refresh),
            r#"{"alg":"EdDSA","kid":"own","typ":"JWT"}"#
        );
        assert_eq!(verdict(&core, TokenKind::Refresh, &refresh), Ok(()));
        let access = core.issue(TokenKind::Access, r#"{"sub":"u"}"#).unwrap();
        // One key signs both kinds: the `type` claim alone tells them apart.
        assert_eq!(
            verdict(&core, TokenKind::Refresh, &access),
            Err(AuthError::WrongTokenType)
        );
        assert_eq!(
            verdict(&core, TokenKind::Access, &refresh),
            Err(AuthError::WrongTokenType)
        );
        assert_eq!(code(&core, &refresh), Some("wrong_token_type"));
        assert_eq!(code(&core, &access), None);
    }

    #[test]
    fn refresh_secret_wins_over_signing_key() {
        let core = signing_core_with(RawConfig::new().with("refreshSecret", REFRESH));
        let refresh = core.issue(TokenKind::Refresh, r#"{"sub":"u"}"#).unwrap();
        assert_eq!(header_of(&refresh), r#"{"alg":"HS256","typ":"JWT"}"#);
        assert_eq!(verdict(&core, TokenKind::Refresh, &refresh), Ok(()));
        // Under separate keys the refusal is still made precise, both ways.
        let access = core.issue(TokenKind::Access, r#"{"sub":"u"}"#).unwrap();
        assert_eq!(
            verdict(&core, TokenKind::Refresh, &access),
            Err(AuthError::WrongTokenType)
        );
        assert_eq!(code(&core, &refresh), Some("wrong_token_type"));
    }

    #[test]
    fn refresh_tokens_verify_against_the_signing_key_alone_not_other_access_keys() {
        use crate::jwt::base64url::encode;
        use ring::signature::KeyPair;
        let core = signing_core();
        // An identity provider's key among the access keys, and a token of it claiming refresh.
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let idp = ring::signature::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        core.set_keys(&[KeySpec {
            kid: Some("idp".into()),
            alg: Alg::EdDsa,
            key: Secret::from(idp.public_key().as_ref()),
        }]);
        let forge = |header: &str| {
            let input = format!(
                "{}.{}",
                encode(header.as_bytes()),
                encode(br#"{"sub":"u","exp":9999999999,"type":"refresh"}"#)
            );
            format!("{input}.{}", encode(idp.sign(input.as_bytes()).as_ref()))
        };
        // Never accepted. Under the idp's kid it is a valid token of the access keys, so the
        // refusal says wrong type; without a kid or under the signing key's, a forgery.
        for (header, expected) in [
            (r#"{"alg":"EdDSA","kid":"idp"}"#, AuthError::WrongTokenType),
            (r#"{"alg":"EdDSA"}"#, AuthError::InvalidSignature),
            (
                r#"{"alg":"EdDSA","kid":"own"}"#,
                AuthError::InvalidSignature,
            ),
        ] {
            let token = forge(header);
            assert_eq!(
                verdict(&core, TokenKind::Refresh, &token),
                Err(expected),
                "{header}"
            );
        }
    }

    #[test]
    fn revocation_applies_to_refresh_tokens_of_the_signing_key() {
        let core = signing_core();
        let refresh = core.issue(TokenKind::Refresh, r#"{"sub":"u"}"#).unwrap();
        let mut scratch = Vec::new();
        let claims = core
            .verify(TokenKind::Refresh, refresh.as_bytes(), &mut scratch)
            .unwrap()
            .unwrap();
        let (jti, exp) = (
            claims.jti.as_str().unwrap().to_owned(),
            claims.exp.as_num().unwrap(),
        );
        core.revoke_token(&jti, exp, None).unwrap();
        assert_eq!(
            verdict(&core, TokenKind::Refresh, &refresh),
            Err(AuthError::TokenRevoked)
        );
    }

    #[test]
    fn log_out_everywhere_refuses_every_earlier_token_and_accepts_the_next_login() {
        let core = core(None);
        for i in 0..1000 {
            let sub = format!(r#"{{"sub":"u{i}"}}"#);
            let before = core.issue(TokenKind::Access, &sub).unwrap();
            core.revoke_subject(&format!("u{i}"), None, None).unwrap();
            let after = core.issue(TokenKind::Access, &sub).unwrap();
            assert_eq!(code(&core, &before), Some("token_revoked"), "#{i}");
            assert_eq!(code(&core, &after), None, "#{i}");
        }
    }

    fn core(refresh: Option<&[u8]>) -> Authenticator {
        let mut raw = RawConfig::new()
            .with("accessSecret", ACCESS)
            .with("rateLimitMax", 0.0);
        if let Some(refresh) = refresh {
            raw = raw.with("refreshSecret", refresh);
        }
        Authenticator::new(Settings::from_config(raw).unwrap())
    }

    fn code(core: &Authenticator, token: &str) -> Option<&'static str> {
        let header = format!("Bearer {token}");
        core.authenticate(Some(header.as_bytes()), None, None, |o| {
            o.result.as_ref().err().map(|f| f.error.code())
        })
    }

    #[test]
    fn verify_judges_a_bound_access_token_as_bearer_without_a_sender() {
        let thumb = "Avv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAmZZs";
        let config = |certificates: bool| {
            let raw = RawConfig::new()
                .with("accessSecret", ACCESS)
                .with("rateLimitMax", 0.0)
                .with("certificateBoundTokens", certificates);
            Authenticator::new(Settings::from_config(raw).unwrap())
        };
        let verdict = |core: &Authenticator, claims: &str| {
            let token = core.issue(TokenKind::Access, claims).unwrap();
            core.verify(TokenKind::Access, token.as_bytes(), &mut Vec::new())
                .unwrap()
                .map(|_| ())
                .map_err(|e| e.code())
        };
        let dpop = r#"{"sub":"u","cnf":{"jkt":"0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}}"#;
        let mtls = format!(r#"{{"sub":"u","cnf":{{"x5t#S256":"{thumb}"}}}}"#);
        for certificates in [false, true] {
            let core = config(certificates);
            assert_eq!(verdict(&core, r#"{"sub":"u"}"#), Ok(()));
            assert_eq!(
                verdict(&core, dpop),
                Err("dpop_bound_token_as_bearer"),
                "a DPoP-bound token, whatever the settings"
            );
            assert_eq!(
                verdict(&core, r#"{"sub":"u","cnf":{"jkt":7}}"#),
                Err("dpop_bound_token_as_bearer")
            );
        }
        // A certificate-bound token, as authenticate judges it without a certificate, whatever
        // the settings (off, nothing checks the certificate: no downgrade to a bearer token).
        assert_eq!(verdict(&config(false), &mtls), Err("certificate_required"));
        assert_eq!(verdict(&config(true), &mtls), Err("certificate_required"));
    }

    #[test]
    fn certificate_binding_runs_after_revocation_and_before_the_tenant() {
        let thumb = "Avv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAmZZs";
        let raw = RawConfig::new()
            .with("accessSecret", ACCESS)
            .with("rateLimitMax", 0.0)
            .with("certificateBoundTokens", true);
        let core = Authenticator::new(Settings::from_config(raw).unwrap());
        let claims = format!(r#"{{"sub":"u","cnf":{{"x5t#S256":"{thumb}"}}}}"#);
        let token = core.issue(TokenKind::Access, &claims).unwrap();
        let header = format!("Bearer {token}");
        let run = |tenant: Option<&[u8]>, thumbprint: Option<&str>| {
            let sender = SenderContext {
                client_cert_thumbprint: thumbprint.map(str::as_bytes),
                ..SenderContext::default()
            };
            core.authenticate_sender(Some(header.as_bytes()), tenant, None, &sender, |o| {
                o.result.as_ref().err().map(|f| f.error.code())
            })
        };
        assert_eq!(run(None, Some(thumb)), None);
        assert_eq!(run(None, None), Some("certificate_required"));
        // A bad tenant header is not reached without the certificate.
        assert_eq!(run(Some(b"bad:id"), None), Some("certificate_required"));
        assert_eq!(run(Some(b"bad:id"), Some(thumb)), Some("invalid_tenant"));
        // Its jti and exp, read from its payload (every core refuses it without a certificate).
        let mut scratch = Vec::new();
        let payload = token.split('.').nth(1).unwrap();
        crate::jwt::base64url::decode_into(payload.as_bytes(), &mut scratch).unwrap();
        let claims = Claims::parse(&scratch).unwrap();
        let (jti, exp) = (
            claims.jti.as_str().unwrap().to_owned(),
            claims.exp.as_num().unwrap(),
        );
        core.revoke_token(&jti, exp, None).unwrap();
        assert_eq!(run(None, None), Some("token_revoked"));
    }

    #[test]
    fn rejects_refresh_token_as_access_with_separate_secrets() {
        let core = core(Some(REFRESH));
        let refresh = core.issue(TokenKind::Refresh, r#"{"sub":"u"}"#).unwrap();
        let access = core.issue(TokenKind::Access, r#"{"sub":"u"}"#).unwrap();
        assert_eq!(code(&core, &refresh), Some("wrong_token_type"));
        assert_eq!(code(&core, &access), None);
        let mut s = Vec::new();
        let verdict = core.verify(TokenKind::Access, refresh.as_bytes(), &mut s);
        assert_eq!(verdict.unwrap().err(), Some(AuthError::WrongTokenType));
        let verdict = core.verify(TokenKind::Refresh, access.as_bytes(), &mut s);
        assert_eq!(verdict.unwrap().err(), Some(AuthError::WrongTokenType));
    }

    #[test]
    fn a_token_of_an_unknown_key_stays_invalid_signature() {
        let other = core(Some(b"a-third-secret-of-at-least-32-bytes!"));
        let foreign = other.issue(TokenKind::Refresh, r#"{"sub":"u"}"#).unwrap();
        assert_eq!(
            code(&core(Some(REFRESH)), &foreign),
            Some("invalid_signature")
        );
        // Without a refresh key there is nothing to tell a refresh token from a forgery.
        let refresh = core(Some(REFRESH))
            .issue(TokenKind::Refresh, r#"{"sub":"u"}"#)
            .unwrap();
        assert_eq!(code(&core(None), &refresh), Some("invalid_signature"));
    }

    #[test]
    fn set_keys_swaps_the_whole_set_while_other_threads_verify() {
        use crate::jwt::{Alg, KeySpec};
        use crate::secret::Secret;
        let spec = |kid: &str, key: &[u8]| KeySpec {
            kid: Some(kid.into()),
            alg: Alg::Hs256,
            key: Secret::from(key),
        };
        let a = vec![spec("a", &[1; 32])];
        let b = vec![spec("b", &[2; 32]), spec("a", &[3; 32])];
        let core = std::sync::Arc::new(core(None));
        core.set_keys(&a);
        let token = {
            let input = format!(
                "{}.{}",
                crate::jwt::base64url::encode(br#"{"alg":"HS256","kid":"a"}"#),
                crate::jwt::base64url::encode(br#"{"sub":"u","exp":9999999999}"#)
            );
            let tag = HmacKey::new(&[1; 32]).sign(input.as_bytes());
            format!("{input}.{}", crate::jwt::base64url::encode(tag.as_ref()))
        };
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let (core, stop, token) = (core.clone(), stop.clone(), token.clone());
                std::thread::spawn(move || {
                    let mut seen = [0usize; 2];
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        // Set a accepts the token; set b has a key "a" of other bytes: refused.
                        match code(&core, &token) {
                            None => seen[0] += 1,
                            Some("invalid_signature") => seen[1] += 1,
                            other => panic!("a mixed or broken key set answered {other:?}"),
                        }
                    }
                    seen
                })
            })
            .collect();
        for i in 0..2000u64 {
            let generation = core.set_keys(if i % 2 == 0 { &b } else { &a });
            assert_eq!(generation, i + 2);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for r in readers {
            r.join().unwrap();
        }
        assert_eq!(core.keys().generation(), 2001);
    }

    #[test]
    fn set_keys_with_the_cache_on_never_answers_from_the_other_set() {
        use crate::jwt::{Alg, KeySpec};
        use crate::secret::Secret;
        use std::sync::atomic::{AtomicBool, Ordering};
        let spec = |key: &[u8]| KeySpec {
            kid: Some("a".into()),
            alg: Alg::Hs256,
            key: Secret::from(key),
        };
        // Set a (odd generations) accepts the token; set b (even ones) holds kid "a" with other
        // bytes. With the cache on, a reader that verified under a may insert its entry after
        // the swap to b: the generation tag must keep that entry from answering under b.
        let (a, b) = (vec![spec(&[1; 32])], vec![spec(&[3; 32])]);
        let raw = RawConfig::new()
            .with("accessSecret", ACCESS)
            .with("rateLimitMax", 0.0)
            .with("verifiedTokenCacheMaxEntries", 16.0);
        let core = std::sync::Arc::new(Authenticator::new(Settings::from_config(raw).unwrap()));
        core.set_keys(&a);
        let token = {
            let input = format!(
                "{}.{}",
                crate::jwt::base64url::encode(br#"{"alg":"HS256","kid":"a"}"#),
                crate::jwt::base64url::encode(br#"{"sub":"u","exp":9999999999}"#)
            );
            let tag = HmacKey::new(&[1; 32]).sign(input.as_bytes());
            format!("{input}.{}", crate::jwt::base64url::encode(tag.as_ref()))
        };
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let (core, stop, token) = (core.clone(), stop.clone(), token.clone());
                std::thread::spawn(move || {
                    let mut judged = 0usize;
                    while !stop.load(Ordering::Relaxed) {
                        let before = core.keys().generation();
                        let verdict = code(&core, &token);
                        // No swap during the call: the set in force is known, so is the verdict.
                        if core.keys().generation() == before {
                            let expected = if before % 2 == 1 {
                                None
                            } else {
                                Some("invalid_signature")
                            };
                            assert_eq!(verdict, expected, "generation {before}");
                            judged += 1;
                        }
                    }
                    judged
                })
            })
            .collect();
        for i in 0..2000u64 {
            core.set_keys(if i % 2 == 0 { &b } else { &a });
        }
        // Then b and a again (generations 2002 and 2003), each long enough to be judged under.
        for set in [&b, &a] {
            core.set_keys(set);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        stop.store(true, Ordering::Relaxed);
        let judged: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
        assert!(judged > 0);
        assert!(core.verified_token_cache_len() <= 16);
    }

    #[test]
    fn refresh_without_a_refresh_secret_is_refused() {
        let core = core(None);
        assert_eq!(
            core.issue(TokenKind::Refresh, r#"{"sub":"u"}"#),
            Err(IssueError::NoRefreshSecret)
        );
        assert!(core
            .verify(TokenKind::Refresh, b"a.b.c", &mut Vec::new())
            .is_none());
    }
}
