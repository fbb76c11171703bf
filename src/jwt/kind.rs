//! The two kinds of token auth-shield issues and accepts.

/// Access tokens authenticate requests; refresh tokens only buy new access tokens. The kind
/// is written into the `type` claim so that one can never pass for the other, even under a
/// shared secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    Access,
    Refresh,
}

impl TokenKind {
    /// The `type` claim value.
    pub fn claim(self) -> &'static str {
        match self {
            TokenKind::Access => "access",
            TokenKind::Refresh => "refresh",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_have_distinct_type_claims() {
        assert_eq!(TokenKind::Access.claim(), "access");
        assert_eq!(TokenKind::Refresh.claim(), "refresh");
    }
}
