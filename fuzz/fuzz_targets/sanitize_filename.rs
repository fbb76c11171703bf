//! Filename sanitizer: the result is always one safe, bounded path component.
#![no_main]

use auth_shield::internals::sanitize_filename::sanitize;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    name: &'a str,
    drop_refused: bool,
    max_bytes: u8,
}

fuzz_target!(|input: Input| {
    let max = 16 + (input.max_bytes as usize % 240);
    let replacement = if input.drop_refused { "" } else { "_" };
    let out = sanitize(input.name, replacement, max);
    assert!(!out.is_empty(), "empty result for {:?}", input.name);
    assert!(out.len() <= max, "{} bytes > {max}", out.len());
    assert!(out != "." && out != "..");
    assert!(!out.ends_with('.') && !out.ends_with(' '), "{out:?}");
    assert!(
        !out.chars()
            .any(|c| c.is_control() || "/\\<>:\"|?*".contains(c)),
        "refused character kept in {out:?}"
    );
});
