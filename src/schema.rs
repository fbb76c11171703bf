//! `contract/options.json`, embedded: the one description of the Authenticator options (names, kinds,
//! defaults, bounds) and of the `AuthResult` fields in order. The JS engine requires the same
//! file; `config.rs` validates options from it and the binding builds results from it.

use serde::Deserialize;
use std::sync::OnceLock;

/// The schema text, compiled into the binary.
pub const SCHEMA_JSON: &str = include_str!("../contract/options.json");
/// The result shapes (`AuthResult`, `TokenVerification`), compiled into the binary.
pub const RESULTS_JSON: &str = include_str!("../contract/results.json");

#[derive(Debug, Deserialize)]
pub struct Schema {
    pub options: Vec<OptionSpec>,
    #[serde(rename = "callOptions")]
    pub call_options: Vec<CallOptions>,
    /// The `AuthResult` fields in order (contract/results.json).
    #[serde(skip)]
    pub result: Vec<ResultField>,
    /// The `TokenVerification` fields in order (contract/results.json).
    #[serde(skip)]
    pub verification: Vec<ResultField>,
    /// Options renamed before 1.0, in every bag: the old name still works, with a warning.
    #[serde(default)]
    pub renamed: Vec<Renamed>,
}

/// contract/results.json.
#[derive(Debug, Deserialize)]
struct Results {
    #[serde(rename = "AuthResult")]
    auth_result: Vec<ResultField>,
    #[serde(rename = "TokenVerification")]
    token_verification: Vec<ResultField>,
}

/// A renamed option: `name` is read as `use_name`; giving both is a type error. Its one-time
/// `DeprecationWarning` (`code` in the JSON) is the package's, for both engines
/// (base/deprecation.js): the core only reads the old name.
#[derive(Debug, Deserialize)]
pub struct Renamed {
    /// Which options object: `options` (the Authenticator config), a `callOptions` type, ….
    pub bag: String,
    pub name: String,
    #[serde(rename = "use")]
    pub use_name: String,
    /// For an old option whose value became one value of an enum (`dpopRequired` → `dpopMode`):
    /// the old value's JSON text → the new value. Read by base/deprecation.js only: the
    /// bags the core reads hold plain renames (pinned by a test below).
    #[cfg(test)]
    pub values: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Renamed {
    /// The type error when both names are given.
    pub fn both_message(&self, label: &str) -> String {
        crate::contract::messages::renamed_together(label, &self.name, &self.use_name)
    }
}

/// The names one options object of a helper or other call accepts (`callOptions`); any other
/// name is refused, as a misspelt config option is.
#[derive(Debug, Deserialize)]
pub struct CallOptions {
    /// The object's interface name in the `.d.ts` (`OtpOptions`).
    #[serde(rename = "type")]
    pub type_name: String,
    pub names: Vec<String>,
}

/// One Authenticator option.
#[derive(Debug, Deserialize)]
pub struct OptionSpec {
    pub name: String,
    pub kind: OptionKind,
    #[serde(default)]
    pub required: bool,
    /// `None` for a JSON `null` (no default: the option is off or the system clock is used).
    #[serde(default)]
    pub default: Option<serde_json::Value>,
    /// Inclusive bounds of numeric options.
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The value must exceed `min` rather than reach it.
    #[serde(default, rename = "exclusiveMin")]
    pub exclusive_min: bool,
}

/// What an option accepts from JS.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum OptionKind {
    /// A string (UTF-8) or a Buffer.
    Secret,
    /// A string or an array of strings.
    StringList,
    Number,
    Integer,
    Boolean,
    /// A DNS name.
    Domain,
    /// Verification keys: an array of `{ kid?, alg, key }` with raw key material (the package
    /// entry point turns PEM / JWK / `KeyObject` into it, `base/keys/normalize.js`).
    KeySet,
    /// The `signingKey` option: one `{ kid, alg, key }` with `key` the PKCS#8 DER of the private
    /// key (the package entry point exports it with node:crypto, `base/keys/signing-key.js`), handed
    /// over as a one-item array.
    SigningKey,
    /// The trusted-issuer registry (`issuers`, src/issuers.rs): an array of
    /// `{ issuer, keys?, audience?, algorithms?, tenant? }`.
    IssuerList,
}

