//! Verification keys, each bound to one algorithm, and the rules that pick the key for a token
//! (RFC 7515 §4.1.1 `alg`, §4.1.4 `kid`). The selection cannot be confused:
//! - a header `kid` must name a key (else `unknown_key`), and that key's `alg` must be the
//!   header's (else `unsupported_algorithm`): an RSA public key can never become an HMAC secret;
//! - without `kid`, the token is accepted only when exactly one key has its `alg` (none:
//!   `unsupported_algorithm`; several: `unknown_key`); keys are never tried one after another.

use ring::{hmac, signature};

use super::alg::{Alg, Family};
use super::public_key::{self, MaterialError, PublicJwk};
use crate::call_error::ArgError;
use crate::error::AuthError;
use crate::raw_value::RawValue;
use crate::secret::Secret;

/// Most keys one set may hold: identity providers publish a handful; the bound keeps a hostile
/// or broken document from making every unknown `kid` a long scan.
pub const MAX_KEYS: usize = 100;
/// Longest `kid` accepted in a key (a token's `kid` longer than this names no key).
pub const MAX_KID_BYTES: usize = 256;

/// One key as configured, validated: `key` is the HMAC secret or the raw public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpec {
    pub kid: Option<String>,
    pub alg: Alg,
    pub key: Secret,
}

/// A key ready to check signatures of its one algorithm.
pub struct VerificationKey {
    kid: Option<Box<str>>,
    alg: Alg,
    check: Check,
}

enum Check {
    Hmac(hmac::Key),
    Public(signature::UnparsedPublicKey<Box<[u8]>>),
}

impl VerificationKey {
    pub fn new(spec: &KeySpec) -> Self {
        let check = match (spec.alg.hmac_algorithm(), spec.alg.public_key_algorithm()) {
            (Some(h), _) => Check::Hmac(hmac::Key::new(h, spec.key.expose())),
            (None, Some(p)) => Check::Public(signature::UnparsedPublicKey::new(
                p,
                spec.key.expose().into(),
            )),
            // Every alg has one of the two (alg.rs tests).
            (None, None) => unreachable!("alg without a check"),
        };
        VerificationKey {
            kid: spec.kid.as_deref().map(Into::into),
            alg: spec.alg,
            check,
        }
    }

    #[cfg(test)]
    pub fn alg(&self) -> Alg {
        self.alg
    }

    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    pub fn is_hmac(&self) -> bool {
        matches!(self.check, Check::Hmac(_))
    }

    /// Whether `signature` is this key's signature of `signing_input`. HMAC tags compare in
    /// constant time (ring); ECDSA takes only the fixed-width `r || s` and refuses zero or
    /// out-of-range `r`/`s` (ring checks both are in `[1, n)`).
    pub fn verify(&self, signing_input: &[u8], signature: &[u8]) -> bool {
        match &self.check {
            Check::Hmac(key) => hmac::verify(key, signing_input, signature).is_ok(),
            Check::Public(key) => {
                let c = self.alg.ec_coordinate_bytes();
                if c != 0 && (signature.len() != 2 * c || !ec_scalars_nonzero(signature, c)) {
                    return false;
                }
                key.verify(signing_input, signature).is_ok()
            }
        }
    }

    pub fn public_jwk(&self) -> Option<PublicJwk> {
        match &self.check {
            Check::Hmac(_) => None,
            Check::Public(key) => public_key::public_jwk(self.alg, self.kid(), key.as_ref()),
        }
    }
}

/// r and s both non-zero (ring refuses them too; checked here so the rule is ours, not only
/// a property of the library: the "psychic signatures" attack, CVE-2022-21449).
fn ec_scalars_nonzero(signature: &[u8], c: usize) -> bool {
    let (r, s) = signature.split_at(c);
    r.iter().any(|&b| b != 0) && s.iter().any(|&b| b != 0)
}

/// The keys of one authenticator at one moment. Replaced whole by `setKeys`, never edited.
pub struct KeySet {
    keys: Vec<VerificationKey>,
    /// The one HS256 key a token without `kid` selects, if exactly one exists: the standard
    /// header of our own tokens then skips header parsing.
    standard: Option<usize>,
    /// Counts replacements: 0 for the constructor's set, +1 per `setKeys`.
    generation: u64,
}

impl KeySet {
    /// `specs` were validated by [`validate_specs`].
    pub fn new(specs: &[KeySpec], generation: u64) -> KeySet {
        let keys: Vec<VerificationKey> = specs.iter().map(VerificationKey::new).collect();
        let mut hs256 = keys.iter().enumerate().filter(|(_, k)| k.alg == Alg::Hs256);
        let standard = match (hs256.next(), hs256.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        };
        KeySet {
            keys,
            standard,
            generation,
        }
    }

