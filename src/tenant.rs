//! Tenant resolution: JWT `tenant_id` claim > `X-Tenant-ID` header > subdomain of `Host`.

use crate::call_error::ArgError;
use crate::contract::messages;
use crate::error::AuthError;

/// Longest tenant id accepted (a DNS label's limit, so a subdomain can always hold it).
pub const MAX_TENANT_LEN: usize = 63;

/// Tenant ids end up in log lines, cache keys and SQL: only `[A-Za-z0-9_-]`, starting with a
/// letter or digit, 1 to 63 characters. This keeps out separators (`:`), newlines and
/// anything else meant for injection.
pub fn is_valid_tenant_id(id: &[u8]) -> bool {
    !id.is_empty()
        && id.len() <= MAX_TENANT_LEN
        && id[0].is_ascii_alphanumeric()
        && id
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// How tenants are resolved, fixed at construction.
#[derive(Debug, Clone, Default)]
pub struct TenantRules {
    /// Lower-cased base domain (e.g. `example.com`): only its direct subdomains name tenants.
    pub base_domain: Option<String>,
    /// Refuse a token whose tenant differs from the requested (header or subdomain) tenant.
    pub enforce_match: bool,
}

/// Which source named the request's tenant.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum TenantSource {
    None,
    Claim,
    Header,
    /// From the Host header, lower-cased into a buffer.
    Host(HostLabel),
}

/// A lower-cased DNS label of at most 63 bytes, kept on the stack.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct HostLabel {
    len: u8,
    buf: [u8; MAX_TENANT_LEN],
}

impl HostLabel {
    fn new(label: &[u8]) -> Option<HostLabel> {
        if label.len() > MAX_TENANT_LEN {
            return None;
        }
        let mut buf = [0u8; MAX_TENANT_LEN];
        for (dst, src) in buf.iter_mut().zip(label) {
            *dst = src.to_ascii_lowercase();
        }
        Some(HostLabel {
            len: label.len() as u8,
            buf,
        })
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
}

impl TenantRules {
    /// Resolves the request's tenant. Sources that are not consulted are not validated; a
    /// consulted source with an unsafe id is `invalid_tenant` (400).
    pub fn resolve(
        &self,
        claim: Option<&[u8]>,
        header: Option<&[u8]>,
        host: Option<&[u8]>,
    ) -> Result<TenantSource, AuthError> {
        let claim = claim.filter(|c| !c.is_empty());
        if let Some(claim) = claim {
            if !is_valid_tenant_id(claim) {
                return Err(AuthError::InvalidTenant);
            }
            if !self.enforce_match {
                return Ok(TenantSource::Claim);
            }
        }
        let requested = self.requested_tenant(header, host)?;
        let requested_id = match requested {
            TenantSource::Header => header.unwrap_or_default(),
            TenantSource::Host(ref label) => label.as_bytes(),
            _ => b"",
        };
        match claim {
            Some(claim) => {
                if requested != TenantSource::None && !claim.eq_ignore_ascii_case(requested_id) {
                    return Err(AuthError::TenantMismatch);
                }
                Ok(TenantSource::Claim)
            }
            None => Ok(requested),
        }
    }

    /// The tenant the client asked for: the header if present, else the Host subdomain. This is
    /// the whole resolution for a request without a token (login, register: `resolveTenant`).
    pub fn requested_tenant(
        &self,
        header: Option<&[u8]>,
        host: Option<&[u8]>,
    ) -> Result<TenantSource, AuthError> {
        if let Some(header) = header.filter(|h| !h.is_empty()) {
            return if is_valid_tenant_id(header) {
                Ok(TenantSource::Header)
            } else {
                Err(AuthError::InvalidTenant)
            };
        }
        match host.and_then(|h| self.subdomain_of(h)) {
            None => Ok(TenantSource::None),
            Some(label) if is_valid_tenant_id(label) => {
                Ok(HostLabel::new(label).map_or(TenantSource::None, TenantSource::Host))
            }
            Some(_) => Err(AuthError::InvalidTenant),
        }
    }

