//! The blob store: payloads content-addressed by blake3, concatenated into packs of about
//! [`PACK_TARGET`] bytes, each compressed as one zstd frame.
//!
//! Two phases keep the output deterministic while inputs are read in parallel:
//! 1. while reading a file, [`ChunkWriter`] dedups that file's blobs and writes them as
//!    compressed chunks (on the file's filing thread, which never waits for the rayon pool);
//! 2. [`assemble`] walks the files in input order and dedups across them: a chunk whose blobs are
//!    all new becomes a pack as it is (no recompression, the common case for one file), a chunk
//!    with nothing new is dropped, and the new blobs of mixed chunks are repacked.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;

use super::Placement;
use super::locations::{self, Locations};
use super::seen::SeenBlobs;
pub use crate::parse::hex;
use crate::schema::{BlobIndexShard, BlobLocation, Pack};

/// Target size of a pack before compression: small enough that a viewer fetching one artifact
/// downloads little, big enough for zstd to find the repetition between payloads.
pub const PACK_TARGET: usize = 1 << 20;
/// zstd level for packs: level 2 (zstd's fast strategy, as for the index streams), which on the
/// bench logs costs less CPU than level 3 and packs as small or smaller (docs/perf-notes.md).
pub const ZSTD_LEVEL: i32 = 2;
/// Where packs go, relative to the bundle root.
pub const PACKS_DIR: &str = "blobs/packs";

pub type Hash = crate::parse::BlobId;
/// blake3 of a file, for pack names.
pub type FileHash = [u8; 32];

/// A blob of a chunk or pack. Blobs are back to back, each where the one before ends (see
/// [`with_offsets`]): a long log's chunks hold hundreds of thousands, kept until the build ends.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    pub hash: Hash,
    pub size: u64,
}

/// Each slot with its offset in its chunk.
pub fn with_offsets(slots: &[Slot]) -> impl Iterator<Item = (u64, &Slot)> {
    slots.iter().scan(0, |offset, s| {
        let at = *offset;
        *offset += s.size;
        Some((at, s))
    })
}

/// A compressed chunk written by phase 1.
#[derive(Debug)]
pub struct Chunk {
    pub path: PathBuf,
    /// blake3 of the compressed file.
    pub file_hash: FileHash,
    pub size: u64,
    pub raw_size: u64,
    /// Its blobs; empty once they are in the file's slot file (see [`FileChunks`]).
    pub slots: Vec<Slot>,
    /// How many blobs it holds.
    pub blobs: u32,
}

/// Bytes of a slot in a slot file: the blob id, then the size (little-endian).
const SLOT_BYTES: usize = 24;

fn slot_bytes(s: &Slot) -> [u8; SLOT_BYTES] {
    let mut out = [0; SLOT_BYTES];
    out[..16].copy_from_slice(&s.hash);
    out[16..].copy_from_slice(&s.size.to_le_bytes());
    out
}

fn slot_of(bytes: &[u8]) -> Slot {
    Slot {
        hash: bytes[..16].try_into().expect("16 bytes"),
        size: u64::from_le_bytes(bytes[16..SLOT_BYTES].try_into().expect("8 bytes")),
    }
}

/// One input file's chunks, in order. The slots of the chunks written while the file was read
/// are in a slot file, in chunk order (a long log's chunks hold hundreds of thousands of blobs,
/// kept until the build ends: 24 bytes each that need not be in memory).
#[derive(Debug, Default)]
pub struct FileChunks {
    pub chunks: Vec<Chunk>,
    slots: Option<PathBuf>,
    /// Whether the slot file is this build's own, removed once read (a shard's is not).
    owns_slots: bool,
}

impl FileChunks {
    /// The bytes of the file's distinct blobs.
    pub fn raw_bytes(&self) -> u64 {
        self.chunks.iter().map(|c| c.raw_size).sum()
    }

    /// Chunks whose slots are in `slots`, a file of [`SLOT_BYTES`] per blob in chunk order that
    /// stays where it is (a shard's `slots.bin`).
    pub fn in_slot_file(chunks: Vec<Chunk>, slots: PathBuf) -> Self {
        FileChunks { chunks, slots: Some(slots), owns_slots: false }
    }

