//! The compile directory: one row per compile id with status, timing, reasons and cache outcomes,
//! then every compile's artifacts.

use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

use super::alignment;
use super::compiles::{ArtifactRefs, Metrics};
use super::stack_trie::user_frames;
use super::{CompileRecord, CompileRecords, Compiles, Event, Finding, Finish, Observe, Table, compiles};
use crate::parse::display_compile_id;
use crate::schema::tables::{CodeSource, CompileEntry, CompiledCode};
use crate::schema::{CompileId, StackTable};

#[derive(Default)]
pub struct CompileDirectoryTable;

/// [`crate::schema::tables::CompileDirectory`], each row made from its compile record as it is
/// serialized (as a whole, the rows would copy every artifact of the stream).
#[derive(Serialize)]
pub struct CompileDirectoryView<'a> {
    compiles: Entries<'a>,
    artifacts: CompileArtifacts<'a>,
    unattributed: ArtifactRefs<'a>,
}

/// The rows of the compile directory, with each row's `align_key`, made as the row is.
struct Entries<'a>(&'a Finish<'a>, alignment::StreamKeyer);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let c = self.0.compiles;
        let mut seq = serializer.serialize_seq(Some(c.records.len()))?;
        let mut first_artifact = 0;
        for (row, r) in c.records.iter().enumerate() {
            let artifact_count = c.artifact_count(&r) as u64;
            let key = alignment::key_string(&self.1.key(row, &r.id(), || r.display()));
            let row = CompileEntry { first_artifact, artifact_count, ..summary(self.0, &r) };
            seq.serialize_element(&EntryView { row, align_key: &key })?;
            first_artifact += artifact_count;
        }
        seq.end()
    }
}

/// Every compile's artifacts, compile by compile, each row made as it is written (one compile
/// can log a million artifacts).
struct CompileArtifacts<'a>(&'a Compiles);

impl Serialize for CompileArtifacts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let c = self.0;
        let mut seq = serializer.serialize_seq(None)?;
        for r in c.records.iter() {
            let compile_id = r.display();
            for chunk in c.artifact_chunks(&r) {
                for a in chunk.iter() {
                    seq.serialize_element(&ArtifactRow { compile_id: &compile_id, artifact: c.artifact_ref(a) })?;
                }
            }
        }
        seq.end()
    }
}

/// A [`crate::schema::tables::CompileArtifact`] as serialized.
#[derive(Serialize)]
struct ArtifactRow<'a> {
    compile_id: &'a str,
    #[serde(flatten)]
    artifact: crate::schema::tables::ArtifactRef,
}

/// A [`CompileEntry`] as serialized, with its alignment key (which the row, made without it,
/// does not hold).
struct EntryView<'a> {
    row: CompileEntry,
    align_key: &'a str,
}

impl Serialize for EntryView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // `CompileEntry`'s fields, in order (a test compares the two).
        let r = &self.row;
        let mut s = serializer.serialize_struct("CompileEntry", 28)?;
        s.serialize_field("compile_id", &r.compile_id)?;
        s.serialize_field("cid", &r.cid)?;
        s.serialize_field("dir", &r.dir)?;
        s.serialize_field("status", &r.status)?;
        s.serialize_field("restarted_as", &r.restarted_as)?;
        if r.graph_compiles.is_empty() {
            s.skip_field("graph_compiles")?;
        } else {
            s.serialize_field("graph_compiles", &r.graph_compiles)?;
        }
        s.serialize_field("co_name", &r.co_name)?;
        s.serialize_field("co_filename", &r.co_filename)?;
        s.serialize_field("co_firstlineno", &r.co_firstlineno)?;
        s.serialize_field("code", &r.code)?;
        s.serialize_field("stack", &r.stack)?;
        s.serialize_field("first_seq", &r.first_seq)?;
        s.serialize_field("last_seq", &r.last_seq)?;
        s.serialize_field("start_ts", &r.start_ts)?;
        s.serialize_field("end_ts", &r.end_ts)?;
        s.serialize_field("start_time", &r.start_time)?;
        s.serialize_field("duration_s", &r.duration_s)?;
        s.serialize_field("backward_s", &r.backward_s)?;
        if r.backward_in_forward_s.is_none() {
            s.skip_field("backward_in_forward_s")?;
        } else {
            s.serialize_field("backward_in_forward_s", &r.backward_in_forward_s)?;
        }
        s.serialize_field("total_s", &r.total_s)?;
        s.serialize_field("other_s", &r.other_s)?;
        s.serialize_field("fail_type", &r.fail_type)?;
        s.serialize_field("fail_reason", &r.fail_reason)?;
        s.serialize_field("restart_reasons", &r.restart_reasons)?;
        s.serialize_field("graph_breaks", &r.graph_breaks)?;
        s.serialize_field("cache", &r.cache)?;
        s.serialize_field("first_artifact", &r.first_artifact)?;
        s.serialize_field("artifact_count", &r.artifact_count)?;
        s.serialize_field("align_key", self.align_key)?;
        s.end()
    }
}

