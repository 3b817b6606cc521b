//! Compilation metrics: every `*compilation_metrics*` entry, with its phase times pulled out.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::packed_rows::{Interner, PackedRows};
use super::{Diagnostics, Event, Finish, Member, Table};
use crate::parse::json_text::usable_number;

/// The metrics kinds torch logs (the `_runtime` ones for work done at run time).
pub const METRICS_KINDS: [&str; 5] = [
    "compilation_metrics",
    "bwd_compilation_metrics",
    "aot_autograd_backward_compilation_metrics",
    "compilation_metrics_runtime",
    "bwd_compilation_metrics_runtime",
];

#[derive(Default)]
pub struct CompilationMetricsTable {
    /// The rows, packed: a parsed metrics object takes several times the memory of its text, and
    /// a long log has thousands.
    rows: PackedRows,
    /// Distinct large values, each once, known by their text's digest: held compressed like the
    /// rows, as a long log's compiles can each have a large value of their own.
    shared: Interner,
    /// Each field's last large value and its id in `shared`: a field repeats its value from one
    /// compile to the next, which [`same_text`] tells without serializing it again.
    last_shared: crate::fast_hash::HashMap<String, (u32, Value)>,
    /// Each field's last shared value as logged, raw JSON text that parses to a value of the same
    /// text as its `last_shared` one, with that one's id: the same text again is shared without
    /// being parsed (torch logs its 28 KB `inductor_config` string, all escapes, every compile).
    last_raw: crate::fast_hash::HashMap<String, (u32, Box<str>)>,
}

/// Whether two values serialize to the same JSON text: equal, with their objects' keys in the
/// same order (`==` on values ignores that order) and zeros of the same sign (`==` does not
/// tell `0.0` from `-0.0`).
fn same_text(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((kx, vx), (ky, vy))| kx == ky && same_text(vx, vy))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(vx, vy)| same_text(vx, vy)),
        (Value::Number(x), Value::Number(y)) => {
            x == y && x.as_f64().map(f64::is_sign_negative) == y.as_f64().map(f64::is_sign_negative)
        }
        _ => a == b,
    }
}

/// Whether a metrics field's name says it holds a time, a size or a count (`start_time`,
/// `*_time_s`, `*_us`, `*_count`, `param_bytes`...): what its number must be usable as. Other
/// numbers (versions, ids) are the log's business.
fn names_a_measure(key: &str) -> bool {
    const SUFFIXES: [&str; 9] = ["_time", "_s", "_ms", "_us", "_ns", "_count", "_size", "_bytes", "_numel"];
    SUFFIXES.iter().any(|s| key.ends_with(s))
}

/// Values over this many bytes of JSON are stored once per table (torch repeats its whole
/// `dynamo_config` in every compile's metrics).
const SHARED_OVER: usize = 1024;

impl CompilationMetricsTable {
    /// A field's value, or `{"shared": i}` for a large one.
    fn share<'v>(&mut self, field: &str, value: &'v Value) -> Field<'v> {
        // The field's last large value again (a shared value is large: so is this one).
        if let Some((i, last)) = self.last_shared.get(field)
            && same_text(last, value)
        {
            return Field::Shared { shared: *i };
        }
        // Serialized once: to measure a container and, when big, to store it.
        let json = match value {
            Value::String(s) if s.len() > SHARED_OVER => value.to_string(),
            Value::Array(_) | Value::Object(_) => match value.to_string() {
                json if json.len() > SHARED_OVER => json,
                _ => return Field::Logged(value),
            },
            _ => return Field::Logged(value),
        };
        let i = self.shared.intern_json(&json);
        match self.last_shared.get_mut(field) {
            Some(last) => *last = (i, value.clone()),
            None => drop(self.last_shared.insert(field.to_string(), (i, value.clone()))),
        }
        Field::Shared { shared: i }
    }

    /// A field as the row holds it: `value` parsed from `member`, or `None` when `member` is
    /// the raw text of the field's last shared value.
    fn field<'v>(&mut self, key: &str, member: Member, value: Option<&'v Value>) -> Field<'v> {
        let Some(value) = value else {
            return Field::Shared { shared: self.last_raw[key].0 };
        };
        let field = self.share(key, value);
        if let (Field::Shared { shared }, Some(raw)) = (&field, member.raw()) {
            // `share` found the value's text as the field's last shared one, or made it so.
            match self.last_raw.get_mut(key) {
                Some(last) => *last = (*shared, raw.into()),
                None => drop(self.last_raw.insert(key.to_string(), (*shared, raw.into()))),
            }
        }
        field
    }
}

