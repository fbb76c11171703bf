//! Key selection over arbitrary headers: a key set of several algorithms (HMAC with and without
//! kid, Ed25519, ES256), tokens with arbitrary header JSON and signatures. Properties: nothing
//! panics; a token verifies only with an HMAC tag made by the key its header selects (random
//! signatures never pass an asymmetric key); and the verdict never depends on key order
//! being tried in turn (a second kid-less HS256 key makes kid-less HS256 tokens ambiguous).
#![no_main]

use auth_shield::internals::AuthError;
use auth_shield::internals::base64url::encode;
use auth_shield::internals::{decode_verified, Alg, HmacKey, KeySet, KeySpec};
use auth_shield::internals::Secret;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    header: Vec<u8>,
    payload: Vec<u8>,
    signature: Vec<u8>,
    /// Which HMAC key tags the token (0: "h1", 1: the kid-less one, else the raw signature).
    tag_with: u8,
}

const H1: &[u8] = b"fuzz-hmac-key-one-fuzz-hmac-key-one!";
const H0: &[u8] = b"fuzz-hmac-key-zero-fuzz-hmac-key-zero";
/// RFC 7515 A.3's P-256 public key.
const EC_POINT: [u8; 65] = [
    4, 127, 205, 206, 39, 112, 246, 196, 93, 65, 131, 203, 238, 111, 219, 75, 123, 88, 7, 51, 53,
    123, 233, 239, 19, 186, 207, 110, 60, 123, 209, 84, 69, 199, 241, 68, 205, 27, 189, 155, 126,
    135, 44, 223, 237, 185, 238, 185, 244, 179, 105, 93, 110, 169, 11, 36, 173, 138, 70, 35, 40,
    133, 136, 229, 173,
];

fn spec(kid: Option<&str>, alg: Alg, key: &[u8]) -> KeySpec {
    KeySpec {
        kid: kid.map(str::to_owned),
        alg,
        key: Secret::from(key),
    }
}

fuzz_target!(|input: Input| {
    let keys = KeySet::new(
        &[
            spec(Some("h1"), Alg::Hs256, H1),
            spec(None, Alg::Hs384, &[7; 48]),
            spec(Some("ed"), Alg::EdDsa, &[9; 32]),
            spec(Some("ec"), Alg::Es256, &EC_POINT),
        ],
        0,
    );
    let input_text = format!("{}.{}", encode(&input.header), encode(&input.payload));
    let signature = match input.tag_with {
        0 => HmacKey::new(H1).sign(input_text.as_bytes()).as_ref().to_vec(),
        1 => HmacKey::new(H0).sign(input_text.as_bytes()).as_ref().to_vec(),
        _ => input.signature.clone(),
    };
    let token = format!("{input_text}.{}", encode(&signature));
    let mut scratch = Vec::new();
    let verdict = decode_verified(token.as_bytes(), &keys, &mut scratch).map(|_| ());
    if verdict.is_ok() {
        // Only the "h1" key can have made an accepted signature: the raw signatures are random,
        // and H0 is not in this set.
        assert_eq!(input.tag_with, 0, "accepted {token}");
    }
    // Adding a second kid-less HS256 key (H0) may only turn an acceptance of a kid-less HS256
    // token into unknown_key; tokens naming a kid get the same verdict.
    let mut wider = vec![
        spec(Some("h1"), Alg::Hs256, H1),
        spec(None, Alg::Hs384, &[7; 48]),
        spec(Some("ed"), Alg::EdDsa, &[9; 32]),
        spec(Some("ec"), Alg::Es256, &EC_POINT),
    ];
    wider.push(spec(None, Alg::Hs256, H0));
    let wider = KeySet::new(&wider, 0);
    let again = decode_verified(token.as_bytes(), &wider, &mut scratch).map(|_| ());
    if again != verdict {
        assert!(
            again == Err(AuthError::UnknownKey) || (input.tag_with == 1 && again.is_ok()),
            "{verdict:?} -> {again:?} for {token}"
        );
    }
});
