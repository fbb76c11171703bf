//! Reading JS string arguments into reusable byte buffers, with a size cap.

use napi::sys;

use std::cell::RefCell;

use super::js_error::ArgError;

thread_local! {
    static UTF16: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
}

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
    // SAFETY: `env` and `value` are live (caller's contract); `kind` is a valid local.
    if unsafe { sys::napi_typeof(env, value, &mut kind) } != sys::Status::napi_ok {
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
    // Header values are ASCII in practice. V8 copies a string out as UTF-16 with a plain
    // widening loop, far faster than its UTF-8 encoder; narrowing ASCII back is exact. Only a
    // string with a non-ASCII character takes the UTF-8 path.
    let ascii = UTF16.with(|cell| {
        let mut units = cell.borrow_mut();
        units.clear();
        units.reserve(cap + 1);
        let mut written = 0usize;
        // SAFETY: `value` is a live string (checked above); `units` has room for `cap + 1`
        // code units (reserved above), the size passed, and V8 writes at most that many.
        let status = unsafe {
            sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr(), cap + 1, &mut written)
        };
        if status != sys::Status::napi_ok {
            return None;
        }
        // SAFETY: the first `written` units (at most `cap`) were initialised by the copy.
        unsafe { units.set_len(written.min(cap)) };
        // One pass that narrows and remembers whether any unit was non-ASCII (vectorizes).
        buf.clear();
        buf.resize(units.len(), 0);
        let mut seen = 0u16;
        for (dst, &unit) in buf.iter_mut().zip(units.iter()) {
            *dst = unit as u8;
            seen |= unit;
        }
        (seen < 0x80).then_some(())
    });
    if ascii.is_none() {
        buf.clear();
        buf.reserve(cap + 1);
        let mut written = 0usize;
        // SAFETY: `value` is a live string; `buf` has room for `cap + 1` bytes (reserved
        // above), the size passed, and Node writes at most that many (NUL included).
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                env,
                value,
                buf.as_mut_ptr().cast(),
                cap + 1,
                &mut written,
            )
        };
        if status != sys::Status::napi_ok {
            return Err(ArgError::Type(format!(
                "{name} must be a string, null or undefined"
            )));
        }
        // SAFETY: the first `written` bytes (at most `cap`) were initialised by the copy.
        unsafe { buf.set_len(written.min(cap)) };
    }
    Ok(Some(&buf[..]))
}
