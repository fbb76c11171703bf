//! JS wrappers of API keys (rules in `helpers::api_key`).
//!
//! The presented key is user input (a header): a missing, non-string or oversized key is a
//! result (`false`, `null`, `{ valid: false, error: 'malformed' }`), never a throw. The secret,
//! the stored hash and the options come from the application: mistakes there throw.

use napi::bindgen_prelude::{Buffer, Either, FromNapiValue, JsObjectValue, Object, Unknown};
use napi::{Env, JsValue, ValueType};
use napi_derive::napi;

use crate::binding::args;
use crate::binding::js_error::{to_js, HelperError, HelperResult};
use crate::helpers::api_key::{self, MAX_KEY_LEN};

/// Input for `generateApiKey`.
#[napi(object, object_to_js = false)]
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

/// Result of `parseApiKey`.
#[napi(object)]
pub struct ParsedApiKey {
    /// True when the format and checksum are right (says nothing about whether the key exists).
    pub valid: bool,
    /// The prefix when valid.
    pub prefix: Option<String>,
    /// 'malformed' | 'bad_checksum' when not valid.
    #[napi(ts_type = "'malformed' | 'bad_checksum'")]
    pub error: Option<String>,
}

/// The server secret (a string or bytes), at least 16 bytes.
fn read_secret(v: &Unknown, name: &str) -> HelperResult<Vec<u8>> {
    let secret = args::bytes(v, name, 4096)?;
    api_key::check_secret(&secret)
        .map_err(|_| HelperError::out_of_range(name, "must be at least 16 bytes"))?;
    Ok(secret)
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
            let not_object = || HelperError::arg_type("options", "an object with a secret");
            let o = options
                .as_ref()
                .filter(|o| args::kind(o) == ValueType::Object)
                .ok_or_else(not_object)?;
            // SAFETY: `o` is a live handle of the current call and an object.
            let o = unsafe { Object::from_napi_value(o.value().env, o.raw()) }
                .map_err(|_| not_object())?;
            let secret: Unknown = o
                .get_named_property("secret")
                .map_err(|_| HelperError::arg_type("options.secret", "a string or Buffer"))?;
            if matches!(args::kind(&secret), ValueType::Undefined | ValueType::Null) {
                return Err(HelperError::arg_type(
                    "options.secret",
                    "a string or Buffer of at least 16 bytes (it is required)",
                ));
            }
            let secret = read_secret(&secret, "options.secret")?;
            let prefix: Option<Unknown> = o
                .get_named_property("prefix")
                .map_err(|_| HelperError::arg_type("options.prefix", "a string"))?;
            let prefix = match &prefix {
                Some(p) if !args::is_nullish(&prefix) => args::string(p, "options.prefix", 64)?,
                _ => "auth1_pk".to_string(),
            };
            api_key::check_prefix(&prefix).map_err(|_| {
                HelperError::arg_value(
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

/// Checks `key` against the stored hash in constant time. The key is user input: a missing,
/// non-string, malformed key or a wrong checksum is `false`. A malformed `storedHash` or a short
/// `secret` throws.
#[napi(
    catch_unwind,
    ts_args_type = "key: string | null | undefined, storedHash: string, secret: string | Buffer"
)]
pub fn verify_api_key(
    env: Env,
    key: Option<Unknown<'_>>,
    stored_hash: Unknown<'_>,
    secret: Unknown<'_>,
) -> napi::Result<bool> {
    to_js(
        &env,
        (|| {
            let stored =
                api_key::decode_stored_hash(&args::string(&stored_hash, "storedHash", 1024)?)?;
            let secret = read_secret(&secret, "secret")?;
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
/// with `WHERE key_hash = hashApiKey(key, secret)`. Throws only for a short `secret`.
#[napi(
    catch_unwind,
    ts_args_type = "key: string | null | undefined, secret: string | Buffer",
    ts_return_type = "string | null"
)]
pub fn hash_api_key(
    env: Env,
    key: Option<Unknown<'_>>,
    secret: Unknown<'_>,
) -> napi::Result<Option<String>> {
    to_js(
        &env,
        (|| {
            let secret = read_secret(&secret, "secret")?;
            match read_presented_key(&key) {
                Some(key) => api_key::lookup_hash(&key, &secret),
                None => Ok(None),
            }
        })(),
    )
}

/// Checks a key's format and checksum without any lookup (e.g. before hitting the database).
/// The key is user input: anything that is not a well-formed key string, including a missing
/// value or a non-string, is `{ valid: false, error: 'malformed' }`.
#[napi(
    catch_unwind,
    ts_args_type = "key: string | null | undefined",
    ts_return_type = "ParsedApiKey & ({ valid: true; prefix: string; error?: undefined } | { valid: false; prefix?: undefined; error: 'malformed' | 'bad_checksum' })"
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
        },
        Err(p) => ParsedApiKey {
            valid: false,
            prefix: None,
            error: Some(p.code().to_string()),
        },
    }
}
