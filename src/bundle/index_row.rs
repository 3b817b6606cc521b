//! An index row written as compact JSON by hand: the same bytes as `serde_json::to_writer`, with
//! its keys copied as they are and its strings copied whole when they need no escape. serde's
//! derived path escapes every key and string byte by byte, and rows are most of what a build
//! serializes (docs/perf-notes.md has the measurements that keep this file).

use serde::Serialize;

use crate::parse::{Meta, needs_escape};
use crate::schema::IndexRow;

/// Appends `row` to `out` as `serde_json::to_writer` would (debug builds check every row).
pub fn write_index_row(out: &mut Vec<u8>, row: &IndexRow<Meta>) -> serde_json::Result<()> {
    let start = out.len();
    let mut object = Object::open(out);
    if row.line != 0 {
        object.number("line", row.line);
    }
    object.string("ts", &row.ts);
    object.string("level", &row.level);
    object.string("src", &row.src);
    object.string("kind", &row.kind);
    if let Some(name) = &row.name {
        object.string("name", name);
    }
    if let Some(compile_id) = &row.compile_id {
        object.string("compile_id", compile_id);
    }
    if let Some(cid) = &row.cid {
        object.key("cid");
        let mut id = Object::open(object.out);
        id.optional_number("compiled_autograd_id", cid.compiled_autograd_id);
        id.optional_number("frame_id", cid.frame_id);
        id.optional_number("frame_compile_id", cid.frame_compile_id);
        id.optional_number("attempt", cid.attempt);
        id.close();
    }
    if let Some(rank) = row.rank {
        object.number("rank", rank.into());
    }
    match &row.meta {
        Meta::Raw(raw) => object.raw("meta", raw.get()),
        meta @ Meta::Value(_) => object.value("meta", meta)?,
    }
    if !row.meta_stacks.is_empty() {
        object.value("meta_stacks", &row.meta_stacks)?;
    }
    if let Some(meta_text) = &row.meta_text {
        object.string("meta_text", meta_text);
    }
    if let Some(stack) = row.stack {
        object.number("stack", stack.into());
    }
    if let Some(extra) = &row.extra {
        object.value("extra", extra)?;
    }
    if let Some(payload) = &row.payload {
        object.key("payload");
        let mut fields = Object::open(object.out);
        fields.string("hash", &payload.hash);
        fields.number("size", payload.size);
        fields.number("lines", payload.lines);
        fields.value("format", &payload.format)?;
        if payload.md5_mismatch {
            fields.raw("md5_mismatch", "true");
        }
        fields.close();
    }
    object.close();
    debug_assert_eq!(
        std::str::from_utf8(&out[start..]),
        std::str::from_utf8(&serde_json::to_vec(row)?),
        "an index row written by hand as serde_json writes it"
    );
    Ok(())
}

/// A JSON object being written, member by member.
struct Object<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl<'o> Object<'o> {
    fn open(out: &'o mut Vec<u8>) -> Self {
        out.push(b'{');
        Object { out, first: true }
    }

    fn close(self) {
        self.out.push(b'}');
    }

