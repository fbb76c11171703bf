//! DPoP proof verification (RFC 9449 §4.3), fused into the request chain: the `DPoP` header's
//! proof is checked against the request (`htm`, `htu`), the clock (`iat`) and the access token
//! (`ath`); the chain checks the access token first, the token's `cnf.jkt` against the proof's
//! key, the proof's signature last (the dearest check), and admits the proof once through the
//! replay cache ([`replay`]) only when every other check admitted the request. Only runs for the DPoP
//! scheme, so a Bearer request pays nothing. The JS twin is js/dpop.js: same checks, same order,
//! same codes.

pub mod htu;
pub mod nonce;
pub mod proof_key;
pub mod replay;

use crate::contract::limits;
use crate::error::AuthError;
use crate::jwt::alg::Family;
use crate::jwt::base64url;
use crate::jwt::json_scan::{Scalar, Scanner};
use crate::jwt::Alg;
use nonce::NonceKey;
use proof_key::ProofKey;

const PROOF_CAP: usize = limits::DPOP_PROOF_CAP as usize;
const URL_CAP: usize = limits::DPOP_URL_CAP as usize;
const JTI_CAP: usize = limits::DPOP_JTI_CAP as usize;

/// What the request says about its sender beyond its headers (`SenderContext` in JS): the
/// client certificate's thumbprint for certificate-bound tokens (src/cert_binding.rs), the
/// `DPoP` header's value, the method and the absolute URL for the proof checks below (the
/// adapter reconstructs the URL from its configured origin, never from unconfigured
/// X-Forwarded-* headers). The authenticator passes it through; the checks that read it need
/// nothing above them.
#[derive(Debug, Default, Clone, Copy)]
pub struct SenderContext<'a> {
    /// The client certificate's SHA-256 thumbprint, base64url without padding (RFC 8705 §3.1).
    pub client_cert_thumbprint: Option<&'a [u8]>,
    pub dpop: Option<&'a [u8]>,
    pub method: Option<&'a [u8]>,
    pub url: Option<&'a [u8]>,
}

/// The proof algorithms accepted when `dpopAlgorithms` is not given, in the order the DPoP
/// challenge's `algs` lists them (RFC 9449 §7.1); the default of contract/options.json, held
/// equal to it by a test. Asymmetric only: a MAC needs a shared secret,
/// so a proof signed with one proves nothing about the client (§4.3 step 5).
pub const DEFAULT_ALGS: [Alg; 10] = [
    Alg::Es256,
    Alg::Es384,
    Alg::Rs256,
    Alg::Rs384,
    Alg::Rs512,
    Alg::Ps256,
    Alg::Ps384,
    Alg::Ps512,
    Alg::EdDsa,
    Alg::Ed25519,
];

/// The `alg` of a `dpopAlgorithms` entry, or `None` for a name no proof may use (`none`, HS*,
/// anything unknown).
pub fn proof_alg(name: &str) -> Option<Alg> {
    Alg::from_name(name).filter(|a| a.family() != Family::Hmac)
}

/// The set of algorithms proofs may use, one bit per [`Alg`]: checked per proof without a
/// search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProofAlgs(u16);

impl ProofAlgs {
    /// The configured names (checked by `proof_alg` at construction), or [`DEFAULT_ALGS`] when
    /// there are none.
    pub fn from_names(names: &[String]) -> ProofAlgs {
        let mut bits = 0u16;
        let mut add = |alg: Alg| bits |= 1 << alg as u16;
        if names.is_empty() {
            DEFAULT_ALGS.into_iter().for_each(&mut add);
        } else {
            names.iter().filter_map(|n| proof_alg(n)).for_each(&mut add);
        }
        ProofAlgs(bits)
    }

    pub fn contains(self, alg: Alg) -> bool {
        self.0 & (1 << alg as u16) != 0 && alg.family() != Family::Hmac
    }
}

