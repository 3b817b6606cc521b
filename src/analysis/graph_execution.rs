//! Graph execution order: the compile ids of the graphs run inside each recording
//! (`graph_execution` artifacts), every item kept in place (tlparse drops the ones it cannot read,
//! shifting every later position), and the legacy one-artifact-per-call
//! `inductor_graph_execution` sequence (which tlparse cannot parse and silently ignores).

use serde_json::Value;

use super::trace_event::parse_compile_id;
use super::{Event, Finish, Observe, Table};
use crate::parse::display_compile_id;
use crate::schema::tables::{ExecutionRecording, GraphExecution, GraphRun, LegacyExecution};

const RECORDING: &str = "graph_execution";
const LEGACY: &str = "inductor_graph_execution";

const LEGACY_NOTE: &str = "Legacy inductor_graph_execution entries name each graph by inductor's per-process counter \
(graph_0, graph_1, ...), which the log does not map to compile ids: compare this sequence only with streams that have \
a legacy sequence too, not with the compile ids of graph_execution recordings.";

/// A logged compile id string as a displayed one: torch's `str(CompileId)` (`0/1`, `!0/1/2`),
/// optionally with an `_attempt` suffix or in brackets; `None` for `None` and anything else.
pub fn read_logged_compile_id(text: &str) -> Option<String> {
    let text = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or(text);
    if let Some(id) = parse_compile_id(text) {
        return Some(display_compile_id(&id));
    }
    let (base, attempt) = text.rsplit_once('_')?;
    let mut id = parse_compile_id(base)?;
    id.frame_compile_id?;
    id.attempt = Some(attempt.parse().ok()?);
    Some(display_compile_id(&id))
}

/// One item of `graph_execution_order`: `{"compile_id": str | null}`, or a bare string (older
/// format).
fn read_run(item: &Value) -> GraphRun {
    let logged = match item {
        Value::Object(fields) if fields.len() == 1 && fields.contains_key("compile_id") => &fields["compile_id"],
        other => other,
    };
    match logged {
        Value::Null => GraphRun { compile_id: None, logged: None },
        Value::String(s) => GraphRun { compile_id: read_logged_compile_id(s), logged: Some(s.clone()) },
        other => GraphRun { compile_id: None, logged: Some(other.to_string()) },
    }
}

#[derive(Default)]
pub struct GraphExecutionTable {
    recordings: Vec<ExecutionRecording>,
    legacy: Vec<LegacyExecution>,
}

impl Table for GraphExecutionTable {
    type Format = crate::schema::tables::GraphExecution;
    type Output<'a> = GraphExecution;

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        if ev.kind != "artifact" || !matches!(ev.name, Some(RECORDING | LEGACY)) {
            return;
        }
        let Some(payload) = ev.payload else {
            diags.unusable(Self::NAME, ev, "no payload");
            return;
        };
        if ev.name == Some(LEGACY) {
            match ev.payload_json().and_then(|v| v.get("graph")).and_then(Value::as_str) {
                Some(graph) => self.legacy.push(LegacyExecution {
                    seq: ev.seq,
                    line: ev.line,
                    stack: ev.stack,
                    graph: graph.to_string(),
                }),
                None => diags.unusable(Self::NAME, ev, "payload is not {\"graph\": \"graph_N\"}"),
            }
            return;
        }
        match ev.payload_json().and_then(|v| v.get("graph_execution_order")).and_then(Value::as_array) {
            Some(items) => self.recordings.push(ExecutionRecording {
                seq: ev.seq,
                line: ev.line,
                blob: payload.hash.to_string(),
                stack: ev.stack,
                order: items.iter().map(read_run).collect(),
            }),
            None => diags.unusable(Self::NAME, ev, "payload is not {\"graph_execution_order\": [...]}"),
        }
    }

    fn finish(self, _ctx: &Finish) -> Option<(GraphExecution, u64)> {
        if self.recordings.is_empty() && self.legacy.is_empty() {
            return None;
        }
        let rows = self.recordings.iter().map(|r| r.order.len() as u64).sum::<u64>() + self.legacy.len() as u64;
        let legacy_note = (!self.legacy.is_empty()).then(|| LEGACY_NOTE.to_string());
        Some((GraphExecution { recordings: self.recordings, legacy: self.legacy, legacy_note }, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn logged_compile_ids_are_displayed_like_envelope_ones() {
        assert_eq!(read_logged_compile_id("0/1").as_deref(), Some("[0/1]"));
        assert_eq!(read_logged_compile_id("0/1_2").as_deref(), Some("[0/1_2]"));
        assert_eq!(read_logged_compile_id("0/1_0").as_deref(), Some("[0/1]"));
        assert_eq!(read_logged_compile_id("!2/0/1").as_deref(), Some("[!2/0/1]"));
        assert_eq!(read_logged_compile_id("[0/3]").as_deref(), Some("[0/3]"));
        assert_eq!(read_logged_compile_id("None"), None);
        assert_eq!(read_logged_compile_id("graph_0"), None);
        assert_eq!(read_logged_compile_id("!2_1"), None);
    }

    #[test]
    fn every_item_keeps_its_position() {
        let runs: Vec<GraphRun> =
            [json!({"compile_id": "0/0"}), json!({"compile_id": null}), json!("None"), json!("1/0"), json!(7)]
                .iter()
                .map(read_run)
                .collect();
        let shown: Vec<(Option<&str>, Option<&str>)> =
            runs.iter().map(|r| (r.compile_id.as_deref(), r.logged.as_deref())).collect();
        assert_eq!(
            shown,
            [
                (Some("[0/0]"), Some("0/0")),
                (None, None),
                (None, Some("None")),
                (Some("[1/0]"), Some("1/0")),
                (None, Some("7"))
            ]
        );
    }
}
