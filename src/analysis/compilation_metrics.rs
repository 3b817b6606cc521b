//! Compilation metrics: every `*compilation_metrics*` entry, with its phase times pulled out.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::packed_rows::{Interner, PackedRows};
use super::{Diagnostics, Event, Finish, Table};
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
        let meta = ev.meta();
        let Some(fields) = meta.as_object() else {
            diags.unusable(Self::NAME, ev, "metadata is not an object");
            return;
        };
        // The row keeps every field as logged; a time, size or count that cannot be one is
        // reported here, and left out of `times_s` (the cross-rank tables skip it too).
        for (key, value) in fields.iter().filter(|(k, _)| names_a_measure(k)) {
            diags.json_number(ev, key, Some(value));
        }
        let times_s = fields
            .iter()
            .filter(|(k, _)| k.ends_with("_time_s") || *k == "elapsed_time")
            .filter_map(|(k, v)| Some((k.as_str(), v.as_f64().and_then(usable_number)?)))
            .collect();
        let metrics = Fields(fields.iter().map(|(k, v)| (k.as_str(), self.share(k, v))).collect());
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
