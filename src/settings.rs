//! Validated authenticator settings. A `Settings` only comes out of [`crate::config`], which
//! checks every option against `contract/options.json` (`Settings::from_config` is defined
//! there); its fields are private, so no caller can build one that skipped a check. Plain data:
//! this module uses the types it holds and nothing that reads or checks a config.

use crate::issue::signing_key::SigningKey;
use crate::issue::IssueRules;
use crate::jwt::{ClaimRules, KeySpec, TokenKind};
use crate::secret::Secret;
use crate::tenant::TenantRules;
use std::sync::Arc;

/// RFC 7518 §3.2: an HS256 key must be at least as long as the hash output.
pub const MIN_SECRET_BYTES: usize = 32;

/// Where the access-token keys come from: the `accessSecret` shorthand or `keys`.
#[derive(Debug, Clone)]
pub enum AccessKeys {
    Secret(Secret),
    Keys(Vec<KeySpec>),
}

#[derive(Debug, Clone)]
pub struct Settings {
    access_keys: AccessKeys,
    /// `signingKey`: signs access tokens; its public half joins the verification keys.
    signing_key: Option<Arc<SigningKey>>,
    allow_short_secret: bool,
    /// `None`: the default (on for asymmetric key sets, off for HMAC-only ones).
    verified_token_cache_size: Option<usize>,
    /// `introspectionCacheMaxEntries` / `…MaxBytes` (src/introspection.rs); 0 entries: off.
    introspection_cache_entries: usize,
    introspection_cache_bytes: usize,
    /// `introspectJwts`: JWTs are looked up in the introspection cache too.
    introspect_jwts: bool,
    refresh_secret: Option<Secret>,
    issuers: Vec<String>,
    audiences: Vec<String>,
    clock_tolerance_sec: f64,
    /// Bucket capacity; 0 turns rate limiting off.
    rate_limit_max: u32,
    rate_limit_refill: f64,
    rate_limit_max_keys: usize,
    /// `rateLimitClientCredentials`: client-credentials tokens take a bucket too.
    rate_limit_client_credentials: bool,
    enforce_tenant_match: bool,
    base_domain: Option<String>,
    access_ttl_sec: f64,
    refresh_ttl_sec: f64,
    max_token_bytes: usize,
    require_token_type: bool,
    require_expiration: bool,
    require_subject: bool,
    /// A fixed "now" in seconds since the epoch (tests, replays); `None` reads the system clock.
    clock_timestamp: Option<f64>,
    /// Most live revocations held (see `crate::revocation`).
    max_revocations: usize,
    /// RFC 8705 §3: check `cnf["x5t#S256"]` against the client certificate.
    certificate_bound_tokens: bool,
    /// Refuse tokens without `cnf["x5t#S256"]`.
    require_certificate_bound_tokens: bool,
    /// DPoP (RFC 9449): the scheme accepted, its proof window and replay-cache bound.
    dpop: bool,
    dpop_iat_window_sec: f64,
    dpop_max_replay_entries: usize,
    dpop_nonce_secret: Option<Secret>,
    dpop_nonce_lifetime_sec: f64,
    /// `dpopAlgorithms` as given (checked asymmetric); empty for the default list.
    dpop_algorithms: Vec<String>,
    /// `requiredScope`: scope-tokens every access token must grant.
    required_scopes: Vec<String>,
    /// `requireAccessTokenProfile` (RFC 9068).
    access_token_profile: bool,
    /// `requiredAcr`, `maxAuthAgeSec` (RFC 9470 step-up).
    required_acr: Vec<String>,
    max_auth_age_sec: Option<f64>,
    /// `issuers`: the trusted-issuer registry (src/issuers.rs); empty when off.
    trusted_issuers: Vec<crate::issuers::IssuerSpec>,
}

/// One validated option value, as `config.rs` hands it over.
#[derive(Debug)]
pub(crate) enum Setting {
    Secret(Secret),
    List(Vec<String>),
    Number(f64),
    Bool(bool),
    Text(String),
    Keys(Vec<KeySpec>),
    SigningKey(Arc<SigningKey>),
    Issuers(Vec<crate::issuers::IssuerSpec>),
}