/// What keys every compile of the stream by the alignment's own keying (one algorithm for
/// cross-rank tables and run comparison), read from the records with each compile's code, each
/// code once (a long log compiles a few codes thousands of times).
fn keyer(ctx: &Finish) -> alignment::StreamKeyer {
    let c = ctx.compiles;
    let mut codes = indexmap::IndexSet::new();
    let code_of = c
        .records
        .iter()
        .map(|r| compiled_code(c, ctx.stacks, &r).map_or(NO_CODE, |code| codes.insert_full(code).0 as u32))
        .collect();
    alignment::StreamKeyer::keys_only(&KeyRows { records: &c.records, codes, code_of })
}
/// The code a compile compiled: its metrics' `co_*` fields when all three were logged, else the
/// innermost user frame of its `dynamo_start` stack (whose line torch logs as the code's first
/// line: checked on torch 2.15, e.g. `rank_local_metric` at ranks_shifted.py:24 in both).
pub(crate) fn compiled_code(c: &Compiles, stacks: &StackTable, r: &CompileRecord) -> Option<CompiledCode> {
    if let Some(m) = c.metrics(r)
        && let (Some(filename), Some(line), Some(name)) = (&m.co_filename, m.co_firstlineno, &m.co_name)
    {
        let (filename, name) = (filename.to_string(), name.to_string());
        return Some(CompiledCode { filename, line, name, from: CodeSource::Metrics });
    }
    let frames = user_frames(stacks, c.start_stack(&r.id())?);
    let frame = stacks.frames.get(*frames.last()? as usize)?;
    Some(CompiledCode {
        filename: frame.file.clone()?,
        line: frame.line,
        name: frame.name.clone(),
        from: CodeSource::DynamoStart,
    })
}

/// A stream's compiles as the alignment keying reads them: the records, and each one's code
/// (which the keying compares by file, line and name only, so one of the codes it shares these
/// with), four bytes a compile.
struct KeyRows<'a> {
    records: &'a CompileRecords,
    codes: indexmap::IndexSet<CompiledCode>,
    /// Each record's code in `codes`, or [`NO_CODE`].
    code_of: Vec<u32>,
}

/// [`KeyRows::code_of`] of a compile whose code is not known.
const NO_CODE: u32 = u32::MAX;

impl alignment::KeyedRows for KeyRows<'_> {
    fn row_count(&self) -> usize {
        self.code_of.len()
    }
    fn cid(&self, row: usize) -> CompileId {
        self.records.id(row)
    }
    fn compile_id(&self, row: usize) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Owned(crate::parse::display_compile_id(&self.cid(row)))
    }
    fn code(&self, row: usize) -> Option<&CompiledCode> {
        match self.code_of[row] {
            NO_CODE => None,
            code => self.codes.get_index(code as usize),
        }
    }
}

/// A row without where its artifacts are nor its alignment key.
fn summary(ctx: &Finish, r: &CompileRecord) -> CompileEntry {
    let c = ctx.compiles;
    let metrics = c.metrics(r);
    let m = metrics.as_ref();
    // The compile's time in the parts `compile_time` reports, in seconds.
    let parts = ctx.clock.parts(c, Some(&r.id()));
    let s = |us: Option<f64>| us.map(|us| us / 1e6);
    let text = |field: fn(&Metrics) -> &Option<Box<str>>| m.and_then(|m| field(m).as_deref()).map(str::to_string);
    CompileEntry {
        compile_id: r.display(),
        cid: r.id(),
        dir: compiles::dir_name(&r.id()),
        status: r.status(),
        restarted_as: r.next_attempt().map(|n| display_compile_id(&c.records.id(n))),
        graph_compiles: r.graph_compiles().iter().map(|&n| display_compile_id(&c.records.id(n))).collect(),
        co_name: text(|m| &m.co_name),
        co_filename: text(|m| &m.co_filename),
        co_firstlineno: m.and_then(|m| m.co_firstlineno),
        code: compiled_code(c, ctx.stacks, r),
        stack: r.start_stack,
        first_seq: r.first_seq,
        last_seq: r.last_seq,
        start_ts: r.start_ts().to_string(),
        end_ts: r.end_ts().to_string(),
        start_time: m.and_then(|m| m.start_time),
        // As logged when it is, not through µs and back.
        duration_s: m.and_then(|m| m.entire_frame_compile_time_s).or(s(parts.forward_us)),
        backward_s: s(parts.backward_us),
        backward_in_forward_s: s(parts.backward_in_forward_us),
        total_s: s(parts.total_us()),
        other_s: s(parts.other_us),
        fail_type: text(|m| &m.fail_type),
        fail_reason: text(|m| &m.fail_reason),
        restart_reasons: m.map_or_else(Vec::new, |m| m.restart_reasons.clone()),
        graph_breaks: r.graph_breaks().to_vec(),
        cache: c.cache(r),
        first_artifact: 0,
        artifact_count: 0,
        align_key: None,
    }
}