    /// Hands each chunk in order, with its slots, to `f`; then removes the slot file if it is
    /// this build's own.
    pub fn for_each(self, mut f: impl FnMut(Chunk) -> io::Result<()>) -> io::Result<()> {
        let mut file = match &self.slots {
            Some(path) => Some(io::BufReader::with_capacity(1 << 16, fs::File::open(path)?)),
            None => None,
        };
        for mut chunk in self.chunks {
            if chunk.slots.len() < chunk.blobs as usize {
                let file = file.as_mut().ok_or_else(|| io::Error::other("a chunk's slots are missing"))?;
                let mut bytes = vec![0; chunk.blobs as usize * SLOT_BYTES];
                io::Read::read_exact(file, &mut bytes)?;
                chunk.slots = bytes.chunks_exact(SLOT_BYTES).map(slot_of).collect();
            }
            f(chunk)?;
        }
        match self.slots {
            Some(path) if self.owns_slots => fs::remove_file(path),
            _ => Ok(()),
        }
    }
}

struct OpenChunk {
    data: Vec<u8>,
    slots: Vec<Slot>,
}

/// Blobs are packed with others of their class: similar payloads side by side compress far
/// better than an interleaved mix. The last class holds
/// the blobs too long to hold in memory, streamed to a chunk of their own ([`SpillWriter`]):
/// one per chunk, never in an open chunk.
pub const CLASSES: usize = 6;

/// The room of an open chunk's buffer. A chunk is sealed once it holds [`PACK_TARGET`] bytes, so
/// twice that holds every chunk of blobs under [`PACK_TARGET`] without growing (a buffer that
/// grows is copied into fresh pages).
const CHUNK_BUFFER: usize = 2 * PACK_TARGET;

/// Emptied chunk buffers kept for the next chunks.
const SPARE_BUFFERS: usize = 2;

/// Phase 1: collects one input file's distinct blobs into compressed chunks.
pub struct ChunkWriter {
    dir: PathBuf,
    name: String,
    /// The ids of the file's blobs so far (in bounded memory: a long log has hundreds of
    /// thousands).
    seen: SeenBlobs,
    /// One open chunk per class.
    open: Vec<OpenChunk>,
    /// Buffers of chunks already compressed, emptied for the next chunks: a fresh megabyte would
    /// be faulted in page by page each time (half of a build's page faults).
    spare: Vec<Vec<u8>>,
    written: Vec<Chunk>,
    /// Where the slots of written chunks go (`None` until the first one, and when it cannot be
    /// made: they stay in memory), and how many slots it holds.
    slots: Option<(fs::File, PathBuf)>,
    slots_written: u64,
    /// Whether making the slot file failed (not tried again).
    no_slot_file: bool,
}

impl ChunkWriter {
    /// Chunks go to `dir`, named `{name}-{n}.zst`.
    pub fn new(dir: &Path, name: &str) -> Self {
        ChunkWriter {
            dir: dir.to_owned(),
            name: name.to_owned(),
            seen: SeenBlobs::new(),
            open: (0..CLASSES).map(|_| OpenChunk { data: Vec::new(), slots: Vec::new() }).collect(),
            spare: Vec::new(),
            written: Vec::new(),
            slots: None,
            slots_written: 0,
            no_slot_file: false,
        }
    }

    /// Files a new blob's id in `seen`.
    fn remember(&mut self, hash: Hash) -> io::Result<()> {
        self.seen.insert(hash, &self.dir, &self.name)
    }

