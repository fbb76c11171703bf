//! One error type for every helper: a JS error class, a stable `code` and a short message.
//!
//! Pure data, so the helper logic stays free of napi and testable with `cargo test`; the binding
//! turns it into a real `TypeError`/`RangeError`/`Error` carrying `code` (thrown by sync exports,
//! the rejection of Promise exports), the way Node's own argument validation behaves.

use std::fmt;

/// Which JS error class a failure becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Wrong type or malformed value: `TypeError`.
    Type,
    /// Value outside its documented bounds or a size cap: `RangeError`.
    Range,
    /// Failure that is not about the arguments (OS RNG, allocation): `Error`.
    Plain,
    /// The caller aborted the work (an `AbortSignal`): an `Error` named `AbortError`, as Node's
    /// own Promise APIs reject.
    Abort,
}

/// A helper failure: stable `code`, JS class, message naming the argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelperError {
    pub class: ErrorClass,
    pub code: &'static str,
    pub message: String,
}

pub type HelperResult<T> = Result<T, HelperError>;

impl HelperError {
    pub fn new(class: ErrorClass, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            class,
            code,
            message: message.into(),
        }
    }

    /// `arg` has the wrong JS type.
    pub fn arg_type(arg: &str, expected: &str) -> Self {
        Self::new(
            ErrorClass::Type,
            "ERR_INVALID_ARG_TYPE",
            format!("{arg} must be {expected}"),
        )
    }

    /// `arg` has the right type but a value we refuse.
    pub fn arg_value(arg: &str, why: &str) -> Self {
        Self::new(
            ErrorClass::Type,
            "ERR_INVALID_ARG_VALUE",
            format!("{arg} {why}"),
        )
    }

    /// `name` is not an option of `arg` (a misspelling must not fall back to a default).
    pub fn unknown_option(arg: &str, name: &str) -> Self {
        Self::new(
            ErrorClass::Type,
            "ERR_INVALID_ARG_TYPE",
            format!("{arg}.{name} is not a known option"),
        )
    }

    /// `arg` is outside its bounds (numbers, lengths, size caps).
    pub fn out_of_range(arg: &str, why: &str) -> Self {
        Self::new(
            ErrorClass::Range,
            "ERR_OUT_OF_RANGE",
            format!("{arg} {why}"),
        )
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

impl fmt::Display for HelperError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for HelperError {}

/// A whole number in `[min, max]`, `default` when absent: the bound check behind every numeric
/// option (costs, digits, periods, windows).
pub fn int_in(v: Option<f64>, name: &str, min: u64, max: u64, default: u64) -> HelperResult<u64> {
    let Some(x) = v else { return Ok(default) };
    if !x.is_finite() || x.fract() != 0.0 {
        return Err(HelperError::out_of_range(name, "must be a whole number"));
    }
    if x < min as f64 || x > max as f64 {
        return Err(HelperError::out_of_range(
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
            HelperError::arg_type("a", "a string"),
            HelperError::arg_value("a", "is bad"),
            HelperError::out_of_range("a", "is big"),
            HelperError::random_failed(),
        ] {
            assert!(e.code.starts_with("ERR_"), "{e}");
        }
        // Node names the abort code without the prefix; we follow Node.
        assert_eq!(HelperError::aborted().code, "ABORT_ERR");
    }
}
