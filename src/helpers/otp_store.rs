//! The rules behind `OtpStore`: short numeric one-time codes (email/SMS style) in native memory.
//!
//! Codes are drawn from the OS CSPRNG by rejection sampling (no modulo bias), compared in
//! constant time, usable once, expire after `ttlSec`, and are burned after `maxAttempts` wrong
//! guesses. The map never holds more than `maxEntries` keys: every code has the same lifetime,
//! so insertion order is expiry order and the oldest entry is evicted first.

use std::collections::{HashMap, VecDeque};

use ring::rand::SecureRandom;
use subtle::ConstantTimeEq;

use crate::call_error::{CallError, CallResult};

/// Uniform random code of `digits` decimal digits.
pub fn random_code(rng: &dyn SecureRandom, digits: u32) -> CallResult<String> {
    let limit = 10u64.pow(digits);
    // Largest multiple of `limit` that fits: values at or above it would favour low codes.
    let zone = u64::MAX - (u64::MAX % limit);
    loop {
        let mut buf = [0u8; 8];
        rng.fill(&mut buf).map_err(|_| CallError::random_failed())?;
        let x = u64::from_le_bytes(buf);
        if x < zone {
            return Ok(format!("{:0width$}", x % limit, width = digits as usize));
        }
    }
}

struct Entry {
    code: String,
    expires_at_ms: u64,
    attempts_left: u32,
    seq: u64,
}

/// Outcome of a verification, with a stable code for every failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    NotFound,
    Expired,
    Mismatch,
    TooManyAttempts,
}

impl Outcome {
    /// Stable code of a failure (`OtpVerifyResult.errorCode`); `None` for `Ok`.
    pub fn code(self) -> Option<&'static str> {
        match self {
            Self::Ok => None,
            Self::NotFound => Some("not_found"),
            Self::Expired => Some("expired"),
            Self::Mismatch => Some("mismatch"),
            Self::TooManyAttempts => Some("too_many_attempts"),
        }
    }

    /// Human-readable message of a failure (`OtpVerifyResult.error`); `None` for `Ok`.
    pub fn message(self) -> Option<&'static str> {
        match self {
            Self::Ok => None,
            Self::NotFound => Some("No code was issued for this key, or it was already used"),
            Self::Expired => Some("The code has expired"),
            Self::Mismatch => Some("Wrong code"),
            Self::TooManyAttempts => Some("Too many wrong codes: request a new one"),
        }
    }
}

/// The store's logic, with time passed in so it can be tested without sleeping.
pub struct Codes {
    digits: u32,
    ttl_ms: u64,
    max_attempts: u32,
    max_entries: usize,
    entries: HashMap<String, Entry>,
    order: VecDeque<(u64, String)>,
    next_seq: u64,
}

impl Codes {
    pub fn new(digits: u32, ttl_ms: u64, max_attempts: u32, max_entries: usize) -> Self {
        Self {
            digits,
            ttl_ms,
            max_attempts,
            max_entries,
            entries: HashMap::new(),
            order: VecDeque::new(),
            next_seq: 0,
        }
    }

