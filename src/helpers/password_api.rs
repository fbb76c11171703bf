//! JS bindings for Argon2: async (libuv pool) and `…Sync` pairs, plus `needsRehash`.
//!
//! Arguments are validated and the stored hash parsed on the calling thread, so bad input throws
//! a `TypeError`/`RangeError` synchronously; the worker thread only runs Argon2.

use napi::bindgen_prelude::{
    AbortSignal, AsyncTask, Buffer, Either, FromNapiValue, JsObjectValue, Object, Unknown,
};
use napi::{Env, JsValue, Task, ValueType};
use napi_derive::napi;
use zeroize::Zeroizing;

use super::args;
use super::errors::{to_js, HelperError, HelperResult};
use super::password::{self, Costs, MAX_PASSWORD_BYTES, MAX_SECRET_BYTES};

/// Argon2id costs and pepper for `hashPassword`/`hashPasswordSync`/`needsRehash`.
#[napi(object)]
#[derive(Default)]
pub struct PasswordOptions {
    /// Memory cost in KiB. Default 19456 (19 MiB, OWASP); allowed 8 * parallelism ..= 262144 (256 MiB).
    pub memory_cost: Option<f64>,
    /// Number of passes. Default 2; allowed 1 ..= 16.
    pub time_cost: Option<f64>,
    /// Lanes. Default 1; allowed 1 ..= 16.
    pub parallelism: Option<f64>,
    /// Optional pepper (Argon2 secret input K), at most 1024 bytes. Default none. It is not stored
    /// in the PHC string: pass the same secret to `verifyPassword`.
    pub secret: Option<Either<String, Buffer>>,
}

/// Options for `verifyPassword`/`verifyPasswordSync`.
#[napi(object)]
#[derive(Default)]
pub struct VerifyPasswordOptions {
    /// The pepper the hash was made with. Default none.
    pub secret: Option<Either<String, Buffer>>,
}

fn secret_bytes(secret: &Option<Either<String, Buffer>>) -> HelperResult<Vec<u8>> {
    let bytes = match secret {
        None => Vec::new(),
        Some(Either::A(s)) => s.as_bytes().to_vec(),
        Some(Either::B(b)) => b.to_vec(),
    };
    if bytes.len() > MAX_SECRET_BYTES {
        return Err(HelperError::out_of_range(
            "options.secret",
            &format!("must be at most {MAX_SECRET_BYTES} bytes"),
        ));
    }
    Ok(bytes)
}

/// An optional `AbortSignal`: aborting before the work starts on the pool rejects the promise
/// with an AbortError (a hash already running cannot be interrupted).
fn abort_signal(v: &Option<Unknown>) -> HelperResult<Option<AbortSignal>> {
    if args::is_nullish(v) {
        return Ok(None);
    }
    let v = v.as_ref().expect("checked by is_nullish");
    let is_signal = v.get_type().ok() == Some(ValueType::Object)
        // SAFETY: the value is a live argument of the current call, checked to be an object just before.
        && unsafe { Object::from_napi_value(v.value().env, v.raw()) }
            .and_then(|o| o.has_named_property("aborted"))
            .unwrap_or(false);
    if !is_signal {
        return Err(HelperError::arg_type("signal", "an AbortSignal"));
    }
    // SAFETY: the value is a live argument of the current call, checked to be an object with `aborted` above.
    unsafe { AbortSignal::from_napi_value(v.value().env, v.raw()) }
        .map(Some)
        .map_err(|_| HelperError::arg_type("signal", "an AbortSignal"))
}

fn read_costs(opts: &PasswordOptions) -> HelperResult<Costs> {
    let d = Costs::default();
    Costs {
        memory_kib: args::int_in(
            opts.memory_cost,
            "options.memoryCost",
            0,
            u32::MAX as u64,
            d.memory_kib as u64,
        )? as u32,
        time_cost: args::int_in(
            opts.time_cost,
            "options.timeCost",
            0,
            u32::MAX as u64,
            d.time_cost as u64,
        )? as u32,
        parallelism: args::int_in(
            opts.parallelism,
            "options.parallelism",
            0,
            u32::MAX as u64,
            d.parallelism as u64,
        )? as u32,
    }
    .checked()
}

fn prepare_hash(password: &Unknown, options: &Option<Unknown>) -> HelperResult<HashPasswordTask> {
    let password = args::bytes(password, "password", MAX_PASSWORD_BYTES)?;
    let opts: PasswordOptions = args::options(options, "options")?;
    Ok(HashPasswordTask {
        costs: read_costs(&opts)?,
        secret: Zeroizing::new(secret_bytes(&opts.secret)?),
        password: Zeroizing::new(password),
    })
}

fn prepare_verify(
    hash: &Unknown,
    password: &Unknown,
    options: &Option<Unknown>,
) -> HelperResult<VerifyPasswordTask> {
    let hash = args::string(hash, "hash", 64 << 10)?;
    let password = args::bytes(password, "password", MAX_PASSWORD_BYTES)?;
    let opts: VerifyPasswordOptions = args::options(options, "options")?;
    Ok(VerifyPasswordTask {
        decoded: password::parse(&hash)?,
        secret: Zeroizing::new(secret_bytes(&opts.secret)?),
        password: Zeroizing::new(password),
    })
}

/// Work item for `hashPassword` on the libuv thread pool.
pub struct HashPasswordTask {
    password: Zeroizing<Vec<u8>>,
    costs: Costs,
    secret: Zeroizing<Vec<u8>>,
}

