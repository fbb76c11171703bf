//! Throwing real `TypeError` / `RangeError` instances from Rust.

use napi::{sys, Env, Error, Status};

use crate::input::InputError;

/// What a bad argument is: the wrong kind of value, or a value out of range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgError {
    Type(String),
    Range(String),
}

impl From<InputError> for ArgError {
    fn from(e: InputError) -> Self {
        match e {
            InputError::Type(m) => ArgError::Type(m),
            InputError::Range(m) => ArgError::Range(m),
        }
    }
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
    pub unsafe fn throw_raw(&self, env: sys::napi_env) {
        let message = std::ffi::CString::new(self.message().replace('\0', "")).unwrap_or_default();
        // SAFETY: `env` is live (caller's contract); both strings are NUL-terminated C strings
        // that outlive the call.
        unsafe {
            match self {
                ArgError::Type(_) => sys::napi_throw_type_error(
                    env,
                    c"ERR_INVALID_ARG_TYPE".as_ptr(),
                    message.as_ptr(),
                ),
                ArgError::Range(_) => {
                    sys::napi_throw_range_error(env, c"ERR_OUT_OF_RANGE".as_ptr(), message.as_ptr())
                }
            };
        }
    }

    pub fn message(&self) -> &str {
        match self {
            ArgError::Type(m) | ArgError::Range(m) => m,
        }
    }
}

/// Why a per-request call throws instead of returning a result.
#[derive(Debug)]
pub enum CallError {
    /// A bad argument (`TypeError` / `RangeError`).
    Arg(ArgError),
    /// A misuse of the API, thrown as napi-rs does: an `Error` with code `GenericFailure`.
    Generic(String),
    /// Node-API refused to make a value (say, an exception is already pending).
    Internal,
}

impl From<ArgError> for CallError {
    fn from(e: ArgError) -> Self {
        CallError::Arg(e)
    }
}

impl CallError {
    /// Throws the error unless an exception is already pending.
    ///
    /// # Safety
    /// `env` must be the live env of the current call.
    pub unsafe fn throw_raw(&self, env: sys::napi_env) {
        let mut pending = false;
        // SAFETY: `env` is live (caller's contract) and `pending` outlives the call.
        unsafe { sys::napi_is_exception_pending(env, &mut pending) };
        if pending {
            return;
        }
        match self {
            // SAFETY: as above.
            CallError::Arg(arg) => unsafe { arg.throw_raw(env) },
            CallError::Generic(message) => {
                let message = std::ffi::CString::new(message.replace('\0', "")).unwrap_or_default();
                // SAFETY: `env` is live; both C strings outlive the call.
                unsafe { sys::napi_throw_error(env, c"GenericFailure".as_ptr(), message.as_ptr()) };
            }
            // SAFETY: `env` is live; both strings are static C strings.
            CallError::Internal => unsafe {
                sys::napi_throw_error(
                    env,
                    c"ERR_AUTH_SHIELD_INTERNAL".as_ptr(),
                    c"auth-shield: Node-API could not build the result".as_ptr(),
                );
            },
        }
    }

    /// Throws the error and returns the marker that tells napi-rs an exception is pending.
    pub fn throw(self, env: &Env) -> Error {
        // SAFETY: `env` is the live env of the napi-rs call in progress.
        unsafe { self.throw_raw(env.raw()) };
        Error::new(Status::PendingException, "auth-shield: call failed")
    }
}
