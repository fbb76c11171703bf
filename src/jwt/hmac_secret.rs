//! The rule that keeps key material out of HMAC secrets (docs/keys.md, "What an HMAC secret may
//! not be"). A public key is public: if its PEM or JWK text became an HS256 secret, anyone
//! holding the public key could MAC tokens that verify (the class of fast-jwt CVE-2026-34950 and
//! hono CVE-2026-22817; an operator writes `accessSecret: process.env.JWT_PUBLIC_KEY`). Every
//! HMAC secret both engines read passes here once, at construction or `setKeys`: the config's
//! secrets (`accessSecret`, `refreshSecret`, `dpopNonceSecret`) and each HS* key of `keys` and
//! of a trusted issuer. The JS engine's twin is base/keys/hmac-secret.js; both run the cases of
//! contract/vectors/hmac_secret_key_material.json, so the two rules cannot drift apart.
//!
//! The rule reads bytes (a string as its UTF-8), with no parsing, so both engines decide alike
//! on any input (invalid UTF-8, deep nesting, odd escapes). A secret is key material when it
//! - contains `-----BEGIN` (RFC 7468's encapsulation boundary): a PEM public key (SPKI or
//!   PKCS#1), private key, certificate or any other PEM block, wherever it starts and whatever
//!   its line ends; or
//! - contains a JSON member named `kty` or `keys`: the quoted name, optional JSON whitespace
//!   and a colon (RFC 7517 §4.1, §5): a JWK or a JWK Set.
//!
//! Dashes elsewhere (`my-----secret`), a lower-case `-----begin`, base64 or hex text and random
//! bytes are secrets like any other.

use crate::call_error::ArgError;
use crate::contract::messages;

/// What a refused secret is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyMaterial {
    /// A PEM block (`-----BEGIN`).
    Pem,
    /// A JWK or a JWK Set (a `"kty"` or `"keys"` member).
    Jwk,
}

const PEM_BOUNDARY: &[u8] = b"-----BEGIN";
const JWK_MEMBERS: [&[u8]; 2] = [b"\"kty\"", b"\"keys\""];

/// The key material `secret` is, or `None` for a secret the rule lets through.
pub fn key_material(secret: &[u8]) -> Option<KeyMaterial> {
    if find(secret, PEM_BOUNDARY, 0).is_some() {
        return Some(KeyMaterial::Pem);
    }
    if JWK_MEMBERS.iter().any(|name| has_member(secret, name)) {
        return Some(KeyMaterial::Jwk);
    }
    None
}

/// `secret` as an HMAC secret, or the TypeError (`ERR_INVALID_ARG_VALUE`) that names the fix;
/// `name` names the secret (`config.accessSecret`, `config.keys[0] (kid "a")`).
pub fn check_hmac_secret(secret: &[u8], name: &str) -> Result<(), ArgError> {
    match key_material(secret) {
        None => Ok(()),
        Some(KeyMaterial::Pem) => Err(ArgError::Value(messages::secret_is_pem(name))),
        Some(KeyMaterial::Jwk) => Err(ArgError::Value(messages::secret_is_jwk(name))),
    }
}

/// `name` (quoted) followed by optional JSON whitespace (RFC 8259 §2) and `:`.
fn has_member(bytes: &[u8], name: &[u8]) -> bool {
    let mut from = 0;
    while let Some(at) = find(bytes, name, from) {
        let rest = &bytes[at + name.len()..];
        let next = rest
            .iter()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
        if next == Some(&b':') {
            return true;
        }
        from = at + 1;
    }
    false
}

/// The first index at or after `from` where `needle` starts.
fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| from + i)
}

#[cfg(test)]
mod tests;
