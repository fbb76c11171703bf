//! The registered and auth-shield claims of a JWT payload, parsed without copying strings.
//!
//! Each known claim is captured with its JSON type so a wrong type is reported as
//! `invalid_claims` rather than silently ignored; a known claim appearing twice makes the token
//! malformed (JSON parsers disagree on which duplicate wins, an ambiguity attackers exploit).
//! Unknown claims are skipped without building values. The payload must be UTF-8 (RFC 8259 §8.1).

use std::borrow::Cow;

use super::json_scan::{Scalar, Scanner};

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

/// The `cnf` claim (RFC 7800), as far as sender-constrained tokens need it.
#[derive(Debug, Default, Clone, PartialEq)]
pub enum Confirmation<'a> {
    #[default]
    Absent,
    /// An object; `x5t_s256` is its `x5t#S256` member (RFC 8705 §3.1), of any JSON type.
    Methods { x5t_s256: Claim<'a> },
    /// Present but not an object.
    Other,
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
    pub cnf: Confirmation<'a>,
    /// `cnf.jkt` (RFC 9449 §6.1): `Str` when it is a string, `Other` when it is not, `Absent`
    /// without it (or without an object `cnf`).
    pub cnf_jkt: Claim<'a>,
    /// RFC 9068 §2.2.3 / RFC 8693 §4.2: space-delimited scope-tokens.
    pub scope: Claim<'a>,
    /// The `scope` of Okta and Entra ID: a string or an array of strings.
    pub scp: Claim<'a>,
    /// RFC 9068 §2.2: the OAuth client the token was issued to.
    pub client_id: Claim<'a>,
    /// Auth0's RBAC permissions: an array of strings, each one scope.
    pub permissions: Claim<'a>,
    /// OpenID Connect Core §2: how the user authenticated, and when (RFC 9470 step-up).
    pub acr: Claim<'a>,
    pub auth_time: Claim<'a>,
}

impl<'a> Claims<'a> {
    /// `None` when the payload is not UTF-8, not a JSON object, repeats a known claim, or
    /// holds a known numeric claim too large for a double.
    pub fn parse(json: &'a [u8]) -> Option<Claims<'a>> {
        let text = std::str::from_utf8(json).ok()?;
        let mut claims = Claims::default();
        Scanner::new(text).object(|key, scanner| {
            if key == "cnf" {
                if !matches!(claims.cnf, Confirmation::Absent) {
                    return None;
                }
                (claims.cnf, claims.cnf_jkt) = Confirmation::read(scanner)?;
                return Some(());
            }
            let Some(slot) = claims.slot(&key) else {
                return scanner.skip_value();
            };
            read_once(slot, scanner)
        })?;
        Some(claims)
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
            "scope" => &mut self.scope,
            "scp" => &mut self.scp,
            "client_id" => &mut self.client_id,
            "permissions" => &mut self.permissions,
            "acr" => &mut self.acr,
            "auth_time" => &mut self.auth_time,
            _ => return None,
        })
    }
}

/// Reads a known claim's value into `slot`; `None` when malformed or already present (JSON
/// parsers disagree on which duplicate wins, an ambiguity attackers exploit).
fn read_once<'a>(slot: &mut Claim<'a>, scanner: &mut Scanner<'a>) -> Option<()> {
    let value = match scanner.value()? {
        Scalar::Str(s) => Claim::Str(s),
        Scalar::Num(n) if n.is_finite() => Claim::Num(n),
        Scalar::Num(_) => return None,
        Scalar::StrList(list) => Claim::StrList(list),
        // A JSON null is a present claim of the wrong type, never "absent".
        Scalar::Other => Claim::Other,
    };
    if !slot.is_absent() {
        return None;
    }
    *slot = value;
    Some(())
}

