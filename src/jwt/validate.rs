//! Claim validation: types, time window, audience, issuer, subject and token type.

use std::borrow::Cow;

use super::claims::{Claim, Claims};
use super::kind::TokenKind;

use crate::error::AuthError;

/// The claim checks an authenticator applies, fixed at construction.
#[derive(Debug, Clone)]
pub struct ClaimRules {
    /// Accepted `iss` values; empty means "not checked".
    pub issuers: Vec<String>,
    /// Accepted `aud` values (a token passes if any of its audiences is listed); empty means "not checked".
    pub audiences: Vec<String>,
    /// Seconds of leeway for `exp`, `nbf`, `iat` and `auth_time`.
    pub clock_tolerance_sec: f64,
    pub require_expiration: bool,
    pub require_subject: bool,
    /// Refuse tokens that carry no `type` claim.
    pub require_token_type: bool,
    /// The kind whose `type` claim this check accepts.
    pub expected_type: TokenKind,
    /// Scope-tokens the token must grant, all of them (`requiredScope`); empty means "not
    /// checked". Access tokens only.
    pub required_scopes: Vec<String>,
    /// RFC 9068: header `typ` at+jwt (checked in `verify`, before the key), and the profile's
    /// claims present. Access tokens only.
    pub access_token_profile: bool,
    /// RFC 9470 step-up: accepted `acr` values (empty: not checked) and the most seconds since
    /// `auth_time` (`None`: not checked). Access tokens only.
    pub required_acr: Vec<String>,
    pub max_auth_age_sec: Option<f64>,
}

impl ClaimRules {
    /// Checks in a fixed order (the same order the JS engine uses): types, nbf, iat, exp, aud,
    /// iss, sub, type, profile claims, step-up, scope (last: every 401 reason wins over the
    /// 403). `now` is the current time in whole seconds since the epoch.
    pub fn validate(&self, claims: &Claims<'_>, now: f64) -> Result<(), AuthError> {
        check_types(claims)?;
        let tolerance = self.clock_tolerance_sec;
        if let Claim::Num(nbf) = claims.nbf {
            if nbf > now + tolerance {
                return Err(AuthError::TokenNotYetValid);
            }
        }
        // RFC 7519 §4.1.6 makes `iat` informational, but a subject revocation's cut-off trusts
        // it: an `iat` in the future (an issuer writing milliseconds, 1e300) would outlive "log
        // out everywhere". Refused from the second after `now + tolerance` on (not the same
        // instant as `nbf`: `now` is a whole second and this library signs a millisecond `iat`).
        if let Claim::Num(iat) = claims.iat {
            if is_future(iat, now, tolerance) {
                return Err(AuthError::TokenNotYetValid);
            }
        }
        match claims.exp {
            Claim::Num(exp) if now >= exp + tolerance => return Err(AuthError::TokenExpired),
            Claim::Absent if self.require_expiration => return Err(AuthError::MissingExpiration),
            _ => {}
        }
        if !self.audiences.is_empty() && !self.audience_matches(&claims.aud) {
            return Err(AuthError::InvalidAudience);
        }
        if !self.issuers.is_empty()
            && !claims
                .iss
                .as_str()
                .is_some_and(|iss| self.issuers.iter().any(|i| i == iss))
        {
            return Err(AuthError::InvalidIssuer);
        }
        if self.require_subject && claims.sub.as_str().is_none_or(str::is_empty) {
            return Err(AuthError::MissingSubject);
        }
        match claims.token_type.as_str() {
            // A refresh token must never pass as an access token, even under a shared secret.
            Some(t) if t != self.expected_type.claim() => return Err(AuthError::WrongTokenType),
            None if self.require_token_type => return Err(AuthError::WrongTokenType),
            _ => {}
        }
        if self.access_token_profile {
            check_profile_claims(claims)?;
        }
        if !self.required_acr.is_empty() || self.max_auth_age_sec.is_some() {
            self.check_authentication(claims, now)?;
        }
        if self.required_scopes.is_empty() {
            return Ok(());
        }
        check_scopes(&self.required_scopes, claims)
    }

