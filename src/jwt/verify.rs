//! Signature verification of a compact JWS with keys prepared once: the header selects the
//! key ([`KeyLookup`]), the key checks the signature of its one algorithm.

use super::alg::Alg;
use super::base64url;
use super::claims::Claims;
use super::header::{Header, STANDARD_HEADER_B64};
use super::key::HmacKey;
use super::key_set::{KeySet, VerificationKey};
use super::validate::ClaimRules;
use crate::error::AuthError;
use crate::verified_cache::VerifiedCache;

/// The key a header selected.
pub enum Selected<'k> {
    Hs256(&'k HmacKey),
    Key(&'k VerificationKey),
}

impl Selected<'_> {
    fn is_hmac(&self) -> bool {
        match self {
            Selected::Hs256(_) => true,
            Selected::Key(key) => key.is_hmac(),
        }
    }

    fn verify(&self, signing_input: &[u8], signature: &[u8]) -> bool {
        match self {
            Selected::Hs256(key) => key.verify(signing_input, signature),
            Selected::Key(key) => key.verify(signing_input, signature),
        }
    }
}

/// Where a token's key comes from: a [`KeySet`], or one bare HS256 key (refresh tokens,
/// issuance tests). `header` is `None` for the standard header (`alg` HS256, no `kid`).
///
/// `claims` are the token's, parsed before its key is looked up: the trusted-issuer registry
/// (src/issuers.rs) picks the issuer's own key set by `iss` first.
pub trait KeyLookup {
    fn select(
        &self,
        header: Option<&Header<'_>>,
        claims: &Claims<'_>,
    ) -> Result<Selected<'_>, AuthError>;

    /// The claim rules for a token these keys verified: `default`, or the issuer's own.
    fn rules<'r>(
        &'r self,
        _claims: &Claims<'_>,
        default: &'r ClaimRules,
    ) -> Result<&'r ClaimRules, AuthError> {
        Ok(default)
    }

    /// Counts replacements; tags the verified-token cache's entries.
    fn generation(&self) -> u64 {
        0
    }

    /// Whether every key is an HMAC key.
    fn all_hmac(&self) -> bool {
        true
    }
}

impl KeyLookup for HmacKey {
    /// Exactly the key set of one HS256 key without `kid` would answer.
    fn select(
        &self,
        header: Option<&Header<'_>>,
        _claims: &Claims<'_>,
    ) -> Result<Selected<'_>, AuthError> {
        match header {
            Some(h) if h.kid.is_some() => Err(AuthError::UnknownKey),
            Some(h) if h.alg != Alg::Hs256 => Err(AuthError::UnsupportedAlgorithm),
            _ => Ok(Selected::Hs256(self)),
        }
    }
}

impl KeyLookup for KeySet {
    fn select(
        &self,
        header: Option<&Header<'_>>,
        _claims: &Claims<'_>,
    ) -> Result<Selected<'_>, AuthError> {
        let key = match header {
            None => self.standard().ok_or(AuthError::UnsupportedAlgorithm),
            Some(h) => self.select(h.alg, h.kid.as_deref()),
        };
        // The standard header selects nothing only when no HS256 key or several exist: parse
        // it like any header so the verdict names the reason.
        match (key, header) {
            (Ok(key), _) => Ok(Selected::Key(key)),
            (Err(_), None) => self.select(Alg::Hs256, None).map(Selected::Key),
            (Err(e), Some(_)) => Err(e),
        }
    }

    fn generation(&self) -> u64 {
        KeySet::generation(self)
    }

    fn all_hmac(&self) -> bool {
        KeySet::all_hmac(self)
    }
}

/// Everything needed to accept one kind of token apart from the keys, fixed at construction:
/// the claim rules and the size limit.
pub struct Verifier {
    rules: ClaimRules,
    max_token_bytes: usize,
}

impl Verifier {
    pub fn new(rules: ClaimRules, max_token_bytes: usize) -> Self {
        Verifier {
            rules,
            max_token_bytes,
        }
    }

