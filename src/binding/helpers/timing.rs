//! JS wrapper of `timingSafeEqual` (comparison in `helpers::timing`).

use napi::bindgen_prelude::Unknown;
use napi::Env;
use napi_derive::napi;

use crate::binding::args;
use crate::binding::js_error::to_js;
use crate::helpers::timing::{ct_equal, MAX_BYTES};

/// Constant-time equality of two strings (compared as UTF-8) or Buffers/Uint8Arrays, any
/// lengths (up to 64 MiB each); different lengths give `false` rather than throwing (unlike
/// `crypto.timingSafeEqual`). A string and a Buffer holding the same bytes are equal.
#[napi(
    catch_unwind,
    ts_args_type = "a: string | Buffer | Uint8Array, b: string | Buffer | Uint8Array"
)]
pub fn timing_safe_equal(env: Env, a: Unknown<'_>, b: Unknown<'_>) -> napi::Result<bool> {
    let a = to_js(&env, args::bytes(&a, "a", MAX_BYTES))?;
    let b = to_js(&env, args::bytes(&b, "b", MAX_BYTES))?;
    Ok(ct_equal(&a, &b))
}
