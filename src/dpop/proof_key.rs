//! The public key a DPoP proof carries in its `jwk` header (RFC 9449 §4.2): read strictly,
//! bound to the proof's `alg`, never holding private members, and named by its RFC 7638
//! SHA-256 thumbprint (what an access token's `cnf.jkt` holds, RFC 9449 §6.1).

use ring::signature::{RsaPublicKeyComponents, UnparsedPublicKey};

use crate::contract::limits;
use crate::jwt::alg::Family;
use crate::jwt::base64url;
use crate::jwt::json_scan::{Scalar, Scanner};
use crate::jwt::Alg;

/// Members of private JWKs (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2): a proof carrying one
/// leaks its key, and a server accepting it teaches clients to do so.
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// RSA moduli a proof key may have: at least 2048 bits (RFC 7518 §3.3), at most
/// contract/limits.json `dpopRsaMaxBits`, and an exponent of at most `dpopRsaMaxExponent`: a
/// verification costs with the modulus's size and the exponent's bits, and a client never needs
/// more (an RSA-8192 key with exponent 2^32 - 1 made one garbage proof cost 30-40 forged tokens).
const RSA_MIN_BITS: usize = 2048;
const RSA_MAX_BITS: usize = limits::DPOP_RSA_MAX_BITS as usize;
const RSA_MAX_EXPONENT: u64 = limits::DPOP_RSA_MAX_EXPONENT;

pub struct ProofKey {
    alg: Alg,
    /// `x || y` (EC, uncompressed point without its 0x04), `x` (Ed25519), or `n` then `e`.
    material: Vec<u8>,
    rsa_n_len: usize,
    /// base64url(SHA-256 of the RFC 7638 members), 43 characters.
    pub thumbprint: String,
}

#[derive(Default)]
struct Members<'a> {
    kty: Option<Scalar<'a>>,
    crv: Option<Scalar<'a>>,
    x: Option<Scalar<'a>>,
    y: Option<Scalar<'a>>,
    n: Option<Scalar<'a>>,
    e: Option<Scalar<'a>>,
}

