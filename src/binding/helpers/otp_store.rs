//! JS wrapper of the `OtpStore` class over [`Codes`] (rules in `helpers::otp_store`).

use std::time::Instant;

use napi::bindgen_prelude::Unknown;
use napi::Env;
use napi_derive::napi;
use ring::rand::SystemRandom;

use super::totp::read_code;
use crate::binding::args;
use crate::binding::js_error::{to_js, CallError, CallResult};
use crate::call_error::int_in;
use crate::helpers::otp_store::{Codes, Outcome};

const MAX_KEY_BYTES: usize = 256;

/// Options for `new OtpStore()`.
#[napi(object)]
#[derive(Default)]
pub struct OtpStoreOptions {
    /// Code length, 4 ..= 10. Default 6.
    pub digits: Option<f64>,
    /// Lifetime of a code in seconds, 1 ..= 86400. Default 300.
    pub ttl_sec: Option<f64>,
    /// Wrong guesses before the code is burned, 1 ..= 100. Default 5.
    pub max_attempts: Option<f64>,
    /// Most keys held at once, 1 ..= 10_000_000; the oldest code is evicted beyond it. Default 100000.
    pub max_entries: Option<f64>,
}

/// Result of `OtpStore.verify`: `error` and `errorCode` are absent when `valid`.
#[napi(object)]
pub struct OtpVerifyResult {
    /// True only for the right, unexpired, not yet used code.
    pub valid: bool,
    /// Wrong guesses still allowed for this code (0 once used, expired, burned or unknown).
    pub attempts_remaining: u32,
    /// Human-readable reason of a failure.
    pub error: Option<String>,
    /// Stable code of a failure: 'not_found' | 'expired' | 'mismatch' | 'too_many_attempts'.
    #[napi(ts_type = "OtpErrorCode")]
    pub error_code: Option<String>,
}

/// In-memory one-time codes keyed by e.g. user id or email. Per process: use a shared store
/// (Redis…) when several processes must accept the same code.
#[napi]
pub struct OtpStore {
    codes: Codes,
    started: Instant,
    rng: SystemRandom,
}

#[napi]
impl OtpStore {
    /// Creates a store. Defaults: digits 6, ttlSec 300, maxAttempts 5, maxEntries 100000.
    #[napi(catch_unwind, constructor, ts_args_type = "options?: OtpStoreOptions")]
    pub fn new(env: Env, options: Option<Unknown<'_>>) -> napi::Result<Self> {
        to_js(
            &env,
            (|| {
                let o: OtpStoreOptions = args::options(&options, "OtpStoreOptions", "options")?;
                Ok(OtpStore {
                    codes: Codes::new(
                        int_in(o.digits, "options.digits", 4, 10, 6)? as u32,
                        int_in(o.ttl_sec, "options.ttlSec", 1, 86_400, 300)? * 1000,
                        int_in(o.max_attempts, "options.maxAttempts", 1, 100, 5)? as u32,
                        int_in(o.max_entries, "options.maxEntries", 1, 10_000_000, 100_000)?
                            as usize,
                    ),
                    started: Instant::now(),
                    rng: SystemRandom::new(),
                })
            })(),
        )
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Issues a fresh code for `key` (1 ..= 256 bytes), replacing any earlier one.
    #[napi(catch_unwind, ts_args_type = "key: string")]
    pub fn issue(&mut self, env: Env, key: Unknown<'_>) -> napi::Result<String> {
        let now = self.now_ms();
        to_js(
            &env,
            read_key(&key).and_then(|k| self.codes.issue(&k, now, &self.rng)),
        )
    }

    /// Checks `code` for `key`. A correct code is consumed; each wrong one costs an attempt.
    /// `code` is user input and never throws: a number is zero-padded to the store's digits
    /// (JSON drops leading zeros); any other non-string is a wrong code (`mismatch`).
    #[napi(
        catch_unwind,
        ts_args_type = "key: string, code: string | number",
        ts_return_type = "OtpVerifyResult & ({ valid: true; error?: undefined; errorCode?: undefined } | { valid: false; error: string; errorCode: OtpErrorCode })"
    )]
    pub fn verify(
        &mut self,
        env: Env,
        key: Unknown<'_>,
        code: Option<Unknown<'_>>,
    ) -> napi::Result<OtpVerifyResult> {
        let now = self.now_ms();
        let key = to_js(&env, read_key(&key))?;
        let code = read_code(&code, self.codes.digits());
        let (outcome, left) = self.codes.verify(&key, &code, now);
        Ok(OtpVerifyResult {
            valid: outcome == Outcome::Ok,
            attempts_remaining: left,
            error: outcome.message().map(str::to_owned),
            error_code: outcome.code().map(str::to_owned),
        })
    }

    /// Forgets the code for `key`; true if there was one.
    #[napi(catch_unwind, ts_args_type = "key: string")]
    pub fn delete(&mut self, env: Env, key: Unknown<'_>) -> napi::Result<bool> {
        let key = to_js(&env, read_key(&key))?;
        Ok(self.codes.remove(&key))
    }

    /// Number of keys currently held (including expired ones not yet swept).
    #[napi(catch_unwind, getter)]
    pub fn size(&self) -> u32 {
        self.codes.len() as u32
    }
}

fn read_key(v: &Unknown) -> CallResult<String> {
    let k = args::string(v, "key", MAX_KEY_BYTES)?;
    if k.is_empty() {
        return Err(CallError::arg_value("key", "must not be empty"));
    }
    Ok(k)
}
