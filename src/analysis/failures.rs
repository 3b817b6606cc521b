//! Failures and restarts: one row per restart reason and per failed compile (forward or
//! backward), in log order.

use serde::ser::{Error, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::compilation_metrics::METRICS_KINDS;
use super::graph_breaks::is_user_file;
use super::guards::innermost;
use super::{Event, Finding, Finish, MetaMembers, Observe, Table, compiles};
use crate::fast_hash::HashMap;
use crate::schema::CompileId;
use crate::schema::tables::{Failure, FailureKind};
use crate::store::{Distinct, Rows, SeenTexts, Store};

#[derive(Default)]
pub struct FailuresTable {
    /// Rows, with the compile id to look the stack and `dynamo_error` up in at the end: packed,
    /// as a long log restarts thousands of compiles (and a failure row holds its exception's
    /// whole stack trace).
    rows: Rows<PackedRow<'static>>,
    /// Each distinct `exception_stack_trace`, as its rows hold it, once: a storm of failing
    /// compiles logs a few stack traces over and over, kilobytes each.
    exceptions: Distinct<Vec<String>>,
    /// The id in `exceptions` of each stack trace seen as raw JSON text: known again, it is
    /// neither parsed nor serialized.
    seen_raw: SeenTexts,
    restarts: u64,
    /// For each compile record (`Observe::record`) still open, the user-code frame (`file:line`)
    /// of the last `user_stack` it logged: where tracing was in the user's code when torch gave
    /// up, for a failure whose own frame is missing or in a library. Taken out when the
    /// compile's metrics come, so it holds the compiles in flight.
    user_frames: HashMap<u32, String>,
}

/// Raw stack traces shorter than this are parsed rather than looked up by their digest (`null`,
/// a short list: parsing them costs less than digesting them).
const LOOKED_UP_OVER: usize = 64;

/// The finished table: serializes as [`Failures`](crate::schema::tables::Failures), completing
/// each row as it is written, so that the rows are never all in memory at once (a long log's are
/// tens of megabytes).
#[derive(Serialize)]
pub struct FailuresView<'a> {
    failures: CompletedRows<'a>,
    restarts: u64,
    failed: u64,
}

/// The packed rows, each completed by [`complete`] as it is serialized, with its stack trace
/// from `exceptions`.
struct CompletedRows<'a> {
    rows: Rows<PackedRow<'static>>,
    exceptions: Distinct<Vec<String>>,
    ctx: &'a Finish<'a>,
}

/// A row as packed: the compile it is of, the failure without its stack trace, and the stack
/// trace's id in [`FailuresTable::exceptions`].
type PackedRow<'a> = (Option<CompileId>, PackedFailure<'a>, Option<u32>);

impl Serialize for CompletedRows<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.rows.len()))?;
        self.rows.try_for_each_json(|json| {
            let (id, row, exception): PackedRow = serde_json::from_str(json.text()).map_err(S::Error::custom)?;
            let exception = exception.map(|e| self.exceptions.get_raw(e));
            let row = PackedFailure { exception: exception.as_deref().unwrap_or(row.exception), ..row };
            seq.serialize_element(&complete(self.ctx, id, row))
        })?;
        seq.end()
    }
}

/// A packed [`Failure`] read back, to be completed: its fields in the same order, the texts
/// from the log as the JSON they were packed as, written again as they are. Decoding a stack
/// trace's escapes and escaping it again made half the cost of finishing the table, which a log
/// of many failed compiles finishes last (the 150 MB compiles bench log's is 12 MB).
#[derive(Deserialize, Serialize)]
struct PackedFailure<'a> {
    #[serde(borrow)]
    compile_id: &'a RawValue,
    kind: FailureKind,
    #[serde(borrow)]
    source: &'a RawValue,
    #[serde(borrow)]
    failure_type: &'a RawValue,
    #[serde(borrow)]
    reason: &'a RawValue,
    #[serde(borrow)]
    user_frame: &'a RawValue,
    #[serde(borrow)]
    exception: &'a RawValue,
    error_blob: Option<String>,
    stack: Option<u32>,
    seq: u64,
}

impl Table for FailuresTable {
    type Format = crate::schema::tables::Failures;
    type Output<'a> = FailuresView<'a>;

