#![deny(clippy::all)]
//! auth-shield: the auth middleware chain fused into one native call, plus security helpers.
//! This file only wires the modules together.

pub mod authenticator;
pub mod bearer;
pub mod binding;
pub mod clock;
pub mod error;
pub mod helpers;
pub mod jwt;
pub mod rate_limit;
pub mod request_id;
pub mod settings;
pub mod tenant;