    /// RFC 9470 §3: the user's authentication is one of `required_acr` and no older than
    /// `max_auth_age_sec` (no leeway: a stale authentication is the caller's to renew). An
    /// `auth_time` in the future (as for `iat`) proves no recent authentication.
    fn check_authentication(&self, c: &Claims<'_>, now: f64) -> Result<(), AuthError> {
        if !matches!(c.acr, Claim::Absent | Claim::Str(_))
            || !matches!(c.auth_time, Claim::Absent | Claim::Num(_))
        {
            return Err(AuthError::InvalidClaims);
        }
        if !self.required_acr.is_empty()
            && !c
                .acr
                .as_str()
                .is_some_and(|acr| self.required_acr.iter().any(|a| a == acr))
        {
            return Err(AuthError::InsufficientUserAuthentication);
        }
        match (self.max_auth_age_sec, c.auth_time.as_num()) {
            (Some(max), Some(at))
                if now - at <= max && !is_future(at, now, self.clock_tolerance_sec) =>
            {
                Ok(())
            }
            (Some(_), _) => Err(AuthError::InsufficientUserAuthentication),
            (None, _) => Ok(()),
        }
    }

    fn audience_matches(&self, aud: &Claim<'_>) -> bool {
        let accepted = |a: &str| self.audiences.iter().any(|x| x == a);
        match aud {
            Claim::Str(a) => accepted(a),
            Claim::StrList(list) => list.iter().any(|a| accepted(a)),
            _ => false,
        }
    }
}

/// Whether a NumericDate lies a second or more past `now + tolerance`: `now` is a whole second
/// (the clock's resolution), so anything before the next one may be the present.
fn is_future(at: f64, now: f64, tolerance: f64) -> bool {
    at >= now + tolerance + 1.0
}

/// RFC 9068 §2.2: iss, aud, client_id, iat and jti present (exp and sub have their own codes
/// and are required with the profile). Present means a non-empty string (a non-empty list for
/// `aud`, a number for `iat`): an empty value names nothing to check.
fn check_profile_claims(c: &Claims<'_>) -> Result<(), AuthError> {
    if !matches!(c.client_id, Claim::Absent | Claim::Str(_)) {
        return Err(AuthError::InvalidClaims);
    }
    let named = |claim: &Claim<'_>| claim.as_str().is_some_and(|s| !s.is_empty());
    let aud = match &c.aud {
        Claim::StrList(list) => !list.is_empty(),
        other => named(other),
    };
    if named(&c.iss) && aud && named(&c.client_id) && c.iat.as_num().is_some() && named(&c.jti) {
        Ok(())
    } else {
        Err(AuthError::MissingProfileClaim)
    }
}

/// Every required scope must be granted by `scope`, `scp` or `permissions`. Read in place: no
/// list is built, whatever the claim's size (it is bounded by `maxTokenBytes`). Empty
/// scope-tokens (repeated spaces) never match, as a required scope is never empty. A `scope`
/// that is not a string, an `scp` that is neither a string nor an array of strings, or
/// `permissions` that are not an array of strings are `invalid_claims`: the token does not say
/// what it grants in a form we can read.
fn check_scopes(required: &[String], claims: &Claims<'_>) -> Result<(), AuthError> {
    let (scope, scp, permissions) = (&claims.scope, &claims.scp, &claims.permissions);
    if !matches!(scope, Claim::Absent | Claim::Str(_))
        || !matches!(scp, Claim::Absent | Claim::Str(_) | Claim::StrList(_))
        || !matches!(permissions, Claim::Absent | Claim::StrList(_))
    {
        return Err(AuthError::InvalidClaims);
    }
    let grants = |claim: &Claim<'_>, wanted: &str| match claim {
        Claim::Str(s) => s.split(' ').any(|t| t == wanted),
        Claim::StrList(list) => list.iter().any(|t| t == wanted),
        _ => false,
    };
    if required
        .iter()
        .all(|wanted| grants(scope, wanted) || grants(scp, wanted) || grants(permissions, wanted))
    {
        Ok(())
    } else {
        Err(AuthError::InsufficientScope)
    }
}

/// The scopes a verified token grants, for `AuthResult.scope` (contract/results.json).
#[derive(Debug, PartialEq)]
pub enum Scopes<'a> {
    /// None of `scope`, `scp` and `permissions`.
    Absent,
    /// One of them has a type `check_scopes` refuses as `invalid_claims`.
    Malformed,
    /// The scope-tokens the claims grant, space-delimited, in the order `scope`, `scp`,
    /// `permissions` (a scope granted twice is listed twice). An entry that is not an RFC 6749
    /// §3.3 scope-token (empty, a space inside, a quote, a backslash, non-ASCII) is left out:
    /// no required scope can ever match it.
    Granted(Cow<'a, str>),
}

