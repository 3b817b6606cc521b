//! Compile ids in 16 or 8 bytes, where a `CompileId` takes 64: the forms the tables that keep one
//! per compile (and a long log has tens of thousands) hold them in.

use crate::schema::CompileId;

/// Each field plus one in a u32 (0 when the field is missing). An id with a field too large for
/// that (torch counts frames and compiles from 0: none in practice) has no small form; holders
/// keep it whole elsewhere and mark its place with [`WIDE`] as the first word.
pub type SmallId = [u32; 4];

/// A small id that stands for no compile id.
pub const NO_ID: SmallId = [u32::MAX; 4];

/// The first word of a small id whose compile id is kept whole elsewhere.
pub const WIDE: u32 = u32::MAX - 1;

/// An id's small form, if each field fits (below [`WIDE`], so that a first word of [`WIDE`] or
/// [`NO_ID`]'s always means what it says).
pub fn small_id(id: &CompileId) -> Option<SmallId> {
    let field = |value: Option<u64>| match value {
        None => Some(0),
        Some(v) => v.checked_add(1).and_then(|w| u32::try_from(w).ok()).filter(|&w| w < WIDE),
    };
    Some([field(id.compiled_autograd_id)?, field(id.frame_id)?, field(id.frame_compile_id)?, field(id.attempt)?])
}

/// The compile id of a small form [`small_id`] made (not [`NO_ID`], not [`WIDE`]).
pub fn full_id(small: SmallId) -> CompileId {
    let field = |word: u32| word.checked_sub(1).map(u64::from);
    CompileId {
        compiled_autograd_id: field(small[0]),
        frame_id: field(small[1]),
        frame_compile_id: field(small[2]),
        attempt: field(small[3]),
    }
}

/// A compile id in 8 bytes, or the mark that its holder keeps it whole elsewhere (an id with a
/// field too large for its bits: torch counts frames, frame compiles and attempts from 0, and
/// none reaches them in practice). What a stream's compile records keep their ids as, and the
/// one thing of each compile that stays in memory while the tables read them.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CompactId(u64);

/// The bits of each field of a [`CompactId`], high to low: compiled-autograd id, frame id, frame
/// compile id, attempt. A field holds its value plus one (0 when the id has none) and is never
/// all ones, so that [`WIDE_ID`] is no id's packing.
const FIELD_BITS: [u32; 4] = [16, 24, 16, 8];

/// The mark of an id kept whole elsewhere.
const WIDE_ID: u64 = u64::MAX;

impl CompactId {
    /// `id`'s compact form: the id itself when each field fits, else the mark.
    pub fn of(id: &CompileId) -> CompactId {
        let fields = [id.compiled_autograd_id, id.frame_id, id.frame_compile_id, id.attempt];
        let mut packed = 0u64;
        for (value, bits) in fields.into_iter().zip(FIELD_BITS) {
            let stored = match value {
                None => 0,
                Some(v) => match v.checked_add(1) {
                    Some(stored) if stored < (1 << bits) - 1 => stored,
                    _ => return CompactId(WIDE_ID),
                },
            };
            packed = packed << bits | stored;
        }
        CompactId(packed)
    }

    /// The id, unless it is kept whole elsewhere.
    pub fn id(self) -> Option<CompileId> {
        if self.0 == WIDE_ID {
            return None;
        }
        let mut fields = [None; 4];
        let mut rest = self.0;
        for (field, bits) in fields.iter_mut().zip(FIELD_BITS).rev() {
            *field = (rest & ((1 << bits) - 1)).checked_sub(1);
            rest >>= bits;
        }
        let [compiled_autograd_id, frame_id, frame_compile_id, attempt] = fields;
        Some(CompileId { compiled_autograd_id, frame_id, frame_compile_id, attempt })
    }
}

/// Compile ids in order (or none), each as a [`SmallId`], or [`NO_ID`] for none; an id too large for one is
/// [`WIDE`] and its index in `wide`.
#[derive(Default, Clone)]
pub struct CompileIds {
    small: Vec<SmallId>,
    /// The ids too large for a [`SmallId`].
    wide: Vec<CompileId>,
}

impl CompileIds {
    pub fn len(&self) -> usize {
        self.small.len()
    }

    pub fn is_empty(&self) -> bool {
        self.small.is_empty()
    }

    /// How many ids are kept whole (too large for a small form).
    #[cfg(test)]
    pub(crate) fn kept_whole(&self) -> usize {
        self.wide.len()
    }

    /// Appends an id; returns its index.
    pub fn push(&mut self, id: Option<CompileId>) -> usize {
        let small = match id {
            None => NO_ID,
            Some(id) => small_id(&id).unwrap_or_else(|| {
                self.wide.push(id);
                [WIDE, (self.wide.len() - 1) as u32, 0, 0]
            }),
        };
        self.small.push(small);
        self.small.len() - 1
    }

    pub fn get(&self, i: usize) -> Option<CompileId> {
        let small = self.small[i];
        match small[0] {
            u32::MAX => None,
            WIDE => Some(self.wide[small[1] as usize]),
            _ => Some(full_id(small)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids read back from their small form; the ones with a field too large have none.
    #[test]
    fn small_ids_read_back() {
        let id = |ca, frame, compile, attempt| CompileId {
            compiled_autograd_id: ca,
            frame_id: frame,
            frame_compile_id: compile,
            attempt,
        };
        let big = u64::from(u32::MAX);
        for fits in [
            id(None, None, None, None),
            id(None, Some(0), Some(0), Some(0)),
            id(Some(3), Some(1), Some(2), None),
            id(None, Some(big - 3), Some(0), Some(0)),
        ] {
            let small = small_id(&fits).expect("fits");
            assert!(small[0] < WIDE);
            assert_eq!(full_id(small), fits);
        }
        for wide in [id(None, Some(big - 2), Some(0), Some(0)), id(Some(u64::MAX), None, None, None)] {
            assert_eq!(small_id(&wide), None);
        }
    }

    /// Ids read back from their compact form, up to the largest value of each field; one past
    /// it in any field is kept whole elsewhere.
    #[test]
    fn compact_ids_read_back() {
        let id = |ca, frame, compile, attempt| CompileId {
            compiled_autograd_id: ca,
            frame_id: frame,
            frame_compile_id: compile,
            attempt,
        };
        let largest = FIELD_BITS.map(|bits| (1u64 << bits) - 3);
        let [ca, frame, compile, attempt] = largest.map(Some);
        for fits in [
            id(None, None, None, None),
            id(None, Some(0), Some(0), Some(0)),
            id(Some(3), Some(1), Some(2), None),
            id(ca, frame, compile, attempt),
            id(None, frame, None, Some(0)),
        ] {
            assert_eq!(CompactId::of(&fits).id(), Some(fits));
        }
        for wide in [
            id(ca.map(|v| v + 1), None, None, None),
            id(None, frame.map(|v| v + 1), Some(0), Some(0)),
            id(None, Some(0), compile.map(|v| v + 1), Some(0)),
            id(None, Some(0), Some(0), attempt.map(|v| v + 1)),
            id(None, Some(u64::MAX), Some(0), Some(0)),
        ] {
            assert_eq!(CompactId::of(&wide).id(), None, "{wide:?}");
        }
    }
}
