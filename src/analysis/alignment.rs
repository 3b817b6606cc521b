//! Which compile of one stream is "the same compile" as which compile of another: compiles are
//! aligned by the code they compiled, never by compile id alone. Every cross-rank table, and the
//! comparison of two runs (`run_compare`), pairs compiles through this one module; the build also
//! writes each compile's key into its `compile_directory` row as `align_key` ([`key_string`]), so
//! that readers (the viewer's Compare page) pair compiles by string equality, with no algorithm
//! of their own.
//!
//! The unit aligned is a frame compile (a frame and its frame compile index): its attempts
//! (restarts of the analysis after a graph break) are its history, share its key, and its final
//! attempt (the one not restarted) is what readers compare.
//!
//! Dynamo numbers frames per process in the order it first compiles them, so one extra function
//! compiled on one rank shifts every later frame id there. The key of a frame compile is
//! therefore:
//! - its code object (file, first line, name: `compile_directory`'s `code`), which frame of that
//!   code it is on its stream (0 for the first frame that compiled the code, 1 for a second frame
//!   with the same code identity, in order of first compile: two resume functions of one line
//!   are two frames, never one) and its ordinal within that frame (its recompile index);
//! - inside compiled autograd, its compiled-autograd id and its ordinal among that id's frame
//!   compiles (the graphs compiled autograd hands Dynamo are generated code whose file name,
//!   `<eval_with_key>.N`, counts per process); a graph capture (`[!0/-/-]`) by its
//!   compiled-autograd id alone;
//! - with no code known, its frame compile's id (recorded as an ambiguity).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::parse::display_compile_id;
use crate::schema::CompileId;
use crate::schema::cross_rank::compile_alignment::{
    AlignedCompile, AlignedCompileRef, AlignmentAmbiguity, AlignmentGroup, AlignmentKey, AmbiguityKind, CodeKey,
    CompileAlignment, CompileAttempt, FrameIdShift, PartialCode, StreamAlignment, StreamCompile, StreamCompileId,
};
use crate::schema::tables::{CompileEntry, CompileStatus, CompiledCode};

/// One stream's compiles, as the alignment reads them.
pub struct StreamCompiles<'a, R = CompileEntry> {
    /// The stream id.
    pub stream: &'a str,
    /// Its `compile_directory` rows (none when it has no compile directory), or rows with only
    /// what the keying reads ([`KeyedRow`]).
    pub compiles: &'a [R],
}

/// What the keying reads of a compile: a `compile_directory` row has it all, and a build keys
/// its compiles from rows holding only this (a long log's full rows, all at once, are megabytes).
pub trait KeyedRow {
    /// The compile id.
    fn cid(&self) -> CompileId;
    /// The compile id as displayed (`[0/1]`).
    fn compile_id(&self) -> Cow<'_, str>;
    /// The code it compiled, if known.
    fn code(&self) -> Option<&CompiledCode>;
}

/// Implements [`KeyedRow`] for row types that hold what it reads as fields of the same names
/// (`cid`, `compile_id`, `code`).
macro_rules! keyed_row_from_fields {
    ($($row:ty),+) => {$(
        impl $crate::analysis::alignment::KeyedRow for $row {
            fn cid(&self) -> $crate::schema::CompileId {
                self.cid
            }
            fn compile_id(&self) -> std::borrow::Cow<'_, str> {
                std::borrow::Cow::Borrowed(&self.compile_id)
            }
            fn code(&self) -> Option<&$crate::schema::tables::CompiledCode> {
                self.code.as_ref()
            }
        }
    )+};
}
pub(crate) use keyed_row_from_fields;

keyed_row_from_fields!(CompileEntry);

/// A stream's compiles as the keying reads them, by row: a slice of [`KeyedRow`]s, or what
/// reads them from elsewhere (a build keys a long log's compiles from its compile records, with
/// no row held for each).
pub trait KeyedRows {
    /// How many rows there are.
    fn row_count(&self) -> usize;
    /// The compile id of row `row`.
    fn cid(&self, row: usize) -> CompileId;
    /// Its compile id as displayed (`[0/1]`).
    fn compile_id(&self, row: usize) -> Cow<'_, str>;
    /// The code it compiled, if known.
    fn code(&self, row: usize) -> Option<&CompiledCode>;
}

impl<R: KeyedRow> KeyedRows for [R] {
    fn row_count(&self) -> usize {
        self.len()
    }
    fn cid(&self, row: usize) -> CompileId {
        self[row].cid()
    }
    fn compile_id(&self, row: usize) -> Cow<'_, str> {
        self[row].compile_id()
    }
    fn code(&self, row: usize) -> Option<&CompiledCode> {
        self[row].code()
    }
}

/// What aligning reads of a compile beyond its key: its status and restart reasons. A
/// `compile_directory` row has them, and so do the light rows the cross-rank tables keep of
/// every rank's compiles.
pub trait AlignedRow: KeyedRow {
    fn status(&self) -> CompileStatus;
    /// `compile_directory`'s `restart_reasons` (on the final attempt of a restarted frame
    /// compile).
    fn restart_reasons(&self) -> &[String];
}

impl AlignedRow for CompileEntry {
    fn status(&self) -> CompileStatus {
        self.status
    }
    fn restart_reasons(&self) -> &[String] {
        &self.restart_reasons
    }
}

/// Compiles aligned across streams: the `compile_alignment` table and lookups into it.
pub struct Alignment {
    pub table: CompileAlignment,
    /// Per stream (in input order): compile id as displayed, of any attempt → its index in
    /// `table.compiles`, and whether it is its frame compile's final attempt.
    by_stream: Vec<HashMap<String, (u32, bool)>>,
}

/// One compile (attempt) of one stream, keyed.
struct Keyed<'a, R = CompileEntry> {
    stream: usize,
    entry: &'a R,
    key: AlignmentKey,
}

