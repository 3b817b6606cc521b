//! A list of rows held zstd-compressed from the moment they are observed until their table is
//! written: rows of one kind repeat their keys and most values, so a long log's rows shrink to a
//! few percent of their JSON. Nothing is held per row outside the blocks (a row's end is stored in
//! its block), and full blocks, like other bytes held compressed ([`Compressed`]), go to the
//! [`Store`]'s spool when it has one: then a long log's rows cost no memory.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::sync::Arc;

use serde::ser::{Error, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// Bytes of rows compressed together.
const BLOCK: usize = 1 << 17;
/// What a list keeps of the open block's buffer once a block is sealed, for the next one: a block
/// ends at the row that takes it past [`BLOCK`], and a buffer grown by doubling to hold that row
/// would be kept at twice a block (a long log's tables have some twenty lists past their first
/// block).
const OPEN_KEPT: usize = BLOCK + BLOCK / 4;
/// zstd level of the blocks: the fastest, as each block is decompressed only once or twice.
const LEVEL: i32 = 1;

/// Where bytes held until a table is written go instead of memory: the bundle writer makes one
/// backed by a file of its staging directory and hands it to the tables as a [`Store`]; tables
/// never open files themselves.
pub trait Spool: Send + Sync {
    /// Stores `bytes`; returns where they are.
    fn put(&self, bytes: &[u8]) -> io::Result<u64>;
    /// The `len` bytes stored at `at`.
    fn get(&self, at: u64, len: usize) -> io::Result<Vec<u8>>;
}

/// Where the values that may spill (rows, per-compile values, numbers) put their bytes: the
/// bundle writer's spool, or memory (the default). Each such value is made with the store it
/// spills to, which its table was given.
#[derive(Clone, Default)]
pub struct Store(Option<Arc<dyn Spool>>);

impl Store {
    /// Values made with this store spill to `spool`.
    pub fn spilling_to(spool: Arc<dyn Spool>) -> Store {
        Store(Some(spool))
    }

    /// The spool, if values spill.
    pub(super) fn spool(&self) -> Option<&Arc<dyn Spool>> {
        self.0.as_ref()
    }
}

/// Where a value was written to the spool with postcard: `len` bytes at `at`.
#[derive(Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub(super) struct Written {
    at: u64,
    len: u32,
}

impl Written {
    /// Where nothing was written.
    pub(super) const NONE: Written = Written { at: u64::MAX, len: 0 };

    /// Writes `value` (which must not skip fields when it serializes); `None` if writing fails.
    pub(super) fn write(spool: &dyn Spool, value: &impl Serialize) -> Option<Written> {
        let bytes = postcard::to_allocvec(value).expect("a table's values are plain data");
        let len = u32::try_from(bytes.len()).ok()?;
        Some(Written { at: spool.put(&bytes).ok()?, len })
    }

    /// The value written here. The spool is a file of the build's own staging directory:
    /// failing to read back what was written there is the end of the build.
    pub(super) fn read<T: serde::de::DeserializeOwned>(self, spool: &dyn Spool) -> T {
        let bytes =
            spool.get(self.at, self.len as usize).unwrap_or_else(|e| panic!("reading back the analysis spool: {e}"));
        postcard::from_bytes(&bytes).expect("read back as written")
    }
}

/// Compressed bytes, in memory or in a store's spool (memory when it has none, or when writing
/// to it fails).
enum Held {
    Memory(Box<[u8]>),
    Spooled { spool: Arc<dyn Spool>, at: u64, len: u32 },
}

impl Held {
    fn new(bytes: Vec<u8>, store: &Store) -> Held {
        if let Some(spool) = store.spool()
            && let Ok(len) = u32::try_from(bytes.len())
            && let Ok(at) = spool.put(&bytes)
        {
            return Held::Spooled { spool: spool.clone(), at, len };
        }
        Held::Memory(bytes.into_boxed_slice())
    }

