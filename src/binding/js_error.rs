//! Throwing real `TypeError` / `RangeError` instances from Rust.

use napi::{Env, Error, Status};

/// What a bad argument is: the wrong kind of value, or a value out of range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgError {
    Type(String),
    Range(String),
}

impl ArgError {
    /// Throws the JS error and returns the marker that tells napi-rs an exception is pending.
    pub fn throw(self, env: &Env) -> Error {
        let thrown = match &self {
            ArgError::Type(msg) => env.throw_type_error(msg, Some("ERR_INVALID_ARG_TYPE")),
            ArgError::Range(msg) => env.throw_range_error(msg, Some("ERR_OUT_OF_RANGE")),
        };
        match thrown {
            Ok(()) => Error::new(Status::PendingException, self.message().to_owned()),
            Err(e) => e,
        }
    }

    /// Throws the JS error on a raw env (for callbacks outside napi-rs).
    ///
    /// # Safety
    /// `env` must be the live env of the current call.
    pub unsafe fn throw_raw(&self, env: napi::sys::napi_env) {
        let message = std::ffi::CString::new(self.message().replace('\0', "")).unwrap_or_default();
        match self {
            ArgError::Type(_) => napi::sys::napi_throw_type_error(
                env,
                c"ERR_INVALID_ARG_TYPE".as_ptr(),
                message.as_ptr(),
            ),
            ArgError::Range(_) => napi::sys::napi_throw_range_error(
                env,
                c"ERR_OUT_OF_RANGE".as_ptr(),
                message.as_ptr(),
            ),
        };
    }

    pub fn message(&self) -> &str {
        match self {
            ArgError::Type(m) | ArgError::Range(m) => m,
        }
    }
}
