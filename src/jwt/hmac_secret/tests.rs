use super::*;
use proptest::prelude::*;

/// contract/vectors/hmac_secret_key_material.json: the cases the JS twin runs too
/// (__test__/core/public-key-secrets.test.js).
fn vectors() -> Vec<(String, Vec<u8>, Option<KeyMaterial>)> {
    let text = include_str!("../../../contract/vectors/hmac_secret_key_material.json");
    let doc: serde_json::Value = serde_json::from_str(text).unwrap();
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let bytes = match (case["utf8"].as_str(), case["hex"].as_str()) {
                (Some(text), None) => text.as_bytes().to_vec(),
                (None, Some(hex)) => (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect(),
                _ => panic!("a case is utf8 or hex: {case}"),
            };
            let material = match case["material"].as_str() {
                Some("pem") => Some(KeyMaterial::Pem),
                Some("jwk") => Some(KeyMaterial::Jwk),
                None => None,
                Some(other) => panic!("unknown material {other}"),
            };
            (case["name"].as_str().unwrap().to_owned(), bytes, material)
        })
        .collect()
}

#[test]
fn decides_every_shared_vector() {
    let cases = vectors();
    assert!(cases.len() > 30);
    assert!(cases.iter().any(|c| c.2.is_none()));
    for (name, bytes, material) in cases {
        assert_eq!(key_material(&bytes), material, "{name}");
    }
}

#[test]
fn refuses_key_material_with_a_message_that_names_the_fix() {
    let pem = b"-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n";
    let Err(ArgError::Value(m)) = check_hmac_secret(pem, "config.accessSecret") else {
        panic!("a PEM passed");
    };
    assert!(
        m.starts_with("config.accessSecret holds a PEM block"),
        "{m}"
    );
    assert!(m.contains("keys: [{ alg: 'RS256', publicKey }]"), "{m}");
    assert!(m.contains("createRemoteJwks"), "{m}");
    let Err(ArgError::Value(m)) = check_hmac_secret(br#"{"kty":"EC"}"#, "keys[0]") else {
        panic!("a JWK passed");
    };
    assert!(m.starts_with("keys[0] holds a JWK or JWK Set"), "{m}");
    assert_eq!(check_hmac_secret(&[7; 32], "config.accessSecret"), Ok(()));
}

#[test]
fn a_member_name_at_the_end_is_no_member() {
    assert_eq!(key_material(br#"abc "kty""#), None);
    assert_eq!(key_material(br#"abc "kty"  "#), None);
    assert_eq!(key_material(br#""kty" "kty":"#), Some(KeyMaterial::Jwk));
    assert_eq!(key_material(b"-----BEGI"), None);
    assert_eq!(key_material(b""), None);
}

proptest! {
    /// Random secrets are never refused unless they hold one of the markers (which random
    /// bytes of these lengths all but never do).
    #[test]
    fn random_secrets_pass(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let marked = bytes.windows(PEM_BOUNDARY.len()).any(|w| w == PEM_BOUNDARY)
            || bytes.windows(5).any(|w| w == b"\"kty\"")
            || bytes.windows(6).any(|w| w == b"\"keys\"");
        prop_assume!(!marked);
        prop_assert_eq!(key_material(&bytes), None);
    }

    /// A PEM boundary anywhere, after any bytes, makes the secret a PEM.
    #[test]
    fn a_pem_boundary_anywhere_is_refused(
        before in proptest::collection::vec(any::<u8>(), 0..300),
        after in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        let mut bytes = before;
        bytes.extend_from_slice(b"-----BEGIN CERTIFICATE-----");
        bytes.extend_from_slice(&after);
        prop_assert_eq!(key_material(&bytes), Some(KeyMaterial::Pem));
    }

    /// A `"kty"` member with any JSON whitespace before its colon is a JWK.
    #[test]
    fn a_kty_member_is_refused(
        before in "[ -~]{0,64}",
        space in "[ \t\r\n]{0,8}",
    ) {
        prop_assume!(!before.contains("-----BEGIN"));
        let text = format!("{before}\"kty\"{space}:\"RSA\"");
        prop_assert_eq!(key_material(text.as_bytes()), Some(KeyMaterial::Jwk));
    }
}