    /// The tenant label of a Host header value, if it names one.
    ///
    /// Port stripped, trailing dot ignored, compared case-insensitively. IP literals,
    /// `localhost`, single-label hosts and `www` name no tenant. With a base domain only its
    /// direct subdomains count; without one, the first label of a host with three or more labels.
    pub fn subdomain_of<'h>(&self, host: &'h [u8]) -> Option<&'h [u8]> {
        if host.first() == Some(&b'[') {
            return None; // IPv6 literal
        }
        let host = strip_port(host);
        let host = host.strip_suffix(b".").unwrap_or(host);
        if host.is_empty() || is_ipv4_literal(host) {
            return None;
        }
        let first_dot = host.iter().position(|&b| b == b'.')?;
        let (label, rest) = (&host[..first_dot], &host[first_dot + 1..]);
        let is_tenant_host = match &self.base_domain {
            Some(base) => rest.eq_ignore_ascii_case(base.as_bytes()),
            None => rest.contains(&b'.') && !rest.eq_ignore_ascii_case(b"localhost"),
        };
        if !is_tenant_host || label.is_empty() || label.eq_ignore_ascii_case(b"www") {
            return None;
        }
        Some(label)
    }
}

/// Strips `:port` when what follows the last colon is all digits.
fn strip_port(host: &[u8]) -> &[u8] {
    match host.iter().rposition(|&b| b == b':') {
        Some(i) if host[i + 1..].iter().all(u8::is_ascii_digit) => &host[..i],
        _ => host,
    }
}

fn is_ipv4_literal(host: &[u8]) -> bool {
    host.split(|&b| b == b'.')
        .all(|part| !part.is_empty() && part.iter().all(u8::is_ascii_digit))
}

