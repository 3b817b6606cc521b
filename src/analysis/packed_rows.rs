//! A list of rows held zstd-compressed from the moment they are observed until their table is
//! written: rows of one kind repeat their keys and most values, so a long log's rows shrink to a
//! few percent of their JSON.

use std::borrow::Cow;
use std::cell::RefCell;

use serde::ser::{Error, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// Bytes of rows compressed together.
const BLOCK: usize = 1 << 17;
/// zstd level of the blocks: the fastest, as each block is decompressed only once.
const LEVEL: i32 = 1;

/// Rows as compact JSON, in blocks; serializes as the list of the rows.
#[derive(Default)]
pub struct PackedRows {
    /// Full blocks, compressed, with their size before compression.
    sealed: Vec<(Box<[u8]>, usize)>,
    /// The rows of each full block.
    sealed_rows: Vec<u32>,
    /// The block being filled: rows back to back.
    open: Vec<u8>,
    /// Where each row ends in its block, block after block.
    ends: Vec<u32>,
}

impl PackedRows {
    pub fn push(&mut self, row: &impl Serialize) {
        serde_json::to_writer(&mut self.open, row).expect("rows serialize");
        self.ends.push(self.open.len() as u32);
        if self.open.len() >= BLOCK {
            self.seal();
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn seal(&mut self) {
        thread_local! {
            static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
        }
        let compressed = COMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            let compressor = match &mut *slot {
                Some(c) => c,
                None => slot.insert(zstd::bulk::Compressor::new(LEVEL).expect("zstd context")),
            };
            compressor.compress(&self.open).expect("zstd compresses to a large enough buffer")
        });
        let rows = self.ends.len() - self.sealed_rows.iter().map(|&n| n as usize).sum::<usize>();
        self.sealed.push((compressed.into_boxed_slice(), self.open.len()));
        self.sealed_rows.push(rows as u32);
        self.open.clear();
    }
}

impl Serialize for PackedRows {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        let open_rows = self.len() - self.sealed_rows.iter().map(|&n| n as usize).sum::<usize>();
        let blocks = self
            .sealed
            .iter()
            .map(|(bytes, size)| zstd::bulk::decompress(bytes, *size).map(Cow::Owned))
            .chain(std::iter::once(Ok(Cow::Borrowed(self.open.as_slice()))));
        let mut ends = self.ends.iter();
        for (block, rows) in blocks.zip(self.sealed_rows.iter().map(|&n| n as usize).chain([open_rows])) {
            let block = block.map_err(S::Error::custom)?;
            let mut start = 0;
            for &end in ends.by_ref().take(rows) {
                let text = std::str::from_utf8(&block[start..end as usize]).map_err(S::Error::custom)?;
                let row: &RawValue = serde_json::from_str(text).map_err(S::Error::custom)?;
                seq.serialize_element(row)?;
                start = end as usize;
            }
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_serialize_as_the_list_they_were() {
        let rows: Vec<serde_json::Value> =
            (0..20_000).map(|i| serde_json::json!({ "i": i, "text": "x".repeat(i % 50) })).collect();
        let mut packed = PackedRows::default();
        for row in &rows {
            packed.push(row);
        }
        assert!(!packed.sealed.is_empty());
        assert_eq!(serde_json::to_string(&packed).unwrap(), serde_json::to_string(&rows).unwrap());
        assert_eq!(serde_json::to_string(&PackedRows::default()).unwrap(), "[]");
    }
}