/// Takes the scope claims out of `claims` into [`Scopes`]. The usual `scope` claim, already
/// single-spaced scope-tokens with no `scp` or `permissions`, is returned as it is (no copy);
/// anything else is joined into one new string.
pub fn granted_scopes<'a>(claims: &mut Claims<'a>) -> Scopes<'a> {
    let (scope, scp, permissions) = (&mut claims.scope, &mut claims.scp, &mut claims.permissions);
    if !matches!(scope, Claim::Absent | Claim::Str(_))
        || !matches!(scp, Claim::Absent | Claim::Str(_) | Claim::StrList(_))
        || !matches!(permissions, Claim::Absent | Claim::StrList(_))
    {
        return Scopes::Malformed;
    }
    if let (Claim::Str(s), Claim::Absent, Claim::Absent) = (&*scope, &*scp, &*permissions) {
        if single_spaced_tokens(s.as_bytes()) {
            return match std::mem::take(scope) {
                Claim::Str(s) => Scopes::Granted(s),
                _ => Scopes::Absent,
            };
        }
    }
    if scope.is_absent() && scp.is_absent() && permissions.is_absent() {
        return Scopes::Absent;
    }
    // One allocation: at most every byte of the claims, plus a space between entries.
    let size = |claim: &Claim<'_>| match claim {
        Claim::Str(s) => s.len() + 1,
        Claim::StrList(list) => list.iter().map(|t| t.len() + 1).sum(),
        _ => 0,
    };
    let mut joined = String::with_capacity(size(scope) + size(scp) + size(permissions));
    for claim in [&*scope, &*scp, &*permissions] {
        match claim {
            Claim::Str(s) => push_tokens(&mut joined, s),
            Claim::StrList(list) => {
                for t in list {
                    if scope_token(t) {
                        push_token(&mut joined, t);
                    }
                }
            }
            _ => {}
        }
    }
    Scopes::Granted(Cow::Owned(joined))
}

/// One non-empty scope-token.
fn scope_token(token: &str) -> bool {
    !token.is_empty() && nqchars(token.as_bytes())
}

/// Every byte an RFC 6749 §3.3 NQCHAR (%x21 / %x23-5B / %x5D-7E). Written without an early
/// exit, so that the compiler checks many bytes per instruction: this runs on every request
/// whose token carries scopes.
pub(crate) fn nqchars(bytes: &[u8]) -> bool {
    bytes.iter().fold(true, |ok, &b| {
        ok & (0x21..=0x7e).contains(&b) & (b != b'"') & (b != b'\\')
    })
}

/// NQCHARs and spaces only (as [`nqchars`], spaces allowed).
fn nqchars_or_spaces(bytes: &[u8]) -> bool {
    bytes.iter().fold(true, |ok, &b| {
        ok & (0x20..=0x7e).contains(&b) & (b != b'"') & (b != b'\\')
    })
}

/// Appends the scope-tokens of the space-delimited `list`: whole when it is already
/// single-spaced scope-tokens, else token by token.
fn push_tokens(joined: &mut String, list: &str) {
    if single_spaced_tokens(list.as_bytes()) {
        if !list.is_empty() {
            push_token(joined, list);
        }
        return;
    }
    for token in list.split(' ') {
        if scope_token(token) {
            push_token(joined, token);
        }
    }
}

/// `''`, or scope-tokens each followed by one space but the last: `AuthResult.scope` as it is.
fn single_spaced_tokens(bytes: &[u8]) -> bool {
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return true;
    };
    nqchars_or_spaces(bytes)
        && first != b' '
        && last != b' '
        && !bytes.windows(2).any(|pair| pair == b"  ")
}

fn push_token(joined: &mut String, token: &str) {
    if !joined.is_empty() {
        joined.push(' ');
    }
    joined.push_str(token);
}

