//! Bad input from the caller (not from a client request): options and claims to sign.

/// The binding throws `Type` as a `TypeError` and `Range` as a `RangeError`; every message
/// names the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// The wrong kind of value, or a field that is not allowed.
    Type(String),
    /// A value of the right kind that is not accepted.
    Range(String),
    /// Two keys with one `kid` (the `signingKey`'s included): a `RangeError` with code
    /// `ERR_AUTH_SHIELD_DUPLICATE_KID`, as the JS engine throws.
    DuplicateKid(String),
}

impl InputError {
    pub fn message(&self) -> &str {
        match self {
            InputError::Type(m) | InputError::Range(m) | InputError::DuplicateKid(m) => m,
        }
    }
}