impl Alignment {
    /// Aligns the streams' compiles.
    pub fn new<R: AlignedRow>(streams: &[StreamCompiles<R>]) -> Alignment {
        let mut ambiguities = Vec::new();
        let keyed: Vec<Keyed<R>> =
            streams.iter().enumerate().flat_map(|(i, s)| key_stream(i, s, &mut ambiguities)).collect();
        let order = aligned_order(&keyed);
        let labels = labels(&order);
        let index: HashMap<&AlignmentKey, u32> = order.iter().enumerate().map(|(i, k)| (k, i as u32)).collect();
        // Each aligned compile's attempts on each stream, in row order.
        let mut attempts: Vec<BTreeMap<usize, Vec<&Keyed<R>>>> = vec![BTreeMap::new(); order.len()];
        for k in &keyed {
            attempts[index[&k.key] as usize].entry(k.stream).or_default().push(k);
        }
        let mut by_stream = vec![HashMap::new(); streams.len()];
        let mut present: Vec<BTreeMap<usize, StreamCompile>> = vec![BTreeMap::new(); order.len()];
        let mut frames: Vec<BTreeMap<usize, u64>> = vec![BTreeMap::new(); order.len()];
        for (a, per_stream) in attempts.into_iter().enumerate() {
            for (stream, mut list) in per_stream {
                // The final attempt is the highest (the last row of that attempt, should one repeat).
                list.sort_by_key(|k| k.entry.cid().attempt.unwrap_or(0));
                let (last, earlier) = list.split_last().expect("an aligned compile has an attempt on its stream");
                for k in earlier {
                    by_stream[stream].insert(k.entry.compile_id().into_owned(), (a as u32, false));
                }
                by_stream[stream].insert(last.entry.compile_id().into_owned(), (a as u32, true));
                if let Some(frame) = last.entry.cid().frame_id {
                    frames[a].insert(stream, frame);
                }
                present[a].insert(stream, stream_compile(streams[stream].stream, last.entry, earlier));
            }
        }
        let compiles: Vec<AlignedCompile> = order
            .iter()
            .zip(labels)
            .zip(present)
            .map(|((key, label), present)| aligned_compile(streams, key.clone(), label, present))
            .collect();
        let stream_rows = stream_rows(streams, &compiles, &frames, &by_stream);
        let table = CompileAlignment {
            diverges: compiles.iter().any(|c| !c.missing.is_empty()),
            ids_shifted: compiles.iter().any(|c| c.compile_id_differs),
            groups: groups(streams, &by_stream),
            partial_code: partial_code(streams, &compiles, &stream_rows),
            streams: stream_rows,
            compiles,
            ambiguities,
        };
        Alignment { table, by_stream }
    }

    /// The aligned compile of a stream's compile id (as displayed), if the stream has it: any
    /// attempt's id finds its frame compile's row.
    pub fn aligned(&self, stream: usize, compile_id: &str) -> Option<u32> {
        Some(self.by_stream.get(stream)?.get(compile_id)?.0)
    }

    /// The aligned compile of a stream's compile id when that id is its frame compile's final
    /// attempt (the one compared); `None` for a restarted attempt and for an unknown id.
    pub fn aligned_final(&self, stream: usize, compile_id: &str) -> Option<u32> {
        self.by_stream.get(stream)?.get(compile_id).filter(|(_, last)| *last).map(|&(a, _)| a)
    }

    /// Whether a stream's compile id is its frame compile's final attempt (false when unknown).
    pub fn is_final(&self, stream: usize, compile_id: &str) -> bool {
        self.aligned_final(stream, compile_id).is_some()
    }

    /// A stream's final attempt of an aligned compile, as displayed; `None` when the stream
    /// did not make it.
    pub fn final_compile_id(&self, aligned: u32, stream: &str) -> Option<&str> {
        let row = self.table.compiles.get(aligned as usize)?;
        row.present.iter().find(|p| p.stream == stream).map(|p| p.compile_id.as_str())
    }

    /// The reference another cross-rank table's row makes to an aligned compile.
    pub fn compile_ref(&self, aligned: u32) -> AlignedCompileRef {
        let row = &self.table.compiles[aligned as usize];
        AlignedCompileRef {
            aligned,
            label: row.label.clone(),
            compile_ids: row
                .present
                .iter()
                .map(|p| StreamCompileId { stream: p.stream.clone(), compile_id: p.compile_id.clone() })
                .collect(),
        }
    }

    /// Number of aligned compiles.
    pub fn len(&self) -> usize {
        self.table.compiles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.compiles.is_empty()
    }
}

/// One stream's frame compile: its final attempt `last`, after the attempts `earlier`.
fn stream_compile<R: AlignedRow>(stream: &str, last: &R, earlier: &[&Keyed<R>]) -> StreamCompile {
    StreamCompile {
        stream: stream.to_string(),
        compile_id: last.compile_id().into_owned(),
        status: last.status(),
        earlier_attempts: earlier
            .iter()
            .map(|k| CompileAttempt { compile_id: k.entry.compile_id().into_owned(), status: k.entry.status() })
            .collect(),
        restart_reasons: last.restart_reasons().to_vec(),
    }
}

/// The canonical string of a key: its JSON, fields in declaration order and no spaces. Two
/// compiles [`Alignment::new`] pairs have equal strings, and only those; every attempt of one
/// frame compile has the same.
pub fn key_string(k: &AlignmentKey) -> String {
    serde_json::to_string(k).expect("an alignment key serializes")
}

/// Keys every compile of one stream, recording what the key cannot decide alone.
fn key_stream<'a, R: KeyedRow>(
    i: usize,
    s: &StreamCompiles<'a, R>,
    ambiguities: &mut Vec<AlignmentAmbiguity>,
) -> Vec<Keyed<'a, R>> {
    let keyer = StreamKeyer::new(s, ambiguities);
    let mut unknown = Vec::new();
    let keyed = s
        .compiles
        .iter()
        .enumerate()
        .map(|(row, entry)| {
            let key = keyer.key(row, &entry.cid(), || entry.compile_id().into_owned());
            if key.compile_id.is_some() {
                unknown.push(entry.compile_id().into_owned());
            }
            Keyed { stream: i, entry, key }
        })
        .collect();
    if !unknown.is_empty() {
        ambiguities.push(AlignmentAmbiguity {
            stream: s.stream.to_string(),
            kind: AmbiguityKind::CodeUnknown,
            compile_ids: unknown,
            resolution: "no compilation_metrics nor dynamo_start names the code: aligned by frame compile id, \
                         only with compiles of unknown code"
                .to_string(),
        });
    }
    keyed
}

