//! Property tests of the JWT core through the crate's rlib: every validly signed token with
//! valid claims authenticates, every single-byte mutation of it fails, and what is signed is
//! what verifies. Also config validation (every value within the schema's bounds is
//! accepted, every value outside refused) and token issuance (what we issue, we accept).

use auth_shield::internals::sign_payload;
use auth_shield::internals::AuthError;
use auth_shield::internals::Settings;
use auth_shield::internals::TokenKind;
use auth_shield::internals::{decode_verified, HmacKey};
use auth_shield::internals::{schema, OptionKind};
use auth_shield::internals::{ArgError, RawConfig};
use auth_shield::internals::{Authenticator, IssueError, TenantId};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

const SECRET: &[u8] = b"property-secret-property-secret!!";
const NOW: f64 = 1_700_000_000.0;

fn authenticator() -> Authenticator {
    let config = RawConfig::new()
        .with("accessSecret", SECRET)
        .with("clockTimestamp", NOW)
        .with("rateLimitMax", 0.0)
        .with("issuer", "https://issuer.test")
        .with("audience", vec!["api", "admin"]);
    Authenticator::new(Settings::from_config(config).unwrap())
}

/// Claims a well-behaved issuer could put in an access token, valid at `NOW`.
#[derive(Debug, Clone)]
struct ValidClaims {
    sub: String,
    email: Option<String>,
    role: Option<String>,
    tenant_id: Option<String>,
    aud: Value,
    exp_in: u32,
    nbf_ago: Option<u32>,
    extra: Option<(String, i64)>,
}

impl ValidClaims {
    fn to_json(&self) -> Vec<u8> {
        let mut m = Map::new();
        m.insert("sub".into(), self.sub.clone().into());
        m.insert("iss".into(), "https://issuer.test".into());
        m.insert("aud".into(), self.aud.clone());
        m.insert("exp".into(), (NOW as i64 + 1 + self.exp_in as i64).into());
        m.insert("iat".into(), (NOW as i64).into());
        m.insert("type".into(), "access".into());
        if let Some(ago) = self.nbf_ago {
            m.insert("nbf".into(), (NOW as i64 - ago as i64).into());
        }
        for (name, value) in [
            ("email", &self.email),
            ("role", &self.role),
            ("tenant_id", &self.tenant_id),
        ] {
            if let Some(v) = value {
                m.insert(name.into(), v.clone().into());
            }
        }
        if let Some((name, value)) = &self.extra {
            m.entry(name.clone()).or_insert_with(|| (*value).into());
        }
        serde_json::to_vec(&Value::Object(m)).unwrap()
    }
}

fn valid_claims() -> impl Strategy<Value = ValidClaims> {
    (
        // Any non-empty Unicode subject, including quotes, escapes and astral characters.
        "\\PC{1,40}",
        proptest::option::of("\\PC{0,40}"),
        proptest::option::of("[a-z]{1,12}"),
        proptest::option::of("[A-Za-z0-9][A-Za-z0-9_-]{0,62}"),
        prop_oneof![
            Just(json!("api")),
            Just(json!(["other", "admin"])),
            Just(json!(["api"]))
        ],
        0u32..10_000_000,
        proptest::option::of(0u32..1_000_000),
        // Unknown claims are carried along and ignored.
        proptest::option::of(("x_[a-z_]{1,10}", any::<i64>())),
    )
        .prop_map(
            |(sub, email, role, tenant_id, aud, exp_in, nbf_ago, extra)| ValidClaims {
                sub,
                email,
                role,
                tenant_id,
                aud,
                exp_in,
                nbf_ago,
                extra,
            },
        )
}

