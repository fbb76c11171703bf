//! The JS factories that assemble `AuthResult` and `TokenVerification` objects, as source
//! text compiled once per environment (`env_cache.rs`).
//!
//! Why a JS factory: an object literal built by JS runs through V8's inline caches and costs
//! tens of nanoseconds, while setting a dozen properties one by one through Node-API costs
//! about a microsecond, more than the whole JWT verification.

use crate::error::AuthError;
use crate::schema::schema;

/// `AuthResult.tenantSource` values, in the order the success factory indexes them (0 is
/// `undefined`); see `TenantId::source`.
pub const TENANT_SOURCES: [&str; 4] = ["token", "header", "host", "issuer"];

/// The JS expression of one result field on success (valid) and on failure (refused), from
/// the factories' parameters; `AuthResult` and `TokenVerification` share the names they have
/// in common. `None` for a field this build does not know (a test fails then).
fn field(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "authenticated" | "valid" => ("true", "false"),
        "userId" => ("userId", "undefined"),
        "email" => ("email", "undefined"),
        "role" => ("role", "undefined"),
        "tenantId" => ("tenantId", "undefined"),
        "tenantSource" => ("SOURCES[tenantSource]", "undefined"),
        // Space-delimited scope-tokens (src/jwt/validate.rs `granted_scopes`), else undefined
        // (no scope claim) or null (a claim of the wrong type).
        "scope" => ("scope", "undefined"),
        "jti" => ("jti", "undefined"),
        "expiresAtSec" => ("expiresAtSec", "undefined"),
        "requestId" => ("requestId", "requestId"),
        "rateLimitRemaining" => (
            "rateLimitRemaining",
            "index === RATE_LIMITED ? 0 : undefined",
        ),
        "rateLimitLimit" => ("rateLimitLimit", "rateLimitLimit"),
        "retryAfterMs" => ("0", "retryAfterMs"),
        "error" => ("undefined", "MESSAGES[index]"),
        "errorCode" => ("undefined", "CODES[index]"),
        "errorStatus" => ("undefined", "STATUSES[index]"),
        "dpopReplayKey" => ("dpopReplayKey", "undefined"),
        "dpopReplayUntilSec" => ("dpopReplayUntilSec", "undefined"),
        _ => return None,
    })
}

/// The fields a success holds only when a DPoP proof was admitted: the plain success factory
/// writes `undefined` for them, so a Bearer success pays no argument for them.
const DPOP_ONLY: [&str; 2] = ["dpopReplayKey", "dpopReplayUntilSec"];

/// The success and failure object literals for `names`, or the first unknown name; `dpop`:
/// the success of a DPoP request, else `DPOP_ONLY` fields are `undefined`.
fn literals<'a>(
    names: impl Iterator<Item = &'a str>,
    dpop: bool,
) -> Result<(String, String), String> {
    let mut ok = Vec::new();
    let mut err = Vec::new();
    for name in names {
        let (mut on_ok, on_err) = field(name).ok_or_else(|| name.to_owned())?;
        if !dpop && DPOP_ONLY.contains(&name) {
            on_ok = "undefined";
        }
        ok.push(format!("{name}: {on_ok}"));
        err.push(format!("{name}: {on_err}"));
    }
    Ok((
        format!("{{ {} }}", ok.join(", ")),
        format!("{{ {} }}", err.join(", ")),
    ))
}

