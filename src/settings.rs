//! Validated authenticator settings: every option checked once, at construction.

use crate::jwt::ClaimRules;
use crate::tenant::TenantRules;

/// RFC 7518 §3.2: an HS256 key must be at least as long as the hash output.
pub const MIN_SECRET_BYTES: usize = 32;
/// Upper bound for `maxTokenBytes`, so one request can never make us decode megabytes.
pub const MAX_TOKEN_BYTES_CAP: usize = 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Settings {
    pub access_secret: Vec<u8>,
    pub refresh_secret: Option<Vec<u8>>,
    pub issuers: Vec<String>,
    pub audiences: Vec<String>,
    pub clock_tolerance_sec: f64,
    /// Bucket capacity; 0 turns rate limiting off.
    pub rate_limit_max: u32,
    pub rate_limit_refill: f64,
    pub rate_limit_max_keys: usize,
    pub enforce_tenant_match: bool,
    pub base_domain: Option<String>,
    pub access_ttl_sec: f64,
    pub refresh_ttl_sec: f64,
    pub max_token_bytes: usize,
    pub require_token_type: bool,
    pub require_expiration: bool,
    pub require_subject: bool,
    /// A fixed "now" in seconds since the epoch (tests, replays); `None` reads the system clock.
    pub clock_timestamp: Option<f64>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            access_secret: Vec::new(),
            refresh_secret: None,
            issuers: Vec::new(),
            audiences: Vec::new(),
            clock_tolerance_sec: 0.0,
            rate_limit_max: 100,
            rate_limit_refill: 10.0,
            rate_limit_max_keys: 100_000,
            enforce_tenant_match: false,
            base_domain: None,
            access_ttl_sec: 900.0,
            refresh_ttl_sec: 604_800.0,
            max_token_bytes: 8192,
            require_token_type: false,
            require_expiration: true,
            require_subject: true,
            clock_timestamp: None,
        }
    }
}

impl Settings {
    pub fn claim_rules(&self, expected_type: &'static str) -> ClaimRules {
        ClaimRules {
            issuers: self.issuers.clone(),
            audiences: self.audiences.clone(),
            clock_tolerance_sec: self.clock_tolerance_sec,
            require_expiration: self.require_expiration,
            require_subject: self.require_subject,
            // A refresh token must always say it is one.
            require_token_type: self.require_token_type || expected_type == "refresh",
            expected_type,
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
        field(&self.access_secret);
        field(self.refresh_secret.as_deref().unwrap_or(b"\xff-none"));
        for list in [&self.issuers, &self.audiences] {
            field(&(list.len() as u64).to_le_bytes());
            list.iter().for_each(|s| field(s.as_bytes()));
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
        ] {
            field(&n.to_bits().to_le_bytes());
        }
        field(&[
            self.enforce_tenant_match as u8,
            self.require_token_type as u8,
            self.require_expiration as u8,
            self.require_subject as u8,
        ]);
        let mut out = [0u8; 32];
        out.copy_from_slice(ctx.finish().as_ref());
        out
    }
}