    /// Size, structure, key selection, signature, then claims at `now` (whole seconds since
    /// the epoch).
    pub fn verify<'s>(
        &self,
        token: &[u8],
        keys: &impl KeyLookup,
        now: f64,
        scratch: &'s mut Vec<u8>,
    ) -> Result<Claims<'s>, AuthError> {
        // Bounds the work one request can cause before a single byte is decoded.
        if token.len() > self.max_token_bytes {
            return Err(AuthError::TokenTooLarge);
        }
        let (claims, _) =
            decode_verified_by(token, keys, scratch, self.rules.access_token_profile)?;
        keys.rules(&claims, &self.rules)?.validate(&claims, now)?;
        Ok(claims)
    }

    /// [`Verifier::verify`] through the verified-token cache: a hit skips the header, key
    /// selection and signature (the token string was verified under this key set), never the
    /// claim checks; only successes are remembered.
    pub fn verify_cached<'s>(
        &self,
        token: &[u8],
        keys: &impl KeyLookup,
        cache: &VerifiedCache,
        cache_hmac: bool,
        now: f64,
        scratch: &'s mut Vec<u8>,
    ) -> Result<Claims<'s>, AuthError> {
        if token.len() > self.max_token_bytes {
            return Err(AuthError::TokenTooLarge);
        }
        let digest = VerifiedCache::digest(token);
        if cache.hit(&digest, keys.generation(), now) {
            let claims = decode_known_good(token, scratch)?;
            keys.rules(&claims, &self.rules)?.validate(&claims, now)?;
            return Ok(claims);
        }
        let verified = decode_verified_by(token, keys, scratch, self.rules.access_token_profile);
        // Not even a b64token (RFC 6750 §2.1): refused as a format error, which the JS engine
        // settles before its cache is asked (js/bearer.js); the scan runs on this failure only.
        if !matches!(verified, Err(AuthError::MalformedToken)) || crate::bearer::is_b64token(token)
        {
            cache.count_miss();
        }
        let (claims, by_hmac) = verified?;
        keys.rules(&claims, &self.rules)?.validate(&claims, now)?;
        // An HMAC check costs less than the digest: HMAC tokens are only remembered when the
        // cache was asked for by size (`cache_hmac`), even in a key set with asymmetric keys.
        if cache_hmac || !by_hmac {
            cache.insert(digest, keys.generation(), claims.exp.as_num());
        }
        Ok(claims)
    }
}

impl Verifier {
    /// Claims vouched for another way than a signature (an introspection answer, src/introspection.rs),
    /// checked by the same rules as a verified token's: the issuer's own (chosen by `iss`) or
    /// the default.
    pub fn validate_claims<'s>(
        &self,
        json: &'s [u8],
        keys: &impl KeyLookup,
        now: f64,
    ) -> Result<Claims<'s>, AuthError> {
        let claims = Claims::parse(json).ok_or(AuthError::MalformedToken)?;
        keys.rules(&claims, &self.rules)?.validate(&claims, now)?;
        Ok(claims)
    }
}

/// Decodes `token` and checks its structure, key and signature; the claims borrow from
/// `scratch`.
///
/// Order (both engines): structure, header (`alg`, `kid`; `typ` with the access-token
/// profile), claims JSON, key selection, then the signature; claims are validated by the caller.
pub fn decode_verified<'s>(
    token: &[u8],
    keys: &impl KeyLookup,
    scratch: &'s mut Vec<u8>,
) -> Result<Claims<'s>, AuthError> {
    decode_verified_by(token, keys, scratch, false).map(|(claims, _)| claims)
}

