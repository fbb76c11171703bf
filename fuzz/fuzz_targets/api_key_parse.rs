//! API key parsing and stored-hash decoding on hostile input; generated keys always parse.
#![no_main]

use auth_shield::internals::api_key::{decode_stored_hash, generate, lookup_hash, parse, verify};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

const SECRET: &[u8] = b"api-key-fuzz-secret!";

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    key: &'a str,
    stored: &'a str,
    prefix: &'a str,
}

fuzz_target!(|input: Input| {
    if let Ok(prefix) = parse(input.key) {
        assert!(input.key.starts_with(prefix));
    }
    // The lookup value exists exactly for keys that parse.
    assert_eq!(
        lookup_hash(input.key, SECRET)
            .expect("secret is long enough")
            .is_some(),
        parse(input.key).is_ok()
    );
    let stored = decode_stored_hash(input.stored).unwrap_or([0; 32]);
    // A random key never matches a stored hash it was not made from.
    assert_eq!(verify(input.key, &stored, SECRET).ok(), Some(false));
    if let Ok(generated) = generate(input.prefix, SECRET) {
        assert_eq!(parse(&generated.key), Ok(input.prefix));
        let stored = decode_stored_hash(&generated.hash).expect("own hash decodes");
        assert_eq!(verify(&generated.key, &stored, SECRET).ok(), Some(true));
        assert_eq!(
            lookup_hash(&generated.key, SECRET).ok().flatten(),
            Some(generated.hash)
        );
    }
});
