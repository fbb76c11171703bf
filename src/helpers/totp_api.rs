//! JS bindings for HOTP/TOTP, base32 secrets and `otpauth://` URIs.

use napi::bindgen_prelude::{Either, Null, Unknown};
use napi::{Env, ValueType};
use napi_derive::napi;

use super::args;
use super::errors::{to_js, HelperError, HelperResult};
use super::hotp::{self, OtpAlgorithm, MAX_WINDOW};

/// Options shared by `hotp`, `totp`, `verifyHotp`, `verifyTotp` and `totpUri`.
#[napi(object)]
#[derive(Default)]
pub struct OtpOptions {
    /// 'SHA1' | 'SHA256' | 'SHA512'. Default 'SHA1' (what authenticator apps expect).
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
fn read_secret(v: &Unknown) -> HelperResult<Vec<u8>> {
    let secret = if v.get_type().ok() == Some(ValueType::String) {
        hotp::decode_base32(&args::string(v, "secret", hotp::MAX_SECRET_BYTES * 2)?)?
    } else {
        args::bytes(v, "secret", hotp::MAX_SECRET_BYTES)?
    };
    hotp::check_secret(&secret)?;
    Ok(secret)
}

fn prepare(secret: &Unknown, options: &Option<Unknown>) -> HelperResult<Prepared> {
    let opts: OtpOptions = args::options(options, "options")?;
    Ok(Prepared {
        secret: read_secret(secret)?,
        alg: OtpAlgorithm::parse(opts.algorithm.as_deref())?,
        digits: args::int_in(opts.digits, "options.digits", 6, 8, 6)? as u32,
        period: args::int_in(opts.period, "options.period", 1, 3600, 30)?,
        opts,
    })
}

fn now_or(time: Option<f64>) -> HelperResult<u64> {
    match time {
        // Fractions are floored so `Date.now() / 1000` works as is.
        Some(t) => args::int_in(Some(t.floor()), "options.time", 0, (1u64 << 53) - 1, 0),
        None => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)),
    }
}

fn read_counter(v: Option<f64>) -> HelperResult<u64> {
    if v.is_none() {
        return Err(HelperError::arg_type("counter", "a number"));
    }
    args::int_in(v, "counter", 0, (1u64 << 53) - 1, 0)
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
            Ok(hotp::hotp(
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
            let counter = hotp::totp_counter(now_or(p.opts.time)?, p.period);
            Ok(hotp::hotp(&p.secret, counter, p.digits, p.alg))
        })(),
    )
}

fn read_code(code: &Unknown) -> HelperResult<String> {
    args::string(code, "code", 64)
}

/// Checks a TOTP code within ±`window` steps (default 1) of `options.time` (default now), in
/// constant time per candidate. A code of the wrong length or with non-digits is simply invalid.
#[napi(
    catch_unwind,
    ts_args_type = "secret: string | Buffer | Uint8Array, code: string, options?: OtpOptions"
)]
pub fn verify_totp(
    env: Env,
    secret: Unknown<'_>,
    code: Unknown<'_>,
    options: Option<Unknown<'_>>,
) -> napi::Result<OtpMatch> {
    to_js(
        &env,
        (|| {
            let p = prepare(&secret, &options)?;
            let code = read_code(&code)?;
            let window = args::int_in(p.opts.window, "options.window", 0, MAX_WINDOW, 1)?;
            let now = hotp::totp_counter(now_or(p.opts.time)?, p.period);
            let from = now.saturating_sub(window);
            let found = hotp::verify_range(&p.secret, &code, from, now + window, p.digits, p.alg);
            Ok(OtpMatch {
                valid: found.is_some(),
                delta: delta(found.map(|c| c as i64 - now as i64)),
            })
        })(),
    )
}

/// Checks an HOTP code at `counter` and up to `window` counters ahead (default 0).
#[napi(
    catch_unwind,
    ts_args_type = "secret: string | Buffer | Uint8Array, code: string, counter: number, options?: OtpOptions"
)]
pub fn verify_hotp(
    env: Env,
    secret: Unknown<'_>,
    code: Unknown<'_>,
    counter: Option<Unknown<'_>>,
    options: Option<Unknown<'_>>,
) -> napi::Result<OtpMatch> {
    to_js(
        &env,
        (|| {
            let p = prepare(&secret, &options)?;
            let code = read_code(&code)?;
            let counter = read_counter(args::number(&counter, "counter")?)?;
            let window = args::int_in(p.opts.window, "options.window", 0, MAX_WINDOW, 0)?;
            let found = hotp::verify_range(
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
            let n = args::int_in(
                args::number(&bytes, "bytes")?,
                "bytes",
                hotp::MIN_SECRET_BYTES as u64,
                64,
                20,
            )?;
            hotp::generate_secret(n as usize)
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
    pub algorithm: Option<String>,
    /// Default 6.
    pub digits: Option<f64>,
    /// Default 30.
    pub period: Option<f64>,
}

fn label_part(name: &str, value: &str) -> HelperResult<()> {
    if value.is_empty() || value.len() > 256 {
        return Err(HelperError::out_of_range(name, "must be 1 to 256 bytes"));
    }
    if value.contains(':') || value.chars().any(char::is_control) {
        return Err(HelperError::arg_value(
            name,
            "must not contain ':' or control characters",
        ));
    }
    Ok(())
}

/// `otpauth://totp/Issuer:account?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30` for a
/// QR code, with issuer and account percent-encoded (RFC 3986).
#[napi(catch_unwind, ts_args_type = "input: TotpUriInput")]
pub fn totp_uri(env: Env, input: Option<Unknown<'_>>) -> napi::Result<String> {
    to_js(
        &env,
        (|| {
            if args::is_nullish(&input) {
                return Err(HelperError::arg_type("input", "an object"));
            }
            let i: TotpUriInput = args::options(&input, "input")?;
            let secret = hotp::decode_base32(&i.secret)?;
            hotp::check_secret(&secret)?;
            label_part("input.account", &i.account)?;
            if let Some(issuer) = &i.issuer {
                label_part("input.issuer", issuer)?;
            }
            let alg = OtpAlgorithm::parse(i.algorithm.as_deref())?;
            let digits = args::int_in(i.digits, "input.digits", 6, 8, 6)? as u32;
            let period = args::int_in(i.period, "input.period", 1, 3600, 30)?;
            Ok(hotp::totp_uri(
                &hotp::encode_base32(&secret),
                &i.account,
                i.issuer.as_deref(),
                alg,
                digits,
                period,
            ))
        })(),
    )
}
