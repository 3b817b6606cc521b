//! Finding where a JSON string ends, 64 bytes at a time: the scan under every split and check of
//! raw JSON text ([`super::json_text`]).
//!
//! torch's metrics hold config strings of 28 KB in which every 18th byte is an escaped quote.
//! Stopping at each backslash (`memchr2`) made their scan a call per escape; a block's quotes and
//! backslashes are found at once instead, and the quotes a run of backslashes escapes are told
//! from the real one with carry arithmetic (the method of simdjson: Langdale and Lemire,
//! "Parsing Gigabytes of JSON per Second", 2019), with no stop per escape.

/// Where the string whose text starts at `i` ends: just past its closing quote (the end of
/// `text` when it has none). A backslash escapes the byte after it, whatever that byte is.
pub fn string_end(text: &[u8], i: usize) -> usize {
    let mut escaped_carry = 0;
    let mut at = i;
    while at < text.len() {
        let (bits, valid) = block_at(text, at, BlockBits::of);
        let escaped = escaped_bits(bits.backslashes, &mut escaped_carry);
        // Bits past the text's end are padding, never quotes.
        let closing = bits.quotes & !escaped & valid;
        if closing != 0 {
            return at + closing.trailing_zeros() as usize + 1;
        }
        at += 64;
    }
    text.len()
}

/// Where the string whose text starts at `i` ends, as [`string_end`], when it is a well-formed
/// JSON string: closed, with no control character (U+0000 to U+001F) before its closing quote,
/// and every escape one of JSON's (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, or `\u` and
/// four hex digits). `None` for any other. The same block scan, with a third mask for control
/// characters; escapes are looked at one by one, only where a block has them.
pub fn checked_string_end(text: &[u8], i: usize) -> Option<usize> {
    // Most strings of a log (keys, ids, dtypes) are short and plain: read a byte at a time until
    // the first that is not plain, where a block costs more than the whole string.
    let mut at = i;
    while at < text.len().min(i + SHORT_STRING) {
        match text[at] {
            b'"' => return Some(at + 1),
            b'\\' | 0..0x20 => break,
            _ => at += 1,
        }
    }
    // No backslash before `at`: the block scan starts there with nothing escaped.
    let mut escaped_carry = 0;
    while at < text.len() {
        let (bits, valid) = block_at(text, at, BlockBits::with_controls);
        let escaped = escaped_bits(bits.backslashes, &mut escaped_carry);
        let closing = bits.quotes & !escaped & valid;
        // The string's bytes in this block: those before its closing quote, if it has one here.
        let inside = if closing == 0 { valid } else { (closing & closing.wrapping_neg()) - 1 };
        if bits.controls & inside != 0 {
            return None;
        }
        // An escaped quote or backslash is valid; only other escapes are looked at.
        let mut escapes = escaped & inside & !(bits.quotes | bits.backslashes);
        while escapes != 0 {
            if !valid_escape(text, at + escapes.trailing_zeros() as usize) {
                return None;
            }
            escapes &= escapes - 1;
        }
        if closing != 0 {
            return Some(at + closing.trailing_zeros() as usize + 1);
        }
        at += 64;
    }
    None
}

/// Where the string whose text starts at `i` ends, as [`checked_string_end`], when it is plain:
/// closed, with no escape and no control character. A byte at a time: for keys, which are short.
pub fn plain_string_end(text: &[u8], i: usize) -> Option<usize> {
    let len = text[i..].iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    (text[i + len] == b'"').then_some(i + len + 1)
}

/// How many bytes of a string [`checked_string_end`] reads one by one before it scans blocks.
const SHORT_STRING: usize = 24;

/// The masks of the 64 bytes of `text` from `at`, and which bits are bytes of the text: a whole
/// block is read where it lies, the last, short one from a copy padded with spaces (no quote,
/// backslash nor control character).
#[inline(always)]
fn block_at(text: &[u8], at: usize, scan: fn(&[u8; 64]) -> BlockBits) -> (BlockBits, u64) {
    match text.get(at..at + 64) {
        Some(block) => (scan(block.try_into().expect("64 bytes")), u64::MAX),
        None => {
            let rest = &text[at..];
            let mut padded = [b' '; 64];
            padded[..rest.len()].copy_from_slice(rest);
            (scan(&padded), (1 << rest.len()) - 1)
        }
    }
}

/// Whether the byte at `at`, which a backslash escapes, makes an escape JSON has.
fn valid_escape(text: &[u8], at: usize) -> bool {
    match text[at] {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => true,
        b'u' => text.get(at + 1..at + 5).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)),
        _ => false,
    }
}

/// Where the quotes and backslashes of 64 bytes are: bit k for byte k; and, when asked for,
/// the control characters.
struct BlockBits {
    quotes: u64,
    backslashes: u64,
    controls: u64,
}

impl BlockBits {
    /// Quotes and backslashes only (`controls` left empty).
    #[inline(always)]
    fn of(block: &[u8; 64]) -> BlockBits {
        Self::scan::<false>(block)
    }

