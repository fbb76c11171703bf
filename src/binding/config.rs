//! Reads an authenticator config object from JS into validated [`Settings`].
//! Every problem names the field, as a `TypeError` (wrong kind) or `RangeError` (bad value).

use napi::bindgen_prelude::*;
use napi::{JsValue, ValueType};

use super::js_error::ArgError;
use crate::settings::{Settings, MAX_TOKEN_BYTES_CAP, MIN_SECRET_BYTES};

const KNOWN_FIELDS: &[&str] = &[
    "accessSecret",
    "refreshSecret",
    "issuer",
    "audience",
    "clockToleranceSec",
    "rateLimitMax",
    "rateLimitRefill",
    "rateLimitMaxKeys",
    "enforceTenantMatch",
    "baseDomain",
    "accessTtlSec",
    "refreshTtlSec",
    "maxTokenBytes",
    "requireTokenType",
    "requireExpiration",
    "requireSubject",
    "clockTimestamp",
    "allowShortSecret",
];

type ArgResult<T> = std::result::Result<T, ArgError>;

pub fn read_settings(config: Unknown<'_>) -> ArgResult<Settings> {
    if config.get_type().ok() != Some(ValueType::Object) || config.is_array().unwrap_or(false) {
        return Err(ArgError::Type("config must be an object".into()));
    }
    let obj: Object =
        unsafe { config.cast() }.map_err(|_| ArgError::Type("config must be an object".into()))?;
    reject_unknown_fields(&obj)?;
    let field = |name: &str| -> ArgResult<Option<Unknown<'_>>> {
        let value: Unknown = obj
            .get_named_property_unchecked(name)
            .map_err(|_| ArgError::Type(format!("config.{name} could not be read")))?;
        Ok(match value.get_type() {
            Ok(ValueType::Undefined) | Ok(ValueType::Null) => None,
            _ => Some(value),
        })
    };

    let mut s = Settings::default();
    let allow_short = read_bool(field("allowShortSecret")?, "allowShortSecret")?.unwrap_or(false);
    s.access_secret = read_secret(field("accessSecret")?, "accessSecret", allow_short)?
        .ok_or_else(|| {
            ArgError::Type("config.accessSecret is required (a string or Buffer)".into())
        })?;
    s.refresh_secret = read_secret(field("refreshSecret")?, "refreshSecret", allow_short)?;
    s.issuers = read_string_list(field("issuer")?, "issuer")?;
    s.audiences = read_string_list(field("audience")?, "audience")?;
    if let Some(v) = read_number(
        field("clockToleranceSec")?,
        "clockToleranceSec",
        0.0,
        86_400.0,
    )? {
        s.clock_tolerance_sec = v;
    }
    if let Some(v) = read_integer(field("rateLimitMax")?, "rateLimitMax", 0.0, 1e9)? {
        s.rate_limit_max = v as u32;
    }
    if let Some(v) = read_number(field("rateLimitRefill")?, "rateLimitRefill", 0.0, 1e9)? {
        if v == 0.0 {
            return Err(ArgError::Range(
                "config.rateLimitRefill must be greater than 0 (tokens per second)".into(),
            ));
        }
        s.rate_limit_refill = v;
    }
    if let Some(v) = read_integer(field("rateLimitMaxKeys")?, "rateLimitMaxKeys", 1.0, 1e8)? {
        s.rate_limit_max_keys = v as usize;
    }
    if let Some(v) = read_bool(field("enforceTenantMatch")?, "enforceTenantMatch")? {
        s.enforce_tenant_match = v;
    }
    s.base_domain = read_base_domain(field("baseDomain")?)?;
    if let Some(v) = read_number(field("accessTtlSec")?, "accessTtlSec", 1.0, 3.2e9)? {
        s.access_ttl_sec = v;
    }
    if let Some(v) = read_number(field("refreshTtlSec")?, "refreshTtlSec", 1.0, 3.2e9)? {
        s.refresh_ttl_sec = v;
    }
    if let Some(v) = read_integer(
        field("maxTokenBytes")?,
        "maxTokenBytes",
        64.0,
        MAX_TOKEN_BYTES_CAP as f64,
    )? {
        s.max_token_bytes = v as usize;
    }
    for (name, slot) in [
        ("requireTokenType", &mut s.require_token_type),
        ("requireExpiration", &mut s.require_expiration),
        ("requireSubject", &mut s.require_subject),
    ] {
        if let Some(v) = read_bool(field(name)?, name)? {
            *slot = v;
        }
    }
    s.clock_timestamp = read_number(field("clockTimestamp")?, "clockTimestamp", 0.0, 1e13)?;
    Ok(s)
}

