//! Turns one raw record into a typed entry: glog prefix, JSON envelope split into kind, metadata,
//! compile id and context, payload hashed (blake3), md5-checked and format-detected. Pure and
//! independent per record, so it runs in parallel.

use md5::{Digest, Md5};
use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::checked_members::{CheckedMember, checked_object_members};
use super::glog;
use super::json_text::{self, Refused};
use super::records::{MAX_STORED, RawPayload, RawRecord, Spilled};
use crate::schema::{CompileId, DiagnosticKind, PayloadFormat};

/// Envelope keys that give context rather than the entry's kind.
const STRUCTURAL_KEYS: [&str; 7] =
    ["rank", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "has_payload", "stack"];

/// Kinds whose metadata `name` names the entry (shown as `artifact:NAME` in counts).
pub const NAMED_KINDS: [&str; 5] = ["artifact", "graph_dump", "link", "dump_file", "optimize_ddp_split_child"];

/// Kinds whose payload is Python source (FX graphs and generated code). Not `graph_dump`: its
/// dumps are AOT Inductor's C++ wrapper, kernel and header code.
const PYTHON_KINDS: [&str; 13] = [
    "dynamo_output_graph",
    "optimize_ddp_split_graph",
    "optimize_ddp_split_child",
    "compiled_autograd_graph",
    "aot_forward_graph",
    "aot_backward_graph",
    "aot_inference_graph",
    "aot_joint_graph",
    "inductor_pre_grad_graph",
    "inductor_post_grad_graph",
    "inductor_output_code",
    "dump_file",
    "exported_program",
];

/// A parsed log entry, before process-level context (string table, rank routing) is applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Line number of the header.
    pub line: u64,
    /// Last line of the entry (the header's line when there is no payload).
    pub end_line: u64,
    /// Length of the header line in bytes, without its line ending.
    pub header_bytes: u64,
    pub level: char,
    pub timestamp: String,
    pub pid: u64,
    pub source: String,
    /// The envelope's non-structural key.
    pub kind: String,
    /// The kind's value (null when it is kept in `meta_text`).
    pub meta: Meta,
    /// The metadata's raw JSON text, when the bundle cannot hold it as JSON (nested too deep, or
    /// a number beyond a float); a diagnostic says which.
    pub meta_text: Option<String>,
    pub name: Option<String>,
    pub compile_id: Option<CompileId>,
    pub rank: Option<u32>,
    /// The envelope-level `stack`, unresolved.
    pub stack: Option<Value>,
    /// Other non-structural keys after the kind.
    pub extra: Map<String, Value>,
    pub payload: Option<Payload>,
    /// Problems found in this entry; the entry is kept regardless.
    pub problems: Vec<(DiagnosticKind, String)>,
    /// The header line's bytes (with a `\n`) when they are not valid UTF-8: the row holds them
    /// with U+FFFD, the `invalid_utf8` diagnostic keeps these.
    pub raw_header: Option<Vec<u8>>,
}

/// An entry's metadata: parsed when the parser needed to look inside it, else the raw JSON
/// text as logged (written to the index verbatim).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Meta {
    Value(Value),
    Raw(Box<RawValue>),
}

impl Meta {
    /// A top-level field, when the metadata was parsed.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Meta::Value(v) => v.get(key),
            Meta::Raw(_) => None,
        }
    }

    /// The metadata as a JSON value (parsing raw text).
    pub fn to_value(&self) -> Value {
        match self {
            Meta::Value(v) => v.clone(),
            Meta::Raw(r) => serde_json::from_str(r.get()).unwrap_or_default(),
        }
    }
}

impl PartialEq for Meta {
    fn eq(&self, other: &Self) -> bool {
        self.to_value() == other.to_value()
    }
}

/// A JSON object's members in order (duplicates kept), values left as raw JSON text: the
/// envelope's fields, or an event's, read without building values nobody looks inside. Keys
/// borrow from the text unless they contain escapes.
pub struct Fields<'a>(pub Vec<(Cow<'a, str>, &'a RawValue)>);

/// An object key, borrowed from the text unless it holds escapes (serde's own `Cow` impl always
/// copies).
pub struct Key<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for KeyVisit<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(KeyVisit(std::marker::PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Fields<'a>, A::Error> {
                // An envelope has about seven members: room for them without regrowing.
                let mut fields = Vec::with_capacity(8);
                while let Some((Key(key), value)) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                    fields.push((key, value));
                }
                Ok(Fields(fields))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// The envelope's context keys in log order, a later duplicate replacing the earlier value (as
/// a JSON map would). A handful of keys: a list beats hashing them.
/// Keys borrow from the envelope's text, as [`Fields`] read them.
#[derive(Default)]
struct Envelope<'a>(Vec<(Cow<'a, str>, Value)>);