impl<'a> Confirmation<'a> {
    /// Reads `cnf`'s value: its known members once each (a repeated one is `None`, malformed),
    /// the others skipped; with it, `cnf.jkt` as [`Claims::cnf_jkt`] holds it (`Other` when
    /// it is not a string).
    fn read(scanner: &mut Scanner<'a>) -> Option<(Confirmation<'a>, Claim<'a>)> {
        if !scanner.at_object() {
            scanner.skip_value()?;
            // Not an object: no `jkt` in it, so not bound to a DPoP key (certificate binding,
            // when on, refuses it as malformed).
            return Some((Confirmation::Other, Claim::Absent));
        }
        let mut x5t_s256 = Claim::Absent;
        let mut jkt = Claim::Absent;
        scanner.members(|key, scanner| match &*key {
            "x5t#S256" => read_once(&mut x5t_s256, scanner),
            "jkt" => {
                if !jkt.is_absent() {
                    return None;
                }
                jkt = match scanner.value()? {
                    Scalar::Str(s) => Claim::Str(s),
                    _ => Claim::Other,
                };
                Some(())
            }
            _ => scanner.skip_value(),
        })?;
        Some((Confirmation::Methods { x5t_s256 }, jkt))
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
        assert!(
            Claims::parse(b"{\"x\":\"\xff\"}").is_none(),
            "invalid UTF-8"
        );
        for json in [&b"[]"[..], b"1", b"\"s\"", b"null", b"{", b"{}x"] {
            assert!(
                Claims::parse(json).is_none(),
                "{:?}",
                String::from_utf8_lossy(json)
            );
        }
    }

    #[test]
    fn rejects_lone_surrogates_in_known_and_skipped_members() {
        for json in [
            &br#"{"sub":{"\udc00":1}}"#[..],
            br#"{"sub":"u","x":"\ud800"}"#,
            br#"{"sub":"u","x":{"y":["\udc00\ud800"]}}"#,
            br#"{"aud":[1,"\ud83d"]}"#,
            br#"{"\ud83d":1}"#,
        ] {
            assert!(
                Claims::parse(json).is_none(),
                "{:?}",
                String::from_utf8_lossy(json)
            );
        }
    }

    #[test]
    fn reads_the_certificate_thumbprint_of_cnf_once() {
        let c = Claims::parse(br#"{"cnf":{"jkt":"k","x5t#S256":"abc"},"sub":"u"}"#).unwrap();
        assert_eq!(
            c.cnf,
            Confirmation::Methods {
                x5t_s256: Claim::Str("abc".into())
            }
        );
        let c = Claims::parse(br#"{"cnf":{"x5t#S256":{"a":1}}}"#).unwrap();
        assert_eq!(
            c.cnf,
            Confirmation::Methods {
                x5t_s256: Claim::Other
            }
        );
        for other in [r#""s""#, "null", "[1]", "1"] {
            let json = format!(r#"{{"cnf":{other}}}"#);
            assert_eq!(
                Claims::parse(json.as_bytes()).unwrap().cnf,
                Confirmation::Other
            );
        }
        assert_eq!(Claims::parse(b"{}").unwrap().cnf, Confirmation::Absent);
        for twice in [
            &br#"{"cnf":{"x5t#S256":"a","x5t#S256":"b"}}"#[..],
            br#"{"cnf":{"x5t#S256":"a","x5t\u0023S256":"b"}}"#,
            br#"{"cnf":{},"cnf":{}}"#,
            br#"{"cnf":{"x5t#S256":"a"}"#,
        ] {
            assert!(
                Claims::parse(twice).is_none(),
                "{}",
                String::from_utf8_lossy(twice)
            );
        }
    }

    #[test]
    fn reads_fractional_numeric_dates() {
        let c = Claims::parse(br#"{"iat":1700000000.123,"exp":1700000060.5,"nbf":1.7e9}"#).unwrap();
        assert_eq!(c.iat, Claim::Num(1_700_000_000.123));
        assert_eq!(c.exp, Claim::Num(1_700_000_060.5));
        assert_eq!(c.nbf, Claim::Num(1.7e9));
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
