//! Security helpers callable directly from JS (issue 4): passwords, OTP, sanitizers, CSP, API keys.

mod args;
mod errors;

pub mod hotp;
pub mod otp_store;
pub mod password;
pub mod password_api;
pub mod timing;
pub mod totp_api;
