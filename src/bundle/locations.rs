//! Where every stored blob is, kept by the first byte of its id (the blob index's shards are runs
//! of ids by their first hex digits) and spilled in blocks to an unlinked file of the staging
//! directory: a log of a million blobs held them all in memory at its end (40 MB).

use std::fs;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::blobs::Hash;
use super::seen::open_unlinked;
use crate::schema::BlobLocation;

/// Buckets: one per first byte of a blob id.
pub const BUCKETS: usize = 256;
/// Locations a bucket holds in memory before they go to the file: 256 buckets of 256 take
/// 2.6 MB at most.
const BLOCK: usize = 256;
/// Bytes of a location in the file: id, pack, offset, size.
const ENTRY: usize = 16 + 4 + 8 + 8;

/// Every stored blob's location, by the first byte of its id.
pub struct Locations {
    /// Per bucket, the locations not yet in the file.
    buffered: Vec<Vec<(Hash, BlobLocation)>>,
    /// Per bucket, where its blocks are in the file (offset, locations).
    blocks: Vec<Vec<(u64, u32)>>,
    /// The file (made at the first full block; none when it could not be: then memory) and its
    /// length.
    file: Option<fs::File>,
    end: u64,
    /// Where the file is made.
    dir: Option<std::path::PathBuf>,
    block: usize,
    len: usize,
    bytes: u64,
}

impl Locations {
    /// Locations whose full blocks go to a file made in `dir` (none: they stay in memory).
    pub fn new(dir: Option<&Path>) -> Locations {
        Locations::with_block(dir, BLOCK)
    }

    /// [`Locations::new`] with blocks of `block` locations (tests spill with small ones).
    pub fn with_block(dir: Option<&Path>, block: usize) -> Locations {
        Locations {
            buffered: vec![Vec::new(); BUCKETS],
            blocks: vec![Vec::new(); BUCKETS],
            file: None,
            end: 0,
            dir: dir.map(Path::to_path_buf),
            block,
            len: 0,
            bytes: 0,
        }
    }

    /// Adds a blob's location (each blob once).
    pub fn push(&mut self, hash: Hash, location: BlobLocation) -> io::Result<()> {
        let bucket = usize::from(hash[0]);
        self.buffered[bucket].push((hash, location));
        self.len += 1;
        self.bytes += location.size;
        if self.buffered[bucket].len() >= self.block {
            self.spill(bucket)?;
        }
        Ok(())
    }

    /// Moves a bucket's buffered locations to the file, if there is one.
    fn spill(&mut self, bucket: usize) -> io::Result<()> {
        if self.file.is_none() {
            let Some(dir) = self.dir.take() else { return Ok(()) };
            // Unique among the builds sharing the directory: the staging directory is this
            // build's own, and the name is this process's.
            let path = dir.join(format!("locations-{}", std::process::id()));
            match open_unlinked(&path) {
                Ok(file) => self.file = Some(file),
                Err(_) => return Ok(()),
            }
        }
        let file = self.file.as_ref().expect("set above");
        let entries = std::mem::take(&mut self.buffered[bucket]);
        let mut bytes = Vec::with_capacity(entries.len() * ENTRY);
        for (hash, location) in &entries {
            put_entry(&mut bytes, hash, location);
        }
        file.write_all_at(&bytes, self.end)?;
        self.blocks[bucket].push((self.end, entries.len() as u32));
        self.end += bytes.len() as u64;
        Ok(())
    }

    /// How many blobs are stored.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The stored blobs' bytes.
    pub fn blob_bytes(&self) -> u64 {
        self.bytes
    }

    /// The locations of the blobs whose ids start with byte `bucket`, sorted by id.
    pub fn bucket(&self, bucket: usize) -> io::Result<Vec<(Hash, BlobLocation)>> {
        let spilled: usize = self.blocks[bucket].iter().map(|&(_, count)| count as usize).sum();
        let mut entries = Vec::with_capacity(spilled + self.buffered[bucket].len());
        for &(at, count) in &self.blocks[bucket] {
            let mut bytes = vec![0; count as usize * ENTRY];
            self.file.as_ref().expect("blocks are in the file").read_exact_at(&mut bytes, at)?;
            entries.extend(bytes.chunks_exact(ENTRY).map(entry_of));
        }
        entries.extend_from_slice(&self.buffered[bucket]);
        entries.sort_unstable_by_key(|(h, _)| *h);
        Ok(entries)
    }

    /// Every location, sorted by id.
    pub fn sorted(&self) -> io::Result<Vec<(Hash, BlobLocation)>> {
        let mut all = Vec::with_capacity(self.len);
        for bucket in 0..BUCKETS {
            all.extend(self.bucket(bucket)?);
        }
        Ok(all)
    }

    /// Where a blob is, if stored.
    pub fn get(&self, hash: &Hash) -> io::Result<Option<BlobLocation>> {
        let bucket = self.bucket(usize::from(hash[0]))?;
        Ok(bucket.binary_search_by_key(hash, |(h, _)| *h).ok().map(|i| bucket[i].1))
    }

    /// Hands every stored blob's id to `f`, bucket by bucket.
    pub fn for_each_id(&self, mut f: impl FnMut(Hash)) -> io::Result<()> {
        for bucket in 0..BUCKETS {
            self.bucket(bucket)?.into_iter().for_each(|(h, _)| f(h));
        }
        Ok(())
    }
}

/// Appends a location as the file holds it.
fn put_entry(out: &mut Vec<u8>, hash: &Hash, l: &BlobLocation) {
    out.extend_from_slice(hash);
    out.extend_from_slice(&l.pack.to_le_bytes());
    out.extend_from_slice(&l.offset.to_le_bytes());
    out.extend_from_slice(&l.size.to_le_bytes());
}

fn entry_of(bytes: &[u8]) -> (Hash, BlobLocation) {
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let hash: Hash = bytes[..16].try_into().expect("16 bytes");
    let pack = u32::from_le_bytes(bytes[16..20].try_into().expect("4 bytes"));
    (hash, BlobLocation { pack, offset: u64_at(20), size: u64_at(28) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Locations spilled in blocks of two come back as they went in, sorted, bucket by bucket,
    /// as kept in memory.
    #[test]
    fn spilled_locations_read_back_sorted_as_kept_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut spilled = Locations::with_block(Some(dir.path()), 2);
        let mut kept = Locations::new(None);
        let mut expected = Vec::new();
        for i in 0..3000u32 {
            let id = crate::parse::blob_id(&i.to_le_bytes());
            let location = BlobLocation { pack: i % 7, offset: u64::from(i) << 33, size: u64::from(i) + 1 };
            spilled.push(id, location).unwrap();
            kept.push(id, location).unwrap();
            expected.push((id, location));
        }
        expected.sort_unstable_by_key(|(h, _)| *h);
        assert!(spilled.file.is_some() && spilled.blocks.iter().map(Vec::len).sum::<usize>() > 1000);
        assert!(kept.file.is_none());
        assert_eq!(spilled.sorted().unwrap(), expected);
        assert_eq!(kept.sorted().unwrap(), expected);
        assert_eq!(spilled.len(), 3000);
        assert_eq!(spilled.blob_bytes(), expected.iter().map(|(_, l)| l.size).sum::<u64>());
        let (id, location) = expected[1234];
        assert_eq!(spilled.get(&id).unwrap(), Some(location));
        // The spill file is gone from the directory already.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
