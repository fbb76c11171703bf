//! What signs and verifies refresh tokens: `refreshSecret` (HS256) when it is given, else the
//! `signingKey`, checked against its own public half only.
//!
//! Explicit HMAC wins because a refresh token signed with the signing key can be verified by
//! anyone holding the published JWKS; a service that trusts that JWKS and does not check the
//! `type` claim would take it for an access token. Without `refreshSecret` the signing key is
//! the only key an issuer has, and its refresh tokens are still told apart by `type`.

use std::sync::Arc;

use crate::error::AuthError;
use crate::issue::signing_key::SigningKey;
use crate::issue::Signer;
use crate::jwt::header::Header;
use crate::jwt::verify::Selected;
use crate::jwt::{HmacKey, KeyLookup, KeySet, KeySpec};

pub enum RefreshKey {
    /// `refreshSecret`: HS256, the standard header, no `kid`.
    Secret(HmacKey),
    /// `signingKey` without `refreshSecret`. `public` holds its public half alone, never the
    /// other access keys: a token of an identity provider's key that claims `type: "refresh"`
    /// selects no key here (`unknown_key`), it cannot pass.
    SigningKey {
        key: Arc<SigningKey>,
        public: KeySet,
    },
}

impl RefreshKey {
    /// `refreshSecret` if given, else the signing key (`own` is its public half); `None`
    /// without either: refresh tokens cannot be issued.
    pub fn new(
        secret: Option<&[u8]>,
        signing: Option<(&Arc<SigningKey>, &KeySpec)>,
    ) -> Option<Self> {
        match (secret, signing) {
            (Some(secret), _) => Some(RefreshKey::Secret(HmacKey::new(secret))),
            (None, Some((key, own))) => Some(RefreshKey::SigningKey {
                key: Arc::clone(key),
                public: KeySet::new(std::slice::from_ref(own), 0),
            }),
            (None, None) => None,
        }
    }

    pub fn signer(&self) -> Signer<'_> {
        match self {
            RefreshKey::Secret(key) => Signer::Hmac(key),
            RefreshKey::SigningKey { key, .. } => Signer::Key(key),
        }
    }
}

impl KeyLookup for RefreshKey {
    fn select(
        &self,
        header: Option<&Header<'_>>,
        claims: &crate::jwt::Claims<'_>,
    ) -> Result<Selected<'_>, AuthError> {
        match self {
            RefreshKey::Secret(key) => KeyLookup::select(key, header, claims),
            RefreshKey::SigningKey { public, .. } => KeyLookup::select(public, header, claims),
        }
    }
}
