//! The per-request calls shared by the napi-rs methods and the fast functions of
//! `fast_call`: read the arguments, run the core, build the result with one factory call.

use napi::bindgen_prelude::*;
use napi::sys;
use std::cell::RefCell;

use super::args::read_optional_str;
use super::js_error::{no_refresh_secret, ArgError, CallError};
use super::result::{build_auth_result, build_verification};
use super::sender::{with_sender, SenderReads};
use crate::authenticator::Authenticator as Core;
use crate::cert_binding::CertificateBinding;
use crate::contract::limits;
use crate::dpop::SenderContext;
use crate::jwt::TokenKind;

// Header caps from contract/limits.json (their reasons are there), shared with the JS engine.
const AUTHORIZATION_SLACK: usize = limits::AUTHORIZATION_SLACK as usize;
const TENANT_HEADER_CAP: usize = limits::TENANT_HEADER_CAP as usize;
const HOST_CAP: usize = limits::HOST_CAP as usize;
/// Reading up to 3 bytes past `maxTokenBytes` makes an oversized token read as oversized even
/// when the cut falls inside a multi-byte UTF-8 character (which the copy never splits).
const TOKEN_SLACK: usize = 4;

thread_local! {
    static ARG_BUFFERS: RefCell<[Vec<u8>; 3]> = const { RefCell::new([Vec::new(), Vec::new(), Vec::new()]) };
}

/// A JS value handed back to napi-rs as is.
pub struct Handle(pub sys::napi_value);

impl ToNapiValue for Handle {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        Ok(val.0)
    }
}

/// Runs `f` with the thread's argument buffers (fresh ones when re-entered).
fn with_buffers<R>(f: impl FnOnce(&mut [Vec<u8>; 3]) -> R) -> R {
    ARG_BUFFERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut bufs) => f(&mut bufs),
        Err(_) => f(&mut Default::default()),
    })
}

/// Reads the three header arguments and the optional sender (read only when certificate-bound
/// tokens or DPoP are checked: nothing to pay otherwise), runs the chain and builds the
/// `AuthResult`.
///
/// # Safety
/// `env` and `args` must be live handles of the current call.
pub unsafe fn authenticate(
    env: sys::napi_env,
    core: &Core,
    [authorization, tenant_header, host, sender]: [sys::napi_value; 4],
) -> std::result::Result<sys::napi_value, CallError> {
    let auth_cap = core.settings().max_token_bytes() + AUTHORIZATION_SLACK;
    with_buffers(|[a, t, h]| {
        // SAFETY: the handles are live (caller's contract); each buffer is borrowed once.
        let (authorization, tenant_header, host) = unsafe {
            (
                read_optional_str(env, authorization, a, auth_cap, "authorization")?,
                read_optional_str(env, tenant_header, t, TENANT_HEADER_CAP, "tenantHeader")?,
                read_optional_str(env, host, h, HOST_CAP, "host")?,
            )
        };
        let reads = SenderReads {
            certificate: core.settings().certificate_binding() != CertificateBinding::Off,
            dpop: core.settings().dpop(),
        };
        if !reads.certificate && !reads.dpop {
            let none = SenderContext::default();
            return core.authenticate_sender(
                authorization,
                tenant_header,
                host,
                &none,
                |outcome| {
                    // SAFETY: `env` is the live env of the current call.
                    unsafe { build_auth_result(env, outcome) }
                },
            );
        }
        let run = |sender: &SenderContext<'_>| {
            core.authenticate_sender(authorization, tenant_header, host, sender, |outcome| {
                // SAFETY: `env` is the live env of the current call.
                unsafe { build_auth_result(env, outcome) }
            })
        };
        // SAFETY: `sender` is a live handle (caller's contract).
        unsafe { with_sender(env, sender, reads, run) }?
    })
}

/// Verifies a bare token of `kind` and builds the `TokenVerification`.
///
/// # Safety
/// `env` and `token` must be live handles of the current call.
pub unsafe fn verify(
    env: sys::napi_env,
    core: &Core,
    kind: TokenKind,
    token: sys::napi_value,
) -> std::result::Result<sys::napi_value, CallError> {
    let not_string = || CallError::from(ArgError::not_string("token"));
    let mut value_type = 0;
    // SAFETY: `env` and `token` are live (caller's contract).
    let status = unsafe { sys::napi_typeof(env, token, &mut value_type) };
    if status != sys::Status::napi_ok || value_type != sys::ValueType::napi_string {
        return Err(not_string());
    }
    let cap = core.settings().max_token_bytes() + TOKEN_SLACK;
    with_buffers(|[buf, scratch, ..]| {
        // SAFETY: `token` is a live string handle; the buffer is borrowed once.
        let token =
            unsafe { read_optional_str(env, token, buf, cap, "token")? }.ok_or_else(not_string)?;
        let verdict = core.verify(kind, token, scratch).ok_or_else(|| {
            let method = match kind {
                TokenKind::Access => "verifyAccessToken",
                TokenKind::Refresh => "verifyRefreshToken",
            };
            no_refresh_secret(method)
        })?;
        // SAFETY: `env` is the live env of the current call.
        unsafe { build_verification(env, verdict.as_ref()) }
    })
}
