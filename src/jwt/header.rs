//! The JOSE header: only `alg` matters, and it must be exactly `HS256`.

use super::claims::JsonKey;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;

use crate::error::AuthError;

#[derive(Default)]
pub struct Header<'a> {
    pub alg: Option<Cow<'a, str>>,
    /// RFC 7515 §4.1.11: extensions we do not implement must make the token invalid.
    pub has_crit: bool,
}

impl<'a> Header<'a> {
    pub fn parse(json: &'a [u8]) -> Result<Header<'a>, AuthError> {
        let header: Header<'a> =
            serde_json::from_slice(json).map_err(|_| AuthError::MalformedToken)?;
        if header.has_crit {
            return Err(AuthError::MalformedToken);
        }
        // Case-sensitive on purpose: "none", "None", "hs256" and every other spelling are refused.
        match header.alg.as_deref() {
            Some("HS256") => Ok(header),
            _ => Err(AuthError::UnsupportedAlgorithm),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Header<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(HeaderVisitor(std::marker::PhantomData))
    }
}

struct HeaderVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for HeaderVisitor<'a> {
    type Value = Header<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JOSE header object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Header<'a>, M::Error> {
        let mut header = Header::default();
        let mut alg_seen = false;
        while let Some(JsonKey(key)) = map.next_key::<JsonKey<'de>>()? {
            match key.as_ref() {
                "alg" => {
                    if alg_seen {
                        return Err(serde::de::Error::custom("duplicate alg"));
                    }
                    alg_seen = true;
                    let value: super::claims::ClaimValue<'de> = map.next_value()?;
                    header.alg = match value.0 {
                        super::claims::Claim::Str(s) => Some(s),
                        _ => None,
                    };
                }
                "crit" => {
                    map.next_value::<IgnoredAny>()?;
                    header.has_crit = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_hs256() {
        assert!(Header::parse(br#"{"alg":"HS256","typ":"JWT"}"#).is_ok());
        assert!(Header::parse(br#"{"typ":"JWT","alg":"HS\u0032\u00356"}"#).is_ok());
    }

    #[test]
    fn rejects_none_in_every_casing_and_other_algs() {
        for alg in [
            "none", "None", "NONE", "nOnE", "hs256", "HS384", "HS512", "RS256", "ES256", "",
        ] {
            let json = format!(r#"{{"alg":"{alg}"}}"#);
            assert_eq!(
                Header::parse(json.as_bytes()).err(),
                Some(AuthError::UnsupportedAlgorithm),
                "{alg}"
            );
        }
        assert_eq!(
            Header::parse(b"{}").err(),
            Some(AuthError::UnsupportedAlgorithm)
        );
        assert_eq!(
            Header::parse(br#"{"alg":null}"#).err(),
            Some(AuthError::UnsupportedAlgorithm)
        );
        assert_eq!(
            Header::parse(br#"{"alg":["HS256"]}"#).err(),
            Some(AuthError::UnsupportedAlgorithm)
        );
    }

    #[test]
    fn rejects_malformed_headers() {
        for json in [
            &b"[]"[..],
            b"\"HS256\"",
            b"{",
            b"",
            br#"{"alg":"HS256","alg":"none"}"#,
            br#"{"alg":"HS256","crit":["exp"]}"#,
        ] {
            assert_eq!(
                Header::parse(json).err(),
                Some(AuthError::MalformedToken),
                "{:?}",
                String::from_utf8_lossy(json)
            );
        }
    }
}