    /// Moves the slots of the chunk just written (the last of `written`) to the slot file.
    fn spill_last_slots(&mut self) -> io::Result<()> {
        if self.slots.is_none() && !self.no_slot_file {
            let path = self.dir.join(format!("{}-slots", self.name));
            match fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path) {
                Ok(file) => self.slots = Some((file, path)),
                Err(_) => self.no_slot_file = true,
            }
        }
        let (Some((file, _)), Some(chunk)) = (&self.slots, self.written.last_mut()) else { return Ok(()) };
        let bytes: Vec<u8> = chunk.slots.iter().flat_map(slot_bytes).collect();
        file.write_all_at(&bytes, self.slots_written * SLOT_BYTES as u64)?;
        self.slots_written += chunk.slots.len() as u64;
        chunk.slots = Vec::new();
        Ok(())
    }

    /// Stores a blob of a class (below [`CLASSES`]) unless this file already stored the same bytes.
    pub fn add(&mut self, class: usize, hash: Hash, bytes: &[u8]) -> io::Result<()> {
        if self.seen.contains(&hash)? {
            return Ok(());
        }
        self.remember(hash)?;
        let open = &mut self.open[class];
        if open.data.is_empty() {
            // A chunk's buffer is sized once rather than doubled (and copied) on its way to a
            // megabyte, with room for the blob that takes it past one; pages it never fills are
            // never touched.
            if let Some(spare) = self.spare.pop() {
                open.data = spare;
            }
            open.data.reserve(CHUNK_BUFFER.max(bytes.len()));
        }
        open.data.extend_from_slice(bytes);
        open.slots.push(Slot { hash, size: bytes.len() as u64 });
        if open.data.len() >= PACK_TARGET {
            let mut full = std::mem::replace(open, OpenChunk { data: Vec::new(), slots: Vec::new() });
            // Kept until the build ends: without the growth slack.
            full.slots.shrink_to_fit();
            self.write_chunk(full)?;
        }
        Ok(())
    }

    /// Stores a blob streamed to a chunk of its own by a [`SpillWriter`], unless this file
    /// already stored the same bytes (then the chunk is deleted).
    pub fn add_spilled(&mut self, chunk: Chunk) -> io::Result<()> {
        let hash = chunk.slots[0].hash;
        if self.seen.contains(&hash)? {
            return fs::remove_file(&chunk.path);
        }
        self.written.push(chunk);
        self.remember(hash)?;
        self.spill_last_slots()
    }

    /// Compresses a sealed chunk and writes it, numbered after those before it. This runs on
    /// the filing thread: the rayon pool parses the next batches meanwhile, and a pool thread
    /// waits for this one (see `bundle::file`), so waiting for the pool here could wait forever.
    fn write_chunk(&mut self, mut chunk: OpenChunk) -> io::Result<()> {
        let compressed = compress(&chunk.data)?;
        let path = self.dir.join(format!("{}-{}.zst", self.name, self.written.len()));
        fs::write(&path, &compressed)?;
        self.written.push(Chunk {
            path,
            file_hash: *blake3::hash(&compressed).as_bytes(),
            size: compressed.len() as u64,
            raw_size: chunk.data.len() as u64,
            blobs: chunk.slots.len() as u32,
            slots: chunk.slots,
        });
        chunk.data.clear();
        // One grown for a long blob is let go.
        if chunk.data.capacity() <= CHUNK_BUFFER && self.spare.len() < SPARE_BUFFERS {
            self.spare.push(chunk.data);
        }
        self.spill_last_slots()
    }

    /// Writes what is left and returns the chunks in order.
    pub fn finish(mut self) -> io::Result<FileChunks> {
        for open in std::mem::take(&mut self.open) {
            if !open.slots.is_empty() {
                self.write_chunk(open)?;
            }
        }
        Ok(FileChunks { chunks: self.written, slots: self.slots.map(|(_, path)| path), owns_slots: true })
    }
}

/// Streams blobs too long to hold in memory (see [`crate::parse::Spill`]) each to a chunk file of
/// its own, compressed as they come: one zstd frame with a checksum (its content size unknown
/// when the frame starts, so not in its header). Finished chunks wait in `done`, by token, for
/// the thread that files the records to take them.
pub struct SpillWriter {
    dir: PathBuf,
    name: String,
    open: Option<zstd::stream::Encoder<'static, HashingWriter<fs::File>>>,
    raw_size: u64,
    path: PathBuf,
    /// The token of the next blob.
    next: u64,
    done: SpilledChunks,
}

/// The chunks a [`SpillWriter`] finished, by token; shared with the filing thread.
pub type SpilledChunks = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<u64, Chunk>>>;

/// A writer that hashes (blake3) and counts what goes through it: a chunk's name and size.
pub struct HashingWriter<W> {
    inner: W,
    hasher: blake3::Hasher,
    size: u64,
}

