//! JS wrapper of the `CspBuilder` class: a fluent shell over [`Policy`] (rules in `helpers::csp`).

use napi::bindgen_prelude::{FromNapiValue, This, Unknown};
use napi::{Env, JsValue, ValueType};
use napi_derive::napi;

use crate::binding::args;
use crate::binding::js_error::{to_js, CallError, CallResult};
use crate::helpers::csp::{Policy, MAX_SOURCES};

fn sources(v: &Unknown) -> CallResult<Vec<String>> {
    match args::kind(v) {
        ValueType::String => Ok(vec![args::string(v, "sources", 4096)?]),
        ValueType::Object if v.is_array().unwrap_or(false) => {
            // SAFETY: `v` is a live handle of the current call and an array; the conversion
            // checks every element and fails (mapped below) on a non-string.
            let list = unsafe { Vec::<String>::from_napi_value(v.value().env, v.raw()) }
                .map_err(|_| CallError::arg_type("sources", "a string or an array of strings"))?;
            if list.len() > MAX_SOURCES {
                return Err(CallError::out_of_range(
                    "sources",
                    &format!("must hold at most {MAX_SOURCES} entries"),
                ));
            }
            Ok(list)
        }
        _ => Err(CallError::arg_type(
            "sources",
            "a string or an array of strings",
        )),
    }
}

/// `directive` when given, else 'script-src'.
fn directive_or_script_src(directive: &Option<Unknown>) -> CallResult<String> {
    match directive {
        Some(d) if !args::is_nullish(directive) => args::string(d, "directive", 64),
        _ => Ok("script-src".to_string()),
    }
}

/// Fluent Content-Security-Policy builder. Starts from `default-src 'self'; object-src 'none';
/// base-uri 'self'; frame-ancestors 'none'`. Each directive method *replaces* that directive's
/// sources and returns the builder. Keywords may be written bare (`self`) or quoted (`'self'`)
/// and are emitted quoted. Sources with `;`, `,`, whitespace, stray quotes, control or non-ASCII
/// characters throw `TypeError` with code `ERR_INVALID_CSP`.
#[napi]
pub struct CspBuilder {
    policy: Policy,
}

impl CspBuilder {
    /// Validates `v` as sources and replaces directive `name`; returns `this` for chaining.
    fn apply<'a>(
        &mut self,
        env: &Env,
        this: This<'a>,
        name: &str,
        v: &Unknown,
    ) -> napi::Result<This<'a>> {
        to_js(env, sources(v).and_then(|s| self.policy.set(name, &s)))?;
        Ok(this)
    }
}

impl Default for CspBuilder {
    fn default() -> Self {
        Self::new()
    }
}

#[napi]
impl CspBuilder {
    /// A builder with the strict defaults.
    #[napi(catch_unwind, constructor)]
    pub fn new() -> Self {
        CspBuilder {
            policy: Policy::default(),
        }
    }

