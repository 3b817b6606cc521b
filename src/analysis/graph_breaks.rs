//! Graph breaks, deduplicated: reason × user-code location → count and compile ids.

/// What a `dynamo_graph_break_reason` payload says.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakText {
    /// The short reason, e.g. `Failed to trace builtin operator`.
    pub reason: String,
    /// The user-code location, `file:line`, from `Graph break in user code at file:line`.
    pub location: Option<String>,
    /// The `Explanation:` line, when there is one.
    pub explanation: Option<String>,
    /// The graph-break site URL (`https://.../gb/gbNNNN.html`), when there is one.
    pub url: Option<String>,
}

/// Reads a `dynamo_graph_break_reason` payload. The generic "Encountered graph break when
/// attempting to trace ..." header is skipped for the line that names the actual reason.
pub fn parse(text: &str) -> BreakText {
    let lines: Vec<&str> = text.lines().collect();
    let location =
        lines.iter().find_map(|l| l.trim().strip_prefix("Graph break in user code at ")).map(|s| s.trim().to_string());
    let mut reason = None;
    if let Some(at) = lines.iter().position(|l| l.trim_start().starts_with("Graph Break Reason:")) {
        let head = lines[at].trim_start().trim_start_matches("Graph Break Reason:").trim();
        reason = if head.starts_with("Encountered graph break when attempting to trace") || head.is_empty() {
            lines[at + 1..].iter().map(|l| l.trim()).find(|l| !l.is_empty()).map(str::to_string)
        } else {
            Some(head.to_string())
        };
    }
    let reason = reason
        .or_else(|| lines.iter().map(|l| l.trim()).find(|l| !l.is_empty()).map(str::to_string))
        .unwrap_or_default();
    let explanation = lines.iter().find_map(|l| l.trim().strip_prefix("Explanation:")).map(|s| s.trim().to_string());
    let url = lines.iter().find_map(|l| {
        let at = l.find("https://")?;
        let url = l[at..].split_whitespace().next()?;
        url.contains("graph-break").then(|| url.to_string())
    });
    BreakText { reason, location, explanation, url }
}

use std::collections::HashMap;

use super::{Diagnostics, Event, Finish, Table};
use crate::schema::tables::{GraphBreakGroup, GraphBreaks};

#[derive(Default)]
pub struct GraphBreaksTable {
    groups: Vec<GraphBreakGroup>,
    by_key: HashMap<(String, Option<String>), usize>,
}

impl GraphBreaksTable {
    fn add(&mut self, text: BreakText, source: &str, compile_id: String, blob: Option<String>) {
        let key = (text.reason.clone(), text.location.clone());
        let index = *self.by_key.entry(key).or_insert_with(|| {
            self.groups.push(GraphBreakGroup {
                reason: text.reason,
                location: text.location,
                explanation: text.explanation,
                url: text.url,
                source: source.to_string(),
                count: 0,
                compile_ids: Vec::new(),
                example_blob: blob,
            });
            self.groups.len() - 1
        });
        let group = &mut self.groups[index];
        group.count += 1;
        group.compile_ids.push(compile_id);
    }
}

impl Table for GraphBreaksTable {
    type Format = crate::schema::tables::GraphBreaks;
    type Output<'a> = GraphBreaks;

    fn observe(&mut self, ev: &Event, diags: &mut Diagnostics) {
        if ev.name != Some("dynamo_graph_break_reason") {
            return;
        }
        let (Some(text), Some(payload)) = (ev.payload_text(), ev.payload) else {
            diags.unusable(Self::NAME, ev, "no payload");
            return;
        };
        let compile_id = ev.display_id.unwrap_or("[-/-]").to_string();
        self.add(parse(&text), "dynamo_graph_break_reason", compile_id, Some(payload.hash.to_string()));
    }

    fn finish(mut self, ctx: &Finish) -> Option<(GraphBreaks, u64)> {
        // Logs without the artifact (older torch) still name the break in the metrics'
        // `restart_reasons`; use those for frame compiles that logged no artifact in any attempt.
        for r in &ctx.compiles.records {
            let reasons = r.restart_reasons();
            if reasons.is_empty() || ctx.compiles.attempts(&r.id).any(|o| !o.graph_breaks.is_empty()) {
                continue;
            }
            for reason in reasons {
                self.add(parse(reason), "restart_reasons", r.display.clone(), None);
            }
        }
        let mut breaks = self.groups;
        if breaks.is_empty() {
            return None;
        }
        breaks.sort_by_key(|b| std::cmp::Reverse(b.count)); // stable: ties keep first appearance
        let total = breaks.iter().map(|b| b.count).sum();
        let rows = breaks.len() as u64;
        Some((GraphBreaks { breaks, total }, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_torch_2_15_graph_break() {
        let text = "Graph break in user code at /home/user/g.py:18\nGraph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):\n\nFailed to trace builtin operator\n  Explanation: Dynamo does not know how to trace `print`\n\n For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html\n";
        let b = parse(text);
        assert_eq!(b.reason, "Failed to trace builtin operator");
        assert_eq!(b.location.as_deref(), Some("/home/user/g.py:18"));
        assert_eq!(b.explanation.as_deref(), Some("Dynamo does not know how to trace `print`"));
        assert_eq!(b.url.as_deref(), Some("https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html"));
    }

    #[test]
    fn a_bare_restart_reason_is_its_own_reason() {
        let b = parse("'skip function graph_break in file decorators.py'");
        assert_eq!(b.reason, "'skip function graph_break in file decorators.py'");
        assert_eq!(b.location, None);
    }
}