impl<W: io::Write> HashingWriter<W> {
    pub fn new(inner: W) -> Self {
        HashingWriter { inner, hasher: blake3::Hasher::new(), size: 0 }
    }

    /// The count and blake3 of the bytes written, and the writer they went to.
    pub fn finish(self) -> (u64, [u8; 32], W) {
        (self.size, *self.hasher.finalize().as_bytes(), self.inner)
    }
}

impl<W: io::Write> io::Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.size += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl SpillWriter {
    /// Chunks go to `dir`, named `{name}-spill-{token}.zst`.
    pub fn new(dir: &Path, name: &str) -> (Self, SpilledChunks) {
        let done = SpilledChunks::default();
        let writer = SpillWriter {
            dir: dir.to_owned(),
            name: name.to_owned(),
            open: None,
            raw_size: 0,
            path: PathBuf::new(),
            next: 0,
            done: done.clone(),
        };
        (writer, done)
    }
}

impl crate::parse::Spill for SpillWriter {
    fn begin(&mut self) -> io::Result<()> {
        self.path = self.dir.join(format!("{}-spill-{}.zst", self.name, self.next));
        let file = HashingWriter::new(fs::File::create(&self.path)?);
        let mut encoder = zstd::stream::Encoder::new(file, ZSTD_LEVEL)?;
        encoder.include_checksum(true)?;
        self.open = Some(encoder);
        self.raw_size = 0;
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.raw_size += bytes.len() as u64;
        io::Write::write_all(self.open.as_mut().expect("begun"), bytes)
    }

    fn end(&mut self, id: Hash) -> io::Result<u64> {
        let mut file = self.open.take().expect("begun").finish()?;
        io::Write::flush(&mut file)?;
        let token = self.next;
        self.next += 1;
        let chunk = Chunk {
            path: std::mem::take(&mut self.path),
            file_hash: *file.hasher.finalize().as_bytes(),
            size: file.size,
            raw_size: self.raw_size,
            slots: vec![Slot { hash: id, size: self.raw_size }],
            blobs: 1,
        };
        self.done.lock().expect("spilled chunks lock").insert(token, chunk);
        Ok(token)
    }
}

/// Compresses a pack: one zstd frame with its content size and a checksum.
pub fn compress(data: &[u8]) -> io::Result<Vec<u8>> {
    // A compression context is costly to set up (about a millisecond, and its tables' pages
    // faulted in): contexts are kept for whichever thread compresses next. Each input file's
    // filing thread compresses its chunks, so one context a thread would be one a file.
    static SHELF: Mutex<Vec<zstd::bulk::Compressor<'static>>> = Mutex::new(Vec::new());
    let taken = SHELF.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop();
    let mut compressor = match taken {
        Some(compressor) => compressor,
        None => {
            let mut c = zstd::bulk::Compressor::new(ZSTD_LEVEL)?;
            c.include_checksum(true)?;
            c.include_contentsize(true)?;
            c
        }
    };
    let compressed = compressor.compress(data);
    SHELF.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(compressor);
    compressed
}

/// The packs of a bundle and where every blob is.
pub struct Store {
    pub packs: Vec<Pack>,
    /// Every blob's location.
    pub locations: Locations,
}

impl Store {
    /// Where a blob is, if stored.
    pub fn get(&self, hash: &Hash) -> io::Result<Option<BlobLocation>> {
        self.locations.get(hash)
    }
}

