//! Reads an authenticator config object from JS into a [`RawConfig`]; the core
//! (`crate::config`) validates it against the schema and builds the [`Settings`].

use napi::bindgen_prelude::*;
use napi::{JsValue, ValueType};

use super::js_error::ArgError;
use crate::config::RawConfig;
use crate::issuers::ISSUER_FIELDS;
use crate::raw_value::RawValue;
use crate::secret::Secret;
use crate::settings::Settings;

type ArgResult<T> = std::result::Result<T, ArgError>;

/// Reads and validates `config`; every problem is a `TypeError` or `RangeError` naming the field.
pub fn read_settings(config: Unknown<'_>) -> ArgResult<Settings> {
    Settings::from_config(read_config(config)?)
}

/// Every enumerable string key (own and inherited, as `for...in` sees them) with its value.
pub fn read_config(config: Unknown<'_>) -> ArgResult<RawConfig> {
    let not_object = || ArgError::not_object("config");
    // An array, a typed array (a Buffer) or a DataView is not a config: refused before its
    // indices are enumerated, as the JS engine refuses every `ArrayBuffer.isView`.
    if config.get_type().ok() != Some(ValueType::Object)
        || config.is_array().unwrap_or(false)
        || config.is_typedarray().unwrap_or(true)
        || config.is_dataview().unwrap_or(true)
    {
        return Err(not_object());
    }
    // SAFETY: the value was just checked to be an object.
    let obj: Object = unsafe { config.cast() }.map_err(|_| not_object())?;
    let names = obj.get_property_names().map_err(|_| not_object())?;
    let len = names.get_array_length().unwrap_or(0);
    let mut raw = RawConfig::new();
    for i in 0..len {
        let name: String = names
            .get_element(i)
            .map_err(|_| ArgError::Type("config keys must be strings".into()))?;
        let value: Unknown = obj
            .get_named_property_unchecked(&name)
            .map_err(|_| ArgError::Type(format!("config.{name} could not be read")))?;
        let read = if name == "issuers" {
            read_issuers(value)
        } else {
            read_value(value, Level::Option)
        };
        let value = read.map_err(|_| ArgError::Type(format!("config.{name} could not be read")))?;
        // A renamed option's old name is read by the core (src/config.rs); its warning is the
        // package's (native.js renames it first, through base/deprecation.js).
        raw.push(name, value);
    }
    Ok(raw)
}

/// How deep a value sits: an option's value may be an array, an array's item an object (a key
/// of `keys`), whose members are read as plain values. Nothing deeper is read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Option,
    Item,
    Member,
}

/// The members read of a key object: the raw material `base/keys/normalize.js` hands over.
const KEY_MEMBERS: [&str; 3] = ["kid", "alg", "key"];

/// One value as the core sees it; see [`Level`].
pub fn read_value(v: Unknown<'_>, level: Level) -> Result<RawValue> {
    Ok(match v.get_type()? {
        ValueType::Undefined | ValueType::Null => RawValue::Absent,
        // SAFETY: the value's type was checked by the match arm.
        ValueType::Boolean => RawValue::Bool(unsafe { v.cast::<bool>() }?),
        // SAFETY: as above.
        ValueType::Number => RawValue::Number(unsafe { v.cast::<f64>() }?),
        // SAFETY: as above.
        ValueType::String => RawValue::Text(unsafe { v.cast::<String>() }?),
        ValueType::Object if v.is_buffer()? => {
            // SAFETY: `napi_is_buffer` said yes, so the value has a byte view to copy.
            let bytes = unsafe { v.cast::<BufferSlice>() }?.to_vec();
            RawValue::Bytes(Secret::new(bytes))
        }
        ValueType::Object if level == Level::Option && v.is_array()? => {
            // SAFETY: the value is an array object.
            let arr: Object = unsafe { v.cast() }?;
            let len = arr.get_array_length()?;
            let mut items = Vec::with_capacity(len.min(1024) as usize);
            for i in 0..len {
                items.push(read_value(arr.get_element::<Unknown>(i)?, Level::Item)?);
            }
            RawValue::List(items)
        }
        ValueType::Object if level == Level::Item && !v.is_array()? => {
            // SAFETY: the value is a non-array object.
            let obj: Object = unsafe { v.cast() }?;
            let mut fields = Vec::with_capacity(KEY_MEMBERS.len());
            for name in KEY_MEMBERS {
                let member: Unknown = obj.get_named_property_unchecked(name)?;
                fields.push((name, read_value(member, Level::Member)?));
            }
            RawValue::Fields(fields)
        }
        _ => RawValue::Other,
    })
}

/// The `issuers` option: an array of issuer objects, each read member by member (their `keys`
/// as `keys` is read); an own enumerable member of another name is handed over as `unknown`,
/// first, for the core to refuse. Anything else as [`read_value`] reads it.
fn read_issuers(v: Unknown<'_>) -> Result<RawValue> {
    if v.get_type()? != ValueType::Object || !v.is_array()? {
        return read_value(v, Level::Option);
    }
    // SAFETY: the value is an array object.
    let arr: Object = unsafe { v.cast() }?;
    let len = arr.get_array_length()?;
    let mut items = Vec::with_capacity(len.min(64) as usize);
    for i in 0..len {
        let item: Unknown = arr.get_element(i)?;
        if item.get_type()? != ValueType::Object || item.is_array()? || item.is_buffer()? {
            items.push(read_value(item, Level::Item)?);
            continue;
        }
        // SAFETY: the value is a non-array object.
        let obj: Object = unsafe { item.cast() }?;
        let mut fields = Vec::with_capacity(ISSUER_FIELDS.len() + 1);
        let names = obj.get_property_names()?;
        for n in 0..names.get_array_length()? {
            let name: String = names.get_element(n)?;
            if !ISSUER_FIELDS.contains(&name.as_str()) {
                fields.push(("unknown", RawValue::Text(name)));
                break;
            }
        }
        for name in ISSUER_FIELDS {
            let member: Unknown = obj.get_named_property_unchecked(name)?;
            let level = if name == "issuer" || name == "tenant" {
                Level::Member
            } else {
                Level::Option
            };
            fields.push((name, read_value(member, level)?));
        }
        items.push(RawValue::Fields(fields));
    }
    Ok(RawValue::List(items))
}