/// A proof whose header and claims passed (RFC 9449 §4.3 steps 1-11), its signature not yet
/// checked: the chain checks the access token, then [`Self::check_ath`], the token's `cnf.jkt`
/// against [`Self::thumbprint`], and only then [`Self::check_signature`], the dearest step. A
/// forged token or a proof of another key is refused before any public-key operation of the
/// proof (docs/sender-constrained.md#order-of-checks).
pub struct UncheckedProof<'p> {
    key: ProofKey,
    signing_input: &'p [u8],
    signature: Vec<u8>,
    ath: String,
    /// SHA-256(thumbprint `.` jti), the replay cache's key.
    pub replay_key: [u8; 32],
    /// Until when (seconds) the proof is a replay: [`replay_until`] of its `iat`.
    pub expires_at: f64,
}

impl UncheckedProof<'_> {
    /// RFC 7638 thumbprint of the proof's key, to compare with the token's `cnf.jkt`.
    pub fn thumbprint(&self) -> &str {
        &self.key.thumbprint
    }

    /// Step 12 (§7): the proof is for this access token.
    pub fn check_ath(&self, token: &[u8]) -> Result<(), AuthError> {
        let digest = ring::digest::digest(&ring::digest::SHA256, token);
        if self.ath != base64url::encode(digest.as_ref()) {
            return Err(AuthError::DpopProofMismatch);
        }
        Ok(())
    }

    /// Step 6: the proof is signed by the key it carries.
    pub fn check_signature(&self) -> Result<(), AuthError> {
        if !self.key.verify(self.signing_input, &self.signature) {
            return Err(AuthError::InvalidDpopProof);
        }
        Ok(())
    }
}

/// What a proof that passed every check of its own yields.
#[cfg(any(test, feature = "internals"))]
pub struct CheckedProof {
    /// RFC 7638 thumbprint of the proof's key.
    pub thumbprint: String,
    /// SHA-256(thumbprint `.` jti), the replay cache's key.
    pub replay_key: [u8; 32],
    /// Until when (seconds) the proof is a replay.
    pub expires_at: f64,
}

/// Every check of the proof itself for `token`, in the chain's order without the token's own:
/// [`read_proof`], `ath`, the signature. For the fuzz targets and tests; the chain interleaves
/// the token's checks (src/authenticator.rs).
#[cfg(any(test, feature = "internals"))]
pub fn check_proof(
    sender: &SenderContext<'_>,
    token: &[u8],
    now: f64,
    window: f64,
    algs: ProofAlgs,
    nonces: Option<&NonceKey>,
) -> Result<CheckedProof, AuthError> {
    let proof = read_proof(sender, now, window, algs, nonces)?;
    proof.check_ath(token)?;
    proof.check_signature()?;
    Ok(CheckedProof {
        replay_key: proof.replay_key,
        expires_at: proof.expires_at,
        thumbprint: proof.key.thumbprint,
    })
}

/// The second until which a proof of `iat` must stay in a replay cache: every process accepts
/// it while its own clock, read in whole seconds, is at most `iat + window`, i.e. before the
/// second after it; a process whose clock is up to [`REPLAY_SKEW_SEC`] behind the writer's
/// still does then (docs/sender-constrained.md#clock-skew).
pub fn replay_until(iat: f64, window: f64) -> f64 {
    (iat + window).floor() + 1.0 + REPLAY_SKEW_SEC
}

/// The clock skew allowed between processes sharing a replay store (contract/limits.json).
pub const REPLAY_SKEW_SEC: f64 = limits::DPOP_REPLAY_SKEW_SEC as f64;

/// Splits `DPoP <token>` (scheme case-insensitive, RFC 7235 §2.1), or `None` for any other scheme.
pub fn dpop_scheme(header: Option<&[u8]>) -> Option<&[u8]> {
    const SCHEME: &[u8] = b"dpop ";
    let h = header?;
    if h.len() < SCHEME.len() || !h[..SCHEME.len()].eq_ignore_ascii_case(SCHEME) {
        return None;
    }
    let rest = &h[SCHEME.len()..];
    Some(&rest[rest.iter().position(|&b| b != b' ').unwrap_or(rest.len())..])
}

