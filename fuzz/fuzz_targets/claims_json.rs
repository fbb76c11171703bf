//! Differential: the JWT claims reader against serde_json on arbitrary bytes.
//!
//! Whatever serde_json reads as an object, the claims reader must accept (unless a known claim
//! repeats) with the same value for every known claim; whatever it accepts must be JSON that
//! serde_json reads too, except where serde_json is stricter than the JSON grammar in members
//! the reader only skips: nesting depth, numbers out of f64 range. A lone surrogate escape is
//! refused by both, wherever it stands (the reader refuses it in skipped members too, so both
//! engines agree).
#![no_main]

use auth_shield::internals::{Claim, Claims};
use libfuzzer_sys::fuzz_target;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

const KNOWN: [&str; 11] = [
    "sub",
    "exp",
    "nbf",
    "iat",
    "iss",
    "aud",
    "jti",
    "email",
    "role",
    "tenant_id",
    "type",
];

/// The other claims the reader takes once (src/jwt/claims.rs `slot`, and `cnf`): with KNOWN, a
/// payload repeating any of them is refused, whichever copy another JSON parser would keep. Their
/// values are compared by their own targets (scope_claims, cnf_binding).
const READ_ONCE_TOO: [&str; 7] = ["scope", "scp", "client_id", "permissions", "acr", "auth_time", "cnf"];

/// Every key of a JSON object in order, duplicates kept.
struct Keys(Vec<String>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Keys;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Keys, M::Error> {
                let mut keys = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(k);
                }
                Ok(Keys(keys))
            }
        }
        d.deserialize_map(V)
    }
}

fn claim<'c, 'a>(claims: &'c Claims<'a>, name: &str) -> &'c Claim<'a> {
    match name {
        "sub" => &claims.sub,
        "exp" => &claims.exp,
        "nbf" => &claims.nbf,
        "iat" => &claims.iat,
        "iss" => &claims.iss,
        "aud" => &claims.aud,
        "jti" => &claims.jti,
        "email" => &claims.email,
        "role" => &claims.role,
        "tenant_id" => &claims.tenant_id,
        _ => &claims.token_type,
    }
}

fn same(ours: &Claim<'_>, reference: Option<&Value>) -> bool {
    match (ours, reference) {
        (Claim::Absent, None) => true,
        (Claim::Str(a), Some(Value::String(b))) => a == b,
        (Claim::Num(a), Some(Value::Number(b))) => Some(*a) == b.as_f64(),
        (Claim::StrList(a), Some(Value::Array(b))) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| y.as_str() == Some(x))
        }
        (Claim::Other, Some(Value::Array(b))) => !b.iter().all(Value::is_string),
        (Claim::Other, Some(Value::Null | Value::Bool(_) | Value::Object(_))) => true,
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let ours = Claims::parse(data);
    match serde_json::from_slice::<Value>(data) {
        Ok(Value::Object(map)) => {
            let Keys(keys) = serde_json::from_slice(data).expect("an object has keys");
            let repeated = KNOWN
                .iter()
                .chain(READ_ONCE_TOO.iter())
                .any(|k| keys.iter().filter(|key| key == k).count() > 1);
            if repeated {
                assert!(ours.is_none(), "a repeated known claim was accepted");
                return;
            }
            let ours = ours.expect("a JSON object serde_json reads was refused");
            for name in KNOWN {
                let c = claim(&ours, name);
                assert!(
                    same(c, map.get(name)),
                    "{name}: ours {c:?}, serde_json {:?}",
                    map.get(name)
                );
            }
        }
        Ok(other) => assert!(ours.is_none(), "a non-object was accepted: {other:?}"),
        Err(e) => {
            if ours.is_some() {
                let why = e.to_string();
                assert!(
                    ["recursion limit", "number out of range"]
                        .iter()
                        .any(|limit| why.contains(limit)),
                    "accepted what serde_json refuses: {why}"
                );
            }
        }
    }
});