impl Settings {
    /// Settings before the schema defaults are applied: only `config.rs` calls this, and it
    /// applies a value (default or given) to every option before handing the result out.
    pub(crate) fn unfilled(access_keys: AccessKeys, allow_short_secret: bool) -> Settings {
        Settings {
            access_keys,
            signing_key: None,
            allow_short_secret,
            verified_token_cache_size: None,
            introspection_cache_entries: 0,
            introspection_cache_bytes: 0,
            introspect_jwts: false,
            refresh_secret: None,
            issuers: Vec::new(),
            audiences: Vec::new(),
            clock_tolerance_sec: 0.0,
            rate_limit_max: 0,
            rate_limit_refill: 0.0,
            rate_limit_max_keys: 0,
            rate_limit_client_credentials: false,
            enforce_tenant_match: false,
            base_domain: None,
            access_ttl_sec: 0.0,
            refresh_ttl_sec: 0.0,
            max_token_bytes: 0,
            require_token_type: false,
            require_expiration: false,
            require_subject: false,
            clock_timestamp: None,
            max_revocations: 0,
            certificate_bound_tokens: false,
            require_certificate_bound_tokens: false,
            dpop: false,
            dpop_iat_window_sec: 0.0,
            dpop_max_replay_entries: 0,
            dpop_nonce_secret: None,
            dpop_nonce_lifetime_sec: 0.0,
            dpop_algorithms: Vec::new(),
            required_scopes: Vec::new(),
            access_token_profile: false,
            required_acr: Vec::new(),
            max_auth_age_sec: None,
            trusted_issuers: Vec::new(),
        }
    }

    /// Stores an option by its schema name. The only place that maps names to fields; a
    /// test checks that it knows every option of the schema. `Err` for an unmapped name or a
    /// value of the wrong shape (a bug in `config.rs`, never user input).
    pub(crate) fn set(&mut self, name: &str, value: Setting) -> Result<(), ()> {
        use Setting::*;
        match (name, value) {
            ("accessSecret", Secret(s)) => self.access_keys = AccessKeys::Secret(s),
            ("keys", Keys(k)) => self.access_keys = AccessKeys::Keys(k),
            ("signingKey", SigningKey(k)) => self.signing_key = Some(k),
            ("verifiedTokenCacheMaxEntries", Number(n)) => {
                self.verified_token_cache_size = Some(n as usize)
            }
            ("introspectionCacheMaxEntries", Number(n)) => {
                self.introspection_cache_entries = n as usize
            }
            ("introspectionCacheMaxBytes", Number(n)) => {
                self.introspection_cache_bytes = n as usize
            }
            ("introspectJwts", Bool(b)) => self.introspect_jwts = b,
            ("refreshSecret", Secret(s)) => self.refresh_secret = Some(s),
            ("issuer", List(l)) => self.issuers = l,
            ("audience", List(l)) => self.audiences = l,
            ("clockToleranceSec", Number(n)) => self.clock_tolerance_sec = n,
            ("rateLimitMax", Number(n)) => self.rate_limit_max = n as u32,
            ("rateLimitRefillPerSec", Number(n)) => self.rate_limit_refill = n,
            ("rateLimitMaxKeys", Number(n)) => self.rate_limit_max_keys = n as usize,
            ("rateLimitClientCredentials", Bool(b)) => self.rate_limit_client_credentials = b,
            ("enforceTenantMatch", Bool(b)) => self.enforce_tenant_match = b,
            ("baseDomain", Text(d)) => self.base_domain = Some(d),
            ("accessTtlSec", Number(n)) => self.access_ttl_sec = n,
            ("refreshTtlSec", Number(n)) => self.refresh_ttl_sec = n,
            ("maxTokenBytes", Number(n)) => self.max_token_bytes = n as usize,
            ("requireTokenType", Bool(b)) => self.require_token_type = b,
            ("requireExpiration", Bool(b)) => self.require_expiration = b,
            ("requireSubject", Bool(b)) => self.require_subject = b,
            ("clockTimestamp", Number(n)) => self.clock_timestamp = Some(n),
            ("maxRevocations", Number(n)) => self.max_revocations = n as usize,
            ("certificateBoundTokens", Bool(b)) => self.certificate_bound_tokens = b,
            ("requireCertificateBoundTokens", Bool(b)) => self.require_certificate_bound_tokens = b,
            ("dpop", Bool(b)) => self.dpop = b,
            ("dpopIatWindowSec", Number(n)) => self.dpop_iat_window_sec = n,
            ("dpopMaxReplayEntries", Number(n)) => self.dpop_max_replay_entries = n as usize,
            ("dpopNonceSecret", Secret(s)) => self.dpop_nonce_secret = Some(s),
            ("dpopNonceLifetimeSec", Number(n)) => self.dpop_nonce_lifetime_sec = n,
            ("dpopAlgorithms", List(l)) => self.dpop_algorithms = l,
            ("requiredScope", List(l)) => self.required_scopes = l,
            ("requireAccessTokenProfile", Bool(b)) => self.access_token_profile = b,
            ("requiredAcr", List(l)) => self.required_acr = l,
            ("maxAuthAgeSec", Number(n)) => self.max_auth_age_sec = Some(n),
            ("issuers", Issuers(i)) => self.trusted_issuers = i,
            // Read before every other option (it steers the secrets' checks) and kept by
            // `unfilled`; the default pass must not overwrite it.
            ("allowShortSecret", Bool(_)) => {}
            _ => return Err(()),
        }
        Ok(())
    }

