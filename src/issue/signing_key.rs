//! Issuing with an asymmetric key (the `signingKey` option): a ring key pair built once from
//! the PKCS#8 DER that the JS side exports with node:crypto, bound to one algorithm and `kid`.
//! RS256, PS256, ES256 and EdDSA: the algorithms ring signs with. ECDSA and PSS signatures
//! are randomized, so two signatures of one input differ; what must agree is verification.

use ring::rand::SystemRandom;
use ring::signature::{
    EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaEncoding, RsaKeyPair,
    ECDSA_P256_SHA256_FIXED_SIGNING, RSA_PKCS1_SHA256, RSA_PSS_SHA256,
};

use crate::call_error::ArgError;
use crate::jwt::base64url;

/// The algorithms a signing key may be bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SigningAlg {
    Rs256,
    Ps256,
    Es256,
    EdDsa,
}

impl SigningAlg {
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "RS256" => SigningAlg::Rs256,
            "PS256" => SigningAlg::Ps256,
            "ES256" => SigningAlg::Es256,
            "EdDSA" => SigningAlg::EdDsa,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SigningAlg::Rs256 => "RS256",
            SigningAlg::Ps256 => "PS256",
            SigningAlg::Es256 => "ES256",
            SigningAlg::EdDsa => "EdDSA",
        }
    }
}

enum Pair {
    Rsa(RsaKeyPair),
    Ecdsa(EcdsaKeyPair),
    Ed25519(Ed25519KeyPair),
}

/// A private key bound to one algorithm and `kid`, with its token header prepared.
pub struct SigningKey {
    alg: SigningAlg,
    kid: String,
    /// base64url of `{"alg":…,"kid":…,"typ":"JWT"}`, the same bytes the JS engine writes.
    header_b64: String,
    pair: Pair,
    rng: SystemRandom,
}

impl std::fmt::Debug for SigningKey {
    // Never prints key material.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

/// A kid needs no JSON escaping: printable ASCII without quotes, backslashes or spaces.
fn is_valid_kid(kid: &str) -> bool {
    (1..=256).contains(&kid.len())
        && kid
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\')
}

impl SigningKey {
    /// Builds the key pair for `alg` from PKCS#8 DER; a key ring refuses (wrong type, RSA
    /// outside 2048-4096 bits, a curve other than P-256) is a `RangeError` naming `signingKey`.
    pub fn from_pkcs8(alg: &str, kid: &str, pkcs8: &[u8]) -> Result<Self, ArgError> {
        let alg = SigningAlg::from_name(alg).ok_or_else(|| {
            ArgError::Range(format!(
                "config.signingKey.alg {alg:?} is not one of RS256, PS256, ES256, EdDSA"
            ))
        })?;
        if !is_valid_kid(kid) {
            return Err(ArgError::Type(
                crate::contract::messages::SIGNING_KID_INVALID.into(),
            ));
        }
        let rng = SystemRandom::new();
        let refused = |e: ring::error::KeyRejected| {
            ArgError::Range(format!(
                "config.signingKey: the private key does not fit {}: {e}",
                alg.name()
            ))
        };
        let pair = match alg {
            SigningAlg::Rs256 | SigningAlg::Ps256 => {
                Pair::Rsa(RsaKeyPair::from_pkcs8(pkcs8).map_err(refused)?)
            }
            SigningAlg::Es256 => Pair::Ecdsa(
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8, &rng)
                    .map_err(refused)?,
            ),
            // node:crypto exports Ed25519 keys as PKCS#8 v1 (no public key inside), which only
            // the `maybe_unchecked` reader takes; v2 documents are checked all the same.
            SigningAlg::EdDsa => {
                Pair::Ed25519(Ed25519KeyPair::from_pkcs8_maybe_unchecked(pkcs8).map_err(refused)?)
            }
        };
        let header = format!(r#"{{"alg":"{}","kid":"{kid}","typ":"JWT"}}"#, alg.name());
        Ok(SigningKey {
            alg,
            kid: kid.to_owned(),
            header_b64: base64url::encode(header.as_bytes()),
            pair,
            rng,
        })
    }

