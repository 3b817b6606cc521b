//! md5 of many messages at once, one message to a SIMD lane: a batch's payloads are checked
//! against their `has_payload` digests here.
//!
//! One md5 is a chain of 64 dependent steps a block, so wider vectors do not make one message
//! go faster. Sixteen independent messages side by side, each in a lane of the same vector
//! steps, do: many times the throughput of `md-5` (the RustCrypto crate, which hashes one
//! message at a time and which the tests check this against). The lanes' steps are plain Rust over arrays of 16
//! words, which the compiler turns into vector instructions, compiled for AVX-512 and AVX2 and
//! picked by what the CPU has.

use md5::block_api::compress;

/// Messages hashed side by side.
const LANES: usize = 16;
/// One word of each lane.
type Lanes = [u32; LANES];

/// md5's initial state (RFC 1321, 3.3).
const INIT: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// The additive constant of each step: the integer part of 2^32 × |sin(step + 1)| (RFC 1321, 3.4).
#[rustfmt::skip]
const K: [u32; 64] = [
    0xd76a_a478, 0xe8c7_b756, 0x2420_70db, 0xc1bd_ceee, 0xf57c_0faf, 0x4787_c62a, 0xa830_4613, 0xfd46_9501,
    0x6980_98d8, 0x8b44_f7af, 0xffff_5bb1, 0x895c_d7be, 0x6b90_1122, 0xfd98_7193, 0xa679_438e, 0x49b4_0821,
    0xf61e_2562, 0xc040_b340, 0x265e_5a51, 0xe9b6_c7aa, 0xd62f_105d, 0x0244_1453, 0xd8a1_e681, 0xe7d3_fbc8,
    0x21e1_cde6, 0xc337_07d6, 0xf4d5_0d87, 0x455a_14ed, 0xa9e3_e905, 0xfcef_a3f8, 0x676f_02d9, 0x8d2a_4c8a,
    0xfffa_3942, 0x8771_f681, 0x6d9d_6122, 0xfde5_380c, 0xa4be_ea44, 0x4bde_cfa9, 0xf6bb_4b60, 0xbebf_bc70,
    0x289b_7ec6, 0xeaa1_27fa, 0xd4ef_3085, 0x0488_1d05, 0xd9d4_d039, 0xe6db_99e5, 0x1fa2_7cf8, 0xc4ac_5665,
    0xf429_2244, 0x432a_ff97, 0xab94_23a7, 0xfc93_a039, 0x655b_59c3, 0x8f0c_cc92, 0xffef_f47d, 0x8584_5dd1,
    0x6fa8_7e4f, 0xfe2c_e6e0, 0xa301_4314, 0x4e08_11a1, 0xf753_7e82, 0xbd3a_f235, 0x2ad7_d2bb, 0xeb86_d391,
];

/// The md5 digest of each message, in order.
pub fn md5_each(messages: &[&[u8]]) -> Vec<[u8; 16]> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            return unsafe { md5_each_avx512(messages) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { md5_each_avx2(messages) };
        }
    }
    md5_each_in_lanes(messages)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn md5_each_avx512(messages: &[&[u8]]) -> Vec<[u8; 16]> {
    md5_each_in_lanes(messages)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn md5_each_avx2(messages: &[&[u8]]) -> Vec<[u8; 16]> {
    md5_each_in_lanes(messages)
}

/// A message in a lane: its whole blocks, read where they are, then its padded tail.
struct Lane<'m> {
    message: usize,
    whole: &'m [u8],
    /// The last bytes (fewer than 64), md5's `0x80`, zeros and the length in bits: one block or
    /// two.
    tail: [u8; 128],
    blocks: usize,
    at: usize,
}

impl<'m> Lane<'m> {
    fn new(message: usize, bytes: &'m [u8]) -> Self {
        let whole_len = bytes.len() / 64 * 64;
        let (whole, rest) = bytes.split_at(whole_len);
        let mut tail = [0; 128];
        tail[..rest.len()].copy_from_slice(rest);
        tail[rest.len()] = 0x80;
        // The length takes the last 8 bytes of the tail; `0x80` needs one byte before them.
        let tail_len = if rest.len() < 56 { 64 } else { 128 };
        tail[tail_len - 8..tail_len].copy_from_slice(&(bytes.len() as u64).wrapping_mul(8).to_le_bytes());
        Lane { message, whole, tail, blocks: (whole_len + tail_len) / 64, at: 0 }
    }

