//! JS wrapper of `sanitizeFilename` (rules in `helpers::sanitize_filename`).

use napi::bindgen_prelude::Unknown;
use napi::Env;
use napi_derive::napi;

use crate::binding::args;
use crate::binding::js_error::{to_js, CallResult};
use crate::helpers::sanitize_filename::{check_options, sanitize, MAX_INPUT_BYTES};

/// Options for `sanitizeFilename`.
#[napi(object)]
#[derive(Default)]
pub struct SanitizeFilenameOptions {
    /// Put in place of each refused character. Default '_'. May be '' (drop them); must itself
    /// be safe (no separators, control or reserved characters) and at most 8 bytes.
    pub replacement: Option<String>,
    /// Longest result in UTF-8 bytes, 16 ..= 255. Default 255.
    pub max_bytes: Option<f64>,
}

/// Makes `name` safe as a single file name: path separators, control characters, bidi
/// overrides and `<>:"|?*` are replaced; trailing dots/spaces are removed; Windows reserved
/// names (CON, NUL, COM1, …) get a `_` prefix; the result is at most 255 bytes (cut on a
/// character boundary, keeping a short extension) and never empty, `.` or `..` (those become
/// `file`). Input is at most 64 KiB.
#[napi(
    catch_unwind,
    ts_args_type = "name: string, options?: SanitizeFilenameOptions"
)]
pub fn sanitize_filename(
    env: Env,
    name: Unknown<'_>,
    options: Option<Unknown<'_>>,
) -> napi::Result<String> {
    to_js(
        &env,
        (|| -> CallResult<String> {
            let name = args::string(&name, "name", MAX_INPUT_BYTES)?;
            let opts: SanitizeFilenameOptions =
                args::options(&options, "SanitizeFilenameOptions", "options")?;
            let (replacement, max) = check_options(opts.replacement, opts.max_bytes)?;
            Ok(sanitize(&name, &replacement, max))
        })(),
    )
}
