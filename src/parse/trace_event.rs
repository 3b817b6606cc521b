//! The fields of a `chromium_event` payload (a Chrome trace event) that the analysis reads,
//! taken while the payload is parsed anyway to tell its format.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::json_text::{Refused, check, escape_lone_surrogates, usable_number};
use crate::schema::DiagnosticKind;

/// The fields of a trace event the tables read; everything else (big `args`) is skipped unparsed.
#[derive(Debug, Clone, Deserialize)]
pub struct TraceEvent {
    pub name: Option<String>,
    pub ph: Option<String>,
    pub ts: Option<f64>,
    pub dur: Option<f64>,
    pub pid: Option<Box<RawValue>>,
    pub tid: Option<Box<RawValue>>,
    pub args: Option<TraceArgs>,
}

/// The one `args` field the tables read.
#[derive(Debug, Clone, Deserialize)]
pub struct TraceArgs {
    pub compile_id: Option<Box<RawValue>>,
}

/// Parses a chromium event payload; `None` when it is not a JSON object of the expected shape.
pub fn parse_trace_event(bytes: &[u8]) -> Option<TraceEvent> {
    serde_json::from_slice(bytes).ok()
}

/// Reads a chromium event payload as the tables and the Chrome trace use it, noting in `problems`
/// what of it is lost: lone surrogate escapes are kept as text (see [`escape_lone_surrogates`]);
/// a payload JSON readers would refuse whole (too deep, a number beyond a float) is no trace
/// event; a `ts` or `dur` that cannot be a time is ignored.
pub fn read_trace_event(bytes: &[u8], problems: &mut Vec<(DiagnosticKind, String)>) -> Option<TraceEvent> {
    let text = escape_lone_surrogates(bytes);
    match check(&text) {
        Ok(()) => {}
        Err(Refused::Other(_)) => return None, // not JSON: a text payload, nothing lost
        Err(unreadable) => {
            let why = unreadable.describe("chromium_event payload");
            problems.push((unreadable.kind(), format!("{why}: left out of the Chrome trace (its blob keeps it)")));
            return None;
        }
    }
    let mut event = parse_trace_event(&text)?;
    for (field, value) in [("ts", &mut event.ts), ("dur", &mut event.dur)] {
        if let Some(x) = value.filter(|&x| usable_number(x).is_none()) {
            *value = None;
            problems.push((
                DiagnosticKind::OutOfRange,
                format!("chromium_event {field} {x:?} is out of range (not finite, or beyond ±2^53): ignored"),
            ));
        }
    }
    Some(event)
}

/// Raw JSON compared as text (`RawValue` has no equality of its own).
fn raw_text(raw: &Option<Box<RawValue>>) -> Option<&str> {
    raw.as_deref().map(RawValue::get)
}

impl PartialEq for TraceEvent {
    fn eq(&self, other: &Self) -> bool {
        fn compile_id(te: &TraceEvent) -> Option<Option<&str>> {
            te.args.as_ref().map(|a| raw_text(&a.compile_id))
        }
        (&self.name, &self.ph, self.ts, self.dur) == (&other.name, &other.ph, other.ts, other.dur)
            && (raw_text(&self.pid), raw_text(&self.tid)) == (raw_text(&other.pid), raw_text(&other.tid))
            && compile_id(self) == compile_id(other)
    }
}
