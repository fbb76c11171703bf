//! The registered and auth-shield claims of a JWT payload, parsed without copying strings.
//!
//! Each known claim is captured with its JSON type so a wrong type is reported as
//! `invalid_claims` rather than silently ignored; a known claim appearing twice makes the token
//! malformed (JSON parsers disagree on which duplicate wins, an ambiguity attackers exploit).
//! Unknown claims are skipped without building values.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;

/// A claim's value as far as validation cares.
#[derive(Debug, Default, Clone, PartialEq)]
pub enum Claim<'a> {
    #[default]
    Absent,
    Str(Cow<'a, str>),
    Num(f64),
    /// An array whose elements are all strings (the only array form `aud` may take).
    StrList(Vec<Cow<'a, str>>),
    /// null, booleans, objects and mixed arrays.
    Other,
}

impl<'a> Claim<'a> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Claim::Absent)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Claim::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_num(&self) -> Option<f64> {
        match self {
            Claim::Num(n) => Some(*n),
            _ => None,
        }
    }
}

#[derive(Debug, Default)]
pub struct Claims<'a> {
    pub sub: Claim<'a>,
    pub exp: Claim<'a>,
    pub nbf: Claim<'a>,
    pub iat: Claim<'a>,
    pub iss: Claim<'a>,
    pub aud: Claim<'a>,
    pub jti: Claim<'a>,
    pub email: Claim<'a>,
    pub role: Claim<'a>,
    pub tenant_id: Claim<'a>,
    pub token_type: Claim<'a>,
}

impl<'a> Claims<'a> {
    /// `None` when the payload is not a JSON object or repeats a known claim.
    pub fn parse(json: &'a [u8]) -> Option<Claims<'a>> {
        serde_json::from_slice(json).ok()
    }

    fn slot(&mut self, key: &str) -> Option<&mut Claim<'a>> {
        Some(match key {
            "sub" => &mut self.sub,
            "exp" => &mut self.exp,
            "nbf" => &mut self.nbf,
            "iat" => &mut self.iat,
            "iss" => &mut self.iss,
            "aud" => &mut self.aud,
            "jti" => &mut self.jti,
            "email" => &mut self.email,
            "role" => &mut self.role,
            "tenant_id" => &mut self.tenant_id,
            "type" => &mut self.token_type,
            _ => return None,
        })
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Claims<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ClaimsVisitor(std::marker::PhantomData))
    }
}

struct ClaimsVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ClaimsVisitor<'a> {
    type Value = Claims<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JWT claims object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Claims<'a>, M::Error> {
        let mut claims = Claims::default();
        while let Some(JsonKey(key)) = map.next_key::<JsonKey<'de>>()? {
            match claims.slot(&key) {
                Some(slot) => {
                    let ClaimValue(value) = map.next_value()?;
                    if !slot.is_absent() {
                        return Err(de::Error::custom("duplicate claim"));
                    }
                    // A JSON null is a present claim of the wrong type, never "absent".
                    *slot = value;
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(claims)
    }
}

/// An object key, borrowed from the input unless it contains escapes (`"s\u0075b"` is `sub`).
pub struct JsonKey<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for JsonKey<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor(std::marker::PhantomData))
    }
}

struct KeyVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for KeyVisitor<'a> {
    type Value = JsonKey<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(JsonKey(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(JsonKey(Cow::Owned(v.to_owned())))
    }
}

/// Any JSON value, reduced to the shape validation needs.
pub struct ClaimValue<'a>(pub Claim<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for ClaimValue<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor(std::marker::PhantomData))
    }
}

