//! Compilation metrics: every `*compilation_metrics*` entry, with its phase times pulled out.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::{Event, Finish, Member, Observe, Table};
use crate::parse::json_text::usable_number;
use crate::schema::tables::MetricsRow;
use crate::store::{Distinct, Rows, SeenTexts, Store, Unseen};

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
    rows: Rows<MetricsRow>,
    /// Distinct large values, each once, known by their text's digest: held compressed like the
    /// rows, as a long log's compiles can each have a large value of their own.
    shared: Distinct<Value>,
    /// Each field's last large value and its id in `shared`: a field repeats its value from one
    /// compile to the next, which [`same_text`] tells without serializing it again.
    last_shared: crate::fast_hash::HashMap<String, (u32, Value)>,
    /// The id in `shared` of each large value seen as raw JSON text: the same text again is
    /// neither parsed nor serialized. torch logs its 28 KB `inductor_config` string, all
    /// escapes, every compile, and a failing frame's stack trace or one of a few
    /// `dynamo_config`s comes back after others.
    shared_raw: SeenTexts,
}

/// Raw texts shorter than this are parsed without being looked up: shared values are longer
/// than [`SHARED_OVER`] once serialized, and a number grows at most 4.5 times (`1e15` is
/// `1000000000000000.0`), so a shorter text is hardly ever one (and if it is, it is parsed and
/// shared as before: the lookup only saves work).
const LOOKED_UP_OVER: usize = SHARED_OVER / 8;

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
        let i = self.shared.id_of_json(&json);
        match self.last_shared.get_mut(field) {
            Some(last) => *last = (i, value.clone()),
            None => drop(self.last_shared.insert(field.to_string(), (i, value.clone()))),
        }
        Field::Shared { shared: i }
    }

    /// How a member is read: as the id of its raw text when that was shared before (not for a
    /// measure, always read), else parsed.
    fn read<'e>(&mut self, key: &str, member: Member<'e, '_>) -> Read<'e> {
        let parsed = |unseen| Read::Parsed { value: member.value(), unseen };
        match member.raw().filter(|raw| raw.len() > LOOKED_UP_OVER && !names_a_measure(key)) {
            Some(raw) => match self.shared_raw.find(raw) {
                Ok(shared) => Read::SharedBefore(shared),
                Err(unseen) => parsed(Some(unseen)),
            },
            None => parsed(None),
        }
    }

    /// A field as the row holds it: its value parsed from `member`, or the id of its raw text
    /// when that text was shared by an earlier row. A value shared here is known by its raw text
    /// from then on.
    fn field<'v>(&mut self, key: &str, member: Member, read: &'v Read) -> Field<'v> {
        let (value, unseen) = match read {
            Read::SharedBefore(shared) => return Field::Shared { shared: *shared },
            Read::Parsed { value, unseen } => (value.as_ref(), *unseen),
        };
        let field = self.share(key, value);
        if let (Field::Shared { shared }, Some(raw), Some(unseen)) = (&field, member.raw(), unseen) {
            self.shared_raw.add(raw, unseen, *shared);
        }
        field
    }
}

/// A [`MetricsRow`](crate::schema::tables::MetricsRow) as it is packed, borrowing the entry's
/// parsed metadata: an owned `MetricsRow` would copy every field only to serialize it.
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

/// What a metrics entry's member is read as: its value, or the id of its raw text shared before.
enum Read<'e> {
    /// The value, with what looking its raw text up learned, when it was looked up.
    Parsed {
        value: Cow<'e, Value>,
        unseen: Option<Unseen>,
    },
    SharedBefore(u32),
}

impl Read<'_> {
    fn parsed(&self) -> Option<&Value> {
        match self {
            Read::Parsed { value, .. } => Some(value),
            Read::SharedBefore(_) => None,
        }
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
    metrics: Rows<MetricsRow>,
    shared: Distinct<Value>,
}

impl Table for CompilationMetricsTable {
    type Format = crate::schema::tables::CompilationMetrics;
    type Output<'a> = PackedCompilationMetrics;

    fn new(store: &Store) -> Self {
        CompilationMetricsTable {
            rows: Rows::new(store),
            shared: Distinct::new(store),
            shared_raw: SeenTexts::new(store),
            ..CompilationMetricsTable::default()
        }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        if !METRICS_KINDS.contains(&ev.kind) {
            return;
        }
        let meta = ev.meta_members();
        let Some(members) = meta.object() else {
            diags.unusable(Self::NAME, ev, "metadata is not an object");
            return;
        };
        // Each field's value, parsed unless its raw text was shared before (a measure is always
        // read).
        let values: Vec<Read> = members.iter().map(|&(key, member)| self.read(key, member)).collect();
        let fields = || members.iter().zip(&values).filter_map(|(&(k, _), v)| Some((k, v.parsed()?)));
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
            members.iter().zip(&values).map(|(&(key, member), value)| (key, self.field(key, member, value))).collect(),
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
        self.rows.push_view(&row);
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
    fn a_large_raw_value_seen_before_is_shared_unparsed_even_after_others() {
        let mut table = CompilationMetricsTable::default();
        let raw = |c: char| format!("\"{}\"", c.to_string().repeat(SHARED_OVER + 1));
        let (a, b) = (raw('a'), raw('b'));
        // As `observe` reads a member and files it.
        let mut file = |key: &str, text: &str| {
            let read = table.read(key, Member::Raw(text));
            let unparsed = matches!(read, Read::SharedBefore(_));
            let shared = match table.field(key, Member::Raw(text), &read) {
                Field::Shared { shared } => shared,
                Field::Logged(value) => panic!("{key}: {value} not shared"),
            };
            (shared, unparsed)
        };
        assert_eq!(file("config", &a), (0, false));
        assert_eq!(file("config", &b), (1, false));
        // `a` again after `b`: found among the texts seen, so not parsed.
        assert_eq!(file("config", &a), (0, true));
        // And again.
        assert_eq!(file("config", &a), (0, true));
        // Another field's value: the same id, as the shared values do not depend on fields.
        assert_eq!(file("other_config", &b), (1, true));
        // A measure is always read.
        assert_eq!(file("odd_time_s", &a), (0, false));
        assert_eq!(file("odd_time_s", &a), (0, false));
        assert_eq!(table.shared.len(), 2);
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