    /// The lane's next block.
    fn block(&self) -> &[u8] {
        let whole = self.whole.len() / 64;
        if self.at < whole { &self.whole[self.at * 64..][..64] } else { &self.tail[(self.at - whole) * 64..][..64] }
    }

    /// Its remaining blocks, hashed one after the other into `state` (a lane left alone).
    fn finish_alone(&mut self, state: &mut [u32; 4]) {
        while self.at < self.blocks {
            let block: [u8; 64] = self.block().try_into().expect("blocks are 64 bytes");
            compress(state, &[block]);
            self.at += 1;
        }
    }
}

/// Lanes filled with the longest messages first, so that the short ones left at the end keep
/// every lane busy; a message left alone in the lanes is finished on its own.
#[inline(always)]
fn md5_each_in_lanes(messages: &[&[u8]]) -> Vec<[u8; 16]> {
    let mut digests = vec![[0; 16]; messages.len()];
    let mut order: Vec<usize> = (0..messages.len()).collect();
    order.sort_by_key(|&m| std::cmp::Reverse(messages[m].len()));
    let mut waiting = order.into_iter();
    let mut lanes: [Option<Lane<'_>>; LANES] = std::array::from_fn(|_| None);
    let mut state: [Lanes; 4] = [[0; LANES]; 4];
    loop {
        for (l, lane) in lanes.iter_mut().enumerate() {
            if lane.is_none()
                && let Some(m) = waiting.next()
            {
                *lane = Some(Lane::new(m, messages[m]));
                (0..4).for_each(|word| state[word][l] = INIT[word]);
            }
        }
        let mut busy = lanes.iter().enumerate().filter(|(_, lane)| lane.is_some());
        match (busy.next(), busy.next()) {
            (None, _) => return digests,
            (Some((l, _)), None) => {
                let mut alone = lanes[l].take().expect("a busy lane");
                let mut words = lane_state(&state, l);
                alone.finish_alone(&mut words);
                digests[alone.message] = digest(words);
                continue;
            }
            _ => {}
        }
        let mut block: [Lanes; 16] = [[0; LANES]; 16];
        for (l, lane) in lanes.iter().enumerate() {
            if let Some(lane) = lane {
                for (word, bytes) in lane.block().chunks_exact(4).enumerate() {
                    block[word][l] = u32::from_le_bytes(bytes.try_into().expect("4 bytes"));
                }
            }
        }
        compress_lanes(&mut state, &block);
        for (l, slot) in lanes.iter_mut().enumerate() {
            if let Some(lane) = slot {
                lane.at += 1;
                if lane.at == lane.blocks {
                    digests[lane.message] = digest(lane_state(&state, l));
                    *slot = None;
                }
            }
        }
    }
}

/// The state of lane `l` alone.
fn lane_state(state: &[Lanes; 4], l: usize) -> [u32; 4] {
    std::array::from_fn(|word| state[word][l])
}

fn digest(state: [u32; 4]) -> [u8; 16] {
    let mut out = [0; 16];
    for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
        bytes.copy_from_slice(&word.to_le_bytes());
    }
    out
}

/// One step of every lane: `a = b + ((a + mix(b, c, d) + k + word) <<< shift)`.
#[inline(always)]
fn step(
    a: &mut Lanes,
    b: &Lanes,
    c: &Lanes,
    d: &Lanes,
    word: &Lanes,
    (k, shift): (u32, u32),
    mix: impl Fn(u32, u32, u32) -> u32,
) {
    for l in 0..LANES {
        let sum = a[l].wrapping_add(mix(b[l], c[l], d[l])).wrapping_add(k).wrapping_add(word[l]);
        a[l] = b[l].wrapping_add(sum.rotate_left(shift));
    }
}

