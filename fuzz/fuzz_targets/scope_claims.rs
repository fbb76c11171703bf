//! Scope claims (`scope`, `scp`, `permissions`) on hostile payloads: what `AuthResult.scope`
//! reports and what `requiredScope` decides must agree. Never a panic; a granted list is
//! single-spaced RFC 6749 §3.3 scope-tokens; a token passes a requirement only if every
//! required scope-token is granted, and is refused as `insufficient_scope` only if one is not;
//! a claim of the wrong type is `invalid_claims` in both.
#![no_main]

use auth_shield::internals::{granted_scopes, AuthError, ClaimRules, Claims, Scopes, TokenKind};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    payload: Vec<u8>,
    /// Required scope-tokens (those that are not valid ones are dropped, as config refuses them).
    required: Vec<String>,
}

fn nqchar(b: u8) -> bool {
    b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b)
}

fn rules(required: Vec<String>) -> ClaimRules {
    ClaimRules {
        issuers: vec![],
        audiences: vec![],
        clock_tolerance_sec: 0.0,
        require_expiration: false,
        require_subject: false,
        require_token_type: false,
        expected_type: TokenKind::Access,
        required_scopes: required,
        access_token_profile: false,
        required_acr: vec![],
        max_auth_age_sec: None,
    }
}

fuzz_target!(|input: Input| {
    let Some(mut claims) = Claims::parse(&input.payload) else {
        return;
    };
    let required: Vec<String> = input
        .required
        .into_iter()
        .filter(|s| !s.is_empty() && s.bytes().all(nqchar))
        .take(4)
        .collect();
    let verdict = if required.is_empty() {
        None
    } else {
        Some(rules(required.clone()).validate(&claims, 0.0))
    };
    let granted = granted_scopes(&mut claims);
    if let Scopes::Granted(list) = &granted {
        let bytes = list.as_bytes();
        assert!(
            !bytes.starts_with(b" ") && !bytes.ends_with(b" "),
            "{list:?}"
        );
        assert!(!list.contains("  "), "{list:?}");
        assert!(bytes.iter().all(|&b| b == b' ' || nqchar(b)), "{list:?}");
    }
    let Some(verdict) = verdict else { return };
    let has = |want: &str| match &granted {
        Scopes::Granted(list) => list.split(' ').any(|t| t == want),
        _ => false,
    };
    match verdict {
        Ok(()) => assert!(
            required.iter().all(|r| has(r)),
            "{required:?} vs {granted:?}"
        ),
        Err(AuthError::InsufficientScope) => {
            assert!(
                !required.iter().all(|r| has(r)),
                "{required:?} vs {granted:?}"
            )
        }
        // Other claims (exp, nbf, iat, sub types) may fail first; a malformed scope never passes.
        Err(_) => {}
    }
    if granted == Scopes::Malformed {
        assert!(verdict.is_err());
    }
});
