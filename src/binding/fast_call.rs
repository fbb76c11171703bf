//! The per-request calls without framework overhead.
//!
//! napi-rs method dispatch (unwrapping `this`, borrow bookkeeping) costs more than the whole
//! JWT verification. So on its first per-request call an `Authenticator` gets own
//! `authenticate`, `verifyAccessToken` and `verifyRefreshToken` properties: plain Node-API
//! functions whose data pointer holds the prepared core, released by a finalizer when the
//! function is collected. They are writable and configurable data properties, so the methods
//! behave like ordinary ones (`auth.authenticate = spy` works before and after the first
//! call), and a property the caller already set on the instance is never replaced.

use napi::sys;
use std::ffi::{c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use super::js_error::{internal, CallError};
use super::request;
use crate::authenticator::Authenticator as Core;
use crate::jwt::TokenKind;

type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

const FAST_METHODS: [(&CStr, Callback); 3] = [
    (c"authenticate", authenticate_callback),
    (c"verifyAccessToken", verify_access_callback),
    (c"verifyRefreshToken", verify_refresh_callback),
];

/// Defines the fast methods on `this`, skipping any name `this` already has as its own.
///
/// # Safety
/// `env` and `this` must be live handles of the current call.
pub unsafe fn install(env: sys::napi_env, this: sys::napi_value, core: &Arc<Core>) {
    for (name, callback) in FAST_METHODS {
        // SAFETY: forwarded contract; `name` is a static C string.
        unsafe { install_one(env, this, core, name, callback) };
    }
}

/// # Safety
/// As for [`install`].
unsafe fn install_one(
    env: sys::napi_env,
    this: sys::napi_value,
    core: &Arc<Core>,
    name: &CStr,
    callback: Callback,
) {
    // SAFETY: `env` and `this` are live (caller's contract); every pointer passed is a valid
    // local or a static C string; `data` is an `Arc` leaked here and reclaimed exactly once,
    // either below on failure or by `release_core` when the function is collected.
    unsafe {
        let mut key = ptr::null_mut();
        let mut own = true;
        if sys::napi_create_string_utf8(env, name.as_ptr(), -1, &mut key) != sys::Status::napi_ok
            || sys::napi_has_own_property(env, this, key, &mut own) != sys::Status::napi_ok
            || own
        {
            return;
        }
        let data = Arc::into_raw(core.clone()) as *mut c_void;
        let mut function = ptr::null_mut();
        if sys::napi_create_function(env, name.as_ptr(), -1, Some(callback), data, &mut function)
            != sys::Status::napi_ok
        {
            drop(Arc::from_raw(data as *const Core));
            return;
        }
        if sys::napi_add_finalizer(
            env,
            function,
            data,
            Some(release_core),
            ptr::null_mut(),
            ptr::null_mut(),
        ) != sys::Status::napi_ok
        {
            // No finalizer owns `data`; the function is unreachable garbage.
            drop(Arc::from_raw(data as *const Core));
            return;
        }
        let property = sys::napi_property_descriptor {
            utf8name: name.as_ptr(),
            name: ptr::null_mut(),
            method: None,
            getter: None,
            setter: None,
            value: function,
            attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        };
        sys::napi_define_properties(env, this, 1, &property);
    }
}

/// Reads up to four arguments and the core, runs `f`, and turns errors and panics into JS
/// exceptions: a panic must never unwind into Node.
///
/// # Safety
/// `env` and `info` must be those of a call of a function made by `install_one`.
unsafe fn run(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    f: impl FnOnce(&Core, [sys::napi_value; 4]) -> Result<sys::napi_value, CallError>,
) -> sys::napi_value {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut argc = 4usize;
        let mut argv = [ptr::null_mut(); 4];
        let mut data = ptr::null_mut();
        // SAFETY: `env` and `info` are the live call's (caller's contract); out-pointers are
        // valid locals sized for `argc` values (missing arguments are filled with undefined).
        let status = unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                ptr::null_mut(),
                &mut data,
            )
        };
        if status != sys::Status::napi_ok || data.is_null() {
            return Err(internal());
        }
        // SAFETY: `data` is the `Arc<Core>` pointer given to `napi_create_function`, kept alive
        // by the function's finalizer, which cannot run while the function is being called.
        let core = unsafe { &*(data as *const Core) };
        f(core, argv)
    }));
    let error = match outcome {
        Ok(Ok(result)) => return result,
        Ok(Err(error)) => error,
        Err(_panic) => internal(),
    };
    // SAFETY: `env` is the live env of this call.
    unsafe { error.throw_raw(env) };
    ptr::null_mut()
}

unsafe extern "C" fn authenticate_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: Node calls this with the env and info of a live call; the handles `run` passes
    // on are that call's.
    unsafe {
        run(env, info, |core, argv| {
            request::authenticate(env, core, argv)
        })
    }
}

unsafe extern "C" fn verify_access_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: as for `authenticate_callback`.
    unsafe {
        run(env, info, |core, [token, ..]| {
            request::verify(env, core, TokenKind::Access, token)
        })
    }
}

unsafe extern "C" fn verify_refresh_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: as for `authenticate_callback`.
    unsafe {
        run(env, info, |core, [token, ..]| {
            request::verify(env, core, TokenKind::Refresh, token)
        })
    }
}

unsafe extern "C" fn release_core(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the pointer from `Arc::into_raw` in `install_one`, and this finalizer
    // runs once, when its function is collected.
    drop(unsafe { Arc::from_raw(data as *const Core) });
}