struct ValueVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ValueVisitor<'a> {
    type Value = ClaimValue<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(ClaimValue(Claim::Str(Cow::Borrowed(v))))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(ClaimValue(Claim::Str(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(ClaimValue(Claim::Str(Cow::Owned(v))))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(ClaimValue(Claim::Num(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(ClaimValue(Claim::Num(v as f64)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(ClaimValue(Claim::Num(v as f64)))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ClaimValue(Claim::Other))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(ClaimValue(Claim::Other))
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut items = Vec::new();
        while let Some(ArrayItem(item)) = seq.next_element()? {
            match item {
                Some(s) => items.push(s),
                None => {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    return Ok(ClaimValue(Claim::Other));
                }
            }
        }
        Ok(ClaimValue(Claim::StrList(items)))
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(ClaimValue(Claim::Other))
    }
}

/// An array element: a string, or anything else skipped without recursing into it.
struct ArrayItem<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for ArrayItem<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ArrayItemVisitor(std::marker::PhantomData))
    }
}

struct ArrayItemVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ArrayItemVisitor<'a> {
    type Value = ArrayItem<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(ArrayItem(Some(Cow::Borrowed(v))))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(ArrayItem(Some(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(ArrayItem(Some(Cow::Owned(v))))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ArrayItem(None))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ArrayItem(None))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ArrayItem(None))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ArrayItem(None))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(ArrayItem(None))
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ArrayItem(None))
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(ArrayItem(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_known_claims_borrowed() {
        let json = br#"{"sub":"u1","exp":1700000000,"nbf":1.5,"aud":["a","b"],"email":"e@x","x":{"y":[1,2]},"type":"access"}"#;
        let c = Claims::parse(json).unwrap();
        assert!(matches!(c.sub, Claim::Str(Cow::Borrowed("u1"))));
        assert_eq!(c.exp, Claim::Num(1700000000.0));
        assert_eq!(c.nbf, Claim::Num(1.5));
        assert_eq!(c.aud, Claim::StrList(vec!["a".into(), "b".into()]));
        assert_eq!(c.email.as_str(), Some("e@x"));
        assert_eq!(c.token_type.as_str(), Some("access"));
        assert!(c.role.is_absent());
    }

    #[test]
    fn decodes_escaped_keys_and_values() {
        let c = Claims::parse(br#"{"s\u0075b":"\u00e9t\u00e9"}"#).unwrap();
        assert_eq!(c.sub.as_str(), Some("été"));
    }

    #[test]
    fn records_wrong_types_as_other() {
        let c = Claims::parse(br#"{"sub":null,"exp":"1","aud":["a",1],"role":true}"#).unwrap();
        assert_eq!(c.sub, Claim::Other);
        assert_eq!(c.exp, Claim::Str("1".into()));
        assert_eq!(c.aud, Claim::Other);
        assert_eq!(c.role, Claim::Other);
    }

    #[test]
    fn rejects_duplicate_known_claims_and_non_objects() {
        assert!(Claims::parse(br#"{"sub":"a","sub":"b"}"#).is_none());
        assert!(Claims::parse(br#"{"sub":"a","s\u0075b":"b"}"#).is_none());
        assert!(Claims::parse(br#"{"x":1,"x":2}"#).is_some());
        for json in [&b"[]"[..], b"1", b"\"s\"", b"null", b"{", b"{}x"] {
            assert!(
                Claims::parse(json).is_none(),
                "{:?}",
                String::from_utf8_lossy(json)
            );
        }
    }

    #[test]
    fn rejects_overflowing_numbers() {
        assert!(Claims::parse(br#"{"exp":1e400}"#).is_none());
    }

    #[test]
    fn deep_nesting_is_parsed_without_overflowing_the_stack() {
        for depth in [200, 100_000] {
            let deep = format!(
                r#"{{"x":{}{},"aud":{}{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth),
                "[".repeat(depth),
                "]".repeat(depth)
            );
            // Whatever the verdict, parsing must return (serde_json caps recursion at 128).
            let parsed = Claims::parse(deep.as_bytes());
            if let Some(c) = parsed {
                assert_eq!(c.aud, Claim::Other);
            }
        }
    }
}
