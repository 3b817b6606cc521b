//! Graph breaks (`dynamo_graph_break_reason` entries; restarts are counted apart, in `failures`),
//! deduplicated: reason × user-code location × where torch raised it → count and compile ids.

use super::{Event, Finding, Finish, Observe, Table};
use crate::fast_hash::HashMap;
use crate::schema::tables::{BreakFrame, GraphBreakGroup, GraphBreaks};

/// What a `dynamo_graph_break_reason` payload says.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakText {
    /// The short reason, e.g. `Failed to trace builtin operator`.
    pub reason: String,
    /// The user-code location, `file:line`: the innermost user frame of the traceback, else the
    /// logged `Graph break in user code at file:line`.
    pub location: Option<String>,
    /// The logged location, when it is not `location` (the break was raised in torch code).
    pub raised_at: Option<String>,
    /// The `Explanation:` line, when there is one.
    pub explanation: Option<String>,
    /// The graph-break site URL (`https://.../gb/gbNNNN.html`), when there is one.
    pub url: Option<String>,
    /// The "User code traceback", outermost first.
    pub traceback: Vec<BreakFrame>,
}

/// Reads a `dynamo_graph_break_reason` payload.
pub fn parse(text: &str) -> BreakText {
    let lines: Vec<&str> = text.lines().collect();
    let logged =
        lines.iter().find_map(|l| l.trim().strip_prefix("Graph break in user code at ")).map(|s| s.trim().to_string());
    let reason = reason_in(&lines);
    let explanation = lines.iter().find_map(|l| l.trim().strip_prefix("Explanation:")).map(|s| s.trim().to_string());
    let url = lines.iter().find_map(|l| {
        let at = l.find("https://")?;
        let url = l[at..].split_whitespace().next()?;
        url.contains("graph-break").then(|| url.to_string())
    });
    let traceback = user_traceback(&lines);
    let innermost_user = traceback.iter().rev().find(|f| f.user).map(|f| format!("{}:{}", f.file, f.line));
    let location = innermost_user.or_else(|| logged.clone());
    let raised_at = logged.filter(|l| Some(l) != location.as_ref());
    BreakText { reason, location, raised_at, explanation, url, traceback }
}

/// The short reason of a `dynamo_graph_break_reason` payload, as [`parse`] reads it, without
/// the rest (the traceback above all): what `Compiles` keeps of every break.
pub fn reason(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    reason_in(&lines)
}

/// The short reason among a payload's lines. The generic "Encountered graph break when
/// attempting to trace ..." header is skipped for the line that names the actual reason.
fn reason_in(lines: &[&str]) -> String {
    let mut reason = None;
    if let Some(at) = lines.iter().position(|l| l.trim_start().starts_with("Graph Break Reason:")) {
        let head = lines[at].trim_start().trim_start_matches("Graph Break Reason:").trim();
        reason = if head.starts_with("Encountered graph break when attempting to trace") || head.is_empty() {
            lines[at + 1..].iter().map(|l| l.trim()).find(|l| !l.is_empty()).map(str::to_string)
        } else {
            Some(head.to_string())
        };
    }
    reason.or_else(|| lines.iter().map(|l| l.trim()).find(|l| !l.is_empty()).map(str::to_string)).unwrap_or_default()
}

/// The frames of the "User code traceback:" section (up to its first blank line): each a
/// `File "PATH", line N, in NAME` line, then its source line and, on Python 3.11+, a line of
/// `~^` markers (skipped).
fn user_traceback(lines: &[&str]) -> Vec<BreakFrame> {
    let Some(at) = lines.iter().position(|l| l.trim() == "User code traceback:") else { return Vec::new() };
    let mut frames: Vec<BreakFrame> = Vec::new();
    for line in lines[at + 1..].iter().map(|l| l.trim()).take_while(|l| !l.is_empty()) {
        if let Some(frame) = frame_line(line) {
            frames.push(frame);
        } else if let Some(last) = frames.last_mut().filter(|f| f.code.is_none()) {
            if !line.chars().all(|c| matches!(c, '~' | '^' | ' ')) {
                last.code = Some(line.to_string());
            }
        }
    }
    frames
}