    fn new(store: &Store) -> Self {
        FailuresTable {
            rows: Rows::new(store),
            exceptions: Distinct::new(store),
            seen_raw: SeenTexts::new(store),
            ..FailuresTable::default()
        }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        if !METRICS_KINDS.contains(&ev.kind) {
            self.note_user_stack(ev, cx.record);
            return;
        }
        let traced_at = cx.record.and_then(|r| self.user_frames.remove(&r));
        // Member by member, as `Compiles` reads them (see `Event::meta_members`).
        let m = ev.meta_members();
        if !m.is_object() {
            diags.unusable(Self::NAME, ev, "metadata is not an object");
            return;
        }
        let compile_id = ev.display_id.unwrap_or("[-/-]").to_string();
        let row = |kind, failure_type: String, reason: Option<String>| Failure {
            compile_id: compile_id.clone(),
            kind,
            source: ev.kind.to_string(),
            failure_type,
            reason,
            user_frame: None,
            exception: None,
            error_blob: None,
            stack: None,
            seq: ev.seq,
        };
        for reason in compiles::strings(m.get("restart_reasons").as_deref()) {
            let restart = row(FailureKind::Restart, "RestartAnalysis".into(), Some(reason));
            self.rows.push_view(&(ev.compile_id.copied(), restart, None::<u32>));
            self.restarts += 1;
        }
        let fail_type = match m.get("fail_type").as_deref() {
            None | Some(Value::Null) => return,
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        let mut failure = row(
            FailureKind::Failure,
            fail_type,
            m.get("fail_reason")
                .as_deref()
                .and_then(|r| r.as_str().map(str::to_string).or_else(|| (!r.is_null()).then(|| r.to_string()))),
        );
        let file = m.get("fail_user_frame_filename");
        let file = file.as_deref().and_then(Value::as_str);
        let logged = match (file, m.get("fail_user_frame_lineno")) {
            (Some(file), Some(line)) if !line.is_null() => Some(format!("{file}:{line}")),
            (Some(file), _) => Some(file.to_string()),
            _ => None,
        };
        // Torch's own frame when it is the user's; else where the compile's last user stack
        // was in user code (a backend that fails fails on the whole graph: no line is to blame);
        // else torch's frame, library or not.
        let backend = failure.failure_type == "BackendCompilerFailed";
        failure.user_frame = match file.is_some_and(is_user_file) || backend {
            true => logged,
            false => traced_at.or(logged),
        };
        let exception = self.exception(&m);
        self.rows.push_view(&(ev.compile_id.copied(), failure, exception));
    }

    fn finish<'a>(self, ctx: &'a Finish) -> Option<(FailuresView<'a>, u64)> {
        if self.rows.is_empty() {
            return None;
        }
        let rows = self.rows.len() as u64;
        let failed = rows - self.restarts;
        let failures = CompletedRows { rows: self.rows, exceptions: self.exceptions, ctx };
        Some((FailuresView { failures, restarts: self.restarts, failed }, rows))
    }

    fn finding(view: &FailuresView<'_>) -> Option<Finding> {
        Some(Finding::Failures { failed: view.failed, restarts: view.restarts })
    }
}

impl FailuresTable {
    /// Keeps the user-code frame of an entry's `user_stack` (symbols and guards log one) as its
    /// compile's latest.
    fn note_user_stack(&mut self, ev: &Event, record: Option<u32>) {
        let (Some(record), Some(stack)) = (record, ev.meta_stack("user_stack")) else { return };
        let frame = innermost(ev.stacks, Some(stack)).filter(|f| f.file.as_deref().is_some_and(is_user_file));
        if let Some(f) = frame {
            self.user_frames.insert(record, format!("{}:{}", f.file.as_deref().unwrap_or_default(), f.line));
        }
    }

    /// The id in `exceptions` of a failure's `exception_stack_trace` as a row holds it (a list
    /// of strings), `None` when it logged none.
    fn exception(&mut self, m: &MetaMembers) -> Option<u32> {
        const KEY: &str = "exception_stack_trace";
        let raw = m.raw(KEY).filter(|raw| raw.len() > LOOKED_UP_OVER);
        let unseen = match raw.map(|raw| self.seen_raw.find(raw)) {
            Some(Ok(id)) => return Some(id),
            Some(Err(unseen)) => Some(unseen),
            None => None,
        };
        let trace = m.get(KEY).filter(|v| !v.is_null()).map(|v| compiles::strings(Some(&v)))?;
        let id = self.exceptions.id_of_json(&serde_json::to_string(&trace).expect("strings serialize"));
        if let (Some(raw), Some(unseen)) = (raw, unseen) {
            self.seen_raw.add(raw, unseen, id);
        }
        Some(id)
    }
}

