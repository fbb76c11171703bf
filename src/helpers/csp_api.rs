//! The JS `CspBuilder` class: a fluent wrapper over [`Policy`] (directive setters live in
//! `csp_directives.rs`).

use napi::bindgen_prelude::{FromNapiValue, This, Unknown};
use napi::{Env, JsValue, ValueType};
use napi_derive::napi;

use super::args;
use super::csp::{normalize_source, Policy, MAX_SOURCES};
use super::errors::{to_js, HelperError, HelperResult};

fn sources(v: &Unknown) -> HelperResult<Vec<String>> {
    match v.get_type().unwrap_or(ValueType::Unknown) {
        ValueType::String => Ok(vec![args::string(v, "sources", 4096)?]),
        ValueType::Object if v.is_array().unwrap_or(false) => {
            // SAFETY: the value is a live argument of the current call, checked to be an array above; the conversion checks each item.
            let list = unsafe { Vec::<String>::from_napi_value(v.value().env, v.raw()) }
                .map_err(|_| HelperError::arg_type("sources", "a string or an array of strings"))?;
            if list.len() > MAX_SOURCES {
                return Err(HelperError::out_of_range(
                    "sources",
                    &format!("must hold at most {MAX_SOURCES} entries"),
                ));
            }
            Ok(list)
        }
        _ => Err(HelperError::arg_type(
            "sources",
            "a string or an array of strings",
        )),
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
    pub(super) fn apply<'a>(
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
        let name = match &directive {
            d if args::is_nullish(d) => "script-src".to_string(),
            Some(d) => to_js(&env, args::string(d, "directive", 64))?,
            None => unreachable!("handled by is_nullish"),
        };
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
            let alg = args::string(&algorithm, "algorithm", 16)?.to_ascii_lowercase();
            if !matches!(alg.as_str(), "sha256" | "sha384" | "sha512") {
                return Err(HelperError::arg_value(
                    "algorithm",
                    "must be 'sha256', 'sha384' or 'sha512'",
                ));
            }
            let digest = args::string(&digest, "digestBase64", 128)?;
            let source = normalize_source(&format!("'{alg}-{digest}'"))?;
            let name = match &directive {
                d if args::is_nullish(d) => "script-src".to_string(),
                Some(d) => args::string(d, "directive", 64)?,
                None => unreachable!("handled by is_nullish"),
            };
            self.policy.add(&name, source)
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
        let result = args::string(&uri, "uri", 2048).and_then(|u| {
            let u = normalize_source(&u)?;
            if u.starts_with('\'') {
                return Err(HelperError::arg_value("uri", "must be a URL"));
            }
            self.policy.set_raw("report-uri", Some(u));
            Ok(())
        });
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
        let result = args::string(&group, "group", 64).and_then(|g| {
            if g.is_empty()
                || !g
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err(HelperError::arg_value(
                    "group",
                    "must be letters, digits, '-' or '_'",
                ));
            }
            self.policy.set_raw("report-to", Some(g));
            Ok(())
        });
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
}