/// `File "/a/b.py", line 12, in f` → its frame (file names may hold `"` and `, `: the line
/// number is found from the end).
fn frame_line(line: &str) -> Option<BreakFrame> {
    let rest = line.strip_prefix("File \"")?;
    let (file, tail) = rest.rsplit_once("\", line ")?;
    let (number, name) = tail.split_once(", in ")?;
    Some(BreakFrame {
        user: is_user_file(file),
        file: file.to_string(),
        line: number.trim().parse().ok()?,
        name: name.to_string(),
        code: None,
    })
}

/// Whether a traceback's file is the user's code, as [`BreakFrame::user`] defines it: not in
/// `site-packages` / `dist-packages`, not under a directory named `torch`, not the standard
/// library (`lib/pythonX.Y`, `lib64/pythonX.Y`, `PythonXY/Lib`), not `<frozen ...>` nor
/// `<eval_with_key>...`. Other `<...>` names (`<string>`, `<ipython-input-3-...>`) are user code.
pub fn is_user_file(file: &str) -> bool {
    if file.starts_with("<frozen ") || file.starts_with("<eval_with_key>") {
        return false;
    }
    let dirs: Vec<&str> = file.split(['/', '\\']).collect();
    let dirs = &dirs[..dirs.len().saturating_sub(1)]; // the file name itself is no directory
    let python_dir = |d: &str| {
        let d = d.to_ascii_lowercase();
        d.strip_prefix("python").is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    let lib = |d: &str| d.eq_ignore_ascii_case("lib") || d.eq_ignore_ascii_case("lib64");
    let third_party = dirs.iter().any(|d| matches!(*d, "site-packages" | "dist-packages" | "torch"));
    let stdlib = dirs.windows(2).any(|w| (lib(w[0]) && python_dir(w[1])) || (python_dir(w[0]) && lib(w[1])));
    !(third_party || stdlib)
}

#[derive(Default)]
pub struct GraphBreaksTable {
    groups: Vec<GraphBreakGroup>,
    by_key: HashMap<(String, Option<String>, Option<String>), usize>,
}

impl GraphBreaksTable {
    fn add(&mut self, text: BreakText, compile_id: String, blob: Option<String>) {
        // A break raised at one torch line from two user lines is two groups, and so is a user
        // line reaching two different torch lines.
        let key = (text.reason.clone(), text.location.clone(), text.raised_at.clone());
        let index = *self.by_key.entry(key).or_insert_with(|| {
            self.groups.push(GraphBreakGroup {
                reason: text.reason,
                location: text.location,
                raised_at: text.raised_at,
                traceback: text.traceback,
                explanation: text.explanation,
                url: text.url,
                source: "dynamo_graph_break_reason".to_string(),
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

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        if ev.name != Some("dynamo_graph_break_reason") {
            return;
        }
        let (Some(text), Some(payload)) = (ev.payload_text(), ev.payload) else {
            diags.unusable(Self::NAME, ev, "no payload");
            return;
        };
        let compile_id = ev.display_id.unwrap_or("[-/-]").to_string();
        self.add(parse(&text), compile_id, Some(payload.hash.to_string()));
    }

    fn finish(self, _ctx: &Finish) -> Option<(GraphBreaks, u64)> {
        // A graph break is a `dynamo_graph_break_reason` entry and nothing else (docs/definitions.md):
        // a restart reason is a restart, counted in `failures`, even when a break caused it,
        // because torch also restarts for other causes (`TensorifyScalarRestartAnalysis`) and
        // logs the break itself as the artifact.
        let mut breaks = self.groups;
        if breaks.is_empty() {
            return None;
        }
        breaks.sort_by_key(|b| std::cmp::Reverse(b.count)); // stable: ties keep first appearance
        let total = breaks.iter().map(|b| b.count).sum();
        let rows = breaks.len() as u64;
        Some((GraphBreaks { breaks, total }, rows))
    }

    fn finding(table: &GraphBreaks) -> Option<Finding> {
        Some(Finding::GraphBreaks { total: table.total, places: table.breaks.len() as u64 })
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
    fn a_break_in_torch_code_is_located_at_the_innermost_user_frame() {
        // The shape of a torch 2.15 break inside torch/optim, called from the user's opt.step().
        let text = "Graph break in user code at /opt/venv/lib/python3.11/site-packages/torch/optim/optimizer.py:78\nGraph Break Reason: Call to `torch._dynamo.graph_break()`\n\nUser code traceback:\n  File \"/home/user/train.py\", line 51, in <module>\n    loss = train_step(x)\n           ~~~~~~~~~~^^^\n  File \"/home/user/train.py\", line 45, in train_step\n    opt.step()\n    ~~~~~~~~^^\n  File \"/opt/venv/lib/python3.11/site-packages/torch/optim/optimizer.py\", line 78, in _use_grad\n    torch._dynamo.graph_break()\n\nTraceback (most recent call last):\n  File \"/opt/venv/lib/python3.11/site-packages/torch/_dynamo/symbolic_convert.py\", line 1123, in wrapper\n";
        let b = parse(text);
        assert_eq!(b.location.as_deref(), Some("/home/user/train.py:45"));
        assert_eq!(b.raised_at.as_deref(), Some("/opt/venv/lib/python3.11/site-packages/torch/optim/optimizer.py:78"));
        let frames: Vec<(&str, u64, bool)> = b.traceback.iter().map(|f| (f.name.as_str(), f.line, f.user)).collect();
        assert_eq!(frames, [("<module>", 51, true), ("train_step", 45, true), ("_use_grad", 78, false)]);
        assert_eq!(b.traceback[1].code.as_deref(), Some("opt.step()"), "the ~^ marker line is no code");
        assert_eq!(b.traceback[2].code.as_deref(), Some("torch._dynamo.graph_break()"));
    }

    #[test]
    fn a_break_in_user_code_has_no_separate_raised_at() {
        let text = "Graph break in user code at /home/user/g.py:18\nGraph Break Reason: x\n\nUser code traceback:\n  File \"/home/user/g.py\", line 18, in f\n    print(1)\n";
        let b = parse(text);
        assert_eq!(b.location.as_deref(), Some("/home/user/g.py:18"));
        assert_eq!(b.raised_at, None);
        // No user frame at all: the logged location stands.
        let torch_only = "Graph break in user code at /x/site-packages/torch/a.py:3\nUser code traceback:\n  File \"/x/site-packages/torch/a.py\", line 3, in g\n";
        let b = parse(torch_only);
        assert_eq!((b.location.as_deref(), b.raised_at), (Some("/x/site-packages/torch/a.py:3"), None));
    }

    #[test]
    fn user_files_are_outside_torch_site_packages_and_the_standard_library() {
        for user in [
            "/home/user/train.py",
            "C:\\work\\train.py",
            "<string>",
            "<ipython-input-3-abc>",
            "/home/user/torch_tests/x.py",
            "train.py",
        ] {
            assert!(is_user_file(user), "{user}");
        }
        for not_user in [
            "/opt/venv/lib/python3.11/site-packages/torch/optim/optimizer.py",
            "/usr/lib/python3/dist-packages/numpy/core.py",
            "/data/users/me/pytorch/torch/_dynamo/eval_frame.py",
            "/usr/lib/python3.11/inspect.py",
            "/opt/conda/lib64/python3.10/contextlib.py",
            "C:\\Python311\\Lib\\inspect.py",
            "<frozen runpy>",
            "<eval_with_key>.7",
        ] {
            assert!(!is_user_file(not_user), "{not_user}");
        }
    }

    #[test]
    fn a_bare_restart_reason_is_its_own_reason() {
        let b = parse("'skip function graph_break in file decorators.py'");
        assert_eq!(b.reason, "'skip function graph_break in file decorators.py'");
        assert_eq!(b.location, None);
    }
}
