//! PHC string parsing: hostile stored hashes are refused without panics or huge allocations.
#![no_main]

use auth_shield::internals::password::{needs_rehash, parse, Costs, MAX_PARALLELISM};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|encoded: &str| {
    if let Ok(decoded) = parse(encoded) {
        assert!(decoded.params.lanes() <= MAX_PARALLELISM);
        let _ = needs_rehash(&decoded, Costs::default());
    }
});
