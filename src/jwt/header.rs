//! The JOSE header: `alg` (one of [`Alg`]) and `kid`; `crit` makes a token invalid.

use std::borrow::Cow;

use super::alg::Alg;
use super::json_scan::{Scalar, Scanner};
use crate::error::AuthError;

/// `{"alg":"HS256","typ":"JWT"}`, encoded once: what we sign with, and the header that
/// verification recognises by its text.
pub const STANDARD_HEADER_B64: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";

pub struct Header<'a> {
    pub alg: Alg,
    pub kid: Option<Cow<'a, str>>,
}

impl<'a> Header<'a> {
    pub fn parse(json: &'a [u8]) -> Result<Header<'a>, AuthError> {
        let text = std::str::from_utf8(json).map_err(|_| AuthError::MalformedToken)?;
        let mut alg: Option<Scalar<'a>> = None;
        let mut kid: Option<Scalar<'a>> = None;
        let mut has_crit = false;
        Scanner::new(text)
            .object(|key, scanner| match key.as_ref() {
                // A second `alg` or `kid` would let two parsers disagree on the key.
                "alg" if alg.is_some() => None,
                "alg" => {
                    alg = Some(scanner.value()?);
                    Some(())
                }
                "kid" if kid.is_some() => None,
                "kid" => {
                    kid = Some(scanner.value()?);
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
        // RFC 7515 §4.1.4: a kid is a string; anything else is not a header we can read.
        let kid = match kid {
            None => None,
            Some(Scalar::Str(kid)) => Some(kid),
            Some(_) => return Err(AuthError::MalformedToken),
        };
        // Case-sensitive on purpose: "none", "None", "hs256" and every other spelling are refused.
        match alg {
            Some(Scalar::Str(name)) => match Alg::from_name(&name) {
                Some(alg) => Ok(Header { alg, kid }),
                None => Err(AuthError::UnsupportedAlgorithm),
            },
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
    fn reads_every_supported_alg_and_the_kid() {
        for alg in Alg::ALL {
            let json = format!(r#"{{"alg":"{}","kid":"k\u0031"}}"#, alg.name());
            let header = Header::parse(json.as_bytes()).unwrap();
            assert_eq!(header.alg, alg);
            assert_eq!(header.kid.as_deref(), Some("k1"));
        }
        assert!(Header::parse(br#"{"alg":"RS256"}"#).unwrap().kid.is_none());
    }

    #[test]
    fn rejects_none_in_every_casing_and_other_algs() {
        for alg in ["none", "None", "NONE", "nOnE", "hs256", "ES512", "RS1", ""] {
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
            br#"{"alg":"HS256","kid":"a","kid":"b"}"#,
            br#"{"alg":"HS256","kid":7}"#,
            br#"{"alg":"HS256","kid":null}"#,
            // A lone surrogate is malformed wherever it stands, before `alg` is judged.
            br#"{"alg":{"\udc00":1}}"#,
            br#"{"alg":"none","x":["\ud800"]}"#,
            br#"{"alg":"HS256","\udfff":1}"#,
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
