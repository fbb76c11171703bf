//! SQL interval validation: only canonical "<n> <unit>" text ever comes out, and it is stable.
#![no_main]

use auth_shield::internals::sql_interval::canonical;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &str| {
    if let Ok(out) = canonical(input) {
        assert!(
            out.bytes().all(|b| b.is_ascii_alphanumeric() || b == b' '),
            "{out:?}"
        );
        assert_eq!(canonical(&out).ok().as_deref(), Some(out.as_str()));
    }
});
