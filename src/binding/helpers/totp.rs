//! JS wrappers of HOTP/TOTP, base32 secrets and `otpauth://` URIs (rules in `helpers::totp`).

use napi::bindgen_prelude::{Either, Null, Unknown};
use napi::{Env, ValueType};
use napi_derive::napi;

use crate::binding::args;
use crate::binding::js_error::{to_js, CallError, CallResult};
use crate::call_error::int_in;
use crate::helpers::totp::{self as otp, OtpAlgorithm, MAX_WINDOW};

/// Options shared by `hotp`, `totp`, `verifyHotp`, `verifyTotp` and `totpUri`.
#[napi(object)]
#[derive(Default)]
pub struct OtpOptions {
    /// 'SHA1' | 'SHA256' | 'SHA512'. Default 'SHA1' (what authenticator apps expect).
    #[napi(ts_type = "'SHA1' | 'SHA256' | 'SHA512'")]
    pub algorithm: Option<String>,
    /// Code length, 6 ..= 8. Default 6.
    pub digits: Option<f64>,
    /// TOTP time step in seconds, 1 ..= 3600. Default 30.
    pub period: Option<f64>,
    /// TOTP: the time to use, Unix seconds (fractions are floored). Default now.
    pub time: Option<f64>,
    /// Verification window: TOTP accepts this many steps before and after the current one;
    /// HOTP looks this many counters ahead. 0 ..= 10. Default 1 for TOTP, 0 for HOTP.
    pub window: Option<f64>,
}

/// Result of `verifyTotp`/`verifyHotp`.
#[napi(object)]
pub struct OtpMatch {
    /// True when the code matched a step/counter inside the window.
    pub valid: bool,
    /// Steps (TOTP, may be negative) or counters (HOTP) between the expected and the matching
    /// value; null when not valid. Store the matched counter to refuse replays.
    pub delta: Either<i64, Null>,
}

fn delta(d: Option<i64>) -> Either<i64, Null> {
    d.map_or(Either::B(Null), Either::A)
}

struct Prepared {
    secret: Vec<u8>,
    alg: OtpAlgorithm,
    digits: u32,
    period: u64,
    opts: OtpOptions,
}

/// A secret given as base32 text or raw bytes.
fn read_secret(v: &Unknown) -> CallResult<Vec<u8>> {
    let secret = if args::kind(v) == ValueType::String {
        otp::decode_base32(&args::string(v, "secret", otp::MAX_SECRET_BYTES * 2)?)?
    } else {
        args::bytes(v, "secret", otp::MAX_SECRET_BYTES)?
    };
    otp::check_secret(&secret)?;
    Ok(secret)
}

fn prepare(secret: &Unknown, options: &Option<Unknown>) -> CallResult<Prepared> {
    let opts: OtpOptions = args::options(options, "OtpOptions", "options")?;
    Ok(Prepared {
        secret: read_secret(secret)?,
        alg: OtpAlgorithm::parse(opts.algorithm.as_deref())?,
        digits: int_in(opts.digits, "options.digits", 6, 8, 6)? as u32,
        period: int_in(opts.period, "options.period", 1, 3600, 30)?,
        opts,
    })
}

fn now_or(time: Option<f64>) -> CallResult<u64> {
    match time {
        // Fractions are floored so `Date.now() / 1000` works as is.
        Some(t) => int_in(Some(t.floor()), "options.time", 0, (1u64 << 53) - 1, 0),
        None => Ok(otp::unix_now()),
    }
}

fn read_counter(v: Option<f64>) -> CallResult<u64> {
    if v.is_none() {
        return Err(CallError::not_number("counter"));
    }
    int_in(v, "counter", 0, (1u64 << 53) - 1, 0)
}

/// RFC 4226 HOTP code for `counter` (a safe integer ≥ 0). `secret` is base32 text or raw bytes
/// (at least 16 bytes). Defaults: SHA1, 6 digits.
#[napi(
    catch_unwind,
    ts_args_type = "secret: string | Buffer | Uint8Array, counter: number, options?: OtpOptions"
)]
pub fn hotp(
    env: Env,
    secret: Unknown<'_>,
    counter: Option<Unknown<'_>>,
    options: Option<Unknown<'_>>,
) -> napi::Result<String> {
    to_js(
        &env,
        (|| {
            let p = prepare(&secret, &options)?;
            Ok(otp::hotp(
                &p.secret,
                read_counter(args::number(&counter, "counter")?)?,
                p.digits,
                p.alg,
            ))
        })(),
    )
}

/// RFC 6238 TOTP code at `options.time` (default now). Defaults: SHA1, 6 digits, 30 s period.
#[napi(
    catch_unwind,
    ts_args_type = "secret: string | Buffer | Uint8Array, options?: OtpOptions"
)]
pub fn totp(env: Env, secret: Unknown<'_>, options: Option<Unknown<'_>>) -> napi::Result<String> {
    to_js(
        &env,
        (|| {
            let p = prepare(&secret, &options)?;
            let counter = otp::totp_counter(now_or(p.opts.time)?, p.period);
            Ok(otp::hotp(&p.secret, counter, p.digits, p.alg))
        })(),
    )
}