    fn with_controls(block: &[u8; 64]) -> BlockBits {
        Self::scan::<true>(block)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn scan<const CONTROLS: bool>(block: &[u8; 64]) -> BlockBits {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_set1_epi8,
        };
        let (mut quotes, mut backslashes, mut controls) = (0, 0, 0);
        // SAFETY: SSE2 is part of every x86_64 CPU (these intrinsics need nothing else), and each
        // unaligned load reads the 16 bytes of `chunk`, which is 16 bytes long.
        unsafe {
            let (quote, backslash) = (_mm_set1_epi8(b'"' as i8), _mm_set1_epi8(b'\\' as i8));
            let last_control = _mm_set1_epi8(0x1f);
            for (k, chunk) in block.chunks_exact(16).enumerate() {
                let lanes = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
                let mask = |eq| u64::from(_mm_movemask_epi8(eq) as u16) << (16 * k);
                quotes |= mask(_mm_cmpeq_epi8(lanes, quote));
                backslashes |= mask(_mm_cmpeq_epi8(lanes, backslash));
                if CONTROLS {
                    // A byte is at most 0x1f when the larger of it and 0x1f (unsigned) is 0x1f.
                    controls |= mask(_mm_cmpeq_epi8(_mm_max_epu8(lanes, last_control), last_control));
                }
            }
        }
        BlockBits { quotes, backslashes, controls }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn scan<const CONTROLS: bool>(block: &[u8; 64]) -> BlockBits {
        let bits = |hit: &dyn Fn(u8) -> bool| {
            block.iter().enumerate().fold(0, |bits, (k, &b)| bits | (u64::from(hit(b)) << k))
        };
        BlockBits {
            quotes: bits(&|b| b == b'"'),
            backslashes: bits(&|b| b == b'\\'),
            controls: if CONTROLS { bits(&|b| b < 0x20) } else { 0 },
        }
    }
}

/// The bytes a backslash escapes, given a block's backslashes: those after an odd-length run of
/// backslashes. `carry` says whether the block's first byte is escaped (the previous block ended
/// in such a run), and is set for the next block.
fn escaped_bits(backslashes: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    // An escaped backslash starts no run.
    let backslashes = backslashes & !*carry;
    let follows_backslash = (backslashes << 1) | *carry;
    // Runs starting at odd bits; adding the run to its start carries past its end, so the bit
    // past the end lands on an even or odd position according to the run's length.
    let odd_starts = backslashes & !EVEN & !follows_backslash;
    let (from_odd_starts, overflow) = odd_starts.overflowing_add(backslashes);
    *carry = u64::from(overflow);
    let invert = from_odd_starts << 1;
    (EVEN ^ invert) & follows_backslash
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The plain reading: a byte at a time, a backslash skipping the byte after it.
    fn string_end_bytewise(text: &[u8], mut i: usize) -> usize {
        while i < text.len() {
            match text[i] {
                b'"' => return i + 1,
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
        text.len()
    }

    #[test]
    fn escaped_quotes_and_backslashes() {
        assert_eq!(string_end(br#"abc" x"#, 0), 4);
        assert_eq!(string_end(br#"a\"b" x"#, 0), 5);
        assert_eq!(string_end(br#"a\\" x"#, 0), 4);
        assert_eq!(string_end(br#"a\\\"" x"#, 0), 6);
        assert_eq!(string_end(br#"no end\"#, 0), 7);
        assert_eq!(string_end(b"", 0), 0);
        // At the end of the first block an escaped backslash, then an escaped quote, then the
        // closing quote.
        let mut text = vec![b'a'; 62];
        text.extend_from_slice(br#"\\"#);
        text.extend_from_slice(br#"\""#);
        text.push(b'"');
        assert_eq!(string_end(&text, 0), 67);
        // A backslash ending the first block escapes the quote that starts the second.
        let mut text = vec![b'a'; 63];
        text.extend_from_slice(br#"\""#);
        text.push(b'"');
        assert_eq!(string_end(&text, 0), 66);
    }

    proptest! {
        /// Wherever it starts, the block scan ends a string where the byte-at-a-time reading
        /// does: runs of backslashes of any length, across block boundaries, with or without a
        /// closing quote.
        #[test]
        fn ends_where_a_bytewise_reading_ends(
            text in proptest::collection::vec(prop_oneof![Just(b'"'), Just(b'\\'), Just(b'a'), any::<u8>()], 0..300),
            start in 0usize..300,
        ) {
            let start = start.min(text.len());
            prop_assert_eq!(string_end(&text, start), string_end_bytewise(&text, start));
        }

        /// Strings long enough to cross blocks, made of plain bytes and escapes (a backslash and
        /// any byte, a quote or a backslash most often), then text after the closing quote: the
        /// scan ends just past that quote, wherever the escapes fall against block boundaries.
        #[test]
        fn long_strings_end_at_their_closing_quote(
            units in proptest::collection::vec(prop_oneof![
                2 => Just(vec![b'a']),
                1 => Just(br#"\""#.to_vec()),
                1 => Just(br#"\\"#.to_vec()),
                1 => any::<u8>().prop_map(|b| vec![b'\\', b]),
            ], 0..200),
            closed in any::<bool>(),
        ) {
            let mut text: Vec<u8> = units.concat();
            let body = text.len();
            if closed {
                text.extend_from_slice(br#"" tail "x""#);
            }
            let expected = if closed { body + 1 } else { body };
            prop_assert_eq!(string_end(&text, 0), expected);
            prop_assert_eq!(string_end_bytewise(&text, 0), expected);
        }
    }
}
