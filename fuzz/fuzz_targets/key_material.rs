//! Key documents as the core receives them: what `base/keys/normalize.js` makes of a JWKS, a
//! discovery document's keys, a PEM or a JWK (RSA PKCS#1 DER, EC points, Ed25519 bytes), and a
//! DPoP proof's `jwk` header (JSON the core reads itself). Raw bytes or structured inputs, for
//! every algorithm, through `public_key::check`/`public_jwk`, `setKeys` (`replace_keys`) and
//! `ProofKey::read`. Never a panic; accepted material publishes a JWK whose members decode back
//! to it; a key set `setKeys` accepted never verifies a token with a fuzzed signature; a proof
//! key has a canonical 43-character thumbprint and reads the same twice.
#![no_main]

use auth_shield::internals::base64url::{decode_into, encode};
use auth_shield::internals::public_key::{check, public_jwk};
use auth_shield::internals::{
    is_thumbprint, Alg, Authenticator, ProofKey, RawConfig, RawValue, Settings, TokenKind,
};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const NAMES: [&str; 15] = [
    "HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256",
    "ES384", "EdDSA", "Ed25519", "none", "ES512",
];

#[derive(Arbitrary, Debug)]
enum Material {
    Raw(Vec<u8>),
    /// `0x04 || x || y` with fuzzed coordinates.
    Point(Vec<u8>),
    /// An RSAPublicKey DER built around a fuzzed modulus and exponent.
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
        n_len_extra: u8,
    },
}

#[derive(Arbitrary, Debug)]
struct Entry {
    alg: u8,
    kid: Option<String>,
    material: Material,
}

#[derive(Arbitrary, Debug)]
struct Input {
    entries: Vec<Entry>,
    header: Vec<u8>,
    payload: Vec<u8>,
    signature: Vec<u8>,
    jwk: String,
}

fn der_len(len: usize, out: &mut Vec<u8>) {
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
}

fn bytes_of(m: &Material) -> Vec<u8> {
    match m {
        Material::Raw(b) => b.clone(),
        Material::Point(c) => {
            let mut p = vec![4];
            p.extend_from_slice(c);
            p
        }
        Material::Rsa { n, e, n_len_extra } => {
            let mut body = Vec::new();
            for (i, int) in [n, e].into_iter().enumerate() {
                body.push(0x02);
                // A lying length now and then.
                let extra = if i == 0 {
                    usize::from(*n_len_extra % 4)
                } else {
                    0
                };
                der_len(int.len() + extra, &mut body);
                body.extend_from_slice(int);
            }
            let mut der = vec![0x30];
            der_len(body.len(), &mut der);
            der.extend_from_slice(&body);
            der
        }
    }
}

fn authenticator() -> &'static Authenticator {
    static AUTH: OnceLock<Authenticator> = OnceLock::new();
    AUTH.get_or_init(|| {
        let raw = RawConfig::new()
            .with("accessSecret", &b"fuzz-secret-fuzz-secret-fuzz-secret!"[..])
            .with("clockTimestamp", 1_700_000_000.0)
            .with("rateLimitMax", 0.0);
        Authenticator::new(Settings::from_config(raw).expect("valid fuzz config"))
    })
}

fn decoded(member: &Option<String>) -> Vec<u8> {
    let mut out = Vec::new();
    decode_into(
        member.as_deref().expect("member present").as_bytes(),
        &mut out,
    )
    .expect("a published member is base64url");
    out
}

fuzz_target!(|input: Input| {
    let mut items = Vec::new();
    for entry in input.entries.iter().take(4) {
        let name = NAMES[usize::from(entry.alg) % NAMES.len()];
        let key = bytes_of(&entry.material);
        if let Some(alg) = Alg::from_name(name) {
            if check(alg, &key).is_ok() {
                if let Some(jwk) = public_jwk(alg, entry.kid.as_deref(), &key) {
                    match jwk.kty {
                        "EC" => {
                            let mut xy = decoded(&jwk.x);
                            xy.extend_from_slice(&decoded(&jwk.y));
                            assert_eq!(&key[1..], &xy[..]);
                        }
                        "OKP" => assert_eq!(decoded(&jwk.x), key),
                        "RSA" => {
                            let n = decoded(&jwk.n);
                            assert!(n.first().is_some_and(|&b| b != 0), "{n:?}");
                            assert!(!decoded(&jwk.e).is_empty());
                        }
                        other => panic!("kty {other}"),
                    }
                }
            }
            // A proof key names its algorithm; HMAC never is one.
            if let Some(proof_key) = ProofKey::read(&input.jwk, alg) {
                assert!(is_thumbprint(proof_key.thumbprint.as_bytes()));
                let again = ProofKey::read(&input.jwk, alg).expect("reads the same twice");
                assert_eq!(again.thumbprint, proof_key.thumbprint);
                // Whoever chose the public key cannot sign without its private key.
                assert!(!proof_key.verify(b"x.y", &input.signature));
            }
        }
        let mut fields = vec![
            ("alg", RawValue::Text(name.to_owned())),
            ("key", RawValue::from(&key[..])),
        ];
        if let Some(kid) = &entry.kid {
            fields.push(("kid", RawValue::Text(kid.clone())));
        }
        items.push(RawValue::Fields(fields));
    }
    let auth = authenticator();
    if auth.replace_keys(items, None).is_ok() {
        let token = format!(
            "{}.{}.{}",
            encode(&input.header),
            encode(&input.payload),
            encode(&input.signature)
        );
        let mut scratch = Vec::new();
        let verdict = auth.verify(TokenKind::Access, token.as_bytes(), &mut scratch);
        assert!(
            !matches!(verdict, Some(Ok(_))),
            "a fuzzed signature verified: {token}"
        );
    }
});
