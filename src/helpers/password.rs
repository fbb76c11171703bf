//! Argon2 password hashing (RFC 9106) on `argon2-rust`, the SIMD port @node-rs/argon2 also uses.
//!
//! Every cost is capped before any memory is touched, on hashing *and* on verifying, because a
//! stored hash is input too: a PHC string claiming `m=4194304` would otherwise make one call
//! allocate 4 GiB.

use argon2_rust::params::{Memory, TagLen};
use argon2_rust::{decode_phc, encode_string_alloc, Algorithm, Argon2, Decoded, Params, Version};
use ring::rand::{SecureRandom, SystemRandom};

use crate::call_error::{int_in, CallError, CallResult, ErrorClass};

/// OWASP Password Storage Cheat Sheet: m=19 MiB, t=2, p=1.
pub const DEFAULT_MEMORY_KIB: u32 = 19_456;
pub const DEFAULT_TIME_COST: u32 = 2;
pub const DEFAULT_PARALLELISM: u32 = 1;
/// Memory cap for hashing and verifying: 256 MiB per call.
pub const MAX_MEMORY_KIB: u32 = 262_144;
pub const MAX_TIME_COST: u32 = 16;
pub const MAX_PARALLELISM: u32 = 16;
/// Longest accepted password, in UTF-8 bytes.
pub const MAX_PASSWORD_BYTES: usize = 4096;
/// Longest accepted pepper, in bytes.
pub const MAX_SECRET_BYTES: usize = 1024;
/// Longest PHC string we try to parse.
pub const MAX_HASH_CHARS: usize = 1024;
const SALT_BYTES: usize = 16;
const TAG_BYTES: usize = 32;
/// Tags and salts longer than this in a stored hash are refused (ours are 32/16).
const MAX_STORED_TAG_OR_SALT: usize = 256;

/// Validated Argon2id costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Costs {
    pub memory_kib: u32,
    pub time_cost: u32,
    pub parallelism: u32,
}

impl Default for Costs {
    fn default() -> Self {
        Self {
            memory_kib: DEFAULT_MEMORY_KIB,
            time_cost: DEFAULT_TIME_COST,
            parallelism: DEFAULT_PARALLELISM,
        }
    }
}

impl Costs {
    /// Costs from the JS option numbers (absent = default), checked: whole numbers within the
    /// caps, or `ERR_OUT_OF_RANGE` naming the option.
    pub fn from_options(
        memory_cost: Option<f64>,
        time_cost: Option<f64>,
        parallelism: Option<f64>,
    ) -> CallResult<Self> {
        let d = Self::default();
        let read = |v, name, default: u32| {
            int_in(v, name, 0, u32::MAX as u64, default as u64).map(|n| n as u32)
        };
        Self {
            memory_kib: read(memory_cost, "options.memoryCost", d.memory_kib)?,
            time_cost: read(time_cost, "options.timeCost", d.time_cost)?,
            parallelism: read(parallelism, "options.parallelism", d.parallelism)?,
        }
        .checked()
    }

    /// Checks the costs against the algorithm minimums and our caps.
    pub fn checked(self) -> CallResult<Self> {
        if self.parallelism == 0 || self.parallelism > MAX_PARALLELISM {
            return Err(CallError::out_of_range(
                "options.parallelism",
                &format!("must be between 1 and {MAX_PARALLELISM}"),
            ));
        }
        let min_memory = 8 * self.parallelism;
        if self.memory_kib < min_memory || self.memory_kib > MAX_MEMORY_KIB {
            return Err(CallError::out_of_range(
                "options.memoryCost",
                &format!("must be between {min_memory} (8 * parallelism) and {MAX_MEMORY_KIB} KiB"),
            ));
        }
        if self.time_cost == 0 || self.time_cost > MAX_TIME_COST {
            return Err(CallError::out_of_range(
                "options.timeCost",
                &format!("must be between 1 and {MAX_TIME_COST}"),
            ));
        }
        Ok(self)
    }

    fn params(self, tag_len: usize) -> CallResult<Params> {
        Params::builder()
            .memory(Memory::kib(self.memory_kib as u64))
            .passes(self.time_cost)
            .lanes(self.parallelism)
            .tag_len(TagLen::bytes(tag_len as u64))
            .build()
            .map_err(|e| invalid_hash(&format!("has unusable parameters ({e})")))
    }
}