impl ProofKey {
    /// The key of `jwk` (the JSON text of the header member) for `alg` (asymmetric), or `None`.
    pub fn read(jwk: &str, alg: Alg) -> Option<ProofKey> {
        let mut m = Members::default();
        Scanner::new(jwk).object(|key, scanner| {
            let slot = match key.as_ref() {
                "kty" => &mut m.kty,
                "crv" => &mut m.crv,
                "x" => &mut m.x,
                "y" => &mut m.y,
                "n" => &mut m.n,
                "e" => &mut m.e,
                k if PRIVATE_MEMBERS.contains(&k) => return None,
                _ => return scanner.skip_value(),
            };
            if slot.is_some() {
                return None;
            }
            *slot = Some(scanner.value()?);
            Some(())
        })?;
        let text = |v: &Option<Scalar<'_>>| match v {
            Some(Scalar::Str(s)) => Some(s.to_string()),
            _ => None,
        };
        let decode = |s: &str| {
            let mut out = Vec::new();
            base64url::decode_into(s.as_bytes(), &mut out).map(|_| out)
        };
        let kty = text(&m.kty)?;
        let mut material;
        let mut rsa_n_len = 0;
        let members = match alg.family() {
            Family::Ec | Family::Ed25519 => {
                let ec = alg.family() == Family::Ec;
                if kty != if ec { "EC" } else { "OKP" } || text(&m.crv)? != alg.curve()? {
                    return None;
                }
                let x = text(&m.x)?;
                let want = if ec { alg.ec_coordinate_bytes() } else { 32 };
                material = decode(&x).filter(|b| b.len() == want)?;
                let crv = text(&m.crv)?;
                if ec {
                    let y = text(&m.y)?;
                    material.extend(decode(&y).filter(|b| b.len() == want)?);
                    format!(r#"{{"crv":"{crv}","kty":"{kty}","x":"{x}","y":"{y}"}}"#)
                } else {
                    format!(r#"{{"crv":"{crv}","kty":"{kty}","x":"{x}"}}"#)
                }
            }
            Family::Rsa | Family::RsaPss => {
                let (n, e) = (text(&m.n)?, text(&m.e)?);
                // Base64url of the largest modulus allowed, with a leading zero byte: no more
                // is decoded.
                if kty != "RSA" || n.len() > (RSA_MAX_BITS / 8 + 1).div_ceil(3) * 4 {
                    return None;
                }
                material = decode(&n)?;
                let bits =
                    (material.len() * 8).checked_sub(material.first()?.leading_zeros() as usize)?;
                let exponent = decode(&e)?;
                // Minimal big-endian, odd, 3 to RSA_MAX_EXPONENT.
                let small = exponent.len() <= 4 && exponent.first().is_some_and(|&b| b != 0);
                let odd = exponent.last().is_some_and(|&b| b & 1 == 1);
                let value = exponent.iter().fold(0u64, |v, &b| v << 8 | b as u64);
                if !(RSA_MIN_BITS..=RSA_MAX_BITS).contains(&bits)
                    || !small
                    || !odd
                    || !(3..=RSA_MAX_EXPONENT).contains(&value)
                {
                    return None;
                }
                rsa_n_len = material.len();
                material.extend(exponent);
                format!(r#"{{"e":"{e}","kty":"{kty}","n":"{n}"}}"#)
            }
            Family::Hmac => return None,
        };
        let digest = ring::digest::digest(&ring::digest::SHA256, members.as_bytes());
        Some(ProofKey {
            alg,
            material,
            rsa_n_len,
            thumbprint: base64url::encode(digest.as_ref()),
        })
    }

    /// Whether `signature` is this key's signature of `signing_input` under its `alg`.
    pub fn verify(&self, signing_input: &[u8], signature: &[u8]) -> bool {
        match self.alg.family() {
            Family::Ec => {
                let c = self.alg.ec_coordinate_bytes();
                if signature.len() != 2 * c
                    || signature[..c].iter().all(|&b| b == 0)
                    || signature[c..].iter().all(|&b| b == 0)
                {
                    return false;
                }
                let mut point = Vec::with_capacity(1 + self.material.len());
                point.push(0x04);
                point.extend_from_slice(&self.material);
                let Some(algorithm) = self.alg.public_key_algorithm() else {
                    return false;
                };
                UnparsedPublicKey::new(algorithm, point)
                    .verify(signing_input, signature)
                    .is_ok()
            }
            Family::Ed25519 => self.alg.public_key_algorithm().is_some_and(|algorithm| {
                UnparsedPublicKey::new(algorithm, &self.material)
                    .verify(signing_input, signature)
                    .is_ok()
            }),
            Family::Rsa | Family::RsaPss => {
                let Some(params) = self.alg.rsa_parameters() else {
                    return false;
                };
                let (n, e) = self.material.split_at(self.rsa_n_len);
                signature.len() == n.len()
                    && RsaPublicKeyComponents { n, e }
                        .verify(params, signing_input, signature)
                        .is_ok()
            }
            Family::Hmac => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thumbprint_of_rfc7638_example() {
        // RFC 7638 §3.1.
        let jwk = r#"{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}"#;
        let key = ProofKey::read(jwk, Alg::Rs256).unwrap();
        assert_eq!(
            key.thumbprint,
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
    }

    #[test]
    fn refuses_private_members_wrong_kty_and_short_coordinates() {
        let x = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
        let y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";
        let ok = format!(r#"{{"kty":"EC","crv":"P-256","x":"{x}","y":"{y}"}}"#);
        assert!(ProofKey::read(&ok, Alg::Es256).is_some());
        assert!(ProofKey::read(&ok, Alg::Es384).is_none());
        assert!(ProofKey::read(&ok, Alg::Rs256).is_none());
        let private = format!(r#"{{"kty":"EC","crv":"P-256","x":"{x}","y":"{y}","d":"AA"}}"#);
        assert!(ProofKey::read(&private, Alg::Es256).is_none());
        let twice = format!(r#"{{"kty":"EC","crv":"P-256","x":"{x}","x":"{x}","y":"{y}"}}"#);
        assert!(ProofKey::read(&twice, Alg::Es256).is_none());
        let short = format!(r#"{{"kty":"EC","crv":"P-256","x":"AQ","y":"{y}"}}"#);
        assert!(ProofKey::read(&short, Alg::Es256).is_none());
    }
}