    /// Length of the codes this store issues.
    pub fn digits(&self) -> u32 {
        self.digits
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Drops queue heads that are stale (re-issued or deleted keys) or, when `evict_live`, live.
    fn drop_front(&mut self, now_ms: u64, evict_live: bool) {
        while let Some((seq, key)) = self.order.front() {
            let current = self.entries.get(key).is_some_and(|e| e.seq == *seq);
            let expired = self
                .entries
                .get(key)
                .is_some_and(|e| e.expires_at_ms <= now_ms);
            if current && !expired && !evict_live {
                break;
            }
            if current {
                self.entries.remove(key);
            }
            self.order.pop_front();
            if current && evict_live {
                break;
            }
        }
    }

    pub fn issue(&mut self, key: &str, now_ms: u64, rng: &dyn SecureRandom) -> CallResult<String> {
        self.drop_front(now_ms, false);
        if !self.entries.contains_key(key) {
            while self.entries.len() >= self.max_entries {
                self.drop_front(now_ms, true);
            }
        }
        // Re-issues leave stale queue items behind; rebuild the queue before it outgrows the map.
        if self.order.len() > 2 * self.max_entries + 16 {
            let mut live: Vec<(u64, String)> = self
                .entries
                .iter()
                .map(|(k, e)| (e.seq, k.clone()))
                .collect();
            live.sort_unstable();
            self.order = live.into();
        }
        let code = random_code(rng, self.digits)?;
        let seq = self.next_seq;
        self.next_seq += 1;
        self.entries.insert(
            key.to_owned(),
            Entry {
                code: code.clone(),
                expires_at_ms: now_ms + self.ttl_ms,
                attempts_left: self.max_attempts,
                seq,
            },
        );
        self.order.push_back((seq, key.to_owned()));
        Ok(code)
    }

    /// Returns the outcome and the attempts left afterwards.
    pub fn verify(&mut self, key: &str, code: &str, now_ms: u64) -> (Outcome, u32) {
        let Some(entry) = self.entries.get_mut(key) else {
            return (Outcome::NotFound, 0);
        };
        if entry.expires_at_ms <= now_ms {
            self.entries.remove(key);
            return (Outcome::Expired, 0);
        }
        if entry.attempts_left == 0 {
            return (Outcome::TooManyAttempts, 0);
        }
        let matches: bool = entry.code.len() == code.len()
            && bool::from(entry.code.as_bytes().ct_eq(code.as_bytes()));
        if matches {
            self.entries.remove(key);
            return (Outcome::Ok, 0);
        }
        // The burned entry stays until it expires so later guesses keep getting `too_many_attempts`.
        entry.attempts_left -= 1;
        (Outcome::Mismatch, entry.attempts_left)
    }

    pub fn remove(&mut self, key: &str) -> bool {
        self.entries.remove(key).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::rand::SystemRandom;

    #[test]
    fn only_failures_have_a_code_and_a_message() {
        assert_eq!((Outcome::Ok.code(), Outcome::Ok.message()), (None, None));
        let failures = [
            Outcome::NotFound,
            Outcome::Expired,
            Outcome::Mismatch,
            Outcome::TooManyAttempts,
        ];
        let codes: Vec<_> = failures.iter().filter_map(|o| o.code()).collect();
        assert_eq!(
            codes,
            ["not_found", "expired", "mismatch", "too_many_attempts"]
        );
        assert!(failures
            .iter()
            .all(|o| o.message().is_some_and(|m| !m.is_empty())));
    }

    #[test]
    fn codes_are_single_use_and_expire() {
        let rng = SystemRandom::new();
        let mut s = Codes::new(6, 1000, 3, 10);
        let code = s.issue("a", 0, &rng).unwrap();
        assert_eq!(code.len(), 6);
        assert_eq!(s.verify("a", &code, 10), (Outcome::Ok, 0));
        assert_eq!(s.verify("a", &code, 20).0, Outcome::NotFound);
        let code = s.issue("b", 0, &rng).unwrap();
        assert_eq!(s.verify("b", &code, 1000).0, Outcome::Expired);
    }

    #[test]
    fn burns_after_max_attempts() {
        let rng = SystemRandom::new();
        let mut s = Codes::new(6, 1000, 2, 10);
        let code = s.issue("a", 0, &rng).unwrap();
        let wrong = if code == "000000" { "000001" } else { "000000" };
        assert_eq!(s.verify("a", wrong, 1), (Outcome::Mismatch, 1));
        assert_eq!(s.verify("a", "12", 1), (Outcome::Mismatch, 0));
        assert_eq!(s.verify("a", &code, 1), (Outcome::TooManyAttempts, 0));
    }

    #[test]
    fn memory_stays_bounded_and_evicts_oldest() {
        let rng = SystemRandom::new();
        let mut s = Codes::new(6, 1_000_000, 3, 100);
        let first = s.issue("k0", 0, &rng).unwrap();
        for i in 1..1000 {
            s.issue(&format!("k{i}"), i, &rng).unwrap();
            s.issue("hot", i, &rng).unwrap();
            assert!(s.len() <= 100);
            assert!(s.order.len() <= 2 * 100 + 17);
        }
        assert_eq!(s.verify("k0", &first, 1000).0, Outcome::NotFound);
    }

    #[test]
    fn digits_are_uniform_enough() {
        let rng = SystemRandom::new();
        let mut counts = [0u32; 10];
        for _ in 0..20_000 {
            let c = random_code(&rng, 4).unwrap();
            for b in c.bytes() {
                counts[(b - b'0') as usize] += 1;
            }
        }
        // 80k digits: each should be near 8000; 7000..9000 is > 10 sigma wide.
        assert!(
            counts.iter().all(|&n| (7000..9000).contains(&n)),
            "{counts:?}"
        );
    }
}