/// Phase 2: turns the chunks of every file (in input order) into the bundle's packs under
/// `root/blobs/packs`, storing each distinct blob once (their locations spilled to `work`, the
/// staging directory). Chunks are moved, or, from shards,
/// copied and checked against their hash (see [`Placement`]).
pub fn assemble(root: &Path, work: &Path, files: Vec<FileChunks>, placement: Placement) -> io::Result<Store> {
    let packs_dir = root.join(PACKS_DIR);
    fs::create_dir_all(&packs_dir)?;
    let mut store = Store { packs: Vec::new(), locations: Locations::new(Some(work)) };
    let mut leftovers = OpenChunk { data: Vec::new(), slots: Vec::new() };
    // Blobs waiting in `leftovers`: a blob can repeat across mixed chunks of different files.
    let mut pending: HashSet<Hash> = HashSet::new();
    // Blobs already stored. The first file's chunks are deduplicated already, so the set is
    // only built when a second file starts: a single log never pays for it.
    let mut stored: Option<HashSet<Hash>> = None;
    for (i, chunks) in files.into_iter().enumerate() {
        if i == 1 {
            let mut set = HashSet::with_capacity(store.locations.len());
            store.locations.for_each_id(|h| {
                set.insert(h);
            })?;
            stored = Some(set);
        }
        chunks.for_each(|chunk| {
            assemble_chunk(root, &mut store, chunk, placement, &mut stored, &mut pending, &mut leftovers)
        })?;
    }
    if !leftovers.slots.is_empty() {
        write_pack(root, &mut store, leftovers, &mut stored)?;
    }
    Ok(store)
}

/// Phase 2 for one chunk: keep it as a pack, drop it, or repack its new blobs.
fn assemble_chunk(
    root: &Path,
    store: &mut Store,
    chunk: Chunk,
    placement: Placement,
    stored: &mut Option<HashSet<Hash>>,
    pending: &mut HashSet<Hash>,
    leftovers: &mut OpenChunk,
) -> io::Result<()> {
    {
        let is_stored = |h: &Hash| stored.as_ref().is_some_and(|s| s.contains(h));
        let new: Vec<(u64, Slot)> = with_offsets(&chunk.slots)
            .filter(|(_, s)| !is_stored(&s.hash) && !pending.contains(&s.hash))
            .map(|(offset, s)| (offset, *s))
            .collect();
        if new.len() == chunk.slots.len() {
            let pack = store.packs.len() as u32;
            let path = format!("{PACKS_DIR}/{}.zst", &hex(&chunk.file_hash)[..32]);
            match placement {
                Placement::Move => fs::rename(&chunk.path, root.join(&path))?,
                Placement::Copy => copy_checked(&chunk, &root.join(&path))?,
            }
            for (offset, s) in with_offsets(&chunk.slots) {
                store.locations.push(s.hash, BlobLocation { pack, offset, size: s.size })?;
                if let Some(set) = stored.as_mut() {
                    set.insert(s.hash);
                }
            }
            store.packs.push(Pack {
                path,
                size: chunk.size,
                raw_size: chunk.raw_size,
                blobs: chunk.slots.len() as u64,
            });
            return Ok(());
        }
        if !new.is_empty() {
            let data = zstd::bulk::decompress(&read_checked(&chunk)?, chunk.raw_size as usize)?;
            for (offset, s) in new {
                if !pending.insert(s.hash) {
                    continue;
                }
                leftovers.data.extend_from_slice(&data[offset as usize..(offset + s.size) as usize]);
                leftovers.slots.push(s);
                if leftovers.data.len() >= PACK_TARGET {
                    let full = std::mem::replace(leftovers, OpenChunk { data: Vec::new(), slots: Vec::new() });
                    write_pack(root, store, full, stored)?;
                    pending.clear();
                }
            }
        }
    }
    match placement {
        Placement::Move => fs::remove_file(&chunk.path),
        Placement::Copy => Ok(()),
    }
}

/// A file of a shard that does not hold what the shard says it does, found while the bundle is
/// assembled (the error's payload, so that a merge can name the shard it came from).
#[derive(Debug)]
pub struct DamagedFile {
    pub path: PathBuf,
    /// What is wrong with it, said after its name.
    pub why: String,
}

impl DamagedFile {
    pub fn error(path: &Path, why: impl Into<String>) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, DamagedFile { path: path.to_owned(), why: why.into() })
    }
}

impl std::fmt::Display for DamagedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: damaged: {}", self.path.display(), self.why)
    }
}

impl std::error::Error for DamagedFile {}

fn damaged(chunk: &Chunk) -> io::Error {
    DamagedFile::error(&chunk.path, "does not match its blake3")
}

/// A chunk's bytes, checked against its hash (it may come from a shard made elsewhere).
fn read_checked(chunk: &Chunk) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut io::Read::take(open_chunk(&chunk.path)?, chunk.size + 1), &mut bytes)?;
    if bytes.len() as u64 != chunk.size || blake3::hash(&bytes).as_bytes() != &chunk.file_hash {
        return Err(damaged(chunk));
    }
    Ok(bytes)
}