    /// Generates a fresh 128-bit base64 nonce, adds `'nonce-…'` to `directive` (default
    /// 'script-src'; seeded from default-src if unset) and returns the nonce for your `<script
    /// nonce>` attributes. Use one builder (or `clone()`) per response.
    #[napi(
        catch_unwind,
        ts_args_type = "directive?: 'script-src' | 'style-src' | string"
    )]
    pub fn nonce(&mut self, env: Env, directive: Option<Unknown<'_>>) -> napi::Result<String> {
        let name = to_js(&env, directive_or_script_src(&directive))?;
        to_js(&env, self.policy.nonce(&name))
    }

    /// Adds a hash source (`'sha256-<base64>'`) to `directive` (default 'script-src').
    /// `algorithm` is 'sha256' | 'sha384' | 'sha512'.
    #[napi(
        catch_unwind,
        ts_args_type = "algorithm: 'sha256' | 'sha384' | 'sha512', digestBase64: string, directive?: string",
        ts_return_type = "this"
    )]
    pub fn hash<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        algorithm: Unknown<'_>,
        digest: Unknown<'_>,
        directive: Option<Unknown<'_>>,
    ) -> napi::Result<This<'a>> {
        let result = (|| {
            let alg = args::string(&algorithm, "algorithm", 16)?;
            let digest = args::string(&digest, "digestBase64", 128)?;
            let name = directive_or_script_src(&directive)?;
            self.policy.add_hash(&name, &alg, &digest)
        })();
        to_js(&env, result)?;
        Ok(this)
    }

    /// Sets `report-uri` (deprecated in CSP3 but still the widest supported).
    #[napi(catch_unwind, ts_args_type = "uri: string", ts_return_type = "this")]
    pub fn report_uri<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        uri: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        let result = args::string(&uri, "uri", 2048).and_then(|u| self.policy.set_report_uri(&u));
        to_js(&env, result)?;
        Ok(this)
    }

    /// Sets `report-to` to a Reporting-Endpoints group name ([A-Za-z0-9_-]).
    #[napi(catch_unwind, ts_args_type = "group: string", ts_return_type = "this")]
    pub fn report_to<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        group: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        let result = args::string(&group, "group", 64).and_then(|g| self.policy.set_report_to(&g));
        to_js(&env, result)?;
        Ok(this)
    }

    /// Adds the `upgrade-insecure-requests` flag.
    #[napi(catch_unwind, ts_return_type = "this")]
    pub fn upgrade_insecure_requests<'a>(&mut self, this: This<'a>) -> This<'a> {
        self.policy.set_raw("upgrade-insecure-requests", None);
        this
    }

    /// Report-only mode (off until called; `reportOnly()` means `reportOnly(true)`):
    /// `headerName()` becomes Content-Security-Policy-Report-Only.
    #[napi(
        catch_unwind,
        ts_args_type = "enabled?: boolean",
        ts_return_type = "this"
    )]
    pub fn report_only<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        enabled: Option<Unknown<'_>>,
    ) -> napi::Result<This<'a>> {
        self.policy.report_only = to_js(&env, args::boolean(&enabled, "enabled"))?.unwrap_or(true);
        Ok(this)
    }

    /// 'Content-Security-Policy' or 'Content-Security-Policy-Report-Only'.
    #[napi(catch_unwind)]
    pub fn header_name(&self) -> String {
        self.policy.header_name().to_string()
    }

    /// The header value, directives in insertion order joined by '; '.
    #[napi(catch_unwind)]
    pub fn build(&self) -> String {
        self.policy.build()
    }

    /// An independent copy (e.g. a per-response builder for a fresh nonce).
    #[napi(catch_unwind, js_name = "clone")]
    pub fn duplicate(&self) -> CspBuilder {
        CspBuilder {
            policy: self.policy.clone(),
        }
    }

    /// Sets any other directive by name (lowercase letters and '-').
    #[napi(
        catch_unwind,
        ts_args_type = "name: string, sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn directive<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        name: Unknown<'_>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        let name = to_js(&env, args::string(&name, "name", 64))?;
        self.apply(&env, this, &name, &sources)
    }
}

/// One setter per common directive: each replaces that directive's sources and returns `this`.
macro_rules! directive_setters {
    ($($method:ident => $name:literal, $doc:literal;)*) => {
        #[napi]
        impl CspBuilder {
            $(
                #[doc = $doc]
                #[napi(
                    catch_unwind,
                    ts_args_type = "sources: string | string[]",
                    ts_return_type = "this"
                )]
                pub fn $method<'a>(
                    &mut self,
                    env: Env,
                    this: This<'a>,
                    sources: Unknown<'_>,
                ) -> napi::Result<This<'a>> {
                    self.apply(&env, this, $name, &sources)
                }
            )*
        }
    };
}

directive_setters! {
    default_src => "default-src", "Sets `default-src` (default `'self'`).";
    script_src => "script-src", "Sets `script-src` (unset by default: falls back to default-src).";
    style_src => "style-src", "Sets `style-src`.";
    img_src => "img-src", "Sets `img-src`.";
    connect_src => "connect-src", "Sets `connect-src`.";
    font_src => "font-src", "Sets `font-src`.";
    object_src => "object-src", "Sets `object-src` (default `'none'`).";
    media_src => "media-src", "Sets `media-src`.";
    frame_src => "frame-src", "Sets `frame-src`.";
    worker_src => "worker-src", "Sets `worker-src`.";
    base_uri => "base-uri", "Sets `base-uri` (default `'self'`).";
    form_action => "form-action", "Sets `form-action`.";
    frame_ancestors => "frame-ancestors", "Sets `frame-ancestors` (default `'none'`).";
}