    /// Starts a member: `key` needs no escape (all of a row's keys are plain names).
    fn key(&mut self, key: &str) {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    fn string(&mut self, key: &str, value: &str) {
        self.key(key);
        json_string(self.out, value);
    }

    fn number(&mut self, key: &str, value: u64) {
        self.key(key);
        self.out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
    }

    /// A number, or `null` (serde writes an absent `Option` so unless told to skip it).
    fn optional_number(&mut self, key: &str, value: Option<u64>) {
        match value {
            Some(value) => self.number(key, value),
            None => self.raw(key, "null"),
        }
    }

    /// A member whose value is JSON text already.
    fn raw(&mut self, key: &str, json: &str) {
        self.key(key);
        self.out.extend_from_slice(json.as_bytes());
    }

    fn value(&mut self, key: &str, value: &impl Serialize) -> serde_json::Result<()> {
        self.key(key);
        serde_json::to_writer(&mut *self.out, value)
    }
}

/// Appends `s` as a JSON string, as serde_json writes it: copied whole unless it holds a byte
/// JSON escapes (found by the parser's block scan), which only serde_json's own escaping then
/// writes.
fn json_string(out: &mut Vec<u8>, s: &str) {
    if needs_escape(s.as_bytes()) {
        serde_json::to_writer(out, s).expect("a string serializes to memory");
        return;
    }
    out.reserve(s.len() + 2);
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{CompileId, PayloadFormat, PayloadRef};
    use proptest::prelude::*;

    /// Strings of every kind a log holds: plain text, quotes, backslashes, control characters and
    /// non-ASCII, short and long.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9_./:\\[\\] ]{0,40}",
            "[\\x00-\\x7f]{0,40}",
            any::<String>(),
            "[a-z]{0,20}[\"\\\\\\x01\\n\\t][a-z]{0,20}",
        ]
    }

    fn meta() -> impl Strategy<Value = Meta> {
        prop_oneof![
            text().prop_map(|t| Meta::Value(serde_json::json!({ "text": t, "n": 1 }))),
            text().prop_map(|t| Meta::Raw(serde_json::value::to_raw_value(&serde_json::json!({ "s": t })).unwrap())),
            Just(Meta::Raw(serde_json::value::RawValue::from_string("{\"a\": [1, 2]}".into()).unwrap())),
        ]
    }

    fn row() -> impl Strategy<Value = IndexRow<Meta>> {
        (
            (any::<u64>(), text(), text(), text(), text(), proptest::option::of(text())),
            (proptest::option::of(text()), proptest::option::of((any::<u64>(), any::<bool>())), any::<Option<u32>>()),
            (meta(), proptest::collection::vec(text(), 0..3), proptest::option::of(text()), any::<Option<u32>>()),
            (proptest::option::of(text()), proptest::option::of((text(), any::<u64>(), any::<bool>()))),
        )
            .prop_map(
                |(
                    (line, ts, level, src, kind, name),
                    (compile_id, cid, rank),
                    (meta, meta_stacks, meta_text, stack),
                    (extra, payload),
                )| {
                    IndexRow {
                        seq: 0,
                        line,
                        ts,
                        level,
                        src,
                        kind,
                        name,
                        compile_id,
                        cid: cid.map(|(frame, ca)| CompileId {
                            compiled_autograd_id: ca.then_some(frame / 2),
                            frame_id: Some(frame),
                            frame_compile_id: None,
                            attempt: Some(0),
                        }),
                        rank,
                        meta,
                        stack,
                        meta_stacks,
                        meta_text,
                        extra: extra.map(|t| serde_json::Map::from_iter([(t.clone(), serde_json::Value::String(t))])),
                        payload: payload.map(|(hash, size, md5_mismatch)| PayloadRef {
                            hash,
                            size,
                            lines: size / 3,
                            format: PayloadFormat::Json,
                            md5_mismatch,
                        }),
                    }
                },
            )
    }

    proptest! {
        /// What was checked: the row written by hand is serde_json's, byte for byte, whichever
        /// fields are present and whatever their strings hold (the line left out when 0).
        #[test]
        fn rows_are_written_as_serde_json_writes_them(row in row()) {
            let mut written = b"before".to_vec();
            write_index_row(&mut written, &row).unwrap();
            prop_assert_eq!(&written[..6], b"before");
            prop_assert_eq!(String::from_utf8(written[6..].to_vec()).unwrap(), serde_json::to_string(&row).unwrap());
        }

        #[test]
        fn strings_are_written_as_serde_json_writes_them(s in text()) {
            let mut written = Vec::new();
            json_string(&mut written, &s);
            prop_assert_eq!(String::from_utf8(written).unwrap(), serde_json::to_string(&s).unwrap());
        }
    }

    #[test]
    fn every_escaped_byte_is_found_wherever_it_sits() {
        // Past one block of the scan (64 bytes) and into a second, short one.
        for at in 0..100 {
            for byte in (0u8..0x20).chain(*b"\"\\") {
                let mut bytes = vec![b'a'; 100];
                bytes[at] = byte;
                assert!(needs_escape(&bytes), "byte {byte:#x} at {at}");
            }
        }
        assert!(!needs_escape("plain text, é and \u{7f} need none".as_bytes()));
    }
}
