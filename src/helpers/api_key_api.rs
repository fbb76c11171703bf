//! JS bindings for API keys.

use napi::bindgen_prelude::{Buffer, Either, Unknown};
use napi::Env;
use napi_derive::napi;

use super::api_key::{self, MAX_KEY_LEN};
use super::args;
use super::errors::{to_js, HelperError, HelperResult};

/// Input for `generateApiKey`.
#[napi(object)]
#[derive(Default)]
pub struct GenerateApiKeyOptions {
    /// Key prefix, e.g. 'auth1_pk' (lowercase [a-z0-9] segments joined by '_', ≤ 32 chars).
    /// Default 'auth1_pk'.
    pub prefix: Option<String>,
    /// Server secret for the stored HMAC-SHA256, at least 16 bytes. Required.
    pub secret: Option<Either<String, Buffer>>,
}

/// A new API key. Show `key` to the user once; store only `hash` (and `prefix`/`lastFour` for display).
#[napi(object)]
pub struct GeneratedApiKey {
    /// The full key: `<prefix>_<32 base62 random chars><6 base62 checksum chars>`.
    pub key: String,
    /// Lowercase hex HMAC-SHA256(secret, key): what to store.
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
    pub error: Option<String>,
}

fn secret_of(v: &Option<Either<String, Buffer>>, name: &str) -> HelperResult<Vec<u8>> {
    let bytes = match v {
        None => {
            return Err(HelperError::arg_type(
                name,
                "a string or Buffer of at least 16 bytes",
            ))
        }
        Some(Either::A(s)) => s.as_bytes().to_vec(),
        Some(Either::B(b)) => b.to_vec(),
    };
    api_key::check_secret(&bytes)
        .map_err(|_| HelperError::out_of_range(name, "must be at least 16 bytes"))?;
    Ok(bytes)
}

/// Creates a random API key and its HMAC-SHA256 for storage. Throws when `secret` is missing or
/// shorter than 16 bytes, or when `prefix` is invalid.
#[napi(catch_unwind, ts_args_type = "options: GenerateApiKeyOptions")]
pub fn generate_api_key(env: Env, options: Option<Unknown<'_>>) -> napi::Result<GeneratedApiKey> {
    to_js(
        &env,
        (|| {
            if args::is_nullish(&options) {
                return Err(HelperError::arg_type("options", "an object with a secret"));
            }
            let o: GenerateApiKeyOptions = args::options(&options, "options")?;
            let secret = secret_of(&o.secret, "options.secret")?;
            let prefix = o.prefix.unwrap_or_else(|| "auth1_pk".to_string());
            api_key::check_prefix(&prefix).map_err(|_| HelperError::arg_value("options.prefix", "must be lowercase [a-z0-9] segments joined by '_', starting with a letter, at most 32 chars"))?;
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

/// Checks `key` against the stored hash in constant time. A malformed key or wrong checksum is
/// `false` (keys come from clients); a malformed `storedHash` or short `secret` throws.
#[napi(
    catch_unwind,
    ts_args_type = "key: string, storedHash: string, secret: string | Buffer"
)]
pub fn verify_api_key(
    env: Env,
    key: Unknown<'_>,
    stored_hash: Unknown<'_>,
    secret: Unknown<'_>,
) -> napi::Result<bool> {
    to_js(
        &env,
        (|| {
            let key = args::string(&key, "key", 64 << 10)?;
            let stored =
                api_key::decode_stored_hash(&args::string(&stored_hash, "storedHash", 1024)?)?;
            let secret = args::bytes(&secret, "secret", 4096)?;
            api_key::check_secret(&secret)?;
            api_key::verify(&key, &stored, &secret)
        })(),
    )
}

/// Checks a key's format and checksum without any lookup (e.g. before hitting the database).
#[napi(catch_unwind, ts_args_type = "key: string")]
pub fn parse_api_key(env: Env, key: Unknown<'_>) -> napi::Result<ParsedApiKey> {
    to_js(
        &env,
        (|| {
            let key = args::string(&key, "key", 64 << 10)?;
            if key.len() > MAX_KEY_LEN {
                return Ok(ParsedApiKey {
                    valid: false,
                    prefix: None,
                    error: Some("malformed".into()),
                });
            }
            Ok(match api_key::parse(&key) {
                Ok(prefix) => ParsedApiKey {
                    valid: true,
                    prefix: Some(prefix.to_string()),
                    error: None,
                },
                Err(p) => ParsedApiKey {
                    valid: false,
                    prefix: None,
                    error: Some(p.code().to_string()),
                },
            })
        })(),
    )
}
