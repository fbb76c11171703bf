//! Reading JS string arguments into reusable byte buffers, with a size cap.

use napi::sys;

use super::js_error::ArgError;

/// Copies at most `cap` bytes of the UTF-8 form of `value` into `buf`.
///
/// `undefined` and `null` are `None`; any other non-string is a `TypeError` naming `name`.
/// Capping the copy means a multi-megabyte header costs no more than `cap` bytes; callers pick
/// a cap past which the verdict cannot change (the limit check runs on what was read).
///
/// # Safety
/// `env` and `value` must be live handles of the current call.
pub unsafe fn read_optional_str<'b>(
    env: sys::napi_env,
    value: sys::napi_value,
    buf: &'b mut Vec<u8>,
    cap: usize,
    name: &str,
) -> Result<Option<&'b [u8]>, ArgError> {
    let mut kind = 0;
    if sys::napi_typeof(env, value, &mut kind) != sys::Status::napi_ok {
        return Err(ArgError::Type(format!(
            "{name} must be a string, null or undefined"
        )));
    }
    match kind {
        sys::ValueType::napi_undefined | sys::ValueType::napi_null => return Ok(None),
        sys::ValueType::napi_string => {}
        _ => {
            return Err(ArgError::Type(format!(
                "{name} must be a string, null or undefined"
            )))
        }
    }
    // One copy into a buffer kept across calls: no length query, no allocation once warm.
    buf.clear();
    buf.reserve(cap + 1);
    let mut written = 0usize;
    let status =
        sys::napi_get_value_string_utf8(env, value, buf.as_mut_ptr().cast(), cap + 1, &mut written);
    if status != sys::Status::napi_ok {
        return Err(ArgError::Type(format!(
            "{name} must be a string, null or undefined"
        )));
    }
    buf.set_len(written.min(cap));
    Ok(Some(&buf[..]))
}
