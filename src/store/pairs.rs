//! A long list of number pairs held compressed: what a table adds a few of per entry.

use super::packed_rows::{Compressed, Store};

/// Pairs of numbers in the order they were added, all but the latest held compressed (in the
/// store's spool): what a table adds a few of per entry, such as a search term and a compile it
/// appears in.
#[derive(Default)]
pub struct Pairs {
    held: Vec<Compressed>,
    open: Vec<(u32, u32)>,
    len: usize,
    store: Store,
}

/// Pairs compressed together (128 KiB).
const PAIRS_HELD: usize = 16 << 10;

impl Pairs {
    /// No pairs yet; full blocks of pairs will go to `store`.
    pub fn new(store: &Store) -> Self {
        Pairs { store: store.clone(), ..Pairs::default() }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(&mut self, pair: (u32, u32)) {
        self.open.push(pair);
        self.len += 1;
        if self.open.len() >= PAIRS_HELD {
            let bytes: Vec<u8> =
                self.open.iter().flat_map(|&(t, c)| [t.to_le_bytes(), c.to_le_bytes()]).flatten().collect();
            self.held.push(Compressed::new(&bytes, &self.store));
            self.open.clear();
        }
    }

    /// Calls `f` with each pair, in order.
    pub fn for_each(&self, mut f: impl FnMut(u32, u32)) {
        let u32_at = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
        for held in &self.held {
            for pair in held.get().chunks_exact(8) {
                f(u32_at(&pair[..4]), u32_at(&pair[4..]));
            }
        }
        for &(t, c) in &self.open {
            f(t, c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_read_back_in_order() {
        let mut pairs = Pairs::default();
        let all: Vec<(u32, u32)> = (0..(PAIRS_HELD as u32 * 2 + 5)).map(|i| (i, i / 3)).collect();
        all.iter().for_each(|&p| pairs.push(p));
        let mut read = Vec::new();
        pairs.for_each(|a, b| read.push((a, b)));
        assert_eq!(read, all);
        assert_eq!(pairs.len(), all.len());
    }
}
