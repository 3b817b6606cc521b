//! torch's own hints: the `Hint:` lines of graph breaks, restart reasons and failure reasons,
//! one row per distinct hint with what carried it, quoted as logged (no advice of ours).

use super::compilation_metrics::METRICS_KINDS;
use super::{Event, Finish, Observe, Table, compiles, graph_breaks};
use crate::fast_hash::HashMap;
use crate::schema::tables::{Hint, HintKind, Hints};

/// The hints of a message: the text after `Hint: ` of each line that starts so (once indented),
/// trimmed, each once, in order. torch writes one hint a line.
pub fn hints_in(text: &str) -> Vec<&str> {
    let mut hints: Vec<&str> = Vec::new();
    for hint in text.lines().filter_map(|l| l.trim_start().strip_prefix("Hint:")).map(str::trim) {
        if !hint.is_empty() && !hints.contains(&hint) {
            hints.push(hint);
        }
    }
    hints
}

/// What a hint asks for: to report an issue (torch's "Please report an issue to PyTorch.", "please
/// file an issue on GitHub ..."), or an action on the user's side.
pub fn kind(hint: &str) -> HintKind {
    let hint = hint.to_ascii_lowercase();
    if hint.contains("report an issue") || hint.contains("file an issue") {
        HintKind::ReportToPytorch
    } else {
        HintKind::Action
    }
}

/// Which count a message carrying hints adds to.
#[derive(Clone, Copy)]
enum Carrier {
    GraphBreak,
    Restart,
    Failure,
}

#[derive(Default)]
pub struct HintsTable {
    rows: Vec<Hint>,
    by_text: HashMap<String, usize>,
}

impl HintsTable {
    /// Reads one entry: a graph break's payload, or a metrics entry's restart and fail reasons.
    /// Nothing here is unusable that `graph_breaks` and `failures` do not already report.
    fn read(&mut self, ev: &Event) {
        let compile_id = ev.display_id.unwrap_or("[-/-]");
        if ev.name == Some("dynamo_graph_break_reason") {
            if let Some(text) = ev.payload_text() {
                self.add(&text, Carrier::GraphBreak, compile_id);
            }
            return;
        }
        if !METRICS_KINDS.contains(&ev.kind) {
            return;
        }
        let m = ev.meta_members();
        for reason in compiles::strings(m.get("restart_reasons").as_deref()) {
            self.add(&reason, Carrier::Restart, compile_id);
        }
        if m.get("fail_type").is_some_and(|t| !t.is_null())
            && let Some(reason) = m.get("fail_reason")
            && let Some(text) = reason.as_str()
        {
            self.add(text, Carrier::Failure, compile_id);
        }
    }

    /// Counts each hint of one message once, with the message's reason, location and compile id.
    fn add(&mut self, text: &str, carrier: Carrier, compile_id: &str) {
        let hints = hints_in(text);
        if hints.is_empty() {
            return;
        }
        let message = graph_breaks::parse(text);
        for hint in hints {
            let at = *self.by_text.entry(hint.to_string()).or_insert_with(|| {
                self.rows.push(new_row(hint));
                self.rows.len() - 1
            });
            let row = &mut self.rows[at];
            match carrier {
                Carrier::GraphBreak => row.graph_breaks += 1,
                Carrier::Restart => row.restarts += 1,
                Carrier::Failure => row.failures += 1,
            }
            push_once(&mut row.reasons, &message.reason);
            if let Some(location) = &message.location {
                push_once(&mut row.locations, location);
            }
            push_once(&mut row.compile_ids, compile_id);
        }
    }
}

fn new_row(hint: &str) -> Hint {
    Hint {
        hint: hint.to_string(),
        kind: kind(hint),
        graph_breaks: 0,
        restarts: 0,
        failures: 0,
        reasons: Vec::new(),
        locations: Vec::new(),
        compile_ids: Vec::new(),
    }
}

fn push_once(list: &mut Vec<String>, item: &str) {
    if !item.is_empty() && !list.iter().any(|i| i == item) {
        list.push(item.to_string());
    }
}

fn occurrences(h: &Hint) -> u64 {
    h.graph_breaks + h.restarts + h.failures
}

impl Table for HintsTable {
    type Format = Hints;
    type Output<'a> = Hints;

    fn observe(&mut self, ev: &Event, _cx: &mut Observe) {
        self.read(ev);
    }

    fn finish(self, _ctx: &Finish) -> Option<(Hints, u64)> {
        let mut hints = self.rows;
        if hints.is_empty() {
            return None;
        }
        hints.sort_by(|a, b| occurrences(b).cmp(&occurrences(a)).then_with(|| a.hint.cmp(&b.hint)));
        let rows = hints.len() as u64;
        Some((Hints { hints }, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_hint_line_once() {
        // The shape of a torch 2.15 print break (fixture torch-2.15/graph_breaks, log line 76).
        let text = "Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace builtin operator `print`\n  Hint: Avoid calling builtin `print`.\n  Hint: Please report an issue to PyTorch.\n  Hint: Please report an issue to PyTorch.\n\n  Developer debug context: builtin print\n";
        assert_eq!(hints_in(text), ["Avoid calling builtin `print`.", "Please report an issue to PyTorch."]);
        assert!(hints_in("Graph Break Reason: x\n  Explanation: no hint here\n  Hint:   \n").is_empty());
    }

    #[test]
    fn a_hint_asking_for_an_issue_is_a_report() {
        for report in [
            "Please report an issue to PyTorch.",
            "Please file an issue to PyTorch.",
            "If it is a Python builtin, please file an issue on GitHub so the PyTorch team can add support for it and see the next case for a workaround.",
        ] {
            assert_eq!(kind(report), HintKind::ReportToPytorch, "{report}");
        }
        for action in [
            "Set `torch._dynamo.config.capture_scalar_outputs = True` or `export TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` to include these operations in the captured graph.",
            "Remove the `torch._dynamo.graph_break()` call.",
        ] {
            assert_eq!(kind(action), HintKind::Action, "{action}");
        }
    }

    #[test]
    fn rows_go_by_occurrences_then_text() {
        let mut t = HintsTable::default();
        t.add("r1\n  Hint: b\n", Carrier::GraphBreak, "[0/0]");
        t.add("r2\n  Hint: a\n", Carrier::Restart, "[1/0]");
        t.add("r1\n  Hint: c\n  Hint: b\n", Carrier::Failure, "[2/0]");
        let (table, rows) = crate::analysis::finish_alone(t).unwrap();
        let order: Vec<(&str, u64)> = table.hints.iter().map(|h| (h.hint.as_str(), occurrences(h))).collect();
        assert_eq!((order, rows), (vec![("b", 2), ("a", 1), ("c", 1)], 3));
        assert_eq!(table.hints[0].compile_ids, ["[0/0]", "[2/0]"]);
        assert_eq!((table.hints[0].graph_breaks, table.hints[0].failures), (1, 1));
        assert_eq!(table.hints[0].reasons, ["r1"]);
    }
}