/// Reads the proof of `sender` at `now` (seconds), with `window` seconds either side, an `alg`
/// among `algs`, and the server nonce when `nonces` are on: every check but those of
/// [`UncheckedProof`], none of them a public-key operation.
pub fn read_proof<'p>(
    sender: &SenderContext<'p>,
    now: f64,
    window: f64,
    algs: ProofAlgs,
    nonces: Option<&NonceKey>,
) -> Result<UncheckedProof<'p>, AuthError> {
    let invalid = AuthError::InvalidDpopProof;
    let proof = match sender.dpop {
        None | Some(b"") => return Err(AuthError::MissingDpopProof),
        Some(p) if p.len() > PROOF_CAP => return Err(invalid),
        Some(p) => p,
    };
    let mut parts = proof.split(|&b| b == b'.');
    let (Some(h64), Some(p64), Some(s64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid);
    };
    let decode = |segment: &[u8]| {
        let mut out = Vec::new();
        base64url::decode_into(segment, &mut out).map(|_| out)
    };
    let header = decode(h64).ok_or(invalid)?;
    let header = std::str::from_utf8(&header).map_err(|_| invalid)?;
    let (mut typ, mut alg, mut jwk, mut crit) = (None, None, None, false);
    Scanner::new(header)
        .object(|key, scanner| {
            match key.as_ref() {
                "typ" if typ.is_none() => typ = Some(scanner.value()?),
                "alg" if alg.is_none() => alg = Some(scanner.value()?),
                "jwk" if jwk.is_none() => jwk = Some(scanner.raw_value()?),
                // A member twice would let two parsers disagree on the proof.
                "typ" | "alg" | "jwk" => return None,
                "crit" => {
                    crit = true;
                    scanner.skip_value()?
                }
                _ => scanner.skip_value()?,
            }
            Some(())
        })
        .ok_or(invalid)?;
    // RFC 9449 §4.3 steps 4-7: the type, an asymmetric allowed alg (never `none` or a MAC), a
    // public key of that alg; RFC 7515 §4.1.11 for `crit`.
    if crit || !matches!(&typ, Some(Scalar::Str(t)) if t == "dpop+jwt") {
        return Err(invalid);
    }
    let alg = match &alg {
        Some(Scalar::Str(name)) => Alg::from_name(name).filter(|a| algs.contains(*a)),
        _ => None,
    }
    .ok_or(invalid)?;
    let key = jwk.and_then(|j| ProofKey::read(j, alg)).ok_or(invalid)?;
    let payload = decode(p64).ok_or(invalid)?;
    let signature = decode(s64).ok_or(invalid)?;
    let signing_input = &proof[..h64.len() + 1 + p64.len()];
    let payload = std::str::from_utf8(&payload).map_err(|_| invalid)?;
    let [mut jti, mut htm, mut htu, mut iat, mut ath, mut nonce] =
        [None, None, None, None, None, None];
    Scanner::new(payload)
        .object(|key, scanner| {
            let slot = match key.as_ref() {
                "jti" => &mut jti,
                "htm" => &mut htm,
                "htu" => &mut htu,
                "iat" => &mut iat,
                "ath" => &mut ath,
                "nonce" => &mut nonce,
                _ => return scanner.skip_value(),
            };
            if slot.is_some() {
                return None;
            }
            *slot = Some(scanner.value()?);
            Some(())
        })
        .ok_or(invalid)?;
    let text = |v: &Option<Scalar<'_>>| match v {
        Some(Scalar::Str(s)) => Some(s.to_string()),
        _ => None,
    };
    let (Some(jti), Some(htm), Some(htu), Some(ath)) =
        (text(&jti), text(&htm), text(&htu), text(&ath))
    else {
        return Err(invalid);
    };
    let Some(Scalar::Num(iat)) = iat.filter(|v| matches!(v, Scalar::Num(n) if n.is_finite()))
    else {
        return Err(invalid);
    };
    if jti.is_empty() || jti.len() > JTI_CAP || htu.len() > URL_CAP {
        return Err(invalid);
    }
    // Steps 8-9: the proof is for this method and this URI (no query, no fragment).
    let url = sender.url.filter(|u| u.len() <= URL_CAP);
    let same_uri = match (htu::normalize(htu.as_bytes()), url.and_then(htu::normalize)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    };
    if sender.method.filter(|m| m.len() <= URL_CAP) != Some(htm.as_bytes()) || !same_uri {
        return Err(AuthError::DpopProofMismatch);
    }
    // Step 10 (§8): the nonce this server handed out, when it hands them out.
    if let Some(keys) = nonces {
        let fresh = match &nonce {
            Some(Scalar::Str(n)) => keys.accepts(n, now),
            _ => false,
        };
        if !fresh {
            return Err(AuthError::UseDpopNonce);
        }
    }
    // Step 11: fresh: at most the window old, and at most the clock skew allowance (or the
    // window, if shorter) ahead. A proof dated a whole window ahead would hold its replay entry
    // for twice the window, and no honest client's clock runs further ahead than the skew.
    if !(iat >= now - window && iat <= now + window.min(REPLAY_SKEW_SEC)) {
        return Err(AuthError::DpopProofStale);
    }
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    ctx.update(key.thumbprint.as_bytes());
    ctx.update(b".");
    ctx.update(jti.as_bytes());
    let mut replay_key = [0u8; 32];
    replay_key.copy_from_slice(ctx.finish().as_ref());
    Ok(UncheckedProof {
        key,
        signing_input,
        signature,
        ath,
        replay_key,
        expires_at: replay_until(iat, window),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_entry_outlives_every_process_within_the_skew_allowance() {
        // A process reading whole seconds accepts iat 100.5 with a 60 s window until its clock
        // reads 161.0; one 5 s behind the writer does until the writer's 166.0.
        assert_eq!(replay_until(100.5, 60.0), 161.0 + REPLAY_SKEW_SEC);
        assert_eq!(replay_until(100.0, 60.0), 161.0 + REPLAY_SKEW_SEC);
        assert_eq!(REPLAY_SKEW_SEC, 5.0);
    }

    #[test]
    fn the_default_algorithms_are_the_contract_default_in_its_order() {
        let spec = crate::schema::schema()
            .option("dpopAlgorithms")
            .expect("dpopAlgorithms is in contract/options.json");
        let listed: Vec<&str> = spec
            .default
            .as_ref()
            .and_then(|d| d.as_array())
            .expect("its default is a list")
            .iter()
            .map(|v| v.as_str().expect("of names"))
            .collect();
        assert_eq!(listed, DEFAULT_ALGS.map(Alg::name).to_vec());
    }

    #[test]
    fn proof_algs_hold_the_default_list_or_the_configured_names_and_never_a_mac() {
        let default = ProofAlgs::from_names(&[]);
        for alg in Alg::ALL {
            assert_eq!(
                default.contains(alg),
                DEFAULT_ALGS.contains(&alg),
                "{}",
                alg.name()
            );
            assert_eq!(
                proof_alg(alg.name()).is_some(),
                alg.family() != Family::Hmac
            );
        }
        let narrow = ProofAlgs::from_names(&["Ed25519".to_owned(), "ES256".to_owned()]);
        assert!(narrow.contains(Alg::Ed25519) && narrow.contains(Alg::Es256));
        assert!(!narrow.contains(Alg::EdDsa) && !narrow.contains(Alg::Rs256));
        for name in ["none", "HS256", "HS384", "HS512", "ES512", "es256", ""] {
            assert_eq!(proof_alg(name), None, "{name}");
        }
        // A MAC never passes, even if a set were built with its bit.
        assert!(!ProofAlgs(u16::MAX).contains(Alg::Hs256));
    }
}