/// What keys the compiles of one stream: each frame compile's code, frame of that code and
/// ordinal, found once over the stream; any compile's key is then made when asked for
/// ([`StreamKeyer::key`]). The build writes each key into its `compile_directory` row as
/// `align_key` ([`key_string`]), so that readers (the viewer's run comparison) pair compiles by
/// equality alone; it makes them one at a time, as rows are written (all of a long log's keys at
/// once were tens of megabytes).
pub struct StreamKeyer {
    /// The stream's distinct codes.
    codes: Vec<CodeKey>,
    /// Each row's place: that of its frame compile (unread for a row without frame ids). A long
    /// log has a row a compile, and this is all that is kept of one.
    places: Vec<Place>,
}

/// Where a frame compile stands among the stream's compiles.
#[derive(Clone, Copy, Default)]
struct Place {
    /// Its code (in [`StreamKeyer::codes`]): that of its lowest attempt that names one, or
    /// [`NO_CODE`] (a sentinel keeps a place at twelve bytes).
    code: u32,
    /// Which frame of its code it is (0 for a compiled-autograd frame compile).
    frame: u32,
    /// Its ordinal within that frame; inside compiled autograd, among the frame compiles of its
    /// compiled-autograd id.
    ordinal: u32,
}

/// [`Place::code`] of a frame compile no attempt of which names its code.
const NO_CODE: u32 = u32::MAX;

impl Place {
    fn code(self) -> Option<u32> {
        (self.code != NO_CODE).then_some(self.code)
    }
}

impl StreamKeyer {
    /// Reads the stream's compiles; what the keys cannot decide alone goes to `ambiguities`
    /// (except compiles of unknown code, which [`StreamKeyer::key`] keys by compile id).
    pub fn new<R: KeyedRow>(s: &StreamCompiles<R>, ambiguities: &mut Vec<AlignmentAmbiguity>) -> StreamKeyer {
        Self::keying(&Rows { stream: s.stream, rows: s.compiles }, Some(ambiguities))
    }

    /// Reads a stream's compiles for their keys alone, recording no ambiguity (whose lists of
    /// compile ids grow with the stream).
    pub fn keys_only(rows: &impl KeyedRows) -> StreamKeyer {
        Self::keying(&Rows { stream: "", rows }, None)
    }

    fn keying<K: KeyedRows + ?Sized>(
        s: &Rows<K>,
        mut ambiguities: Option<&mut Vec<AlignmentAmbiguity>>,
    ) -> StreamKeyer {
        let frame_compiles = FrameCompiles::of(s.rows);
        let (codes, mut places) = frame_codes(s, &frame_compiles, ambiguities.as_deref_mut());
        number_frames(s, &frame_compiles, &codes, &mut places, ambiguities);
        number_compiled_autograd(s.rows, &frame_compiles, &mut places);
        let mut by_row = vec![Place::default(); s.rows.row_count()];
        for (g, place) in places.into_iter().enumerate() {
            for &row in frame_compiles.rows(g) {
                by_row[row as usize] = place;
            }
        }
        StreamKeyer { codes, places: by_row }
    }

    /// The key of the stream's compile in row `row` of the rows read, whose id is `cid` (the
    /// same for every attempt of a frame compile); `compile_id` gives its id as displayed, the
    /// key of a compile with neither frame ids nor code.
    pub fn key(&self, row: usize, cid: &CompileId, compile_id: impl FnOnce() -> String) -> AlignmentKey {
        let place = self.places[row];
        let compiled_autograd_id = cid.compiled_autograd_id;
        let none = AlignmentKey { compiled_autograd_id, code: None, frame: None, ordinal: None, compile_id: None };
        match (frame_compile(cid), compiled_autograd_id, place.code()) {
            (Some(_), Some(_), _) => AlignmentKey { ordinal: Some(place.ordinal.into()), ..none },
            (Some(_), None, Some(code)) => AlignmentKey {
                code: Some(self.codes[code as usize].clone()),
                frame: Some(place.frame.into()),
                ordinal: Some(place.ordinal.into()),
                ..none
            },
            (Some(_), None, None) => {
                let frame_compile_id = display_compile_id(&CompileId { attempt: None, ..*cid });
                AlignmentKey { compile_id: Some(frame_compile_id), ..none }
            }
            (None, Some(_), _) => none,
            (None, None, _) => AlignmentKey { compile_id: Some(compile_id()), ..none },
        }
    }
}

/// A stream's rows, with the stream's id for the ambiguities found in them.
struct Rows<'a, K: ?Sized> {
    stream: &'a str,
    rows: &'a K,
}

/// A frame compile: (compiled-autograd id, frame id, frame compile id); `None` for a compile id
/// without frame ids (a compiled-autograd capture).
type FrameCompile = (Option<u64>, u64, u64);

fn frame_compile(cid: &CompileId) -> Option<FrameCompile> {
    Some((cid.compiled_autograd_id, cid.frame_id?, cid.frame_compile_id?))
}

/// A stream's frame compiles, each a run of the rows of its attempts: runs in frame-compile
/// order, attempts lowest first (in row order for equal attempts). Four bytes a row and four a
/// frame compile, as a long log has a million.
struct FrameCompiles {
    /// The rows with frame ids, sorted.
    rows: Vec<u32>,
    /// Where each frame compile's run starts in `rows`.
    starts: Vec<u32>,
}

impl FrameCompiles {
    fn of<K: KeyedRows + ?Sized>(s: &K) -> FrameCompiles {
        let cid = |row: u32| s.cid(row as usize);
        let mut rows: Vec<u32> = (0..s.row_count() as u32).filter(|&row| frame_compile(&cid(row)).is_some()).collect();
        rows.sort_unstable_by_key(|&row| {
            let id = cid(row);
            (frame_compile(&id), id.attempt.unwrap_or(0), row)
        });
        let starts = (0..rows.len())
            .filter(|&i| i == 0 || frame_compile(&cid(rows[i - 1])) != frame_compile(&cid(rows[i])))
            .map(|i| i as u32)
            .collect();
        FrameCompiles { rows, starts }
    }

    fn len(&self) -> usize {
        self.starts.len()
    }

    /// The rows of frame compile `g`'s attempts.
    fn rows(&self, g: usize) -> &[u32] {
        let end = self.starts.get(g + 1).map_or(self.rows.len(), |&e| e as usize);
        &self.rows[self.starts[g] as usize..end]
    }