    /// The bytes. The spool is a file of the build's own staging directory: failing to read back
    /// what was written there is the end of the build.
    fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match self {
            Held::Memory(bytes) => std::borrow::Cow::Borrowed(bytes),
            Held::Spooled { spool, at, len } => std::borrow::Cow::Owned(
                spool.get(*at, *len as usize).unwrap_or_else(|e| panic!("reading back the analysis spool: {e}")),
            ),
        }
    }
}

/// Rows as compact JSON, in blocks; serializes as the list of the rows.
#[derive(Default)]
pub struct PackedRows {
    /// Full blocks, compressed: the rows' ends (`u32` each, little-endian) then the rows back to
    /// back, with the size before compression.
    sealed: Vec<(Held, usize)>,
    /// The number of rows before each sealed block.
    block_starts: Vec<u32>,
    /// The block being filled: rows back to back.
    open: Vec<u8>,
    /// Where each row of the open block ends in it.
    ends: Vec<u32>,
    /// Rows in the sealed blocks.
    sealed_rows: usize,
    /// Where sealed blocks go.
    store: Store,
}

/// A block decompressed as it was sealed: its rows' ends (little-endian `u32`s, one a row), then
/// their text. Read in place: the buffer is the only allocation, and it is reused.
struct Decoded {
    block: Vec<u8>,
    rows: usize,
}

impl Decoded {
    fn end(&self, i: usize) -> usize {
        u32::from_le_bytes(self.block[4 * i..4 * i + 4].try_into().expect("4 bytes")) as usize
    }

    fn row_bytes(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.end(i - 1) };
        &self.block[4 * self.rows..][start..self.end(i)]
    }

    fn row(&self, i: usize) -> &str {
        json_text(self.row_bytes(i))
    }
}

fn compress(bytes: &[u8]) -> Vec<u8> {
    thread_local! {
        static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    }
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let compressor = match &mut *slot {
            Some(c) => c,
            None => {
                let mut compressor = zstd::bulk::Compressor::new(LEVEL).expect("zstd context");
                // Read back, a block is checked against it: its rows are then the texts pushed,
                // which tables copy into their output without parsing them ([`raw_row`]).
                compressor.include_checksum(true).expect("a valid zstd parameter");
                slot.insert(compressor)
            }
        };
        compressor.compress(bytes).expect("zstd compresses to a large enough buffer")
    })
}

/// `bytes` decompressed (`size` bytes) into `out`, with the thread's decompression context: a new
/// context each time (what `zstd::bulk::decompress` makes) is a large allocation whose fresh
/// pages cost more than decompressing a small block. `out` is reused for the same reason.
fn decompress_into(bytes: &[u8], size: usize, out: &mut Vec<u8>) {
    thread_local! {
        static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
    }
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let decompressor = match &mut *slot {
            Some(d) => d,
            None => slot.insert(zstd::bulk::Decompressor::new().expect("zstd context")),
        };
        out.clear();
        out.reserve(size);
        let written = decompressor.decompress_to_buffer(bytes, out).expect("held bytes decompress");
        assert_eq!(written, size, "held bytes decompress to their size");
    })
}

/// `bytes` decompressed (`size` bytes) into a buffer of their own.
fn decompress(bytes: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    decompress_into(bytes, size, &mut out);
    out
}

impl PackedRows {
    /// No rows yet; full blocks will go to `store`.
    pub fn new(store: &Store) -> Self {
        PackedRows { store: store.clone(), ..PackedRows::default() }
    }

    /// Adds a row (its index is the length before).
    pub fn push(&mut self, row: &impl Serialize) {
        serde_json::to_writer(&mut self.open, row).expect("rows serialize");
        self.ended();
    }

    /// Adds a row given as its JSON text.
    pub fn push_json(&mut self, json: &str) {
        self.push_bytes(json.as_bytes());
    }

