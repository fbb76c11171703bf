//! Option validation: a config as JS handed it over ([`RawConfig`]) checked against
//! `contract/options.json` and turned into [`Settings`]. Every problem names the option, as a type
//! error (wrong kind of value) or a range error (bad value); the binding throws them as
//! `TypeError` / `RangeError`. The JS engine applies the same schema in the same order
//! (unknown keys, then `allowShortSecret`, then the options in schema order), so a config one
//! engine refuses, the other refuses the same way.

use crate::contract::messages;
use crate::jwt::key_set::{read_keys, KeySpec};
use crate::raw_value::RawValue;
use crate::schema::{schema, OptionKind, OptionSpec};
use crate::secret::Secret;
use crate::settings::{AccessKeys, Setting, Settings, MIN_SECRET_BYTES};
use crate::tenant::normalize_domain;

// A refused config is an `ArgError`: an unknown option or a wrong kind (`Type`), a bad value
// (`Range`).
use crate::call_error::ArgError;

/// Every enumerable key of a config object with its value, in the object's key order.
#[derive(Debug, Default)]
pub struct RawConfig {
    entries: Vec<(String, RawValue)>,
}

impl RawConfig {
    pub fn new() -> Self {
        RawConfig::default()
    }

    pub fn push(&mut self, name: String, value: RawValue) {
        self.entries.push((name, value));
    }

    #[cfg(any(test, feature = "internals"))]
    pub fn with(mut self, name: &str, value: impl Into<RawValue>) -> Self {
        self.push(name.to_owned(), value.into());
        self
    }

    /// Renamed options (`renamed` in the schema, bag `options`): an old name's value is read
    /// under its new name; both names with a value is a type error.
    fn rename_deprecated(&mut self) -> Checked<()> {
        for r in schema().renamed.iter().filter(|r| r.bag == "options") {
            let given = |entries: &[(String, RawValue)], name: &str| {
                entries
                    .iter()
                    .any(|(n, v)| n == name && !matches!(v, RawValue::Absent))
            };
            if !self.entries.iter().any(|(n, _)| *n == r.name) {
                continue;
            }
            if !given(&self.entries, &r.name) {
                self.entries.retain(|(n, _)| *n != r.name);
            } else if given(&self.entries, &r.use_name) {
                return Err(ArgError::Type(r.both_message("config")));
            } else {
                self.entries.retain(|(n, _)| *n != r.use_name);
                for entry in self.entries.iter_mut().filter(|(n, _)| *n == r.name) {
                    entry.0.clone_from(&r.use_name);
                }
            }
        }
        Ok(())
    }

    /// Moves a value out (secrets are not copied); `None` when absent, null or undefined.
    fn take(&mut self, name: &str) -> Option<RawValue> {
        let slot = self.entries.iter_mut().find(|(n, _)| n == name)?;
        match std::mem::replace(&mut slot.1, RawValue::Absent) {
            RawValue::Absent => None,
            value => Some(value),
        }
    }
}

type Checked<T> = Result<T, ArgError>;