/// A registered claim of the wrong JSON type is an error, not a claim to ignore.
fn check_types(c: &Claims<'_>) -> Result<(), AuthError> {
    let string_or_absent = |claim: &Claim<'_>| matches!(claim, Claim::Absent | Claim::Str(_));
    let number_or_absent = |claim: &Claim<'_>| matches!(claim, Claim::Absent | Claim::Num(_));
    let ok = [
        &c.sub,
        &c.iss,
        &c.jti,
        &c.email,
        &c.role,
        &c.tenant_id,
        &c.token_type,
    ]
    .into_iter()
    .all(string_or_absent)
        && [&c.exp, &c.nbf, &c.iat].into_iter().all(number_or_absent)
        && matches!(c.aud, Claim::Absent | Claim::Str(_) | Claim::StrList(_));
    if ok {
        Ok(())
    } else {
        Err(AuthError::InvalidClaims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> ClaimRules {
        ClaimRules {
            issuers: vec![],
            audiences: vec![],
            clock_tolerance_sec: 0.0,
            require_expiration: true,
            require_subject: true,
            require_token_type: false,
            expected_type: TokenKind::Access,
            required_scopes: vec![],
            access_token_profile: false,
            required_acr: vec![],
            max_auth_age_sec: None,
        }
    }

    fn check(rules: &ClaimRules, json: &str, now: f64) -> Result<(), AuthError> {
        rules.validate(&Claims::parse(json.as_bytes()).unwrap(), now)
    }

    #[test]
    fn accepts_valid_claims() {
        assert_eq!(check(&rules(), r#"{"sub":"u","exp":100}"#, 99.0), Ok(()));
    }

    #[test]
    fn expiry_is_exclusive_and_honours_tolerance() {
        assert_eq!(
            check(&rules(), r#"{"sub":"u","exp":100}"#, 100.0),
            Err(AuthError::TokenExpired)
        );
        let lenient = ClaimRules {
            clock_tolerance_sec: 5.0,
            ..rules()
        };
        assert_eq!(check(&lenient, r#"{"sub":"u","exp":100}"#, 104.0), Ok(()));
        assert_eq!(
            check(&lenient, r#"{"sub":"u","exp":100}"#, 105.0),
            Err(AuthError::TokenExpired)
        );
    }

    #[test]
    fn not_before_honours_tolerance() {
        assert_eq!(
            check(&rules(), r#"{"sub":"u","exp":200,"nbf":101}"#, 100.0),
            Err(AuthError::TokenNotYetValid)
        );
        assert_eq!(
            check(&rules(), r#"{"sub":"u","exp":200,"nbf":100}"#, 100.0),
            Ok(())
        );
        let lenient = ClaimRules {
            clock_tolerance_sec: 2.0,
            ..rules()
        };
        assert_eq!(
            check(&lenient, r#"{"sub":"u","exp":200,"nbf":102}"#, 100.0),
            Ok(())
        );
    }

    #[test]
    fn requires_expiration_unless_disabled() {
        assert_eq!(
            check(&rules(), r#"{"sub":"u"}"#, 1.0),
            Err(AuthError::MissingExpiration)
        );
        let relaxed = ClaimRules {
            require_expiration: false,
            ..rules()
        };
        assert_eq!(check(&relaxed, r#"{"sub":"u"}"#, 1.0), Ok(()));
    }

    #[test]
    fn checks_issuer_and_audience() {
        let strict = ClaimRules {
            issuers: vec!["me".into()],
            audiences: vec!["api".into(), "web".into()],
            ..rules()
        };
        assert_eq!(
            check(
                &strict,
                r#"{"sub":"u","exp":9,"iss":"me","aud":"web"}"#,
                1.0
            ),
            Ok(())
        );
        assert_eq!(
            check(
                &strict,
                r#"{"sub":"u","exp":9,"iss":"me","aud":["x","api"]}"#,
                1.0
            ),
            Ok(())
        );
        assert_eq!(
            check(&strict, r#"{"sub":"u","exp":9,"iss":"me","aud":"x"}"#, 1.0),
            Err(AuthError::InvalidAudience)
        );
        assert_eq!(
            check(&strict, r#"{"sub":"u","exp":9,"iss":"me"}"#, 1.0),
            Err(AuthError::InvalidAudience)
        );
        assert_eq!(
            check(
                &strict,
                r#"{"sub":"u","exp":9,"iss":"you","aud":"api"}"#,
                1.0
            ),
            Err(AuthError::InvalidIssuer)
        );
        assert_eq!(
            check(&strict, r#"{"sub":"u","exp":9,"aud":"api"}"#, 1.0),
            Err(AuthError::InvalidIssuer)
        );
    }

    #[test]
    fn requires_a_subject() {
        assert_eq!(
            check(&rules(), r#"{"exp":9}"#, 1.0),
            Err(AuthError::MissingSubject)
        );
        assert_eq!(
            check(&rules(), r#"{"exp":9,"sub":""}"#, 1.0),
            Err(AuthError::MissingSubject)
        );
    }

    #[test]
    fn rejects_refresh_token_as_access() {
        assert_eq!(
            check(&rules(), r#"{"sub":"u","exp":9,"type":"refresh"}"#, 1.0),
            Err(AuthError::WrongTokenType)
        );
        assert_eq!(
            check(&rules(), r#"{"sub":"u","exp":9,"type":"Access"}"#, 1.0),
            Err(AuthError::WrongTokenType)
        );
        assert_eq!(
            check(&rules(), r#"{"sub":"u","exp":9,"type":"access"}"#, 1.0),
            Ok(())
        );
        let strict = ClaimRules {
            require_token_type: true,
            ..rules()
        };
        assert_eq!(
            check(&strict, r#"{"sub":"u","exp":9}"#, 1.0),
            Err(AuthError::WrongTokenType)
        );
    }

    #[test]
    fn rejects_claims_of_the_wrong_type() {
        for json in [
            r#"{"sub":1,"exp":9}"#,
            r#"{"sub":"u","exp":"9"}"#,
            r#"{"sub":"u","exp":9,"nbf":null}"#,
            r#"{"sub":"u","exp":9,"iat":true}"#,
            r#"{"sub":"u","exp":9,"aud":[1]}"#,
            r#"{"sub":"u","exp":9,"email":{}}"#,
            r#"{"sub":"u","exp":9,"tenant_id":7}"#,
            r#"{"sub":"u","exp":9,"type":["access"]}"#,
        ] {
            assert_eq!(
                check(&rules(), json, 1.0),
                Err(AuthError::InvalidClaims),
                "{json}"
            );
        }
    }

    fn scoped(required: &[&str]) -> ClaimRules {
        ClaimRules {
            required_scopes: required.iter().map(|s| (*s).to_owned()).collect(),
            ..rules()
        }
    }

    #[test]
    fn requires_every_scope_from_scope_or_scp() {
        let r = scoped(&["read", "write"]);
        let ok = |json: &str| check(&r, json, 1.0);
        assert_eq!(ok(r#"{"sub":"u","exp":9,"scope":"read write"}"#), Ok(()));
        assert_eq!(
            ok(r#"{"sub":"u","exp":9,"scope":"  write   x read "}"#),
            Ok(())
        );
        assert_eq!(ok(r#"{"sub":"u","exp":9,"scp":["write","read"]}"#), Ok(()));
        assert_eq!(ok(r#"{"sub":"u","exp":9,"scp":"read write"}"#), Ok(()));
        assert_eq!(
            ok(r#"{"sub":"u","exp":9,"scope":"read","scp":["write"]}"#),
            Ok(())
        );
        assert_eq!(
            ok(r#"{"sub":"u","exp":9,"permissions":["write","read"]}"#),
            Ok(())
        );
        assert_eq!(
            ok(r#"{"sub":"u","exp":9,"scope":"read","permissions":["write"]}"#),
            Ok(())
        );
        for lacking in [
            r#"{"sub":"u","exp":9}"#,
            r#"{"sub":"u","exp":9,"scope":"read"}"#,
            r#"{"sub":"u","exp":9,"scope":"readwrite"}"#,
            r#"{"sub":"u","exp":9,"scope":"read,write"}"#,
            r#"{"sub":"u","exp":9,"scope":"READ WRITE"}"#,
            r#"{"sub":"u","exp":9,"scope":""}"#,
            r#"{"sub":"u","exp":9,"scp":[]}"#,
            r#"{"sub":"u","exp":9,"scp":["read write"]}"#,
            r#"{"sub":"u","exp":9,"scope":"r\u00e9ad write read\u0000"}"#,
        ] {
            assert_eq!(ok(lacking), Err(AuthError::InsufficientScope), "{lacking}");
        }
    }

    #[test]
    fn granted_scopes_are_single_spaced_scope_tokens_borrowed_when_already_so() {
        let granted = |json: &str| {
            let mut claims = Claims::parse(json.as_bytes()).unwrap();
            match granted_scopes(&mut claims) {
                Scopes::Granted(s) => Ok((s.to_string(), matches!(s, Cow::Borrowed(_)))),
                Scopes::Absent => Err("absent"),
                Scopes::Malformed => Err("malformed"),
            }
        };
        for (json, want, borrowed) in [
            (r#"{"scope":"read write:x"}"#, "read write:x", true),
            (r#"{"scope":""}"#, "", true),
            (r#"{"scope":" read"}"#, "read", false),
            (r#"{"scope":"read "}"#, "read", false),
            (r#"{"scope":"read  write"}"#, "read write", false),
            (r#"{"scope":" "}"#, "", false),
            (
                r#"{"scope":"r\u00e9ad a\"b c\\d e\u0000 f\tg ok"}"#,
                "ok",
                false,
            ),
            (r#"{"scope":"\u0072ead"}"#, "read", false),
            (r#"{"scp":["read write","","ok"]}"#, "ok", false),
            (r#"{"scp":"a  b"}"#, "a b", false),
            (r#"{"scp":[]}"#, "", false),
            (
                r#"{"scope":"openid","scp":["a"],"permissions":["b","openid"]}"#,
                "openid a b openid",
                false,
            ),
        ] {
            assert_eq!(granted(json), Ok((want.to_owned(), borrowed)), "{json}");
        }
        assert_eq!(granted(r#"{"sub":"u"}"#), Err("absent"));
        for json in [
            r#"{"scope":["read"]}"#,
            r#"{"scope":null}"#,
            r#"{"scp":["read",1]}"#,
            r#"{"scp":{}}"#,
            r#"{"permissions":"read"}"#,
        ] {
            assert_eq!(granted(json), Err("malformed"), "{json}");
        }
    }

    #[test]
    fn a_scope_claim_of_another_type_is_invalid_claims_when_scopes_are_required() {
        let r = scoped(&["read"]);
        for json in [
            r#"{"sub":"u","exp":9,"scope":["read"]}"#,
            r#"{"sub":"u","exp":9,"scope":null}"#,
            r#"{"sub":"u","exp":9,"scope":1}"#,
            r#"{"sub":"u","exp":9,"scope":"read","scp":["read",1]}"#,
            r#"{"sub":"u","exp":9,"scp":{"read":true}}"#,
            r#"{"sub":"u","exp":9,"permissions":"read"}"#,
            r#"{"sub":"u","exp":9,"scope":"read","permissions":["read",null]}"#,
        ] {
            assert_eq!(
                check(&r, json, 1.0),
                Err(AuthError::InvalidClaims),
                "{json}"
            );
            // Without required scopes the claims are not read.
            assert_eq!(check(&rules(), json, 1.0), Ok(()), "{json}");
        }
    }

    #[test]
    fn every_401_reason_wins_over_insufficient_scope() {
        let r = scoped(&["read"]);
        assert_eq!(
            check(&r, r#"{"sub":"u","exp":1}"#, 5.0),
            Err(AuthError::TokenExpired)
        );
        assert_eq!(
            check(&r, r#"{"sub":"u","exp":9,"type":"refresh"}"#, 1.0),
            Err(AuthError::WrongTokenType)
        );
    }

    #[test]
    fn the_access_token_profile_requires_its_claims() {
        let r = ClaimRules {
            access_token_profile: true,
            ..rules()
        };
        let full = r#"{"iss":"i","exp":9,"aud":"a","sub":"u","client_id":"c","iat":1,"jti":"j"}"#;
        assert_eq!(check(&r, full, 1.0), Ok(()));
        let list = r#"{"iss":"i","exp":9,"aud":["a"],"sub":"u","client_id":"c","iat":1,"jti":"j"}"#;
        assert_eq!(check(&r, list, 1.0), Ok(()));
        for (without, code) in [
            ("iss", AuthError::MissingProfileClaim),
            ("aud", AuthError::MissingProfileClaim),
            ("client_id", AuthError::MissingProfileClaim),
            ("iat", AuthError::MissingProfileClaim),
            ("jti", AuthError::MissingProfileClaim),
        ] {
            let mut v: serde_json::Value = serde_json::from_str(full).unwrap();
            v.as_object_mut().unwrap().remove(without);
            assert_eq!(check(&r, &v.to_string(), 1.0), Err(code), "{without}");
            for empty in [serde_json::json!(""), serde_json::json!([])] {
                v[without] = empty;
                let verdict = check(&r, &v.to_string(), 1.0);
                assert!(verdict.is_err(), "{without} empty");
            }
        }
        let bad_client =
            r#"{"iss":"i","exp":9,"aud":"a","sub":"u","client_id":7,"iat":1,"jti":"j"}"#;
        assert_eq!(check(&r, bad_client, 1.0), Err(AuthError::InvalidClaims));
        // Without the profile, none of them is required.
        assert_eq!(
            check(&rules(), r#"{"sub":"u","exp":9,"client_id":7}"#, 1.0),
            Ok(())
        );
    }

    #[test]
    fn a_future_iat_is_not_yet_valid_from_the_second_after_the_tolerance() {
        for iat in ["1e300", "1700000000000", "101", "1.7976931348623157e308"] {
            let json = format!(r#"{{"sub":"u","exp":200,"iat":{iat}}}"#);
            assert_eq!(
                check(&rules(), &json, 100.0),
                Err(AuthError::TokenNotYetValid),
                "{iat}"
            );
        }
        // This library's millisecond iat within the clock's whole second passes.
        for iat in ["100.999", "100", "0", "-5"] {
            let json = format!(r#"{{"sub":"u","exp":200,"iat":{iat}}}"#);
            assert_eq!(check(&rules(), &json, 100.0), Ok(()), "{iat}");
        }
        let lenient = ClaimRules {
            clock_tolerance_sec: 30.0,
            ..rules()
        };
        let at = |iat: &str| {
            check(
                &lenient,
                &format!(r#"{{"sub":"u","exp":200,"iat":{iat}}}"#),
                100.0,
            )
        };
        assert_eq!(at("130.999"), Ok(()));
        assert_eq!(at("131"), Err(AuthError::TokenNotYetValid));
    }

    #[test]
    fn a_future_auth_time_proves_no_recent_authentication() {
        let r = ClaimRules {
            max_auth_age_sec: Some(300.0),
            ..rules()
        };
        let at = |t: &str| {
            check(
                &r,
                &format!(r#"{{"sub":"u","exp":2000,"auth_time":{t}}}"#),
                1000.0,
            )
        };
        for future in ["1001", "1010", "1000000", "1e300"] {
            assert_eq!(
                at(future),
                Err(AuthError::InsufficientUserAuthentication),
                "{future}"
            );
        }
        assert_eq!(at("1000.999"), Ok(()));
        assert_eq!(at("700"), Ok(()));
    }

    #[test]
    fn step_up_needs_an_accepted_acr_and_a_recent_auth_time() {
        let r = ClaimRules {
            required_acr: vec!["mfa".into(), "urn:x:gold".into()],
            max_auth_age_sec: Some(300.0),
            ..rules()
        };
        let at = |json: &str| check(&r, json, 1000.0);
        assert_eq!(
            at(r#"{"sub":"u","exp":2000,"acr":"mfa","auth_time":700}"#),
            Ok(())
        );
        assert_eq!(
            at(r#"{"sub":"u","exp":2000,"acr":"urn:x:gold","auth_time":999}"#),
            Ok(())
        );
        for lacking in [
            r#"{"sub":"u","exp":2000,"acr":"pwd","auth_time":999}"#,
            r#"{"sub":"u","exp":2000,"acr":"MFA","auth_time":999}"#,
            r#"{"sub":"u","exp":2000,"auth_time":999}"#,
            r#"{"sub":"u","exp":2000,"acr":"mfa","auth_time":699}"#,
            r#"{"sub":"u","exp":2000,"acr":"mfa"}"#,
        ] {
            assert_eq!(
                at(lacking),
                Err(AuthError::InsufficientUserAuthentication),
                "{lacking}"
            );
        }
        for odd in [
            r#"{"sub":"u","exp":2000,"acr":["mfa"],"auth_time":999}"#,
            r#"{"sub":"u","exp":2000,"acr":"mfa","auth_time":"999"}"#,
            r#"{"sub":"u","exp":2000,"acr":null,"auth_time":999}"#,
        ] {
            assert_eq!(at(odd), Err(AuthError::InvalidClaims), "{odd}");
        }
        // A 401 reason before it wins; it wins over insufficient_scope.
        assert_eq!(
            at(r#"{"sub":"u","exp":5,"acr":"pwd"}"#),
            Err(AuthError::TokenExpired)
        );
        let scoped = ClaimRules {
            required_scopes: vec!["read".into()],
            ..r
        };
        assert_eq!(
            check(
                &scoped,
                r#"{"sub":"u","exp":2000,"acr":"pwd","auth_time":999}"#,
                1000.0
            ),
            Err(AuthError::InsufficientUserAuthentication)
        );
    }
}