/// Lower-cased, without trailing dots; labels of `[A-Za-z0-9-]`, 1-63 bytes (RFC 1035).
/// `label` names the value in the error (`config.baseDomain`, `options.baseDomain`).
pub fn normalize_domain(text: &str, label: &str) -> Result<String, ArgError> {
    let domain = text.trim_end_matches('.').to_ascii_lowercase();
    let valid_label = |l: &str| {
        !l.is_empty() && l.len() <= 63 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if domain.len() > 253 || !domain.split('.').all(valid_label) {
        return Err(ArgError::Range(messages::invalid_domain(label, &domain)));
    }
    Ok(domain)
}

/// Tenant rules for a request without a token (`resolveTenant`): only the base domain
/// matters. `base_domain` is checked and normalised as `config.baseDomain` is; `label` names it
/// in the error.
pub fn rules_for_base_domain(
    base_domain: Option<&str>,
    label: &str,
) -> Result<TenantRules, ArgError> {
    Ok(TenantRules {
        base_domain: base_domain
            .map(|d| normalize_domain(d, label))
            .transpose()?,
        enforce_match: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_tenant_without_a_token_follows_the_request_rules() {
        let r = rules_for_base_domain(Some("Example.COM."), "options.baseDomain").unwrap();
        assert_eq!(r.base_domain.as_deref(), Some("example.com"));
        let label = |s: TenantSource| match s {
            TenantSource::Host(l) => String::from_utf8(l.as_bytes().to_vec()).unwrap(),
            other => format!("{other:?}"),
        };
        let host = Some(&b"AcMe.example.com"[..]);
        assert_eq!(r.requested_tenant(None, host).map(label), Ok("acme".into()));
        assert_eq!(
            r.requested_tenant(Some(b"beta"), host),
            Ok(TenantSource::Header)
        );
        assert_eq!(
            r.requested_tenant(Some(b"bad:id"), host),
            Err(AuthError::InvalidTenant)
        );
        assert_eq!(
            r.requested_tenant(None, Some(b"a.b.other.com")),
            Ok(TenantSource::None)
        );
        assert!(rules_for_base_domain(Some("bad domain"), "options.baseDomain").is_err());
    }

    fn rules(base: Option<&str>, enforce: bool) -> TenantRules {
        TenantRules {
            base_domain: base.map(str::to_owned),
            enforce_match: enforce,
        }
    }

    fn resolve(
        r: &TenantRules,
        claim: Option<&str>,
        header: Option<&str>,
        host: Option<&str>,
    ) -> Result<String, AuthError> {
        r.resolve(
            claim.map(str::as_bytes),
            header.map(str::as_bytes),
            host.map(str::as_bytes),
        )
        .map(|source| match source {
            TenantSource::None => String::new(),
            TenantSource::Claim => claim.unwrap().to_owned(),
            TenantSource::Header => header.unwrap().to_owned(),
            TenantSource::Host(label) => String::from_utf8(label.as_bytes().to_vec()).unwrap(),
        })
    }

    #[test]
    fn claim_beats_header_beats_subdomain() {
        let r = rules(None, false);
        assert_eq!(
            resolve(&r, Some("c"), Some("h"), Some("s.example.com")),
            Ok("c".into())
        );
        assert_eq!(
            resolve(&r, None, Some("h"), Some("s.example.com")),
            Ok("h".into())
        );
        assert_eq!(
            resolve(&r, None, None, Some("s.example.com")),
            Ok("s".into())
        );
        assert_eq!(resolve(&r, None, None, None), Ok("".into()));
        assert_eq!(resolve(&r, Some(""), Some(""), None), Ok("".into()));
    }

    #[test]
    fn subdomains_are_case_folded_and_ports_stripped() {
        let r = rules(None, false);
        assert_eq!(
            resolve(&r, None, None, Some("ACME.Example.com:8080")),
            Ok("acme".into())
        );
        assert_eq!(
            resolve(&r, None, None, Some("acme.example.com.")),
            Ok("acme".into())
        );
    }

    #[test]
    fn hosts_without_a_tenant() {
        let r = rules(None, false);
        for host in [
            "localhost",
            "localhost:3000",
            "api.localhost",
            "example.com",
            "127.0.0.1",
            "127.0.0.1:80",
            "[::1]:3000",
            "[::1]",
            "www.example.com",
            "",
            ".",
            ".example.com",
        ] {
            assert_eq!(resolve(&r, None, None, Some(host)), Ok("".into()), "{host}");
        }
    }

    #[test]
    fn base_domain_counts_only_direct_subdomains() {
        let r = rules(Some("example.com"), false);
        assert_eq!(
            resolve(&r, None, None, Some("acme.example.com")),
            Ok("acme".into())
        );
        assert_eq!(
            resolve(&r, None, None, Some("acme.EXAMPLE.com")),
            Ok("acme".into())
        );
        assert_eq!(
            resolve(&r, None, None, Some("a.b.example.com")),
            Ok("".into())
        );
        assert_eq!(
            resolve(&r, None, None, Some("acme.other.com")),
            Ok("".into())
        );
        assert_eq!(resolve(&r, None, None, Some("example.com")), Ok("".into()));
        let r = rules(Some("localhost"), false);
        assert_eq!(
            resolve(&r, None, None, Some("acme.localhost:3000")),
            Ok("acme".into())
        );
    }

    #[test]
    fn refuses_unsafe_tenant_ids() {
        let r = rules(None, false);
        for bad in [
            "a:b",
            "a\nb",
            "-a",
            "_a",
            "a b",
            "a/b",
            "é",
            "a.b",
            &"a".repeat(64),
        ] {
            assert_eq!(
                resolve(&r, Some(bad), None, None),
                Err(AuthError::InvalidTenant),
                "{bad:?}"
            );
            assert_eq!(
                resolve(&r, None, Some(bad), None),
                Err(AuthError::InvalidTenant),
                "{bad:?}"
            );
        }
        assert_eq!(
            resolve(&r, None, None, Some("a_b%.example.com")),
            Err(AuthError::InvalidTenant)
        );
        assert!(is_valid_tenant_id("a".repeat(63).as_bytes()));
    }

    #[test]
    fn enforces_tenant_match_when_configured() {
        let r = rules(None, true);
        assert_eq!(
            resolve(&r, Some("a"), Some("b"), None),
            Err(AuthError::TenantMismatch)
        );
        assert_eq!(
            resolve(&r, Some("a"), None, Some("b.example.com")),
            Err(AuthError::TenantMismatch)
        );
        assert_eq!(
            resolve(&r, Some("Acme"), None, Some("acme.example.com")),
            Ok("Acme".into())
        );
        assert_eq!(resolve(&r, Some("a"), None, None), Ok("a".into()));
        assert_eq!(
            resolve(&r, Some("a"), Some("bad:id"), None),
            Err(AuthError::InvalidTenant)
        );
        let lax = rules(None, false);
        assert_eq!(
            resolve(&lax, Some("a"), Some("bad:id"), None),
            Ok("a".into())
        );
    }
}
