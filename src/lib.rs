#![deny(clippy::all)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
//! auth-shield: the auth middleware chain fused into one native call, plus security helpers.
//! This file only wires the modules together.
//!
//! Every module is private: the addon's public surface is its `#[napi]` exports (src/binding/),
//! so the compiler reports any core code nothing calls. The fuzz targets (fuzz/) and the Rust
//! integration tests (tests/) reach the core through [`internals`], compiled only with the
//! `internals` feature (docs/development.md).

mod authenticator;
mod bearer;
mod call_error;
mod cert_binding;
// napi-derive registers the `#[napi]` exports only outside `cfg(test)`, so in the unit-test build
// nothing reaches the binding; the addon's build (and clippy's lib pass) still reports its dead code.
#[cfg_attr(
    test,
    allow(
        dead_code,
        reason = "the #[napi] exports are not registered under cfg(test)"
    )
)]
mod binding;
mod clock;
mod config;
mod contract;
mod dpop;
mod error;
mod helpers;
mod introspection;
mod issue;
mod issuers;
mod jwt;
mod metrics;
mod rate_limit;
mod raw_value;
mod refresh_key;
mod request_id;
mod revocation;
mod schema;
mod secret;
mod settings;
mod tenant;
mod verified_cache;

/// The test seam: what the fuzz targets and tests/ drive directly, under the names they use.
/// Not part of the package's API (the addon is built without the `internals` feature).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    pub use crate::authenticator::{Authenticator, IssueError, TenantId};
    pub use crate::call_error::ArgError;
    pub use crate::cert_binding::{check as check_certificate, is_thumbprint, CertificateBinding};
    pub use crate::config::RawConfig;
    pub use crate::dpop::{
        check_proof, htu, nonce::NonceKey, proof_key::ProofKey, ProofAlgs, SenderContext,
    };
    pub use crate::error::AuthError;
    pub use crate::helpers::{
        api_key, csp, password, sanitize_filename, sanitize_html, sql_interval, totp,
    };
    pub use crate::jwt::sign::sign_payload;
    pub use crate::jwt::{
        base64url, public_key,
        validate::{granted_scopes, Scopes},
        verify::decode_verified,
        Alg, Claim, ClaimRules, Claims, Confirmation, HmacKey, KeySet, KeySpec, TokenKind,
    };
    pub use crate::raw_value::RawValue;
    pub use crate::schema::{schema, OptionKind};
    pub use crate::secret::Secret;
    pub use crate::settings::Settings;
    pub use crate::tenant::{is_valid_tenant_id, TenantRules, TenantSource};
}
