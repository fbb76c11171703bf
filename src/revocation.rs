//! The deny list: revoked tokens (by `(iss, jti)`) and revoked subjects ("log out everywhere":
//! tokens of `(iss, sub)` issued before a time), checked after a token is verified.
//!
//! Keyed on the claims the signature vouches for, never on the token text (jose's advice: the
//! same token can be re-encoded, and a deny list of strings grows with every copy). A key is
//! `iss \0 jti` (or `iss \0 sub`); a token without `iss` has the empty issuer.
//!
//! The request path pays one atomic load while nothing is revoked and nothing is marked
//! unavailable; otherwise one uncontended lock and one hash lookup per list, in a reused buffer.
//!
//! Memory is bounded (docs/revocation.md): at most `max_entries` entries in both lists together,
//! each key at most `2 × MAX_PART_BYTES + 1` bytes. An entry is dropped once the token it names
//! can no longer be accepted anyway: a token entry at `exp + clockToleranceSec`, a subject
//! entry `retention_sec` after its `before` (the longest lifetime this authenticator issues,
//! plus the tolerance). At the bound a new revocation is refused (`RangeError`
//! `ERR_AUTH_SHIELD_REVOCATION_LIMIT`) rather than evicting one: evicting would silently let a
//! revoked, still-valid token back in.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::call_error::{ArgError, CallError, ErrorClass};
use crate::contract::messages;
use crate::error::AuthError;

/// Longest `iss`, `jti` or `sub` a revocation accepts, in UTF-8 bytes.
pub const MAX_PART_BYTES: usize = 256;
/// Largest NumericDate accepted for `expiresAtSec` / `before` (year 2286).
pub const MAX_TIME_SEC: f64 = 1e13;
/// The error code of a revocation refused at the `maxRevocations` bound.
pub const LIMIT_CODE: &str = "ERR_AUTH_SHIELD_REVOCATION_LIMIT";

#[derive(Debug, Clone, Copy)]
struct SubjectEntry {
    /// Tokens with `iat` below this are refused (seconds, millisecond precision or finer).
    before: f64,
    drop_at: f64,
}

#[derive(Default)]
struct Lists {
    /// `iss \0 jti` → when the entry may be dropped (`exp + tolerance`).
    tokens: HashMap<Box<[u8]>, f64>,
    /// `iss \0 sub` → the cut-off and when the entry may be dropped.
    subjects: HashMap<Box<[u8]>, SubjectEntry>,
    /// No entry may be dropped before this instant: a sweep before it would find nothing.
    next_sweep_at: f64,
}

impl Lists {
    fn len(&self) -> usize {
        self.tokens.len() + self.subjects.len()
    }

    /// Drops the entries whose tokens can no longer be accepted; at most one pass per second
    /// of clock, and none while nothing is due.
    fn sweep(&mut self, now: f64) {
        if now < self.next_sweep_at {
            return;
        }
        let mut next = f64::INFINITY;
        self.tokens.retain(|_, drop_at| {
            let keep = *drop_at > now;
            if keep {
                next = next.min(*drop_at);
            }
            keep
        });
        self.subjects.retain(|_, entry| {
            let keep = entry.drop_at > now;
            if keep {
                next = next.min(entry.drop_at);
            }
            keep
        });
        self.next_sweep_at = next.max(now + 1.0);
    }
}

/// What the request path needs of a verified token.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokenIds<'a> {
    pub iss: Option<&'a str>,
    pub jti: Option<&'a str>,
    pub sub: Option<&'a str>,
    pub iat: Option<f64>,
}

pub struct Revocations {
    /// Entries held (both lists): the lock-free emptiness check of the request path.
    count: AtomicUsize,
    /// Set by a revocation feed that lost its source past its allowed lag, with `onStale:
    /// 'closed'`: every token not already refused gets `revocation_unavailable`.
    unavailable: AtomicBool,
    lists: Mutex<Lists>,
    max_entries: usize,
    tolerance_sec: f64,
    retention_sec: f64,
    /// The latest subject cut-off that was at most [`CUTOFF_AHEAD_SEC`] ahead of the clock (or
    /// of the latest `iat`) when it was set. Stored as `f64` bits: non-negative doubles order
    /// like their bits. A token signed afterwards gets an `iat` no earlier.
    recent_cutoff: AtomicU64,
    /// The latest `iat` signed (`f64` bits): a default cut-off comes after it.
    last_issued: AtomicU64,
}