impl<'a> Envelope<'a> {
    fn insert(&mut self, key: Cow<'a, str>, value: Value) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }
}

/// A member's value in an envelope, as logged: JSON text proven well-formed (by
/// [`envelope_members`]), with no whitespace around it.
#[derive(Clone, Copy)]
struct WellFormed<'a> {
    text: &'a str,
    /// Known to pass `json_text::check` (else: not known either way).
    checked: bool,
}

impl WellFormed<'_> {
    fn get(&self) -> &str {
        self.text
    }

    /// [`json_text::check`] of the text, unless the envelope's reading already found it holds.
    fn check(&self) -> Result<(), Refused> {
        if self.checked { Ok(()) } else { json_text::check(self.text.as_bytes()) }
    }

    /// The text as a raw JSON value, copied without parsing it again.
    fn to_raw_value(self) -> Box<RawValue> {
        // SAFETY: a `WellFormed` is made only by `envelope_members`, from a member's value that
        // serde_json or `checked_object_members` read as one well-formed JSON value, without the
        // whitespace around it.
        unsafe { RawValue::from_string_unchecked(self.text.to_string()) }
    }
}

/// An envelope's members, each value as its text: read in the one pass of
/// [`checked_object_members`], or by serde_json where that pass does not answer (a key with an
/// escape, text that is no JSON object: then serde_json's error says what is wrong).
fn envelope_members<'a>(text: &'a str) -> Result<Vec<(Cow<'a, str>, WellFormed<'a>)>, serde_json::Error> {
    if let Some(members) = checked_object_members(text) {
        let read =
            |m: CheckedMember<'a>| (Cow::Borrowed(m.key), WellFormed { text: m.value, checked: m.holds_as_json });
        return Ok(members.into_iter().map(read).collect());
    }
    let Fields(fields) = serde_json::from_str(text)?;
    Ok(fields.into_iter().map(|(key, value)| (key, WellFormed { text: value.get(), checked: false })).collect())
}

/// A context value (`json_text::parse` builds the nulls, small integers and plain strings
/// envelopes are made of without a parser). A value the bundle cannot hold as JSON (nested too
/// deep, a number beyond a float) is kept as a string of its text, noted in `problems`.
fn context_value(key: &str, raw: WellFormed, problems: &mut Vec<(DiagnosticKind, String)>) -> Value {
    let text = raw.get();
    let value = json_text::parse(text).unwrap_or_else(|refused: Refused| {
        let why = refused.describe(&format!("context value {key:?}"));
        problems.push((refused.kind(), format!("{why}: kept as a string of its text")));
        Value::String(text.to_string())
    });
    match value {
        Value::Number(n) if !n.is_u64() || key == "rank" => id_number(key, n, text, problems),
        value => value,
    }
}

/// The most a compile-id part (`frame_id`, ...) may be; a `rank` must fit 32 bits.
fn id_range(key: &str) -> Option<u64> {
    match key {
        "rank" => Some(u32::MAX.into()),
        "compiled_autograd_id" | "frame_id" | "frame_compile_id" | "attempt" => Some(u64::MAX),
        _ => None,
    }
}

/// A number given as a rank or a compile-id part: one that is not an integer of its range
/// (-1, 2^32 for a rank, 1.5, 2^64) is not used as one, said in `problems`, and kept as extra
/// context exactly as logged (as text when a number would round it).
fn id_number(key: &str, n: serde_json::Number, text: &str, problems: &mut Vec<(DiagnosticKind, String)>) -> Value {
    let Some(max) = id_range(key) else { return Value::Number(n) };
    if n.as_u64().is_some_and(|v| v <= max) {
        return Value::Number(n);
    }
    let text = text.trim();
    problems.push((
        DiagnosticKind::OutOfRange,
        format!("{key} is {text}, not an integer from 0 to {max}: not used as one, kept as extra context"),
    ));
    if n.to_string() == text { Value::Number(n) } else { Value::String(text.to_string()) }
}

/// Finds a `"filename"` key, made once: every entry's metadata is searched for one
/// (`str::contains` builds its searcher anew at each call).
static FILENAME_KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"filename\""));

