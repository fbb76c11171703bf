//! JS wrapper of `validateSqlInterval` (rules in `helpers::sql_interval`).

use napi::bindgen_prelude::Unknown;
use napi::Env;
use napi_derive::napi;

use crate::binding::args;
use crate::binding::js_error::to_js;
use crate::helpers::sql_interval::canonical;

/// Accepts only a whole number 0 ..= 1000000 and a unit from second, minute, hour, day, week,
/// month, year (singular or plural, any case, surrounding spaces ignored) and returns the
/// canonical form (`"7 days"`, `"1 hour"`). Anything else throws `ERR_INVALID_INTERVAL`.
#[napi(catch_unwind, ts_args_type = "input: string")]
pub fn validate_sql_interval(env: Env, input: Unknown<'_>) -> napi::Result<String> {
    to_js(
        &env,
        args::string(&input, "input", 64).and_then(|s| canonical(&s)),
    )
}
