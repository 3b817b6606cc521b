//! Blob ids: the first 128 bits of the blake3 hash of a blob's bytes, written as 32 lowercase
//! hex digits. And compile ids as tables show them.

/// A blob id as bytes.
pub type BlobId = [u8; 16];

/// The blob id of some bytes.
pub fn blob_id(bytes: &[u8]) -> BlobId {
    blob_id_of(blake3::Hasher::new().update(bytes))
}

/// The blob id of the bytes a hasher was fed (for blobs hashed as they stream by).
pub fn blob_id_of(hasher: &blake3::Hasher) -> BlobId {
    let mut id = [0u8; 16];
    hasher.finalize_xof().fill(&mut id);
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

/// The bytes of a blob id written as 32 lowercase hex digits; `None` for anything else.
pub fn parse_blob_id(s: &str) -> Option<BlobId> {
    is_blob_id(s).then(|| u128::from_str_radix(s, 16).ok()).flatten().map(u128::to_be_bytes)
}

/// A compile id as tables display it (`[0/1]`, `[0/1_2]`, `[!0/1/2]`, `[!0/-/-]`), from the same
/// with or without its brackets (`0/1`), surrounding whitespace ignored.
pub fn displayed_compile_id(id: &str) -> String {
    let id = id.trim();
    if id.starts_with('[') && id.ends_with(']') { id.to_string() } else { format!("[{id}]") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_ids_are_displayed_with_brackets() {
        for (given, shown) in [("0/1", "[0/1]"), ("[0/1]", "[0/1]"), (" !0/1/2 ", "[!0/1/2]"), ("[0/1_2]", "[0/1_2]")] {
            assert_eq!(displayed_compile_id(given), shown);
        }
    }

    #[test]
    fn blob_ids_round_trip_through_hex_and_nothing_else_parses() {
        let id = blob_id(b"payload");
        assert_eq!(parse_blob_id(&hex(&id)), Some(id));
        for bad in ["", "ff", "000000000000000000000000000000FF", "+00000000000000000000000000000ff"] {
            assert_eq!(parse_blob_id(bad), None, "{bad:?}");
        }
    }
}