/// The kind's metadata: parsed when the parser needs to look inside (string table, stacks,
/// names), else kept as its text. Text the bundle cannot hold as JSON (a raw value is not
/// checked for depth nor number range) is kept in `meta_text` instead, the metadata null, noted
/// in `problems`.
fn read_meta(kind: &str, raw: WellFormed, problems: &mut Vec<(DiagnosticKind, String)>) -> (Meta, Option<String>) {
    let text = raw.get();
    let needs_parsing = kind == "str" || NAMED_KINDS.contains(&kind) || FILENAME_KEY.find(text.as_bytes()).is_some();
    let read = if needs_parsing {
        json_text::parse(text).map(Meta::Value)
    } else {
        raw.check().map(|()| Meta::Raw(raw.to_raw_value()))
    };
    match read {
        Ok(meta) => (meta, None),
        Err(refused) => {
            problems.push((refused.kind(), format!("{}: kept as text in meta_text", refused.describe("metadata"))));
            (Meta::Value(Value::Null), Some(text.to_string()))
        }
    }
}

/// A payload and what was learned about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    /// The bytes; empty when the payload was too long to hold and went to the blob store as it
    /// was read (`spilled`).
    pub bytes: Vec<u8>,
    /// Where a payload too long to hold went, unread by the tables.
    pub spilled: Option<Spilled>,
    /// The blob id: [`blob_id`] of the bytes.
    pub hash: BlobId,
    pub lines: u64,
    pub format: PayloadFormat,
    pub md5_mismatch: bool,
    /// A `chromium_event` payload read as a trace event (which also proved it JSON).
    pub trace: Option<Box<super::TraceEvent>>,
}

impl Payload {
    /// Size of the payload's blob: its bytes, or what the blob store keeps of a spilled one.
    pub fn size(&self) -> u64 {
        self.spilled.as_ref().map_or(self.bytes.len() as u64, |s| s.stored)
    }
}

/// A record that could not be read as an entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable {
    pub kind: DiagnosticKind,
    pub line: u64,
    pub end_line: u64,
    /// The process, when the glog prefix could be read.
    pub pid: Option<u64>,
    pub message: String,
    /// The raw text of the lines (empty when `spilled`).
    pub raw: Vec<u8>,
    /// A line too long to hold, streamed to the blob store.
    pub spilled: Option<Spilled>,
}

/// What one raw record became.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    Entry(Box<Entry>),
    Unreadable(Unreadable),
}

/// Rebuilds the raw text of an entry record (for diagnostics that keep it).
fn raw_text(header: &[u8], payload: Option<&[u8]>) -> Vec<u8> {
    let mut raw = header.to_vec();
    raw.push(b'\n');
    if let Some(p) = payload {
        for line in p.split(|&b| b == b'\n') {
            raw.push(b'\t');
            raw.extend_from_slice(line);
            raw.push(b'\n');
        }
    }
    raw
}

/// Parses one record.
pub fn parse_record(record: RawRecord) -> Parsed {
    parse_record_with_md5(record, None)
}