    pub fn alg(&self) -> SigningAlg {
        self.alg
    }

    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public key as ring exposes it (RSA: DER RSAPublicKey; EC: uncompressed point;
    /// Ed25519: the 32 bytes).
    pub fn public_key(&self) -> &[u8] {
        match &self.pair {
            Pair::Rsa(p) => p.public().as_ref(),
            Pair::Ecdsa(p) => p.public_key().as_ref(),
            Pair::Ed25519(p) => p.public_key().as_ref(),
        }
    }

    /// The compact JWS of a payload that is already serialized JSON.
    pub fn sign_payload(&self, payload_json: &[u8]) -> String {
        let mut token =
            String::with_capacity(self.header_b64.len() + payload_json.len() * 4 / 3 + 700);
        token.push_str(&self.header_b64);
        token.push('.');
        token.push_str(&base64url::encode(payload_json));
        let signature = self.sign(token.as_bytes());
        token.push('.');
        token.push_str(&base64url::encode(&signature));
        token
    }

    fn sign(&self, input: &[u8]) -> Vec<u8> {
        // ring fails only when the system RNG does, which leaves nothing sane to do.
        const RNG: &str = "the system random number generator failed";
        match &self.pair {
            Pair::Rsa(pair) => {
                let padding: &'static dyn RsaEncoding = match self.alg {
                    SigningAlg::Ps256 => &RSA_PSS_SHA256,
                    _ => &RSA_PKCS1_SHA256,
                };
                let mut signature = vec![0; pair.public().modulus_len()];
                pair.sign(padding, &self.rng, input, &mut signature)
                    .expect(RNG);
                signature
            }
            Pair::Ecdsa(pair) => pair.sign(&self.rng, input).expect(RNG).as_ref().to_vec(),
            Pair::Ed25519(pair) => pair.sign(input).as_ref().to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{
        UnparsedPublicKey, ECDSA_P256_SHA256_FIXED, ED25519, RSA_PKCS1_2048_8192_SHA256,
        RSA_PSS_2048_8192_SHA256,
    };

    // PKCS#8 test keys generated with ring's own generators (Ed25519, P-256); RSA comes from
    // the JS tests, which export node:crypto keys (ring cannot generate RSA keys).
    fn ed25519_pkcs8() -> Vec<u8> {
        Ed25519KeyPair::generate_pkcs8(&SystemRandom::new())
            .unwrap()
            .as_ref()
            .to_vec()
    }

    fn p256_pkcs8() -> Vec<u8> {
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .unwrap()
            .as_ref()
            .to_vec()
    }

    fn split(token: &str) -> (&[u8], Vec<u8>, String) {
        let dot = token.rfind('.').unwrap();
        let header_b64 = &token[..token.find('.').unwrap()];
        let mut header = Vec::new();
        base64url::decode_into(header_b64.as_bytes(), &mut header).unwrap();
        let mut sig = Vec::new();
        base64url::decode_into(&token.as_bytes()[dot + 1..], &mut sig).unwrap();
        (
            &token.as_bytes()[..dot],
            sig,
            String::from_utf8(header).unwrap(),
        )
    }

    #[test]
    fn eddsa_token_verifies_with_the_public_key_and_names_its_kid() {
        let key = SigningKey::from_pkcs8("EdDSA", "ed-1", &ed25519_pkcs8()).unwrap();
        let token = key.sign_payload(br#"{"sub":"u"}"#);
        let (input, sig, header) = split(&token);
        assert_eq!(header, r#"{"alg":"EdDSA","kid":"ed-1","typ":"JWT"}"#);
        UnparsedPublicKey::new(&ED25519, key.public_key())
            .verify(input, &sig)
            .unwrap();
    }

    #[test]
    fn es256_signature_is_fixed_width_r_s() {
        let key = SigningKey::from_pkcs8("ES256", "ec-1", &p256_pkcs8()).unwrap();
        let token = key.sign_payload(br#"{"sub":"u"}"#);
        let (input, sig, header) = split(&token);
        assert_eq!(header, r#"{"alg":"ES256","kid":"ec-1","typ":"JWT"}"#);
        assert_eq!(sig.len(), 64);
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key.public_key())
            .verify(input, &sig)
            .unwrap();
    }

    #[test]
    fn refuses_a_key_of_another_type_than_its_alg() {
        for alg in ["RS256", "PS256", "ES256"] {
            let err = SigningKey::from_pkcs8(alg, "k", &ed25519_pkcs8()).unwrap_err();
            assert!(matches!(err, ArgError::Range(_)), "{alg}: {err:?}");
        }
        let err = SigningKey::from_pkcs8("EdDSA", "k", &p256_pkcs8()).unwrap_err();
        assert!(matches!(err, ArgError::Range(_)));
    }

    #[test]
    fn refuses_algorithms_it_cannot_sign_with() {
        for alg in ["HS256", "ES384", "RS512", "none", ""] {
            let err = SigningKey::from_pkcs8(alg, "k", &p256_pkcs8()).unwrap_err();
            assert!(err.message().contains("is not one of"), "{alg}");
        }
    }

    #[test]
    fn refuses_a_kid_that_would_need_escaping() {
        for kid in ["", "a b", "a\"b", "a\\b", "é", &"k".repeat(257)] {
            assert!(matches!(
                SigningKey::from_pkcs8("EdDSA", kid, &ed25519_pkcs8()),
                Err(ArgError::Type(_))
            ));
        }
    }

    #[test]
    fn refuses_bytes_that_are_not_pkcs8() {
        assert!(SigningKey::from_pkcs8("EdDSA", "k", b"not a key").is_err());
        assert!(SigningKey::from_pkcs8("RS256", "k", &[]).is_err());
    }

    // A node:crypto RSA key exported as PKCS#8 DER, as the JS side hands it over (ring has no RSA keygen).
    const RSA_2048: &[u8] = include_bytes!("testdata/rsa2048.pk8");
    const RSA_1024: &[u8] = include_bytes!("testdata/rsa1024.pk8");

    #[test]
    fn rsa_padding_follows_the_alg() {
        for (alg, right, wrong) in [
            (
                "RS256",
                &RSA_PKCS1_2048_8192_SHA256,
                &RSA_PSS_2048_8192_SHA256,
            ),
            (
                "PS256",
                &RSA_PSS_2048_8192_SHA256,
                &RSA_PKCS1_2048_8192_SHA256,
            ),
        ] {
            let key = SigningKey::from_pkcs8(alg, "r", RSA_2048).unwrap();
            let token = key.sign_payload(br#"{"sub":"u"}"#);
            let (input, sig, _) = split(&token);
            assert_eq!(sig.len(), 256);
            UnparsedPublicKey::new(right, key.public_key())
                .verify(input, &sig)
                .unwrap();
            assert!(UnparsedPublicKey::new(wrong, key.public_key())
                .verify(input, &sig)
                .is_err());
        }
    }

    #[test]
    fn refuses_an_rsa_key_under_2048_bits() {
        let err = SigningKey::from_pkcs8("RS256", "r", RSA_1024).unwrap_err();
        assert!(matches!(err, ArgError::Range(_)), "{err:?}");
    }
}
