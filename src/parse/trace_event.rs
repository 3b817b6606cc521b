//! The fields of a `chromium_event` payload (a Chrome trace event) that the analysis reads,
//! taken while the payload is parsed anyway to tell its format.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::checked_members::checked_object_members;
use super::json_text::{Refused, check, escape_lone_surrogates, object_members, plain_string, usable_number};
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
    let mut event = match std::str::from_utf8(&text).ok().and_then(checked_trace_event) {
        Some(event) => event,
        None => serde_trace_event(&text, problems)?,
    };
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

/// The trace event of a payload read by [`checked_object_members`], in the one pass that also
/// checks it: what serde_json reads of it, field for field, when the payload is an object the
/// bundle holds as JSON and its fields have the types the event's do. `None` for anything else
/// (a field twice, one of another type, an `args` that is no object...), which
/// [`serde_trace_event`] then reads.
fn checked_trace_event(text: &str) -> Option<TraceEvent> {
    let members = checked_object_members(text)?;
    let mut event = TraceEvent { name: None, ph: None, ts: None, dur: None, pid: None, tid: None, args: None };
    let mut seen = [false; 7];
    for m in &members {
        if !m.holds_as_json {
            return None;
        }
        let field = ["name", "ph", "ts", "dur", "pid", "tid", "args"].iter().position(|f| *f == m.key);
        let Some(field) = field else { continue };
        if std::mem::replace(&mut seen[field], true) {
            return None;
        }
        let null = m.value == "null";
        match field {
            0 => event.name = if null { None } else { Some(plain_string(m.value)?.to_string()) },
            1 => event.ph = if null { None } else { Some(plain_string(m.value)?.to_string()) },
            2 => event.ts = number(m.value)?,
            3 => event.dur = number(m.value)?,
            4 => event.pid = (!null).then(|| raw_value(m.value)),
            5 => event.tid = (!null).then(|| raw_value(m.value)),
            _ => event.args = if null { None } else { Some(trace_args(m.value)?) },
        }
    }
    Some(event)
}

/// A time as serde_json reads it into the event's `Option<f64>`; `None` for a value that is
/// neither a number nor null.
fn number(text: &str) -> Option<Option<f64>> {
    serde_json::from_str(text).ok()
}

/// `args`, when it is an object whose `compile_id` (if any) is there once.
fn trace_args(text: &str) -> Option<TraceArgs> {
    if !text.starts_with('{') {
        return None;
    }
    let mut compile_id = None;
    // Checked already, as a member of the event: split without checking again.
    for (key, value) in object_members(text)? {
        if key == "compile_id" && compile_id.replace(value).is_some() {
            return None;
        }
    }
    Some(TraceArgs { compile_id: compile_id.filter(|v| *v != "null").map(raw_value) })
}

/// A member's value, checked by [`checked_object_members`], as a raw JSON value.
fn raw_value(text: &str) -> Box<RawValue> {
    // SAFETY: every `text` given here is the value of a member that `checked_object_members`
    // read as one well-formed JSON value, without the whitespace around it, or a member's value
    // of such a value (`object_members` splits an object into the same spans).
    unsafe { RawValue::from_string_unchecked(text.to_string()) }
}

/// The trace event serde_json reads; `None`, noted in `problems` if the payload is JSON the
/// bundle cannot hold, for a payload of another shape.
fn serde_trace_event(text: &[u8], problems: &mut Vec<(DiagnosticKind, String)>) -> Option<TraceEvent> {
    // The fields read first, then the rest, which serde_json skipped unchecked. A payload of
    // another shape is no trace event, but the Chrome trace copies it if it is JSON.
    let event: TraceEvent = match serde_json::from_slice(text) {
        Ok(event) => event,
        Err(e) => {
            let refused = match Refused::of(&e) {
                Refused::Other(_) if serde_json::from_slice::<IgnoredAny>(text).is_ok() => check(text).err(),
                Refused::Other(_) => None,
                refused => Some(refused),
            };
            return left_out(refused, problems);
        }
    };
    if let Err(refused) = check(text) {
        return left_out(Some(refused), problems);
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What serde_json reads of a payload, checked as the serde path checks it.
    fn serde_read(text: &str) -> Option<TraceEvent> {
        serde_trace_event(text.as_bytes(), &mut Vec::new())
    }

    #[test]
    fn reads_an_event_as_serde_json_does() {
        let text = r#"{"name": "dynamo", "ts": 1.5e3, "dur": 7, "args": {"compile_id": "0/0", "big": [1, {"x": 2}]}, "ph": "B", "pid": 0, "tid": "t", "cat": "x"}"#;
        let event = checked_trace_event(text).expect("read in one pass");
        assert_eq!(Some(&event), serde_read(text).as_ref());
        assert_eq!((event.name.as_deref(), event.ts, event.dur), (Some("dynamo"), Some(1500.0), Some(7.0)));
        assert_eq!(event.args.and_then(|a| a.compile_id).map(|c| c.get().to_string()).as_deref(), Some(r#""0/0""#));
        // Left to serde_json: a field twice, a name of another type or with an escape, args
        // that are no object, a number beyond a float.
        for text in [
            r#"{"name": "a", "name": "b"}"#,
            r#"{"name": 3}"#,
            r#"{"name": "a"b"}"#,
            r#"{"args": [1]}"#,
            r#"{"args": {"compile_id": 1, "compile_id": 2}}"#,
            r#"{"ts": "1"}"#,
            r#"{"x": 1e999}"#,
        ] {
            assert!(checked_trace_event(text).is_none(), "{text}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Events made of the fields the tables read, with values of any type, twice or not:
        /// wherever the one pass reads an event, serde_json reads the same one.
        #[test]
        fn the_one_pass_reads_what_serde_json_reads(
            members in proptest::collection::vec((
                prop::sample::select(vec!["name", "ph", "ts", "dur", "pid", "tid", "args", "cat", "compile_id"]),
                prop::sample::select(vec![
                    "null", "0", "-1.5", "1e3", "1e999", "\"B\"", "\"a\\\"b\"", "\"\\u00e9\"", "true", "[1]", "{}",
                    "{\"compile_id\": \"0/1\"}", "{\"compile_id\": null, \"x\": [{}]}", "{\"compile_id\": 1, \"compile_id\": 2}",
                ]),
            ), 0..6),
        ) {
            let text = format!("{{{}}}", members.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect::<Vec<_>>().join(", "));
            if let Some(ours) = checked_trace_event(&text) {
                prop_assert_eq!(Some(ours), serde_read(&text), "text: {}", text);
            }
        }
    }
}
