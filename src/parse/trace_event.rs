//! The fields of a `chromium_event` payload (a Chrome trace event) that the analysis reads,
//! taken while the payload is parsed anyway to tell its format.

use serde::Deserialize;
use serde_json::value::RawValue;

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