/// Checks `raw` against the schema and builds the settings; see the module doc for the order.
pub fn validate(mut raw: RawConfig) -> Checked<Settings> {
    let schema = schema();
    raw.rename_deprecated()?;
    // A misspelt option (say `acessSecret`) must not silently fall back to a default.
    if let Some((name, _)) = raw.entries.iter().find(|(n, _)| schema.option(n).is_none()) {
        return Err(ArgError::Type(crate::contract::messages::unknown_option(
            &format!("config.{name}"),
        )));
    }
    // Read first: it decides how short a secret may be.
    let allow_short = match raw.take("allowShortSecret") {
        Some(v) => read_bool(v, "allowShortSecret")?,
        None => false,
    };
    let mut given = Vec::with_capacity(schema.options.len());
    for spec in schema
        .options
        .iter()
        .filter(|o| o.name != "allowShortSecret")
    {
        match raw.take(&spec.name) {
            Some(value) => given.push((spec, check(spec, value, allow_short)?)),
            None if spec.required => {
                return Err(ArgError::Type(format!(
                    "config.{} is required ({})",
                    spec.name,
                    expected(spec.kind)
                )))
            }
            None => {}
        }
    }
    let take = |given: &mut Vec<(&OptionSpec, Setting)>, name: &str| {
        let i = given.iter().position(|(spec, _)| spec.name == name)?;
        Some(given.remove(i).1)
    };
    let access_secret = match take(&mut given, "accessSecret") {
        Some(Setting::Secret(s)) => Some(s),
        Some(_) => return Err(internal("accessSecret")),
        None => None,
    };
    let keys = match take(&mut given, "keys") {
        Some(Setting::Keys(k)) => Some(k),
        Some(_) => return Err(internal("keys")),
        None => None,
    };
    let signs = given.iter().any(|(spec, _)| spec.name == "signingKey");
    let trusted = given.iter().any(|(spec, _)| spec.name == "issuers");
    if trusted {
        // A key of the config's own would verify tokens of every issuer: no issuer-to-key
        // binding left. And `issuer` would be a second list of trusted issuers.
        let other = if access_secret.is_some() {
            Some("accessSecret")
        } else if keys.is_some() {
            Some("keys")
        } else {
            ["signingKey", "issuer"]
                .into_iter()
                .find(|n| given.iter().any(|(spec, _)| spec.name == *n))
        };
        if let Some(other) = other {
            return Err(ArgError::Type(format!(
                "config.issuers and config.{other} cannot be combined: each issuer has its own keys and the list is the trusted issuers"
            )));
        }
    }
    let keys = match (access_secret, keys) {
        (None, None) if trusted => AccessKeys::Keys(Vec::new()),
        // The signing key's public half is the one verification key.
        (None, None) if signs => AccessKeys::Keys(Vec::new()),
        (Some(secret), None) => AccessKeys::Secret(secret),
        (None, Some(keys)) => AccessKeys::Keys(keys),
        (None, None) => return Err(ArgError::Type(messages::ACCESS_SECRET_REQUIRED.into())),
        // Two sources of HS256 keys would leave it unclear which one signs and which verify.
        (Some(_), Some(_)) => return Err(ArgError::Type(BOTH_KEY_SOURCES.into())),
    };
    if let (AccessKeys::Keys(specs), Some((_, Setting::SigningKey(own)))) = (
        &keys,
        given.iter().find(|(spec, _)| spec.name == "signingKey"),
    ) {
        check_signing_kid(specs, own.kid(), "config.keys")?;
    }
    let mut settings = Settings::unfilled(keys, allow_short);
    for spec in &schema.options {
        if let Some(default) = default_of(spec) {
            settings
                .set(&spec.name, default)
                .map_err(|_| internal(&spec.name))?;
        }
    }
    for (spec, value) in given {
        settings
            .set(&spec.name, value)
            .map_err(|_| internal(&spec.name))?;
    }
    // RFC 9068 §4: a resource server checks `iss` and `aud` of a JWT access token; the profile
    // without them would accept any issuer's tokens for any audience that share a key.
    // Trusted issuers name the issuers, and may each name their own audiences.
    let trusted = settings.trusted_issuers();
    let has_issuer = !settings.issuers().is_empty() || !trusted.is_empty();
    let has_audience = !settings.audiences().is_empty()
        || (!trusted.is_empty()
            && trusted
                .iter()
                .all(|i| i.audiences.as_ref().is_some_and(|a| !a.is_empty())));
    if settings.access_token_profile() && !(has_issuer && has_audience) {
        return Err(ArgError::Type(
            messages::PROFILE_NEEDS_ISSUER_AND_AUDIENCE.into(),
        ));
    }
    Ok(settings)
}

impl Settings {
    /// Validates `raw` against the schema (see the module doc). Defined here, not in
    /// settings.rs, so the settings stay plain data below the code that checks them.
    pub fn from_config(raw: RawConfig) -> Result<Settings, ArgError> {
        validate(raw)
    }

    /// The defaults with `access_secret`, which must pass the same checks as any config.
    #[cfg(test)]
    pub fn with_access_secret(access_secret: &[u8]) -> Result<Settings, ArgError> {
        validate(RawConfig::new().with("accessSecret", access_secret))
    }
}

/// The signing key's public half joins the verification keys under its kid: no other key may
/// take it, at construction or in `setKeys` (the JS engine's twin: js/config.js
/// `checkSigningKid`). `label` names the list (`config.keys`, `keys`).
pub fn check_signing_kid(specs: &[KeySpec], kid: &str, label: &str) -> Result<(), ArgError> {
    if specs.iter().any(|k| k.kid.as_deref() == Some(kid)) {
        return Err(ArgError::DuplicateKid(messages::signing_kid_in_keys(
            label, kid,
        )));
    }
    Ok(())
}

