//! The JWS algorithms a verification key can be bound to (RFC 7518 §3.1, RFC 8037 §3.1).

/// A supported `alg`. Every key is bound to exactly one; anything else (ES512, `none`, any
/// other spelling) is not representable and is refused as `unsupported_algorithm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Alg {
    Hs256,
    Hs384,
    Hs512,
    Rs256,
    Rs384,
    Rs512,
    Ps256,
    Ps384,
    Ps512,
    Es256,
    Es384,
    /// RFC 8037 `EdDSA`, with an Ed25519 key (the only curve we accept).
    EdDsa,
    /// The fully-specified name for the same signatures (RFC 9864).
    Ed25519,
}

/// What kind of key material an algorithm takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Hmac,
    Rsa,
    RsaPss,
    Ec,
    Ed25519,
}

impl Alg {
    pub const ALL: [Alg; 13] = [
        Alg::Hs256,
        Alg::Hs384,
        Alg::Hs512,
        Alg::Rs256,
        Alg::Rs384,
        Alg::Rs512,
        Alg::Ps256,
        Alg::Ps384,
        Alg::Ps512,
        Alg::Es256,
        Alg::Es384,
        Alg::EdDsa,
        Alg::Ed25519,
    ];

    /// Case-sensitive on purpose: `hs256`, `None` and every other spelling are unknown.
    pub fn from_name(name: &str) -> Option<Alg> {
        Alg::ALL.into_iter().find(|a| a.name() == name)
    }

    pub const fn name(self) -> &'static str {
        match self {
            Alg::Hs256 => "HS256",
            Alg::Hs384 => "HS384",
            Alg::Hs512 => "HS512",
            Alg::Rs256 => "RS256",
            Alg::Rs384 => "RS384",
            Alg::Rs512 => "RS512",
            Alg::Ps256 => "PS256",
            Alg::Ps384 => "PS384",
            Alg::Ps512 => "PS512",
            Alg::Es256 => "ES256",
            Alg::Es384 => "ES384",
            Alg::EdDsa => "EdDSA",
            Alg::Ed25519 => "Ed25519",
        }
    }

    pub const fn family(self) -> Family {
        match self {
            Alg::Hs256 | Alg::Hs384 | Alg::Hs512 => Family::Hmac,
            Alg::Rs256 | Alg::Rs384 | Alg::Rs512 => Family::Rsa,
            Alg::Ps256 | Alg::Ps384 | Alg::Ps512 => Family::RsaPss,
            Alg::Es256 | Alg::Es384 => Family::Ec,
            Alg::EdDsa | Alg::Ed25519 => Family::Ed25519,
        }
    }

    /// Bytes of the hash output: RFC 7518 §3.2 wants an HMAC key at least this long.
    pub const fn hash_bytes(self) -> usize {
        match self {
            Alg::Hs384 | Alg::Rs384 | Alg::Ps384 | Alg::Es384 => 48,
            Alg::Hs512 | Alg::Rs512 | Alg::Ps512 | Alg::EdDsa | Alg::Ed25519 => 64,
            _ => 32,
        }
    }

    /// Bytes of one ECDSA coordinate (and of `r` and `s`), 0 for other families.
    pub const fn ec_coordinate_bytes(self) -> usize {
        match self {
            Alg::Es256 => 32,
            Alg::Es384 => 48,
            _ => 0,
        }
    }

    /// The JWK `crv` of the key an algorithm takes, if it is a curve.
    pub const fn curve(self) -> Option<&'static str> {
        match self {
            Alg::Es256 => Some("P-256"),
            Alg::Es384 => Some("P-384"),
            Alg::EdDsa | Alg::Ed25519 => Some("Ed25519"),
            _ => None,
        }
    }

    /// The ring algorithm that checks a signature of this `alg` with a public key. ECDSA is
    /// the fixed-width `r || s` form of RFC 7518 §3.4 (DER is refused by length); PSS uses a
    /// salt as long as the hash (RFC 7518 §3.5).
    pub fn public_key_algorithm(
        self,
    ) -> Option<&'static dyn ring::signature::VerificationAlgorithm> {
        use ring::signature as sig;
        Some(match self {
            Alg::Rs256 | Alg::Rs384 | Alg::Rs512 | Alg::Ps256 | Alg::Ps384 | Alg::Ps512 => {
                self.rsa_parameters()?
            }
            Alg::Es256 => &sig::ECDSA_P256_SHA256_FIXED,
            Alg::Es384 => &sig::ECDSA_P384_SHA384_FIXED,
            Alg::EdDsa | Alg::Ed25519 => &sig::ED25519,
            Alg::Hs256 | Alg::Hs384 | Alg::Hs512 => return None,
        })
    }

    /// The RSA half of [`Alg::public_key_algorithm`], typed for callers that hold `n` and `e`
    /// rather than a DER key (a DPoP proof's `jwk`, src/dpop/proof_key.rs).
    pub fn rsa_parameters(self) -> Option<&'static ring::signature::RsaParameters> {
        use ring::signature as sig;
        Some(match self {
            Alg::Rs256 => &sig::RSA_PKCS1_2048_8192_SHA256,
            Alg::Rs384 => &sig::RSA_PKCS1_2048_8192_SHA384,
            Alg::Rs512 => &sig::RSA_PKCS1_2048_8192_SHA512,
            Alg::Ps256 => &sig::RSA_PSS_2048_8192_SHA256,
            Alg::Ps384 => &sig::RSA_PSS_2048_8192_SHA384,
            Alg::Ps512 => &sig::RSA_PSS_2048_8192_SHA512,
            _ => return None,
        })
    }

    pub fn hmac_algorithm(self) -> Option<ring::hmac::Algorithm> {
        match self {
            Alg::Hs256 => Some(ring::hmac::HMAC_SHA256),
            Alg::Hs384 => Some(ring::hmac::HMAC_SHA384),
            Alg::Hs512 => Some(ring::hmac::HMAC_SHA512),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_nothing_else_is_known() {
        for alg in Alg::ALL {
            assert_eq!(Alg::from_name(alg.name()), Some(alg));
        }
        for name in ["none", "None", "ES512", "hs256", "RS1", "", "HS256 "] {
            assert_eq!(Alg::from_name(name), None, "{name}");
        }
    }

    #[test]
    fn every_alg_has_exactly_one_kind_of_check() {
        for alg in Alg::ALL {
            let hmac = alg.hmac_algorithm().is_some();
            let public = alg.public_key_algorithm().is_some();
            assert!(hmac != public, "{}", alg.name());
            assert_eq!(hmac, alg.family() == Family::Hmac);
        }
    }
}
