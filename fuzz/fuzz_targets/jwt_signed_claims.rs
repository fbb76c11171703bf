//! Structure, header and claims parsing behind a valid MAC, and the single-byte-mutation
//! property: no token that differs from a valid one in one byte may verify.
#![no_main]

use auth_shield::internals::AuthError;
use auth_shield::internals::base64url::encode;
use auth_shield::internals::{decode_verified, ClaimRules, HmacKey, TokenKind};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    header: Vec<u8>,
    payload: Vec<u8>,
    /// Also decoded as a raw, unsigned compact token.
    raw: Vec<u8>,
    mutate_at: usize,
    mutate_to: u8,
    now: u32,
}

fuzz_target!(|input: Input| {
    let key = HmacKey::new(b"fuzz-secret-fuzz-secret-fuzz-secret!");
    let mut scratch = Vec::new();

    // Random bytes never carry our MAC.
    if let Ok(_claims) = decode_verified(&input.raw, &key, &mut scratch) {
        panic!(
            "unsigned token verified: {:?}",
            String::from_utf8_lossy(&input.raw)
        );
    }

    let signing_input = format!("{}.{}", encode(&input.header), encode(&input.payload));
    let tag = key.sign(signing_input.as_bytes());
    let token = format!("{signing_input}.{}", encode(tag.as_ref()));

    let rules = ClaimRules {
        issuers: vec!["iss".into()],
        audiences: vec!["aud".into()],
        clock_tolerance_sec: 5.0,
        require_expiration: true,
        require_subject: true,
        require_token_type: false,
        expected_type: TokenKind::Access,
        required_scopes: vec!["read".into(), "write:all".into()],
        access_token_profile: true,
        required_acr: vec!["mfa".into()],
        max_auth_age_sec: Some(300.0),
    };
    let verdict = decode_verified(token.as_bytes(), &key, &mut scratch)
        .and_then(|claims| rules.validate(&claims, input.now as f64).map(|()| ()));
    // A correctly signed token is never refused for its signature or its shape on the wire.
    assert_ne!(verdict, Err(AuthError::InvalidSignature));

    if verdict.is_ok() {
        let mut mutated = token.clone().into_bytes();
        let at = input.mutate_at % mutated.len();
        if mutated[at] != input.mutate_to {
            mutated[at] = input.mutate_to;
            let mut scratch = Vec::new();
            let again = decode_verified(&mutated, &key, &mut scratch);
            assert!(
                again.is_err(),
                "mutation at {at} to {:#x} still verifies: {:?}",
                input.mutate_to,
                String::from_utf8_lossy(&mutated)
            );
        }
    }
});