/// From the contract (contract/messages.json `bothKeySources`), as the JS engine's.
pub use crate::contract::messages::BOTH_KEY_SOURCES;

/// A schema option that the Rust settings do not know: caught by the tests, never by users.
fn internal(name: &str) -> ArgError {
    ArgError::Type(format!("config.{name} is not supported by this build"))
}

/// The schema default as a setting; `None` when the default is `null` (the option is off).
pub(crate) fn default_of(spec: &OptionSpec) -> Option<Setting> {
    let d = spec.default.as_ref()?;
    match spec.kind {
        OptionKind::Number | OptionKind::Integer => d.as_f64().map(Setting::Number),
        OptionKind::Boolean => d.as_bool().map(Setting::Bool),
        OptionKind::Domain => d.as_str().map(|s| Setting::Text(s.to_owned())),
        OptionKind::Secret
        | OptionKind::StringList
        | OptionKind::KeySet
        | OptionKind::SigningKey
        | OptionKind::IssuerList => None,
    }
}

/// `name` holds a value of another kind: the template of contract/messages.json the JS engine
/// fills for the same kind.
fn wrong_kind(kind: OptionKind, name: &str) -> ArgError {
    ArgError::Type(match kind {
        OptionKind::Secret => messages::must_be_secret(name),
        OptionKind::StringList => messages::must_be_string_list(name),
        OptionKind::Number | OptionKind::Integer => messages::must_be_number(name),
        OptionKind::Boolean => messages::must_be_boolean(name),
        OptionKind::Domain => messages::must_be_string(name),
        OptionKind::KeySet | OptionKind::SigningKey | OptionKind::IssuerList => {
            format!("{name} must be {}", expected(kind))
        }
    })
}

fn expected(kind: OptionKind) -> &'static str {
    match kind {
        OptionKind::Secret => "a string or Buffer",
        OptionKind::StringList => "a string or an array of strings",
        OptionKind::Number | OptionKind::Integer => "a number",
        OptionKind::Boolean => "a boolean",
        OptionKind::Domain => "a string",
        OptionKind::KeySet => "an array of keys",
        OptionKind::SigningKey => "an object { kid, alg, privateKey }",
        OptionKind::IssuerList => "an array of issuers",
    }
}

fn check(spec: &OptionSpec, value: RawValue, allow_short: bool) -> Checked<Setting> {
    let name = spec.name.as_str();
    let wrong_kind = || wrong_kind(spec.kind, &format!("config.{name}"));
    match (spec.kind, value) {
        (OptionKind::Secret, RawValue::Text(s)) => {
            secret(Secret::new(s.into_bytes()), name, allow_short)
        }
        (OptionKind::Secret, RawValue::Bytes(b)) => secret(b, name, allow_short),
        (OptionKind::StringList, RawValue::Text(s)) => string_list(vec![s], name),
        (OptionKind::StringList, RawValue::List(items)) => {
            let list = items
                .into_iter()
                .map(|item| match item {
                    RawValue::Text(s) => Ok(s),
                    _ => Err(wrong_kind()),
                })
                .collect::<Checked<Vec<_>>>()?;
            string_list(list, name)
        }
        (OptionKind::Number, RawValue::Number(n)) => number(spec, n),
        (OptionKind::Integer, RawValue::Number(n)) => {
            let n = number(spec, n)?;
            match n {
                Setting::Number(v) if v.fract() != 0.0 => Err(ArgError::Range(
                    crate::contract::messages::must_be_integer(&format!("config.{name}")),
                )),
                n => Ok(n),
            }
        }
        (OptionKind::Boolean, RawValue::Bool(b)) => Ok(Setting::Bool(b)),
        (OptionKind::Domain, RawValue::Text(s)) => domain(&s, name),
        (OptionKind::SigningKey, RawValue::List(items)) => {
            read_signing_key(items).map(|k| Setting::SigningKey(std::sync::Arc::new(k)))
        }
        (OptionKind::KeySet, RawValue::List(items)) => {
            read_keys(items, &format!("config.{name}"), allow_short).map(Setting::Keys)
        }
        (OptionKind::IssuerList, RawValue::List(items)) => {
            crate::issuers::read_issuers(items, allow_short).map(Setting::Issuers)
        }
        _ => Err(wrong_kind()),
    }
}