    /// One HS256 key without `kid`: the `accessSecret` shorthand.
    pub fn hs256(secret: &[u8]) -> KeySet {
        let spec = KeySpec {
            kid: None,
            alg: Alg::Hs256,
            key: Secret::from(secret),
        };
        KeySet::new(&[spec], 0)
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether every key is an HMAC key (the verified-token cache is off for those by default).
    pub fn all_hmac(&self) -> bool {
        self.keys.iter().all(VerificationKey::is_hmac)
    }

    /// The key for `{"alg":"HS256","typ":"JWT"}`, the header our own tokens carry.
    pub fn standard(&self) -> Option<&VerificationKey> {
        self.standard.map(|i| &self.keys[i])
    }

    /// The key a token with header `alg` and `kid` selects (module doc for the rules).
    pub fn select(&self, alg: Alg, kid: Option<&str>) -> Result<&VerificationKey, AuthError> {
        match kid {
            Some(kid) => {
                let key = self
                    .keys
                    .iter()
                    .find(|k| k.kid() == Some(kid))
                    .ok_or(AuthError::UnknownKey)?;
                if key.alg != alg {
                    return Err(AuthError::UnsupportedAlgorithm);
                }
                Ok(key)
            }
            None => {
                let mut with_alg = self.keys.iter().filter(|k| k.alg == alg);
                match (with_alg.next(), with_alg.next()) {
                    (Some(key), None) => Ok(key),
                    (None, _) => Err(AuthError::UnsupportedAlgorithm),
                    // Several candidates and no kid to choose: never try them in turn.
                    (Some(_), Some(_)) => Err(AuthError::UnknownKey),
                }
            }
        }
    }

    /// The public JWK of every asymmetric key, in configuration order.
    pub fn public_jwks(&self) -> Vec<PublicJwk> {
        self.keys
            .iter()
            .filter_map(VerificationKey::public_jwk)
            .collect()
    }
}

/// Checks configured keys; `label` names the list (`config.keys`, `keys`) in errors, and every
/// error names the key by index and `kid`.
pub fn validate_specs(
    specs: Vec<(Option<String>, String, Secret)>,
    label: &str,
    allow_short: bool,
) -> Result<Vec<KeySpec>, ArgError> {
    if specs.is_empty() {
        return Err(ArgError::Range(
            crate::contract::messages::must_not_be_empty(label),
        ));
    }
    if specs.len() > MAX_KEYS {
        return Err(ArgError::Range(format!(
            "{label} holds {} keys; at most {MAX_KEYS} are accepted",
            specs.len()
        )));
    }
    let mut out: Vec<KeySpec> = Vec::with_capacity(specs.len());
    for (i, (kid, alg_name, key)) in specs.into_iter().enumerate() {
        let name = key_name(label, i, kid.as_deref());
        if let Some(kid) = &kid {
            if kid.is_empty() || kid.len() > MAX_KID_BYTES {
                return Err(ArgError::Range(format!(
                    "{name}: kid must be 1 to {MAX_KID_BYTES} bytes"
                )));
            }
            if out.iter().any(|k| k.kid.as_deref() == Some(kid)) {
                return Err(ArgError::DuplicateKid(format!("{name}: duplicate kid")));
            }
        }
        let alg = Alg::from_name(&alg_name).ok_or_else(|| {
            ArgError::Range(format!("{name}: unsupported algorithm {alg_name:?}"))
        })?;
        if alg.family() == Family::Hmac {
            let min = alg.hash_bytes();
            if key.is_empty() || (key.len() < min && !allow_short) {
                return Err(ArgError::Range(
                    crate::contract::messages::key_secret_too_short(&name, alg.name(), min as f64),
                ));
            }
            // The same rule as the config's secrets (hmac_secret.rs): never a key's text.
            super::hmac_secret::check_hmac_secret(key.expose(), &name)?;
        } else {
            public_key::check(alg, key.expose()).map_err(|e| {
                ArgError::Range(match e {
                    MaterialError::Malformed(why) => format!("{name}: the key {why}"),
                    MaterialError::RsaSize(bits) => {
                        format!("{name}: an RSA key must have 2048 to 8192 bits, got {bits}")
                    }
                })
            })?;
        }
        out.push(KeySpec { kid, alg, key });
    }
    Ok(out)
}

/// Reads raw keys (`{ kid?, alg, key }`, `key` a Buffer) and validates them; `label` names the
/// list in errors (`config.keys`, or `keys` for `setKeys`).
pub fn read_keys(
    items: Vec<RawValue>,
    label: &str,
    allow_short: bool,
) -> Result<Vec<KeySpec>, ArgError> {
    let mut specs = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let RawValue::Fields(fields) = item else {
            return Err(ArgError::Type(format!(
                "{label}[{i}] must be an object {{ kid?, alg, key }}"
            )));
        };
        let (mut kid, mut alg, mut key) = (None, None, None);
        for (field, value) in fields {
            match (field, value) {
                (_, RawValue::Absent) => {}
                ("kid", RawValue::Text(t)) => kid = Some(t),
                ("alg", RawValue::Text(t)) => alg = Some(t),
                ("key", RawValue::Bytes(b)) => key = Some(b),
                (field, _) => {
                    let name = key_name(label, i, kid.as_deref());
                    let kind = if field == "key" {
                        "a Buffer"
                    } else {
                        "a string"
                    };
                    return Err(ArgError::Type(format!("{name}.{field} must be {kind}")));
                }
            }
        }
        let name = key_name(label, i, kid.as_deref());
        let alg = alg.ok_or_else(|| ArgError::Type(format!("{name}.alg is required")))?;
        let key = key.ok_or_else(|| ArgError::Type(format!("{name}.key is required")))?;
        specs.push((kid, alg, key));
    }
    validate_specs(specs, label, allow_short)
}

/// `config.keys[2] (kid "a")`, or `config.keys[2]` for a key without `kid`.
pub fn key_name(label: &str, index: usize, kid: Option<&str>) -> String {
    match kid {
        Some(kid) => crate::contract::messages::key_name_with_kid(label, index as f64, kid),
        None => format!("{label}[{index}]"),
    }
}

#[cfg(test)]
mod tests;
