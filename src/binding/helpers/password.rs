//! JS wrappers of Argon2 (rules in `helpers::password`): async (libuv pool) and `…Sync` pairs,
//! plus `needsRehash`.
//!
//! Arguments are read and the stored hash parsed on the calling thread; the worker thread only
//! runs Argon2. The `…Sync` functions throw typed errors. The Promise functions never throw:
//! every failure, bad arguments included, is their rejection (a `TypeError`/`RangeError`/`Error`
//! with the same `code` the sync twin throws), as Node's Promise APIs do.

use napi::bindgen_prelude::{
    AbortSignal, AsyncTask, Buffer, Either, FromNapiValue, JsObjectValue, Object, ToNapiValue,
    TypeName, Unknown,
};
use napi::{Env, JsValue, Task, ValueType};
use napi_derive::napi;
use zeroize::Zeroizing;

use crate::binding::args;
use crate::binding::js_error::{
    clear_pending_exception, rejection, to_js, CallError, CallResult, ErrorClass,
};
use crate::helpers::password::{self, Costs, MAX_PASSWORD_BYTES};

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

fn secret_bytes(secret: &Option<Either<String, Buffer>>) -> CallResult<Zeroizing<Vec<u8>>> {
    let bytes = Zeroizing::new(match secret {
        None => Vec::new(),
        Some(Either::A(s)) => s.as_bytes().to_vec(),
        Some(Either::B(b)) => b.to_vec(),
    });
    password::check_secret(&bytes)?;
    Ok(bytes)
}

fn costs(o: &PasswordOptions) -> CallResult<Costs> {
    Costs::from_options(o.memory_cost, o.time_cost, o.parallelism)
}

/// An optional `AbortSignal`: aborting before the work starts on the pool rejects the promise
/// with an AbortError (a hash already running cannot be interrupted). A signal that is already
/// aborted rejects at once, without hashing (`code` 'ABORT_ERR', as Node's own APIs do).
fn abort_signal(v: &Option<Unknown>) -> CallResult<Option<AbortSignal>> {
    let Some(v) = v.as_ref().filter(|_| !args::is_nullish(v)) else {
        return Ok(None);
    };
    let not_signal = || CallError::arg_type("signal", "an AbortSignal");
    if args::kind(v) != ValueType::Object {
        return Err(not_signal());
    }
    // SAFETY: `v` is a live handle of the current call and an object.
    let signal = unsafe { Object::from_napi_value(v.value().env, v.raw()) };
    let is_signal = signal
        .as_ref()
        .is_ok_and(|o| o.has_named_property("aborted").unwrap_or(false));
    if !is_signal {
        return Err(not_signal());
    }
    // napi-rs only reacts to an `abort` event, which an already aborted signal never fires.
    let already_aborted = signal.and_then(|o| o.get_named_property::<bool>("aborted"));
    if already_aborted.unwrap_or(false) {
        return Err(CallError::aborted());
    }
    // SAFETY: as above; napi-rs only registers an `abort` listener on the object.
    unsafe { AbortSignal::from_napi_value(v.value().env, v.raw()) }
        .map(Some)
        .map_err(|_| not_signal())
}

/// A password to hash: its bytes, costs and pepper, read on the calling thread.
pub struct HashInput {
    password: Zeroizing<Vec<u8>>,
    costs: Costs,
    secret: Zeroizing<Vec<u8>>,
}

/// A password to check against a parsed stored hash.
pub struct VerifyInput {
    decoded: argon2_rust::Decoded,
    password: Zeroizing<Vec<u8>>,
    secret: Zeroizing<Vec<u8>>,
}

fn read_hash_input(password: &Unknown, options: &Option<Unknown>) -> CallResult<HashInput> {
    let password = Zeroizing::new(args::bytes(password, "password", MAX_PASSWORD_BYTES)?);
    let opts: PasswordOptions = args::options(options, "PasswordOptions", "options")?;
    Ok(HashInput {
        costs: costs(&opts)?,
        secret: secret_bytes(&opts.secret)?,
        password,
    })
}

fn read_verify_input(
    hash: &Unknown,
    password: &Unknown,
    options: &Option<Unknown>,
) -> CallResult<VerifyInput> {
    let hash = args::string(hash, "hash", 64 << 10)?;
    let password = Zeroizing::new(args::bytes(password, "password", MAX_PASSWORD_BYTES)?);
    let opts: VerifyPasswordOptions = args::options(options, "VerifyPasswordOptions", "options")?;
    Ok(VerifyInput {
        decoded: password::parse(&hash)?,
        secret: secret_bytes(&opts.secret)?,
        password,
    })
}

/// The Argon2 work of one call, run on the pool.
pub trait PasswordWork: Send + 'static {
    type Output: ToNapiValue + TypeName + Send + 'static;
    fn run(&self) -> CallResult<Self::Output>;
}

impl PasswordWork for HashInput {
    type Output = String;
    fn run(&self) -> CallResult<String> {
        password::hash(&self.password, self.costs, &self.secret)
    }
}