fn invalid_hash(why: &str) -> CallError {
    CallError::new(ErrorClass::Type, "ERR_INVALID_HASH", format!("hash {why}"))
}

fn too_costly(what: &str) -> CallError {
    CallError::new(
        ErrorClass::Range,
        "ERR_HASH_TOO_COSTLY",
        format!("hash parameters exceed the caps: {what}"),
    )
}

fn argon2_failure(e: argon2_rust::Error) -> CallError {
    CallError::new(
        ErrorClass::Plain,
        "ERR_AUTH_SHIELD_ARGON2",
        format!("argon2 failed: {e}"),
    )
}

/// Checks a pepper's size.
pub fn check_secret(secret: &[u8]) -> CallResult<()> {
    if secret.len() > MAX_SECRET_BYTES {
        return Err(CallError::out_of_range(
            "options.secret",
            &format!("must be at most {MAX_SECRET_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// Checks the password size cap shared by hash and verify.
pub fn check_password(password: &[u8]) -> CallResult<()> {
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(CallError::out_of_range(
            "password",
            &format!("must be at most {MAX_PASSWORD_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// Hashes with Argon2id v1.3, a fresh 16-byte salt and a 32-byte tag; returns the PHC string.
pub fn hash(password: &[u8], costs: Costs, secret: &[u8]) -> CallResult<String> {
    check_password(password)?;
    let costs = costs.checked()?;
    let mut salt = [0u8; SALT_BYTES];
    SystemRandom::new()
        .fill(&mut salt)
        .map_err(|_| CallError::random_failed())?;
    let params = costs.params(TAG_BYTES)?;
    let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
    let mut tag = [0u8; TAG_BYTES];
    argon
        .hash_into_with_ad(password, &salt, secret, &[], &mut tag)
        .map_err(argon2_failure)?;
    encode_string_alloc(Algorithm::Argon2id, Version::V0x13, &params, &salt, &tag)
        .map_err(argon2_failure)
}

/// Parses a PHC string (argon2i/argon2d/argon2id, any library) and enforces the cost caps.
pub fn parse(encoded: &str) -> CallResult<Decoded> {
    if encoded.len() > MAX_HASH_CHARS {
        return Err(invalid_hash(&format!(
            "is longer than {MAX_HASH_CHARS} characters"
        )));
    }
    // Cheap pre-checks on the text itself, so no huge allocation happens on hostile input.
    let fields: Vec<&str> = encoded.split('$').collect();
    if fields.len() < 5 || !fields[0].is_empty() || !fields[1].starts_with("argon2") {
        return Err(invalid_hash(
            "is not an Argon2 PHC string ($argon2id$v=19$m=..,t=..,p=..$salt$hash)",
        ));
    }
    let decoded = decode_phc(encoded).map_err(|e| invalid_hash(&format!("is malformed ({e})")))?;
    let p = &decoded.params;
    if p.memory_kib() > MAX_MEMORY_KIB {
        return Err(too_costly(&format!(
            "m={} > {MAX_MEMORY_KIB}",
            p.memory_kib()
        )));
    }
    if p.passes() > MAX_TIME_COST {
        return Err(too_costly(&format!("t={} > {MAX_TIME_COST}", p.passes())));
    }
    if p.lanes() > MAX_PARALLELISM {
        return Err(too_costly(&format!("p={} > {MAX_PARALLELISM}", p.lanes())));
    }
    if decoded.hash.len() > MAX_STORED_TAG_OR_SALT || decoded.salt.len() > MAX_STORED_TAG_OR_SALT {
        return Err(too_costly("salt or tag longer than 256 bytes"));
    }
    Ok(decoded)
}

/// Recomputes the tag for `password` under the parsed hash; compares in constant time.
pub fn verify(decoded: &Decoded, password: &[u8], secret: &[u8]) -> CallResult<bool> {
    check_password(password)?;
    let argon = Argon2::new(decoded.algorithm, decoded.version, decoded.params);
    match argon.verify_with_ad(password, &decoded.salt, secret, &decoded.ad, &decoded.hash) {
        Ok(()) => Ok(true),
        Err(argon2_rust::Error::VerifyMismatch) => Ok(false),
        Err(e) => Err(argon2_failure(e)),
    }
}

/// True when the stored hash is weaker than (or differs from) what `wanted` would produce now.
pub fn needs_rehash(decoded: &Decoded, wanted: Costs) -> bool {
    let p = &decoded.params;
    decoded.algorithm != Algorithm::Argon2id
        || decoded.version != Version::V0x13
        || p.memory_kib() < wanted.memory_kib
        || p.passes() < wanted.time_cost
        || p.lanes() != wanted.parallelism
        || decoded.salt.len() < SALT_BYTES
        || decoded.hash.len() < TAG_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAST: Costs = Costs {
        memory_kib: 64,
        time_cost: 1,
        parallelism: 1,
    };

    #[test]
    fn hashes_and_verifies_with_and_without_pepper() {
        let h = hash(b"hunter2", FAST, b"").unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=64,t=1,p=1$"));
        let d = parse(&h).unwrap();
        assert!(verify(&d, b"hunter2", b"").unwrap());
        assert!(!verify(&d, b"hunter3", b"").unwrap());
        let peppered = hash(b"pw", FAST, b"server-pepper").unwrap();
        let d = parse(&peppered).unwrap();
        assert!(verify(&d, b"pw", b"server-pepper").unwrap());
        assert!(!verify(&d, b"pw", b"").unwrap());
    }

    #[test]
    fn verifies_hashes_from_rustcrypto_argon2_and_back() {
        use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
        for alg in [
            argon2::Algorithm::Argon2i,
            argon2::Algorithm::Argon2d,
            argon2::Algorithm::Argon2id,
        ] {
            let params = argon2::Params::new(64, 2, 2, None).unwrap();
            let theirs = argon2::Argon2::new(alg, argon2::Version::V0x13, params);
            let salt = SaltString::encode_b64(b"0123456789abcdef").unwrap();
            let phc = theirs.hash_password(b"pw", &salt).unwrap().to_string();
            let d = parse(&phc).unwrap();
            assert!(verify(&d, b"pw", b"").unwrap(), "{phc}");
            assert!(!verify(&d, b"px", b"").unwrap());
        }
        let ours = hash(b"pw", FAST, b"").unwrap();
        let parsed = PasswordHash::new(&ours).unwrap();
        assert!(argon2::Argon2::default()
            .verify_password(b"pw", &parsed)
            .is_ok());
    }

    #[test]
    fn rejects_malformed_hashes_with_a_code() {
        for bad in [
            "",
            "nope",
            "$argon2id$",
            "$bcrypt$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaA",
            "$argon2id$v=19$m=64,t=1,p=1$!!!$###",
            "$argon2id$v=19$m=x,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g",
        ] {
            assert_eq!(parse(bad).unwrap_err().code, "ERR_INVALID_HASH", "{bad:?}");
        }
        assert_eq!(
            parse(&"$".repeat(2000)).unwrap_err().code,
            "ERR_INVALID_HASH"
        );
    }

    #[test]
    fn refuses_stored_hash_above_cost_caps() {
        let huge = "$argon2id$v=19$m=4194304,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA";
        assert_eq!(parse(huge).unwrap_err().code, "ERR_HASH_TOO_COSTLY");
        let slow = "$argon2id$v=19$m=64,t=1000,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA";
        assert_eq!(parse(slow).unwrap_err().code, "ERR_HASH_TOO_COSTLY");
    }

    #[test]
    fn checks_costs_and_password_length() {
        assert!(Costs {
            memory_kib: MAX_MEMORY_KIB + 1,
            ..Costs::default()
        }
        .checked()
        .is_err());
        assert!(Costs {
            time_cost: 0,
            ..Costs::default()
        }
        .checked()
        .is_err());
        assert!(Costs {
            parallelism: 17,
            ..Costs::default()
        }
        .checked()
        .is_err());
        assert!(Costs {
            memory_kib: 15,
            parallelism: 2,
            time_cost: 1
        }
        .checked()
        .is_err());
        assert!(Costs::default().checked().is_ok());
        let long = vec![b'a'; MAX_PASSWORD_BYTES + 1];
        assert_eq!(hash(&long, FAST, b"").unwrap_err().code, "ERR_OUT_OF_RANGE");
    }

    #[test]
    fn needs_rehash_flags_weaker_params_and_other_variants() {
        let d = parse(&hash(b"pw", FAST, b"").unwrap()).unwrap();
        assert!(needs_rehash(&d, Costs::default()));
        assert!(!needs_rehash(&d, FAST));
        let argon2i = "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g";
        assert!(needs_rehash(&parse(argon2i).unwrap(), FAST));
    }
}
