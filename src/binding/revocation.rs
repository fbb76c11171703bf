//! Reads the arguments of `revokeToken` / `revokeSubject`; the core (`crate::revocation`) owns
//! the rules, the bounds and the error messages past the argument types.

use napi::bindgen_prelude::{FromNapiValue, JsObjectValue, Object, Unknown};
use napi::{JsValue, ValueType};

use super::args::{self, is_nullish, kind};
use super::js_error::{CallError, CallResult};
use crate::authenticator::Authenticator as Core;
use crate::call_error::ErrorClass;
use crate::revocation::MAX_PART_BYTES;

/// `revokeToken(jti, expiresAtSec, options?)`.
pub fn revoke_token(
    core: &Core,
    jti: Unknown,
    expires_at_sec: Option<Unknown>,
    options: Option<Unknown>,
) -> CallResult<()> {
    let jti = args::string(&jti, "jti", MAX_PART_BYTES)?;
    let exp = args::number(&expires_at_sec, "expiresAtSec")?
        .ok_or_else(|| CallError::not_number("expiresAtSec"))?;
    let options = read_options(&options, "RevokeTokenOptions")?;
    let iss = options.string("iss")?;
    core.revoke_token(&jti, exp, iss.as_deref())
}

/// `revokeSubject(sub, options?)`.
pub fn revoke_subject(core: &Core, sub: Unknown, options: Option<Unknown>) -> CallResult<()> {
    let sub = args::string(&sub, "sub", MAX_PART_BYTES)?;
    let options = read_options(&options, "RevokeSubjectOptions")?;
    let before = options.renamed_number("RevokeSubjectOptions", "issuedBeforeSec")?;
    let iss = options.string("iss")?;
    core.revoke_subject(&sub, before, iss.as_deref())
}

struct Options(Option<Object<'static>>);

/// The options object (`type_name` in `callOptions`): unknown names are refused.
fn read_options(v: &Option<Unknown>, type_name: &str) -> CallResult<Options> {
    if is_nullish(v) {
        return Ok(Options(None));
    }
    let v = v.as_ref().expect("not nullish");
    if kind(v) != ValueType::Object {
        return Err(CallError::not_object("options"));
    }
    // SAFETY: `v` is a live handle of the current call, just checked to be an object.
    let o = unsafe { Object::from_napi_value(v.value().env, v.raw()) }
        .map_err(|_| CallError::not_object("options"))?;
    args::known_options(&o, type_name, "options")?;
    Ok(Options(Some(o)))
}

impl Options {
    fn field(&self, name: &str) -> CallResult<Option<Unknown<'_>>> {
        let Some(o) = &self.0 else { return Ok(None) };
        o.get_named_property_unchecked::<Unknown>(name)
            .map(Some)
            .map_err(|_| CallError::arg_type(&format!("options.{name}"), "readable"))
    }

    fn string(&self, name: &str) -> CallResult<Option<String>> {
        let v = self.field(name)?;
        if is_nullish(&v) {
            return Ok(None);
        }
        let label = format!("options.{name}");
        args::string(v.as_ref().expect("not nullish"), &label, MAX_PART_BYTES).map(Some)
    }

    fn number(&self, name: &str) -> CallResult<Option<f64>> {
        args::number(&self.field(name)?, &format!("options.{name}"))
    }

    /// `name`, or its deprecated name in `bag` (`renamed` in the schema); both given is a type
    /// error. The package's native.js reads the old name first, with the one deprecation warning
    /// of both engines (base/deprecation.js): the binding never warns.
    fn renamed_number(&self, bag: &str, name: &str) -> CallResult<Option<f64>> {
        let value = self.number(name)?;
        let schema = crate::schema::schema();
        let Some(renamed) = schema
            .renamed
            .iter()
            .find(|r| r.bag == bag && r.use_name == name)
        else {
            return Ok(value);
        };
        let Some(old) = self.number(&renamed.name)? else {
            return Ok(value);
        };
        if value.is_some() {
            return Err(CallError::new(
                ErrorClass::Type,
                "ERR_INVALID_ARG_TYPE",
                renamed.both_message("options"),
            ));
        }
        Ok(Some(old))
    }
}