impl PasswordWork for VerifyInput {
    type Output = bool;
    fn run(&self) -> CallResult<bool> {
        password::verify(&self.decoded, &self.password, &self.secret)
    }
}

/// Work item on the libuv pool: the input read on the calling thread, or the argument error to
/// reject with (so a Promise function never throws). `failure` carries a typed error from the
/// pool back to `reject`, which runs on the JS thread and can build the JS error.
pub struct PasswordTask<W> {
    input: CallResult<W>,
    failure: Option<CallError>,
}

impl<W: PasswordWork> PasswordTask<W> {
    fn spawn(env: &Env, input: CallResult<W>, signal: &Option<Unknown>) -> AsyncTask<Self> {
        let (input, signal) = match input.and_then(|w| Ok((w, abort_signal(signal)?))) {
            Ok((w, signal)) => (Ok(w), signal),
            Err(e) => {
                // A getter that threw while the arguments were read must not escape as a
                // synchronous throw: the typed error becomes the rejection instead.
                clear_pending_exception(env);
                (Err(e), None)
            }
        };
        AsyncTask::with_optional_signal(
            PasswordTask {
                input,
                failure: None,
            },
            signal,
        )
    }
}

impl<W: PasswordWork> Task for PasswordTask<W> {
    type Output = W::Output;
    type JsValue = W::Output;

    fn compute(&mut self) -> napi::Result<W::Output> {
        let result = match &self.input {
            Err(e) => Err(e.clone()),
            // Runs on a libuv worker where napi-rs catches nothing: a panic must become an error.
            Ok(work) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work.run()))
                .unwrap_or_else(|_| {
                    Err(CallError::new(
                        ErrorClass::Plain,
                        "ERR_AUTH_SHIELD_INTERNAL",
                        "password hashing panicked",
                    ))
                }),
        };
        result.map_err(|e| {
            let status = napi::Error::from_reason(e.message.clone());
            self.failure = Some(e);
            status
        })
    }

    fn resolve(&mut self, _env: Env, output: W::Output) -> napi::Result<W::Output> {
        Ok(output)
    }

    fn reject(&mut self, env: Env, err: napi::Error) -> napi::Result<W::Output> {
        let failure = self.failure.take().unwrap_or_else(|| {
            CallError::new(
                ErrorClass::Plain,
                "ERR_AUTH_SHIELD_INTERNAL",
                err.reason.clone(),
            )
        });
        Err(rejection(&env, failure))
    }
}

/// Hashes a password with Argon2id v1.3 (random 16-byte salt, 32-byte tag) off the main thread.
/// Defaults: memoryCost 19456 KiB, timeCost 2, parallelism 1. Resolves to a PHC string
/// (`$argon2id$v=19$m=19456,t=2,p=1$…`). Passwords are at most 4096 bytes. Never throws: bad
/// arguments reject with `TypeError`/`RangeError` (with `code`), like every other failure.
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
) -> AsyncTask<PasswordTask<HashInput>> {
    PasswordTask::spawn(&env, read_hash_input(&password, &options), &signal)
}

/// Synchronous `hashPassword`: blocks the event loop for the whole hash (~5–15 ms at defaults).
/// Bad arguments throw `TypeError`/`RangeError` with `code`.
#[napi(
    catch_unwind,
    ts_args_type = "password: string | Buffer | Uint8Array, options?: PasswordOptions"
)]
pub fn hash_password_sync(
    env: Env,
    password: Unknown<'_>,
    options: Option<Unknown<'_>>,
) -> napi::Result<String> {
    to_js(
        &env,
        read_hash_input(&password, &options).and_then(|i| i.run()),
    )
}

/// Checks a password against a PHC string made by us or by another library (the `argon2` and
/// `@node-rs/argon2` npm packages; argon2i, argon2d, argon2id) off the main thread. Never
/// throws: a malformed hash rejects with `TypeError` code `ERR_INVALID_HASH`, a hash whose costs
/// exceed the caps (m > 262144 KiB, t > 16, p > 16) with `RangeError` code
/// `ERR_HASH_TOO_COSTLY`, a password over 4096 bytes with `RangeError` code `ERR_OUT_OF_RANGE`.
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
) -> AsyncTask<PasswordTask<VerifyInput>> {
    PasswordTask::spawn(&env, read_verify_input(&hash, &password, &options), &signal)
}

/// Synchronous `verifyPassword`; the same failures are thrown.
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
    to_js(
        &env,
        read_verify_input(&hash, &password, &options).and_then(|i| i.run()),
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
    let result = (|| -> CallResult<bool> {
        let hash = args::string(&hash, "hash", 64 << 10)?;
        let opts: PasswordOptions = args::options(&options, "PasswordOptions", "options")?;
        let wanted = costs(&opts)?;
        let decoded = password::parse(&hash)?;
        Ok(password::needs_rehash(&decoded, wanted))
    })();
    to_js(&env, result)
}
