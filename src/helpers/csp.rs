//! Content-Security-Policy values: strict defaults, validated sources, quoted keywords.
//!
//! A source that contains `;` or `,` would start a new directive or a new policy, and
//! whitespace or quotes would smuggle extra sources: all are refused (header injection).

use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};

use crate::call_error::{CallError, CallResult, ErrorClass};

const KEYWORDS: &[&str] = &[
    "self",
    "none",
    "unsafe-inline",
    "unsafe-eval",
    "strict-dynamic",
    "unsafe-hashes",
    "report-sample",
    "wasm-unsafe-eval",
    "inline-speculation-rules",
];
const MAX_SOURCE_LEN: usize = 2048;
pub const MAX_SOURCES: usize = 64;

fn bad(what: &str, why: &str) -> CallError {
    CallError::new(ErrorClass::Type, "ERR_INVALID_CSP", format!("{what} {why}"))
}

fn is_base64(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_'))
}

/// Turns `self` / `'self'` into `'self'`, checks nonce/hash sources, and checks host/scheme
/// sources for characters that could break out of the directive.
pub fn normalize_source(src: &str) -> CallResult<String> {
    let what = format!("CSP source {src:?}");
    if src.is_empty() || src.len() > MAX_SOURCE_LEN {
        return Err(bad(
            &what,
            &format!("must be 1 to {MAX_SOURCE_LEN} characters"),
        ));
    }
    if src.bytes().any(|b| {
        b.is_ascii_whitespace() || b.is_ascii_control() || !b.is_ascii() || b == b';' || b == b','
    }) {
        return Err(bad(
            &what,
            "must not contain whitespace, ';', ',', control or non-ASCII characters",
        ));
    }
    let quoted = src.len() >= 2 && src.starts_with('\'') && src.ends_with('\'');
    let bare = if quoted { &src[1..src.len() - 1] } else { src };
    if bare.contains(['\'', '"']) {
        return Err(bad(&what, "has a stray quote"));
    }
    let lower = bare.to_ascii_lowercase();
    if KEYWORDS.contains(&lower.as_str()) {
        return Ok(format!("'{lower}'"));
    }
    for kind in ["nonce-", "sha256-", "sha384-", "sha512-"] {
        if let Some(value) = lower.strip_prefix(kind) {
            if !is_base64(value) {
                return Err(bad(&what, "must carry a base64 value"));
            }
            return Ok(format!("'{kind}{}'", &bare[kind.len()..]));
        }
    }
    if quoted {
        return Err(bad(&what, "is not a known CSP keyword"));
    }
    Ok(src.to_string())
}

/// Directive names: lowercase letters and '-'.
pub fn check_directive_name(name: &str) -> CallResult<()> {
    if name.is_empty()
        || name.len() > 64
        || !name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
    {
        return Err(bad(
            &format!("directive name {name:?}"),
            "must be lowercase letters and '-'",
        ));
    }
    Ok(())
}

/// An ordered policy; setting a directive again replaces its sources.
#[derive(Debug, Clone)]
pub struct Policy {
    directives: Vec<(String, Vec<String>)>,
    pub report_only: bool,
}

impl Default for Policy {
    fn default() -> Self {
        let d = |n: &str, s: &str| (n.to_string(), vec![s.to_string()]);
        Self {
            directives: vec![
                d("default-src", "'self'"),
                d("object-src", "'none'"),
                d("base-uri", "'self'"),
                d("frame-ancestors", "'none'"),
            ],
            report_only: false,
        }
    }
}

impl Policy {
    fn slot(&mut self, name: &str) -> &mut Vec<String> {
        if let Some(i) = self.directives.iter().position(|(n, _)| n == name) {
            return &mut self.directives[i].1;
        }
        self.directives.push((name.to_string(), Vec::new()));
        &mut self.directives.last_mut().expect("just pushed").1
    }

    fn get(&self, name: &str) -> Option<&Vec<String>> {
        self.directives
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }

    /// Replaces a fetch/navigation directive's sources.
    pub fn set(&mut self, name: &str, sources: &[String]) -> CallResult<()> {
        check_directive_name(name)?;
        if sources.is_empty() || sources.len() > MAX_SOURCES {
            return Err(bad(
                name,
                &format!("needs 1 to {MAX_SOURCES} sources (use 'none' to allow nothing)"),
            ));
        }
        let normalized = sources
            .iter()
            .map(|s| normalize_source(s))
            .collect::<CallResult<Vec<_>>>()?;
        if normalized.len() > 1 && normalized.iter().any(|s| s == "'none'") {
            return Err(bad(name, "cannot combine 'none' with other sources"));
        }
        *self.slot(name) = normalized;
        Ok(())
    }