/// [`parse_record`], given the md5 of the record's held payload when it was computed already
/// (a batch's payloads are hashed together, see [`super::md5_lanes`]).
pub fn parse_record_with_md5(record: RawRecord, held_md5: Option<[u8; 16]>) -> Parsed {
    let (line, header, payload, payload_lines) = match record {
        RawRecord::Stray { line, end_line, raw, after_payload } => {
            let lines = end_line - line + 1;
            let mut message = if lines == 1 {
                "line is not a glog-prefixed TORCH_TRACE entry".to_string()
            } else {
                format!("{lines} lines are not glog-prefixed TORCH_TRACE entries")
            };
            if after_payload {
                message.push_str(", right after an entry with a payload: payload lines that lost their leading tab?");
            }
            return Parsed::Unreadable(Unreadable {
                kind: DiagnosticKind::BadPrefix,
                line,
                end_line,
                pid: None,
                message,
                raw,
                spilled: None,
            });
        }
        RawRecord::LongLine { line, spilled } => return long_line(line, spilled),
        RawRecord::Entry { line, header, payload, payload_lines } => (line, header, payload, payload_lines),
    };
    let (payload, spilled) = match payload {
        Some(RawPayload::Spilled(s)) => (Some(Vec::new()), Some(s)),
        Some(RawPayload::Held(bytes)) => (Some(bytes), None),
        None => (None, None),
    };
    let end_line = line + payload_lines;
    let mut problems = Vec::new();
    let header_text = match std::str::from_utf8(&header) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => {
            problems.push((
                DiagnosticKind::InvalidUtf8,
                "header line is not valid UTF-8: the index holds it with U+FFFD, raw keeps its bytes".to_string(),
            ));
            String::from_utf8_lossy(&header)
        }
    };
    let invalid_utf8 = matches!(header_text, Cow::Owned(_));
    let unreadable = |kind, pid, mut message: String| {
        if let Some(s) = &spilled {
            message.push_str(&format!(" (its payload, {} bytes, is blob {})", s.stored, hex(&s.id)));
        }
        Parsed::Unreadable(Unreadable {
            kind,
            line,
            end_line,
            pid,
            message,
            raw: raw_text(&header, payload.as_deref().filter(|_| spilled.is_none())),
            spilled: spilled.clone(),
        })
    };
    let Some(prefix) = glog::parse_prefix(&header_text) else {
        return unreadable(DiagnosticKind::BadPrefix, None, "malformed glog prefix".to_string());
    };
    // Lone surrogates kept as text here reach every value, key and raw text taken from it.
    let envelope_text = json_text::escape_lone_surrogates_str(prefix.rest);
    let fields = match envelope_members(&envelope_text) {
        Ok(fields) => fields,
        Err(e) => {
            return unreadable(DiagnosticKind::BadJson, Some(prefix.pid), format!("envelope is not valid JSON: {e}"));
        }
    };

    // The kind is the first non-structural key. Its metadata stays raw JSON text unless we need
    // to look inside (string table, stacks, names): parsing and re-serializing big metadata such
    // as compilation_metrics would cost more than the rest of the row.
    let mut kind_meta = None;
    let mut envelope = Envelope::default();
    for (key, raw) in fields {
        if kind_meta.is_none() && !STRUCTURAL_KEYS.contains(&&*key) {
            kind_meta = Some((key.into_owned(), raw));
        } else {
            let value = context_value(&key, raw, &mut problems);
            envelope.insert(key, value);
        }
    }
    let (kind, meta, meta_text) = match kind_meta {
        Some((kind, raw)) => {
            let (meta, meta_text) = read_meta(&kind, raw, &mut problems);
            (kind, meta, meta_text)
        }
        None => ("(none)".to_string(), Meta::Value(Value::Null), None),
    };
    let compile_id = take_compile_id(&mut envelope);
    let rank = match envelope.get("rank") {
        // One out of range stays as extra context (`id_number` said so).
        Some(Value::Number(n)) if n.as_u64().is_some_and(|r| u32::try_from(r).is_ok()) => {
            let rank = n.as_u64().and_then(|r| u32::try_from(r).ok());
            envelope.remove("rank");
            rank
        }
        Some(Value::Null) => {
            envelope.remove("rank");
            None
        }
        _ => None,
    };
    let has_payload = envelope.remove("has_payload");
    // A stack kept as text (too deep to read) is no list of frames: it stays in the row as
    // extra context rather than being dropped.
    let stack = match envelope.remove("stack") {
        Some(Value::String(text)) => {
            envelope.insert(Cow::Borrowed("stack"), Value::String(text));
            None
        }
        stack => stack,
    };
    // Everything left (unknown context keys, structural keys with values of an unexpected type)
    // is kept as extra context, in log order.
    let extra: Map<String, Value> = if envelope.0.is_empty() {
        Map::new()
    } else {
        envelope.0.into_iter().map(|(k, v)| (k.into_owned(), v)).collect()
    };
    let name = if NAMED_KINDS.contains(&kind.as_str()) {
        // Metadata kept as text still names its artifact (unless the name is what is refused).
        let shallow = meta_text.as_deref().map(json_text::shallow_value);
        let logged_name = shallow.as_ref().map_or_else(|| meta.get("name"), |m| m.get("name"));
        logged_name.and_then(Value::as_str).map(str::to_string)
    } else {
        None
    };

    let declared_md5 = match &has_payload {
        Some(Value::String(s)) => match decode_md5(s) {
            Some(d) => Some(d),
            None => {
                problems.push((DiagnosticKind::BadMd5, format!("has_payload {s:?} is not an md5 hex digest")));
                None
            }
        },
        Some(Value::Null) | None => None,
        Some(other) => {
            problems.push((DiagnosticKind::BadMd5, format!("has_payload {other} is not an md5 hex digest")));
            None
        }
    };
    let payload = match (payload, &has_payload) {
        (None, None) => None,
        (bytes, declared) => {
            let mut bytes = bytes.unwrap_or_default();
            if declared.is_none() {
                problems.push((
                    DiagnosticKind::UndeclaredPayload,
                    format!("{payload_lines} payload line(s) follow a header with no has_payload"),
                ));
            }
            let md5_mismatch = match declared_md5 {
                Some(expected) => {
                    let mut actual: [u8; 16] = match &spilled {
                        Some(s) => s.md5.unwrap_or_default(),
                        None => held_md5.unwrap_or_else(|| Md5::digest(&bytes).into()),
                    };
                    if actual != expected && spilled.is_none() {
                        if let Some(restored) = with_carriage_returns(&bytes, &expected) {
                            bytes = restored;
                            actual = expected;
                        }
                    }
                    if actual != expected {
                        problems.push((
                            DiagnosticKind::Md5Mismatch,
                            format!("payload md5 {} does not match has_payload {}", hex(&actual), hex(&expected)),
                        ));
                    }
                    actual != expected
                }
                None => false,
            };
            if let Some(s) = &spilled {
                problems.push((DiagnosticKind::PayloadTooLarge, spilled_payload_message(s)));
                let encoding = meta.get("encoding").and_then(Value::as_str);
                let format = detect_format_of_head(&kind, name.as_deref(), encoding, &s.head);
                Some(Payload {
                    hash: s.id,
                    lines: payload_lines,
                    format,
                    md5_mismatch,
                    trace: None,
                    bytes,
                    spilled: spilled.clone(),
                })
            } else {
                // A trace event is read here, where parsing runs in parallel, rather than checked
                // for JSON here and parsed again by the analysis.
                let trace = (kind == "chromium_event")
                    .then(|| super::trace_event::read_trace_event(&bytes, &mut problems))
                    .flatten()
                    .map(Box::new);
                let format = if trace.is_some() {
                    PayloadFormat::Json
                } else {
                    let encoding = meta.get("encoding").and_then(Value::as_str);
                    detect_format(&kind, name.as_deref(), encoding, &bytes)
                };
                Some(Payload {
                    hash: blob_id(&bytes),
                    lines: payload_lines,
                    format,
                    md5_mismatch,
                    trace,
                    bytes,
                    spilled: None,
                })
            }
        }
    };

    Parsed::Entry(Box::new(Entry {
        line,
        end_line,
        header_bytes: header.len() as u64,
        level: prefix.level as char,
        timestamp: prefix.timestamp.to_string(),
        pid: prefix.pid,
        source: prefix.source.to_string(),
        kind,
        meta,
        meta_text,
        name,
        compile_id,
        rank,
        stack,
        extra,
        payload,
        problems,
        raw_header: invalid_utf8.then(|| [&header[..], b"\n"].concat()),
    }))
}

