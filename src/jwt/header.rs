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
    /// RFC 9068 §2.1: `typ` is `at+jwt` (or `application/at+jwt`, RFC 7515 §4.1.9: media
    /// types compare case-insensitively), given once.
    pub at_jwt: bool,
}

impl<'a> Header<'a> {
    pub fn parse(json: &'a [u8]) -> Result<Header<'a>, AuthError> {
        let text = std::str::from_utf8(json).map_err(|_| AuthError::MalformedToken)?;
        let mut alg: Option<Scalar<'a>> = None;
        let mut kid: Option<Scalar<'a>> = None;
        // Read for the access-token profile only; a second `typ` is never at+jwt (two parsers
        // could disagree on which one counts), but is not malformed without the profile.
        let mut typ: Option<Scalar<'a>> = None;
        let mut typ_repeated = false;
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
                "typ" => {
                    typ_repeated |= typ.is_some();
                    match scanner.value()? {
                        // A number too large for a double is malformed wherever a known member holds it.
                        Scalar::Num(n) if !n.is_finite() => None,
                        value => {
                            typ = Some(value);
                            Some(())
                        }
                    }
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
        let at_jwt = !typ_repeated && matches!(&typ, Some(Scalar::Str(t)) if is_at_jwt(t));
        // Case-sensitive on purpose: "none", "None", "hs256" and every other spelling are refused.
        match alg {
            Some(Scalar::Str(name)) => match Alg::from_name(&name) {
                Some(alg) => Ok(Header { alg, kid, at_jwt }),
                None => Err(AuthError::UnsupportedAlgorithm),
            },
            // A number too large for a double is malformed wherever a known member holds it.
            Some(Scalar::Num(n)) if !n.is_finite() => Err(AuthError::MalformedToken),
            _ => Err(AuthError::UnsupportedAlgorithm),
        }
    }
}
/// `at+jwt` or `application/at+jwt`, ASCII case-insensitive (RFC 9068 §2.1, RFC 7515 §4.1.9).
fn is_at_jwt(typ: &str) -> bool {
    let bare = match typ.get(..12) {
        Some(prefix) if prefix.eq_ignore_ascii_case("application/") => &typ[12..],
        _ => typ,
    };
    bare.eq_ignore_ascii_case("at+jwt")
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

    #[test]
    fn recognises_the_access_token_typ() {
        let at = |json: &str| Header::parse(json.as_bytes()).unwrap().at_jwt;
        for yes in [
            "at+jwt",
            "AT+JWT",
            "application/at+jwt",
            "Application/At+JWT",
        ] {
            assert!(at(&format!(r#"{{"alg":"RS256","typ":"{yes}"}}"#)), "{yes}");
        }
        for no in [
            r#"{"alg":"RS256"}"#,
            r#"{"alg":"RS256","typ":"JWT"}"#,
            r#"{"alg":"RS256","typ":"at+jwt "}"#,
            r#"{"alg":"RS256","typ":"application/jwt"}"#,
            r#"{"alg":"RS256","typ":"application/application/at+jwt"}"#,
            r#"{"alg":"RS256","typ":"xat+jwt"}"#,
            r#"{"alg":"RS256","typ":["at+jwt"]}"#,
            r#"{"alg":"RS256","typ":null}"#,
            r#"{"alg":"RS256","typ":"at+jwt","typ":"at+jwt"}"#,
            r#"{"alg":"RS256","typ":"JWT","typ":"at+jwt"}"#,
            r#"{"alg":"RS256","typ":"\u00e1t+jwt"}"#,
        ] {
            assert!(!at(no), "{no}");
        }
    }
}