/// As [`decode_verified`], also saying whether the key that verified the token is an HMAC key;
/// `at_jwt` requires the RFC 9068 header `typ` (an ID token or any other JWT is not an access
/// token, whoever signed it).
fn decode_verified_by<'s>(
    token: &[u8],
    keys: &impl KeyLookup,
    scratch: &'s mut Vec<u8>,
    at_jwt: bool,
) -> Result<(Claims<'s>, bool), AuthError> {
    let (header_b64, payload_b64, signature_b64) = split_compact(token)?;
    scratch.clear();
    // The header nearly every issuer of HS256 tokens writes (ours and jsonwebtoken's) is known
    // to be valid: comparing its exact text skips decoding and parsing it.
    let standard_header = header_b64 == STANDARD_HEADER_B64.as_bytes();
    let header_len = if standard_header {
        0
    } else {
        base64url::decode_into(header_b64, scratch).ok_or(AuthError::MalformedToken)?
    };
    let payload_len =
        base64url::decode_into(payload_b64, scratch).ok_or(AuthError::MalformedToken)?;
    let signature_len =
        base64url::decode_into(signature_b64, scratch).ok_or(AuthError::MalformedToken)?;

    let (header_json, rest) = scratch.split_at(header_len);
    let (payload_json, signature) = rest.split_at(payload_len);
    debug_assert_eq!(signature.len(), signature_len);
    let header = if standard_header {
        None
    } else {
        Some(Header::parse(header_json)?)
    };
    // The standard header's typ is "JWT".
    if at_jwt && !header.as_ref().is_some_and(|h| h.at_jwt) {
        return Err(AuthError::WrongTokenType);
    }
    let claims = Claims::parse(payload_json).ok_or(AuthError::MalformedToken)?;
    let key = keys.select(header.as_ref(), &claims)?;

    let signing_input = &token[..header_b64.len() + 1 + payload_b64.len()];
    if !key.verify(signing_input, signature) {
        return Err(AuthError::InvalidSignature);
    }
    Ok((claims, key.is_hmac()))
}

/// The claims of a token known to have passed [`decode_verified`] under the key set in force
/// (a verified-token cache hit): only the payload is decoded.
pub fn decode_known_good<'s>(
    token: &[u8],
    scratch: &'s mut Vec<u8>,
) -> Result<Claims<'s>, AuthError> {
    let (_, payload_b64, _) = split_compact(token)?;
    scratch.clear();
    base64url::decode_into(payload_b64, scratch).ok_or(AuthError::MalformedToken)?;
    Claims::parse(scratch).ok_or(AuthError::MalformedToken)
}

/// Whether `token` carries a valid signature by one of `keys` (claims unchecked). Only asked
/// after another key set refused the signature, to tell a token of ours of the other kind
/// (`wrong_token_type`) from a forged one; the success path never runs it.
pub fn signed_with(token: &[u8], keys: &impl KeyLookup) -> bool {
    decode_verified(token, keys, &mut Vec::new()).is_ok()
}

/// The three segments of a compact JWS.
type Segments<'t> = (&'t [u8], &'t [u8], &'t [u8]);