/// A [`MetricsRow`](crate::schema::tables::MetricsRow) as it is packed, borrowing the entry's
/// parsed metadata: a `MetricsRow` held a copy of every field, made only to be serialized (a
/// build of the 150 MB compiles bench log took 2.5% more CPU).
#[derive(Serialize)]
struct MetricsRowView<'v> {
    compile_id: Option<&'v str>,
    kind: &'v str,
    runtime: bool,
    seq: u64,
    line: u64,
    times_s: BTreeMap<&'v str, f64>,
    metrics: Fields<'v>,
}

/// The metrics object's fields, in the order logged, serialized as an object.
struct Fields<'v>(Vec<(&'v str, Field<'v>)>);

impl Serialize for Fields<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// A metrics field's value: as logged, or the index of a large one in the table's `shared`.
#[derive(Serialize)]
#[serde(untagged)]
enum Field<'v> {
    Logged(&'v Value),
    Shared { shared: u32 },
}

/// [`crate::schema::tables::CompilationMetrics`], serialized from the packed rows.
#[derive(Serialize)]
pub struct PackedCompilationMetrics {
    metrics: PackedRows,
    shared: Interner,
}

impl Table for CompilationMetricsTable {
    type Format = crate::schema::tables::CompilationMetrics;
    type Output<'a> = PackedCompilationMetrics;

    fn observe(&mut self, ev: &Event, diags: &mut Diagnostics) {
        if !METRICS_KINDS.contains(&ev.kind) {
            return;
        }
        let meta = ev.meta_members();
        let Some(members) = meta.object() else {
            diags.unusable(Self::NAME, ev, "metadata is not an object");
            return;
        };
        // Each field's value, parsed unless it is logged as its field's last shared value was
        // (no measure is: a measure is always read).
        let values: Vec<Option<Cow<Value>>> = members
            .iter()
            .map(|&(key, member)| {
                let repeated =
                    member.raw().is_some_and(|raw| self.last_raw.get(key).is_some_and(|(_, last)| **last == *raw));
                (names_a_measure(key) || !repeated).then(|| member.value())
            })
            .collect();
        let fields = || members.iter().zip(&values).filter_map(|(&(k, _), v)| Some((k, v.as_deref()?)));
        // The row keeps every field as logged; a time, size or count that cannot be one is
        // reported here, and left out of `times_s` (the cross-rank tables skip it too).
        for (key, value) in fields().filter(|(k, _)| names_a_measure(k)) {
            diags.json_number(ev, key, Some(value));
        }
        let times_s = fields()
            .filter(|(k, _)| k.ends_with("_time_s") || *k == "elapsed_time")
            .filter_map(|(k, v)| Some((k, v.as_f64().and_then(usable_number)?)))
            .collect();
        let metrics = Fields(
            members
                .iter()
                .zip(&values)
                .map(|(&(key, member), value)| (key, self.field(key, member, value.as_deref())))
                .collect(),
        );
        let row = MetricsRowView {
            compile_id: ev.display_id,
            kind: ev.kind,
            runtime: ev.kind.ends_with("_runtime"),
            seq: ev.seq,
            line: ev.line,
            times_s,
            metrics,
        };
        self.rows.push(&row);
    }

    fn finish(self, _ctx: &Finish) -> Option<(PackedCompilationMetrics, u64)> {
        let rows = self.rows.len() as u64;
        (rows > 0).then_some((PackedCompilationMetrics { metrics: self.rows, shared: self.shared }, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_is_equality_of_the_serialized_text() {
        let v = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        let serialized = |text: &str| serde_json::to_vec(&v(text)).unwrap();
        for (a, b) in [
            (r#"{"a": [1, 2.5, "x"], "b": null}"#, r#"{"a": [1, 2.5, "x"], "b": null}"#),
            (r#"{"a": 1, "b": 2}"#, r#"{"b": 2, "a": 1}"#),
            ("0.0", "-0.0"),
            ("1", "1.0"),
            (r#"[{"a": true}]"#, r#"[{"a": false}]"#),
        ] {
            assert_eq!(same_text(&v(a), &v(b)), serialized(a) == serialized(b), "{a} vs {b}");
        }
    }

    #[test]
    fn a_repeated_large_value_is_shared_once() {
        let mut table = CompilationMetricsTable::default();
        // As the row serializes it.
        let shared = |field: Field| serde_json::to_value(field).unwrap();
        let big = Value::from("x".repeat(SHARED_OVER + 1));
        let other = Value::from("y".repeat(SHARED_OVER + 1));
        assert_eq!(shared(table.share("config", &big)), serde_json::json!({ "shared": 0 }));
        assert_eq!(shared(table.share("config", &other)), serde_json::json!({ "shared": 1 }));
        assert_eq!(shared(table.share("config", &big)), serde_json::json!({ "shared": 0 }));
        assert_eq!(shared(table.share("other", &big)), serde_json::json!({ "shared": 0 }));
        assert_eq!(shared(table.share("small", &Value::from(3))), Value::from(3));
        assert_eq!(table.shared.len(), 2);
    }
}
