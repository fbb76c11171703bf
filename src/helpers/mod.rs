//! Security helpers (issue 4): the rules, in pure Rust (unit-tested and fuzzed, no napi). Each
//! topic has one file here and its JS wrapper of the same name in `src/binding/helpers/`.

pub mod api_key;
pub mod csp;
pub mod error;
pub mod otp_store;
pub mod password;
pub mod sanitize_filename;
pub mod sanitize_html;
pub mod sql_interval;
pub mod timing;
pub mod totp;
