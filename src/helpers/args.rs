//! Reading JS arguments ourselves so a wrong type becomes a `TypeError` naming the argument
//! (napi-rs' automatic conversion throws a generic `Error` that names only the Rust type).

use napi::bindgen_prelude::{FromNapiValue, Uint8Array, Unknown};
use napi::{JsValue, ValueType};

use super::errors::{HelperError, HelperResult};

fn kind(v: &Unknown) -> ValueType {
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
pub fn string(v: &Unknown, name: &str, max_bytes: usize) -> HelperResult<String> {
    if kind(v) != ValueType::String {
        return Err(HelperError::arg_type(name, "a string"));
    }
    // SAFETY: the value is a live argument of the current call, checked to be a string above.
    let s = unsafe { String::from_napi_value(v.value().env, v.raw()) }
        .map_err(|_| HelperError::arg_type(name, "a string"))?;
    if s.len() > max_bytes {
        return Err(HelperError::out_of_range(
            name,
            &format!("must be at most {max_bytes} bytes (got {})", s.len()),
        ));
    }
    Ok(s)
}

/// A JS string (UTF-8 encoded) or a Buffer/Uint8Array, at most `max_bytes` bytes.
pub fn bytes(v: &Unknown, name: &str, max_bytes: usize) -> HelperResult<Vec<u8>> {
    let out = match kind(v) {
        ValueType::String => string(v, name, max_bytes)?.into_bytes(),
        ValueType::Object if v.is_typedarray().unwrap_or(false) => {
            // SAFETY: the value is a live argument of the current call, checked to be a typed array above.
            let arr = unsafe { Uint8Array::from_napi_value(v.value().env, v.raw()) }
                .map_err(|_| HelperError::arg_type(name, "a string, Buffer or Uint8Array"))?;
            arr.to_vec()
        }
        _ => {
            return Err(HelperError::arg_type(
                name,
                "a string, Buffer or Uint8Array",
            ))
        }
    };
    if out.len() > max_bytes {
        return Err(HelperError::out_of_range(
            name,
            &format!("must be at most {max_bytes} bytes (got {})", out.len()),
        ));
    }
    Ok(out)
}

/// An optional JS number (absent = `None`); anything else is a `TypeError` naming `name`.
pub fn number(v: &Option<Unknown>, name: &str) -> HelperResult<Option<f64>> {
    if is_nullish(v) {
        return Ok(None);
    }
    let v = v.as_ref().expect("checked by is_nullish");
    if kind(v) != ValueType::Number {
        return Err(HelperError::arg_type(name, "a number"));
    }
    // SAFETY: the value is a live argument of the current call, checked to be a number above.
    unsafe { f64::from_napi_value(v.value().env, v.raw()) }
        .map(Some)
        .map_err(|_| HelperError::arg_type(name, "a number"))
}

/// An optional JS boolean (absent = `None`).
pub fn boolean(v: &Option<Unknown>, name: &str) -> HelperResult<Option<bool>> {
    if is_nullish(v) {
        return Ok(None);
    }
    let v = v.as_ref().expect("checked by is_nullish");
    if kind(v) != ValueType::Boolean {
        return Err(HelperError::arg_type(name, "a boolean"));
    }
    // SAFETY: the value is a live argument of the current call, checked to be a boolean above.
    unsafe { bool::from_napi_value(v.value().env, v.raw()) }
        .map(Some)
        .map_err(|_| HelperError::arg_type(name, "a boolean"))
}

/// An options object converted to its `#[napi(object)]` struct; absent means `T::default()`.
pub fn options<T: FromNapiValue + Default>(v: &Option<Unknown>, name: &str) -> HelperResult<T> {
    if is_nullish(v) {
        return Ok(T::default());
    }
    let v = v.as_ref().expect("checked by is_nullish");
    if kind(v) != ValueType::Object {
        return Err(HelperError::arg_type(name, "an object"));
    }
    // SAFETY: the value is a live argument of the current call, checked to be an object above; the conversion checks each field.
    unsafe { T::from_napi_value(v.value().env, v.raw()) }
        .map_err(|e| HelperError::arg_type(name, &format!("a valid options object: {}", e.reason)))
}

/// An optional whole number in `[min, max]`, `default` when absent.
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
}