    /// The `accessSecret` shorthand, `None` when `keys` are configured.
    pub fn access_secret(&self) -> Option<&Secret> {
        match &self.access_keys {
            AccessKeys::Secret(s) => Some(s),
            AccessKeys::Keys(_) => None,
        }
    }
    pub fn access_keys(&self) -> &AccessKeys {
        &self.access_keys
    }
    /// How certificate-bound tokens (RFC 8705 §3) are checked.
    pub fn certificate_binding(&self) -> crate::cert_binding::CertificateBinding {
        use crate::cert_binding::CertificateBinding;
        if self.require_certificate_bound_tokens {
            CertificateBinding::Required
        } else if self.certificate_bound_tokens {
            CertificateBinding::Checked
        } else {
            CertificateBinding::Off
        }
    }
    /// `certificateBoundTokens` as given.
    #[cfg(test)]
    pub fn certificate_bound_tokens(&self) -> bool {
        self.certificate_bound_tokens
    }
    /// `requireCertificateBoundTokens` as given.
    #[cfg(test)]
    pub fn require_certificate_bound_tokens(&self) -> bool {
        self.require_certificate_bound_tokens
    }
    /// The `signingKey`, if configured.
    pub fn signing_key(&self) -> Option<&Arc<SigningKey>> {
        self.signing_key.as_ref()
    }
    /// Whether HMAC secrets shorter than their hash are accepted (also by `setKeys`).
    pub fn allow_short_secret(&self) -> bool {
        self.allow_short_secret
    }
    /// The configured cache size, or `None` for the default.
    pub fn verified_token_cache_size(&self) -> Option<usize> {
        self.verified_token_cache_size
    }
    /// `(entries, bytes)` of the introspection cache; 0 entries: off.
    pub fn introspection_cache(&self) -> (usize, usize) {
        (
            self.introspection_cache_entries,
            self.introspection_cache_bytes,
        )
    }
    /// `introspectJwts`: every token is looked up in the introspection cache.
    pub fn introspect_jwts(&self) -> bool {
        self.introspect_jwts
    }
    pub fn refresh_secret(&self) -> Option<&Secret> {
        self.refresh_secret.as_ref()
    }
    pub fn issuers(&self) -> &[String] {
        &self.issuers
    }
    /// The trusted-issuer registry (`issuers`); empty when not configured.
    pub fn trusted_issuers(&self) -> &[crate::issuers::IssuerSpec] {
        &self.trusted_issuers
    }
    pub fn audiences(&self) -> &[String] {
        &self.audiences
    }
    pub fn clock_tolerance_sec(&self) -> f64 {
        self.clock_tolerance_sec
    }
    /// Bucket capacity; 0 when rate limiting is off.
    pub fn rate_limit_max(&self) -> u32 {
        self.rate_limit_max
    }
    pub fn rate_limit_refill(&self) -> f64 {
        self.rate_limit_refill
    }
    pub fn rate_limit_max_keys(&self) -> usize {
        self.rate_limit_max_keys
    }
    pub fn rate_limit_client_credentials(&self) -> bool {
        self.rate_limit_client_credentials
    }
    #[cfg(test)]
    pub fn enforce_tenant_match(&self) -> bool {
        self.enforce_tenant_match
    }
    #[cfg(test)]
    pub fn base_domain(&self) -> Option<&str> {
        self.base_domain.as_deref()
    }
    pub fn ttl_sec(&self, kind: TokenKind) -> f64 {
        match kind {
            TokenKind::Access => self.access_ttl_sec,
            TokenKind::Refresh => self.refresh_ttl_sec,
        }
    }
    pub fn max_token_bytes(&self) -> usize {
        self.max_token_bytes
    }
    #[cfg(test)]
    pub fn require_token_type(&self) -> bool {
        self.require_token_type
    }
    #[cfg(test)]
    pub fn require_expiration(&self) -> bool {
        self.require_expiration
    }
    #[cfg(test)]
    pub fn require_subject(&self) -> bool {
        self.require_subject
    }
    /// `requiredScope`: empty when scopes are not checked.
    pub fn required_scopes(&self) -> &[String] {
        &self.required_scopes
    }
    /// `requiredAcr`: empty when not checked.
    pub fn required_acr(&self) -> &[String] {
        &self.required_acr
    }
    /// `maxAuthAgeSec`: `None` when not checked.
    pub fn max_auth_age_sec(&self) -> Option<f64> {
        self.max_auth_age_sec
    }
    /// `requireAccessTokenProfile` (RFC 9068).
    pub fn access_token_profile(&self) -> bool {
        self.access_token_profile
    }
    pub fn max_revocations(&self) -> usize {
        self.max_revocations
    }
    /// Whether `Authorization: DPoP` is accepted (`dpop`).
    pub fn dpop(&self) -> bool {
        self.dpop
    }
    /// Seconds a DPoP proof's `iat` may be from now, either side (`dpopIatWindowSec`).
    pub fn dpop_iat_window_sec(&self) -> f64 {
        self.dpop_iat_window_sec
    }
    /// Most proof `jti`s the replay cache holds (`dpopMaxReplayEntries`).
    pub fn dpop_max_replay_entries(&self) -> usize {
        self.dpop_max_replay_entries
    }
    /// The DPoP nonce secret (`dpopNonceSecret`), `None` when nonces are off.
    pub fn dpop_nonce_secret(&self) -> Option<&Secret> {
        self.dpop_nonce_secret.as_ref()
    }
    /// `dpopAlgorithms`: empty for the default list (src/dpop.rs `DEFAULT_ALGS`).
    pub fn dpop_algorithms(&self) -> &[String] {
        &self.dpop_algorithms
    }
    /// Seconds one DPoP nonce is current (`dpopNonceLifetimeSec`).
    pub fn dpop_nonce_lifetime_sec(&self) -> f64 {
        self.dpop_nonce_lifetime_sec
    }

