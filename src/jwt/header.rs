//! The JOSE header: only `alg` matters, and it must be exactly `HS256`.

use std::borrow::Cow;

use super::json_scan::{Scalar, Scanner};
use crate::error::AuthError;

/// `{"alg":"HS256","typ":"JWT"}`, encoded once: what we sign with, and the header that
/// verification recognises by its text.
pub const STANDARD_HEADER_B64: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";

#[derive(Default)]
pub struct Header<'a> {
    pub alg: Option<Cow<'a, str>>,
}

impl<'a> Header<'a> {
    pub fn parse(json: &'a [u8]) -> Result<Header<'a>, AuthError> {
        let text = std::str::from_utf8(json).map_err(|_| AuthError::MalformedToken)?;
        let mut alg: Option<Scalar<'a>> = None;
        let mut has_crit = false;
        Scanner::new(text)
            .object(|key, scanner| match key.as_ref() {
                // A second `alg` would let two parsers disagree on the algorithm.
                "alg" if alg.is_some() => None,
                "alg" => {
                    alg = Some(scanner.value()?);
                    Some(())
                }
                "crit" => {
                    has_crit = true;
                    scanner.skip_value()
                }
                _ => scanner.skip_value(),
            })
            .ok_or(AuthError::MalformedToken)?;
        // RFC 7515 §4.1.11: extensions we do not implement must make the token invalid.
        if has_crit {
            return Err(AuthError::MalformedToken);
        }
        // Case-sensitive on purpose: "none", "None", "hs256" and every other spelling are refused.
        match alg {
            Some(Scalar::Str(alg)) if alg == "HS256" => Ok(Header { alg: Some(alg) }),
            // A number too large for a double is malformed wherever a known member holds it.
            Some(Scalar::Num(n)) if !n.is_finite() => Err(AuthError::MalformedToken),
            _ => Err(AuthError::UnsupportedAlgorithm),
        }
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