    /// Frame compile `g`.
    fn get<K: KeyedRows + ?Sized>(&self, s: &K, g: usize) -> FrameCompile {
        frame_compile(&s.cid(self.rows[self.starts[g] as usize] as usize)).expect("a row with frame ids")
    }
}

/// The distinct codes of a stream, and each frame compile's place with its code (in them): that
/// of its lowest attempt that names one. Frames and ordinals are numbered after.
fn frame_codes<K: KeyedRows + ?Sized>(
    s: &Rows<K>,
    frame_compiles: &FrameCompiles,
    mut ambiguities: Option<&mut Vec<AlignmentAmbiguity>>,
) -> (Vec<CodeKey>, Vec<Place>) {
    let mut codes: indexmap::IndexSet<CodeKey> = indexmap::IndexSet::new();
    let mut places = Vec::with_capacity(frame_compiles.len());
    for g in 0..frame_compiles.len() {
        let list = frame_compiles.rows(g);
        let named = || list.iter().filter_map(|&row| s.rows.code(row as usize).map(|c| (row, c)));
        let first = named().next().map(|(_, c)| c);
        if let (Some(first), Some(ambiguities)) = (first, ambiguities.as_deref_mut())
            && named().any(|(_, c)| !same_code(c, first))
        {
            let first = code_key(first);
            ambiguities.push(AlignmentAmbiguity {
                stream: s.stream.to_string(),
                kind: AmbiguityKind::AttemptsDisagree,
                compile_ids: named().map(|(row, _)| s.rows.compile_id(row as usize).into_owned()).collect(),
                resolution: format!("the attempts name different code: aligned by the first one's, {}", short(&first)),
            });
        }
        let code = first.map_or(NO_CODE, |c| codes.insert_full(code_key(c)).0 as u32);
        places.push(Place { code, frame: 0, ordinal: 0 });
    }
    (codes.into_iter().collect(), places)
}

/// Whether two compiles compiled the same code object (the part of [`CompiledCode`] a key holds).
fn same_code(a: &CompiledCode, b: &CompiledCode) -> bool {
    (&a.filename, a.line, &a.name) == (&b.filename, b.line, &b.name)
}

fn code_key(c: &CompiledCode) -> CodeKey {
    CodeKey { filename: c.filename.clone(), line: c.line, name: c.name.clone() }
}

/// Numbers each frame compile of known code outside compiled autograd: which frame of its code
/// it belongs to (frames of one code in order of their first compile, which is frame-id order:
/// Dynamo numbers a frame when it first compiles it) and its ordinal within that frame (in
/// frame-compile-id order). Two frames of one code are recorded as an ambiguity, with how they
/// were told apart.
fn number_frames<K: KeyedRows + ?Sized>(
    s: &Rows<K>,
    frame_compiles: &FrameCompiles,
    codes: &[CodeKey],
    places: &mut [Place],
    mut ambiguities: Option<&mut Vec<AlignmentAmbiguity>>,
) {
    let mut rank = vec![0u32; codes.len()];
    let mut by_key: Vec<u32> = (0..codes.len() as u32).collect();
    by_key.sort_unstable_by_key(|&c| &codes[c as usize]);
    for (r, &c) in by_key.iter().enumerate() {
        rank[c as usize] = r as u32;
    }
    // Frame compiles by code in key order, each code's in frame-compile order.
    let mut order: Vec<(u32, u32)> = (0..places.len())
        .filter(|&g| frame_compiles.get(s.rows, g).0.is_none())
        .filter_map(|g| Some((rank[places[g].code()? as usize], g as u32)))
        .collect();
    order.sort_unstable();
    let frame_of = |&(_, g): &(u32, u32)| frame_compiles.get(s.rows, g as usize).1;
    for of_code in order.chunk_by(|a, b| a.0 == b.0) {
        let mut frame_ids: Vec<u64> = of_code.iter().map(frame_of).collect();
        frame_ids.dedup();
        if frame_ids.len() > 1
            && let Some(ambiguities) = ambiguities.as_deref_mut()
        {
            let code = &codes[by_key[of_code[0].0 as usize] as usize];
            let frames: Vec<FrameCompile> =
                of_code.iter().map(|&(_, g)| frame_compiles.get(s.rows, g as usize)).collect();
            ambiguities.push(several_frames(s, code, &frames, &frame_ids));
        }
        for (frame, compiles) in of_code.chunk_by(|a, b| frame_of(a) == frame_of(b)).enumerate() {
            for (ordinal, &(_, g)) in compiles.iter().enumerate() {
                places[g as usize].frame = frame as u32;
                places[g as usize].ordinal = ordinal as u32;
            }
        }
    }
}

/// The record of one code compiled by several frames (`frames`, sorted, under `frame_ids`).
fn several_frames<K: KeyedRows + ?Sized>(
    s: &Rows<K>,
    code: &CodeKey,
    frames: &[FrameCompile],
    frame_ids: &[u64],
) -> AlignmentAmbiguity {
    let of_code = |f: &FrameCompile| frames.binary_search(f).is_ok();
    let numbered: Vec<String> =
        frame_ids.iter().enumerate().map(|(n, id)| format!("frame id {id} is frame {}", n + 1)).collect();
    AlignmentAmbiguity {
        stream: s.stream.to_string(),
        kind: AmbiguityKind::SameCodeSeveralFrames,
        compile_ids: (0..s.rows.row_count())
            .filter(|&row| frame_compile(&s.rows.cid(row)).is_some_and(|f| of_code(&f)))
            .map(|row| s.rows.compile_id(row).into_owned())
            .collect(),
        resolution: format!(
            "{} is the code of {} frames: never one frame, they are told apart by order of first compile \
             ({}), each with its own recompiles; across streams, frame N pairs with frame N",
            short(code),
            frame_ids.len(),
            numbered.join(", ")
        ),
    }
}

/// Numbers each compiled-autograd frame compile: its ordinal among the frame compiles of its
/// compiled-autograd id on the stream, in compile-id order (the order of `frame_compiles`).
fn number_compiled_autograd<K: KeyedRows + ?Sized>(s: &K, frame_compiles: &FrameCompiles, places: &mut [Place]) {
    let mut previous = None;
    let mut ordinal = 0;
    for (g, place) in places.iter_mut().enumerate() {
        let id = frame_compiles.get(s, g).0;
        ordinal = if id == previous { ordinal + 1 } else { 0 };
        previous = id;
        if id.is_some() {
            place.ordinal = ordinal;
        }
    }
}