fn bearer(token: &str) -> Vec<u8> {
    format!("Bearer {token}").into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_validly_signed_token_with_valid_claims_authenticates(claims in valid_claims()) {
        let auth = authenticator();
        let token = sign_payload(&HmacKey::new(SECRET), &claims.to_json());
        let header = bearer(&token);
        let (user, email, role, tenant) = auth.authenticate(Some(&header), None, None, |outcome| {
            let identity = outcome.result.as_ref().map_err(|f| f.error).expect("authenticates");
            let tenant = match &identity.tenant {
                TenantId::Claim(t) => Some(t.to_string()),
                TenantId::None => None,
                _ => panic!("tenant from an unexpected source"),
            };
            (
                identity.user_id.to_string(),
                identity.email.as_ref().map(|e| e.to_string()),
                identity.role.as_ref().map(|r| r.to_string()),
                tenant,
            )
        });
        prop_assert_eq!(user, claims.sub);
        prop_assert_eq!(email, claims.email);
        prop_assert_eq!(role, claims.role);
        prop_assert_eq!(tenant, claims.tenant_id);
    }

    #[test]
    fn any_single_byte_mutation_of_a_valid_token_fails(
        claims in valid_claims(),
        at in any::<prop::sample::Index>(),
        to in any::<u8>(),
    ) {
        let auth = authenticator();
        let token = sign_payload(&HmacKey::new(SECRET), &claims.to_json());
        let mut mutated = token.into_bytes();
        let at = at.index(mutated.len());
        prop_assume!(mutated[at] != to);
        mutated[at] = to;
        let mut header = b"Bearer ".to_vec();
        header.extend_from_slice(&mutated);
        let verdict = auth.authenticate(Some(&header), None, None, |o| o.result.as_ref().err().map(|f| f.error));
        prop_assert!(verdict.is_some(), "mutation at {} to {:#x} authenticated", at, to);
        let mut scratch = Vec::new();
        prop_assert!(decode_verified(&mutated, &HmacKey::new(SECRET), &mut scratch).is_err());
    }

    #[test]
    fn signed_payloads_round_trip_through_verification(claims in valid_claims()) {
        let key = HmacKey::new(SECRET);
        let token = sign_payload(&key, &claims.to_json());
        let mut scratch = Vec::new();
        let decoded = decode_verified(token.as_bytes(), &key, &mut scratch).expect("verifies");
        prop_assert_eq!(decoded.sub.as_str(), Some(claims.sub.as_str()));
        prop_assert_eq!(decoded.email.as_str(), claims.email.as_deref());
        prop_assert_eq!(decoded.role.as_str(), claims.role.as_deref());
        prop_assert_eq!(decoded.tenant_id.as_str(), claims.tenant_id.as_deref());
        prop_assert_eq!(decoded.exp.as_num(), Some(NOW + 1.0 + claims.exp_in as f64));
    }

    #[test]
    fn a_token_signed_with_another_secret_never_verifies(
        claims in valid_claims(),
        other in proptest::collection::vec(any::<u8>(), 1..64),
    ) {
        prop_assume!(other != SECRET);
        let token = sign_payload(&HmacKey::new(&other), &claims.to_json());
        let mut scratch = Vec::new();
        let verdict = decode_verified(token.as_bytes(), &HmacKey::new(SECRET), &mut scratch).err();
        prop_assert_eq!(verdict, Some(AuthError::InvalidSignature));
    }

    #[test]
    fn expired_tokens_are_refused_whatever_else_they_say(
        claims in valid_claims(),
        expired_for in 0u32..100_000_000,
    ) {
        let mut payload: Value = serde_json::from_slice(&claims.to_json()).unwrap();
        payload["exp"] = json!(NOW as i64 - expired_for as i64);
        let token = sign_payload(&HmacKey::new(SECRET), &serde_json::to_vec(&payload).unwrap());
        let header = bearer(&token);
        let auth = authenticator();
        let code = auth.authenticate(Some(&header), None, None, |o| {
            o.result.as_ref().err().map(|f| f.error.code())
        });
        prop_assert_eq!(code, Some("token_expired"));
    }

    #[test]
    fn arbitrary_authorization_bytes_never_authenticate(header in proptest::collection::vec(any::<u8>(), 0..300)) {
        let auth = authenticator();
        let ok = auth.authenticate(Some(&header), None, None, |o| o.result.is_ok());
        prop_assert!(!ok);
    }

    #[test]
    fn numeric_options_accept_their_range_and_refuse_the_rest(
        option in 0usize..64,
        unit in 0.0f64..=1.0,
        outside in 1e-6f64..1e12,
        above in any::<bool>(),
    ) {
        let numeric: Vec<_> = schema()
            .options
            .iter()
            .filter(|o| matches!(o.kind, OptionKind::Number | OptionKind::Integer))
            .collect();
        let spec = numeric[option % numeric.len()];
        let (min, max) = (spec.min.unwrap(), spec.max.unwrap());
        let mut inside = min + (max - min) * unit;
        if spec.kind == OptionKind::Integer {
            inside = inside.round().clamp(min, max);
        }
        if !(spec.exclusive_min && inside == min) {
            let ok = Settings::from_config(RawConfig::new().with("accessSecret", SECRET).with(&spec.name, inside));
            prop_assert!(ok.is_ok(), "{} = {} refused: {:?}", spec.name, inside, ok.err());
        }
        let bad = if above { max + outside } else { min - outside };
        let err = Settings::from_config(RawConfig::new().with("accessSecret", SECRET).with(&spec.name, bad)).err();
        prop_assert!(
            matches!(&err, Some(ArgError::Range(m)) if m.contains(&spec.name)),
            "{} = {} gave {:?}", spec.name, bad, err
        );
    }

    #[test]
    fn issued_tokens_verify_and_authenticate_with_their_claims(claims in valid_claims(), refresh in any::<bool>()) {
        let auth = authenticator_with_refresh();
        let mut input: Map<String, Value> = serde_json::from_slice(&claims.to_json()).unwrap();
        for reserved in ["iss", "exp", "iat", "type"] {
            input.remove(reserved);
        }
        let kind = if refresh { TokenKind::Refresh } else { TokenKind::Access };
        let token = auth.issue(kind, &Value::Object(input).to_string()).expect("issues");
        let mut scratch = Vec::new();
        let verified = auth.verify(kind, token.as_bytes(), &mut scratch).unwrap().expect("verifies");
        prop_assert_eq!(verified.sub.as_str(), Some(claims.sub.as_str()));
        prop_assert_eq!(verified.tenant_id.as_str(), claims.tenant_id.as_deref());
        prop_assert_eq!(verified.token_type.as_str(), Some(kind.claim()));
        // A token of one kind never passes as the other.
        let other = if refresh { TokenKind::Access } else { TokenKind::Refresh };
        prop_assert!(auth.verify(other, token.as_bytes(), &mut scratch).unwrap().is_err());
    }

    #[test]
    fn issuance_refuses_every_reserved_claim(claims in valid_claims(), reserved in prop::sample::select(vec!["iat", "exp", "jti", "type", "iss"])) {
        let auth = authenticator_with_refresh();
        let mut input: Map<String, Value> = serde_json::from_slice(&claims.to_json()).unwrap();
        for owned in ["iss", "exp", "iat", "type"] {
            input.remove(owned);
        }
        input.insert(reserved.into(), json!(1));
        let err = auth.issue(TokenKind::Access, &Value::Object(input).to_string()).unwrap_err();
        prop_assert!(matches!(&err, IssueError::Claims(e) if e.message().contains(reserved)), "{:?}", err);
    }
}

fn authenticator_with_refresh() -> Authenticator {
    let config = RawConfig::new()
        .with("accessSecret", SECRET)
        .with(
            "refreshSecret",
            &b"refresh-secret-refresh-secret-refresh!"[..],
        )
        .with("clockTimestamp", NOW)
        .with("rateLimitMax", 0.0)
        .with("issuer", "https://issuer.test")
        .with("audience", vec!["api", "admin"]);
    Authenticator::new(Settings::from_config(config).unwrap())
}