/// Reads the raw signing key (`[{ kid, alg, key }]`, `key` its PKCS#8 DER) into a ring key pair.
fn read_signing_key(items: Vec<RawValue>) -> Checked<crate::issue::signing_key::SigningKey> {
    let malformed =
        || ArgError::Type("config.signingKey must be an object { kid, alg, privateKey }".into());
    let mut items = items.into_iter();
    let (Some(RawValue::Fields(fields)), None) = (items.next(), items.next()) else {
        return Err(malformed());
    };
    let (mut kid, mut alg, mut key) = (None, None, None);
    for (field, value) in fields {
        match (field, value) {
            ("kid", RawValue::Text(t)) => kid = Some(t),
            ("alg", RawValue::Text(t)) => alg = Some(t),
            ("key", RawValue::Bytes(b)) => key = Some(b),
            _ => return Err(malformed()),
        }
    }
    let (Some(kid), Some(alg), Some(key)) = (kid, alg, key) else {
        return Err(malformed());
    };
    crate::issue::signing_key::SigningKey::from_pkcs8(&alg, &kid, key.expose())
}

fn read_bool(value: RawValue, name: &str) -> Checked<bool> {
    match value {
        RawValue::Bool(b) => Ok(b),
        _ => Err(ArgError::not_boolean(&format!("config.{name}"))),
    }
}

fn secret(bytes: Secret, name: &str, allow_short: bool) -> Checked<Setting> {
    if bytes.is_empty() {
        return Err(ArgError::Range(
            crate::contract::messages::must_not_be_empty(&format!("config.{name}")),
        ));
    }
    if bytes.len() < MIN_SECRET_BYTES && !allow_short {
        return Err(ArgError::Range(messages::secret_too_short(
            &format!("config.{name}"),
            MIN_SECRET_BYTES as f64,
        )));
    }
    // A public key's PEM or JWK as an HMAC secret lets anyone holding it sign tokens.
    crate::jwt::hmac_secret::check_hmac_secret(bytes.expose(), &format!("config.{name}"))?;
    Ok(Setting::Secret(bytes))
}

fn string_list(list: Vec<String>, name: &str) -> Checked<Setting> {
    if list.is_empty() || list.iter().any(String::is_empty) {
        return Err(ArgError::Range(
            crate::contract::messages::must_not_be_empty(&format!("config.{name}")),
        ));
    }
    // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). A space could never match
    // one token of a claim, and a quote or backslash would need escaping in the challenge.
    if (name == "requiredScope" || name == "requiredAcr") && !list.iter().all(|s| is_scope_token(s))
    {
        return Err(ArgError::Range(format!(
            "config.{name} must hold printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3 scope-tokens)"
        )));
    }
    // RFC 9449 §4.3 step 5: a proof's alg is asymmetric; `none` or a MAC would prove nothing.
    if name == "dpopAlgorithms" {
        if let Some(bad) = list.iter().find(|s| crate::dpop::proof_alg(s).is_none()) {
            let allowed = crate::dpop::DEFAULT_ALGS.map(|a| a.name()).join(", ");
            return Err(ArgError::Type(messages::dpop_algorithm_refused(
                bad, &allowed,
            )));
        }
    }
    Ok(Setting::List(list))
}

/// One RFC 6749 §3.3 scope-token (NQCHAR only; emptiness is checked apart).
pub(crate) fn is_scope_token(s: &str) -> bool {
    crate::jwt::validate::nqchars(s.as_bytes())
}

fn number(spec: &OptionSpec, n: f64) -> Checked<Setting> {
    let name = &spec.name;
    let min = spec.min.unwrap_or(f64::MIN);
    let max = spec.max.unwrap_or(f64::MAX);
    if !n.is_finite() || n < min || n > max {
        return Err(ArgError::Range(messages::number_out_of_range(
            &format!("config.{name}"),
            min,
            max,
            n,
        )));
    }
    if spec.exclusive_min && n == min {
        // The only exclusive bound today; its message predates the schema and is kept word
        // for word (the JS engine and users' tests compare it).
        let unit = if name == "rateLimitRefillPerSec" {
            " (tokens per second)"
        } else {
            ""
        };
        return Err(ArgError::Range(messages::number_not_above_min(
            &format!("config.{name}"),
            min,
            unit,
        )));
    }
    Ok(Setting::Number(n))
}

fn domain(text: &str, name: &str) -> Checked<Setting> {
    normalize_domain(text, &format!("config.{name}")).map(Setting::Text)
}

#[cfg(test)]
mod tests;