/// One `AuthResult` or `TokenVerification` field, in the order results list their keys.
#[derive(Debug, Deserialize)]
pub struct ResultField {
    pub name: String,
    /// Its TypeScript type (a test checks the tenant sources against it).
    #[cfg(test)]
    #[serde(rename = "type")]
    pub ty: String,
}

/// The parsed schema. The file is embedded at compile time and parsed by the tests below, so
/// a malformed schema fails `cargo test` before it can reach a build.
pub fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut schema: Schema = serde_json::from_str(SCHEMA_JSON)
            .expect("contract/options.json parses (pinned by schema tests)");
        let results: Results = serde_json::from_str(RESULTS_JSON)
            .expect("contract/results.json parses (pinned by schema tests)");
        schema.result = results.auth_result;
        schema.verification = results.token_verification;
        schema
    })
}

impl Schema {
    pub fn option(&self, name: &str) -> Option<&OptionSpec> {
        self.options.iter().find(|o| o.name == name)
    }

    /// `name` as a deprecated name in the options object `bag`.
    pub fn renamed(&self, bag: &str, name: &str) -> Option<&Renamed> {
        self.renamed.iter().find(|r| r.bag == bag && r.name == name)
    }

    /// The names the options object `type_name` accepts. Every caller passes a name the
    /// schema lists (pinned by `every_call_options_type_read_natively_is_in_the_schema`).
    pub fn call_option_names(&self, type_name: &str) -> &[String] {
        self.call_options
            .iter()
            .find(|c| c.type_name == type_name)
            .map_or(&[], |c| c.names.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_parses_and_names_are_unique() {
        let s = schema();
        assert!(!s.options.is_empty() && !s.result.is_empty());
        let mut names: Vec<&str> = s.options.iter().map(|o| o.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), s.options.len(), "duplicate option name");
        let mut fields: Vec<&str> = s.result.iter().map(|f| f.name.as_str()).collect();
        fields.sort_unstable();
        fields.dedup();
        assert_eq!(fields.len(), s.result.len(), "duplicate result field");
    }

    #[test]
    fn every_call_options_type_read_natively_is_in_the_schema() {
        // The binding's readers name these types (src/binding/args.rs `known_options`).
        for type_name in [
            "PasswordOptions",
            "VerifyPasswordOptions",
            "OtpOptions",
            "TotpUriInput",
            "OtpStoreOptions",
            "GenerateApiKeyOptions",
            "ApiKeySecretOptions",
            "SanitizeHtmlOptions",
            "SanitizeFilenameOptions",
            "RateLimiterOptions",
            "ResolveTenantOptions",
            "RevokeTokenOptions",
            "RevokeSubjectOptions",
            "SetKeysOptions",
        ] {
            assert!(
                !schema().call_option_names(type_name).is_empty(),
                "{type_name} missing from callOptions"
            );
        }
    }

    #[test]
    fn renamed_entries_the_core_reads_are_plain_renames() {
        // src/config.rs reads the bag `options`, the binding the callOptions types: neither maps
        // values, so an entry with `values` there would be read as a plain rename.
        let s = schema();
        for r in &s.renamed {
            let read_here =
                r.bag == "options" || s.call_options.iter().any(|c| c.type_name == r.bag);
            assert!(
                !(read_here && r.values.is_some()),
                "renamed {}.{} maps values, which only the JS reader does",
                r.bag,
                r.name
            );
        }
        assert!(s.renamed.iter().any(|r| r.values.is_some()));
    }

    #[test]
    fn numeric_options_have_ordered_bounds_and_defaults_within_them() {
        for o in &schema().options {
            let numeric = matches!(o.kind, OptionKind::Number | OptionKind::Integer);
            assert_eq!(numeric, o.min.is_some() && o.max.is_some(), "{}", o.name);
            if let (Some(min), Some(max)) = (o.min, o.max) {
                assert!(min < max, "{}", o.name);
                if let Some(d) = o.default.as_ref().and_then(|d| d.as_f64()) {
                    assert!(d >= min && d <= max, "{} default out of bounds", o.name);
                    assert!(!(o.exclusive_min && d == min), "{}", o.name);
                }
            }
            assert!(!(o.required && o.default.is_some()), "{}", o.name);
        }
    }
}
