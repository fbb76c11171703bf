use super::*;

const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

fn base() -> RawConfig {
    RawConfig::new().with("accessSecret", SECRET)
}

fn refused(raw: RawConfig) -> ArgError {
    validate(raw).expect_err("config should be refused")
}

/// The setting behind each schema option with a default, read through the public getters.
fn current(s: &Settings, name: &str) -> Option<serde_json::Value> {
    use serde_json::json;
    Some(match name {
        "clockToleranceSec" => json!(s.clock_tolerance_sec()),
        "rateLimitMax" => json!(s.rate_limit_max() as f64),
        "rateLimitRefillPerSec" => json!(s.rate_limit_refill()),
        "rateLimitMaxKeys" => json!(s.rate_limit_max_keys() as f64),
        "rateLimitClientCredentials" => json!(s.rate_limit_client_credentials()),
        "enforceTenantMatch" => json!(s.enforce_tenant_match()),
        "accessTtlSec" => json!(s.ttl_sec(crate::jwt::TokenKind::Access)),
        "refreshTtlSec" => json!(s.ttl_sec(crate::jwt::TokenKind::Refresh)),
        "maxTokenBytes" => json!(s.max_token_bytes() as f64),
        "requireTokenType" => json!(s.require_token_type()),
        "requireExpiration" => json!(s.require_expiration()),
        "requireSubject" => json!(s.require_subject()),
        "certificateBoundTokens" => json!(s.certificate_bound_tokens()),
        "requireCertificateBoundTokens" => json!(s.require_certificate_bound_tokens()),
        "refreshSecret" => json!(s.refresh_secret().map(|_| "set")),
        "issuer" => json!(Some(s.issuers()).filter(|l| !l.is_empty())),
        "audience" => json!(Some(s.audiences()).filter(|l| !l.is_empty())),
        "requiredAcr" => json!(Some(s.required_acr()).filter(|l| !l.is_empty())),
        "maxAuthAgeSec" => json!(s.max_auth_age_sec()),
        "requireAccessTokenProfile" => json!(s.access_token_profile()),
        "requiredScope" => json!(Some(s.required_scopes()).filter(|l| !l.is_empty())),
        "issuers" => json!(Some(s.trusted_issuers().len()).filter(|n| *n > 0)),
        "baseDomain" => json!(s.base_domain()),
        "clockTimestamp" => json!(s.clock_timestamp()),
        "maxRevocations" => json!(s.max_revocations() as f64),
        "dpop" => json!(s.dpop()),
        "dpopIatWindowSec" => json!(s.dpop_iat_window_sec()),
        "dpopMaxReplayEntries" => json!(s.dpop_max_replay_entries() as f64),
        "dpopNonceSecret" => json!(s.dpop_nonce_secret().map(|_| "set")),
        "dpopNonceLifetimeSec" => json!(s.dpop_nonce_lifetime_sec()),
        // Empty: the default list (src/dpop.rs DEFAULT_ALGS, the schema's default).
        "dpopAlgorithms" => match s.dpop_algorithms() {
            [] => json!(crate::dpop::DEFAULT_ALGS.map(|a| a.name())),
            given => json!(given),
        },
        "keys" => json!(s.access_secret().is_none().then_some("set")),
        "verifiedTokenCacheMaxEntries" => json!(s.verified_token_cache_size().map(|n| n as f64)),
        "introspectionCacheMaxEntries" => json!(s.introspection_cache().0 as f64),
        "introspectionCacheMaxBytes" => json!(s.introspection_cache().1 as f64),
        "introspectJwts" => json!(s.introspect_jwts()),
        "signingKey" => json!(s.signing_key().map(|k| k.kid())),
        _ => return None,
    })
}