    /// Adds a row of bytes (read back with [`PackedRows::get_bytes`], not as JSON).
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        self.open.extend_from_slice(bytes);
        self.ended();
    }

    fn ended(&mut self) {
        self.ends.push(self.open.len() as u32);
        if self.open.len() >= BLOCK {
            self.seal();
        }
    }

    pub fn len(&self) -> usize {
        self.sealed_rows + self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn seal(&mut self) {
        let mut block = Vec::with_capacity(4 * self.ends.len() + self.open.len());
        for end in &self.ends {
            block.extend_from_slice(&end.to_le_bytes());
        }
        block.extend_from_slice(&self.open);
        let compressed = compress(&block);
        self.sealed.push((Held::new(compressed, &self.store), block.len()));
        self.block_starts.push(self.sealed_rows as u32);
        self.sealed_rows += self.ends.len();
        self.ends.clear();
        self.open.clear();
        if self.open.capacity() > OPEN_KEPT {
            self.open = Vec::with_capacity(OPEN_KEPT);
        }
    }

    /// Block `b` decompressed into `buffer`.
    fn decode(&self, b: usize, mut buffer: Vec<u8>) -> Decoded {
        let (bytes, size) = &self.sealed[b];
        decompress_into(&bytes.bytes(), *size, &mut buffer);
        Decoded { block: buffer, rows: self.block_rows(b) }
    }

    fn block_rows(&self, b: usize) -> usize {
        let next = self.block_starts.get(b + 1).map_or(self.sealed_rows, |&s| s as usize);
        next - self.block_starts[b] as usize
    }

    /// Calls `f` with each row's JSON, in order, decompressing one block at a time.
    pub fn try_for_each<E: Error>(&self, mut f: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
        let mut buffer = Vec::new();
        for b in 0..self.sealed.len() {
            let block = self.decode(b, buffer);
            for i in 0..block.rows {
                f(block.row(i))?;
            }
            buffer = block.block;
        }
        for i in 0..self.ends.len() {
            f(row_text(&self.open, &self.ends, i))?;
        }
        Ok(())
    }

    /// Calls `f` with each row read back as the type it was pushed as, in order. `what` names
    /// the rows in the panic that a row not reading back would be (they were serialized from
    /// that type by this build).
    pub fn for_each_as<T: serde::de::DeserializeOwned>(&self, what: &str, mut f: impl FnMut(T)) {
        let read = self.try_for_each(|json| serde_json::from_str(json).map(&mut f));
        read.unwrap_or_else(|e| panic!("{what} read back as they were packed: {e}"));
    }

    /// Row `index`'s JSON; its block is decompressed into `cache` unless already there.
    pub fn get<'a>(&'a self, index: usize, cache: &'a mut DecodedBlock) -> &'a str {
        json_text(self.get_bytes(index, cache))
    }

    /// Row `index`'s bytes; its block is decompressed into `cache` unless already there.
    pub fn get_bytes<'a>(&'a self, index: usize, cache: &'a mut DecodedBlock) -> &'a [u8] {
        if index >= self.sealed_rows {
            return row_bytes(&self.open, &self.ends, index - self.sealed_rows);
        }
        let b = self.block_starts.partition_point(|&start| start as usize <= index) - 1;
        let first = self.block_starts[b] as usize;
        let at = match cache.blocks.iter().position(|(block, _)| *block == b) {
            Some(at) => at,
            None => {
                let mut buffer = Vec::new();
                if cache.blocks.len() >= cache.capacity.max(1) {
                    buffer = cache.blocks.remove(0).1.block;
                }
                cache.blocks.push((b, self.decode(b, buffer)));
                cache.blocks.len() - 1
            }
        };
        // Most recently used last.
        let last = cache.blocks.len() - 1;
        cache.blocks.swap(at, last);
        cache.blocks[last].1.row_bytes(index - first)
    }
}