/// The problem of a payload too long to hold: stored (or its first part), not analysed.
fn spilled_payload_message(s: &Spilled) -> String {
    if s.stored < s.size {
        format!(
            "payload of {} bytes is longer than the line limit (--max-line-mb) and than the {MAX_STORED} bytes a \
             blob may hold: its first {} bytes are stored; not read by the analysis tables",
            s.size, s.stored
        )
    } else {
        format!(
            "payload of {} bytes is longer than the line limit (--max-line-mb): stored whole, not read by the \
             analysis tables",
            s.size
        )
    }
}

/// A header or stray line too long to hold: unreadable, its bytes stored (its process named when
/// its first bytes are a glog prefix).
fn long_line(line: u64, spilled: Spilled) -> Parsed {
    let head = String::from_utf8_lossy(&spilled.head);
    let pid = glog::parse_prefix(&head).map(|p| p.pid);
    let stored = if spilled.stored < spilled.size {
        format!("its first {} bytes are stored", spilled.stored)
    } else {
        "its bytes are stored".to_string()
    };
    Parsed::Unreadable(Unreadable {
        kind: DiagnosticKind::LineTooLong,
        line,
        end_line: line,
        pid,
        message: format!(
            "line of {} bytes is longer than the line limit (--max-line-mb): not parsed; {stored}",
            spilled.size
        ),
        raw: Vec::new(),
        spilled: Some(spilled),
    })
}

/// Blob ids are the format's: 128 bits of blake3, which make accidental collisions practically
/// impossible while keeping the ids, which are incompressible, at half the size of the full hash.
pub use tlparse_bundle::ids::{BlobId, blob_id, hex};

