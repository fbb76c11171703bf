//! The optional 4th argument of `authenticate`: what the request says of its sender.

use napi::sys;
use napi_derive::napi;
use std::cell::RefCell;
use std::ffi::CStr;

use super::args::read_optional_str;
use super::js_error::ArgError;
use crate::cert_binding::THUMBPRINT_LEN;
use crate::contract::limits;
use crate::dpop::SenderContext as Core;

/// What the request says of its sender, beside the Authorization header: `authenticate`'s 4th
/// argument. Read only when certificate-bound tokens or `dpop` are configured.
#[napi(object)]
// The declaration of the `.d.ts` type: `with_sender` reads the fields one by one, capped.
#[allow(dead_code)]
pub struct SenderContext {
    /// The client certificate's SHA-256 thumbprint: base64url without padding of the SHA-256 of
    /// its DER (RFC 8705 §3.1). Absent, `null` or `''` when no certificate was presented.
    pub client_cert_thumbprint: Option<String>,
    /// The `DPoP` request header (one proof JWT; two headers joined by a comma never pass).
    pub dpop: Option<String>,
    /// The request method as the client sent it (`GET`, `POST`…), compared with the proof's `htm`.
    pub method: Option<String>,
    /// The absolute URL the client addressed (`https://api.example.com/orders?x=1`), from a
    /// configured origin, never from unconfigured `X-Forwarded-*` headers; compared with the
    /// proof's `htu` without query and fragment (RFC 9449 §4.3).
    pub url: Option<String>,
}

thread_local! {
    static BUFFERS: RefCell<[Vec<u8>; 4]> = const { RefCell::new([Vec::new(), Vec::new(), Vec::new(), Vec::new()]) };
}

/// Which members of the sender a call reads: the others are never touched.
#[derive(Clone, Copy)]
pub struct SenderReads {
    /// `clientCertThumbprint` (certificate-bound tokens are checked).
    pub certificate: bool,
    /// `dpop`, `method` and `url` (`dpop` is on).
    pub dpop: bool,
}

/// Runs `f` with the sender read from `value` (`undefined`/`null`: none). Strings are read up
/// to a few bytes past their cap, so an oversized value still reads as oversized.
///
/// # Safety
/// `env` and `value` must be live handles of the current call.
pub unsafe fn with_sender<R>(
    env: sys::napi_env,
    value: sys::napi_value,
    reads: SenderReads,
    f: impl FnOnce(&Core<'_>) -> R,
) -> Result<R, ArgError> {
    let mut kind = 0;
    // SAFETY: live handles (caller's contract); `kind` is a valid out slot.
    if unsafe { sys::napi_typeof(env, value, &mut kind) } != sys::Status::napi_ok {
        return Err(not_object());
    }
    match kind {
        sys::ValueType::napi_undefined | sys::ValueType::napi_null => {
            return Ok(f(&Core::default()))
        }
        sys::ValueType::napi_object => {}
        _ => return Err(not_object()),
    }
    // `label` names the member in a TypeError: a static string, nothing formatted per call.
    let read = |name: &CStr,
                label: &'static str,
                buf: &mut Vec<u8>,
                cap: usize|
     -> Result<bool, ArgError> {
        let mut prop = std::ptr::null_mut();
        // SAFETY: `value` is a live object handle; `name` is NUL-terminated.
        let status = unsafe { sys::napi_get_named_property(env, value, name.as_ptr(), &mut prop) };
        if status != sys::Status::napi_ok {
            return Err(not_object());
        }
        // SAFETY: `prop` is a live handle of this call.
        let got = unsafe { read_optional_str(env, prop, buf, cap + 4, label)? };
        let present = got.is_some();
        if let Some(bytes) = got {
            let len = bytes.len();
            buf.truncate(len);
        } else {
            buf.clear();
        }
        Ok(present)
    };
    BUFFERS.with(|cell| {
        let mut fresh = Default::default();
        let mut borrowed = cell.try_borrow_mut();
        let [c, d, m, u] = match &mut borrowed {
            Ok(bufs) => &mut **bufs,
            Err(_) => &mut fresh,
        };
        let mut sender = Core::default();
        // In this order in both engines (js/authenticator.js `readSender`): the first bad
        // member names the TypeError.
        if reads.certificate
            && read(
                c"clientCertThumbprint",
                "sender.clientCertThumbprint",
                c,
                THUMBPRINT_LEN,
            )?
        {
            // An empty thumbprint is no certificate.
            sender.client_cert_thumbprint = Some(&c[..]).filter(|t| !t.is_empty());
        }
        if reads.dpop {
            let has_dpop = read(c"dpop", "sender.dpop", d, limits::DPOP_PROOF_CAP as usize)?;
            let has_method = read(c"method", "sender.method", m, limits::DPOP_URL_CAP as usize)?;
            let has_url = read(c"url", "sender.url", u, limits::DPOP_URL_CAP as usize)?;
            sender.dpop = has_dpop.then_some(&d[..]);
            sender.method = has_method.then_some(&m[..]);
            sender.url = has_url.then_some(&u[..]);
        }
        Ok(f(&sender))
    })
}

fn not_object() -> ArgError {
    ArgError::Type(crate::contract::messages::SENDER_NOT_CONTEXT.into())
}
