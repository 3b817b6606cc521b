//! torch's compile-id strings in a trace event's `args`.

use std::borrow::Cow;

use super::compiles::normalize;
use crate::parse::TraceEvent;
use crate::schema::CompileId;

/// `args.compile_id` of a trace event as a compile id, when it is a string torch would write
/// (`0/1`, `!0/1/2`).
pub fn compile_id(te: &TraceEvent) -> Option<CompileId> {
    let raw = te.args.as_ref()?.compile_id.as_deref()?;
    let text: Cow<str> = serde_json::from_str(raw.get()).ok()?;
    parse_compile_id(&text)
}

/// Reads torch's `str(CompileId)`: `frame/frame_compile`, `!ca`, or `!ca/frame/frame_compile`
/// (no attempt; it is read as 0 like an attempt-less envelope id). `None` for anything else,
/// including the `"None"` logged outside a compile.
pub fn parse_compile_id(text: &str) -> Option<CompileId> {
    let (ca, rest) = match text.strip_prefix('!') {
        Some(rest) => {
            let (ca, rest) = rest.split_once('/').map_or((rest, None), |(a, r)| (a, Some(r)));
            (Some(ca.parse().ok()?), rest)
        }
        None => (None, Some(text)),
    };
    let (frame_id, frame_compile_id) = match rest {
        Some(rest) => {
            let (f, c) = rest.split_once('/')?;
            (Some(f.parse().ok()?), Some(c.parse().ok()?))
        }
        None => (None, None),
    };
    Some(normalize(&CompileId { compiled_autograd_id: ca, frame_id, frame_compile_id, attempt: None }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_id_strings_are_read_like_torch_writes_them() {
        let id = |ca, f, c| CompileId { compiled_autograd_id: ca, frame_id: f, frame_compile_id: c, attempt: Some(0) };
        assert_eq!(parse_compile_id("0/1"), Some(id(None, Some(0), Some(1))));
        assert_eq!(parse_compile_id("!2/0/1"), Some(id(Some(2), Some(0), Some(1))));
        let ca_only =
            CompileId { compiled_autograd_id: Some(3), frame_id: None, frame_compile_id: None, attempt: None };
        assert_eq!(parse_compile_id("!3"), Some(ca_only));
        assert_eq!(parse_compile_id("None"), None);
        assert_eq!(parse_compile_id("0"), None);
        assert_eq!(parse_compile_id("a/b"), None);
    }

    #[test]
    fn trace_events_are_read_without_their_args() {
        use crate::parse::parse_trace_event;
        let te = parse_trace_event(br#"{"name": "dynamo", "ts": 1.5, "args": {"compile_id": "0/0", "big": [1, {"x": 2}]}, "ph": "B", "pid": 0, "tid": "t"}"#).unwrap();
        assert_eq!(te.name.as_deref(), Some("dynamo"));
        assert_eq!(te.ph.as_deref(), Some("B"));
        assert_eq!(te.tid.as_deref().unwrap().get(), "\"t\"");
        assert_eq!(compile_id(&te).and_then(|c| c.frame_id), Some(0));
        assert!(parse_trace_event(b"[1, 2]").is_none());
    }
}