/// Copies a chunk of a shard to `to`, hashing it as it streams; a chunk that does not match
/// its hash is an error (the caller's staging directory is then dropped whole).
fn copy_checked(chunk: &Chunk, to: &Path) -> io::Result<()> {
    let mut out = HashingWriter::new(io::BufWriter::new(fs::File::create(to)?));
    io::copy(&mut io::Read::take(open_chunk(&chunk.path)?, chunk.size + 1), &mut out)?;
    let (size, hash, mut written) = out.finish();
    io::Write::flush(&mut written)?;
    if size != chunk.size || hash != chunk.file_hash {
        return Err(damaged(chunk));
    }
    Ok(())
}

/// A shard's chunk, opened only as a regular file: never through a symlink put in its place,
/// never waiting on a FIFO or reading a device (its bytes are then checked against its hash).
fn open_chunk(path: &Path) -> io::Result<fs::File> {
    tlparse_bundle::source::open_regular(path).map_err(|e| match e.kind() {
        io::ErrorKind::InvalidInput => DamagedFile::error(path, "is not a regular file"),
        _ => e,
    })
}

fn write_pack(root: &Path, store: &mut Store, chunk: OpenChunk, stored: &mut Option<HashSet<Hash>>) -> io::Result<()> {
    let compressed = compress(&chunk.data)?;
    let path = format!("{PACKS_DIR}/{}.zst", &hex(blake3::hash(&compressed).as_bytes())[..32]);
    fs::write(root.join(&path), &compressed)?;
    let pack = store.packs.len() as u32;
    for (offset, s) in with_offsets(&chunk.slots) {
        store.locations.push(s.hash, BlobLocation { pack, offset, size: s.size })?;
        if let Some(set) = stored.as_mut() {
            set.insert(s.hash);
        }
    }
    store.packs.push(Pack {
        path,
        size: compressed.len() as u64,
        raw_size: chunk.data.len() as u64,
        blobs: chunk.slots.len() as u64,
    });
    Ok(())
}

/// Blob-index entries a shard holds at most (on average), so a viewer looking up one blob
/// fetches one small file.
pub const SHARD_TARGET: usize = 4096;

/// Entries a bundle's only shard holds at most. An entry takes about 28 bytes compressed (its
/// id is incompressible), so one shard of 4096 entries would be a 110 KB fetch for every
/// artifact shown; past 512 entries (14 KB), 16 shards cost a viewer less, shard and manifest
/// together (each shard adds about 170 bytes to the manifest's `files`, which every viewer reads).
pub const SINGLE_SHARD_MAX: usize = 512;

/// How many leading hex digits name a blob-index shard: 0 (one shard) up to
/// [`SINGLE_SHARD_MAX`] blobs, else the fewest that keep the average shard at [`SHARD_TARGET`]
/// entries or fewer.
pub fn shard_prefix_len(blobs: usize) -> u32 {
    if blobs <= SINGLE_SHARD_MAX {
        return 0;
    }
    let mut len = 1;
    while blobs > SHARD_TARGET << (4 * len) {
        len += 1;
    }
    len
}

/// The shard file name part for a blob id (`all` when there is a single shard).
fn shard_name(blob_id: &str, prefix_len: u32) -> &str {
    tlparse_bundle::paths::shard_name(blob_id, prefix_len).expect("shard prefixes this code makes fit a blob id")
}

