//! Reading payloads back from the blob store a build has just assembled, for the cross-rank
//! tables that compare payload texts (`rank_differ`): one pack decompressed at a time.

use std::cell::RefCell;
use std::fs;
use std::path::Path;

use super::blobs::Store;
use crate::analysis::cross_rank::PayloadReader;

/// The store's payloads. Holds the last pack it decompressed (about a megabyte: packs are
/// [`super::blobs::PACK_TARGET`] bytes, or one long blob), so that payloads read in
/// [`PayloadReader::place`] order decompress each pack once.
pub struct StorePayloads<'a> {
    root: &'a Path,
    store: &'a Store,
    pack: RefCell<Option<(u32, Vec<u8>)>>,
}

impl<'a> StorePayloads<'a> {
    pub fn new(root: &'a Path, store: &'a Store) -> Self {
        StorePayloads { root, store, pack: RefCell::new(None) }
    }

    fn location(&self, blob: &str) -> Option<crate::schema::BlobLocation> {
        let id = tlparse_bundle::ids::parse_blob_id(blob)?;
        self.store.get(&id).ok().flatten()
    }

    /// The pack, decompressed (the held one, or read now and held in its place).
    fn with_pack<T>(&self, pack: u32, f: impl FnOnce(&[u8]) -> Option<T>) -> Option<T> {
        let mut held = self.pack.borrow_mut();
        if held.as_ref().is_none_or(|(p, _)| *p != pack) {
            *held = None;
            let path = self.root.join(&self.store.packs.get(pack as usize)?.path);
            let bytes = zstd::decode_all(fs::File::open(path).ok()?).ok()?;
            *held = Some((pack, bytes));
        }
        f(&held.as_ref()?.1)
    }
}

impl PayloadReader for StorePayloads<'_> {
    fn place(&self, blob: &str) -> Option<(u32, u64)> {
        self.location(blob).map(|l| (l.pack, l.offset))
    }

    fn payload(&self, blob: &str) -> Option<Vec<u8>> {
        let loc = self.location(blob)?;
        self.with_pack(loc.pack, |bytes| {
            let start = usize::try_from(loc.offset).ok()?;
            let end = start.checked_add(usize::try_from(loc.size).ok()?)?;
            bytes.get(start..end).map(<[u8]>::to_vec)
        })
    }
}
