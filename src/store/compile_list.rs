//! A list of small records, one per compile or so, that keeps its latest pages in memory and
//! writes the others to its [`Store`]'s spool: what a table keeps per compile costs no memory
//! once the compile is long past, whatever the log's length.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::packed_rows::{Store, Written};

/// Records a page holds (4 in unit tests, so that pages spill and come back).
const PAGE: usize = if cfg!(test) { 4 } else { 256 };
/// Pages kept in memory: the latest used, as a log's entries name recent compiles.
const RESIDENT: usize = if cfg!(test) { 2 } else { 4 };

enum Page<T> {
    /// In memory; `written` is where the spool still holds the same records, if it does (a
    /// page read back and not changed since is not written again).
    Memory { records: Vec<T>, written: Option<Written> },
    /// Written to the spool: `len` bytes at `at` (its `PAGE` records).
    Spooled(Written),
}

/// Records by index, in pages of [`PAGE`]; all in memory when the store has no spool. Records
/// round-trip through postcard, so `T` must not skip fields when it serializes.
pub struct CompileList<T> {
    pages: Vec<Page<T>>,
    len: usize,
    /// The pages in memory but the last, least recently used first.
    resident: Vec<usize>,
    store: Store,
}

impl<T> Default for CompileList<T> {
    fn default() -> Self {
        CompileList::new(&Store::default())
    }
}

impl<T> CompileList<T> {
    /// No records yet; pages long unused will go to `store`.
    pub fn new(store: &Store) -> Self {
        CompileList { pages: Vec::new(), len: 0, resident: Vec::new(), store: store.clone() }
    }
}

impl<T: Serialize + DeserializeOwned> CompileList<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `record`; returns its index.
    pub fn push(&mut self, record: T) -> usize {
        if self.len % PAGE == 0 {
            if let Some(last) = self.pages.len().checked_sub(1) {
                self.resident.push(last);
                self.evict();
            }
            self.pages.push(Page::Memory { records: Vec::with_capacity(PAGE), written: None });
        }
        let last = self.pages.len() - 1;
        match &mut self.pages[last] {
            Page::Memory { records, .. } => records.push(record),
            Page::Spooled(_) => unreachable!("the last page stays in memory"),
        }
        self.len += 1;
        self.len - 1
    }

    /// Record `index`, to change, read back from the spool if its page was written there.
    pub fn get_mut(&mut self, index: usize) -> &mut T {
        let page = self.page_of(index);
        match &mut self.pages[page] {
            Page::Memory { records, written } => {
                *written = None;
                &mut records[index % PAGE]
            }
            Page::Spooled(_) => unreachable!("the page was just loaded"),
        }
    }

    /// Record `index`, read back from the spool if its page was written there.
    pub fn get(&mut self, index: usize) -> &T {
        let page = self.page_of(index);
        match &self.pages[page] {
            Page::Memory { records, .. } => &records[index % PAGE],
            Page::Spooled(_) => unreachable!("the page was just loaded"),
        }
    }

    /// The page of record `index`, made resident.
    fn page_of(&mut self, index: usize) -> usize {
        assert!(index < self.len, "record {index} of {}", self.len);
        let page = index / PAGE;
        self.load(page);
        page
    }

    /// The store long-unused pages go to.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Every record in order, reading spooled pages back one at a time.
    pub fn into_records(self) -> impl Iterator<Item = T> {
        let store = self.store;
        self.pages.into_iter().flat_map(move |page| match page {
            Page::Memory { records, .. } => records,
            Page::Spooled(written) => written.read(&**store.spool().expect("spooled pages have a spool")),
        })
    }

    /// Makes `page` resident, the most recently used.
    fn load(&mut self, page: usize) {
        if page == self.pages.len() - 1 {
            return;
        }
        if let Some(at) = self.resident.iter().position(|&p| p == page) {
            let p = self.resident.remove(at);
            self.resident.push(p);
            return;
        }
        if let Page::Spooled(written) = self.pages[page] {
            let spool = &**self.store.spool().expect("spooled pages have a spool");
            self.pages[page] = Page::Memory { records: written.read(spool), written: Some(written) };
        }
        self.resident.push(page);
        self.evict();
    }

    /// Writes the least recently used pages to the spool while more than [`RESIDENT`] are in
    /// memory (unless the store has no spool, or writing fails: then they stay).
    fn evict(&mut self) {
        let Some(spool) = self.store.spool().cloned() else { return };
        while self.resident.len() > RESIDENT {
            let page = self.resident.remove(0);
            let records = match &self.pages[page] {
                Page::Memory { written: Some(written), .. } => {
                    self.pages[page] = Page::Spooled(*written);
                    continue;
                }
                Page::Memory { records, written: None } => records,
                Page::Spooled(_) => continue,
            };
            let Some(written) = Written::write(&*spool, records) else { return };
            self.pages[page] = Page::Spooled(written);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::packed_rows::tests::test_store;
    use super::*;

    /// Records pushed, changed out of order (old pages coming back from the spool) and read in
    /// order are what a plain list would hold, with a spool or without.
    #[test]
    fn records_read_back_as_a_list_would_hold_them() {
        for spooled in [false, true] {
            let (store, spool) = test_store(spooled);
            let (mut list, mut plain) = (CompileList::<(u64, u64)>::new(&store), Vec::new());
            for i in 0..50u64 {
                assert_eq!(list.push((i, 0)), plain.len());
                plain.push((i, 0));
                for j in [i / 2, i / 7, i.saturating_sub(1), 3.min(i)] {
                    list.get_mut(j as usize).1 += i;
                    plain[j as usize].1 += i;
                }
                // Pages read back only to be read are not written again: and still read right.
                let k = (i * 5 % (i + 1)) as usize;
                assert_eq!(*list.get(k), plain[k]);
            }
            assert_eq!(list.len(), 50);
            assert_eq!(spooled, !spool.is_empty(), "pages were spooled only with a spool");
            assert_eq!(list.into_records().collect::<Vec<_>>(), plain);
        }
    }
}
