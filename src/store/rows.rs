//! The rows a table keeps until it is written, in the table's own terms: push a row when it is
//! observed, read the rows back (in order, or by index) or pass them through to the output when
//! the table finishes. How they are held (packed, compressed, spooled) is [`super::packed_rows`]'s
//! business.

use std::cell::RefCell;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::packed_rows::{DecodedBlock, PackedRows, RowsAt, Store, raw_row};

/// Rows of type `T`, in the order pushed; serializes as the list of the rows, each copied as it
/// was serialized when pushed.
pub struct Rows<T> {
    packed: PackedRows,
    /// The block of rows [`Rows::get`] read last.
    last_read: RefCell<DecodedBlock>,
    row: PhantomData<fn(&T) -> T>,
}

impl<T> Default for Rows<T> {
    fn default() -> Self {
        Rows::new(&Store::default())
    }
}

impl<T> Rows<T> {
    /// No rows yet; full blocks of rows will go to `store`.
    pub fn new(store: &Store) -> Self {
        Rows { packed: PackedRows::new(store), last_read: RefCell::default(), row: PhantomData }
    }

    pub fn len(&self) -> usize {
        self.packed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }

    /// Reads rows by index, keeping the `blocks` blocks of rows read last ready for the rows
    /// near them.
    pub fn reader(&self, blocks: usize) -> RowReader<'_, T> {
        RowReader { rows: self, cache: RefCell::new(DecodedBlock::with_capacity(blocks)) }
    }
}

impl<T: Serialize> Rows<T> {
    /// Adds a row; returns its index.
    pub fn push(&mut self, row: &T) -> u32 {
        self.push_view(row)
    }

    /// Adds a row given as a view of a `T` (borrowing what a `T` owns) that serializes as the
    /// `T` would; returns its index.
    pub fn push_view(&mut self, row: &impl Serialize) -> u32 {
        let index = self.packed.len() as u32;
        self.packed.push(row);
        index
    }

    /// Adds a row given as its JSON text, which must be what serde_json writes for a `T`;
    /// returns its index.
    pub fn push_json(&mut self, json: &str) -> u32 {
        let index = self.packed.len() as u32;
        self.packed.push_json(json);
        index
    }
}

impl<T> Rows<T> {
    /// Calls `f` with each row's JSON text as it was pushed, in order: for rows read back
    /// borrowing from their text. Stops at the first error `f` returns.
    pub fn try_for_each_json<E: serde::ser::Error>(
        &self,
        mut f: impl FnMut(RowJson<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.packed.try_for_each(|json| f(RowJson(json)))
    }
}

impl<T: DeserializeOwned> Rows<T> {
    /// Calls `f` with each row, in order. `what` names the rows in the panic that a row not
    /// reading back would be (this build serialized them from `T`).
    pub fn for_each(&self, what: &str, f: impl FnMut(T)) {
        self.packed.for_each_as(what, f);
    }
}

impl<T> Serialize for Rows<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.packed.serialize(serializer)
    }
}

/// A row's JSON text as it was pushed (see [`Rows::try_for_each_json`]).
#[derive(Clone, Copy)]
pub struct RowJson<'a>(&'a str);

impl<'a> RowJson<'a> {
    pub fn text(self) -> &'a str {
        self.0
    }

    /// The row as a raw value, copied into an output unparsed.
    pub fn raw(self) -> Box<RawValue> {
        raw_row(self.0)
    }
}

/// Rows of a [`Rows`] read by index (see [`Rows::reader`]).
pub struct RowReader<'a, T> {
    rows: &'a Rows<T>,
    cache: RefCell<DecodedBlock>,
}

impl<T> Rows<T> {
    /// Row `index` as the JSON it was pushed as, to be copied into an output unparsed.
    pub fn get_raw(&self, index: u32) -> Box<RawValue> {
        raw_row(self.packed.get(index as usize, &mut self.last_read.borrow_mut()))
    }
}

impl<T: DeserializeOwned> Rows<T> {
    /// Row `index`, read back.
    pub fn get(&self, index: u32) -> T {
        let mut cache = self.last_read.borrow_mut();
        let json = self.packed.get(index as usize, &mut cache);
        serde_json::from_str(json)
            .unwrap_or_else(|e| panic!("{} read back as they were pushed: {e}", std::any::type_name::<T>()))
    }
}

impl<'a, T> RowReader<'a, T> {
    /// The rows at `at`, in that order, serialized as their list, each copied as it was
    /// serialized when pushed (not read back). Lists of one reader share its blocks.
    pub fn list<'r>(&'r self, at: &'r [u32]) -> RowList<'r> {
        RowList(RowsAt { rows: &self.rows.packed, at, cache: &self.cache })
    }
}

impl<T> RowReader<'_, T> {
    /// Row `index` as the JSON it was pushed as, to be copied into an output unparsed.
    pub fn get_raw(&self, index: u32) -> Box<RawValue> {
        raw_row(self.rows.packed.get(index as usize, &mut self.cache.borrow_mut()))
    }
}

impl<T: DeserializeOwned> RowReader<'_, T> {
    /// Row `index`, read back. `what` names the rows as in [`Rows::for_each`].
    pub fn get(&self, index: u32, what: &str) -> T {
        let mut cache = self.cache.borrow_mut();
        let json = self.rows.packed.get(index as usize, &mut cache);
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{what} read back as they were pushed: {e}"))
    }
}

/// Rows given by their indexes (see [`RowReader::list`]), serialized as the list of those rows.
pub struct RowList<'a>(RowsAt<'a>);

impl Serialize for RowList<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_back_in_order_by_index_and_as_lists() {
        let mut rows: Rows<(u32, String)> = Rows::default();
        let all: Vec<(u32, String)> = (0..20_000).map(|i| (i, "x".repeat(i as usize % 40))).collect();
        for (i, row) in all.iter().enumerate() {
            assert_eq!(rows.push(row), i as u32);
        }
        assert_eq!(rows.len(), all.len());
        let mut read = Vec::new();
        rows.for_each("test rows", |row| read.push(row));
        assert_eq!(read, all);
        assert_eq!(serde_json::to_string(&rows).unwrap(), serde_json::to_string(&all).unwrap());
        let reader = rows.reader(2);
        assert_eq!(reader.get(12_345, "test rows"), all[12_345]);
        assert_eq!(reader.get(3, "test rows"), all[3]);
        let at = [19_999, 0, 7];
        let picked: Vec<_> = at.iter().map(|&i| &all[i as usize]).collect();
        assert_eq!(serde_json::to_string(&reader.list(&at)).unwrap(), serde_json::to_string(&picked).unwrap());
        assert_eq!(serde_json::to_string(&Rows::<u8>::default()).unwrap(), "[]");
    }
}
