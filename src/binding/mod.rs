//! The napi-rs surface: converts JS values at the boundary and nothing else.

pub mod args;
pub mod authenticator;
pub mod build_info;
pub mod config;
pub mod env_cache;
pub mod factories;
pub mod fast_call;
pub mod helpers;
pub mod js_error;
pub mod metrics;
pub mod one_shot;
pub mod rate_limiter;
pub mod request;
pub mod result;
pub mod revocation;
pub mod sender;
pub mod store_seam;
pub mod tenant;
pub mod tokens;
