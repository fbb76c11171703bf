//! `resolveTenant(tenantHeader, host, options)`: the tenant of a request without a token (login,
//! register), by the same rules as the fused call (`crate::tenant`), its header arguments in
//! `authenticate`'s order. Reads the arguments and builds the result; the rules live in the core.

use napi::bindgen_prelude::*;
use napi::{JsValue, ValueType};
use napi_derive::napi;

use super::args::{self, read_optional_str};
use super::js_error::{to_js, CallError};
use crate::error::AuthError;
use crate::tenant::{rules_for_base_domain, TenantSource};

/// What `read_optional_str` keeps of a header (contract/limits.json, as the fused call reads).
const TENANT_HEADER_CAP: usize = crate::contract::limits::TENANT_HEADER_CAP as usize;
const HOST_CAP: usize = crate::contract::limits::HOST_CAP as usize;

/// The tenant a request asks for: the `X-Tenant-ID` header if present, else the Host subdomain
/// (`baseDomain` as in the config). A bad id is a result with `errorCode: 'invalid_tenant'`,
/// never a throw; only arguments of the wrong type throw (`ERR_INVALID_ARG_TYPE`).
#[napi(
    catch_unwind,
    ts_args_type = "tenantHeader: string | null | undefined, host: string | null | undefined, options?: ResolveTenantOptions | null | undefined",
    ts_return_type = "ResolvedTenant"
)]
pub fn resolve_tenant(
    env: Env,
    tenant_header: Unknown,
    host: Unknown,
    options: Option<Unknown>,
) -> Result<Object<'static>> {
    let base_domain = to_js(&env, base_domain(&options))?;
    let rules = to_js(
        &env,
        rules_for_base_domain(base_domain.as_deref(), "options.baseDomain")
            .map_err(CallError::from),
    )?;
    let (mut h, mut t) = (Vec::new(), Vec::new());
    // SAFETY: both handles are arguments of the call in progress.
    let (host, header) = unsafe {
        (
            read_optional_str(env.raw(), host.raw(), &mut h, HOST_CAP, "host"),
            read_optional_str(
                env.raw(),
                tenant_header.raw(),
                &mut t,
                TENANT_HEADER_CAP,
                "tenantHeader",
            ),
        )
    };
    let header = header.map_err(|e| e.throw(&env))?;
    let host = host.map_err(|e| e.throw(&env))?;
    let mut out = Object::new(&env)?;
    let (id, source, error): (Option<Vec<u8>>, Option<&str>, Option<AuthError>) =
        match rules.requested_tenant(header, host) {
            Ok(TenantSource::Header) => (header.map(<[u8]>::to_vec), Some("header"), None),
            Ok(TenantSource::Host(label)) => (Some(label.as_bytes().to_vec()), Some("host"), None),
            Ok(_) => (None, None, None),
            Err(e) => (None, None, Some(e)),
        };
    // Valid tenant ids are ASCII.
    let id = id.and_then(|id| String::from_utf8(id).ok());
    set(&mut out, "tenantId", id.as_deref())?;
    set(&mut out, "tenantSource", source)?;
    set(&mut out, "error", error.map(AuthError::message))?;
    set(&mut out, "errorCode", error.map(AuthError::code))?;
    Ok(out)
}

/// Sets `key` to the string or to `undefined` (every key is always present, as in `AuthResult`).
fn set(out: &mut Object, key: &str, value: Option<&str>) -> Result<()> {
    match value {
        Some(v) => out.set_named_property(key, v),
        None => out.set_named_property(key, ()),
    }
}

fn base_domain(options: &Option<Unknown>) -> std::result::Result<Option<String>, CallError> {
    let Some(options) = options.as_ref().filter(|_| !args::is_nullish(options)) else {
        return Ok(None);
    };
    if args::kind(options) != ValueType::Object {
        return Err(CallError::not_object("options"));
    }
    // SAFETY: `options` is a live handle of the current call and was just checked to be an object.
    let object = unsafe { Object::from_napi_value(options.value().env, options.raw()) }
        .map_err(|_| CallError::not_object("options"))?;
    args::known_options(&object, "ResolveTenantOptions", "options")?;
    let value: Unknown = object
        .get_named_property("baseDomain")
        .map_err(|_| CallError::not_string("options.baseDomain"))?;
    match args::kind(&value) {
        ValueType::Undefined | ValueType::Null => Ok(None),
        ValueType::String => args::string(&value, "options.baseDomain", 1024).map(Some),
        _ => Err(CallError::not_string("options.baseDomain")),
    }
}
