//! Tenant resolution from claim, X-Tenant-ID and Host: whatever comes out is a safe id.
#![no_main]

use auth_shield::internals::AuthError;
use auth_shield::internals::{is_valid_tenant_id, TenantRules, TenantSource};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    claim: Option<Vec<u8>>,
    header: Option<Vec<u8>>,
    host: Option<Vec<u8>>,
    base_domain: Option<String>,
    enforce_match: bool,
}

fuzz_target!(|input: Input| {
    let rules = TenantRules {
        base_domain: input.base_domain.map(|d| d.to_ascii_lowercase()),
        enforce_match: input.enforce_match,
    };
    if let Some(host) = &input.host {
        if let Some(label) = rules.subdomain_of(host) {
            // The label is one DNS label cut from the host (a junk port may remain in it and
            // is refused by the tenant id check below).
            assert!(label.len() < host.len());
            assert!(!label.is_empty() && !label.contains(&b'.'));
        }
    }
    let resolved = rules.resolve(
        input.claim.as_deref(),
        input.header.as_deref(),
        input.host.as_deref(),
    );
    match resolved {
        Ok(TenantSource::Claim) => {
            assert!(is_valid_tenant_id(
                input.claim.as_deref().unwrap_or_default()
            ))
        }
        Ok(TenantSource::Header) => {
            assert!(is_valid_tenant_id(
                input.header.as_deref().unwrap_or_default()
            ))
        }
        Ok(TenantSource::Host(label)) => {
            let id = label.as_bytes();
            assert!(is_valid_tenant_id(id));
            assert!(
                !id.iter().any(u8::is_ascii_uppercase),
                "host tenant not lower-cased"
            );
        }
        Ok(TenantSource::None) => {}
        Err(AuthError::TenantMismatch) => assert!(input.enforce_match),
        Err(AuthError::InvalidTenant) => {}
        Err(other) => panic!("unexpected error {other:?}"),
    }
});
