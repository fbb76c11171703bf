//! The one argument reader for every export: JS values in, Rust values or a typed error out.
//!
//! A wrong type becomes a `TypeError` with `ERR_INVALID_ARG_TYPE` naming the argument (napi-rs'
//! automatic conversion throws a generic `Error` that names only the Rust type); a size cap
//! becomes a `RangeError` with `ERR_OUT_OF_RANGE`. `read_optional_str` is the raw-handle reader
//! of the request hot path; the others read napi-rs `Unknown` handles.

use napi::bindgen_prelude::{FromNapiValue, JsObjectValue, Object, Uint8Array, Unknown};
use napi::sys;
use napi::{JsValue, ValueType};

use std::cell::RefCell;

use super::js_error::{ArgError, CallError, CallResult};

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
    // SAFETY: `env` and `value` are live handles (caller's contract); `kind` is a valid out slot.
    if unsafe { sys::napi_typeof(env, value, &mut kind) } != sys::Status::napi_ok {
        return Err(ArgError::Type(
            crate::contract::messages::must_be_optional_string(name),
        ));
    }
    match kind {
        sys::ValueType::napi_undefined | sys::ValueType::napi_null => return Ok(None),
        sys::ValueType::napi_string => {}
        _ => {
            return Err(ArgError::Type(
                crate::contract::messages::must_be_optional_string(name),
            ))
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
        // SAFETY: `value` is a live string handle; `units` has room for `cap + 1` units, the
        // size passed, and napi writes at most that many (including the terminator).
        let status = unsafe {
            sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr(), cap + 1, &mut written)
        };
        if status != sys::Status::napi_ok {
            return None;
        }
        // SAFETY: napi initialised `written` (< cap + 1 <= capacity) units.
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
        // SAFETY: `value` is a live string handle; `buf` has room for `cap + 1` bytes, the size
        // passed, and napi writes at most that many (including the terminator).
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
            return Err(ArgError::Type(
                crate::contract::messages::must_be_optional_string(name),
            ));
        }
        // SAFETY: napi initialised `written` (< cap + 1 <= capacity) bytes; the cut at `cap`
        // may split a UTF-8 sequence, which is fine for a byte slice.
        unsafe { buf.set_len(written.min(cap)) };
    }
    Ok(Some(&buf[..]))
}

/// Whether the JS string `value` holds a lone UTF-16 surrogate (no `String.prototype.isWellFormed`).
///
/// napi's UTF-8 copy replaces each one with U+FFFD, so keys that differ only there would look
/// equal: callers that compare strings ask this when the copy holds a U+FFFD (rare), and
/// refuse the string. At most `max_units` units are read.
///
/// # Safety
/// `env` and `value` must be live handles of the current call, `value` a string.
pub unsafe fn has_lone_surrogate(
    env: sys::napi_env,
    value: sys::napi_value,
    max_units: usize,
) -> bool {
    UTF16.with(|cell| {
        let mut units = cell.borrow_mut();
        units.clear();
        units.reserve(max_units + 1);
        let mut written = 0usize;
        // SAFETY: `value` is a live string handle (caller's contract); `units` has room for
        // `max_units + 1` units, the size passed, and napi writes at most that many.
        let status = unsafe {
            sys::napi_get_value_string_utf16(
                env,
                value,
                units.as_mut_ptr(),
                max_units + 1,
                &mut written,
            )
        };
        if status != sys::Status::napi_ok {
            // Unreadable: treat as not well-formed, so the caller refuses it.
            return true;
        }
        // SAFETY: napi initialised `written` (< max_units + 1 <= capacity) units.
        unsafe { units.set_len(written.min(max_units)) };
        char::decode_utf16(units.iter().copied()).any(|c| c.is_err())
    })
}

/// The JS type of `v` (`Unknown` when napi cannot tell).
pub fn kind(v: &Unknown) -> ValueType {
    v.get_type().unwrap_or(ValueType::Unknown)
}

/// True when the argument is absent (`undefined` or `null`).
pub fn is_nullish(v: &Option<Unknown>) -> bool {
    match v {
        None => true,
        Some(v) => matches!(kind(v), ValueType::Undefined | ValueType::Null),
    }
}

/// A JS string, at most `max_bytes` UTF-8 bytes.
pub fn string(v: &Unknown, name: &str, max_bytes: usize) -> CallResult<String> {
    if kind(v) != ValueType::String {
        return Err(CallError::not_string(name));
    }
    // SAFETY: `v` is a live handle of the current call and was just checked to be a string.
    let s = unsafe { String::from_napi_value(v.value().env, v.raw()) }
        .map_err(|_| CallError::not_string(name))?;
    if s.len() > max_bytes {
        return Err(CallError::too_many_bytes(name, max_bytes, s.len()));
    }
    Ok(s)
}