    pub fn clock_timestamp(&self) -> Option<f64> {
        self.clock_timestamp
    }

    pub fn claim_rules(&self, kind: TokenKind) -> ClaimRules {
        let profile = self.access_token_profile && kind == TokenKind::Access;
        ClaimRules {
            issuers: self.issuers.clone(),
            audiences: self.audiences.clone(),
            clock_tolerance_sec: self.clock_tolerance_sec,
            // RFC 9068 §2.2: exp and sub are required claims of the profile.
            require_expiration: self.require_expiration || profile,
            require_subject: self.require_subject || profile,
            // A refresh token must always say it is one.
            require_token_type: self.require_token_type || kind == TokenKind::Refresh,
            expected_type: kind,
            // Scopes are granted to access tokens; a refresh token is never checked for them.
            required_scopes: match kind {
                TokenKind::Access => self.required_scopes.clone(),
                TokenKind::Refresh => Vec::new(),
            },
            access_token_profile: profile,
            required_acr: match kind {
                TokenKind::Access => self.required_acr.clone(),
                TokenKind::Refresh => Vec::new(),
            },
            max_auth_age_sec: self.max_auth_age_sec.filter(|_| kind == TokenKind::Access),
        }
    }

    /// What an issued token of `kind` carries from the config.
    pub fn issue_rules(&self, kind: TokenKind) -> IssueRules<'_> {
        IssueRules {
            ttl_sec: self.ttl_sec(kind),
            issuer: self.issuers.first().map(String::as_str),
            audience: self.audiences.first().map(String::as_str),
            max_token_bytes: self.max_token_bytes,
        }
    }

    pub fn tenant_rules(&self) -> TenantRules {
        TenantRules {
            base_domain: self.base_domain.clone(),
            enforce_match: self.enforce_tenant_match,
        }
    }

    /// A digest of every setting, so equal configurations share one authenticator.
    pub fn fingerprint(&self) -> [u8; 32] {
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        let mut field = |bytes: &[u8]| {
            ctx.update(&(bytes.len() as u64).to_le_bytes());
            ctx.update(bytes);
        };
        match &self.access_keys {
            AccessKeys::Secret(s) => field(s.expose()),
            AccessKeys::Keys(keys) => {
                field(b"\xff-keys");
                field(&(keys.len() as u64).to_le_bytes());
                for k in keys {
                    field(k.kid.as_deref().unwrap_or("\u{0}").as_bytes());
                    field(k.alg.name().as_bytes());
                    field(k.key.expose());
                }
            }
        }
        match &self.signing_key {
            Some(k) => {
                field(k.kid().as_bytes());
                field(k.alg().name().as_bytes());
                field(k.public_key());
            }
            None => field(b"\xff-no-signing-key"),
        }
        field(
            self.refresh_secret
                .as_ref()
                .map_or(b"\xff-none", Secret::expose),
        );
        field(
            self.dpop_nonce_secret
                .as_ref()
                .map_or(b"\xff-none", Secret::expose),
        );
        for list in [
            &self.issuers,
            &self.audiences,
            &self.required_scopes,
            &self.required_acr,
            &self.dpop_algorithms,
        ] {
            field(&(list.len() as u64).to_le_bytes());
            list.iter().for_each(|s| field(s.as_bytes()));
        }
        // Every part of each trusted issuer: a shared authenticator must never hand one
        // registry's keys to a config that names other ones.
        field(&(self.trusted_issuers.len() as u64).to_le_bytes());
        for i in &self.trusted_issuers {
            field(i.issuer.as_bytes());
            let keys = i.keys.as_deref().unwrap_or_default();
            field(&(keys.len() as u64).to_le_bytes());
            for k in keys {
                field(k.kid.as_deref().unwrap_or("\u{0}").as_bytes());
                field(k.alg.name().as_bytes());
                field(k.key.expose());
            }
            let audiences = i.audiences.as_deref();
            field(&(audiences.map_or(u64::MAX, |a| a.len() as u64)).to_le_bytes());
            audiences
                .unwrap_or_default()
                .iter()
                .for_each(|a| field(a.as_bytes()));
            field(&(i.algorithms.len() as u64).to_le_bytes());
            i.algorithms.iter().for_each(|a| field(a.name().as_bytes()));
            field(i.tenant.as_deref().unwrap_or("\u{0}").as_bytes());
        }
        field(self.base_domain.as_deref().unwrap_or("\u{0}").as_bytes());
        for n in [
            self.clock_tolerance_sec,
            self.rate_limit_max as f64,
            self.rate_limit_refill,
            self.rate_limit_max_keys as f64,
            self.access_ttl_sec,
            self.refresh_ttl_sec,
            self.max_token_bytes as f64,
            self.clock_timestamp.unwrap_or(f64::NAN),
            self.max_revocations as f64,
            self.dpop_iat_window_sec,
            self.dpop_max_replay_entries as f64,
            self.dpop_nonce_lifetime_sec,
            self.max_auth_age_sec.unwrap_or(f64::NAN),
            self.verified_token_cache_size
                .map_or(f64::NAN, |n| n as f64),
            self.introspection_cache_entries as f64,
            self.introspection_cache_bytes as f64,
        ] {
            field(&n.to_bits().to_le_bytes());
        }
        field(&[
            self.enforce_tenant_match as u8,
            self.rate_limit_client_credentials as u8,
            self.require_token_type as u8,
            self.require_expiration as u8,
            self.require_subject as u8,
            self.allow_short_secret as u8,
            self.certificate_bound_tokens as u8,
            self.require_certificate_bound_tokens as u8,
            self.dpop as u8,
            self.access_token_profile as u8,
            self.introspect_jwts as u8,
        ]);
        let mut out = [0u8; 32];
        out.copy_from_slice(ctx.finish().as_ref());
        out
    }
}
