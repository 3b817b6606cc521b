//! Blob ids: the first 128 bits of the blake3 hash of a blob's bytes, written as 32 lowercase
//! hex digits.

/// A blob id as bytes.
pub type BlobId = [u8; 16];

/// The blob id of some bytes.
pub fn blob_id(bytes: &[u8]) -> BlobId {
    let mut id = [0u8; 16];
    blake3::Hasher::new().update(bytes).finalize_xof().fill(&mut id);
    id
}

/// Lowercase hex of bytes (hashes, ids).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// True for a well-formed blob id: 32 lowercase hex digits.
pub fn is_blob_id(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
