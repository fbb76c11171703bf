//! Raw public-key material as ring takes it, checked once at construction, and its public JWK
//! (RFC 7517 §4, RFC 7518 §6, RFC 8037 §2) for `jwks()`.
//!
//! RSA keys arrive as a PKCS#1 `RSAPublicKey` (DER), EC keys as an uncompressed point
//! (`0x04 || x || y`), Ed25519 keys as their 32 bytes: what `base/keys/normalize.js` makes of a PEM, JWK
//! or `KeyObject` with `node:crypto`.

use super::alg::{Alg, Family};
use super::base64url::encode;

/// The RSA modulus sizes ring verifies with (`RSA_*_2048_8192_*`); smaller keys are weak.
pub const RSA_MIN_BITS: usize = 2048;
pub const RSA_MAX_BITS: usize = 8192;

/// The public JWK of one verification key; `None` members are not written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicJwk {
    pub kty: &'static str,
    pub kid: Option<String>,
    pub alg: &'static str,
    pub crv: Option<&'static str>,
    pub n: Option<String>,
    pub e: Option<String>,
    pub x: Option<String>,
    pub y: Option<String>,
}

/// Why raw key material was refused (the caller names the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MaterialError {
    /// Not the shape the algorithm needs.
    Malformed(&'static str),
    /// An RSA modulus outside 2048..=8192 bits.
    RsaSize(usize),
}

/// Checks `key` for `alg` (an asymmetric one).
pub fn check(alg: Alg, key: &[u8]) -> Result<(), MaterialError> {
    match alg.family() {
        Family::Hmac => Ok(()),
        Family::Rsa | Family::RsaPss => {
            let (n, e) = rsa_components(key).ok_or(MaterialError::Malformed(
                "is not a PKCS#1 RSAPublicKey (DER)",
            ))?;
            let bits = bit_length(n);
            if !(RSA_MIN_BITS..=RSA_MAX_BITS).contains(&bits) {
                return Err(MaterialError::RsaSize(bits));
            }
            // ring refuses even exponents and exponents below 3 when verifying; say so now.
            if e.last().is_none_or(|b| b & 1 == 0) || (e.len() == 1 && e[0] < 3) {
                return Err(MaterialError::Malformed(
                    "has an invalid RSA public exponent",
                ));
            }
            Ok(())
        }
        Family::Ec => {
            let c = alg.ec_coordinate_bytes();
            if key.len() != 1 + 2 * c || key[0] != 0x04 {
                return Err(MaterialError::Malformed(
                    "is not an uncompressed point of the algorithm's curve",
                ));
            }
            Ok(())
        }
        Family::Ed25519 => match key.len() {
            32 => Ok(()),
            _ => Err(MaterialError::Malformed(
                "is not a 32-byte Ed25519 public key",
            )),
        },
    }
}

/// The public JWK of `key` (already checked); `None` for HMAC keys, which are never published.
pub fn public_jwk(alg: Alg, kid: Option<&str>, key: &[u8]) -> Option<PublicJwk> {
    let mut jwk = PublicJwk {
        kty: "",
        kid: kid.map(str::to_owned),
        alg: alg.name(),
        crv: alg.curve(),
        n: None,
        e: None,
        x: None,
        y: None,
    };
    match alg.family() {
        Family::Hmac => return None,
        Family::Rsa | Family::RsaPss => {
            let (n, e) = rsa_components(key)?;
            jwk.kty = "RSA";
            jwk.n = Some(encode(n));
            jwk.e = Some(encode(e));
        }
        Family::Ec => {
            let c = alg.ec_coordinate_bytes();
            jwk.kty = "EC";
            jwk.x = Some(encode(key.get(1..1 + c)?));
            jwk.y = Some(encode(key.get(1 + c..1 + 2 * c)?));
        }
        Family::Ed25519 => {
            jwk.kty = "OKP";
            jwk.x = Some(encode(key));
        }
    }
    Some(jwk)
}

/// `RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }` (RFC 8017 A.1.1),
/// DER: the modulus and exponent as unsigned big-endian bytes without leading zeros.
fn rsa_components(der: &[u8]) -> Option<(&[u8], &[u8])> {
    let (body, rest) = tlv(der, 0x30)?;
    if !rest.is_empty() {
        return None;
    }
    let (n, body) = tlv(body, 0x02)?;
    let (e, body) = tlv(body, 0x02)?;
    if !body.is_empty() {
        return None;
    }
    Some((unsigned(n)?, unsigned(e)?))
}

