//! JS wrappers of the security helpers: one file per topic, named like its logic in
//! `src/helpers/`. Each reads its arguments with `binding::args`, calls the logic, and reports
//! failures through `binding::js_error` (thrown by sync functions, rejected by Promise ones).

pub mod api_key;
pub mod csp;
pub mod otp_store;
pub mod password;
pub mod sanitize_filename;
pub mod sanitize_html;
pub mod sql_interval;
pub mod timing;
pub mod totp;