/// A misspelt option (say `acessSecret`) must not silently fall back to a default.
fn reject_unknown_fields(obj: &Object) -> ArgResult<()> {
    let names = obj
        .get_property_names()
        .map_err(|_| ArgError::Type("config must be an object".into()))?;
    let len = names.get_array_length().unwrap_or(0);
    for i in 0..len {
        let name: String = names
            .get_element(i)
            .map_err(|_| ArgError::Type("config keys must be strings".into()))?;
        if !KNOWN_FIELDS.contains(&name.as_str()) {
            return Err(ArgError::Type(format!(
                "config.{name} is not a known option"
            )));
        }
    }
    Ok(())
}

fn read_secret(v: Option<Unknown>, name: &str, allow_short: bool) -> ArgResult<Option<Vec<u8>>> {
    let Some(v) = v else { return Ok(None) };
    let bytes = if v.get_type().ok() == Some(ValueType::String) {
        unsafe { v.cast::<String>() }.map(String::into_bytes)
    } else if v.is_buffer().unwrap_or(false) {
        unsafe { v.cast::<BufferSlice>() }.map(|b| b.to_vec())
    } else {
        return Err(ArgError::Type(format!(
            "config.{name} must be a string or Buffer"
        )));
    }
    .map_err(|_| ArgError::Type(format!("config.{name} must be a string or Buffer")))?;
    if bytes.is_empty() {
        return Err(ArgError::Range(format!("config.{name} must not be empty")));
    }
    if bytes.len() < MIN_SECRET_BYTES && !allow_short {
        return Err(ArgError::Range(format!(
            "config.{name} must be at least {MIN_SECRET_BYTES} bytes for HS256 (RFC 7518 §3.2); set allowShortSecret: true to accept a shorter legacy secret"
        )));
    }
    Ok(Some(bytes))
}

fn read_string_list(v: Option<Unknown>, name: &str) -> ArgResult<Vec<String>> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let type_error = || {
        ArgError::Type(format!(
            "config.{name} must be a string or an array of strings"
        ))
    };
    let list = if v.get_type().ok() == Some(ValueType::String) {
        vec![unsafe { v.cast::<String>() }.map_err(|_| type_error())?]
    } else if v.is_array().unwrap_or(false) {
        let arr: Object = unsafe { v.cast() }.map_err(|_| type_error())?;
        let len = arr.get_array_length().map_err(|_| type_error())?;
        let mut list = Vec::with_capacity(len as usize);
        for i in 0..len {
            let item: Unknown = arr.get_element(i).map_err(|_| type_error())?;
            if item.get_type().ok() != Some(ValueType::String) {
                return Err(type_error());
            }
            list.push(unsafe { item.cast::<String>() }.map_err(|_| type_error())?);
        }
        list
    } else {
        return Err(type_error());
    };
    if list.is_empty() || list.iter().any(String::is_empty) {
        return Err(ArgError::Range(format!("config.{name} must not be empty")));
    }
    Ok(list)
}

fn read_bool(v: Option<Unknown>, name: &str) -> ArgResult<Option<bool>> {
    let Some(v) = v else { return Ok(None) };
    if v.get_type().ok() != Some(ValueType::Boolean) {
        return Err(ArgError::Type(format!("config.{name} must be a boolean")));
    }
    unsafe { v.cast::<bool>() }
        .map(Some)
        .map_err(|_| ArgError::Type(format!("config.{name} must be a boolean")))
}

fn read_number(v: Option<Unknown>, name: &str, min: f64, max: f64) -> ArgResult<Option<f64>> {
    let Some(v) = v else { return Ok(None) };
    if v.get_type().ok() != Some(ValueType::Number) {
        return Err(ArgError::Type(format!("config.{name} must be a number")));
    }
    let n = unsafe { v.cast::<f64>() }
        .map_err(|_| ArgError::Type(format!("config.{name} must be a number")))?;
    if !n.is_finite() || n < min || n > max {
        return Err(ArgError::Range(format!(
            "config.{name} must be a finite number from {min} to {max}, got {n}"
        )));
    }
    Ok(Some(n))
}

fn read_integer(v: Option<Unknown>, name: &str, min: f64, max: f64) -> ArgResult<Option<f64>> {
    let n = read_number(v, name, min, max)?;
    if n.is_some_and(|n| n.fract() != 0.0) {
        return Err(ArgError::Range(format!("config.{name} must be an integer")));
    }
    Ok(n)
}

fn read_base_domain(v: Option<Unknown>) -> ArgResult<Option<String>> {
    let Some(v) = v else { return Ok(None) };
    if v.get_type().ok() != Some(ValueType::String) {
        return Err(ArgError::Type("config.baseDomain must be a string".into()));
    }
    let domain = unsafe { v.cast::<String>() }
        .map_err(|_| ArgError::Type("config.baseDomain must be a string".into()))?;
    let domain = domain.trim_end_matches('.').to_ascii_lowercase();
    let valid_label = |l: &str| {
        !l.is_empty() && l.len() <= 63 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if domain.len() > 253 || !domain.split('.').all(valid_label) {
        return Err(ArgError::Range(format!(
            "config.baseDomain is not a valid domain name: {domain:?}"
        )));
    }
    Ok(Some(domain))
}
