//! Bearer token extraction from an `Authorization` header (RFC 6750 §2.1).

use crate::error::AuthError;

/// Returns the token of `Bearer <token>`.
///
/// The scheme is case-insensitive (RFC 7235 §2.1); one or more spaces separate it from the
/// token, which must be non-empty and within the size limit. Whether the token is a `b64token`
/// (RFC 6750) is settled by [`is_b64token`] only when decoding it fails: a JWT that decodes is
/// made of base64url and dots, which are b64token characters, so the hot path scans it once.
pub fn extract_bearer(header: Option<&[u8]>, max_token_bytes: usize) -> Result<&[u8], AuthError> {
    let header = match header {
        None | Some(b"") => return Err(AuthError::MissingAuthorization),
        Some(h) => h,
    };
    const SCHEME: &[u8] = b"bearer";
    if header.len() <= SCHEME.len()
        || !header[..SCHEME.len()].eq_ignore_ascii_case(SCHEME)
        || header[SCHEME.len()] != b' '
    {
        return Err(AuthError::InvalidAuthorizationFormat);
    }
    let rest = &header[SCHEME.len()..];
    let start = rest.iter().position(|&b| b != b' ').unwrap_or(rest.len());
    let token = &rest[start..];
    if token.is_empty() {
        return Err(AuthError::InvalidAuthorizationFormat);
    }
    if token.len() > max_token_bytes {
        return Err(AuthError::TokenTooLarge);
    }
    Ok(token)
}

/// `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`
pub fn is_b64token(token: &[u8]) -> bool {
    let body_end = token.len() - token.iter().rev().take_while(|&&b| b == b'=').count();
    // A table lookup per byte: this scan runs over every token on the hot path.
    body_end > 0
        && token[..body_end]
            .iter()
            .all(|&b| B64TOKEN_CHARS[b as usize])
}

static B64TOKEN_CHARS: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        table[i] =
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/');
        i += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 8192;

    /// Extraction plus the b64token check the authenticator applies when decoding fails.
    fn extract(h: &str) -> Result<&[u8], AuthError> {
        let token = extract_bearer(Some(h.as_bytes()), MAX)?;
        if is_b64token(token) {
            Ok(token)
        } else {
            Err(AuthError::InvalidAuthorizationFormat)
        }
    }

    #[test]
    fn accepts_bearer_in_any_case() {
        assert_eq!(extract("Bearer abc.def.ghi"), Ok(&b"abc.def.ghi"[..]));
        assert_eq!(extract("bearer abc"), Ok(&b"abc"[..]));
        assert_eq!(extract("BEARER abc"), Ok(&b"abc"[..]));
        assert_eq!(extract("Bearer    abc"), Ok(&b"abc"[..]));
    }

    #[test]
    fn missing_or_empty_header_is_missing() {
        assert_eq!(
            extract_bearer(None, MAX),
            Err(AuthError::MissingAuthorization)
        );
        assert_eq!(extract(""), Err(AuthError::MissingAuthorization));
    }

    #[test]
    fn rejects_other_schemes_and_junk() {
        for h in [
            "Basic dXNlcjpwYXNz",
            "Bearer",
            "Bearer ",
            "Bearer    ",
            "Bearerabc",
            "Bearer\tabc",
            "Token abc",
            " Bearer abc",
            "Bearer abc def",
            "Bearer abc ",
            "Bearer ab\u{0}c",
            "Bearer ab\nc",
            "Bearer ===",
            "Bearer a=b",
            "Bearer é",
        ] {
            assert_eq!(
                extract(h),
                Err(AuthError::InvalidAuthorizationFormat),
                "{h:?}"
            );
        }
    }

    #[test]
    fn rejects_oversized_token_before_scanning() {
        let header = format!("Bearer {}", "a".repeat(MAX + 1));
        assert_eq!(extract(&header), Err(AuthError::TokenTooLarge));
        let header = format!("Bearer {}", "a".repeat(MAX));
        assert!(extract(&header).is_ok());
    }

    #[test]
    fn allows_trailing_padding() {
        assert_eq!(extract("Bearer abc=="), Ok(&b"abc=="[..]));
    }
}
