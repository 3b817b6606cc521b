//! Values a stage writes once and reads back by index, from any thread: the artifact lists and
//! metrics of a long log's compiles, held compact and compressed until the tables finish.

use std::marker::PhantomData;
use std::sync::Mutex;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::packed_rows::{DecodedBlock, PackedRows, Store};

/// Blocks kept decompressed for reads by index: tables finishing on two threads each read
/// values in order, and a block of one reader evicted by the other's is decompressed again for
/// every value it reads.
const BLOCKS_KEPT: usize = 4;

/// Values of type `T` by index, in the order pushed. They round-trip through postcard, so `T`
/// must not skip fields when it serializes.
pub struct Records<T> {
    packed: PackedRows,
    /// The blocks read last (locked: tables may finish on two threads at once).
    last_read: Mutex<DecodedBlock>,
    value: PhantomData<fn(&T) -> T>,
}

impl<T> Default for Records<T> {
    fn default() -> Self {
        Records::new(&Store::default())
    }
}

impl<T> Records<T> {
    /// No values yet; full blocks of values will go to `store`.
    pub fn new(store: &Store) -> Self {
        let last_read = Mutex::new(DecodedBlock::with_capacity(BLOCKS_KEPT));
        Records { packed: PackedRows::new(store), last_read, value: PhantomData }
    }

    pub fn len(&self) -> usize {
        self.packed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }
}

impl<T: Serialize> Records<T> {
    /// Adds a value; returns its index.
    pub fn push(&mut self, value: &T) -> u32 {
        let index = self.packed.len() as u32;
        self.packed.push_bytes(&postcard::to_allocvec(value).expect("a stage's values are plain data"));
        index
    }
}

impl<T: DeserializeOwned> Records<T> {
    /// Value `index`, read back.
    pub fn get(&self, index: u32) -> T {
        let mut cache = self.last_read.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        postcard::from_bytes(self.packed.get_bytes(index as usize, &mut cache)).expect("read back as written")
    }

    /// Every value in order, each block decompressed once for this reader alone (another
    /// thread reading by index or in order meanwhile costs it nothing).
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        let mut cache = DecodedBlock::default();
        (0..self.packed.len())
            .map(move |i| postcard::from_bytes(self.packed.get_bytes(i, &mut cache)).expect("read back as written"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_by_index() {
        let mut records: Records<(u64, Option<String>, f64)> = Records::default();
        let all: Vec<_> =
            (0..30_000u64).map(|i| (i, (i % 3 == 0).then(|| "x".repeat(i as usize % 50)), -0.5)).collect();
        for (i, value) in all.iter().enumerate() {
            assert_eq!(records.push(value), i as u32);
        }
        for i in [29_999, 0, 12_345, 1] {
            assert_eq!(records.get(i), all[i as usize]);
        }
        assert!(records.iter().eq(all.iter().cloned()));
        assert_eq!(records.len(), all.len());
    }
}