/// One DER element of type `tag`: its contents and what follows it.
fn tlv(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&t, input) = input.split_first()?;
    if t != tag {
        return None;
    }
    let (&first, mut input) = input.split_first()?;
    let len = if first < 0x80 {
        first as usize
    } else {
        let count = (first & 0x7f) as usize;
        // DER: the long form only when needed, at most 4 length bytes here (keys are small).
        if count == 0 || count > 4 || input.len() < count || input[0] == 0 {
            return None;
        }
        let mut len = 0usize;
        for &b in &input[..count] {
            len = (len << 8) | b as usize;
        }
        input = &input[count..];
        if len < 0x80 {
            return None;
        }
        len
    };
    (input.len() >= len).then(|| input.split_at(len))
}

/// A DER INTEGER's contents as a positive number's bytes (the sign byte dropped).
fn unsigned(int: &[u8]) -> Option<&[u8]> {
    match int {
        [] => None,
        [first, ..] if first & 0x80 != 0 => None, // negative
        [0, rest @ ..] if rest.first().is_some_and(|b| b & 0x80 != 0) => Some(rest),
        [0, ..] if int.len() > 1 => None, // not minimal
        _ => Some(int),
    }
}

fn bit_length(n: &[u8]) -> usize {
    let Some(pos) = n.iter().position(|&b| b != 0) else {
        return 0;
    };
    (n.len() - pos) * 8 - n[pos].leading_zeros() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn der_int(bytes: &[u8]) -> Vec<u8> {
        let mut content = bytes.to_vec();
        if content[0] & 0x80 != 0 {
            content.insert(0, 0);
        }
        der(0x02, &content)
    }

    fn der(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        let len = content.len();
        if len < 0x80 {
            out.push(len as u8);
        } else if len < 0x100 {
            out.extend([0x81, len as u8]);
        } else {
            out.extend([0x82, (len >> 8) as u8, len as u8]);
        }
        out.extend_from_slice(content);
        out
    }

    fn rsa_key(bits: usize) -> Vec<u8> {
        let mut n = vec![0xc5; bits / 8];
        n[bits / 8 - 1] |= 1;
        let seq = [der_int(&n), der_int(&[1, 0, 1])].concat();
        der(0x30, &seq)
    }

    #[test]
    fn reads_the_modulus_and_exponent_of_a_pkcs1_key() {
        let key = rsa_key(2048);
        let (n, e) = rsa_components(&key).unwrap();
        assert_eq!((n.len(), e), (256, &[1u8, 0, 1][..]));
        assert_eq!(check(Alg::Rs256, &key), Ok(()));
        let jwk = public_jwk(Alg::Ps256, Some("k1"), &key).unwrap();
        assert_eq!(
            (jwk.kty, jwk.alg, jwk.e.as_deref()),
            ("RSA", "PS256", Some("AQAB"))
        );
    }

    #[test]
    fn refuses_rsa_keys_under_2048_bits_and_junk() {
        assert_eq!(
            check(Alg::Rs256, &rsa_key(1024)),
            Err(MaterialError::RsaSize(1024))
        );
        assert_eq!(
            check(Alg::Rs256, &rsa_key(2040)),
            Err(MaterialError::RsaSize(2040))
        );
        for junk in [
            &b""[..],
            b"\x30\x00",
            b"\x30\x03\x02\x01\x01",
            &rsa_key(2048)[..100],
        ] {
            assert!(matches!(
                check(Alg::Rs256, junk),
                Err(MaterialError::Malformed(_))
            ));
        }
        let mut trailing = rsa_key(2048);
        trailing.push(0);
        assert!(check(Alg::Rs256, &trailing).is_err());
    }

    #[test]
    fn ec_points_must_be_uncompressed_on_the_algs_curve_size() {
        let mut p256 = vec![4u8; 65];
        assert_eq!(check(Alg::Es256, &p256), Ok(()));
        assert!(check(Alg::Es384, &p256).is_err());
        p256[0] = 2;
        assert!(check(Alg::Es256, &p256).is_err());
        let jwk = public_jwk(Alg::Es384, None, &[4u8; 97]).unwrap();
        assert_eq!((jwk.kty, jwk.crv, jwk.kid), ("EC", Some("P-384"), None));
        assert!(check(Alg::EdDsa, &[0; 31]).is_err());
        assert!(public_jwk(Alg::Hs256, Some("h"), b"secret").is_none());
    }
}