fn same_number_or_value(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[test]
fn defaults_follow_the_schema() {
    let s = validate(base()).unwrap();
    for spec in &schema().options {
        // accessSecret has no default: one of it and keys is required (the test below).
        if spec.required || spec.name == "allowShortSecret" || spec.name == "accessSecret" {
            continue;
        }
        let actual = current(&s, &spec.name)
            .unwrap_or_else(|| panic!("no getter checked for option {}", spec.name));
        let wanted = spec.default.clone().unwrap_or(serde_json::Value::Null);
        assert!(
            same_number_or_value(&actual, &wanted),
            "{}: settings have {actual}, schema says {wanted}",
            spec.name
        );
    }
}

#[test]
fn every_schema_option_maps_to_a_setting() {
    for spec in &schema().options {
        let value = match spec.kind {
            OptionKind::Secret => Setting::Secret(Secret::from(SECRET)),
            OptionKind::StringList => Setting::List(vec!["x".into()]),
            OptionKind::Number | OptionKind::Integer => {
                Setting::Number(spec.min.unwrap_or(0.0) + 1.0)
            }
            OptionKind::Boolean => Setting::Bool(true),
            OptionKind::Domain => Setting::Text("example.com".into()),
            OptionKind::KeySet => Setting::Keys(vec![crate::jwt::KeySpec {
                kid: None,
                alg: crate::jwt::Alg::Hs256,
                key: Secret::from(SECRET),
            }]),
            OptionKind::SigningKey => {
                let rng = ring::rand::SystemRandom::new();
                let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
                let key = crate::issue::signing_key::SigningKey::from_pkcs8(
                    "EdDSA",
                    "k1",
                    pkcs8.as_ref(),
                )
                .unwrap();
                Setting::SigningKey(std::sync::Arc::new(key))
            }
            OptionKind::IssuerList => Setting::Issuers(Vec::new()),
        };
        let mut s = validate(base()).unwrap();
        assert!(
            s.set(&spec.name, value).is_ok(),
            "option {} has no setting",
            spec.name
        );
    }
}

#[test]
fn numeric_bounds_come_from_the_schema() {
    for spec in schema().options.iter().filter(|o| o.min.is_some()) {
        let (min, max) = (spec.min.unwrap(), spec.max.unwrap());
        let name = spec.name.as_str();
        let below = min - (min.abs() * 1e-9).max(1e-6);
        let above = max + (max.abs() * 1e-9).max(1e-6);
        for bad in [below, above, f64::NAN, f64::INFINITY] {
            let err = refused(base().with(name, bad));
            assert!(matches!(err, ArgError::Range(_)), "{name}={bad}: {err:?}");
            assert!(
                err.message().contains(&format!("config.{name} ")),
                "{err:?}"
            );
        }
        if spec.exclusive_min {
            assert!(
                matches!(refused(base().with(name, min)), ArgError::Range(m) if m.contains(name))
            );
        } else {
            assert!(validate(base().with(name, min)).is_ok(), "{name}={min}");
        }
        assert!(validate(base().with(name, max)).is_ok(), "{name}={max}");
        let err = refused(base().with(name, "1"));
        assert_eq!(
            err,
            ArgError::Type(format!("config.{name} must be a number"))
        );
        if spec.kind == OptionKind::Integer {
            let err = refused(base().with(name, min + 0.5));
            assert_eq!(
                err,
                ArgError::Range(format!("config.{name} must be an integer"))
            );
        }
    }
}

#[test]
fn wrong_kinds_are_type_errors_naming_the_option() {
    for spec in &schema().options {
        let name = spec.name.as_str();
        let wrong = if spec.kind == OptionKind::Boolean {
            RawValue::Number(1.0)
        } else {
            RawValue::Bool(true)
        };
        let start = || {
            if name == "accessSecret" {
                RawConfig::new()
            } else {
                base()
            }
        };
        let mut raw = start();
        raw.push(name.to_owned(), wrong);
        let err = refused(raw);
        assert!(
            matches!(&err, ArgError::Type(m) if m.contains(&format!("config.{name} "))),
            "{err:?}"
        );
        let mut raw = start();
        raw.push(name.to_owned(), RawValue::Other);
        assert!(matches!(refused(raw), ArgError::Type(_)), "{name}");
    }
}

#[test]
fn unknown_keys_are_refused_before_anything_else() {
    let err = refused(
        RawConfig::new()
            .with("acessSecret", SECRET)
            .with("rateLimitMax", -1.0),
    );
    assert_eq!(
        err,
        ArgError::Type("config.acessSecret is not a known option".into())
    );
}

#[test]
fn access_secret_is_required_and_absent_values_mean_default() {
    let err = refused(RawConfig::new().with("rateLimitMax", 5.0));
    assert_eq!(
        err,
        ArgError::Type("config.accessSecret is required (a string or Buffer)".into())
    );
    let mut raw = base();
    raw.push("rateLimitMax".into(), RawValue::Absent);
    assert_eq!(validate(raw).unwrap().rate_limit_max(), 100);
}

#[test]
fn keys_and_access_secret_are_exclusive_sources_of_access_keys() {
    let raw_key = |alg: &str, len: usize| {
        RawValue::List(vec![RawValue::Fields(vec![
            ("kid", RawValue::Text("k".into())),
            ("alg", RawValue::Text(alg.into())),
            ("key", RawValue::Bytes(Secret::new(vec![1; len]))),
        ])])
    };
    let mut keys_only = RawConfig::new();
    keys_only.push("keys".into(), raw_key("HS384", 48));
    let s = validate(keys_only).unwrap();
    assert!(s.access_secret().is_none());
    assert!(matches!(s.access_keys(), crate::settings::AccessKeys::Keys(k) if k.len() == 1));
    let mut both = base();
    both.push("keys".into(), raw_key("HS384", 48));
    assert_eq!(refused(both), ArgError::Type(BOTH_KEY_SOURCES.into()));
    let mut weak = RawConfig::new();
    weak.push("keys".into(), raw_key("HS384", 47));
    assert!(
        matches!(refused(weak), ArgError::Range(m) if m.starts_with(r#"config.keys[0] (kid "k")"#))
    );
    let mut weak_allowed = RawConfig::new().with("allowShortSecret", true);
    weak_allowed.push("keys".into(), raw_key("HS384", 47));
    assert!(validate(weak_allowed).unwrap().allow_short_secret());
    let mut not_objects = RawConfig::new();
    not_objects.push(
        "keys".into(),
        RawValue::List(vec![RawValue::Text("k".into())]),
    );
    assert!(matches!(refused(not_objects), ArgError::Type(_)));
}

#[test]
fn short_secrets_need_allow_short_secret() {
    let short = RawConfig::new().with("accessSecret", "short");
    assert!(matches!(refused(short), ArgError::Range(m) if m.contains("32 bytes")));
    let allowed = RawConfig::new()
        .with("accessSecret", "short")
        .with("allowShortSecret", true);
    assert_eq!(
        validate(allowed).unwrap().access_secret().unwrap().expose(),
        b"short"
    );
    let empty = RawConfig::new()
        .with("accessSecret", "")
        .with("allowShortSecret", true);
    assert_eq!(
        refused(empty),
        ArgError::Range("config.accessSecret must not be empty".into())
    );
    let bad_flag = RawConfig::new()
        .with("accessSecret", "")
        .with("allowShortSecret", 1.0);
    assert_eq!(
        refused(bad_flag),
        ArgError::Type("config.allowShortSecret must be a boolean".into())
    );
}

#[test]
fn string_lists_accept_a_string_or_strings_only() {
    let s = validate(base().with("issuer", "a").with("audience", vec!["x", "y"])).unwrap();
    assert_eq!(s.issuers(), ["a"]);
    assert_eq!(s.audiences(), ["x", "y"]);
    assert!(matches!(
        refused(base().with("issuer", vec![])),
        ArgError::Range(_)
    ));
    assert!(matches!(
        refused(base().with("issuer", vec!["a", ""])),
        ArgError::Range(_)
    ));
    let mut raw = base();
    raw.push(
        "audience".into(),
        RawValue::List(vec![RawValue::Text("a".into()), RawValue::Number(1.0)]),
    );
    assert_eq!(
        refused(raw),
        ArgError::Type("config.audience must be a string or an array of strings".into())
    );
}

#[test]
fn base_domain_is_normalised_and_checked() {
    let s = validate(base().with("baseDomain", "Example.COM.")).unwrap();
    assert_eq!(s.base_domain(), Some("example.com"));
    for bad in ["exa mple.com", "a..b", "", &"x".repeat(64)] {
        assert!(
            matches!(refused(base().with("baseDomain", bad)), ArgError::Range(_)),
            "{bad}"
        );
    }
}

#[test]
fn settings_debug_never_shows_secrets() {
    let s = validate(base().with("refreshSecret", "refresh-refresh-refresh-refresh-!!")).unwrap();
    let shown = format!("{s:?}");
    assert!(!shown.contains("0123456789abcdef"), "{shown}");
    assert!(!shown.contains("refresh-refresh"), "{shown}");
    assert!(!shown.contains("48, 49, 50"), "{shown}");
    assert!(shown.contains("redacted"), "{shown}");
}

#[test]
fn required_scopes_are_scope_tokens() {
    for bad in ["read write", "a\"b", "a\\b", "caf\u{e9}", "tab\t", ""] {
        let err = refused(base().with("requiredScope", bad));
        assert!(matches!(err, ArgError::Range(_)), "{bad:?}: {err:?}");
    }
    let s = validate(base().with("requiredScope", vec!["read:orders", "!#[]~"])).unwrap();
    assert_eq!(s.required_scopes(), ["read:orders", "!#[]~"]);
}

#[test]
fn profile_without_issuer_or_audience_is_refused() {
    let profile = || base().with("requireAccessTokenProfile", true);
    let refusal = ArgError::Type(messages::PROFILE_NEEDS_ISSUER_AND_AUDIENCE.into());
    assert_eq!(refused(profile()), refusal);
    assert_eq!(refused(profile().with("issuer", "i")), refusal);
    assert_eq!(refused(profile().with("audience", "a")), refusal);
    let both = validate(
        profile()
            .with("issuer", "i")
            .with("audience", vec!["a", "b"]),
    )
    .unwrap();
    assert!(both.access_token_profile());
    assert!(validate(base().with("requireAccessTokenProfile", false)).is_ok());
}

#[test]
fn refuses_public_key_material_as_any_config_secret() {
    let pem: &[u8] = b"JWT_PUBLIC_KEY=-----BEGIN PUBLIC KEY-----\r\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\r\n-----END PUBLIC KEY-----\r\n";
    let jwk =
        r#"{ "kty" : "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU" }"#;
    for name in ["accessSecret", "refreshSecret", "dpopNonceSecret"] {
        let with = |value: RawValue| {
            let raw = RawConfig::new();
            let raw = if name == "accessSecret" {
                raw
            } else {
                raw.with("accessSecret", SECRET)
            };
            let mut raw = raw;
            raw.push(name.to_owned(), value);
            raw
        };
        let ArgError::Value(m) = refused(with(RawValue::from(pem))) else {
            panic!("{name}: a PEM was not a value error");
        };
        assert_eq!(m, messages::secret_is_pem(&format!("config.{name}")));
        let ArgError::Value(m) = refused(with(RawValue::from(jwk))) else {
            panic!("{name}: a JWK was not a value error");
        };
        assert_eq!(m, messages::secret_is_jwk(&format!("config.{name}")));
        assert!(validate(with(RawValue::from(
            "correct-----horse-----battery-----staple"
        )))
        .is_ok());
    }
}