/// Removes the compile-id keys from the envelope; `None` when all of them are absent or null.
/// A key with a value that is not an unsigned integer is left in the envelope (and so kept as
/// extra context) rather than guessed at.
fn take_compile_id(envelope: &mut Envelope) -> Option<CompileId> {
    let mut take = |key: &str| match envelope.get(key) {
        Some(Value::Number(n)) if n.is_u64() => {
            let v = n.as_u64();
            envelope.remove(key);
            v
        }
        Some(Value::Null) => {
            envelope.remove(key);
            None
        }
        _ => None,
    };
    let id = CompileId {
        compiled_autograd_id: take("compiled_autograd_id"),
        frame_id: take("frame_id"),
        frame_compile_id: take("frame_compile_id"),
        attempt: take("attempt"),
    };
    (id.compiled_autograd_id.is_some() || id.frame_id.is_some() || id.frame_compile_id.is_some()).then_some(id)
}

/// The compile id as tlparse shows it: `[0/1]`, `[0/1_2]`, `[!0/1/2]`, `[!0/-/-]`. Written into
/// one string (every entry with a compile id has its row show it).
pub fn display_compile_id(id: &CompileId) -> String {
    use std::fmt::Write;
    let part = |s: &mut String, v: Option<u64>| match v {
        Some(v) => write!(s, "{v}").expect("writing to a string"),
        None => s.push('-'),
    };
    let mut s = String::with_capacity(16);
    s.push('[');
    if let Some(ca) = id.compiled_autograd_id {
        write!(s, "!{ca}/").expect("writing to a string");
    }
    part(&mut s, id.frame_id);
    s.push('/');
    part(&mut s, id.frame_compile_id);
    if let Some(attempt) = id.attempt.filter(|&a| a != 0) {
        write!(s, "_{attempt}").expect("writing to a string");
    }
    s.push(']');
    s
}

/// The payload with a `\r` ending each of its lines, when its md5 says that is what was logged
/// (with or without one ending its last line). Reading strips a `\r` before a line's `\n`, as a
/// CRLF log's line ending; a payload whose own text has CRLF line endings, logged to a LF log,
/// loses its `\r`s that way, and only its md5 tells the two apart.
fn with_carriage_returns(bytes: &[u8], expected: &[u8; 16]) -> Option<Vec<u8>> {
    let mut restored = Vec::with_capacity(bytes.len() + bytes.len() / 32 + 2);
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            restored.extend_from_slice(b"\r\n");
        }
        restored.extend_from_slice(line);
    }
    restored.push(b'\r');
    if Md5::digest(&restored)[..] == expected[..] {
        return Some(restored);
    }
    restored.pop();
    (Md5::digest(&restored)[..] == expected[..]).then_some(restored)
}

fn decode_md5(s: &str) -> Option<[u8; 16]> {
    let b = s.as_bytes();
    if b.len() != 32 {
        return None;
    }
    let nib = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = nib(b[2 * i])? << 4 | nib(b[2 * i + 1])?;
    }
    Some(out)
}

/// The format of a payload seen only by its first bytes: JSON when declared so or when it starts
/// like JSON (it cannot be checked whole), else as [`detect_format`] tells from the first line.
fn detect_format_of_head(kind: &str, name: Option<&str>, encoding: Option<&str>, head: &[u8]) -> PayloadFormat {
    let first = head.iter().find(|b| !b.is_ascii_whitespace());
    if encoding == Some("json") || matches!(first, Some(b'{' | b'[')) {
        return PayloadFormat::Json;
    }
    match detect_format(kind, name, encoding, head) {
        PayloadFormat::Json => PayloadFormat::Text,
        other => other,
    }
}

