//! Request ids: random (version 4) UUIDs, RFC 9562 §5.4.

/// Length of a hyphenated UUID.
pub const REQUEST_ID_LEN: usize = 36;

/// A fresh UUID v4, lower-case hyphenated, written into a stack buffer.
///
/// The randomness comes from `uuid`'s `fast-rng`: a thread-local ChaCha CSPRNG seeded from the
/// OS (via `rand`), so ids are unpredictable without a system call per request.
pub fn new_request_id() -> [u8; REQUEST_ID_LEN] {
    let mut buf = [0u8; REQUEST_ID_LEN];
    uuid::Uuid::new_v4().hyphenated().encode_lower(&mut buf);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_version_4_variant_10_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let id = new_request_id();
            let s = std::str::from_utf8(&id).unwrap();
            assert_eq!(s.len(), 36);
            assert_eq!(&s[14..15], "4");
            assert!(matches!(&s[19..20], "8" | "9" | "a" | "b"));
            assert!(s
                .chars()
                .all(|c| c == '-' || c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
            assert!(seen.insert(id));
        }
    }
}
