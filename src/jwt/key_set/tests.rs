//! Key selection and per-alg verification, against the RFC examples (copied into
//! `__test__/fixtures/`) and ring-made signatures.

use super::*;
use crate::jwt::base64url::{decode_into, encode};
use crate::jwt::test_tokens::signed;
use crate::jwt::verify::decode_verified;
use crate::jwt::{HmacKey, KeyLookup};
use ring::rand::SystemRandom;
use ring::signature::{self as sig, KeyPair};

const VECTORS: &str = include_str!("../../../contract/vectors/jwt_rfc_examples.json");

fn vector(name: &str) -> serde_json::Value {
    let all: serde_json::Value = serde_json::from_str(VECTORS).unwrap();
    all["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap()
        .clone()
}

fn b64(text: &serde_json::Value) -> Vec<u8> {
    let mut out = Vec::new();
    decode_into(text.as_str().unwrap().as_bytes(), &mut out).unwrap();
    out
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

fn der_uint(bytes: &[u8]) -> Vec<u8> {
    let start = bytes
        .iter()
        .position(|&b| b != 0)
        .unwrap_or(bytes.len() - 1);
    let mut content = bytes[start..].to_vec();
    if content[0] & 0x80 != 0 {
        content.insert(0, 0);
    }
    der(0x02, &content)
}

/// PKCS#1 RSAPublicKey / RSAPrivateKey DER from JWK members.
fn rsa_der(jwk: &serde_json::Value, members: &[&str]) -> Vec<u8> {
    let mut seq = Vec::new();
    if members.len() > 2 {
        seq.extend(der(0x02, &[0])); // version
    }
    for m in members {
        seq.extend(der_uint(&b64(&jwk[*m])));
    }
    der(0x30, &seq)
}

const RSA_PRIVATE: [&str; 8] = ["n", "e", "d", "p", "q", "dp", "dq", "qi"];

fn spec(kid: Option<&str>, alg: Alg, key: Vec<u8>) -> KeySpec {
    KeySpec {
        kid: kid.map(str::to_owned),
        alg,
        key: Secret::new(key),
    }
}

fn set(specs: Vec<KeySpec>) -> KeySet {
    KeySet::new(&specs, 0)
}

fn rfc_rsa_public() -> Vec<u8> {
    rsa_der(
        &vector("rfc7515-a2-rs256")["key"]["jwk_public"],
        &["n", "e"],
    )
}

fn rfc_ec_point() -> Vec<u8> {
    let jwk = &vector("rfc7515-a3-es256")["key"]["jwk_public"];
    [vec![4u8], b64(&jwk["x"]), b64(&jwk["y"])].concat()
}

fn verdict(token: &str, keys: &impl KeyLookup) -> Result<(), AuthError> {
    decode_verified(token.as_bytes(), keys, &mut Vec::new()).map(|_| ())
}

#[test]
fn verifies_the_rfc7515_a2_rs256_example() {
    let v = vector("rfc7515-a2-rs256");
    let keys = set(vec![spec(None, Alg::Rs256, rfc_rsa_public())]);
    assert_eq!(verdict(v["token"].as_str().unwrap(), &keys), Ok(()));
    // The same key bound to PS256 refuses the RS256 token: the alg is part of the key.
    let pss = set(vec![spec(None, Alg::Ps256, rfc_rsa_public())]);
    assert_eq!(
        verdict(v["token"].as_str().unwrap(), &pss),
        Err(AuthError::UnsupportedAlgorithm)
    );
}

#[test]
fn verifies_the_rfc7515_a3_es256_example() {
    let v = vector("rfc7515-a3-es256");
    let keys = set(vec![spec(None, Alg::Es256, rfc_ec_point())]);
    assert_eq!(verdict(v["token"].as_str().unwrap(), &keys), Ok(()));
}

#[test]
fn verifies_the_rfc8037_a4_ed25519_signature() {
    let v = vector("rfc8037-a4-ed25519-jws");
    let key = b64(&v["key"]["jwk_public"]["x"]);
    let token = v["token"].as_str().unwrap();
    let (input, signature) = token.rsplit_once('.').unwrap();
    let mut sig = Vec::new();
    decode_into(signature.as_bytes(), &mut sig).unwrap();
    let k = VerificationKey::new(&spec(None, Alg::EdDsa, key.clone()));
    assert!(k.verify(input.as_bytes(), &sig));
    sig[0] ^= 1;
    assert!(!k.verify(input.as_bytes(), &sig));
    // Its payload is not JSON: as a JWT it is malformed, never accepted.
    let keys = set(vec![spec(None, Alg::EdDsa, key)]);
    assert_eq!(verdict(token, &keys), Err(AuthError::MalformedToken));
}

#[test]
fn rs_and_ps_signatures_of_every_hash_verify_with_their_alg_only() {
    let jwk = &vector("rfc7515-a2-rs256")["key"]["jwk_private"];
    let pair = sig::RsaKeyPair::from_der(&rsa_der(jwk, &RSA_PRIVATE)).unwrap();
    let rng = SystemRandom::new();
    let cases: [(Alg, &'static dyn sig::RsaEncoding); 6] = [
        (Alg::Rs256, &sig::RSA_PKCS1_SHA256),
        (Alg::Rs384, &sig::RSA_PKCS1_SHA384),
        (Alg::Rs512, &sig::RSA_PKCS1_SHA512),
        (Alg::Ps256, &sig::RSA_PSS_SHA256),
        (Alg::Ps384, &sig::RSA_PSS_SHA384),
        (Alg::Ps512, &sig::RSA_PSS_SHA512),
    ];
    let keys = set(cases
        .iter()
        .map(|(alg, _)| spec(Some(alg.name()), *alg, rfc_rsa_public()))
        .collect());
    for (alg, encoding) in cases {
        let signer = |input: &[u8]| {
            let mut out = vec![0; pair.public().modulus_len()];
            pair.sign(encoding, &rng, input, &mut out).unwrap();
            out
        };
        let header = format!(r#"{{"alg":"{}","kid":"{}"}}"#, alg.name(), alg.name());
        assert_eq!(
            verdict(&signed(&header, "{}", signer), &keys),
            Ok(()),
            "{}",
            alg.name()
        );
        // The same signature under another RSA alg's kid: refused before any check runs.
        let other = if alg == Alg::Rs256 { "PS256" } else { "RS256" };
        let header = format!(r#"{{"alg":"{}","kid":"{other}"}}"#, alg.name());
        assert_eq!(
            verdict(&signed(&header, "{}", signer), &keys),
            Err(AuthError::UnsupportedAlgorithm)
        );
    }
}

#[test]
fn ecdsa_takes_fixed_width_signatures_only_and_refuses_zero_scalars() {
    let rng = SystemRandom::new();
    for (alg, signing) in [
        (Alg::Es256, &sig::ECDSA_P256_SHA256_FIXED_SIGNING),
        (Alg::Es384, &sig::ECDSA_P384_SHA384_FIXED_SIGNING),
    ] {
        let pkcs8 = sig::EcdsaKeyPair::generate_pkcs8(signing, &rng).unwrap();
        let pair = sig::EcdsaKeyPair::from_pkcs8(signing, pkcs8.as_ref(), &rng).unwrap();
        let keys = set(vec![spec(None, alg, pair.public_key().as_ref().to_vec())]);
        let header = format!(r#"{{"alg":"{}"}}"#, alg.name());
        let fixed = |input: &[u8]| pair.sign(&rng, input).unwrap().as_ref().to_vec();
        assert_eq!(verdict(&signed(&header, "{}", fixed), &keys), Ok(()));
        // The same signature as ASN.1 DER (what OpenSSL writes by default) is refused.
        let der_form = |input: &[u8]| {
            let s = pair.sign(&rng, input).unwrap();
            let (r, s) = s.as_ref().split_at(alg.ec_coordinate_bytes());
            der(0x30, &[der_uint(r), der_uint(s)].concat())
        };
        assert_eq!(
            verdict(&signed(&header, "{}", der_form), &keys),
            Err(AuthError::InvalidSignature)
        );
        // r = s = 0 ("psychic signatures", CVE-2022-21449) and r = s = n - like junk.
        let zeros = |_: &[u8]| vec![0u8; 2 * alg.ec_coordinate_bytes()];
        assert_eq!(
            verdict(&signed(&header, "{}", zeros), &keys),
            Err(AuthError::InvalidSignature)
        );
        let ones = |_: &[u8]| vec![0xffu8; 2 * alg.ec_coordinate_bytes()];
        assert_eq!(
            verdict(&signed(&header, "{}", ones), &keys),
            Err(AuthError::InvalidSignature)
        );
    }
}

#[test]
fn eddsa_and_ed25519_are_separate_algs_over_the_same_key() {
    let rng = SystemRandom::new();
    let pkcs8 = sig::Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
    let pair = sig::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let public = pair.public_key().as_ref().to_vec();
    let signer = |input: &[u8]| pair.sign(input).as_ref().to_vec();
    let keys = set(vec![spec(Some("e"), Alg::EdDsa, public.clone())]);
    assert_eq!(
        verdict(&signed(r#"{"alg":"EdDSA"}"#, "{}", signer), &keys),
        Ok(())
    );
    assert_eq!(
        verdict(&signed(r#"{"alg":"Ed25519"}"#, "{}", signer), &keys),
        Err(AuthError::UnsupportedAlgorithm)
    );
    let keys = set(vec![spec(None, Alg::Ed25519, public)]);
    assert_eq!(
        verdict(&signed(r#"{"alg":"Ed25519"}"#, "{}", signer), &keys),
        Ok(())
    );
}

#[test]
fn an_rsa_public_key_never_serves_as_an_hmac_secret() {
    // RS256 -> HS256 confusion: the attacker MACs with the public key's bytes (PEM or DER).
    let v = vector("rfc7515-a2-rs256");
    let public = rfc_rsa_public();
    let keys = set(vec![spec(Some("rsa"), Alg::Rs256, public.clone())]);
    let pem = v["key"]["pkcs1_pem"].as_str().unwrap().as_bytes().to_vec();
    for secret in [public, pem] {
        let mac = |input: &[u8]| HmacKey::new(&secret).sign(input).as_ref().to_vec();
        for header in [r#"{"alg":"HS256"}"#, r#"{"alg":"HS256","kid":"rsa"}"#] {
            assert_eq!(
                verdict(&signed(header, "{}", mac), &keys),
                Err(AuthError::UnsupportedAlgorithm),
                "{header}"
            );
        }
    }
}

#[test]
fn an_hmac_keys_kid_on_an_rs256_token_is_refused() {
    let keys = set(vec![
        spec(Some("hmac"), Alg::Hs256, vec![7; 32]),
        spec(Some("rsa"), Alg::Rs256, rfc_rsa_public()),
    ]);
    let mac = |input: &[u8]| HmacKey::new(&[7; 32]).sign(input).as_ref().to_vec();
    assert_eq!(
        verdict(&signed(r#"{"alg":"RS256","kid":"hmac"}"#, "{}", mac), &keys),
        Err(AuthError::UnsupportedAlgorithm)
    );
    assert_eq!(
        verdict(&signed(r#"{"alg":"HS256","kid":"hmac"}"#, "{}", mac), &keys),
        Ok(())
    );
}

#[test]
fn a_kid_must_name_a_key_and_hostile_kids_are_just_unknown() {
    let keys = set(vec![spec(Some("a"), Alg::Hs256, vec![1; 32])]);
    let mac = |input: &[u8]| HmacKey::new(&[1; 32]).sign(input).as_ref().to_vec();
    for kid in ["../../etc/passwd", "' OR 1=1 --", "b", "A", "a\u{0}", ""] {
        let header = serde_json::json!({ "alg": "HS256", "kid": kid }).to_string();
        assert_eq!(
            verdict(&signed(&header, "{}", mac), &keys),
            Err(AuthError::UnknownKey),
            "{kid}"
        );
    }
    // A kid-less key answers a kid-less token of its alg, never a token that names a kid.
    let bare = set(vec![spec(None, Alg::Hs256, vec![1; 32])]);
    assert_eq!(
        verdict(&signed(r#"{"alg":"HS256"}"#, "{}", mac), &bare),
        Ok(())
    );
    assert_eq!(
        verdict(&signed(r#"{"alg":"HS256","kid":"a"}"#, "{}", mac), &bare),
        Err(AuthError::UnknownKey)
    );
    let one = HmacKey::new(&[1; 32]);
    assert_eq!(
        verdict(&signed(r#"{"alg":"HS256","kid":"a"}"#, "{}", mac), &one),
        Err(AuthError::UnknownKey)
    );
}

#[test]
fn without_kid_exactly_one_key_of_the_alg_is_accepted() {
    let mac = |input: &[u8]| HmacKey::new(&[1; 32]).sign(input).as_ref().to_vec();
    let two = set(vec![
        spec(Some("a"), Alg::Hs256, vec![1; 32]),
        spec(Some("b"), Alg::Hs256, vec![2; 32]),
    ]);
    assert_eq!(
        verdict(&signed(r#"{"alg":"HS256"}"#, "{}", mac), &two),
        Err(AuthError::UnknownKey)
    );
    // The standard header takes the same path as any other spelling of it.
    let standard = format!(
        "{}.{}",
        crate::jwt::header::STANDARD_HEADER_B64,
        encode(b"{}")
    );
    let standard = format!("{standard}.{}", encode(mac(standard.as_bytes()).as_ref()));
    assert_eq!(verdict(&standard, &two), Err(AuthError::UnknownKey));
    assert_eq!(
        verdict(&signed(r#"{"alg":"HS256","kid":"a"}"#, "{}", mac), &two),
        Ok(())
    );
    let none = set(vec![spec(None, Alg::Es256, rfc_ec_point())]);
    assert_eq!(
        verdict(&standard, &none),
        Err(AuthError::UnsupportedAlgorithm)
    );
    let one = set(vec![
        spec(Some("x"), Alg::Es256, rfc_ec_point()),
        spec(Some("a"), Alg::Hs256, vec![1; 32]),
    ]);
    assert_eq!(verdict(&standard, &one), Ok(()));
}

#[test]
fn none_and_unknown_algs_are_unsupported() {
    let keys = set(vec![spec(None, Alg::Hs256, vec![1; 32])]);
    for header in [
        r#"{"alg":"none"}"#,
        r#"{"alg":"ES512"}"#,
        r#"{"alg":"HS256 "}"#,
    ] {
        assert_eq!(
            verdict(&signed(header, "{}", |_| Vec::new()), &keys),
            Err(AuthError::UnsupportedAlgorithm),
            "{header}"
        );
    }
}

#[test]
fn hmac_384_and_512_verify_with_their_own_hash() {
    for (alg, h) in [
        (Alg::Hs384, ring::hmac::HMAC_SHA384),
        (Alg::Hs512, ring::hmac::HMAC_SHA512),
    ] {
        let secret = vec![9u8; alg.hash_bytes()];
        let key = ring::hmac::Key::new(h, &secret);
        let mac = |input: &[u8]| ring::hmac::sign(&key, input).as_ref().to_vec();
        let keys = set(vec![spec(None, alg, secret.clone())]);
        let header = format!(r#"{{"alg":"{}"}}"#, alg.name());
        assert_eq!(verdict(&signed(&header, "{}", mac), &keys), Ok(()));
        let short = |input: &[u8]| mac(input)[..32].to_vec();
        assert_eq!(
            verdict(&signed(&header, "{}", short), &keys),
            Err(AuthError::InvalidSignature)
        );
    }
}

#[test]
fn validation_names_the_key_and_refuses_weak_or_duplicate_keys() {
    let raw = |kid: Option<&str>, alg: &str, key: Vec<u8>| {
        (kid.map(str::to_owned), alg.to_owned(), Secret::new(key))
    };
    let range = |r: Result<Vec<KeySpec>, ArgError>| match r {
        Err(ArgError::Range(m)) => m,
        other => panic!("{other:?}"),
    };
    let m = range(validate_specs(
        vec![raw(Some("k"), "ES512", vec![4; 133])],
        "config.keys",
        false,
    ));
    assert_eq!(
        m,
        r#"config.keys[0] (kid "k"): unsupported algorithm "ES512""#
    );
    let m = range(validate_specs(
        vec![raw(None, "HS512", vec![1; 63])],
        "config.keys",
        false,
    ));
    assert!(
        m.starts_with("config.keys[0]: an HS512 secret must be at least 64 bytes"),
        "{m}"
    );
    assert!(validate_specs(vec![raw(None, "HS512", vec![1; 63])], "keys", true).is_ok());
    let duplicate = validate_specs(
        vec![
            raw(Some("a"), "HS256", vec![1; 32]),
            raw(Some("a"), "HS384", vec![1; 48]),
        ],
        "keys",
        false,
    );
    assert_eq!(
        duplicate.unwrap_err(),
        ArgError::DuplicateKid(r#"keys[1] (kid "a"): duplicate kid"#.into())
    );
    let m = range(validate_specs(
        vec![raw(None, "ES256", vec![4; 97])],
        "keys",
        false,
    ));
    assert!(m.contains("uncompressed point"), "{m}");
    assert!(validate_specs(Vec::new(), "keys", false).is_err());
    let many = (0..=MAX_KEYS)
        .map(|_| raw(None, "HS256", vec![1; 32]))
        .collect();
    assert!(validate_specs(many, "keys", false).is_err());
}

#[test]
fn jwks_lists_the_asymmetric_keys_only() {
    let keys = set(vec![
        spec(Some("h"), Alg::Hs256, vec![1; 32]),
        spec(Some("r"), Alg::Rs256, rfc_rsa_public()),
        spec(None, Alg::Es256, rfc_ec_point()),
    ]);
    let jwks = keys.public_jwks();
    assert_eq!(jwks.len(), 2);
    let rsa = &vector("rfc7515-a2-rs256")["key"]["jwk_public"];
    assert_eq!(jwks[0].n.as_deref(), rsa["n"].as_str());
    assert_eq!(jwks[0].kid.as_deref(), Some("r"));
    let ec = &vector("rfc7515-a3-es256")["key"]["jwk_public"];
    assert_eq!(jwks[1].x.as_deref(), ec["x"].as_str());
    assert_eq!(jwks[1].y.as_deref(), ec["y"].as_str());
}

#[test]
fn refuses_key_material_as_an_hmac_key_naming_the_key() {
    let spec = |alg: &str, key: &[u8]| (Some("k".to_owned()), alg.to_owned(), Secret::from(key));
    let pem = b"-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIUJ0000000000000000000000000000000000000000000\n-----END CERTIFICATE-----\n";
    for alg in ["HS256", "HS384", "HS512"] {
        let refused = validate_specs(vec![spec(alg, pem)], "keys", false);
        assert_eq!(
            refused,
            Err(ArgError::Value(crate::contract::messages::secret_is_pem(
                r#"keys[0] (kid "k")"#
            ))),
            "{alg}"
        );
    }
    let jwks = br#"{"keys":[{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB"}]}"#;
    let refused = validate_specs(vec![spec("HS256", jwks)], "config.keys", false);
    assert!(
        matches!(&refused, Err(ArgError::Value(m)) if m.starts_with(r#"config.keys[0] (kid "k") holds a JWK or JWK Set"#)),
        "{refused:?}"
    );
    assert!(validate_specs(vec![spec("HS256", &[0x2d; 48])], "keys", false).is_ok());
}
