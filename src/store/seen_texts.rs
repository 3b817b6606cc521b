//! Long texts a table met, each with the id it gave it: the last few kept whole and found again
//! by comparing them, every one known by its digest. torch logs the same configs and stack traces
//! in compile after compile, a few of them in turn; comparing a text with the recent ones costs a
//! fraction of digesting it.

use std::collections::VecDeque;

use super::digest_ids::DigestIds;
use super::packed_rows::{Digest, Store, text_digest};

/// How many distinct texts are kept whole, and how many of their bytes at most.
const RECENT: usize = 16;
const RECENT_BYTES: usize = 1 << 20;

/// Texts met, by id.
#[derive(Default)]
pub struct SeenTexts {
    /// The latest distinct texts first.
    recent: VecDeque<(Box<str>, u32)>,
    recent_bytes: usize,
    /// Every text added, by its digest.
    ids: DigestIds,
}

/// What [`SeenTexts::find`] knows of a text not seen before: its digest, for [`SeenTexts::add`].
#[derive(Clone, Copy)]
pub struct Unseen(Digest);

impl SeenTexts {
    /// No texts yet; digests long unused will go to `store`.
    pub fn new(store: &Store) -> Self {
        SeenTexts { ids: DigestIds::new(store), ..SeenTexts::default() }
    }

    /// The id of `text` if it was added, else what adding it takes.
    pub fn find(&mut self, text: &str) -> Result<u32, Unseen> {
        if let Some(at) = self.recent.iter().position(|(t, _)| t.len() == text.len() && **t == *text) {
            return Ok(self.recent[at].1);
        }
        let key = text_digest(text.as_bytes());
        match self.ids.get(key) {
            Some(id) => {
                self.keep(text, id);
                Ok(id)
            }
            None => Err(Unseen(key)),
        }
    }

    /// Adds `text`, which [`SeenTexts::find`] did not know, with its id.
    pub fn add(&mut self, text: &str, Unseen(key): Unseen, id: u32) {
        if self.ids.get(key).is_none() {
            self.ids.insert(key, id);
        }
        self.keep(text, id);
    }

    /// Keeps `text` among the recent ones (unless it is too long to).
    fn keep(&mut self, text: &str, id: u32) {
        if text.len() > RECENT_BYTES / 4 {
            return;
        }
        self.recent.push_front((text.into(), id));
        self.recent_bytes += text.len();
        while self.recent.len() > RECENT || self.recent_bytes > RECENT_BYTES {
            let (old, _) = self.recent.pop_back().expect("over a bound: not empty");
            self.recent_bytes -= old.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_found_again_recent_or_long_past() {
        let mut seen = SeenTexts::default();
        let text = |n: usize| format!("text {n} {}", "x".repeat(n * 10));
        for n in 0..100 {
            let unseen = seen.find(&text(n)).expect_err("new");
            seen.add(&text(n), unseen, n as u32);
        }
        assert!(seen.recent.len() <= RECENT && seen.recent_bytes <= RECENT_BYTES);
        // The latest by comparing them, the others by their digests: each with its own id.
        for n in (0..100).rev() {
            assert_eq!(seen.find(&text(n)).ok(), Some(n as u32), "{n}");
        }
        assert!(seen.find("text 100").is_err());
        // A text too long to keep whole is still known by its digest.
        let long = "y".repeat(RECENT_BYTES);
        let unseen = seen.find(&long).expect_err("new");
        seen.add(&long, unseen, 7);
        assert_eq!(seen.find(&long).ok(), Some(7));
        assert!(seen.recent.iter().all(|(t, _)| t.len() < long.len()));
    }
}
