//! Key material that never shows up in logs: `Debug` prints its length only, and the bytes
//! are overwritten when the value is dropped.

use zeroize::Zeroize;

/// Secret bytes (an HS256 key). Cloning copies the bytes; every copy is wiped on drop.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl Secret {
    pub fn new(bytes: Vec<u8>) -> Self {
        Secret(bytes)
    }

    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<&[u8]> for Secret {
    fn from(bytes: &[u8]) -> Self {
        Secret(bytes.to_vec())
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret([redacted; {} bytes])", self.0.len())
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        // Wipes the whole allocation (length and spare capacity), not only the live bytes.
        self.0.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_hides_the_bytes() {
        let secret = Secret::from(&b"hunter2-hunter2-hunter2-hunter2!"[..]);
        let shown = format!("{secret:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("104"), "{shown}"); // nor as a byte list
        assert_eq!(shown, "Secret([redacted; 32 bytes])");
    }

    #[test]
    fn exposes_the_bytes_on_purpose_only() {
        let secret = Secret::new(b"key".to_vec());
        assert_eq!(secret.expose(), b"key");
        assert_eq!(secret.len(), 3);
        assert!(!secret.is_empty());
    }
}
