//! The one way a failure becomes a JS error, for every export (authenticator, tokens and
//! helpers): a real `TypeError` / `RangeError` / `Error` instance with an `ERR_*` `code`, thrown
//! by sync functions or used as the rejection of Promise-returning ones.
//!
//! napi-rs maps a `napi::Error` to a plain `Error` whose `code` is its status (`GenericFailure`);
//! we build the instances ourselves so callers can use `instanceof` and `err.code`, the way
//! Node's own argument validation behaves. The error data is [`CallError`] (pure Rust, in the
//! core, `src/call_error.rs`); an [`ArgError`] throws as the `CallError` it converts into.

use napi::bindgen_prelude::{FromNapiValue, JsObjectValue, Object, Unknown};
use napi::{Env, Error, JsError, JsRangeError, JsTypeError, JsValue, Status};

pub use crate::call_error::{ArgError, CallError, CallResult, ErrorClass};
use napi::sys;

impl ArgError {
    /// Throws the JS error and returns the marker that tells napi-rs an exception is pending.
    pub fn throw(self, env: &Env) -> Error {
        throw(env, self.into())
    }
}

/// Throws `e` into JS and returns the marker napi-rs needs to leave it pending.
pub fn throw(env: &Env, e: CallError) -> Error {
    let thrown = match e.class {
        ErrorClass::Type => env.throw_type_error(&e.message, Some(e.code)),
        ErrorClass::Range => env.throw_range_error(&e.message, Some(e.code)),
        ErrorClass::Plain | ErrorClass::Abort => env.throw_error(&e.message, Some(e.code)),
    };
    match thrown {
        Ok(()) => Error::new(Status::PendingException, e.message),
        Err(failed) => failed,
    }
}

/// Throws `e` on a raw env (for callbacks outside napi-rs).
///
/// # Safety
/// `env` must be the live env of the current call.
pub unsafe fn throw_raw(env: napi::sys::napi_env, e: &CallError) {
    let message = std::ffi::CString::new(e.message.replace('\0', "")).unwrap_or_default();
    let code = std::ffi::CString::new(e.code).unwrap_or_default();
    // SAFETY: `env` is live (caller's contract); both C strings outlive the calls.
    unsafe {
        match e.class {
            ErrorClass::Type => {
                napi::sys::napi_throw_type_error(env, code.as_ptr(), message.as_ptr())
            }
            ErrorClass::Range => {
                napi::sys::napi_throw_range_error(env, code.as_ptr(), message.as_ptr())
            }
            ErrorClass::Plain | ErrorClass::Abort => {
                napi::sys::napi_throw_error(env, code.as_ptr(), message.as_ptr())
            }
        };
    }
}

/// Builds the JS error instance for `e` without throwing it, wrapped so that napi-rs hands the
/// very object to JS: returned from `Task::reject`, it becomes the Promise's rejection.
pub fn rejection(env: &Env, e: CallError) -> Error {
    let raw = Error::new(e.code, e.message);
    let value: Unknown = match e.class {
        ErrorClass::Type => JsTypeError::from(raw).into_unknown(*env),
        ErrorClass::Range => JsRangeError::from(raw).into_unknown(*env),
        ErrorClass::Plain | ErrorClass::Abort => JsError::from(raw).into_unknown(*env),
    };
    if e.class == ErrorClass::Abort {
        // SAFETY: `value` was just created on the live `env` and is an error object.
        if let Ok(mut error) = unsafe { Object::from_napi_value(env.raw(), value.raw()) } {
            // Best effort: without the name it is still an Error with code ABORT_ERR.
            let _ = error.set_named_property("name", "AbortError");
        }
    }
    Error::from(value)
}

/// Drops a JS exception that user code (a throwing getter or proxy trap met while an argument
/// was read) left pending, so the typed error that reports the bad argument is the one JS sees.
pub fn clear_pending_exception(env: &Env) {
    let mut pending = false;
    // SAFETY: `env` is the live env of the current call; `pending` is a valid out slot.
    let status = unsafe { napi::sys::napi_is_exception_pending(env.raw(), &mut pending) };
    if status == napi::sys::Status::napi_ok && pending {
        let mut exception = std::ptr::null_mut();
        // SAFETY: as above; the cleared exception value is dropped with this handle scope.
        unsafe { napi::sys::napi_get_and_clear_last_exception(env.raw(), &mut exception) };
    }
}

/// Maps a result into napi, throwing a typed error on `env` on failure (replacing any exception
/// a getter left pending while the arguments were read).
pub fn to_js<T>(env: &Env, r: CallResult<T>) -> napi::Result<T> {
    r.map_err(|e| {
        clear_pending_exception(env);
        throw(env, e)
    })
}

/// `signRefreshToken` / `verifyRefreshToken` on an Authenticator built without `refreshSecret` or `signingKey`.
/// A plain `Error` (the arguments are fine; the configuration is not) with a stable code.
pub fn no_refresh_secret(method: &str) -> CallError {
    CallError::new(
        ErrorClass::Plain,
        "ERR_AUTH_SHIELD_NO_REFRESH_SECRET",
        crate::contract::messages::no_refresh_secret(method),
    )
}

/// `signAccessToken` on an Authenticator built with `keys` (no `accessSecret` to sign with).
pub fn no_access_secret() -> CallError {
    CallError::new(
        ErrorClass::Plain,
        "ERR_AUTH_SHIELD_NO_SIGNING_KEY",
        crate::contract::messages::NO_ACCESS_SECRET,
    )
}

/// `setKeys` on an authenticator from `Authenticator.shared`, whose keys are its config's.
pub fn shared_keys() -> CallError {
    CallError::new(
        ErrorClass::Plain,
        "ERR_AUTH_SHIELD_SHARED_KEYS",
        crate::contract::messages::SHARED_KEYS,
    )
}

/// Node-API refused to make a value (say, an exception is already pending).
pub fn internal() -> CallError {
    CallError::new(
        ErrorClass::Plain,
        "ERR_AUTH_SHIELD_INTERNAL",
        "auth-shield: Node-API could not build the result",
    )
}

impl CallError {
    /// Throws the error unless an exception is already pending (a user's getter or trap met
    /// while the arguments were read: that one reaches JS).
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
        // SAFETY: as above.
        unsafe { throw_raw(env, self) }
    }

    /// Throws the error unless an exception is already pending (see [`CallError::throw_raw`]),
    /// and returns the marker that tells napi-rs an exception is pending.
    pub fn throw(self, env: &Env) -> Error {
        // SAFETY: `env` is the live env of the napi-rs call in progress.
        unsafe { self.throw_raw(env.raw()) };
        Error::new(Status::PendingException, "auth-shield: call failed")
    }
}
