//! Every way authentication can fail, with its stable code, HTTP status and message: derived at
//! build time from `contract/error-codes.json`, the table the JS engine reads too.

// The enum, `AuthError::ALL` and `TABLE`, written by build.rs from contract/error-codes.json:
// adding a code there adds a variant here (and every exhaustive `match` on it stops compiling
// until it is handled). Two codes worth a note for Rust readers:
// - `RateLimitPending`: a shared limit (a store is attached) holds no lease for this identity
//   yet; the middleware fetches one and authenticates again (docs/scale-out.md).
// - `KeysUnavailable`: a remote key set (auth-shield/jwks) has no keys in force; never produced
//   by the core: the middleware answers it in place of a key failure (docs/jwks.md).
// - `DpopRequired`: a Bearer request on a route whose middleware has `dpopRequired`; never
//   produced by the core either (lib/http/dpop.js).
// - `DpopReplayUnavailable`: the shared DPoP replay store (auth-shield/redis) failed or was
//   late; the middleware refuses rather than risk a replay (lib/store/dpop-replay.js).
include!(concat!(env!("OUT_DIR"), "/auth_error.rs"));

impl AuthError {
    /// Stable machine-readable code (`AuthResult.errorCode`).
    pub const fn code(self) -> &'static str {
        TABLE[self as usize].0
    }

    /// HTTP status the middleware answers with (`AuthResult.errorStatus`).
    pub const fn status(self) -> u16 {
        TABLE[self as usize].1
    }

    /// Human-readable message (`AuthResult.error`), safe to show to clients.
    pub const fn message(self) -> &'static str {
        TABLE[self as usize].2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_derived_from_the_contract_in_its_order() {
        let text = include_str!("../contract/error-codes.json");
        let table: serde_json::Value = serde_json::from_str(text).unwrap();
        let table = table.as_object().unwrap();
        assert_eq!(table.len(), AuthError::ALL.len());
        let codes: Vec<_> = AuthError::ALL.iter().map(|e| e.code()).collect();
        let mut sorted = codes.clone();
        sorted.sort_unstable();
        let mut in_file: Vec<_> = table.keys().map(String::as_str).collect();
        in_file.sort_unstable();
        assert_eq!(sorted, in_file);
        let at = |code: &str| text.find(&format!("\"{code}\": {{")).unwrap();
        assert!(
            codes.windows(2).all(|w| at(w[0]) < at(w[1])),
            "variants follow the file"
        );
        for (i, &err) in AuthError::ALL.iter().enumerate() {
            assert_eq!(err as usize, i, "{}", err.code());
            let entry = &table[err.code()];
            assert_eq!(entry["status"], err.status(), "{}", err.code());
            assert_eq!(entry["message"], err.message(), "{}", err.code());
        }
    }

    #[test]
    fn codes_are_unique() {
        let mut codes: Vec<_> = AuthError::ALL.iter().map(|e| e.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), AuthError::ALL.len());
    }
}
