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
