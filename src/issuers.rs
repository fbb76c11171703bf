//! The trusted-issuer registry (`issuers`, docs/resource-server.md): several authorization
//! servers, each with its own key set, audiences, algorithms and tenant. The token's `iss`
//! selects the issuer before any key is looked up, then that issuer's own set by `kid`: a key of
//! issuer A never verifies a token claiming issuer B, whatever its `kid`. An `iss` that is not
//! configured (or absent, or not a string) is `untrusted_issuer`. Issuer identifiers compare
//! byte for byte (OpenID Connect Discovery §4.3, RFC 8414 §3.3): no trailing-slash or case
//! folding.
//!
//! Bounds: at most [`MAX_ISSUERS`] issuers, each identifier at most [`MAX_ISSUER_BYTES`] bytes,
//! each key set at most `MAX_KEYS` keys (src/jwt/key_set.rs). Nothing here grows per request:
//! the lookup is a linear scan of at most 50 byte strings, prepared at construction.

use std::sync::Arc;

use crate::call_error::ArgError;
use crate::error::AuthError;
use crate::jwt::claims::Claims;
use crate::jwt::header::Header;
use crate::jwt::key_set::read_keys;
use crate::jwt::verify::{KeyLookup, Selected};
use crate::jwt::{Alg, ClaimRules, KeySet, KeySpec};
use crate::raw_value::RawValue;
use crate::tenant::is_valid_tenant_id;

/// Most issuers one authenticator trusts.
pub const MAX_ISSUERS: usize = 50;
/// Longest issuer identifier accepted.
pub const MAX_ISSUER_BYTES: usize = 2048;
/// Most audiences one issuer may list.
pub const MAX_ISSUER_AUDIENCES: usize = 100;
/// The members an issuer object may have.
pub const ISSUER_FIELDS: [&str; 5] = ["issuer", "keys", "audience", "algorithms", "tenant"];

/// One configured issuer, validated.
#[derive(Debug, Clone)]
pub struct IssuerSpec {
    pub issuer: String,
    /// Its key set at construction (`None`: empty until `setKeys(keys, { issuer })`).
    pub keys: Option<Vec<KeySpec>>,
    /// Its own accepted audiences, in place of the config's `audience` (`None`: the config's).
    pub audiences: Option<Vec<String>>,
    /// The algorithms its tokens may use (empty: any its keys are bound to).
    pub algorithms: Vec<Alg>,
    /// The tenant its tokens belong to (`tenantSource: 'issuer'`).
    pub tenant: Option<String>,
}

/// One issuer as the request path uses it.
pub struct Issuer {
    name: Box<str>,
    algorithms: Vec<Alg>,
    tenant: Option<Box<str>>,
    /// The access-token claim rules with this issuer's audiences.
    rules: ClaimRules,
}

impl Issuer {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn tenant(&self) -> Option<&str> {
        self.tenant.as_deref()
    }
}

/// The issuers and their key sets at one moment; replaced whole when one issuer's set changes.
pub struct IssuerKeys {
    issuers: Arc<[Issuer]>,
    sets: Vec<Arc<KeySet>>,
    generation: u64,
    all_hmac: bool,
}

impl IssuerKeys {
    /// The registry of `specs` with their construction key sets, under `rules` (the config's
    /// access-token rules; an issuer's `audience` replaces the config's).
    pub fn new(specs: &[IssuerSpec], rules: &ClaimRules) -> IssuerKeys {
        let issuers: Arc<[Issuer]> = specs
            .iter()
            .map(|s| {
                let mut rules = rules.clone();
                if let Some(audiences) = &s.audiences {
                    rules.audiences.clone_from(audiences);
                }
                // The issuer was selected by its own `iss`: no list to check it against again.
                rules.issuers.clear();
                Issuer {
                    name: s.issuer.as_str().into(),
                    algorithms: s.algorithms.clone(),
                    tenant: s.tenant.as_deref().map(Into::into),
                    rules,
                }
            })
            .collect();
        let sets = specs
            .iter()
            .map(|s| Arc::new(KeySet::new(s.keys.as_deref().unwrap_or_default(), 0)))
            .collect();
        IssuerKeys::with_sets(issuers, sets, 0)
    }

    fn with_sets(issuers: Arc<[Issuer]>, sets: Vec<Arc<KeySet>>, generation: u64) -> IssuerKeys {
        let all_hmac = sets.iter().all(|s| s.all_hmac());
        IssuerKeys {
            issuers,
            sets,
            generation,
            all_hmac,
        }
    }

    /// The index of the issuer named `iss`, compared byte for byte.
    pub fn position(&self, iss: &str) -> Option<usize> {
        self.issuers.iter().position(|i| *i.name == *iss)
    }

    /// The issuer a verified token's `iss` names.
    pub fn issuer_of(&self, claims: &Claims<'_>) -> Option<&Issuer> {
        let iss = claims.iss.as_str()?;
        self.position(iss).map(|i| &self.issuers[i])
    }

    /// This registry with the key set of the issuer named `iss` replaced by `specs`, under the
    /// next generation; `None` when no issuer has that name.
    pub fn replaced(&self, iss: &str, specs: &[KeySpec]) -> Option<IssuerKeys> {
        let at = self.position(iss)?;
        let generation = self.generation + 1;
        let mut sets = self.sets.clone();
        sets[at] = Arc::new(KeySet::new(specs, generation));
        Some(IssuerKeys::with_sets(
            Arc::clone(&self.issuers),
            sets,
            generation,
        ))
    }

    /// The issuers, in configuration order.
    pub fn issuers(&self) -> Arc<[Issuer]> {
        Arc::clone(&self.issuers)
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }
}

