//! JS wrapper of `sanitizeHtml` (allow-list rules in `helpers::sanitize_html`).

use std::collections::HashMap;

use napi::bindgen_prelude::Unknown;
use napi::Env;
use napi_derive::napi;

use crate::binding::args;
use crate::binding::js_error::to_js;
use crate::helpers::sanitize_html::{self as html, MAX_HTML_BYTES};

/// Options for `sanitizeHtml`; every list *adds* to ammonia's safe defaults.
#[napi(object)]
#[derive(Default)]
pub struct SanitizeHtmlOptions {
    /// Extra tags to keep (e.g. ['video']). Script/style/iframe/object/embed/form controls/svg/… are refused.
    pub allowed_tags: Option<Vec<String>>,
    /// Extra attributes per tag, '*' for all tags (e.g. { a: ['target'], '*': ['data-id'] }).
    /// Event handlers (on*), style, srcdoc and rel are refused.
    pub allowed_attributes: Option<HashMap<String, Vec<String>>>,
    /// Extra URL schemes for href/src (default http, https, mailto, tel and other safe ones).
    /// javascript:, vbscript:, data:, file: and blob: are refused.
    pub allowed_schemes: Option<Vec<String>>,
    /// Drop HTML comments. Default true.
    pub strip_comments: Option<bool>,
}

impl From<SanitizeHtmlOptions> for html::SanitizeHtmlOptions {
    fn from(o: SanitizeHtmlOptions) -> Self {
        Self {
            allowed_tags: o.allowed_tags,
            allowed_attributes: o.allowed_attributes,
            allowed_schemes: o.allowed_schemes,
            strip_comments: o.strip_comments,
        }
    }
}

/// Removes everything but a whitelist of harmless HTML (ammonia defaults): no `<script>`,
/// `<style>`, `<iframe>`, event handlers, `style` attributes or `javascript:` URLs; links get
/// `rel="noopener noreferrer"`; comments are dropped. Input is at most 8 MiB.
#[napi(
    catch_unwind,
    ts_args_type = "input: string, options?: SanitizeHtmlOptions"
)]
pub fn sanitize_html(
    env: Env,
    input: Unknown<'_>,
    options: Option<Unknown<'_>>,
) -> napi::Result<String> {
    to_js(
        &env,
        (|| {
            let input = args::string(&input, "input", MAX_HTML_BYTES)?;
            let opts: SanitizeHtmlOptions =
                args::options(&options, "SanitizeHtmlOptions", "options")?;
            html::sanitize(&input, &opts.into())
        })(),
    )
}
