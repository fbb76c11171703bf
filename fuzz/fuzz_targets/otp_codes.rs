//! HOTP/TOTP code checks on hostile input: base32 secrets, codes as text or as JSON numbers.
//! A generated code always verifies (also when sent as a number); junk never panics.
#![no_main]

use auth_shield::internals::totp::{
    code_from_number, decode_base32, hotp, verify_range, OtpAlgorithm,
};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    secret_b32: &'a str,
    secret: &'a [u8],
    code: &'a str,
    number: f64,
    digits: u8,
    counter: u64,
    alg: u8,
}

fuzz_target!(|input: Input| {
    let _ = decode_base32(input.secret_b32);
    let digits = 6 + u32::from(input.digits % 3);
    let alg = [
        OtpAlgorithm::Sha1,
        OtpAlgorithm::Sha256,
        OtpAlgorithm::Sha512,
    ][usize::from(input.alg % 3)];
    let counter = input.counter % (1 << 53);
    let _ = verify_range(
        input.secret,
        input.code,
        counter,
        counter.saturating_add(2),
        digits,
        alg,
    );
    if let Some(code) = code_from_number(input.number, digits) {
        assert_eq!(code.len(), digits as usize);
        assert!(code.bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(code.parse::<f64>().ok(), Some(input.number.abs()));
    }
    let expected = hotp(input.secret, counter, digits, alg);
    assert_eq!(
        verify_range(input.secret, &expected, counter, counter, digits, alg),
        Some(counter)
    );
    let as_number: f64 = expected.parse().expect("codes are digits");
    assert_eq!(code_from_number(as_number, digits), Some(expected));
});
