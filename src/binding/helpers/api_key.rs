//! JS wrappers of API keys (rules in `helpers::api_key`).
//!
//! The presented key is user input (a header): a missing, non-string or oversized key is a
//! result (`false`, `null`, `{ valid: false, errorCode: 'malformed' }`), never a throw. The
//! secret, the stored hash and the options come from the application: mistakes there throw.
//! Argument order (docs/vocabulary.md): the stored value first, then the presented one; the
//! server secret is always the option `secret`.

use napi::bindgen_prelude::{Buffer, Either, FromNapiValue, JsObjectValue, Object, Unknown};
use napi::{Env, JsValue, ValueType};
use napi_derive::napi;

use crate::binding::args;
use crate::binding::js_error::{to_js, CallError, CallResult};
use crate::helpers::api_key::{self, MAX_KEY_LEN};

/// Input for `generateApiKey`.
#[napi(object, object_to_js = false)]
#[expect(
    dead_code,
    reason = "declared for index.d.ts only: the binding reads the options one by one"
)]
pub struct GenerateApiKeyOptions {
    /// Key prefix, e.g. 'auth1_pk' (lowercase [a-z0-9] segments joined by '_', ≤ 32 chars).
    /// Default 'auth1_pk'.
    pub prefix: Option<String>,
    /// Server secret for the stored HMAC-SHA256, at least 16 bytes. Required.
    pub secret: Either<String, Buffer>,
}

/// A new API key. Show `key` to the user once; store only `hash` (and `prefix`/`lastFour` for display).
#[napi(object)]
pub struct GeneratedApiKey {
    /// The full key: `<prefix>_<32 base62 random chars><6 base62 checksum chars>`.
    pub key: String,
    /// Lowercase hex HMAC-SHA256(secret, key): what to store (and to look the key up by, see
    /// `hashApiKey`).
    pub hash: String,
    /// The prefix the key was made with.
    pub prefix: String,
    /// The key's last four characters, for "…abcd" hints in UIs.
    pub last_four: String,
}

/// Result of `parseApiKey`: `prefix` when valid, `error` and `errorCode` when not.
#[napi(object)]
pub struct ParsedApiKey {
    /// True when the format and checksum are right (says nothing about whether the key exists).
    pub valid: bool,
    /// The prefix when valid.
    pub prefix: Option<String>,
    /// Human-readable reason when not valid (one of two fixed messages, typed as such so that
    /// comparing it with a code such as 'malformed' does not compile: codes are in `errorCode`).
    #[napi(ts_type = "'Malformed API key' | 'API key checksum mismatch'")]
    pub error: Option<String>,
    /// Stable code when not valid: 'malformed' | 'bad_checksum'.
    #[napi(ts_type = "ApiKeyErrorCode")]
    pub error_code: Option<String>,
}

/// Options of `verifyApiKey` and `hashApiKey`.
#[napi(object, object_to_js = false)]
#[expect(
    dead_code,
    reason = "declared for index.d.ts only: the binding reads the options one by one"
)]
pub struct ApiKeySecretOptions {
    /// Server secret of the stored HMAC-SHA256 (as given to `generateApiKey`), at least 16 bytes. Required.
    pub secret: Either<String, Buffer>,
}

/// The server secret (a string or bytes), at least 16 bytes.
fn read_secret(v: &Unknown, name: &str) -> CallResult<Vec<u8>> {
    let secret = args::bytes(v, name, 4096)?;
    api_key::check_secret(&secret)
        .map_err(|_| CallError::out_of_range(name, "must be at least 16 bytes"))?;
    Ok(secret)
}

/// The options object of an API-key function (`type_name` in `callOptions`, unknown names
/// refused); anything else is a `TypeError` saying `wanted`.
fn options_object<'a>(
    options: &Option<Unknown<'a>>,
    type_name: &str,
    wanted: &str,
) -> CallResult<Object<'a>> {
    let wrong = || CallError::arg_type("options", wanted);
    // A Buffer is an object too, but in this place it is a secret, not options.
    let o = options
        .as_ref()
        .filter(|o| args::kind(o) == ValueType::Object && !o.is_typedarray().unwrap_or(false))
        .ok_or_else(wrong)?;
    // SAFETY: `o` is a live handle of the current call and an object.
    let o = unsafe { Object::from_napi_value(o.value().env, o.raw()) }.map_err(|_| wrong())?;
    args::known_options(&o, type_name, "options")?;
    Ok(o)
}

/// The required `options.secret`.
fn secret_option(o: &Object) -> CallResult<Vec<u8>> {
    let secret: Unknown = o
        .get_named_property("secret")
        .map_err(|_| CallError::arg_type("options.secret", "a string or Buffer"))?;
    if matches!(args::kind(&secret), ValueType::Undefined | ValueType::Null) {
        return Err(CallError::arg_type(
            "options.secret",
            "a string or Buffer of at least 16 bytes (it is required)",
        ));
    }
    read_secret(&secret, "options.secret")
}

