//! Security helpers callable directly from JS (issue 4): passwords, OTP, sanitizers, CSP, API keys.

mod args;
mod errors;

pub mod api_key;
pub mod api_key_api;
pub mod csp;
pub mod csp_api;
pub mod csp_directives;
pub mod hotp;
pub mod otp_codes;
pub mod otp_store;
pub mod password;
pub mod password_api;
pub mod sanitize_filename;
pub mod sanitize_html;
pub mod sql_interval;
pub mod timing;
pub mod totp_api;