/// Row `i` of a block whose rows end at `ends`.
fn row_text<'a>(block: &'a [u8], ends: &[u32], i: usize) -> &'a str {
    json_text(row_bytes(block, ends, i))
}

/// A row pushed as JSON, read back: its bytes are the text serde_json wrote.
fn json_text(row: &[u8]) -> &str {
    std::str::from_utf8(row).expect("rows are JSON text")
}

/// A row's JSON as a raw value that a serializer copies into a table as it is: parsing each
/// row again to check it cost 3% of a tensor-heavy build, all of it while the tables finish.
/// `json` must be a row read back from a [`PackedRows`] (or an [`Interner`]) of JSON rows, as
/// [`PackedRows::push`] and [`PackedRows::push_json`] add them.
pub(crate) fn raw_row(json: &str) -> Box<RawValue> {
    // SAFETY: a row is what serde_json wrote for `push` or the JSON text given to `push_json`
    // (each caller's serde_json serialization), and a block read back passed zstd's checksum,
    // so its rows are those texts. Debug builds parse every raw value made so (serde_json checks
    // `from_string_unchecked`'s input there), and the tests build every table.
    unsafe { RawValue::from_string_unchecked(json.to_owned()) }
}

fn row_bytes<'a>(block: &'a [u8], ends: &[u32], i: usize) -> &'a [u8] {
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &block[start..ends[i] as usize]
}

/// The blocks [`PackedRows::get`] decompressed last (one by default; more with
/// [`DecodedBlock::with_capacity`]), for the next rows of the same blocks.
pub struct DecodedBlock {
    capacity: usize,
    /// Least recently used first.
    blocks: Vec<(usize, Decoded)>,
}

impl Default for DecodedBlock {
    fn default() -> Self {
        DecodedBlock::with_capacity(1)
    }
}

impl DecodedBlock {
    /// A cache of the `capacity` blocks used last.
    pub fn with_capacity(capacity: usize) -> Self {
        DecodedBlock { capacity, blocks: Vec::new() }
    }
}

impl Serialize for PackedRows {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        self.try_for_each(|text| seq.serialize_element(&raw_row(text)))?;
        seq.end()
    }
}

/// Rows of a [`PackedRows`] given by their indexes, serialized as the list of those rows.
pub struct RowsAt<'a> {
    pub rows: &'a PackedRows,
    pub at: &'a [u32],
    /// Shared by the lists of one table, whose rows are near each other.
    pub cache: &'a RefCell<DecodedBlock>,
}

impl Serialize for RowsAt<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut cache = self.cache.borrow_mut();
        let mut seq = serializer.serialize_seq(Some(self.at.len()))?;
        for &i in self.at {
            seq.serialize_element(&raw_row(self.rows.get(i as usize, &mut cache)))?;
        }
        seq.end()
    }
}

/// Bytes held zstd-compressed (a payload a table needs again when it finishes), in a store's
/// spool if it has one.
pub struct Compressed {
    bytes: Held,
    len: usize,
}

impl std::fmt::Debug for Compressed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Compressed({} bytes)", self.len)
    }
}

impl Compressed {
    /// `bytes`, compressed, in `store`.
    pub fn new(bytes: &[u8], store: &Store) -> Self {
        Compressed { bytes: Held::new(compress(bytes), store), len: bytes.len() }
    }

    /// The bytes, decompressed.
    pub fn get(&self) -> Vec<u8> {
        decompress(&self.bytes.bytes(), self.len)
    }
}

/// Bytes zstd-compressed in memory: what a value a [`super::per_compile::PerCompile`] writes to
/// the spool holds of a long text (a [`Compressed`] knows its place in the spool, which no copy
/// of it can).
#[derive(Default, Serialize, serde::Deserialize)]
pub struct CompressedBytes {
    bytes: Vec<u8>,
    len: usize,
}

