use super::*;
use crate::authenticator::Authenticator;
use crate::config::RawConfig;
use crate::jwt::test_tokens::hs256;
use crate::settings::Settings;

const A: &[u8] = &[1; 32];
const B: &[u8] = &[2; 32];

fn key(kid: &str, secret: &[u8]) -> RawValue {
    RawValue::Fields(vec![
        ("kid", RawValue::Text(kid.into())),
        ("alg", RawValue::Text("HS256".into())),
        ("key", RawValue::Bytes(secret.into())),
    ])
}

fn issuer(name: &str, keys: Vec<RawValue>, extra: Vec<(&'static str, RawValue)>) -> RawValue {
    let mut fields = vec![("issuer", RawValue::Text(name.into()))];
    if !keys.is_empty() {
        fields.push(("keys", RawValue::List(keys)));
    }
    fields.extend(extra);
    RawValue::Fields(fields)
}

fn registry(items: Vec<RawValue>) -> Result<Authenticator, ArgError> {
    let mut raw = RawConfig::new().with("rateLimitMax", 0.0);
    raw.push("issuers".into(), RawValue::List(items));
    Settings::from_config(raw).map(Authenticator::new)
}

fn two() -> Authenticator {
    registry(vec![
        issuer("https://a.example/", vec![key("k", A)], vec![]),
        issuer(
            "https://b.example/",
            vec![key("k", B)],
            vec![("tenant", RawValue::Text("tenant-b".into()))],
        ),
    ])
    .unwrap()
}

fn token(kid: &str, payload: &str, secret: &[u8]) -> String {
    hs256(
        &format!(r#"{{"alg":"HS256","kid":"{kid}"}}"#),
        payload,
        secret,
    )
}

fn verdict(
    core: &Authenticator,
    token: &str,
) -> Result<(Option<String>, Option<&'static str>), &'static str> {
    let header = format!("Bearer {token}");
    core.authenticate(Some(header.as_bytes()), None, None, |o| match &o.result {
        Ok(id) => Ok((id.tenant.as_str().map(str::to_owned), id.tenant.source())),
        Err(f) => Err(f.error.code()),
    })
}

#[test]
fn the_iss_selects_the_issuer_before_the_kid() {
    let core = two();
    let a = token(
        "k",
        r#"{"sub":"u","exp":9999999999,"iss":"https://a.example/"}"#,
        A,
    );
    let b = token(
        "k",
        r#"{"sub":"u","exp":9999999999,"iss":"https://b.example/"}"#,
        B,
    );
    assert_eq!(verdict(&core, &a), Ok((None, None)));
    assert_eq!(
        verdict(&core, &b),
        Ok((Some("tenant-b".into()), Some("issuer")))
    );
    // A's key and kid, claiming B: B's own key "k" refuses the signature.
    let forged = token(
        "k",
        r#"{"sub":"u","exp":9999999999,"iss":"https://b.example/"}"#,
        A,
    );
    assert_eq!(verdict(&core, &forged), Err("invalid_signature"));
}

#[test]
fn untrusted_issuers_are_refused_byte_for_byte() {
    let core = two();
    for iss in [
        r#""https://a.example""#,
        r#""https://A.example/""#,
        r#""https://a.example//""#,
        r#""https://c.example/""#,
        "7",
        "null",
    ] {
        let t = token(
            "k",
            &format!(r#"{{"sub":"u","exp":9999999999,"iss":{iss}}}"#),
            A,
        );
        assert_eq!(verdict(&core, &t), Err("untrusted_issuer"), "{iss}");
    }
    let t = token("k", r#"{"sub":"u","exp":9999999999}"#, A);
    assert_eq!(verdict(&core, &t), Err("untrusted_issuer"));
}

#[test]
fn set_keys_replaces_one_issuers_set() {
    let core = two();
    let a = token(
        "k2",
        r#"{"sub":"u","exp":9999999999,"iss":"https://a.example/"}"#,
        B,
    );
    assert_eq!(verdict(&core, &a), Err("unknown_key"));
    let generation = core
        .replace_keys(vec![key("k2", B)], Some("https://a.example/"))
        .unwrap();
    assert_eq!(generation, 1);
    assert_eq!(verdict(&core, &a), Ok((None, None)));
    assert!(core.replace_keys(vec![key("k2", B)], None).is_err());
    assert!(core
        .replace_keys(vec![key("k2", B)], Some("https://a.example"))
        .is_err());
}

#[test]
fn the_issuers_option_is_bounded_and_exclusive() {
    let many: Vec<_> = (0..=MAX_ISSUERS)
        .map(|i| issuer(&format!("https://{i}.example/"), vec![key("k", A)], vec![]))
        .collect();
    assert!(matches!(registry(many), Err(ArgError::Range(_))));
    assert!(matches!(registry(vec![]), Err(ArgError::Range(_))));
    let twice = vec![
        issuer("https://a.example/", vec![], vec![]),
        issuer("https://a.example/", vec![], vec![]),
    ];
    assert!(matches!(registry(twice), Err(ArgError::Range(_))));
    let mut raw = RawConfig::new().with("accessSecret", A);
    raw.push(
        "issuers".into(),
        RawValue::List(vec![issuer("https://a.example/", vec![], vec![])]),
    );
    assert!(matches!(Settings::from_config(raw), Err(ArgError::Type(_))));
}

fn verdict_with(
    core: &Authenticator,
    token: &str,
    tenant_header: Option<&[u8]>,
) -> Result<(Option<String>, Option<&'static str>), &'static str> {
    let header = format!("Bearer {token}");
    core.authenticate(Some(header.as_bytes()), tenant_header, None, |o| {
        match &o.result {
            Ok(id) => Ok((id.tenant.as_str().map(str::to_owned), id.tenant.source())),
            Err(f) => Err(f.error.code()),
        }
    })
}

#[test]
fn per_issuer_audiences_replace_the_configs_and_algorithms_limit_its_tokens() {
    let mut raw = RawConfig::new()
        .with("rateLimitMax", 0.0)
        .with("audience", "api");
    raw.push(
        "issuers".into(),
        RawValue::List(vec![
            issuer("https://a.example/", vec![key("k", A)], vec![]),
            issuer(
                "https://b.example/",
                vec![key("k", B)],
                vec![
                    ("audience", RawValue::Text("api-b".into())),
                    (
                        "algorithms",
                        RawValue::List(vec![RawValue::Text("RS256".into())]),
                    ),
                ],
            ),
        ]),
    );
    let core = Authenticator::new(Settings::from_config(raw).unwrap());
    let a = |aud: &str| {
        token(
            "k",
            &format!(r#"{{"sub":"u","exp":9999999999,"aud":"{aud}","iss":"https://a.example/"}}"#),
            A,
        )
    };
    assert_eq!(verdict(&core, &a("api")), Ok((None, None)));
    assert_eq!(verdict(&core, &a("api-b")), Err("invalid_audience"));
    // B's only algorithm is RS256: its HS256 key is never selected.
    let b = token(
        "k",
        r#"{"sub":"u","exp":9999999999,"aud":"api-b","iss":"https://b.example/"}"#,
        B,
    );
    assert_eq!(verdict(&core, &b), Err("unsupported_algorithm"));
}

#[test]
fn the_issuers_tenant_is_vouched_for() {
    let core = two();
    let b = |tenant: &str| {
        token(
            "k",
            &format!(
                r#"{{"sub":"u","exp":9999999999,"iss":"https://b.example/","tenant_id":"{tenant}"}}"#
            ),
            B,
        )
    };
    assert_eq!(
        verdict(&core, &b("TENANT-B")),
        Ok((Some("tenant-b".into()), Some("issuer")))
    );
    assert_eq!(verdict(&core, &b("acme")), Err("tenant_mismatch"));
    // Without enforceTenantMatch the header asks nothing of an issuer's tenant.
    let plain = token(
        "k",
        r#"{"sub":"u","exp":9999999999,"iss":"https://b.example/"}"#,
        B,
    );
    assert_eq!(
        verdict_with(&core, &plain, Some(b"other")),
        Ok((Some("tenant-b".into()), Some("issuer")))
    );
}
