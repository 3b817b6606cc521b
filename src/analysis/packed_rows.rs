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

    /// Calls `f` with each row's JSON, in order, decompressing one block at a time.
    pub fn try_for_each<E: Error>(&self, mut f: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
        let open_rows = self.len() - self.sealed_rows.iter().map(|&n| n as usize).sum::<usize>();
        let blocks = self
            .sealed
            .iter()
            .map(|(bytes, size)| zstd::bulk::decompress(bytes, *size).map(Cow::Owned))
            .chain(std::iter::once(Ok(Cow::Borrowed(self.open.as_slice()))));
        let mut ends = self.ends.iter();
        for (block, rows) in blocks.zip(self.sealed_rows.iter().map(|&n| n as usize).chain([open_rows])) {
            let block = block.map_err(E::custom)?;
            let mut start = 0;
            for &end in ends.by_ref().take(rows) {
                f(std::str::from_utf8(&block[start..end as usize]).map_err(E::custom)?)?;
                start = end as usize;
            }
        }
        Ok(())
    }

    /// Row `index`'s JSON; its block is decompressed into `cache` unless already there.
    pub fn get<'a>(&'a self, index: usize, cache: &'a mut DecodedBlock) -> &'a str {
        let mut first = 0;
        for (block, &rows) in self.sealed_rows.iter().enumerate() {
            if index < first + rows as usize {
                if cache.block != Some(block) {
                    let (bytes, size) = &self.sealed[block];
                    cache.bytes = zstd::bulk::decompress(bytes, *size).expect("blocks decompress");
                    cache.block = Some(block);
                }
                return row_text(&cache.bytes, &self.ends[first..], index - first);
            }
            first += rows as usize;
        }
        row_text(&self.open, &self.ends[first..], index - first)
    }
}

/// Row `i` of a block whose rows end at `ends`.
fn row_text<'a>(block: &'a [u8], ends: &[u32], i: usize) -> &'a str {
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    std::str::from_utf8(&block[start..ends[i] as usize]).expect("rows are JSON text")
}

/// The block [`PackedRows::get`] decompressed last, for the next row of the same block.
#[derive(Default)]
pub struct DecodedBlock {
    block: Option<usize>,
    bytes: Vec<u8>,
}

impl Serialize for PackedRows {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        self.try_for_each(|text| {
            let row: &RawValue = serde_json::from_str(text).map_err(S::Error::custom)?;
            seq.serialize_element(row)
        })?;
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
        let mut cache = DecodedBlock::default();
        for i in [0, 1, 9_999, 19_999, 5, 12_345] {
            assert_eq!(packed.get(i, &mut cache), serde_json::to_string(&rows[i]).unwrap());
        }
    }
}
