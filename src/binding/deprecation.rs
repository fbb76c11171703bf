//! Renamed options (`renamed` in `js/schema.json`): the old name still works, with a one-time
//! `DeprecationWarning` through `process.emitWarning`, as Node's own deprecations (the JS
//! engine warns the same way, lib/options/deprecation.js).

use napi::bindgen_prelude::{FnArgs, Function, JsObjectValue, Object, Unknown};
use napi::{sys, Env};
use std::sync::Mutex;

use super::js_error::clear_pending_exception;
use crate::schema::Renamed;

/// The deprecation codes already warned about in this process.
static WARNED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// Warns once per process about `renamed` (read as `{label}.{name}`). A warning that cannot
/// be emitted (`--throw-deprecation` makes `emitWarning` throw) is dropped: the option was
/// read and is honoured, so nothing else is affected.
pub fn warn(env: sys::napi_env, renamed: &'static Renamed, label: &str) {
    {
        let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
        if warned.contains(&renamed.code.as_str()) {
            return;
        }
        warned.push(renamed.code.as_str());
    }
    let env = Env::from_raw(env);
    if emit(&env, &renamed.message(label), &renamed.code).is_err() {
        clear_pending_exception(&env);
    }
}

fn emit(env: &Env, message: &str, code: &str) -> napi::Result<()> {
    let process: Object = env.get_global()?.get_named_property_unchecked("process")?;
    let emit_warning: Function<FnArgs<(String, Object)>, Unknown> =
        process.get_named_property_unchecked("emitWarning")?;
    let mut options = Object::new(env)?;
    options.set("type", "DeprecationWarning")?;
    options.set("code", code)?;
    emit_warning.apply(process, FnArgs::from((message.to_owned(), options)))?;
    Ok(())
}