/// Splits `header.payload.signature`; any other number of segments is malformed.
fn split_compact(token: &[u8]) -> Result<Segments<'_>, AuthError> {
    let mut dots = memchr::memchr_iter(b'.', token);
    match (dots.next(), dots.next(), dots.next()) {
        (Some(first), Some(second), None) => Ok((
            &token[..first],
            &token[first + 1..second],
            &token[second + 1..],
        )),
        _ => Err(AuthError::MalformedToken),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jwt::sign::sign_payload;
    use crate::jwt::test_tokens::hs256;
    use crate::jwt::TokenKind;

    fn rules() -> ClaimRules {
        crate::settings::Settings::with_access_secret(&[7; 32])
            .unwrap()
            .claim_rules(TokenKind::Access)
    }

    #[test]
    fn signed_with_tells_which_key_made_the_signature() {
        let key = HmacKey::new(b"refresh-secret");
        let token = sign_payload(&key, br#"{"sub":"u","exp":5}"#);
        assert!(signed_with(token.as_bytes(), &key));
        assert!(!signed_with(
            token.as_bytes(),
            &HmacKey::new(b"access-secret")
        ));
        assert!(!signed_with(b"a.b", &key));
        let mut tampered = token.clone().into_bytes();
        *tampered.last_mut().unwrap() ^= 1;
        assert!(!signed_with(&tampered, &key));
    }

    #[test]
    fn signed_tokens_verify() {
        let key = HmacKey::new(b"secret");
        let token = sign_payload(&key, br#"{"sub":"u","exp":5}"#);
        let mut scratch = Vec::new();
        let claims = decode_verified(token.as_bytes(), &key, &mut scratch).unwrap();
        assert_eq!(claims.sub.as_str(), Some("u"));
    }

    #[test]
    fn verifier_refuses_oversized_tokens_before_decoding() {
        let key = HmacKey::new(b"secret");
        let token = sign_payload(&key, br#"{"sub":"u","exp":5}"#);
        let verifier = Verifier::new(rules(), token.len() - 1);
        let mut s = Vec::new();
        assert_eq!(
            verifier.verify(token.as_bytes(), &key, 1.0, &mut s).err(),
            Some(AuthError::TokenTooLarge)
        );
        let verifier = Verifier::new(rules(), token.len());
        assert!(verifier.verify(token.as_bytes(), &key, 1.0, &mut s).is_ok());
        assert_eq!(
            verifier.verify(token.as_bytes(), &key, 5.0, &mut s).err(),
            Some(AuthError::TokenExpired)
        );
    }

    #[test]
    fn interoperates_with_the_jsonwebtoken_crate() {
        use jsonwebtoken::{decode, encode, DecodingKey, EncodingKey, Header, Validation};
        let key = HmacKey::new(b"secret");
        let ours = sign_payload(&key, br#"{"sub":"u","exp":4000000000}"#);
        let decoded = decode::<serde_json::Value>(
            &ours,
            &DecodingKey::from_secret(b"secret"),
            &Validation::default(),
        );
        assert_eq!(decoded.unwrap().claims["sub"], "u");

        let theirs = encode(
            &Header::default(),
            &serde_json::json!({"sub": "v", "exp": 4000000000u64}),
            &EncodingKey::from_secret(b"secret"),
        )
        .unwrap();
        let mut scratch = Vec::new();
        let claims = decode_verified(theirs.as_bytes(), &key, &mut scratch).unwrap();
        assert_eq!(claims.sub.as_str(), Some("v"));
    }

    #[test]
    fn verifies_a_token_signed_with_the_key() {
        let t = hs256(r#"{"alg":"HS256"}"#, r#"{"sub":"u"}"#, b"k");
        let mut scratch = Vec::new();
        let claims = decode_verified(t.as_bytes(), &HmacKey::new(b"k"), &mut scratch).unwrap();
        assert_eq!(claims.sub.as_str(), Some("u"));
    }

    #[test]
    fn rejects_wrong_key_and_stripped_signature() {
        let t = hs256(r#"{"alg":"HS256"}"#, r#"{"sub":"u"}"#, b"k");
        let mut s = Vec::new();
        assert_eq!(
            decode_verified(t.as_bytes(), &HmacKey::new(b"x"), &mut s).err(),
            Some(AuthError::InvalidSignature)
        );
        let stripped = &t[..t.rfind('.').unwrap() + 1];
        assert_eq!(
            decode_verified(stripped.as_bytes(), &HmacKey::new(b"k"), &mut s).err(),
            Some(AuthError::InvalidSignature)
        );
    }

    #[test]
    fn a_lone_surrogate_anywhere_is_malformed_before_the_alg_and_the_signature() {
        let lone = [
            r"\ud800",
            r"\udc00",
            r"\udfff\ud800",
            r"\ud83dx",
            r"\ud800\u0041",
        ];
        let key = HmacKey::new(b"k");
        let mut s = Vec::new();
        for u in lone {
            let payloads = [
                format!(r#"{{"sub":{{"{u}":1}},"exp":5}}"#),
                format!(r#"{{"sub":"u","x":"{u}"}}"#),
                format!(r#"{{"sub":"u","x":[{{"y":["{u}"]}}]}}"#),
                format!(r#"{{"sub":"u","{u}":1}}"#),
                format!(r#"{{"sub":"u","aud":[1,"{u}"]}}"#),
            ];
            let headers = [
                format!(r#"{{"alg":{{"{u}":1}}}}"#),
                format!(r#"{{"alg":"HS256","x":{{"y":"{u}"}}}}"#),
                format!(r#"{{"alg":"none","{u}":1}}"#),
            ];
            let tokens = payloads
                .iter()
                .map(|p| (r#"{"alg":"HS256"}"#.to_string(), p.clone()))
                .chain(headers.iter().map(|h| (h.clone(), r#"{"sub":"u"}"#.into())));
            for (header, payload) in tokens {
                // Signed with the right key and with a forged one: the same verdict.
                for secret in [&b"k"[..], b"forged"] {
                    let t = hs256(&header, &payload, secret);
                    assert_eq!(
                        decode_verified(t.as_bytes(), &key, &mut s).err(),
                        Some(AuthError::MalformedToken),
                        "{header} {payload}"
                    );
                }
            }
        }
        // A paired escape is a character like any other.
        let t = hs256(
            r#"{"alg":"HS256","x":{"\ud83d\ude00":1}}"#,
            r#"{"sub":"\ud83d\ude00","x":{"\ud83d\ude00":["\ud83d\ude00"]}}"#,
            b"k",
        );
        assert_eq!(
            decode_verified(t.as_bytes(), &key, &mut s)
                .unwrap()
                .sub
                .as_str(),
            Some("\u{1f600}")
        );
    }

    #[test]
    fn rejects_wrong_segment_counts() {
        let key = HmacKey::new(b"k");
        let mut s = Vec::new();
        for t in ["", "a", "a.b", "a.b.c.d", "...", "a..b.c"] {
            assert_eq!(
                decode_verified(t.as_bytes(), &key, &mut s).err(),
                Some(AuthError::MalformedToken),
                "{t}"
            );
        }
    }

    #[test]
    fn verifies_rfc7515_a1_example() {
        // RFC 7515 Appendix A.1 (key from the JWK "k" member).
        let key = {
            let mut k = Vec::new();
            crate::jwt::base64url::decode_into(
                b"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow",
                &mut k,
            )
            .unwrap();
            k
        };
        let t = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let mut s = Vec::new();
        let claims = decode_verified(t.as_bytes(), &HmacKey::new(&key), &mut s).unwrap();
        assert_eq!(claims.iss.as_str(), Some("joe"));
        assert_eq!(claims.exp.as_num(), Some(1300819380.0));
    }

    #[test]
    fn a_cache_hit_still_checks_nbf_and_exp_and_is_tied_to_its_key_set() {
        use crate::jwt::KeySpec;
        let spec = |bytes: u8| KeySpec {
            kid: Some("k".into()),
            alg: Alg::Hs256,
            key: crate::secret::Secret::from(&[bytes; 32][..]),
        };
        let keys = KeySet::new(&[spec(1)], 0);
        let t = hs256(
            r#"{"alg":"HS256","kid":"k"}"#,
            r#"{"sub":"u","type":"access","nbf":100,"exp":200}"#,
            &[1; 32],
        );
        let verifier = Verifier::new(rules(), 8192);
        let cache = VerifiedCache::new(10).unwrap();
        let mut s = Vec::new();
        // Unless the cache was asked for by size, a token an HMAC key verified is not kept.
        let unasked = verifier.verify_cached(t.as_bytes(), &keys, &cache, false, 150.0, &mut s);
        assert!(unasked.is_ok());
        assert_eq!(cache.len(), 0);
        let mut at = |keys: &KeySet, now: f64| {
            verifier
                .verify_cached(t.as_bytes(), keys, &cache, true, now, &mut s)
                .err()
        };
        assert_eq!(at(&keys, 150.0), None);
        assert_eq!(cache.len(), 1);
        // The wall clock steps back before nbf: the hit is refused, and the entry kept.
        assert_eq!(at(&keys, 50.0), Some(AuthError::TokenNotYetValid));
        assert_eq!(cache.len(), 1);
        assert_eq!(at(&keys, 199.0), None);
        // Another key set (same kid, other bytes) never answers from the entry.
        let rotated = KeySet::new(&[spec(2)], 1);
        assert_eq!(at(&rotated, 150.0), Some(AuthError::InvalidSignature));
        assert_eq!(cache.len(), 0);
        // At exp the entry is gone and the verdict is token_expired, as without the cache.
        assert_eq!(at(&keys, 150.0), None);
        assert_eq!(at(&keys, 200.0), Some(AuthError::TokenExpired));
        assert_eq!(cache.len(), 0);
    }
}