impl KeyLookup for IssuerKeys {
    /// `iss` first (untrusted: refused before any key is looked up), then the issuer's
    /// algorithms, then its own set by `kid`.
    fn select(
        &self,
        header: Option<&Header<'_>>,
        claims: &Claims<'_>,
    ) -> Result<Selected<'_>, AuthError> {
        let at = claims
            .iss
            .as_str()
            .and_then(|iss| self.position(iss))
            .ok_or(AuthError::UntrustedIssuer)?;
        let issuer = &self.issuers[at];
        // The standard header is HS256's.
        let alg = header.map_or(Alg::Hs256, |h| h.alg);
        if !issuer.algorithms.is_empty() && !issuer.algorithms.contains(&alg) {
            return Err(AuthError::UnsupportedAlgorithm);
        }
        KeyLookup::select(&*self.sets[at], header, claims)
    }

    fn rules<'r>(
        &'r self,
        claims: &Claims<'_>,
        _default: &'r ClaimRules,
    ) -> Result<&'r ClaimRules, AuthError> {
        self.issuer_of(claims)
            .map(|i| &i.rules)
            .ok_or(AuthError::UntrustedIssuer)
    }

    fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether every key of every issuer is an HMAC key (the cache's default, as for one set).
    fn all_hmac(&self) -> bool {
        self.all_hmac
    }
}

/// Reads and checks the `issuers` option (an array of objects, as the binding read them).
pub fn read_issuers(items: Vec<RawValue>, allow_short: bool) -> Result<Vec<IssuerSpec>, ArgError> {
    if items.is_empty() || items.len() > MAX_ISSUERS {
        return Err(ArgError::Range(format!(
            "config.issuers must hold 1 to {MAX_ISSUERS} issuers (got {})",
            items.len()
        )));
    }
    let mut out: Vec<IssuerSpec> = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let label = format!("config.issuers[{i}]");
        let RawValue::Fields(fields) = item else {
            return Err(ArgError::Type(format!(
                "{label} must be an object {{ issuer, keys?, audience?, algorithms?, tenant? }}"
            )));
        };
        let mut spec = IssuerSpec {
            issuer: String::new(),
            keys: None,
            audiences: None,
            algorithms: Vec::new(),
            tenant: None,
        };
        let mut named = false;
        for (field, value) in fields {
            match (field, value) {
                // An unknown member: the binding hands its name over.
                ("unknown", RawValue::Text(name)) => {
                    return Err(ArgError::Type(format!(
                        "{label}.{name} is not a known field (issuer, keys, audience, algorithms, tenant)"
                    )))
                }
                (_, RawValue::Absent) => {}
                ("issuer", RawValue::Text(s)) => {
                    if s.is_empty() || s.len() > MAX_ISSUER_BYTES {
                        return Err(ArgError::Range(format!(
                            "{label}.issuer must be 1 to {MAX_ISSUER_BYTES} bytes"
                        )));
                    }
                    if out.iter().any(|o| o.issuer == s) {
                        return Err(ArgError::Range(format!(
                            "{label}.issuer {s:?} is listed twice"
                        )));
                    }
                    spec.issuer = s;
                    named = true;
                }
                ("keys", RawValue::List(keys)) => {
                    spec.keys = Some(read_keys(keys, &format!("{label}.keys"), allow_short)?)
                }
                ("audience", value) => {
                    let list = text_list(value, &label, "audience")?;
                    if list.len() > MAX_ISSUER_AUDIENCES {
                        return Err(ArgError::Range(format!(
                            "{label}.audience holds at most {MAX_ISSUER_AUDIENCES} audiences"
                        )));
                    }
                    spec.audiences = Some(list);
                }
                ("algorithms", value) => {
                    for name in text_list(value, &label, "algorithms")? {
                        let alg = Alg::from_name(&name).ok_or_else(|| {
                            ArgError::Range(format!(
                                "{label}.algorithms: unsupported algorithm {name:?}"
                            ))
                        })?;
                        if !spec.algorithms.contains(&alg) {
                            spec.algorithms.push(alg);
                        }
                    }
                }
                ("tenant", RawValue::Text(t)) => {
                    if !is_valid_tenant_id(t.as_bytes()) {
                        return Err(ArgError::Range(format!(
                            "{label}.tenant must be 1 to 63 of [A-Za-z0-9_-], starting with a letter or digit"
                        )));
                    }
                    spec.tenant = Some(t);
                }
                (field, _) => {
                    let kind = match field {
                        "keys" => "an array of keys",
                        _ => "a string",
                    };
                    return Err(ArgError::Type(format!("{label}.{field} must be {kind}")));
                }
            }
        }
        if !named {
            return Err(ArgError::Type(format!(
                "{label}.issuer is required (a string)"
            )));
        }
        out.push(spec);
    }
    Ok(out)
}

/// A string or a non-empty array of non-empty strings.
fn text_list(value: RawValue, label: &str, field: &str) -> Result<Vec<String>, ArgError> {
    let wrong = || {
        ArgError::Type(format!(
            "{label}.{field} must be a string or an array of strings"
        ))
    };
    let list = match value {
        RawValue::Text(s) => vec![s],
        RawValue::List(items) => items
            .into_iter()
            .map(|v| match v {
                RawValue::Text(s) => Ok(s),
                _ => Err(wrong()),
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(wrong()),
    };
    if list.is_empty() || list.iter().any(String::is_empty) {
        return Err(ArgError::Range(format!(
            "{label}.{field} must not be empty"
        )));
    }
    Ok(list)
}

#[cfg(test)]
mod tests;