    /// Sets a directive that takes a single already-validated token, or none (flags).
    pub fn set_raw(&mut self, name: &str, value: Option<String>) {
        *self.slot(name) = value.into_iter().collect();
    }

    /// Adds a source to `name`, seeding it from default-src so adding a nonce or hash never
    /// silently drops 'self'.
    pub fn add(&mut self, name: &str, source: String) -> CallResult<()> {
        check_directive_name(name)?;
        if self.get(name).is_none() {
            let seed: Vec<String> = self
                .get("default-src")
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|s| s != "'none'")
                .collect();
            *self.slot(name) = seed;
        }
        let list = self.slot(name);
        list.retain(|s| s != "'none'");
        if list.len() >= MAX_SOURCES * 4 {
            return Err(bad(name, "has too many sources"));
        }
        list.push(source);
        Ok(())
    }

    /// A fresh 128-bit nonce (standard base64), added to `directive` as `'nonce-…'`.
    pub fn nonce(&mut self, directive: &str) -> CallResult<String> {
        let mut bytes = [0u8; 16];
        SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| CallError::random_failed())?;
        let nonce = base64::engine::general_purpose::STANDARD.encode(bytes);
        self.add(directive, format!("'nonce-{nonce}'"))?;
        Ok(nonce)
    }

    /// Adds a hash source `'<alg>-<digest>'` to `directive`; `alg` is sha256, sha384 or sha512
    /// (any case).
    pub fn add_hash(&mut self, directive: &str, alg: &str, digest_base64: &str) -> CallResult<()> {
        let alg = alg.to_ascii_lowercase();
        if !matches!(alg.as_str(), "sha256" | "sha384" | "sha512") {
            return Err(CallError::arg_value(
                "algorithm",
                "must be 'sha256', 'sha384' or 'sha512'",
            ));
        }
        let source = normalize_source(&format!("'{alg}-{digest_base64}'"))?;
        self.add(directive, source)
    }

    /// Sets `report-uri` to a URL (a keyword is refused).
    pub fn set_report_uri(&mut self, uri: &str) -> CallResult<()> {
        let uri = normalize_source(uri)?;
        if uri.starts_with('\'') {
            return Err(CallError::arg_value("uri", "must be a URL"));
        }
        self.set_raw("report-uri", Some(uri));
        Ok(())
    }

    /// Sets `report-to` to a Reporting-Endpoints group name ([A-Za-z0-9_-]).
    pub fn set_report_to(&mut self, group: &str) -> CallResult<()> {
        if group.is_empty()
            || !group
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(CallError::arg_value(
                "group",
                "must be letters, digits, '-' or '_'",
            ));
        }
        self.set_raw("report-to", Some(group.to_string()));
        Ok(())
    }

    pub fn header_name(&self) -> &'static str {
        if self.report_only {
            "Content-Security-Policy-Report-Only"
        } else {
            "Content-Security-Policy"
        }
    }

    pub fn build(&self) -> String {
        self.directives
            .iter()
            .map(|(n, s)| {
                if s.is_empty() {
                    n.clone()
                } else {
                    format!("{n} {}", s.join(" "))
                }
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn strict_defaults() {
        assert_eq!(
            Policy::default().build(),
            "default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'"
        );
    }

    #[test]
    fn quotes_keywords_and_keeps_hosts() {
        let mut p = Policy::default();
        p.set(
            "script-src",
            &v(&[
                "self",
                "'strict-dynamic'",
                "https://cdn.example.com",
                "*.example.org",
            ]),
        )
        .unwrap();
        assert!(p
            .build()
            .contains("script-src 'self' 'strict-dynamic' https://cdn.example.com *.example.org"));
    }

    #[test]
    fn refuses_injection() {
        let mut p = Policy::default();
        for evil in [
            "https://a.com; script-src *",
            "a.com,b.com",
            "a.com b.com",
            "'self",
            "x'y",
            "a\nb",
            "\"a\"",
            "'unsafe-everything'",
            "",
            "caf\u{e9}.com",
        ] {
            assert_eq!(
                p.set("img-src", &v(&[evil])).unwrap_err().code,
                "ERR_INVALID_CSP",
                "{evil:?}"
            );
        }
        assert!(p.set("img-src", &v(&["none", "self"])).is_err());
        assert!(p.set("img src", &v(&["self"])).is_err());
    }

    #[test]
    fn nonce_seeds_from_default_src() {
        let mut p = Policy::default();
        let n = p.nonce("script-src").unwrap();
        assert_eq!(n.len(), 24);
        assert!(p
            .build()
            .ends_with(&format!("script-src 'self' 'nonce-{n}'")));
        p.report_only = true;
        assert_eq!(p.header_name(), "Content-Security-Policy-Report-Only");
    }
}
