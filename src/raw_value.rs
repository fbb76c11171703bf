//! A value as the binding read it from JS, before any check: what the option readers take
//! (the config in src/config.rs, the trusted issuers in src/issuers.rs, the keys in
//! src/jwt/key_set.rs, `setKeys`). Plain data on the bottom floor, so each reader can sit beside
//! the rules it applies without reaching up to the config.

use crate::secret::Secret;

/// A config value as read from JS, before any check. `null` and `undefined` are `Absent`.
#[derive(Debug)]
pub enum RawValue {
    Absent,
    Bool(bool),
    Number(f64),
    Text(String),
    /// A Buffer or other byte view, copied.
    Bytes(Secret),
    /// An array, item by item.
    List(Vec<RawValue>),
    /// An object inside an array (a key of `keys`): the named members that were read.
    Fields(Vec<(&'static str, RawValue)>),
    /// Anything else (objects, functions, symbols, BigInts).
    Other,
}

impl From<bool> for RawValue {
    fn from(b: bool) -> Self {
        RawValue::Bool(b)
    }
}
impl From<f64> for RawValue {
    fn from(n: f64) -> Self {
        RawValue::Number(n)
    }
}
impl From<&str> for RawValue {
    fn from(s: &str) -> Self {
        RawValue::Text(s.to_owned())
    }
}
impl From<&[u8]> for RawValue {
    fn from(b: &[u8]) -> Self {
        RawValue::Bytes(Secret::from(b))
    }
}
impl From<Vec<&str>> for RawValue {
    fn from(list: Vec<&str>) -> Self {
        RawValue::List(list.into_iter().map(RawValue::from).collect())
    }
}