/// The code a user sent, as text: a string as is, a number zero-padded to `digits` (JSON drops
/// leading zeros), anything else (or a string too long to be a code) as no code. Never an
/// error: the code is user input, and a wrong one is simply not valid.
pub(crate) fn read_code(code: &Option<Unknown>, digits: u32) -> String {
    let Some(v) = code.as_ref() else {
        return String::new();
    };
    match args::kind(v) {
        ValueType::String => args::string(v, "code", 64).unwrap_or_default(),
        ValueType::Number => args::number(code, "code")
            .ok()
            .flatten()
            .and_then(|n| otp::code_from_number(n, digits))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// Checks a TOTP code within ±`window` steps (default 1) of `options.time` (default now), in
/// constant time per candidate. `code` is user input and never throws: a string of the wrong
/// length or with non-digits, a number that is not a whole number below 10^digits, or any other
/// value is simply `{ valid: false, delta: null }`; a number is zero-padded (`12345` is
/// "012345"). Bad `secret` or `options` throw.
#[napi(
    catch_unwind,
    ts_args_type = "secret: string | Buffer | Uint8Array, code: string | number, options?: OtpOptions",
    ts_return_type = "OtpMatch & ({ valid: true; delta: number } | { valid: false; delta: null })"
)]
pub fn verify_totp(
    env: Env,
    secret: Unknown<'_>,
    code: Option<Unknown<'_>>,
    options: Option<Unknown<'_>>,
) -> napi::Result<OtpMatch> {
    to_js(
        &env,
        (|| {
            let p = prepare(&secret, &options)?;
            let code = read_code(&code, p.digits);
            let window = int_in(p.opts.window, "options.window", 0, MAX_WINDOW, 1)?;
            let now = otp::totp_counter(now_or(p.opts.time)?, p.period);
            let from = now.saturating_sub(window);
            let found = otp::verify_range(&p.secret, &code, from, now + window, p.digits, p.alg);
            Ok(OtpMatch {
                valid: found.is_some(),
                delta: delta(found.map(|c| c as i64 - now as i64)),
            })
        })(),
    )
}

/// Checks an HOTP code at `counter` and up to `window` counters ahead (default 0). `code`
/// follows the rules of `verifyTotp` (user input: never throws, numbers zero-padded).
#[napi(
    catch_unwind,
    ts_args_type = "secret: string | Buffer | Uint8Array, code: string | number, counter: number, options?: OtpOptions",
    ts_return_type = "OtpMatch & ({ valid: true; delta: number } | { valid: false; delta: null })"
)]
pub fn verify_hotp(
    env: Env,
    secret: Unknown<'_>,
    code: Option<Unknown<'_>>,
    counter: Option<Unknown<'_>>,
    options: Option<Unknown<'_>>,
) -> napi::Result<OtpMatch> {
    to_js(
        &env,
        (|| {
            let p = prepare(&secret, &options)?;
            let code = read_code(&code, p.digits);
            let counter = read_counter(args::number(&counter, "counter")?)?;
            let window = int_in(p.opts.window, "options.window", 0, MAX_WINDOW, 0)?;
            let found = otp::verify_range(
                &p.secret,
                &code,
                counter,
                counter.saturating_add(window),
                p.digits,
                p.alg,
            );
            Ok(OtpMatch {
                valid: found.is_some(),
                delta: delta(found.map(|c| (c - counter) as i64)),
            })
        })(),
    )
}

/// A new random TOTP secret as unpadded base32. `bytes` 16 ..= 64, default 20 (160 bits, the
/// RFC 4226 recommendation) which gives 32 characters.
#[napi(catch_unwind, ts_args_type = "bytes?: number")]
pub fn generate_totp_secret(env: Env, bytes: Option<Unknown<'_>>) -> napi::Result<String> {
    to_js(
        &env,
        (|| {
            let n = int_in(
                args::number(&bytes, "bytes")?,
                "bytes",
                otp::MIN_SECRET_BYTES as u64,
                64,
                20,
            )?;
            otp::generate_secret(n as usize)
        })(),
    )
}

/// Input for `totpUri`.
#[napi(object)]
#[derive(Default)]
pub struct TotpUriInput {
    /// Base32 secret (from `generateTotpSecret`).
    pub secret: String,
    /// Account name shown in the app, e.g. the user's email. 1 ..= 256 bytes, no ':'.
    pub account: String,
    /// Service name shown in the app. Optional, at most 256 bytes, no ':'. Recommended.
    pub issuer: Option<String>,
    /// Default 'SHA1'. Note: several apps ignore anything but SHA1/6/30.
    #[napi(ts_type = "'SHA1' | 'SHA256' | 'SHA512'")]
    pub algorithm: Option<String>,
    /// Default 6.
    pub digits: Option<f64>,
    /// Default 30.
    pub period: Option<f64>,
}

/// `otpauth://totp/Issuer:account?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30` for a
/// QR code, with issuer and account percent-encoded (RFC 3986).
#[napi(catch_unwind, ts_args_type = "input: TotpUriInput")]
pub fn totp_uri(env: Env, input: Option<Unknown<'_>>) -> napi::Result<String> {
    to_js(
        &env,
        (|| {
            if args::is_nullish(&input) {
                return Err(CallError::not_object("input"));
            }
            let i: TotpUriInput = args::options(&input, "TotpUriInput", "input")?;
            let secret = otp::decode_base32(&i.secret)?;
            otp::check_secret(&secret)?;
            otp::check_label_part("input.account", &i.account)?;
            if let Some(issuer) = &i.issuer {
                otp::check_label_part("input.issuer", issuer)?;
            }
            let alg = OtpAlgorithm::parse(i.algorithm.as_deref())?;
            let digits = int_in(i.digits, "input.digits", 6, 8, 6)? as u32;
            let period = int_in(i.period, "input.period", 1, 3600, 30)?;
            Ok(otp::totp_uri(
                &otp::encode_base32(&secret),
                &i.account,
                i.issuer.as_deref(),
                alg,
                digits,
                period,
            ))
        })(),
    )
}