impl Task for HashPasswordTask {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        // Runs on a libuv worker where napi-rs catches nothing: a panic must become an error.
        catch_panic(|| {
            password::hash(&self.password, self.costs, &self.secret).map_err(HelperError::into_napi)
        })
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}

/// Work item for `verifyPassword` on the libuv thread pool.
pub struct VerifyPasswordTask {
    decoded: argon2_rust::Decoded,
    password: Zeroizing<Vec<u8>>,
    secret: Zeroizing<Vec<u8>>,
}

impl Task for VerifyPasswordTask {
    type Output = bool;
    type JsValue = bool;

    fn compute(&mut self) -> napi::Result<bool> {
        catch_panic(|| {
            password::verify(&self.decoded, &self.password, &self.secret)
                .map_err(HelperError::into_napi)
        })
    }

    fn resolve(&mut self, _env: Env, output: bool) -> napi::Result<bool> {
        Ok(output)
    }
}

/// Hashes a password with Argon2id v1.3 (random 16-byte salt, 32-byte tag) off the main thread.
/// Defaults: memoryCost 19456 KiB, timeCost 2, parallelism 1. Resolves to a PHC string
/// (`$argon2id$v=19$m=19456,t=2,p=1$…`). Passwords are at most 4096 bytes. Invalid arguments
/// throw synchronously (`TypeError`/`RangeError` with `code`).
#[napi(
    catch_unwind,
    ts_args_type = "password: string | Buffer | Uint8Array, options?: PasswordOptions, signal?: AbortSignal",
    ts_return_type = "Promise<string>"
)]
pub fn hash_password(
    env: Env,
    password: Unknown<'_>,
    options: Option<Unknown<'_>>,
    signal: Option<Unknown<'_>>,
) -> napi::Result<AsyncTask<HashPasswordTask>> {
    let task = to_js(&env, prepare_hash(&password, &options))?;
    let signal = to_js(&env, abort_signal(&signal))?;
    Ok(AsyncTask::with_optional_signal(task, signal))
}

/// Synchronous `hashPassword`: blocks the event loop for the whole hash (~5–15 ms at defaults).
#[napi(
    catch_unwind,
    ts_args_type = "password: string | Buffer | Uint8Array, options?: PasswordOptions"
)]
pub fn hash_password_sync(
    env: Env,
    password: Unknown<'_>,
    options: Option<Unknown<'_>>,
) -> napi::Result<String> {
    let task = to_js(&env, prepare_hash(&password, &options))?;
    to_js(
        &env,
        password::hash(&task.password, task.costs, &task.secret),
    )
}

/// Checks a password against a PHC string made by us or by another library (the `argon2` and
/// `@node-rs/argon2` npm packages; argon2i, argon2d, argon2id) off the main thread. A malformed
/// hash throws `TypeError` with code `ERR_INVALID_HASH`; a hash whose costs exceed the caps
/// (m > 262144 KiB, t > 16, p > 16) throws `RangeError` with code `ERR_HASH_TOO_COSTLY`.
#[napi(
    catch_unwind,
    ts_args_type = "hash: string, password: string | Buffer | Uint8Array, options?: VerifyPasswordOptions, signal?: AbortSignal",
    ts_return_type = "Promise<boolean>"
)]
pub fn verify_password(
    env: Env,
    hash: Unknown<'_>,
    password: Unknown<'_>,
    options: Option<Unknown<'_>>,
    signal: Option<Unknown<'_>>,
) -> napi::Result<AsyncTask<VerifyPasswordTask>> {
    let task = to_js(&env, prepare_verify(&hash, &password, &options))?;
    let signal = to_js(&env, abort_signal(&signal))?;
    Ok(AsyncTask::with_optional_signal(task, signal))
}

/// Synchronous `verifyPassword`.
#[napi(
    catch_unwind,
    ts_args_type = "hash: string, password: string | Buffer | Uint8Array, options?: VerifyPasswordOptions"
)]
pub fn verify_password_sync(
    env: Env,
    hash: Unknown<'_>,
    password: Unknown<'_>,
    options: Option<Unknown<'_>>,
) -> napi::Result<bool> {
    let task = to_js(&env, prepare_verify(&hash, &password, &options))?;
    to_js(
        &env,
        password::verify(&task.decoded, &task.password, &task.secret),
    )
}

/// True when `hash` should be recomputed at the next successful login: it is not argon2id v1.3,
/// its memory or time cost is below `options` (defaults 19456 KiB / 2), its parallelism differs,
/// or its salt/tag are shorter than 16/32 bytes. Throws `ERR_INVALID_HASH` for a malformed hash.
#[napi(catch_unwind, ts_args_type = "hash: string, options?: PasswordOptions")]
pub fn needs_rehash(
    env: Env,
    hash: Unknown<'_>,
    options: Option<Unknown<'_>>,
) -> napi::Result<bool> {
    let result = (|| {
        let hash = args::string(&hash, "hash", 64 << 10)?;
        let opts: PasswordOptions = args::options(&options, "options")?;
        let wanted = read_costs(&opts)?;
        let decoded = password::parse(&hash)?;
        Ok(password::needs_rehash(&decoded, wanted))
    })();
    to_js(&env, result)
}

/// Turns a panic in pool work into a rejected promise instead of an aborted process.
fn catch_panic<T>(work: impl FnOnce() -> napi::Result<T>) -> napi::Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .unwrap_or_else(|panic| Err(napi::bindgen_prelude::panic_to_error(panic)))
}