/// How far ahead of the clock a subject cut-off may be and still hold back the next `iat`:
/// the default cut-off is the millisecond after the call, plus rounding.
const CUTOFF_AHEAD_SEC: f64 = 0.002;

thread_local! {
    /// The lookup key, built in place: nothing allocated per request once it has grown.
    static KEY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

fn key_into(buf: &mut Vec<u8>, iss: &str, id: &str) {
    buf.clear();
    buf.extend_from_slice(iss.as_bytes());
    buf.push(0);
    buf.extend_from_slice(id.as_bytes());
}

fn part(name: &str, value: &str, empty_ok: bool) -> Result<(), CallError> {
    if value.len() > MAX_PART_BYTES {
        return Err(CallError::too_many_bytes(name, MAX_PART_BYTES, value.len()));
    }
    if !empty_ok && value.is_empty() {
        return Err(ArgError::Range(messages::must_not_be_empty(name)).into());
    }
    Ok(())
}

fn time(name: &str, value: f64) -> Result<(), CallError> {
    if value.is_finite() && (0.0..=MAX_TIME_SEC).contains(&value) {
        Ok(())
    } else {
        Err(ArgError::Range(messages::not_numeric_date(name, MAX_TIME_SEC)).into())
    }
}

fn limit_reached(max: usize) -> CallError {
    CallError::new(
        ErrorClass::Range,
        LIMIT_CODE,
        crate::contract::messages::revocation_limit(max as f64),
    )
}

impl Revocations {
    /// At most `max_entries` entries; token entries live `tolerance_sec` past their `exp`,
    /// subject entries `retention_sec` past their `before`.
    pub fn new(max_entries: usize, tolerance_sec: f64, retention_sec: f64) -> Self {
        Revocations {
            count: AtomicUsize::new(0),
            unavailable: AtomicBool::new(false),
            lists: Mutex::new(Lists::default()),
            max_entries,
            tolerance_sec,
            retention_sec,
            recent_cutoff: AtomicU64::new(0),
            last_issued: AtomicU64::new(0),
        }
    }

    /// The latest subject cut-off set at most [`CUTOFF_AHEAD_SEC`] ahead of the clock (0 when
    /// none): a token signed before the clock reaches it would be refused.
    pub fn recent_cutoff(&self) -> f64 {
        f64::from_bits(self.recent_cutoff.load(Ordering::Acquire))
    }

    /// The `iat` of a token signed at `now` (seconds, millisecond precision): `now`, or the
    /// cut-off of a subject revocation made in this same millisecond when the clock could not
    /// be waited for (a fixed clock, a clock stepped back), so the user who logs in again right
    /// after "log out everywhere" is not logged out too (docs/revocation.md).
    pub fn issued_at(&self, now: f64) -> f64 {
        let iat = now.max(f64::from_bits(self.recent_cutoff.load(Ordering::Acquire)));
        self.last_issued.fetch_max(iat.to_bits(), Ordering::AcqRel);
        iat
    }

    /// The cut-off of a subject revocation made at `now_ms` (whole milliseconds) without a
    /// `before`: the millisecond after both the call and the latest `iat` signed, so every
    /// token issued up to the call is refused, one issued in the same millisecond included.
    pub fn default_cutoff(&self, now_ms: f64) -> f64 {
        (now_ms.max(self.last_issued_ms()) + 1.0) / 1000.0
    }

    fn last_issued_ms(&self) -> f64 {
        (f64::from_bits(self.last_issued.load(Ordering::Acquire)) * 1000.0).round()
    }

    fn lock(&self) -> MutexGuard<'_, Lists> {
        // A panic while holding the lock cannot leave the maps half-updated in a way that
        // matters (each operation is one insert or one retain): keep serving.
        self.lists.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Refuses the token `(iss, jti)` until `expires_at_sec` (its `exp`) plus the tolerance.
    /// A token already past that is not held (nothing left to refuse).
    pub fn revoke_token(
        &self,
        iss: &str,
        jti: &str,
        expires_at_sec: f64,
        now: f64,
    ) -> Result<(), CallError> {
        part("jti", jti, false)?;
        time("expiresAtSec", expires_at_sec)?;
        part("options.iss", iss, true)?;
        let drop_at = expires_at_sec + self.tolerance_sec;
        if drop_at <= now {
            return Ok(());
        }
        let mut key = Vec::with_capacity(iss.len() + jti.len() + 1);
        key_into(&mut key, iss, jti);
        let mut lists = self.lock();
        if let Some(held) = lists.tokens.get_mut(&key[..]) {
            *held = held.max(drop_at);
            return Ok(());
        }
        self.make_room(&mut lists, now)?;
        lists.tokens.insert(key.into_boxed_slice(), drop_at);
        lists.next_sweep_at = lists.next_sweep_at.min(drop_at);
        self.count.store(lists.len(), Ordering::Release);
        Ok(())
    }

    /// Refuses every token of `(iss, sub)` whose `iat` is before `before` (and every one
    /// without `iat`), for `retention_sec` after `before`. `now` is in seconds, millisecond
    /// precision.
    pub fn revoke_subject(
        &self,
        iss: &str,
        sub: &str,
        before: f64,
        now: f64,
    ) -> Result<(), CallError> {
        part("sub", sub, false)?;
        time("options.issuedBeforeSec", before)?;
        part("options.iss", iss, true)?;
        if before <= now.max(self.last_issued_ms() / 1000.0) + CUTOFF_AHEAD_SEC {
            self.recent_cutoff
                .fetch_max(before.to_bits(), Ordering::AcqRel);
        }
        let drop_at = before + self.retention_sec;
        if drop_at <= now {
            return Ok(());
        }
        let mut key = Vec::with_capacity(iss.len() + sub.len() + 1);
        key_into(&mut key, iss, sub);
        let mut lists = self.lock();
        if let Some(held) = lists.subjects.get_mut(&key[..]) {
            held.before = held.before.max(before);
            held.drop_at = held.drop_at.max(drop_at);
            return Ok(());
        }
        self.make_room(&mut lists, now)?;
        lists
            .subjects
            .insert(key.into_boxed_slice(), SubjectEntry { before, drop_at });
        lists.next_sweep_at = lists.next_sweep_at.min(drop_at);
        self.count.store(lists.len(), Ordering::Release);
        Ok(())
    }

    fn make_room(&self, lists: &mut Lists, now: f64) -> Result<(), CallError> {
        if lists.len() < self.max_entries {
            return Ok(());
        }
        lists.sweep(now);
        self.count.store(lists.len(), Ordering::Release);
        if lists.len() < self.max_entries {
            Ok(())
        } else {
            Err(limit_reached(self.max_entries))
        }
    }

    /// Entries held after dropping the expired ones.
    pub fn len(&self, now: f64) -> usize {
        let mut lists = self.lock();
        lists.sweep(now);
        let len = lists.len();
        self.count.store(len, Ordering::Release);
        len
    }

    /// Marks the deny list as possibly incomplete (`true`): tokens not known to be revoked are
    /// refused with `revocation_unavailable` until it is cleared.
    pub fn set_unavailable(&self, unavailable: bool) {
        self.unavailable.store(unavailable, Ordering::Release);
    }

    pub fn unavailable(&self) -> bool {
        self.unavailable.load(Ordering::Acquire)
    }

    /// The verdict on a verified token: revoked, unavailable, or fine.
    pub fn check(&self, token: TokenIds<'_>) -> Result<(), AuthError> {
        if self.count.load(Ordering::Acquire) != 0 && self.is_revoked(token) {
            return Err(AuthError::TokenRevoked);
        }
        if self.unavailable.load(Ordering::Acquire) {
            return Err(AuthError::RevocationUnavailable);
        }
        Ok(())
    }

    fn is_revoked(&self, token: TokenIds<'_>) -> bool {
        let iss = token.iss.unwrap_or("");
        KEY.with(|cell| match cell.try_borrow_mut() {
            Ok(mut key) => self.lookup(&mut key, iss, token),
            Err(_) => self.lookup(&mut Vec::new(), iss, token),
        })
    }

    fn lookup(&self, key: &mut Vec<u8>, iss: &str, token: TokenIds<'_>) -> bool {
        let lists = self.lock();
        if let Some(jti) = token.jti {
            key_into(key, iss, jti);
            if lists.tokens.contains_key(&key[..]) {
                return true;
            }
        }
        if lists.subjects.is_empty() {
            return false;
        }
        let Some(sub) = token.sub else { return false };
        key_into(key, iss, sub);
        match lists.subjects.get(&key[..]) {
            // No `iat`: nothing proves the token came after the cut-off, so it is refused.
            Some(entry) => token.iat.is_none_or(|iat| iat < entry.before),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: f64 = 1_700_000_000.0;

    fn ids<'a>(jti: &'a str, sub: &'a str, iat: Option<f64>) -> TokenIds<'a> {
        TokenIds {
            iss: None,
            jti: Some(jti),
            sub: Some(sub),
            iat,
        }
    }

    #[test]
    fn refuses_a_revoked_jti_and_nothing_else() {
        let r = Revocations::new(10, 0.0, 900.0);
        assert_eq!(r.check(ids("a", "u", Some(NOW))), Ok(()));
        r.revoke_token("", "a", NOW + 60.0, NOW).unwrap();
        assert_eq!(
            r.check(ids("a", "u", Some(NOW))),
            Err(AuthError::TokenRevoked)
        );
        assert_eq!(r.check(ids("b", "u", Some(NOW))), Ok(()));
    }

    #[test]
    fn the_issuer_is_part_of_the_key() {
        let r = Revocations::new(10, 0.0, 900.0);
        r.revoke_token("https://a", "j", NOW + 60.0, NOW).unwrap();
        let mut t = ids("j", "u", Some(NOW));
        assert_eq!(r.check(t), Ok(()));
        t.iss = Some("https://a");
        assert_eq!(r.check(t), Err(AuthError::TokenRevoked));
        // `iss\0jti` cannot collide with another split of the same bytes.
        let r = Revocations::new(10, 0.0, 900.0);
        r.revoke_token("ab", "c", NOW + 60.0, NOW).unwrap();
        t.iss = Some("a");
        t.jti = Some("bc");
        assert_eq!(r.check(t), Ok(()));
    }

    #[test]
    fn a_token_signed_in_the_millisecond_of_a_revocation_is_issued_at_its_cut_off() {
        let r = Revocations::new(10, 0.0, 900.0);
        let now_ms = NOW * 1000.0 + 123.0;
        let now = now_ms / 1000.0;
        assert_eq!(r.issued_at(now), now);
        // The default cut-off: the millisecond after the call.
        let cutoff = r.default_cutoff(now_ms);
        assert_eq!(cutoff, (now_ms + 1.0) / 1000.0);
        r.revoke_subject("", "u", cutoff, now).unwrap();
        // Signed before the call (same millisecond): refused.
        assert_eq!(
            r.check(ids("x", "u", Some(now))),
            Err(AuthError::TokenRevoked)
        );
        // Signed after it, still in that millisecond: issued at the cut-off, accepted.
        let iat = r.issued_at(now);
        assert_eq!(iat, cutoff);
        assert_eq!(r.check(ids("x", "u", Some(iat))), Ok(()));
        // Another revocation in the same millisecond comes after that token.
        let second = r.default_cutoff(now_ms);
        assert!(second > iat);
        r.revoke_subject("", "v", second, now).unwrap();
        assert_eq!(
            r.check(ids("x", "v", Some(iat))),
            Err(AuthError::TokenRevoked)
        );
        assert_eq!(r.issued_at(now), second);
        // A cut-off set in the future (an explicit `before`) never moves the signing time.
        r.revoke_subject("", "w", NOW + 60.0, now).unwrap();
        assert_eq!(r.issued_at(now), second);
        assert_eq!(r.issued_at(NOW + 1.0), NOW + 1.0);
    }

    #[test]
    fn subject_revocation_cuts_at_iat_and_refuses_tokens_without_iat() {
        let r = Revocations::new(10, 0.0, 900.0);
        r.revoke_subject("", "u", NOW, NOW).unwrap();
        assert_eq!(
            r.check(ids("x", "u", Some(NOW - 1.0))),
            Err(AuthError::TokenRevoked)
        );
        assert_eq!(r.check(ids("x", "u", Some(NOW))), Ok(()));
        assert_eq!(r.check(ids("x", "u", None)), Err(AuthError::TokenRevoked));
        assert_eq!(r.check(ids("x", "v", None)), Ok(()));
        // A later cut-off wins; an earlier one never moves it back.
        r.revoke_subject("", "u", NOW + 10.0, NOW).unwrap();
        r.revoke_subject("", "u", NOW - 100.0, NOW).unwrap();
        assert_eq!(
            r.check(ids("x", "u", Some(NOW + 5.0))),
            Err(AuthError::TokenRevoked)
        );
    }

    #[test]
    fn entries_are_dropped_once_their_tokens_expire() {
        let r = Revocations::new(10, 5.0, 900.0);
        r.revoke_token("", "a", NOW + 10.0, NOW).unwrap();
        r.revoke_subject("", "u", NOW, NOW).unwrap();
        assert_eq!(r.len(NOW + 14.0), 2);
        assert_eq!(r.len(NOW + 15.0), 1, "exp + tolerance passed");
        assert_eq!(r.len(NOW + 899.0), 1);
        assert_eq!(r.len(NOW + 900.0), 0, "subject retention passed");
        assert_eq!(r.check(ids("a", "u", None)), Ok(()));
        // Already expired: nothing is held.
        r.revoke_token("", "b", NOW, NOW + 10.0).unwrap();
        assert_eq!(r.len(NOW + 10.0), 0);
    }

    #[test]
    fn refuses_new_revocations_at_the_bound_and_keeps_the_old_ones() {
        let r = Revocations::new(3, 0.0, 900.0);
        for jti in ["a", "b", "c"] {
            r.revoke_token("", jti, NOW + 60.0, NOW).unwrap();
        }
        let err = r.revoke_token("", "d", NOW + 60.0, NOW).unwrap_err();
        assert_eq!((err.class, err.code), (ErrorClass::Range, LIMIT_CODE));
        assert!(r.revoke_subject("", "u", NOW, NOW).is_err());
        // Re-revoking a held entry needs no room.
        r.revoke_token("", "a", NOW + 120.0, NOW).unwrap();
        for jti in ["a", "b", "c"] {
            assert_eq!(
                r.check(ids(jti, "u", Some(NOW))),
                Err(AuthError::TokenRevoked)
            );
        }
        // Once some expire, room is made by dropping them, not live ones.
        r.revoke_token("", "d", NOW + 200.0, NOW + 61.0).unwrap();
        assert_eq!(r.len(NOW + 61.0), 2);
        assert_eq!(
            r.check(ids("a", "u", Some(NOW))),
            Err(AuthError::TokenRevoked)
        );
    }

    #[test]
    fn flood_stays_within_the_bound() {
        let r = Revocations::new(100_000, 0.0, 900.0);
        let mut refused = 0;
        for i in 0..2_000_000 {
            if r.revoke_token("", &format!("jti-{i}"), NOW + 60.0, NOW)
                .is_err()
            {
                refused += 1;
            }
        }
        assert_eq!(r.len(NOW), 100_000);
        assert_eq!(refused, 1_900_000);
        assert_eq!(
            r.check(ids("jti-99999", "u", None)),
            Err(AuthError::TokenRevoked)
        );
    }

    #[test]
    fn unavailable_refuses_unrevoked_tokens_with_its_own_code() {
        let r = Revocations::new(10, 0.0, 900.0);
        r.revoke_token("", "a", NOW + 60.0, NOW).unwrap();
        r.set_unavailable(true);
        assert_eq!(
            r.check(ids("a", "u", None)),
            Err(AuthError::TokenRevoked),
            "a known revocation keeps its code"
        );
        assert_eq!(
            r.check(ids("b", "u", Some(NOW))),
            Err(AuthError::RevocationUnavailable)
        );
        r.set_unavailable(false);
        assert_eq!(r.check(ids("b", "u", Some(NOW))), Ok(()));
    }

    #[test]
    fn bad_arguments_are_range_errors_naming_the_argument() {
        let r = Revocations::new(10, 0.0, 900.0);
        let msg = |e: CallError| (e.code, e.message);
        assert_eq!(
            msg(r.revoke_token("", "", NOW, NOW).unwrap_err()),
            ("ERR_OUT_OF_RANGE", "jti must not be empty".into())
        );
        assert!(r.revoke_token("", "a", f64::NAN, NOW).is_err());
        assert!(r.revoke_token("", "a", -1.0, NOW).is_err());
        assert!(r.revoke_token("", &"x".repeat(257), NOW, NOW).is_err());
        assert!(r.revoke_subject(&"x".repeat(257), "u", NOW, NOW).is_err());
        assert!(r.revoke_subject("", "u", f64::INFINITY, NOW).is_err());
        assert_eq!(r.len(NOW), 0);
    }
}
