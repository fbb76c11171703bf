//! Every way authentication can fail, with its stable code, HTTP status and message in one place.
//! The JS reference engine reads the same table from `contract/error-codes.json`; a test keeps them equal.

/// An authentication failure. The order of variants is the order checks run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthError {
    MissingAuthorization,
    InvalidAuthorizationFormat,
    TokenTooLarge,
    MalformedToken,
    UnsupportedAlgorithm,
    UnknownKey,
    InvalidSignature,
    InvalidClaims,
    TokenNotYetValid,
    TokenExpired,
    MissingExpiration,
    InvalidAudience,
    InvalidIssuer,
    MissingSubject,
    WrongTokenType,
    TokenRevoked,
    RevocationUnavailable,
    InvalidTenant,
    TenantMismatch,
    RateLimited,
    /// A shared limit (a store is attached) holds no lease for this identity yet: the
    /// middleware fetches one and authenticates again; see docs/scale-out.md.
    RateLimitPending,
    /// A remote key set (auth-shield/jwks) has no keys in force: none fetched yet, or the last
    /// good document is past its maximum age. Never produced by the core: the middleware
    /// answers it in place of a key failure; see docs/jwks.md.
    KeysUnavailable,
}

impl AuthError {
    pub const ALL: &[AuthError] = &[
        AuthError::MissingAuthorization,
        AuthError::InvalidAuthorizationFormat,
        AuthError::TokenTooLarge,
        AuthError::MalformedToken,
        AuthError::UnsupportedAlgorithm,
        AuthError::UnknownKey,
        AuthError::InvalidSignature,
        AuthError::InvalidClaims,
        AuthError::TokenNotYetValid,
        AuthError::TokenExpired,
        AuthError::MissingExpiration,
        AuthError::InvalidAudience,
        AuthError::InvalidIssuer,
        AuthError::MissingSubject,
        AuthError::WrongTokenType,
        AuthError::TokenRevoked,
        AuthError::RevocationUnavailable,
        AuthError::InvalidTenant,
        AuthError::TenantMismatch,
        AuthError::RateLimited,
        AuthError::RateLimitPending,
        AuthError::KeysUnavailable,
    ];

    /// Stable machine-readable code (`AuthResult.errorCode`).
    pub const fn code(self) -> &'static str {
        match self {
            AuthError::MissingAuthorization => "missing_authorization",
            AuthError::InvalidAuthorizationFormat => "invalid_authorization_format",
            AuthError::TokenTooLarge => "token_too_large",
            AuthError::MalformedToken => "malformed_token",
            AuthError::UnsupportedAlgorithm => "unsupported_algorithm",
            AuthError::UnknownKey => "unknown_key",
            AuthError::InvalidSignature => "invalid_signature",
            AuthError::InvalidClaims => "invalid_claims",
            AuthError::TokenNotYetValid => "token_not_yet_valid",
            AuthError::TokenExpired => "token_expired",
            AuthError::MissingExpiration => "missing_expiration",
            AuthError::InvalidAudience => "invalid_audience",
            AuthError::InvalidIssuer => "invalid_issuer",
            AuthError::MissingSubject => "missing_subject",
            AuthError::WrongTokenType => "wrong_token_type",
            AuthError::TokenRevoked => "token_revoked",
            AuthError::RevocationUnavailable => "revocation_unavailable",
            AuthError::InvalidTenant => "invalid_tenant",
            AuthError::TenantMismatch => "tenant_mismatch",
            AuthError::RateLimited => "rate_limited",
            AuthError::RateLimitPending => "rate_limit_pending",
            AuthError::KeysUnavailable => "keys_unavailable",
        }
    }

    /// HTTP status the middleware answers with (`AuthResult.errorStatus`).
    pub const fn status(self) -> u16 {
        match self {
            AuthError::InvalidTenant => 400,
            AuthError::TenantMismatch => 403,
            AuthError::RateLimited => 429,
            AuthError::RateLimitPending => 503,
            AuthError::RevocationUnavailable => 503,
            AuthError::KeysUnavailable => 503,
            _ => 401,
        }
    }

    /// Human-readable message (`AuthResult.error`), safe to show to clients.
    pub const fn message(self) -> &'static str {
        match self {
            AuthError::MissingAuthorization => "No Authorization header provided",
            AuthError::InvalidAuthorizationFormat => "Invalid Authorization header format",
            AuthError::TokenTooLarge => "Token exceeds the maximum allowed size",
            AuthError::MalformedToken => "Malformed token",
            AuthError::UnsupportedAlgorithm => "Unsupported token algorithm",
            AuthError::UnknownKey => "Token key id does not name a known key",
            AuthError::InvalidSignature => "Invalid token signature",
            AuthError::InvalidClaims => "Token claims have invalid types",
            AuthError::TokenNotYetValid => "Token is not yet valid",
            AuthError::TokenExpired => "Token has expired",
            AuthError::MissingExpiration => "Token has no expiration",
            AuthError::InvalidAudience => "Invalid token audience",
            AuthError::InvalidIssuer => "Invalid token issuer",
            AuthError::MissingSubject => "Token has no subject",
            AuthError::WrongTokenType => "Wrong token type",
            AuthError::TokenRevoked => "Token has been revoked",
            AuthError::RevocationUnavailable => "Revocation list is unavailable",
            AuthError::InvalidTenant => "Invalid tenant id",
            AuthError::TenantMismatch => "Token tenant does not match the requested tenant",
            AuthError::RateLimited => "Too many requests",
            AuthError::RateLimitPending => {
                "Rate limit credit is being fetched from the shared store; retry"
            }
            AuthError::KeysUnavailable => "The token signing keys are unavailable; retry",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_the_js_engine_table() {
        let table: serde_json::Value =
            serde_json::from_str(include_str!("../contract/error-codes.json")).unwrap();
        let table = table.as_object().unwrap();
        assert_eq!(table.len(), AuthError::ALL.len());
        for &err in AuthError::ALL {
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
