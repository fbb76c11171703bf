//! The whole chain on hostile headers: Authorization, X-Tenant-ID and Host.
//!
//! Raw headers almost never carry a valid MAC, so a second mode signs the fuzzed payload with
//! the real key: that drives claim validation, tenant resolution and the limiter too.
#![no_main]

use auth_shield::internals::{Authenticator, TenantId};
use auth_shield::internals::RawConfig;
use auth_shield::internals::{sign_payload, HmacKey};
use auth_shield::internals::Settings;
use auth_shield::internals::is_valid_tenant_id;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const SECRET: &[u8] = b"fuzz-secret-fuzz-secret-fuzz-secret!";

#[derive(Arbitrary, Debug)]
struct Request {
    authorization: Option<Vec<u8>>,
    /// When set, `authorization` is ignored and this payload is signed into a Bearer token.
    signed_payload: Option<Vec<u8>>,
    tenant_header: Option<Vec<u8>>,
    host: Option<Vec<u8>>,
    strict: bool,
}

fn authenticators() -> &'static [Authenticator; 2] {
    static AUTH: OnceLock<[Authenticator; 2]> = OnceLock::new();
    AUTH.get_or_init(|| {
        let base = || {
            RawConfig::new()
                .with("accessSecret", SECRET)
                .with("clockTimestamp", 1_700_000_000.0)
                .with("rateLimitMaxKeys", 64.0)
        };
        let strict = base()
            .with("issuer", "iss")
            .with("audience", "aud")
            .with("enforceTenantMatch", true)
            .with("baseDomain", "example.com")
            .with("requireTokenType", true)
            .with("maxTokenBytes", 256.0);
        let settings = |raw| Settings::from_config(raw).expect("valid fuzz config");
        [
            Authenticator::new(settings(base())),
            Authenticator::new(settings(strict)),
        ]
    })
}

fuzz_target!(|req: Request| {
    let auth = &authenticators()[req.strict as usize];
    let header = match &req.signed_payload {
        Some(payload) => {
            let token = sign_payload(&HmacKey::new(SECRET), payload);
            format!("Bearer {token}").into_bytes()
        }
        None => req.authorization.clone().unwrap_or_default(),
    };
    let authorization =
        (req.signed_payload.is_some() || req.authorization.is_some()).then_some(&header[..]);
    auth.authenticate(
        authorization,
        req.tenant_header.as_deref(),
        req.host.as_deref(),
        |outcome| {
            // The request id is always a canonical UUID v4.
            let id = std::str::from_utf8(&outcome.request_id).expect("ascii request id");
            assert_eq!(id.len(), 36);
            assert_eq!(&id[14..15], "4");
            if let Ok(identity) = &outcome.result {
                // Only a token with our MAC can authenticate.
                assert!(
                    req.signed_payload.is_some(),
                    "unsigned request authenticated"
                );
                assert!(!identity.user_id.is_empty(), "empty subject accepted");
                match &identity.tenant {
                    TenantId::None => {}
                    tenant => {
                        let bytes = tenant.as_bytes();
                        assert!(is_valid_tenant_id(bytes), "unsafe tenant {bytes:?}");
                        assert!(tenant.as_str().is_some());
                    }
                }
            } else if let Err(failure) = &outcome.result {
                assert_eq!(
                    failure.retry_after_ms > 0,
                    failure.error.code() == "rate_limited"
                );
            }
        },
    );
});
