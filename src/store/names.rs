//! Names a table numbers or counts as it meets them: cache names, instant names, file names.

use super::packed_rows::{DigestMap, digest};

/// The index of `key` in `set`, inserted if new: how tables intern strings that repeat through
/// a log (cache names, instant names, compile ids), keeping a `u32` in each place they occur.
pub fn index_in<K, Q>(set: &mut indexmap::IndexSet<K>, key: &Q) -> u32
where
    K: std::hash::Hash + Eq + std::borrow::Borrow<Q> + for<'a> From<&'a Q>,
    Q: std::hash::Hash + Eq + ?Sized,
{
    let index = match set.get_index_of(key) {
        Some(i) => i,
        None => set.insert_full(K::from(key)).0,
    };
    index as u32
}

/// How many times each name was met, each known by its digest: names that hold a compile's
/// directory are as many as the rows that carry them, and a digest takes less than most.
#[derive(Default)]
pub struct NameCounts(DigestMap<u32>);

impl NameCounts {
    /// Counts one more `name`; returns how many times it was met, this one included.
    pub fn add(&mut self, name: &str) -> u32 {
        let count = self.0.entry(digest(&[name.as_bytes()])).or_insert(0);
        *count += 1;
        *count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_numbered_and_counted() {
        let mut set: indexmap::IndexSet<Box<str>> = Default::default();
        assert_eq!(index_in(&mut set, "a"), 0);
        assert_eq!(index_in(&mut set, "b"), 1);
        assert_eq!(index_in(&mut set, "a"), 0);
        let mut counts = NameCounts::default();
        assert_eq!(counts.add("x.py"), 1);
        assert_eq!(counts.add("y.py"), 1);
        assert_eq!(counts.add("x.py"), 2);
    }
}