/// A row with what only the end of the log tells: its compile's stack and `dynamo_error`.
fn complete<'a>(ctx: &Finish, id: Option<CompileId>, mut f: PackedFailure<'a>) -> PackedFailure<'a> {
    if let Some(id) = &id {
        f.stack = ctx.compiles.start_stack(id);
    }
    if let Some(record) = id.as_ref().and_then(|id| ctx.compiles.get(id)) {
        if f.kind == FailureKind::Failure {
            f.error_blob = ctx.compiles.artifacts_named(&record, "dynamo_error").into_iter().find_map(|a| a.blob);
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Failures whose metrics log the same stack traces again: each distinct trace is held once,
    /// a trace seen before as raw text is found by its digest, and every row is written with its
    /// own trace, as logged (checked against the traces parsed from the events' metadata).
    #[test]
    fn stack_traces_logged_again_are_held_once_and_written_with_each_row() {
        use crate::parse::Meta;
        let trace =
            |n: usize| serde_json::json!([format!("Traceback {n}:\n  File \"a.py\", line {n}"), "x".repeat(80)]);
        let metrics = |trace: &Value| {
            let meta = serde_json::json!({"fail_type": "BackendCompilerFailed", "fail_reason": "no", "exception_stack_trace": trace});
            // As torch writes it (`json.dumps`: a space after each separator), so the raw text
            // differs from its serialization.
            let text = meta.to_string().replace("\",\"", "\", \"");
            Meta::Raw(serde_json::value::RawValue::from_string(text).unwrap())
        };
        let (a, b) = (trace(1), trace(2));
        let parsed = Meta::Value(serde_json::json!({"fail_type": "X", "exception_stack_trace": a}));
        let logged = [metrics(&a), metrics(&b), metrics(&b), metrics(&a), parsed, metrics(&Value::Null)];
        let (mut table, mut diags, stacks) =
            (FailuresTable::default(), super::super::Diagnostics::default(), crate::schema::StackTable::default());
        for (seq, meta) in logged.into_iter().enumerate() {
            let row = crate::schema::IndexRow { meta, ..super::super::test_row(seq as u64, "compilation_metrics") };
            table.observe(
                &Event::new(&row, row.line, 0, None, None, &stacks),
                &mut Observe { diags: &mut diags, record: None },
            );
        }
        assert_eq!(table.exceptions.len(), 2, "a and b, each once");
        let (failures, rows): (crate::schema::tables::Failures, _) = super::super::finish_alone(table).expect("rows");
        assert_eq!(rows, 6);
        let strings = |v: &Value| Some(compiles::strings(Some(v)));
        let written: Vec<Option<Vec<String>>> = failures.failures.into_iter().map(|f| f.exception).collect();
        assert_eq!(written, [strings(&a), strings(&b), strings(&b), strings(&a), strings(&a), None]);
    }

    /// A failure packed and read back is written, once completed, as the completed failure
    /// itself: texts with escapes, control characters and non-ASCII, nulls, and the fields
    /// completion sets.
    #[test]
    fn a_packed_failure_is_written_as_the_failure_it_was() {
        let trace = vec!["Traceback:\n  File \"/a/b.py\", line 3\n\tx = 'é' \\ \u{1}".to_string(), "42".to_string()];
        for (reason, exception, completed) in
            [(Some("backend='x' raised:\nRuntimeError: \"no\" ✗".to_string()), Some(trace), true), (None, None, false)]
        {
            let mut failure = Failure {
                compile_id: "[1/0]".into(),
                kind: FailureKind::Failure,
                source: "compilation_metrics".into(),
                failure_type: "BackendCompilerFailed".into(),
                reason,
                user_frame: Some("/a/b.py:3".into()),
                exception,
                error_blob: None,
                stack: None,
                seq: 7,
            };
            let packed = serde_json::to_string(&failure).unwrap();
            let mut read: PackedFailure = serde_json::from_str(&packed).unwrap();
            if completed {
                (failure.error_blob, failure.stack) = (Some("0a1b".into()), Some(3));
                (read.error_blob, read.stack) = (Some("0a1b".into()), Some(3));
            }
            assert_eq!(serde_json::to_string(&read).unwrap(), serde_json::to_string(&failure).unwrap());
        }
    }
}
