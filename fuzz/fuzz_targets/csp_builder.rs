//! CSP builder fed arbitrary directive names and sources: the header value never gains a
//! directive, a policy or a line the caller did not ask for.
#![no_main]

use auth_shield::internals::csp::{normalize_source, Policy};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Op {
    Set(String, Vec<String>),
    Add(String, String),
    Nonce(String),
}

fuzz_target!(|ops: Vec<Op>| {
    let mut policy = Policy::default();
    for op in ops.into_iter().take(64) {
        let _ = match op {
            Op::Set(name, sources) => policy.set(&name, &sources),
            Op::Add(name, source) => match normalize_source(&source) {
                Ok(source) => policy.add(&name, source),
                Err(e) => Err(e),
            },
            Op::Nonce(name) => policy.nonce(&name).map(|_| ()),
        };
    }
    let header = policy.build();
    assert!(
        header
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_control() && b != b','),
        "unsafe header value {header:?}"
    );
    for directive in header.split("; ") {
        let name = directive.split(' ').next().unwrap_or_default();
        assert!(
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
            "bad directive {directive:?} in {header:?}"
        );
        assert!(!directive.contains(';'));
    }
});
