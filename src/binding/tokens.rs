//! Token issuance from JS: the claims object crosses as JSON text, the core
//! (`crate::issue`) checks it and signs. Verification is in `request.rs`.

use napi::bindgen_prelude::*;
use napi::{JsValue, ValueType};

use super::js_error::{
    clear_pending_exception, no_access_secret, no_refresh_secret, throw, ArgError,
};
use crate::authenticator::{Authenticator, IssueError};
use crate::jwt::TokenKind;

pub fn sign(env: &Env, core: &Authenticator, claims: Unknown, kind: TokenKind) -> Result<String> {
    let json = claims_json(env, claims).map_err(|e| {
        // JSON.stringify's own exception (a cycle, a BigInt…) gives way to the coded error.
        clear_pending_exception(env);
        e.throw(env)
    })?;
    core.issue(kind, &json).map_err(|e| match e {
        IssueError::Claims(e) => e.throw(env),
        IssueError::NoRefreshSecret => throw(env, no_refresh_secret("signRefreshToken")),
        IssueError::NoAccessSecret => throw(env, no_access_secret()),
    })
}

/// contract/messages.json `claimsNotSerializable`, as the JS engine's.
const NOT_SERIALIZABLE: &str = crate::contract::messages::CLAIMS_NOT_SERIALIZABLE;

/// Serializes through the engine's own `JSON.stringify`, which turns cycles, BigInts and the
/// like into exceptions instead of letting them recurse through native code.
fn claims_json(env: &Env, claims: Unknown) -> std::result::Result<String, ArgError> {
    let not_object = || ArgError::Type(crate::contract::messages::CLAIMS_NOT_OBJECT.into());
    if claims.get_type().ok() != Some(ValueType::Object) || claims.is_array().unwrap_or(true) {
        return Err(not_object());
    }
    let json: Object = env
        .get_global()
        .and_then(|g| g.get_named_property_unchecked("JSON"))
        .map_err(|_| not_object())?;
    let stringify: Function<Unknown, Unknown> = json
        .get_named_property_unchecked("stringify")
        .map_err(|_| not_object())?;
    let text = stringify
        .apply(Some(&json), claims)
        .map_err(|_| ArgError::Type(NOT_SERIALIZABLE.into()))?;
    if text.get_type().ok() != Some(ValueType::String) {
        return Err(not_object());
    }
    // SAFETY: the value was just checked to be a string.
    unsafe { text.cast::<String>() }.map_err(|_| not_object())
}
