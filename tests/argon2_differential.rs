//! `argon2-rust` (the engine behind `hashPassword`) against RustCrypto `argon2`, an independent
//! implementation, on every SIMD backend this CPU can run.
//!
//! `argon2-rust` picks its block-fill backend at run time (AVX-512 > AVX2 > SSE2 on x86-64,
//! NEON on aarch64, scalar otherwise) and each backend is its own block of `unsafe` intrinsics.
//! A production host only ever exercises the one it detects, so each available backend is
//! forced here through the crate's `internal-api` `hash_with_backend` and checked over random
//! passwords, salts, secrets (our pepper), costs, tag lengths, variants and versions.
//!
//! `ARGON2_DIFF_CASES` sets the cases per backend (default 128). `ARGON2_REQUIRE_BACKENDS`
//! (comma-separated names, e.g. `neon` under qemu) fails the test when a named backend is not
//! available, so a run meant to cover it cannot skip it silently.

use argon2_rust::__internal::hash_with_backend;
use argon2_rust::params::{Memory, TagLen};
use argon2_rust::{Algorithm, Argon2, Backend, Params, Version};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::Cell;

#[derive(Debug, Clone)]
struct Case {
    algorithm: Algorithm,
    version: Version,
    m_kib: u32,
    t: u32,
    p: u32,
    tag_len: usize,
    password: Vec<u8>,
    salt: Vec<u8>,
    secret: Vec<u8>,
}

/// Costs stay small (at most 8 p + 256 KiB, 3 passes) so a debug build and qemu finish in
/// seconds; tags past 64 bytes take BLAKE2b's long-output path (H').
fn cases() -> impl Strategy<Value = Case> {
    (
        prop_oneof![
            Just(Algorithm::Argon2d),
            Just(Algorithm::Argon2i),
            Just(Algorithm::Argon2id)
        ],
        prop_oneof![Just(Version::V0x10), Just(Version::V0x13)],
        1u32..=4,
        0u32..=256,
        1u32..=3,
        4usize..=96,
        proptest::collection::vec(any::<u8>(), 0..=64),
        proptest::collection::vec(any::<u8>(), 8..=32),
        proptest::collection::vec(any::<u8>(), 0..=32),
    )
        .prop_map(
            |(algorithm, version, p, extra_kib, t, tag_len, password, salt, secret)| Case {
                algorithm,
                version,
                m_kib: 8 * p + extra_kib,
                t,
                p,
                tag_len,
                password,
                salt,
                secret,
            },
        )
}

fn reference(case: &Case) -> Vec<u8> {
    let algorithm = match case.algorithm {
        Algorithm::Argon2d => argon2::Algorithm::Argon2d,
        Algorithm::Argon2i => argon2::Algorithm::Argon2i,
        Algorithm::Argon2id => argon2::Algorithm::Argon2id,
    };
    let version = match case.version {
        Version::V0x10 => argon2::Version::V0x10,
        Version::V0x13 => argon2::Version::V0x13,
    };
    let params = argon2::Params::new(case.m_kib, case.t, case.p, Some(case.tag_len))
        .expect("reference params");
    let hasher = argon2::Argon2::new_with_secret(&case.secret, algorithm, version, params)
        .expect("reference secret");
    let mut out = vec![0u8; case.tag_len];
    hasher
        .hash_password_into(&case.password, &case.salt, &mut out)
        .expect("reference hash");
    out
}

fn params_of(case: &Case) -> Params {
    Params::builder()
        .memory(Memory::kib(u64::from(case.m_kib)))
        .passes(case.t)
        .lanes(case.p)
        .tag_len(TagLen::bytes(case.tag_len as u64))
        .build()
        .expect("argon2-rust params")
}

fn cases_per_backend() -> u32 {
    std::env::var("ARGON2_DIFF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128)
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: cases_per_backend(),
        failure_persistence: None,
        ..Config::default()
    })
}

/// The backends compiled for this target that this CPU executes (wasm's is compile-time only).
fn available_backends() -> Vec<Backend> {
    Backend::ALL
        .iter()
        .copied()
        .filter(|b| *b != Backend::Wasm128 && b.is_available())
        .collect()
}

#[test]
fn every_available_simd_backend_matches_rustcrypto_argon2() {
    let backends = available_backends();
    let names: Vec<&str> = backends.iter().map(|b| b.name()).collect();
    if let Ok(required) = std::env::var("ARGON2_REQUIRE_BACKENDS") {
        for name in required.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            assert!(
                names.contains(&name),
                "ARGON2_REQUIRE_BACKENDS names {name}, but this CPU offers only {names:?}"
            );
        }
    }
    assert!(backends.contains(&Backend::Scalar));
    #[cfg(target_arch = "x86_64")]
    assert!(
        backends.contains(&Backend::Sse2),
        "SSE2 is baseline on x86-64"
    );

    for backend in backends {
        let mut runner = runner();
        let count = Cell::new(0u32);
        let outcome = runner.run(&cases(), |case| {
            count.set(count.get() + 1);
            let mut out = vec![0u8; case.tag_len];
            // SAFETY: `backend` came from `available_backends`, which keeps only backends whose
            // `is_available()` (the crate's CPU feature probe) is true on this CPU.
            unsafe {
                hash_with_backend(
                    backend,
                    case.algorithm,
                    case.version,
                    &params_of(&case),
                    &case.password,
                    &case.salt,
                    &case.secret,
                    &[],
                    &mut out,
                )
            }
            .map_err(|e| TestCaseError::fail(format!("argon2-rust {backend}: {e:?}")))?;
            prop_assert_eq!(&out, &reference(&case), "backend {} on {:?}", backend, case);
            Ok(())
        });
        if let Err(failure) = outcome {
            panic!("backend {backend}: {failure}");
        }
        // Printed for the record (`-- --nocapture`): the per-backend counts go in the notes.
        println!(
            "argon2 differential: backend {backend}: {} cases match RustCrypto argon2",
            count.get()
        );
    }
}

/// The safe entry point the helpers call (detected backend, worker threads for p > 1).
#[test]
fn the_public_api_on_the_detected_backend_matches_rustcrypto_argon2() {
    let mut runner = runner();
    let count = Cell::new(0u32);
    let outcome = runner.run(&cases(), |case| {
        count.set(count.get() + 1);
        let mut out = vec![0u8; case.tag_len];
        Argon2::new(case.algorithm, case.version, params_of(&case))
            .hash_into_with_ad(&case.password, &case.salt, &case.secret, &[], &mut out)
            .map_err(|e| TestCaseError::fail(format!("argon2-rust: {e:?}")))?;
        prop_assert_eq!(&out, &reference(&case), "{:?}", case);
        Ok(())
    });
    if let Err(failure) = outcome {
        panic!(
            "detected backend {}: {failure}",
            argon2_rust::detected_backend()
        );
    }
    println!(
        "argon2 differential: public API on {}: {} cases match",
        argon2_rust::detected_backend(),
        count.get()
    );
}
