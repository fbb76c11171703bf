//! One error type for every helper: a JS error class, a stable `code` and a short message.
//!
//! napi-rs maps `napi::Error` to a plain `Error`; helpers throw real `TypeError`/`RangeError`
//! instances instead (via `napi_throw_type_error`/`napi_throw_range_error`) so callers can use
//! `instanceof` and `err.code`, the way Node's own argument validation behaves.

use napi::{Env, Status};

/// Which JS error class a failure becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Wrong type or malformed value: `TypeError`.
    Type,
    /// Value outside its documented bounds or a size cap: `RangeError`.
    Range,
    /// Failure that is not about the arguments (OS RNG, allocation): `Error`.
    Plain,
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

    /// `arg` is outside its bounds (numbers, lengths, size caps).
    pub fn out_of_range(arg: &str, why: &str) -> Self {
        Self::new(
            ErrorClass::Range,
            "ERR_OUT_OF_RANGE",
            format!("{arg} {why}"),
        )
    }

    /// Throws this error into JS and returns the marker napi-rs needs to leave it pending.
    pub fn throw(self, env: &Env) -> napi::Error {
        let thrown = match self.class {
            ErrorClass::Type => env.throw_type_error(&self.message, Some(self.code)),
            ErrorClass::Range => env.throw_range_error(&self.message, Some(self.code)),
            ErrorClass::Plain => env.throw_error(&self.message, Some(self.code)),
        };
        match thrown {
            Ok(()) => napi::Error::new(Status::PendingException, self.message),
            Err(e) => e,
        }
    }

    /// For async tasks (no `Env` on the worker thread): a plain `Error` whose `code` is ours.
    pub fn into_napi(self) -> napi::Error {
        napi::Error::new(
            Status::GenericFailure,
            format!("{}: {}", self.code, self.message),
        )
    }
}

/// Maps a helper result into napi, throwing typed errors on `env`.
pub fn to_js<T>(env: &Env, r: HelperResult<T>) -> napi::Result<T> {
    r.map_err(|e| e.throw(env))
}
