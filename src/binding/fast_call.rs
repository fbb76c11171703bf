//! The per-request call without framework overhead.
//!
//! napi-rs method dispatch (unwrapping `this`, borrow bookkeeping) costs more than the whole
//! JWT verification. So on its first `authenticate` call an `Authenticator` gets an own
//! `authenticate` property: a plain Node-API function whose data pointer holds the prepared
//! core, released by a finalizer when the function is collected.

use napi::sys;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use super::authenticator::authenticate_values;
use crate::authenticator::Authenticator as Core;

/// Defines `this.authenticate` as the fast function. Returns whether it was installed.
///
/// # Safety
/// `env` and `this` must be live handles of the current call.
pub unsafe fn install(env: sys::napi_env, this: sys::napi_value, core: &Arc<Core>) -> bool {
    let data = Arc::into_raw(core.clone()) as *mut c_void;
    let name = "authenticate";
    let mut function = ptr::null_mut();
    let created = sys::napi_create_function(
        env,
        name.as_ptr().cast(),
        name.len() as isize,
        Some(authenticate_callback),
        data,
        &mut function,
    ) == sys::Status::napi_ok
        && sys::napi_add_finalizer(
            env,
            function,
            data,
            Some(release_core),
            ptr::null_mut(),
            ptr::null_mut(),
        ) == sys::Status::napi_ok;
    if !created {
        drop(Arc::from_raw(data as *const Core));
        return false;
    }
    let property = sys::napi_property_descriptor {
        utf8name: c"authenticate".as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value: function,
        attributes: sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    };
    sys::napi_define_properties(env, this, 1, &property) == sys::Status::napi_ok
}

unsafe extern "C" fn authenticate_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // A panic must never unwind into Node: it becomes a JS error instead.
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut argc = 3usize;
        let mut argv = [ptr::null_mut(); 3];
        let mut data = ptr::null_mut();
        if sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            &mut data,
        ) != sys::Status::napi_ok
            || data.is_null()
        {
            return None;
        }
        let core = &*(data as *const Core);
        match authenticate_values(env, core, argv) {
            Ok(result) => Some(result),
            Err(err) => {
                err.throw_raw(env);
                Some(ptr::null_mut())
            }
        }
    }));
    match outcome {
        Ok(Some(result)) => result,
        _ => {
            sys::napi_throw_error(
                env,
                c"ERR_AUTH_SHIELD_INTERNAL".as_ptr(),
                c"auth-shield: internal error in authenticate".as_ptr(),
            );
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn release_core(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    drop(Arc::from_raw(data as *const Core));
}
