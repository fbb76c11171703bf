//! The standalone `RateLimiter` class: the Authenticator's limiter for any key (login
//! attempts per account or address, OTP checks, API keys). Converts arguments; the core
//! (`crate::rate_limit`) owns the rules.

use napi::bindgen_prelude::*;
use napi::{JsValue, ValueType};
use napi_derive::napi;
use std::cell::RefCell;

use super::args::{has_lone_surrogate, read_optional_str};

/// Why a key holding a lone UTF-16 surrogate is refused (contract/messages.json).
const LONE_SURROGATE: &str = crate::contract::messages::LONE_SURROGATE_KEY;
use super::js_error::ArgError;
use crate::rate_limit::{self, monotonic_nanos, Decision, MAX_KEY_BYTES};

thread_local! {
    static KEY_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Options for `new RateLimiter()`.
#[napi(object)]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "declared for index.d.ts only: the binding reads the options one by one"
    )
)]
pub struct RateLimiterOptions {
    /// Tokens a key can spend at once (burst), an integer from 1 to 1e9. Required.
    pub capacity: f64,
    /// Tokens returned per second, greater than 0 and at most 1e9. Required.
    pub refill_per_sec: f64,
    /// Most keys held in the table, an integer from 1 to 1e8. Default 100000. Keys beyond it are
    /// forgotten least recently used first, their debts kept in a fixed-size sketch.
    pub max_keys: Option<f64>,
}

/// What `consume` decided.
#[napi(object)]
pub struct RateLimitDecision {
    /// Whether the tokens were taken.
    pub allowed: bool,
    /// Whole tokens left in the key's bucket after this call.
    pub remaining: u32,
    /// Milliseconds until this cost can succeed; 0 when allowed.
    pub retry_after_ms: f64,
}

/// Per-key GCRA token buckets with bounded memory that never forgets a debt
/// (docs/rate-limiting.md). Synchronous and in-process.
#[napi]
pub struct RateLimiter {
    core: rate_limit::RateLimiter,
}

fn number(obj: &Object, name: &str) -> std::result::Result<Option<f64>, ArgError> {
    let v: Unknown = obj
        .get_named_property_unchecked(name)
        .map_err(|_| ArgError::Type(format!("options.{name} could not be read")))?;
    match v.get_type() {
        Ok(ValueType::Undefined) | Ok(ValueType::Null) => Ok(None),
        // SAFETY: `v` is a live handle of the current call whose type was just checked to be a number.
        Ok(ValueType::Number) => unsafe { v.cast::<f64>() }
            .map(Some)
            .map_err(|_| ArgError::not_number(&format!("options.{name}"))),
        _ => Err(ArgError::not_number(&format!("options.{name}"))),
    }
}

fn read_options(options: Unknown) -> std::result::Result<rate_limit::RateLimiter, ArgError> {
    if options.get_type().ok() != Some(ValueType::Object) || options.is_array().unwrap_or(false) {
        return Err(ArgError::not_object("options"));
    }
    // SAFETY: `options` is a live handle of the current call, checked above to be a non-array object.
    let obj: Object = unsafe { options.cast() }.map_err(|_| ArgError::not_object("options"))?;
    super::args::known_options(&obj, "RateLimiterOptions", "options")
        .map_err(|e| ArgError::Type(e.message))?;
    let required = |name: &str| {
        number(&obj, name)?.ok_or_else(|| ArgError::not_number(&format!("options.{name}")))
    };
    let capacity = required("capacity")?;
    let refill = required("refillPerSec")?;
    let max_keys = number(&obj, "maxKeys")?;
    rate_limit::check_options(capacity, refill, max_keys).map_err(ArgError::Range)?;
    Ok(rate_limit::RateLimiter::new(
        capacity as u32,
        refill,
        max_keys.map_or(rate_limit::DEFAULT_MAX_KEYS, |n| n as usize),
    ))
}

