//! Distinct rows a table numbers as it meets them (guard lines, stack traces, large metric
//! values): each stored once, its index its id, found again by a key the table chooses.

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::digest_ids::DigestIds;
use super::packed_rows::{Digest, Store, digest};
use super::rows::{RowReader, Rows};

/// Distinct rows of type `T`, in order of their ids; serializes as the list of the rows. What a
/// long log repeats a hundred thousand times costs its compressed row once, and about a byte and
/// a half a row to be found again.
pub struct Distinct<T> {
    rows: Rows<T>,
    /// Each row's id, by the digest of its key.
    ids: DigestIds,
}

impl<T> Default for Distinct<T> {
    fn default() -> Self {
        Distinct::new(&Store::default())
    }
}

impl<T> Distinct<T> {
    /// No rows yet; rows and keys will go to `store` once there are many.
    pub fn new(store: &Store) -> Self {
        Distinct { rows: Rows::new(store), ids: DigestIds::new(store) }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Row `id` as the JSON it was pushed as, to be copied into an output unparsed.
    pub fn get_raw(&self, id: u32) -> Box<RawValue> {
        self.rows.get_raw(id)
    }

    /// Reads rows by id (see [`Rows::reader`]).
    pub fn reader(&self, blocks: usize) -> RowReader<'_, T> {
        self.rows.reader(blocks)
    }
}

impl<T: DeserializeOwned> Distinct<T> {
    /// Row `id`, read back.
    pub fn get(&self, id: u32) -> T {
        self.rows.get(id)
    }
}

impl<T: Serialize> Distinct<T> {
    /// The id of the row known by `key` (the byte strings that together tell it from every
    /// other row), adding `make()` as that row if new.
    pub fn id_by(&mut self, key: &[&[u8]], make: impl FnOnce() -> T) -> u32 {
        self.id_or_add(digest(key), |rows| rows.push(&make()))
    }

    /// The id of the row whose JSON text is `json` (what serde_json writes for a `T`), adding
    /// it if new: rows are the same when their texts are.
    pub fn id_of_json(&mut self, json: &str) -> u32 {
        self.id_or_add(digest(&[json.as_bytes()]), |rows| rows.push_json(json))
    }

    /// The id of the row known by `key`, adding it with `add` (which returns its index) if new.
    fn id_or_add(&mut self, key: Digest, add: impl FnOnce(&mut Rows<T>) -> u32) -> u32 {
        if let Some(id) = self.ids.get(key) {
            return id;
        }
        let id = add(&mut self.rows);
        self.ids.insert(key, id);
        id
    }
}

impl<T> Serialize for Distinct<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.rows.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_is_kept_once_and_found_by_its_key_or_its_text() {
        let mut lines: Distinct<String> = Distinct::default();
        let texts = ["a", "b", "a", "c", "b"];
        let ids: Vec<u32> = texts.iter().map(|t| lines.id_by(&[t.as_bytes()], || t.to_string())).collect();
        assert_eq!(ids, [0, 1, 0, 2, 1]);
        assert_eq!(serde_json::to_string(&lines).unwrap(), r#"["a","b","c"]"#);
        let mut values: Distinct<serde_json::Value> = Distinct::default();
        assert_eq!(values.id_of_json(r#"{"x":1}"#), 0);
        assert_eq!(values.id_of_json("[2]"), 1);
        assert_eq!(values.id_of_json(r#"{"x":1}"#), 0);
        assert_eq!(values.get(1), serde_json::json!([2]));
        assert_eq!(values.get_raw(0).get(), r#"{"x":1}"#);
        assert_eq!(lines.get(2), "c");
    }
}