/// `options.secret` of `verifyApiKey` / `hashApiKey`. A string or Buffer in place of the
/// options is a positional secret (`verifyApiKey(key, storedHash, secret)`, the form other API-key
/// libraries use): refused with a message naming this one, so such a call fails loudly instead
/// of checking the wrong thing.
fn read_secret_option(options: &Option<Unknown>, call: &str) -> CallResult<Vec<u8>> {
    let wanted =
        format!("an object with a secret: {call} (the secret is an option, not an argument)");
    secret_option(&options_object(options, "ApiKeySecretOptions", &wanted)?)
}

/// The presented key as text, or `None` when it cannot be a key (not a string, or longer than
/// any key): the caller turns that into its "no such key" result.
fn read_presented_key(v: &Option<Unknown>) -> Option<String> {
    let v = v.as_ref()?;
    if args::kind(v) != ValueType::String {
        return None;
    }
    args::string(v, "key", MAX_KEY_LEN).ok()
}

/// Creates a random API key and its HMAC-SHA256 for storage. Throws when `secret` is missing or
/// shorter than 16 bytes, or when `prefix` is invalid.
#[napi(catch_unwind, ts_args_type = "options: GenerateApiKeyOptions")]
pub fn generate_api_key(env: Env, options: Option<Unknown<'_>>) -> napi::Result<GeneratedApiKey> {
    to_js(
        &env,
        (|| {
            let o = options_object(&options, "GenerateApiKeyOptions", "an object with a secret")?;
            let secret = secret_option(&o)?;
            let prefix: Option<Unknown> = o
                .get_named_property("prefix")
                .map_err(|_| CallError::not_string("options.prefix"))?;
            let prefix = match &prefix {
                Some(p) if !args::is_nullish(&prefix) => args::string(p, "options.prefix", 64)?,
                _ => "auth1_pk".to_string(),
            };
            api_key::check_prefix(&prefix).map_err(|_| {
                CallError::arg_value(
                    "options.prefix",
                    "must be lowercase [a-z0-9] segments joined by '_', starting with a letter, at most 32 chars",
                )
            })?;
            let g = api_key::generate(&prefix, &secret)?;
            Ok(GeneratedApiKey {
                key: g.key,
                hash: g.hash,
                prefix,
                last_four: g.last_four,
            })
        })(),
    )
}

/// Checks the presented `key` against the stored hash in constant time. The key is user input:
/// a missing, non-string, malformed key or a wrong checksum is `false`. A malformed
/// `storedHash`, a missing or short `options.secret` throws.
#[napi(
    catch_unwind,
    ts_args_type = "storedHash: string, key: string | null | undefined, options: ApiKeySecretOptions"
)]
pub fn verify_api_key(
    env: Env,
    stored_hash: Unknown<'_>,
    key: Option<Unknown<'_>>,
    options: Option<Unknown<'_>>,
) -> napi::Result<bool> {
    to_js(
        &env,
        (|| {
            let stored =
                api_key::decode_stored_hash(&args::string(&stored_hash, "storedHash", 1024)?)?;
            let secret = read_secret_option(&options, "verifyApiKey(storedHash, key, { secret })")?;
            match read_presented_key(&key) {
                Some(key) => api_key::verify(&key, &stored, &secret),
                None => Ok(false),
            }
        })(),
    )
}

/// The value to find a presented key's row by: the same hex HMAC-SHA256 that `generateApiKey`
/// returned as `hash` (deterministic), or `null` when the key is malformed or fails its
/// checksum (no row can match; skip the query). Store `hash` in a unique column and look keys up
/// with `WHERE key_hash = hashApiKey(key, { secret })`. Throws only for a missing or short
/// `options.secret`.
#[napi(
    catch_unwind,
    ts_args_type = "key: string | null | undefined, options: ApiKeySecretOptions",
    ts_return_type = "string | null"
)]
pub fn hash_api_key(
    env: Env,
    key: Option<Unknown<'_>>,
    options: Option<Unknown<'_>>,
) -> napi::Result<Option<String>> {
    to_js(
        &env,
        (|| {
            let secret = read_secret_option(&options, "hashApiKey(key, { secret })")?;
            match read_presented_key(&key) {
                Some(key) => api_key::lookup_hash(&key, &secret),
                None => Ok(None),
            }
        })(),
    )
}

/// Checks a key's format and checksum without any lookup (e.g. before hitting the database).
/// The key is user input: anything that is not a well-formed key string, including a missing
/// value or a non-string, is `{ valid: false, error: 'Malformed API key', errorCode: 'malformed' }`.
#[napi(
    catch_unwind,
    ts_args_type = "key: string | null | undefined",
    ts_return_type = "ParsedApiKey & ({ valid: true; prefix: string; error?: undefined; errorCode?: undefined } | { valid: false; prefix?: undefined; error: NonNullable<ParsedApiKey['error']>; errorCode: ApiKeyErrorCode })"
)]
pub fn parse_api_key(key: Option<Unknown<'_>>) -> ParsedApiKey {
    let parsed = read_presented_key(&key)
        .ok_or(api_key::KeyProblem::Malformed)
        .and_then(|k| api_key::parse(&k).map(str::to_string));
    match parsed {
        Ok(prefix) => ParsedApiKey {
            valid: true,
            prefix: Some(prefix),
            error: None,
            error_code: None,
        },
        Err(p) => ParsedApiKey {
            valid: false,
            prefix: None,
            error: Some(p.message().to_string()),
            error_code: Some(p.code().to_string()),
        },
    }
}
