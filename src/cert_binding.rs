//! Certificate-bound access tokens (RFC 8705 §3): a token whose `cnf` claim carries
//! `x5t#S256` is usable only over a TLS connection authenticated with that certificate, so a
//! stolen token is worthless without the client's private key.
//!
//! The thumbprint of the presented certificate (base64url without padding of the SHA-256 of
//! its DER, RFC 8705 §3.1) is computed by the caller (the adapters read the TLS socket): this
//! module only compares it with the token's.

use crate::error::AuthError;
use crate::jwt::{Claim, Confirmation};

/// `certificateBoundTokens` / `requireCertificateBoundTokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertificateBinding {
    /// No certificate is checked (the default): unbound tokens pass, and a bound token is
    /// refused, as a DPoP-bound token sent as `Bearer` is (RFC 9449 §7.1): nobody here can
    /// prove its sender, so a stolen one must not work as a plain bearer token.
    Off,
    /// A bound token needs its certificate; unbound tokens pass.
    Checked,
    /// Only bound tokens, each with its certificate.
    Required,
}

/// Length of a base64url SHA-256 digest without padding.
pub const THUMBPRINT_LEN: usize = 43;

/// Whether `s` is a canonical base64url SHA-256 digest: 43 characters of the URL-safe alphabet,
/// the last carrying 2 zero padding bits (so one digest has exactly one spelling).
pub fn is_thumbprint(s: &[u8]) -> bool {
    let alphabet = |b: &u8| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_';
    s.len() == THUMBPRINT_LEN
        && s.iter().all(alphabet)
        && b"AEIMQUYcgkosw048".contains(&s[THUMBPRINT_LEN - 1])
}

/// The verdict on a verified token's `cnf` given the presented certificate's thumbprint.
/// Order: a malformed binding first (`invalid_claims`), then an unbound token when bound ones
/// are required, then the certificate. Off, no certificate counts (the adapters read none), so
/// a bound token is `certificate_required`; a `cnf` that is not an object names no certificate
/// there (as it names no DPoP key), while checking refuses it as malformed.
pub fn check(
    binding: CertificateBinding,
    cnf: &Confirmation<'_>,
    presented: Option<&[u8]>,
) -> Result<(), AuthError> {
    let bound = match cnf {
        Confirmation::Absent
        | Confirmation::Methods {
            x5t_s256: Claim::Absent,
        } => None,
        Confirmation::Other if binding == CertificateBinding::Off => None,
        Confirmation::Methods {
            x5t_s256: Claim::Str(s),
        } if is_thumbprint(s.as_bytes()) => Some(s.as_bytes()),
        _ => return Err(AuthError::InvalidClaims),
    };
    let presented = match binding {
        CertificateBinding::Off => None,
        _ => presented,
    };
    match (bound, presented) {
        (None, _) if binding == CertificateBinding::Required => Err(AuthError::UnboundToken),
        (None, _) => Ok(()),
        (Some(_), None) => Err(AuthError::CertificateRequired),
        // Thumbprints are public values: a plain comparison leaks nothing.
        (Some(bound), Some(presented)) if bound == presented => Ok(()),
        (Some(_), Some(_)) => Err(AuthError::CertificateMismatch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CertificateBinding::*;

    const T: &str = "Avv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAmZZs";
    const U: &str = "Bvv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAmZZs";

    fn bound(s: &str) -> Confirmation<'_> {
        Confirmation::Methods {
            x5t_s256: Claim::Str(s.into()),
        }
    }

    #[test]
    fn a_bound_token_passes_only_with_its_certificate() {
        for mode in [Checked, Required] {
            assert_eq!(check(mode, &bound(T), Some(T.as_bytes())), Ok(()));
            assert_eq!(
                check(mode, &bound(T), Some(U.as_bytes())),
                Err(AuthError::CertificateMismatch)
            );
            assert_eq!(
                check(mode, &bound(T), None),
                Err(AuthError::CertificateRequired)
            );
            assert_eq!(
                check(mode, &bound(T), Some(b"")),
                Err(AuthError::CertificateMismatch)
            );
        }
    }

    #[test]
    fn off_refuses_a_bound_token_whatever_certificate_is_presented() {
        // Nothing checks the certificate, so none counts: no downgrade to a bearer token.
        for presented in [None, Some(T.as_bytes()), Some(U.as_bytes())] {
            assert_eq!(
                check(Off, &bound(T), presented),
                Err(AuthError::CertificateRequired)
            );
        }
        let no_x5t = Confirmation::Methods {
            x5t_s256: Claim::Absent,
        };
        for cnf in [Confirmation::Absent, no_x5t, Confirmation::Other] {
            assert_eq!(check(Off, &cnf, None), Ok(()), "{cnf:?}");
        }
    }

    #[test]
    fn unbound_tokens_pass_unless_required() {
        let no_x5t = Confirmation::Methods {
            x5t_s256: Claim::Absent,
        };
        for cnf in [Confirmation::Absent, no_x5t] {
            assert_eq!(check(Checked, &cnf, Some(T.as_bytes())), Ok(()));
            assert_eq!(check(Required, &cnf, None), Err(AuthError::UnboundToken));
            assert_eq!(
                check(Required, &cnf, Some(T.as_bytes())),
                Err(AuthError::UnboundToken)
            );
        }
    }

    #[test]
    fn a_malformed_binding_is_invalid_claims() {
        let bad = [
            Confirmation::Other,
            Confirmation::Methods {
                x5t_s256: Claim::Num(1.0),
            },
            Confirmation::Methods {
                x5t_s256: Claim::Other,
            },
            Confirmation::Methods {
                x5t_s256: Claim::StrList(vec![T.into()]),
            },
            bound(""),
            bound(&T[..42]),
            bound("Avv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAmZZs="),
            bound("Avv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAmZZt"),
            bound("Avv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAm+Zs"),
        ];
        for cnf in &bad {
            for mode in [Checked, Required] {
                assert_eq!(
                    check(mode, cnf, Some(T.as_bytes())),
                    Err(AuthError::InvalidClaims),
                    "{cnf:?}"
                );
            }
            // Off, a cnf that is not an object binds nothing; a malformed x5t#S256 is refused.
            let off = if matches!(cnf, Confirmation::Other) {
                Ok(())
            } else {
                Err(AuthError::InvalidClaims)
            };
            assert_eq!(check(Off, cnf, None), off, "{cnf:?}");
        }
    }
}
