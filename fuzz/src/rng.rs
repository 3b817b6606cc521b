//! The fuzzer's random numbers: SplitMix64, written out here so that a seed reproduces the same
//! case on every machine and every future version of the dependencies.

/// A seeded generator; every choice of a case comes from one of these.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "below(0)");
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True once in `n` times.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }

    /// One of the items (`items` not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A size spread over orders of magnitude: as likely to be near `lo` as near `hi`.
    pub fn log_size(&mut self, lo: usize, hi: usize) -> usize {
        let (lo_bits, hi_bits) = (usize::BITS - lo.max(1).leading_zeros(), usize::BITS - hi.leading_zeros());
        let bits = self.between(lo_bits as usize, hi_bits as usize) as u32;
        let top = (1usize << bits).min(hi);
        self.between(lo.min(top), top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_the_same_numbers() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let mut c = Rng::new(8);
        let zs: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
    }

    #[test]
    fn sizes_stay_in_their_range() {
        let mut rng = Rng::new(1);
        for _ in 0..10_000 {
            let n = rng.log_size(100, 5_000_000);
            assert!((100..=5_000_000).contains(&n), "{n}");
        }
    }
}