/// Detects a payload's format: JSON when it parses as JSON (whatever the declared encoding:
/// `recompile_reasons` declares json but may be a bare string, `torch._functorch.config` declares
/// string but is JSON), Python for graph and code kinds or Python-looking text, else text.
pub fn detect_format(kind: &str, name: Option<&str>, encoding: Option<&str>, bytes: &[u8]) -> PayloadFormat {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if (matches!(first, Some(b'{' | b'[')) || encoding == Some("json"))
        && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
    {
        return PayloadFormat::Json;
    }
    let python_name =
        name.is_some_and(|n| n == "fx_graph_runnable" || n.ends_with("_graph") || n.contains("output_code"));
    let first_line = bytes.split(|&b| b == b'\n').find(|l| !l.iter().all(u8::is_ascii_whitespace)).unwrap_or(&[]);
    let python_text = ["class ", "def ", "import ", "from ", "# AOT ID", "# kernel path"]
        .iter()
        .any(|p| first_line.starts_with(p.as_bytes()));
    if PYTHON_KINDS.contains(&kind) || python_name || python_text { PayloadFormat::Python } else { PayloadFormat::Text }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compile_ids_display_like_tlparse() {
        let id = |ca, f, c, a| CompileId { compiled_autograd_id: ca, frame_id: f, frame_compile_id: c, attempt: a };
        assert_eq!(display_compile_id(&id(None, Some(0), Some(1), Some(0))), "[0/1]");
        assert_eq!(display_compile_id(&id(None, Some(1), Some(0), Some(1))), "[1/0_1]");
        assert_eq!(display_compile_id(&id(Some(0), Some(2), Some(0), None)), "[!0/2/0]");
        assert_eq!(display_compile_id(&id(Some(0), None, None, Some(0))), "[!0/-/-]");
    }

    #[test]
    fn plain_strings_read_as_a_parser_would() {
        let texts = [r#""""#, r#""abc""#, "\"caf\u{e9}\"", r#""a\"b""#, r#""\u0041""#, "\"tab\there\"", "12", "null"];
        for text in texts {
            let parsed = json_text::parse(text).ok().and_then(|v| v.as_str().map(str::to_string));
            match json_text::plain_string(text) {
                Some(plain) => assert_eq!(Some(plain.to_string()), parsed, "{text:?}"),
                None => assert!(text.contains(['\\', '\t']) || !text.starts_with('"'), "{text:?}"),
            }
        }
        assert_eq!(json_text::plain_string(r#""abc""#), Some("abc"));
    }

    /// The entry of one header line without a payload.
    fn entry_of(envelope: &str) -> Entry {
        let header = format!("V0101 00:00:00.000000 7 a.py:1] {envelope}");
        let rec = RawRecord::Entry { line: 1, header: header.into_bytes(), payload: None, payload_lines: 0 };
        let Parsed::Entry(e) = parse_record(rec) else { panic!("{envelope}") };
        *e
    }

    #[test]
    fn ranks_and_compile_ids_out_of_range_are_said_and_kept_as_logged() {
        for (rank, kept) in [("-1", json!(-1)), ("4294967296", json!(4294967296u64)), ("1.5", json!(1.5))] {
            let e = entry_of(&format!(r#"{{"rank": {rank}, "dynamo_start": {{}}}}"#));
            assert_eq!(e.rank, None, "{rank}");
            assert_eq!(e.problems.len(), 1, "{rank}: {:?}", e.problems);
            assert_eq!(e.problems[0].0, DiagnosticKind::OutOfRange);
            assert!(e.problems[0].1.starts_with(&format!("rank is {rank}, not an integer from 0 to 4294967295")));
            assert_eq!(e.extra.get("rank"), Some(&kept), "{rank}");
        }
        let e = entry_of(r#"{"rank": 4294967295, "dynamo_start": {}}"#);
        assert_eq!((e.rank, e.problems.len()), (Some(u32::MAX), 0));
        // 2^64 would round to 18446744073709551616.0 as a float: kept as its text.
        let e = entry_of(r#"{"frame_id": 18446744073709551616, "frame_compile_id": 0, "dynamo_start": {}}"#);
        assert_eq!(e.problems.len(), 1, "{:?}", e.problems);
        assert_eq!(e.problems[0].0, DiagnosticKind::OutOfRange);
        assert_eq!(e.extra.get("frame_id"), Some(&json!("18446744073709551616")));
        assert_eq!(e.compile_id.map(|id| display_compile_id(&id)).as_deref(), Some("[-/0]"));
        let e = entry_of(r#"{"frame_id": 18446744073709551615, "frame_compile_id": 0, "dynamo_start": {}}"#);
        assert_eq!(e.problems, []);
        assert_eq!(e.compile_id.and_then(|id| id.frame_id), Some(u64::MAX));
    }

    /// A payload line that lost its tab ends the payload: the lines from it on are stray, said
    /// to follow a payload, and the entry's md5 does not match.
    #[test]
    fn lines_that_lost_their_tab_are_said_to_follow_a_payload() {
        let header = br#"V0101 00:00:00.000000 7 a.py:1] {"artifact": {"name": "x", "encoding": "string"}, "has_payload": "00000000000000000000000000000000"}"#;
        let log = [&header[..], b"\n\tone\ntwo\n\tthree\nnot a header either\n"].concat();
        let mut records = super::super::records::Records::new(&log[..]);
        let Parsed::Entry(e) = parse_record(records.next().unwrap().unwrap()) else { panic!() };
        assert_eq!(e.problems[0].0, DiagnosticKind::Md5Mismatch);
        let Parsed::Unreadable(u) = parse_record(records.next().unwrap().unwrap()) else { panic!() };
        assert_eq!((u.line, u.end_line), (3, 5));
        assert_eq!(
            u.message,
            "3 lines are not glog-prefixed TORCH_TRACE entries, right after an entry with a payload: payload lines that lost their leading tab?"
        );
        // The same when the first payload line lost its tab: the entry declares a payload.
        let log = [&header[..], b"\none\n\ttwo\n"].concat();
        let mut records = super::super::records::Records::new(&log[..]);
        records.next();
        let Parsed::Unreadable(u) = parse_record(records.next().unwrap().unwrap()) else { panic!() };
        assert!(u.message.ends_with("payload lines that lost their leading tab?"), "{}", u.message);
        // A stray line after an entry without payload lines is only stray.
        let log = [&br#"V0101 00:00:00.000000 7 a.py:1] {"str": ["a", 0]}"#[..], b"\nstray\n"].concat();
        let mut records = super::super::records::Records::new(&log[..]);
        records.next();
        let Parsed::Unreadable(u) = parse_record(records.next().unwrap().unwrap()) else { panic!() };
        assert_eq!(u.message, "line is not a glog-prefixed TORCH_TRACE entry");
    }

    /// A payload whose text has CRLF line endings, in a LF log: reading strips each line's `\r`
    /// as a line ending, and the md5 (taken over the text) gets them back.
    #[test]
    fn carriage_returns_the_md5_shows_belong_to_the_payload_are_kept() {
        for text in [&b"first\r\nsecond\r"[..], b"first\r\nsecond"] {
            let md5: String = Md5::digest(text).iter().map(|b| format!("{b:02x}")).collect();
            let header = format!(
                r#"V0101 00:00:00.000000 7 a.py:1] {{"artifact": {{"name": "x", "encoding": "string"}}, "has_payload": "{md5}"}}"#
            );
            let log =
                [header.as_bytes(), b"\n\tfirst\r\n\tsecond", if text.ends_with(b"\r") { b"\r\n" } else { b"\n" }]
                    .concat();
            let rec = super::super::records::Records::new(&log[..]).next().unwrap().unwrap();
            let Parsed::Entry(e) = parse_record(rec) else { panic!() };
            let p = e.payload.unwrap();
            assert_eq!(p.bytes, text, "{}", String::from_utf8_lossy(text).escape_debug());
            assert!(!p.md5_mismatch);
            assert_eq!(e.problems, []);
        }
        // Without the md5's word, a line's `\r` is a CRLF log's line ending.
        let header = br#"V0101 00:00:00.000000 7 a.py:1] {"artifact": {"name": "x", "encoding": "string"}, "has_payload": "00000000000000000000000000000000"}"#;
        let log = [&header[..], b"\r\n\tfirst\r\n\tsecond\r\n"].concat();
        let rec = super::super::records::Records::new(&log[..]).next().unwrap().unwrap();
        let Parsed::Entry(e) = parse_record(rec) else { panic!() };
        assert_eq!(e.payload.unwrap().bytes, b"first\nsecond");
    }

    #[test]
    fn md5_mismatch_is_reported_and_payload_kept() {
        let rec = RawRecord::Entry {
            line: 3,
            header: br#"V0101 00:00:00.000000 7 a.py:1] {"artifact": {"name": "x", "encoding": "json"}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "00000000000000000000000000000000"}"#.to_vec(),
            payload: Some(RawPayload::Held(b"{\"a\": 1}".to_vec())),
            payload_lines: 1,
        };
        let Parsed::Entry(e) = parse_record(rec) else { panic!() };
        let p = e.payload.unwrap();
        assert!(p.md5_mismatch);
        assert_eq!(p.format, PayloadFormat::Json);
        assert_eq!(e.name.as_deref(), Some("x"));
        assert_eq!(e.problems[0].0, DiagnosticKind::Md5Mismatch);
        assert_eq!(display_compile_id(&e.compile_id.unwrap()), "[0/0]");
    }
}