/// One block of every lane (RFC 1321, 3.4): four rounds of sixteen steps.
#[inline(always)]
fn compress_lanes(state: &mut [Lanes; 4], block: &[Lanes; 16]) {
    let [mut a, mut b, mut c, mut d] = *state;
    let f = |x: u32, y: u32, z: u32| (x & y) | (!x & z);
    let g = |x: u32, y: u32, z: u32| (x & z) | (y & !z);
    let h = |x: u32, y: u32, z: u32| x ^ y ^ z;
    let i = |x: u32, y: u32, z: u32| y ^ (x | !z);
    macro_rules! steps {
        ($mix:expr, $at:expr, [$($w:expr),*], [$s0:expr, $s1:expr, $s2:expr, $s3:expr]) => {
            let words = [$($w),*];
            steps!(@four $mix, $at, words, 0, $s0, $s1, $s2, $s3);
            steps!(@four $mix, $at + 4, words, 4, $s0, $s1, $s2, $s3);
            steps!(@four $mix, $at + 8, words, 8, $s0, $s1, $s2, $s3);
            steps!(@four $mix, $at + 12, words, 12, $s0, $s1, $s2, $s3);
        };
        (@four $mix:expr, $at:expr, $words:ident, $n:expr, $s0:expr, $s1:expr, $s2:expr, $s3:expr) => {
            step(&mut a, &b, &c, &d, &block[$words[$n]], (K[$at], $s0), $mix);
            step(&mut d, &a, &b, &c, &block[$words[$n + 1]], (K[$at + 1], $s1), $mix);
            step(&mut c, &d, &a, &b, &block[$words[$n + 2]], (K[$at + 2], $s2), $mix);
            step(&mut b, &c, &d, &a, &block[$words[$n + 3]], (K[$at + 3], $s3), $mix);
        };
    }
    steps!(f, 0, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [7, 12, 17, 22]);
    steps!(g, 16, [1, 6, 11, 0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12], [5, 9, 14, 20]);
    steps!(h, 32, [5, 8, 11, 14, 1, 4, 7, 10, 13, 0, 3, 6, 9, 12, 15, 2], [4, 11, 16, 23]);
    steps!(i, 48, [0, 7, 14, 5, 12, 3, 10, 1, 8, 15, 6, 13, 4, 11, 2, 9], [6, 10, 15, 21]);
    for (word, new) in state.iter_mut().zip([a, b, c, d]) {
        for l in 0..LANES {
            word[l] = word[l].wrapping_add(new[l]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use md5::{Digest, Md5};
    use proptest::prelude::*;

    fn expected(messages: &[&[u8]]) -> Vec<[u8; 16]> {
        messages.iter().map(|m| Md5::digest(m).into()).collect()
    }

    /// Every length around the padding's edges (55/56 bytes: one tail block or two; 64: a
    /// whole block and a tail of padding alone), alone, in a full set of lanes, and more
    /// messages than lanes, through each compiled path this CPU can run.
    #[test]
    fn agrees_with_md5_at_block_edges() {
        let text: Vec<u8> = (0..400u32).map(|n| (n * 7 + 3) as u8).collect();
        let lens = [0, 1, 3, 54, 55, 56, 57, 63, 64, 65, 119, 120, 121, 127, 128, 129, 191, 192, 399];
        let all: Vec<&[u8]> = lens.iter().map(|&n| &text[..n]).collect();
        for count in [1, 2, 15, 16, 17, all.len()] {
            let messages = &all[..count];
            assert_eq!(md5_each(messages), expected(messages), "{count} messages");
            assert_eq!(md5_each_in_lanes(messages), expected(messages), "{count} messages, portable");
        }
        // A known digest (RFC 1321, A.5), so that md-5 is not the only check.
        assert_eq!(md5_each(&[b"abc"])[0], *b"\x90\x01\x50\x98\x3c\xd2\x4f\xb0\xd6\x96\x3f\x7d\x28\xe1\x7f\x72");
        assert!(md5_each(&[]).is_empty());
    }

    proptest! {
        #[test]
        fn agrees_with_md5(messages in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..40)) {
            let messages: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(md5_each(&messages), expected(&messages));
        }
    }
}
