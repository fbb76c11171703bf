//! DPoP proofs (RFC 9449 §4.3) on hostile input: the proof, method, URL and token bytes, with
//! and without server nonces. Never a panic; whatever passes has a 43-character thumbprint,
//! and `htu::normalize` is idempotent on what it accepts.
#![no_main]

use auth_shield::internals::{check_proof, htu, NonceKey, ProofAlgs, SenderContext};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    proof: Option<Vec<u8>>,
    method: Option<Vec<u8>>,
    url: Option<Vec<u8>>,
    token: Vec<u8>,
    now: u32,
    window: u16,
    nonces: bool,
    /// Which algorithms are allowed: all asymmetric ones, or only ES256 (`dpopAlgorithms`).
    es256_only: bool,
}

fuzz_target!(|input: Input| {
    let sender = SenderContext {
        dpop: input.proof.as_deref(),
        method: input.method.as_deref(),
        url: input.url.as_deref(),
        ..SenderContext::default()
    };
    let nonces = NonceKey::new(b"fuzz-nonce-secret-0123456789abcdef", 60.0);
    let window = f64::from(input.window.max(1));
    let algs = if input.es256_only {
        ProofAlgs::from_names(&["ES256".to_owned()])
    } else {
        ProofAlgs::from_names(&[])
    };
    let verdict = check_proof(
        &sender,
        &input.token,
        f64::from(input.now),
        window,
        algs,
        input.nonces.then_some(&nonces),
    );
    if let Ok(proof) = verdict {
        assert_eq!(proof.thumbprint.len(), 43);
    }
    if let Some(url) = &input.url {
        if let Some(once) = htu::normalize(url) {
            assert_eq!(
                htu::normalize(once.as_bytes()).as_deref(),
                Some(once.as_str())
            );
        }
    }
});