/// The aligned compiles in table order: codes in order of their first compile (the smallest
/// compile id any stream gave one of their compiles, then the first such stream), each code's
/// frames in order, each frame's compiles by ordinal.
fn aligned_order<R: KeyedRow>(keyed: &[Keyed<R>]) -> Vec<AlignmentKey> {
    let group = |k: &AlignmentKey| (k.compiled_autograd_id, k.code.clone(), k.compile_id.clone());
    let mut first: HashMap<_, (CompileId, usize)> = HashMap::new();
    for k in keyed {
        let seen = (k.entry.cid(), k.stream);
        first.entry(group(&k.key)).and_modify(|f| *f = (*f).min(seen)).or_insert(seen);
    }
    let keys: BTreeSet<&AlignmentKey> = keyed.iter().map(|k| &k.key).collect();
    let mut order: Vec<AlignmentKey> = keys.into_iter().cloned().collect();
    order.sort_by_cached_key(|k| (first[&group(k)], k.frame, k.ordinal, k.clone()));
    order
}

/// `name (file.py:line)`, with the file's last component only.
fn short(code: &CodeKey) -> String {
    code_label(&code.name, &code.filename, code.line)
}

/// `name (file.py:line)`, with the file's last component only: how a code is named to people
/// wherever compiles are aligned (the labels here, `compare`'s findings).
pub fn code_label(name: &str, filename: &str, line: impl std::fmt::Display) -> String {
    format!("{name} ({})", place(filename, line))
}

/// `, frame N` for the second frame of a code on (`frame` 1) and after: how labels tell two
/// frames of one code apart. Empty for the first frame.
pub fn frame_suffix(frame: Option<u64>) -> String {
    match frame {
        Some(f) if f > 0 => format!(", frame {}", f + 1),
        _ => String::new(),
    }
}

/// `file.py:line`: where the code starts, with the file's last component only.
fn short_place(code: &CodeKey) -> String {
    place(&code.filename, code.line)
}

/// `file.py:line`, with the file's last component only.
fn place(filename: &str, line: impl std::fmt::Display) -> String {
    let file = filename.rsplit('/').next().unwrap_or(filename);
    format!("{file}:{line}")
}

/// `name (path/to/file.py:line)`.
fn full(code: &CodeKey) -> String {
    format!("{} ({}:{})", code.name, code.filename, code.line)
}

/// The label of every aligned compile; a code's short form is used unless two codes share it.
fn labels(order: &[AlignmentKey]) -> Vec<String> {
    let mut codes_by_short: HashMap<String, BTreeSet<&CodeKey>> = HashMap::new();
    for code in order.iter().filter_map(|k| k.code.as_ref()) {
        codes_by_short.entry(short(code)).or_default().insert(code);
    }
    order
        .iter()
        .map(|k| {
            let what = match (&k.code, &k.compile_id) {
                (Some(code), _) if codes_by_short[&short(code)].len() > 1 => full(code),
                (Some(code), _) => short(code),
                (None, Some(id)) => format!("{id} (code unknown)"),
                (None, None) if k.ordinal.is_some() => format!("graph {}", k.ordinal.unwrap_or_default()),
                (None, None) => "capture".to_string(),
            };
            let mut label = match (k.compiled_autograd_id, &k.compile_id) {
                (Some(ca), None) => format!("compiled autograd {ca}: {what}"),
                _ => what,
            };
            label.push_str(&frame_suffix(k.frame));
            if let Some(n) = k.ordinal.filter(|&n| n > 0 && k.code.is_some()) {
                label.push_str(&format!(", recompile {n}"));
            }
            label
        })
        .collect()
}

fn aligned_compile<R>(
    streams: &[StreamCompiles<R>],
    key: AlignmentKey,
    label: String,
    present: BTreeMap<usize, StreamCompile>,
) -> AlignedCompile {
    let missing: Vec<String> =
        (0..streams.len()).filter(|i| !present.contains_key(i)).map(|i| streams[i].stream.to_string()).collect();
    let present: Vec<StreamCompile> = present.into_values().collect();
    let differs = |f: fn(&StreamCompile) -> &str| present.iter().any(|p| f(p) != f(&present[0]));
    AlignedCompile {
        label,
        key,
        missing,
        status_differs: present.iter().any(|p| p.status != present[0].status),
        compile_id_differs: differs(|p| &p.compile_id),
        present,
    }
}

/// Streams grouped by the set of aligned compiles they made.
fn groups<R>(streams: &[StreamCompiles<R>], by_stream: &[HashMap<String, (u32, bool)>]) -> Vec<AlignmentGroup> {
    let sets = by_stream.iter().enumerate().map(|(i, m)| {
        let mut set: Vec<u32> = m.values().filter(|(_, last)| *last).map(|&(a, _)| a).collect();
        set.sort_unstable();
        (streams[i].stream, set)
    });
    super::cross_rank::group_by(sets).into_iter().map(|(group, compiles)| AlignmentGroup { group, compiles }).collect()
}

/// Codes that only some streams compiled, each with the first frame compile of it on every stream
/// that compiled it.
fn partial_code<R: KeyedRow>(
    streams: &[StreamCompiles<R>],
    compiles: &[AlignedCompile],
    rows: &[StreamAlignment],
) -> Vec<PartialCode> {
    let index: HashMap<&str, usize> = streams.iter().enumerate().map(|(i, s)| (s.stream, i)).collect();
    // Per code (and compiled-autograd id), in order of its first row: each stream's first compile.
    let mut codes: Vec<(Option<u64>, &CodeKey, BTreeMap<usize, &StreamCompile>)> = Vec::new();
    let mut position: HashMap<(Option<u64>, &CodeKey), usize> = HashMap::new();
    for c in compiles {
        let Some(code) = &c.key.code else { continue };
        let at = *position.entry((c.key.compiled_autograd_id, code)).or_insert_with(|| {
            codes.push((c.key.compiled_autograd_id, code, BTreeMap::new()));
            codes.len() - 1
        });
        for p in &c.present {
            codes[at].2.entry(index[p.stream.as_str()]).or_insert(p);
        }
    }
    codes
        .into_iter()
        .filter(|(_, _, first)| first.len() < streams.len())
        .map(|(compiled_autograd_id, code, first)| {
            let later_frame_id_shift = match first.iter().next() {
                Some((&at, only)) if first.len() == 1 => later_shift(&streams[at], &rows[at], only),
                _ => None,
            };
            PartialCode {
                later_frame_id_shift,
                code: code.clone(),
                compiled_autograd_id,
                label: short(code),
                not_compiled_by: (0..streams.len())
                    .filter(|i| !first.contains_key(i))
                    .map(|i| streams[i].stream.to_string())
                    .collect(),
                compiled_by: first.into_values().cloned().collect(),
            }
        })
        .collect()
}

