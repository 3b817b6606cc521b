//! Failures and restarts: one row per restart reason and per failed compile (forward or
//! backward), in log order.

use serde::ser::{Error, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::compilation_metrics::METRICS_KINDS;
use super::packed_rows::PackedRows;
use super::{Diagnostics, Event, Finding, Finish, Table, compiles};
use crate::schema::CompileId;
use crate::schema::tables::{Failure, FailureKind};

#[derive(Default)]
pub struct FailuresTable {
    /// Rows, with the compile id to look the stack and `dynamo_error` up in at the end: packed,
    /// as a long log restarts thousands of compiles (and a failure row holds its exception's
    /// whole stack trace).
    rows: PackedRows,
    restarts: u64,
}

/// The finished table: serializes as [`Failures`](crate::schema::tables::Failures), completing
/// each row as it is written, so that the rows are never all in memory at once (a long log's are
/// tens of megabytes).
#[derive(Serialize)]
pub struct FailuresView<'a> {
    failures: CompletedRows<'a>,
    restarts: u64,
    failed: u64,
}

/// The packed rows, each completed by [`complete`] as it is serialized.
struct CompletedRows<'a> {
    rows: PackedRows,
    ctx: &'a Finish<'a>,
}

impl Serialize for CompletedRows<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.rows.len()))?;
        self.rows.try_for_each(|json| {
            let (id, row): (Option<CompileId>, PackedFailure) = serde_json::from_str(json).map_err(S::Error::custom)?;
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

    fn observe(&mut self, ev: &Event, diags: &mut Diagnostics) {
        if !METRICS_KINDS.contains(&ev.kind) {
            return;
        }
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
            self.rows.push(&(ev.compile_id.copied(), restart));
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
        failure.user_frame = match (
            m.get("fail_user_frame_filename").as_deref().and_then(Value::as_str),
            m.get("fail_user_frame_lineno"),
        ) {
            (Some(file), Some(line)) if !line.is_null() => Some(format!("{file}:{line}")),
            (Some(file), _) => Some(file.to_string()),
            _ => None,
        };
        failure.exception =
            m.get("exception_stack_trace").filter(|v| !v.is_null()).map(|v| compiles::strings(Some(&v)));
        self.rows.push(&(ev.compile_id.copied(), failure));
    }

    fn finish<'a>(self, ctx: &'a Finish) -> Option<(FailuresView<'a>, u64)> {
        if self.rows.is_empty() {
            return None;
        }
        let rows = self.rows.len() as u64;
        let failed = rows - self.restarts;
        Some((FailuresView { failures: CompletedRows { rows: self.rows, ctx }, restarts: self.restarts, failed }, rows))
    }

    fn finding(view: &FailuresView<'_>) -> Option<Finding> {
        Some(Finding::Failures { failed: view.failed, restarts: view.restarts })
    }
}

/// A row with what only the end of the log tells: its compile's stack and `dynamo_error`.
fn complete<'a>(ctx: &Finish, id: Option<CompileId>, mut f: PackedFailure<'a>) -> PackedFailure<'a> {
    if let Some(id) = &id {
        f.stack = ctx.compiles.start_stack(id);
    }
    if let Some(record) = id.as_ref().and_then(|id| ctx.compiles.get(id)) {
        if f.kind == FailureKind::Failure {
            f.error_blob = ctx.compiles.artifacts_named(record, "dynamo_error").into_iter().find_map(|a| a.blob);
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

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
