#![deny(clippy::all)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
//! auth-shield: the auth middleware chain fused into one native call, plus security helpers.
//! This file only wires the modules together.

pub mod authenticator;
pub mod bearer;
pub mod binding;
pub mod clock;
pub mod config;
pub mod error;
pub mod helpers;
pub mod input;
pub mod issue;
pub mod jwt;
pub mod metrics;
pub mod rate_limit;
pub mod refresh_key;
pub mod request_id;
pub mod revocation;
pub mod schema;
pub mod secret;
pub mod settings;
pub mod tenant;
pub mod verified_cache;