impl CompressedBytes {
    pub fn new(bytes: &[u8]) -> Self {
        CompressedBytes { bytes: compress(bytes), len: bytes.len() }
    }

    /// The bytes, decompressed.
    pub fn get(&self) -> Vec<u8> {
        decompress(&self.bytes, self.len)
    }
}

/// A 128-bit digest of some text (blake3): what an [`Interner`] knows a value by. Like blob ids,
/// two different values never get the same one in practice.
pub type Digest = u128;

/// The digest of the concatenation of `parts`, each prefixed with its length.
pub fn digest(parts: &[&[u8]]) -> Digest {
    let mut hasher = blake3::Hasher::new();
    for part in parts {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    u128::from_le_bytes(hasher.finalize().as_bytes()[..16].try_into().expect("16 bytes"))
}

/// The digest of one text, for a map of such texts of its own: blake3 of the bytes alone. A
/// long text is then hashed whole chunks at a time, several side by side, from its first byte;
/// [`digest`]'s length prefix leaves a text's first chunk to be hashed a block at a time, which
/// doubled the cost of digesting the kilobytes of a metrics value.
pub fn text_digest(text: &[u8]) -> Digest {
    u128::from_le_bytes(blake3::hash(text).as_bytes()[..16].try_into().expect("16 bytes"))
}

/// Hashes a [`Digest`] by its low bits, already uniform.
#[derive(Default)]
pub struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64;
    }
}

/// A map keyed by [`Digest`]s.
pub type DigestMap<V> = HashMap<Digest, V, BuildHasherDefault<DigestHasher>>;

#[cfg(test)]
pub(crate) mod tests {
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
        for capacity in [1, 3] {
            let mut cache = DecodedBlock::with_capacity(capacity);
            for i in [0, 1, 9_999, 19_999, 5, 12_345, 0, 19_998, 7_000] {
                assert_eq!(packed.get(i, &mut cache), serde_json::to_string(&rows[i]).unwrap());
            }
        }
    }

    /// A spool in memory that counts what went to it.
    #[derive(Default)]
    pub(crate) struct VecSpool(pub(crate) std::sync::Mutex<Vec<u8>>);

    impl VecSpool {
        pub(crate) fn is_empty(&self) -> bool {
            self.0.lock().unwrap().is_empty()
        }
    }

    /// A store spilling to a new [`VecSpool`] when `spooled`, else memory; and that spool.
    pub(crate) fn test_store(spooled: bool) -> (Store, Arc<VecSpool>) {
        let spool = Arc::new(VecSpool::default());
        let store = if spooled { Store::spilling_to(spool.clone()) } else { Store::default() };
        (store, spool)
    }

    impl Spool for VecSpool {
        fn put(&self, bytes: &[u8]) -> io::Result<u64> {
            let mut v = self.0.lock().unwrap();
            v.extend_from_slice(bytes);
            Ok((v.len() - bytes.len()) as u64)
        }
        fn get(&self, at: u64, len: usize) -> io::Result<Vec<u8>> {
            Ok(self.0.lock().unwrap()[at as usize..at as usize + len].to_vec())
        }
    }

    #[test]
    fn spooled_rows_and_bytes_read_back() {
        let (store, spool) = test_store(true);
        let rows: Vec<serde_json::Value> = (0..20_000).map(|i| serde_json::json!({ "i": i })).collect();
        let mut packed = PackedRows::new(&store);
        for row in &rows {
            packed.push(row);
        }
        let held = Compressed::new(b"held bytes", &store);
        assert!(!spool.is_empty());
        assert!(packed.sealed.iter().all(|(h, _)| matches!(h, Held::Spooled { .. })));
        assert_eq!(serde_json::to_string(&packed).unwrap(), serde_json::to_string(&rows).unwrap());
        assert_eq!(packed.get(12_345, &mut DecodedBlock::default()), "{\"i\":12345}");
        assert_eq!(held.get(), b"held bytes");
    }
}