impl Table for CompileDirectoryTable {
    type Format = crate::schema::tables::CompileDirectory;
    type Output<'a> = CompileDirectoryView<'a>;

    fn observe(&mut self, _ev: &Event, _cx: &mut Observe) {}

    fn finish<'a>(self, ctx: &'a Finish) -> Option<(CompileDirectoryView<'a>, u64)> {
        let c = ctx.compiles;
        if c.records.is_empty() && c.unattributed.is_empty() {
            return None;
        }
        let rows = c.records.len() as u64;
        Some((
            CompileDirectoryView {
                compiles: Entries(ctx, keyer(ctx)),
                artifacts: CompileArtifacts(c),
                unattributed: ArtifactRefs(c, &c.unattributed),
            },
            rows,
        ))
    }

    fn finding(view: &CompileDirectoryView<'_>) -> Option<Finding> {
        // As the rows say it (`Entries`): one row a record, with its `status`.
        Some(Finding::CompileStatuses(compiles::count_by_status(view.compiles.0.compiles.records.iter())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::tables::{ArtifactRef, CacheOutcome, CompileStatus};
    use crate::schema::{CompileId, PayloadFormat};

    /// `EntryView` writes what `CompileEntry` would, every field set (a field added to
    /// `CompileEntry` and not to the view fails here), and `ArtifactRow` what `CompileArtifact`
    /// would.
    #[test]
    fn an_entry_view_serializes_as_its_compile_entry() {
        let artifact = ArtifactRef {
            seq: 3,
            line: 4,
            kind: "artifact".into(),
            name: "n".into(),
            tlparse_name: Some("t".into()),
            blob: Some("0".repeat(32)),
            size: 5,
            lines: 6,
            format: Some(PayloadFormat::Text),
            url: None,
            no_payload: false,
            graph: None,
        };
        let row = ArtifactRow { compile_id: "[0/0]", artifact: artifact.clone() };
        let typed = crate::schema::tables::CompileArtifact { compile_id: "[0/0]".into(), artifact };
        assert_eq!(serde_json::to_string(&row).unwrap(), serde_json::to_string(&typed).unwrap());
        let id =
            CompileId { compiled_autograd_id: Some(1), frame_id: Some(2), frame_compile_id: Some(3), attempt: Some(4) };
        let full = CompileEntry {
            compile_id: "[!1/2/3_4]".into(),
            cid: id,
            dir: "1_2_3_4".into(),
            status: CompileStatus::Ok,
            restarted_as: Some("x".into()),
            graph_compiles: vec!["g".into()],
            co_name: Some("f".into()),
            co_filename: Some("f.py".into()),
            co_firstlineno: Some(7),
            code: Some(crate::schema::tables::CompiledCode {
                filename: "f.py".into(),
                line: 7,
                name: "f".into(),
                from: crate::schema::tables::CodeSource::Metrics,
            }),
            stack: Some(8),
            first_seq: 9,
            last_seq: 10,
            start_ts: "a".into(),
            end_ts: "b".into(),
            start_time: Some(1.5),
            duration_s: Some(2.5),
            backward_s: Some(3.5),
            backward_in_forward_s: Some(0.5),
            total_s: Some(4.5),
            other_s: Some(5.5),
            fail_type: Some("T".into()),
            fail_reason: Some("R".into()),
            restart_reasons: vec!["r".into()],
            graph_breaks: vec!["b".into()],
            cache: vec![CacheOutcome { cache: "c".into(), outcome: "hit".into(), name: "c_hit".into(), seq: 11 }],
            first_artifact: 12,
            artifact_count: 13,
            align_key: Some("k".into()),
        };
        for graph_compiles in [vec![], vec!["g".to_string()]] {
            let full = CompileEntry { graph_compiles, ..full.clone() };
            let row = CompileEntry { align_key: None, ..full.clone() };
            let view = EntryView { row, align_key: "k" };
            assert_eq!(serde_json::to_string(&view).unwrap(), serde_json::to_string(&full).unwrap());
        }
    }
}
