//! Why a call from the caller (not a client request) throws, as data: pure Rust, so the core
//! and the helpers stay free of napi and testable with `cargo test`. Two types, one per class:
//!
//! - [`ArgError`]: a bad argument or option (config, claims to sign, helper arguments), with
//!   Node's own argument codes;
//! - [`CallError`]: what any export throws: a JS class, a stable `code` and a short message. An
//!   `ArgError` becomes one through `From` (the one place its codes are written); the others are
//!   misuse (`ERR_AUTH_SHIELD_*`: the arguments are fine, the configuration is not), a helper's
//!   own format codes (`ERR_INVALID_HASH`, ...), an abort, or a failure of the machine.
//!
//! Authentication failures are not throws: they are results ([`crate::error::AuthError`]).
//! `src/binding/js_error.rs` turns a `CallError` into a real `TypeError` / `RangeError` /
//! `Error` carrying `code` (thrown by sync exports, the rejection of Promise exports), the way
//! Node's own argument validation behaves.

use std::fmt;

use crate::contract::messages;

/// A bad argument or option; every message names the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgError {
    /// The wrong kind of value, or a field that is not allowed: a `TypeError`
    /// `ERR_INVALID_ARG_TYPE`.
    Type(String),
    /// The right kind of value in a form we refuse: a `TypeError` `ERR_INVALID_ARG_VALUE`.
    Value(String),
    /// A value of the right kind outside its bounds (numbers, lengths, size caps): a
    /// `RangeError` `ERR_OUT_OF_RANGE`.
    Range(String),
    /// Two keys with one `kid` (the `signingKey`'s included): a `RangeError`
    /// `ERR_AUTH_SHIELD_DUPLICATE_KID`, as the JS engine throws.
    DuplicateKid(String),
}

impl ArgError {
    /// `name` is not a string (`mustBeString` of contract/messages.json, as in the JS engine).
    pub fn not_string(name: &str) -> Self {
        Self::Type(messages::must_be_string(name))
    }

    /// `name` is not a number (`mustBeNumber`).
    pub fn not_number(name: &str) -> Self {
        Self::Type(messages::must_be_number(name))
    }

    /// `name` is not a boolean (`mustBeBoolean`).
    pub fn not_boolean(name: &str) -> Self {
        Self::Type(messages::must_be_boolean(name))
    }

    /// `name` is not an object (`mustBeObject`).
    pub fn not_object(name: &str) -> Self {
        Self::Type(messages::must_be_object(name))
    }

    #[cfg(any(test, feature = "internals"))]
    pub fn message(&self) -> &str {
        match self {
            ArgError::Type(m)
            | ArgError::Value(m)
            | ArgError::Range(m)
            | ArgError::DuplicateKid(m) => m,
        }
    }
}

/// Which JS error class a failure becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Wrong type or malformed value: `TypeError`.
    Type,
    /// Value outside its documented bounds or a size cap: `RangeError`.
    Range,
    /// Failure that is not about the arguments (misuse, OS RNG, allocation): `Error`.
    Plain,
    /// The caller aborted the work (an `AbortSignal`): an `Error` named `AbortError`, as Node's
    /// own Promise APIs reject.
    Abort,
}

/// What an export throws: stable `code`, JS class, message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    pub class: ErrorClass,
    pub code: &'static str,
    pub message: String,
}

pub type CallResult<T> = Result<T, CallError>;

impl From<ArgError> for CallError {
    fn from(e: ArgError) -> Self {
        match e {
            ArgError::Type(m) => CallError::new(ErrorClass::Type, "ERR_INVALID_ARG_TYPE", m),
            ArgError::Value(m) => CallError::new(ErrorClass::Type, "ERR_INVALID_ARG_VALUE", m),
            ArgError::Range(m) => CallError::new(ErrorClass::Range, "ERR_OUT_OF_RANGE", m),
            ArgError::DuplicateKid(m) => {
                CallError::new(ErrorClass::Range, "ERR_AUTH_SHIELD_DUPLICATE_KID", m)
            }
        }
    }
}

