//! Numbers a table gives keys it meets again and again (compile ids, describers, rows of
//! earlier compiles), in bounded memory whatever the number of keys.

use super::digest_ids::DigestIds;
use super::packed_rows::{Store, digest};

/// A number for each key, a key being the byte strings that together tell it from every other.
/// Only the latest keys are in memory; the others are found again in the spool.
#[derive(Default)]
pub struct Numbers(DigestIds);

impl Numbers {
    /// No numbers yet; keys long unused will go to `store`.
    pub fn new(store: &Store) -> Self {
        Numbers(DigestIds::new(store))
    }

    /// The number given to `key`, if one was.
    pub fn get(&mut self, key: &[&[u8]]) -> Option<u32> {
        self.0.get(digest(key))
    }

    /// Gives `key` (given none before) the number `n`.
    pub fn insert(&mut self, key: &[&[u8]], n: u32) {
        self.0.insert(digest(key), n)
    }

    /// The number of `key`: keys are numbered 0, 1, 2... in the order this first meets them (a
    /// table that numbers keys so gives none with [`Numbers::insert`]).
    pub fn number(&mut self, key: &[&[u8]]) -> u32 {
        self.0.number(digest(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_numbered_in_the_order_first_met_and_parts_do_not_run_together() {
        let mut numbers = Numbers::default();
        assert_eq!(numbers.number(&[b"ab", b"c"]), 0);
        assert_eq!(numbers.number(&[b"a", b"bc"]), 1);
        assert_eq!(numbers.number(&[b"ab", b"c"]), 0);
        let mut given = Numbers::default();
        assert_eq!(given.get(&[b"x"]), None);
        given.insert(&[b"x"], 7);
        assert_eq!(given.get(&[b"x"]), Some(7));
    }
}