/// Writes the blob-index shards under `root`, in parallel, each built from the buckets of
/// [`Locations`] its ids fall in (a shard of one or two hex digits is whole buckets; a bucket
/// holds several shards of more digits). Every shard exists, empty or not, so a missing file
/// always means a broken bundle.
pub fn write_shards(
    root: &Path,
    store: &Store,
    prefix_len: u32,
    path_of: impl Fn(&str) -> String + Sync,
) -> io::Result<()> {
    let locations = &store.locations;
    let name = |shard: usize| match prefix_len {
        0 => "all".to_string(),
        _ => format!("{shard:0width$x}", width = prefix_len as usize),
    };
    let write = |shard: usize, entries: &[(Hash, BlobLocation)]| -> io::Result<()> {
        let name = name(shard);
        let shard = BlobIndexShard(entries.iter().map(|(h, l)| (hex(h), *l)).collect());
        debug_assert!(shard.0.keys().all(|h| shard_name(h, prefix_len) == name));
        fs::write(root.join(path_of(&name)), compress(&serde_json::to_vec(&shard)?)?)
    };
    if prefix_len <= 2 {
        // Shard `i` is the buckets whose first byte starts with its hex digits.
        let per_shard = locations::BUCKETS >> (4 * prefix_len);
        (0..1usize << (4 * prefix_len)).into_par_iter().try_for_each(|shard| {
            let mut entries = Vec::new();
            for bucket in shard * per_shard..(shard + 1) * per_shard {
                entries.extend(locations.bucket(bucket)?);
            }
            write(shard, &entries)
        })
    } else {
        // Bucket `b` holds the shards whose names start with its two hex digits, each a run of
        // its sorted ids.
        let per_bucket = 1usize << (4 * (prefix_len - 2));
        let shard_of = |hash: &[u8]| {
            (0..prefix_len as usize).fold(0, |acc, d| acc << 4 | usize::from(hash[d / 2] >> (4 * (1 - d % 2)) & 15))
        };
        (0..locations::BUCKETS).into_par_iter().try_for_each(|bucket| {
            let entries = locations.bucket(bucket)?;
            for shard in bucket * per_bucket..(bucket + 1) * per_bucket {
                let start = entries.partition_point(|(h, _)| shard_of(h) < shard);
                let end = entries.partition_point(|(h, _)| shard_of(h) <= shard);
                write(shard, &entries[start..end])?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads back every shard `write_shards` wrote for `store`.
    fn shards(store: &Store, prefix_len: u32) -> Vec<(String, BlobIndexShard)> {
        let dir = tempfile::tempdir().unwrap();
        write_shards(dir.path(), store, prefix_len, |name| format!("{name}.json.zst")).unwrap();
        let mut names: Vec<String> =
            fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        names
            .into_iter()
            .map(|n| {
                let json = zstd::decode_all(&fs::read(dir.path().join(&n)).unwrap()[..]).unwrap();
                (n.trim_end_matches(".json.zst").to_string(), serde_json::from_slice(&json).unwrap())
            })
            .collect()
    }

    #[test]
    fn one_shard_holds_at_most_512_blobs_and_sixteen_or_more_average_4096_or_fewer() {
        let expected =
            [(0, 0), (512, 0), (513, 1), (4096, 1), (65536, 1), (65537, 2), (1 << 20, 2), ((1 << 20) + 1, 3)];
        for (blobs, len) in expected {
            assert_eq!(shard_prefix_len(blobs), len, "{blobs} blobs");
        }
    }

    #[test]
    fn every_blob_is_in_the_shard_named_by_its_first_hex_digits() {
        // Ids spread over every first byte.
        // Spilled in blocks of 4: the shards read buckets back from the file.
        let spill = tempfile::tempdir().unwrap();
        let mut store = Store { packs: Vec::new(), locations: Locations::with_block(Some(spill.path()), 4) };
        for i in 0..3000u32 {
            let id = crate::parse::blob_id(&i.to_le_bytes());
            store.locations.push(id, BlobLocation { pack: 0, offset: u64::from(i), size: 1 }).unwrap();
        }
        let by_hex: std::collections::HashMap<String, BlobLocation> =
            store.locations.sorted().unwrap().iter().map(|(h, l)| (hex(h), *l)).collect();
        for prefix_len in 0..=3 {
            let shards = shards(&store, prefix_len);
            assert_eq!(shards.len(), if prefix_len == 0 { 1 } else { 1 << (4 * prefix_len) });
            let mut seen = 0;
            for (name, shard) in &shards {
                for (hash, location) in &shard.0 {
                    assert_eq!(shard_name(hash, prefix_len), name);
                    assert_eq!(by_hex[hash], *location);
                    seen += 1;
                }
            }
            assert_eq!(seen, store.locations.len(), "prefix length {prefix_len}");
        }
    }
}