/// Each stream's counts and frame-id shifts; `frames[a]` is each stream's frame id (by stream
/// index) of aligned compile `a`.
fn stream_rows<R>(
    streams: &[StreamCompiles<R>],
    compiles: &[AlignedCompile],
    frames: &[BTreeMap<usize, u64>],
    by_stream: &[HashMap<String, (u32, bool)>],
) -> Vec<StreamAlignment> {
    let mut shifts = frame_id_shifts(compiles, frames, streams.len()).into_iter();
    streams
        .iter()
        .enumerate()
        .map(|(i, s)| StreamAlignment {
            stream: s.stream.to_string(),
            compiles: s.compiles.len() as u64,
            missing: (compiles.len() - by_stream[i].values().filter(|(_, last)| *last).count()) as u64,
            frame_id_shifts: shifts.next().unwrap_or_default(),
        })
        .collect()
}

/// Where each stream's frame ids differ from the usual ones: for every frame's first compile
/// (ordinal 0), a stream's frame id against the most common one among the other
/// streams that made it (the smallest on a tie). One pass over the compiles, whatever the number
/// of streams.
fn frame_id_shifts(
    compiles: &[AlignedCompile],
    frames: &[BTreeMap<usize, u64>],
    streams: usize,
) -> Vec<Vec<FrameIdShift>> {
    let mut shifts = vec![Vec::new(); streams];
    let firsts = compiles.iter().enumerate().filter(|(_, c)| c.key.ordinal == Some(0));
    for (a, _) in firsts {
        let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
        for &f in frames[a].values() {
            *counts.entry(f).or_default() += 1;
        }
        for (&stream, &frame_id) in &frames[a] {
            // The other streams' counts: this stream's own frame id once less.
            let others = counts.iter().map(|(&f, &n)| (f, n - usize::from(f == frame_id))).filter(|&(_, n)| n > 0);
            let Some((usual, _)) = others.max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0))) else { continue };
            if usual != frame_id {
                let by = frame_id as i64 - usual as i64;
                shifts[stream].push(FrameIdShift { aligned: a as u32, frame_id, usual_frame_id: usual, by });
            }
        }
    }
    shifts
}

/// The findings of an alignment in words, one per line, streams named by `label`: code only some
/// streams compiled (and the frame-id shift it caused), and ambiguities resolved.
pub fn findings(t: &CompileAlignment, label: impl Fn(&[String]) -> String) -> Vec<String> {
    let mut lines = Vec::new();
    for p in &t.partial_code {
        let by: Vec<String> = p.compiled_by.iter().map(|c| c.stream.clone()).collect();
        let mut ids: Vec<&str> = p.compiled_by.iter().map(|c| c.compile_id.as_str()).collect();
        ids.dedup();
        let others = if by.len() == 1 {
            "which no other rank compiled".to_string()
        } else {
            format!("which {} did not compile", label(&p.not_compiled_by))
        };
        let (name, place) = (&p.code.name, short_place(&p.code));
        let mut line = format!("{} compiled `{name}` ({place}) as {}, {others}", label(&by), ids.join(" / "));
        if let Some(by) = p.later_frame_id_shift {
            line.push_str(&format!("; its later frame ids are shifted by {by}"));
        }
        lines.push(line);
    }
    for a in &t.ambiguities {
        lines.push(format!(
            "alignment of {} on {}: {}",
            a.compile_ids.join(" "),
            label(std::slice::from_ref(&a.stream)),
            a.resolution
        ));
    }
    lines
}