/// A JS string (UTF-8 encoded) or a Buffer/Uint8Array, at most `max_bytes` bytes.
pub fn bytes(v: &Unknown, name: &str, max_bytes: usize) -> CallResult<Vec<u8>> {
    let out = match kind(v) {
        ValueType::String => string(v, name, max_bytes)?.into_bytes(),
        ValueType::Object if v.is_typedarray().unwrap_or(false) => {
            // SAFETY: `v` is a live handle of the current call and a typed array; napi-rs
            // checks the element type and fails (mapped below) for anything but Uint8Array.
            let arr = unsafe { Uint8Array::from_napi_value(v.value().env, v.raw()) }
                .map_err(|_| CallError::arg_type(name, "a string, Buffer or Uint8Array"))?;
            arr.to_vec()
        }
        _ => return Err(CallError::arg_type(name, "a string, Buffer or Uint8Array")),
    };
    if out.len() > max_bytes {
        return Err(CallError::too_many_bytes(name, max_bytes, out.len()));
    }
    Ok(out)
}

/// An optional JS number (absent = `None`); anything else is a `TypeError` naming `name`.
pub fn number(v: &Option<Unknown>, name: &str) -> CallResult<Option<f64>> {
    let Some(v) = v.as_ref().filter(|_| !is_nullish(v)) else {
        return Ok(None);
    };
    if kind(v) != ValueType::Number {
        return Err(CallError::not_number(name));
    }
    // SAFETY: `v` is a live handle of the current call and was just checked to be a number.
    unsafe { f64::from_napi_value(v.value().env, v.raw()) }
        .map(Some)
        .map_err(|_| CallError::not_number(name))
}

/// An optional JS boolean (absent = `None`).
pub fn boolean(v: &Option<Unknown>, name: &str) -> CallResult<Option<bool>> {
    let Some(v) = v.as_ref().filter(|_| !is_nullish(v)) else {
        return Ok(None);
    };
    if kind(v) != ValueType::Boolean {
        return Err(CallError::not_boolean(name));
    }
    // SAFETY: `v` is a live handle of the current call and was just checked to be a boolean.
    unsafe { bool::from_napi_value(v.value().env, v.raw()) }
        .map(Some)
        .map_err(|_| CallError::not_boolean(name))
}

/// Refuses a name of the options object `obj` that `contract/options.json` (`callOptions`) does not
/// list for `type_name`: `totp(s, { digit: 8 })` must not quietly make 6-digit codes. Every
/// enumerable string key counts, inherited ones too (`napi_get_property_names`), as for a config.
pub fn known_options(obj: &Object, type_name: &str, name: &str) -> CallResult<()> {
    // A typed array (a Buffer) or a DataView is binary data, not a bag of options: refused
    // before its indices are enumerated (a 1 MiB Buffer would be a million names), as the JS
    // engine refuses every `ArrayBuffer.isView`.
    if obj.is_typedarray().unwrap_or(true) || obj.is_dataview().unwrap_or(true) {
        return Err(CallError::not_object(name));
    }
    let unreadable = || CallError::arg_type(name, "an object whose keys can be read");
    let keys = obj.get_property_names().map_err(|_| unreadable())?;
    let known = crate::schema::schema().call_option_names(type_name);
    let count = keys.get_array_length().map_err(|_| unreadable())?;
    for i in 0..count {
        let key: Unknown = keys.get_element(i).map_err(|_| unreadable())?;
        let key = string(&key, name, usize::MAX).map_err(|_| unreadable())?;
        let renamed = || crate::schema::schema().renamed(type_name, &key).is_some();
        if !known.contains(&key) && !renamed() {
            return Err(CallError::unknown_option(name, &key));
        }
    }
    Ok(())
}

/// An options object (not an array) with only the names `callOptions` lists for `type_name`;
/// `None` when absent (`undefined` / `null`).
pub fn options_object<'a>(
    v: &Option<Unknown<'a>>,
    type_name: &str,
    name: &str,
) -> CallResult<Option<Object<'a>>> {
    let Some(v) = v.as_ref().filter(|_| !is_nullish(v)) else {
        return Ok(None);
    };
    if kind(v) != ValueType::Object || v.is_array().unwrap_or(false) {
        return Err(CallError::not_object(name));
    }
    // SAFETY: `v` is a live handle of the current call and was just checked to be an object.
    let obj = unsafe { Object::from_napi_value(v.value().env, v.raw()) }
        .map_err(|_| CallError::not_object(name))?;
    known_options(&obj, type_name, name)?;
    Ok(Some(obj))
}

/// An options object converted to its `#[napi(object)]` struct (whose `.d.ts` interface is
/// `type_name`); absent means `T::default()`. Unknown names are refused first.
pub fn options<T: FromNapiValue + Default>(
    v: &Option<Unknown>,
    type_name: &str,
    name: &str,
) -> CallResult<T> {
    let Some(v) = v.as_ref().filter(|_| !is_nullish(v)) else {
        return Ok(T::default());
    };
    if kind(v) != ValueType::Object {
        return Err(CallError::not_object(name));
    }
    options_object(&Some(*v), type_name, name)?;
    // SAFETY: `v` is a live handle of the current call and an object; the derived conversion
    // reads its fields and reports (mapped below) any of the wrong type.
    unsafe { T::from_napi_value(v.value().env, v.raw()) }
        .map_err(|e| CallError::arg_type(name, &format!("a valid options object: {}", e.reason)))
}