impl CallError {
    pub fn new(class: ErrorClass, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            class,
            code,
            message: message.into(),
        }
    }

    /// `arg` has the wrong JS type.
    pub fn arg_type(arg: &str, expected: &str) -> Self {
        ArgError::Type(format!("{arg} must be {expected}")).into()
    }

    /// `arg` has the right type but a value we refuse.
    pub fn arg_value(arg: &str, why: &str) -> Self {
        ArgError::Value(format!("{arg} {why}")).into()
    }

    /// `name` is not an option of `arg` (a misspelling must not fall back to a default).
    pub fn unknown_option(arg: &str, name: &str) -> Self {
        ArgError::Type(messages::unknown_option(&format!("{arg}.{name}"))).into()
    }

    /// `arg` holds `len` bytes, over its `max` (`tooManyBytes` of contract/messages.json).
    pub fn too_many_bytes(arg: &str, max: usize, len: usize) -> Self {
        ArgError::Range(messages::too_many_bytes(arg, max as f64, len as f64)).into()
    }

    /// `arg` is not a string (`mustBeString` of contract/messages.json).
    pub fn not_string(arg: &str) -> Self {
        ArgError::not_string(arg).into()
    }

    /// `arg` is not a number (`mustBeNumber`).
    pub fn not_number(arg: &str) -> Self {
        ArgError::not_number(arg).into()
    }

    /// `arg` is not a boolean (`mustBeBoolean`).
    pub fn not_boolean(arg: &str) -> Self {
        ArgError::not_boolean(arg).into()
    }

    /// `arg` is not an object (`mustBeObject`).
    pub fn not_object(arg: &str) -> Self {
        ArgError::not_object(arg).into()
    }

    /// `arg` is outside its bounds (numbers, lengths, size caps).
    pub fn out_of_range(arg: &str, why: &str) -> Self {
        ArgError::Range(format!("{arg} {why}")).into()
    }

    /// The caller's `AbortSignal` fired before the work started (Node's `ABORT_ERR`).
    pub fn aborted() -> Self {
        Self::new(ErrorClass::Abort, "ABORT_ERR", "The operation was aborted")
    }

    /// The OS random source failed (no argument is at fault).
    pub fn random_failed() -> Self {
        Self::new(
            ErrorClass::Plain,
            "ERR_AUTH_SHIELD_RANDOM",
            "the OS random source failed",
        )
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for CallError {}

/// A whole number in `[min, max]`, `default` when absent: the bound check behind every numeric
/// option (costs, digits, periods, windows).
pub fn int_in(v: Option<f64>, name: &str, min: u64, max: u64, default: u64) -> CallResult<u64> {
    let Some(x) = v else { return Ok(default) };
    if !x.is_finite() || x.fract() != 0.0 {
        return Err(CallError::out_of_range(name, "must be a whole number"));
    }
    if x < min as f64 || x > max as f64 {
        return Err(CallError::out_of_range(
            name,
            &format!("must be between {min} and {max} (got {x})"),
        ));
    }
    Ok(x as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_in_applies_default_and_bounds() {
        assert_eq!(int_in(None, "x", 1, 5, 3), Ok(3));
        assert_eq!(int_in(Some(5.0), "x", 1, 5, 3), Ok(5));
        assert!(int_in(Some(6.0), "x", 1, 5, 3).is_err());
        assert!(int_in(Some(1.5), "x", 1, 5, 3).is_err());
        assert!(int_in(Some(f64::NAN), "x", 1, 5, 3).is_err());
        assert_eq!(
            int_in(Some(0.0), "x", 1, 5, 3).unwrap_err().code,
            "ERR_OUT_OF_RANGE"
        );
    }

    #[test]
    fn every_constructor_carries_an_err_code() {
        for e in [
            CallError::arg_type("a", "a string"),
            CallError::arg_value("a", "is bad"),
            CallError::out_of_range("a", "is big"),
            CallError::random_failed(),
        ] {
            assert!(e.code.starts_with("ERR_"), "{e}");
        }
        // Node names the abort code without the prefix; we follow Node.
        assert_eq!(CallError::aborted().code, "ABORT_ERR");
    }

    #[test]
    fn arg_errors_map_to_node_argument_codes() {
        let t = CallError::from(ArgError::Type("x must be a string".into()));
        assert_eq!(
            (t.class, t.code, t.message.as_str()),
            (
                ErrorClass::Type,
                "ERR_INVALID_ARG_TYPE",
                "x must be a string"
            )
        );
        let v = CallError::from(ArgError::Value("x is bad".into()));
        assert_eq!(
            (v.class, v.code),
            (ErrorClass::Type, "ERR_INVALID_ARG_VALUE")
        );
        let r = CallError::from(ArgError::Range("x is too big".into()));
        assert_eq!((r.class, r.code), (ErrorClass::Range, "ERR_OUT_OF_RANGE"));
        assert_eq!(ArgError::Range("m".into()).message(), "m");
    }
}