/// The one amount by which a stream's frame ids are shifted for every code it first compiled
/// after `first` (a compile of code no other stream compiled); `None` when none is shifted or the
/// amounts differ.
fn later_shift<R: KeyedRow>(s: &StreamCompiles<R>, row: &StreamAlignment, first: &StreamCompile) -> Option<i64> {
    let frame = s.compiles.iter().find(|e| e.compile_id() == first.compile_id)?.cid().frame_id?;
    let later = row.frame_id_shifts.iter().filter(|f| f.frame_id > frame);
    let amounts: BTreeSet<i64> = later.map(|f| f.by).collect();
    match amounts.len() {
        1 => amounts.into_iter().next(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::row;
    use super::*;

    /// A compile directory row of these parts, its code named `name` at line `line` of /w/m.py.
    fn entry(
        ca: Option<u64>,
        frame: Option<u64>,
        fc: Option<u64>,
        attempt: u64,
        code: Option<(&str, i64)>,
    ) -> CompileEntry {
        let cid = CompileId { compiled_autograd_id: ca, frame_id: frame, frame_compile_id: fc, attempt: Some(attempt) };
        row(cid, code.map(|(name, line)| ("/w/m.py".to_string(), line, name)))
    }

    fn labels_of(a: &Alignment) -> Vec<(&str, Vec<&str>)> {
        a.table
            .compiles
            .iter()
            .map(|c| (c.label.as_str(), c.present.iter().map(|p| p.compile_id.as_str()).collect()))
            .collect()
    }

    #[test]
    fn compiled_autograd_graphs_align_by_order_not_by_their_generated_code() {
        // Each rank's compiled-autograd graph is generated code with its own `<eval_with_key>.N`.
        let r0 = [entry(Some(0), None, None, 0, None), entry(Some(0), Some(3), Some(0), 0, Some(("forward", 1)))];
        let r1 = [entry(Some(0), None, None, 0, None), entry(Some(0), Some(4), Some(0), 0, Some(("forward", 9)))];
        let a = Alignment::new(&[
            StreamCompiles { stream: "r0", compiles: &r0 },
            StreamCompiles { stream: "r1", compiles: &r1 },
        ]);
        assert_eq!(
            labels_of(&a),
            [
                ("compiled autograd 0: capture", vec!["[!0/-/-]", "[!0/-/-]"]),
                ("compiled autograd 0: graph 0", vec!["[!0/3/0]", "[!0/4/0]"]),
            ]
        );
        assert!(a.table.ambiguities.is_empty() && a.table.partial_code.is_empty());
    }

    #[test]
    fn the_same_code_under_two_frame_ids_is_two_frames_never_a_recompile() {
        // After torch._dynamo.reset(), r0 compiles `f` again under frame id 1 (torch logs it with
        // `cache_size: 0`: a first compile, not a recompile); r1 recompiles frame 0 once.
        let r0 = [entry(None, Some(0), Some(0), 0, Some(("f", 5))), entry(None, Some(1), Some(0), 0, Some(("f", 5)))];
        let r1 = [entry(None, Some(0), Some(0), 0, Some(("f", 5))), entry(None, Some(0), Some(1), 0, Some(("f", 5)))];
        let a = Alignment::new(&[
            StreamCompiles { stream: "r0", compiles: &r0 },
            StreamCompiles { stream: "r1", compiles: &r1 },
        ]);
        assert_eq!(
            labels_of(&a),
            [
                ("f (m.py:5)", vec!["[0/0]", "[0/0]"]),
                ("f (m.py:5), recompile 1", vec!["[0/1]"]),
                ("f (m.py:5), frame 2", vec!["[1/0]"]),
            ]
        );
        let amb = &a.table.ambiguities;
        assert_eq!(amb.len(), 1);
        assert_eq!((amb[0].stream.as_str(), amb[0].kind), ("r0", AmbiguityKind::SameCodeSeveralFrames));
        assert_eq!(amb[0].compile_ids, ["[0/0]", "[1/0]"]);
        assert!(amb[0].resolution.contains("order of first compile (frame id 0 is frame 1, frame id 1 is frame 2)"));
    }

    #[test]
    fn two_frames_of_the_same_code_are_two_rows() {
        // Two resume functions of one line (same name, file and line), frame ids 3 and 4, each
        // compiled once: two frames, no recompile.
        let resume = Some(("torch_dynamo_resume_in_forward_at_18", 18));
        let r0 = [entry(None, Some(3), Some(0), 0, resume), entry(None, Some(4), Some(0), 0, resume)];
        let a = Alignment::new(&[StreamCompiles { stream: "r0", compiles: &r0 }]);
        assert_eq!(
            labels_of(&a),
            [
                ("torch_dynamo_resume_in_forward_at_18 (m.py:18)", vec!["[3/0]"]),
                ("torch_dynamo_resume_in_forward_at_18 (m.py:18), frame 2", vec!["[4/0]"]),
            ]
        );
        let keys: Vec<(Option<u64>, Option<u64>)> =
            a.table.compiles.iter().map(|c| (c.key.frame, c.key.ordinal)).collect();
        assert_eq!(keys, [(Some(0), Some(0)), (Some(1), Some(0))]);
    }

    #[test]
    fn frame_2_of_a_code_pairs_across_streams_despite_shifted_frame_ids() {
        // r1 compiled one extra function first: its frames of the resume code are 5 and 6, r0's
        // 3 and 4; the second frame recompiles on r1 only.
        let resume = Some(("resume", 18));
        let r0 = [entry(None, Some(3), Some(0), 0, resume), entry(None, Some(4), Some(0), 0, resume)];
        let r1 = [
            entry(None, Some(0), Some(0), 0, Some(("extra", 2))),
            entry(None, Some(5), Some(0), 0, resume),
            entry(None, Some(6), Some(0), 0, resume),
            entry(None, Some(6), Some(1), 0, resume),
        ];
        let a = Alignment::new(&[
            StreamCompiles { stream: "r0", compiles: &r0 },
            StreamCompiles { stream: "r1", compiles: &r1 },
        ]);
        assert_eq!(
            labels_of(&a),
            [
                ("extra (m.py:2)", vec!["[0/0]"]),
                ("resume (m.py:18)", vec!["[3/0]", "[5/0]"]),
                ("resume (m.py:18), frame 2", vec!["[4/0]", "[6/0]"]),
                ("resume (m.py:18), frame 2, recompile 1", vec!["[6/1]"]),
            ]
        );
        assert_eq!(a.aligned(0, "[4/0]"), a.aligned(1, "[6/0]"));
    }

    #[test]
    fn unknown_code_aligns_by_compile_id_only_with_unknown_code() {
        let r0 = [entry(None, Some(0), Some(0), 0, None)];
        let r1 = [entry(None, Some(0), Some(0), 0, Some(("g", 2)))];
        let a = Alignment::new(&[
            StreamCompiles { stream: "r0", compiles: &r0 },
            StreamCompiles { stream: "r1", compiles: &r1 },
        ]);
        assert_eq!(labels_of(&a), [("[0/0] (code unknown)", vec!["[0/0]"]), ("g (m.py:2)", vec!["[0/0]"])]);
        assert_eq!(a.table.ambiguities[0].kind, AmbiguityKind::CodeUnknown);
        assert!(a.table.diverges);
    }

    #[test]
    fn attempts_share_a_row_and_the_final_one_is_named() {
        // A frame compile restarted twice: `[0/0]` (code from dynamo_start, no metrics),
        // `[0/0_1]`, and the final `[0/0_2]`; r1 compiled the same code at the first try.
        let mut last = entry(None, Some(0), Some(0), 2, None);
        last.status = CompileStatus::OkWithRestart;
        last.restart_reasons = vec!["Failed to trace builtin operator".into(), "Tensorify".into()];
        let mut first = entry(None, Some(0), Some(0), 0, Some(("h", 7)));
        first.status = CompileStatus::Restarted;
        let mut second = entry(None, Some(0), Some(0), 1, None);
        second.status = CompileStatus::Restarted;
        let r0 = [first, second, last];
        let r1 = [entry(None, Some(0), Some(0), 0, Some(("h", 7)))];
        let a = Alignment::new(&[
            StreamCompiles { stream: "r0", compiles: &r0 },
            StreamCompiles { stream: "r1", compiles: &r1 },
        ]);
        assert_eq!(labels_of(&a), [("h (m.py:7)", vec!["[0/0_2]", "[0/0]"])]);
        let p = &a.table.compiles[0].present[0];
        assert_eq!(p.status, CompileStatus::OkWithRestart);
        let earlier: Vec<(&str, CompileStatus)> =
            p.earlier_attempts.iter().map(|x| (x.compile_id.as_str(), x.status)).collect();
        assert_eq!(earlier, [("[0/0]", CompileStatus::Restarted), ("[0/0_1]", CompileStatus::Restarted)]);
        assert_eq!(p.restart_reasons.len(), 2);
        assert!(a.table.compiles[0].missing.is_empty() && a.table.compiles[0].status_differs);
        // Any attempt finds the row; only the final one is final.
        assert_eq!(
            (a.aligned(0, "[0/0]"), a.aligned(0, "[0/0_1]"), a.aligned(0, "[0/0_2]")),
            (Some(0), Some(0), Some(0))
        );
        assert_eq!((a.is_final(0, "[0/0]"), a.is_final(0, "[0/0_2]"), a.is_final(1, "[0/0]")), (false, true, true));
        assert_eq!((a.final_compile_id(0, "r0"), a.final_compile_id(0, "r1")), (Some("[0/0_2]"), Some("[0/0]")));
        assert!(a.table.streams.iter().all(|s| s.missing == 0));
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::tests_support::*;
    use super::*;

    proptest! {
        /// Whatever the compiles: every compile (attempt) of every stream is in exactly one
        /// aligned row, under the key its stream's `StreamKeyer` gives it, no row holds a stream
        /// twice, labels are unique, `aligned` finds each row from any attempt, and the final
        /// attempt is the highest one of its frame compile.
        #[test]
        fn every_compile_is_aligned_once_under_a_unique_label(
            streams in proptest::collection::vec(
                proptest::collection::btree_set((0u64..3, 0u64..4, 0u64..3, 0u64..2, 0usize..4), 0..10),
                1..4,
            )
        ) {
            let dirs: Vec<Vec<CompileEntry>> = streams.iter().map(compiles).collect();
            let names: Vec<String> = (0..dirs.len()).map(|i| format!("s{i}")).collect();
            let input: Vec<StreamCompiles> =
                dirs.iter().zip(&names).map(|(d, n)| StreamCompiles { stream: n, compiles: d }).collect();
            let a = Alignment::new(&input);
            let labels: BTreeSet<&str> = a.table.compiles.iter().map(|c| c.label.as_str()).collect();
            prop_assert_eq!(labels.len(), a.table.compiles.len());
            for (i, d) in dirs.iter().enumerate() {
                for e in d {
                    let holds = |p: &StreamCompile| {
                        p.compile_id == e.compile_id || p.earlier_attempts.iter().any(|x| x.compile_id == e.compile_id)
                    };
                    let rows: Vec<usize> = a.table.compiles.iter().enumerate()
                        .filter(|(_, c)| c.present.iter().any(|p| p.stream == names[i] && holds(p)))
                        .map(|(n, _)| n)
                        .collect();
                    prop_assert_eq!(rows.len(), 1);
                    prop_assert_eq!(a.aligned(i, &e.compile_id), Some(rows[0] as u32));
                    // The final attempt is the highest attempt of the frame compile.
                    let same_frame_compile = |x: &&CompileEntry| {
                        x.cid.frame_id.is_some() && CompileId { attempt: None, ..x.cid } == CompileId { attempt: None, ..e.cid }
                    };
                    let highest = d.iter().filter(same_frame_compile).all(|x| x.cid.attempt <= e.cid.attempt);
                    prop_assert_eq!(a.is_final(i, &e.compile_id), highest || e.cid.frame_id.is_none());
                }
                // The key the build writes as `align_key` (the stream keyed alone, one compile at
                // a time) is the one its compiles are aligned under.
                let keyer = StreamKeyer::new(&input[i], &mut Vec::new());
                for (row, e) in d.iter().enumerate() {
                    let aligned = a.aligned(i, &e.compile_id).expect("checked above") as usize;
                    prop_assert_eq!(&keyer.key(row, &e.cid, || e.compile_id.clone()), &a.table.compiles[aligned].key);
                }
            }
            for c in &a.table.compiles {
                let streams: BTreeSet<&str> = c.present.iter().map(|p| p.stream.as_str()).collect();
                prop_assert_eq!(streams.len(), c.present.len());
                prop_assert_eq!(c.present.len() + c.missing.len(), dirs.len());
            }
        }
    }
}

#[cfg(test)]
mod tests_support {
    use super::*;
    use crate::parse::display_compile_id;
    use crate::schema::tables::{CodeSource, CompiledCode};

    /// A compile directory row with these parts and code (file, first line, name); the fields the
    /// alignment does not read are left empty.
    pub fn row(cid: CompileId, code: Option<(String, i64, &str)>) -> CompileEntry {
        let code = code.map(|(filename, line, name)| CompiledCode {
            filename,
            line,
            name: name.into(),
            from: CodeSource::Metrics,
        });
        serde_json::from_value(serde_json::json!({
            "compile_id": display_compile_id(&cid), "cid": cid, "dir": "", "status": "ok", "restarted_as": null,
            "co_name": null, "co_filename": null, "co_firstlineno": null, "code": code, "stack": null,
            "first_seq": 0, "last_seq": 0, "start_ts": "", "end_ts": "", "start_time": null,
            "duration_s": null, "fail_type": null, "fail_reason": null, "restart_reasons": [],
            "graph_breaks": [], "cache": [], "first_artifact": 0, "artifact_count": 0,
        }))
        .expect("a compile directory row")
    }

    /// Compile directory rows from `(frame, frame compile, attempt, ca flag, code)` tuples: code
    /// 0 is unknown, 1..3 name three functions; one compile id per tuple (duplicates dropped).
    pub fn compiles(parts: &BTreeSet<(u64, u64, u64, u64, usize)>) -> Vec<CompileEntry> {
        let mut seen = BTreeSet::new();
        parts
            .iter()
            .filter(|(f, fc, a, ca, _)| seen.insert((*f, *fc, *a, *ca)))
            .map(|&(frame, fc, attempt, ca, code)| {
                let cid = CompileId {
                    compiled_autograd_id: (ca == 1).then_some(0),
                    frame_id: Some(frame),
                    frame_compile_id: Some(fc),
                    attempt: Some(attempt),
                };
                row(cid, (code > 0).then(|| (format!("/w/f{code}.py"), code as i64, "fn")))
            })
            .collect()
    }
}
