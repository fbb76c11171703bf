//! Bad input from the caller (not from a client request): options and claims to sign.

/// The binding throws `Type` as a `TypeError` and `Range` as a `RangeError`; every message
/// names the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// The wrong kind of value, or a field that is not allowed.
    Type(String),
    /// A value of the right kind that is not accepted.
    Range(String),
}

impl InputError {
    pub fn message(&self) -> &str {
        match self {
            InputError::Type(m) | InputError::Range(m) => m,
        }
    }
}
