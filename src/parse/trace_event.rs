//! The fields of a `chromium_event` payload (a Chrome trace event) that the analysis reads,
//! taken while the payload is parsed anyway to tell its format.

use serde::Deserialize;
use serde::de::IgnoredAny;
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
/// a payload the bundle cannot hold as JSON (too deep, a number beyond a float) is no trace
/// event; a `ts` or `dur` that cannot be a time is ignored.
pub fn read_trace_event(bytes: &[u8], problems: &mut Vec<(DiagnosticKind, String)>) -> Option<TraceEvent> {
    let text = escape_lone_surrogates(bytes);
    // The fields read first, then the rest, which serde_json skipped unchecked. A payload of
    // another shape is no trace event, but the Chrome trace copies it if it is JSON.
    let mut event: TraceEvent = match serde_json::from_slice(&text) {
        Ok(event) => event,
        Err(e) => {
            let refused = match Refused::of(&e) {
                Refused::Other(_) if serde_json::from_slice::<IgnoredAny>(&text).is_ok() => check(&text).err(),
                Refused::Other(_) => None,
                refused => Some(refused),
            };
            return left_out(refused, problems);
        }
    };
    if let Err(refused) = check(&text) {
        return left_out(Some(refused), problems);
    }
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

/// No trace event. JSON the bundle cannot hold (`refused`) is left out of the Chrome trace,
/// noted in `problems`; anything else loses nothing.
fn left_out(refused: Option<Refused>, problems: &mut Vec<(DiagnosticKind, String)>) -> Option<TraceEvent> {
    if let Some(refused) = refused {
        let why = refused.describe("chromium_event payload");
        problems.push((refused.kind(), format!("{why}: left out of the Chrome trace (its blob keeps it)")));
    }
    None
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