/// The four factories; the failure ones map an [`AuthError`] index to its message, code and
/// status from tables embedded once, so no error string crosses the boundary per call.
/// `Err(field)` when the schema lists a result field this build cannot fill.
pub fn factory_source() -> Result<String, String> {
    let json = |items: Vec<String>| serde_json::to_string(&items).unwrap_or_default();
    let messages = json(
        AuthError::ALL
            .iter()
            .map(|e| e.message().to_owned())
            .collect(),
    );
    let codes = json(AuthError::ALL.iter().map(|e| e.code().to_owned()).collect());
    let statuses: Vec<_> = AuthError::ALL.iter().map(|e| e.status()).collect();
    let statuses = serde_json::to_string(&statuses).unwrap_or_default();
    let rate_limited = AuthError::ALL
        .iter()
        .position(|e| *e == AuthError::RateLimited)
        .unwrap_or(0);
    // Keys in the order `contract/results.json` lists them.
    let result_names = || schema().result.iter().map(|f| f.name.as_str());
    let (success, failure) = literals(result_names(), false)?;
    let (success_dpop, _) = literals(result_names(), true)?;
    let (verified, refused) =
        literals(schema().verification.iter().map(|f| f.name.as_str()), false)?;
    Ok(format!(
        "(function () {{\n\
         'use strict';\n\
         const MESSAGES = {messages}, CODES = {codes}, STATUSES = {statuses};\n\
         const SOURCES = [undefined, {sources}], RATE_LIMITED = {rate_limited};\n\
         return [\n\
         function authSuccess(userId, email, role, tenantId, tenantSource, requestId, rateLimitRemaining, rateLimitLimit, scope) {{\n\
           return {success};\n\
         }},\n\
         function authFailure(index, requestId, rateLimitLimit, retryAfterMs) {{\n\
           return {failure};\n\
         }},\n\
         function tokenVerified(userId, email, role, tenantId, jti, expiresAtSec) {{\n\
           return {verified};\n\
         }},\n\
         function tokenRefused(index) {{\n\
           return {refused};\n\
         }},\n\
         function authSuccessDpop(userId, email, role, tenantId, tenantSource, requestId, rateLimitRemaining, rateLimitLimit, scope, dpopReplayKey, dpopReplayUntilSec) {{\n\
           return {success_dpop};\n\
         }}];\n\
         }})()",
        sources = json(TENANT_SOURCES.iter().map(|s| s.to_string()).collect())
            .trim_matches(['[', ']']),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of the object literal returned by the factory named `name`.
    fn keys_of(source: &str, name: &str) -> Vec<String> {
        let start = source.find(&format!("function {name}(")).unwrap();
        let body = &source[start..];
        let open = body.find("return {").unwrap() + "return {".len();
        let close = open + body[open..].find("};").unwrap();
        body[open..close]
            .split(", ")
            .map(|kv| kv.split(':').next().unwrap().trim().to_owned())
            .filter(|k| !k.is_empty())
            .collect()
    }

    #[test]
    fn auth_result_factories_list_the_schema_fields_in_order() {
        let source = factory_source().expect("every schema field has an expression");
        let wanted: Vec<String> = schema().result.iter().map(|f| f.name.clone()).collect();
        assert_eq!(keys_of(&source, "authSuccess"), wanted);
        assert_eq!(keys_of(&source, "authFailure"), wanted);
        assert_eq!(keys_of(&source, "authSuccessDpop"), wanted);
    }

    #[test]
    fn only_the_dpop_success_fills_the_replay_fields() {
        let source = factory_source().unwrap();
        let plain = &source[source.find("function authSuccess(").unwrap()..];
        let plain = &plain[..plain.find("};").unwrap()];
        assert!(plain.contains("dpopReplayKey: undefined"), "{plain}");
        let dpop = &source[source.find("function authSuccessDpop(").unwrap()..];
        assert!(dpop.contains("dpopReplayKey: dpopReplayKey"), "{dpop}");
    }

    #[test]
    fn verification_factories_list_the_same_fields() {
        let source = factory_source().unwrap();
        let wanted: Vec<String> = schema()
            .verification
            .iter()
            .map(|f| f.name.clone())
            .collect();
        assert_eq!(keys_of(&source, "tokenVerified"), wanted);
        assert_eq!(keys_of(&source, "tokenRefused"), wanted);
    }

    #[test]
    fn tenant_sources_match_the_core() {
        use crate::authenticator::TenantId;
        let claim = TenantId::Claim("t".into());
        let header = TenantId::Header(b"t");
        assert_eq!(claim.source(), Some(TENANT_SOURCES[0]));
        assert_eq!(header.source(), Some(TENANT_SOURCES[1]));
        assert_eq!(TenantId::None.source(), None);
        let doc = &schema()
            .result
            .iter()
            .find(|f| f.name == "tenantSource")
            .unwrap()
            .ty;
        for s in TENANT_SOURCES {
            assert!(doc.contains(&format!("'{s}'")), "{doc}");
        }
    }
}