#[napi]
impl RateLimiter {
    /// Validates `options` and allocates the debt sketch. Throws a `TypeError`
    /// (`ERR_INVALID_ARG_TYPE`) or `RangeError` (`ERR_OUT_OF_RANGE`) naming the option.
    #[napi(
        catch_unwind,
        constructor,
        ts_args_type = "options: RateLimiterOptions"
    )]
    pub fn new(env: Env, options: Unknown) -> Result<Self> {
        let core = read_options(options).map_err(|e| e.throw(&env))?;
        Ok(RateLimiter { core })
    }

    /// Takes `cost` tokens (an integer from 1 to `capacity`, default 1) from `key`'s bucket (a
    /// string of at most 1024 UTF-8 bytes), or none when it holds fewer.
    #[napi(
        catch_unwind,
        ts_args_type = "key: string, cost?: number",
        ts_return_type = "RateLimitDecision"
    )]
    pub fn consume(
        &self,
        env: Env,
        key: Unknown,
        cost: Option<Unknown>,
    ) -> Result<RateLimitDecision> {
        self.consume_inner(key, cost).map_err(|e| e.throw(&env))
    }

    /// Keys currently held in the table (at most about `maxKeys`).
    #[napi(getter)]
    pub fn size(&self) -> u32 {
        self.core.len() as u32
    }

    /// Bucket capacity.
    #[napi(getter)]
    pub fn capacity(&self) -> u32 {
        self.core.capacity()
    }
}

impl RateLimiter {
    fn consume_inner(
        &self,
        key: Unknown,
        cost: Option<Unknown>,
    ) -> std::result::Result<RateLimitDecision, ArgError> {
        let cost = match cost {
            None => 1,
            Some(v) => match v.get_type() {
                Ok(ValueType::Undefined) => 1,
                Ok(ValueType::Number) => {
                    // SAFETY: `v` is a live argument of the current call, checked to be a number.
                    let n = unsafe { v.cast::<f64>() }.map_err(|_| ArgError::not_number("cost"))?;
                    rate_limit::check_cost(n, self.core.capacity()).map_err(ArgError::Range)?
                }
                _ => return Err(ArgError::not_number("cost")),
            },
        };
        if key.get_type().ok() != Some(ValueType::String) {
            return Err(ArgError::not_string("key"));
        }
        KEY_BUFFER.with(|cell| {
            let mut buf = cell.borrow_mut();
            // Read a few bytes past the limit: a longer key is then seen as longer even when
            // the cut falls inside a multi-byte character.
            // SAFETY: `key` is a live handle of the current call.
            let bytes = unsafe {
                read_optional_str(
                    key.value().env,
                    key.raw(),
                    &mut buf,
                    MAX_KEY_BYTES + 4,
                    "key",
                )
            }?
            .unwrap_or_default();
            if bytes.len() > MAX_KEY_BYTES {
                return Err(ArgError::Range(crate::contract::messages::key_too_long(
                    "key",
                    MAX_KEY_BYTES as f64,
                )));
            }
            // A lone surrogate arrives as U+FFFD: refused, so that keys differing only there
            // never share a bucket here while the JS engine keeps them apart (docs/rate-limiting.md).
            let replaced = bytes.windows(3).any(|w| w == "\u{fffd}".as_bytes());
            // SAFETY: `key` is a live string handle of the current call.
            if replaced && unsafe { has_lone_surrogate(key.value().env, key.raw(), MAX_KEY_BYTES) }
            {
                return Err(ArgError::Type(LONE_SURROGATE.into()));
            }
            Ok(match self.core.consume(bytes, cost, monotonic_nanos()) {
                Decision::Allowed { remaining } => RateLimitDecision {
                    allowed: true,
                    remaining,
                    retry_after_ms: 0.0,
                },
                Decision::Limited {
                    remaining,
                    retry_after_ms,
                } => RateLimitDecision {
                    allowed: false,
                    remaining,
                    retry_after_ms: retry_after_ms as f64,
                },
            })
        })
    }
}
