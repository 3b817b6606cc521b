//! Tables in parts: how a table's JSON document is cut into parts that each pass its schema, and
//! how the parts read back as the one document they were cut from.
//!
//! A table is a JSON object. Each top-level member whose value is an array holds a slice of that
//! list in each part, and the list is the concatenation of the slices in part order; every other
//! member is repeated in every part. [`split`] cuts a document so; [`Joined`] reads parts back as
//! one document, a part at a time, so a reader parses a table of any size as a stream.

use std::io::{self, BufRead, BufReader, Read, Write};

/// How many bytes of JSON the writer puts in a part before it starts the next one (a single row
/// larger than that is a part of its own).
pub const PART_BYTES: u64 = 8 << 20;

/// Where a byte of a table's JSON stands, for the one question the cutting and the joining ask:
/// does it open, separate or close the elements of a top-level array?
#[derive(Debug, Default)]
struct Scanner {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The container opened at depth 1 (a top-level member's value) is an array.
    in_top_array: bool,
    /// Reading a top-level member's key, and the key's bytes so far.
    in_key: bool,
    key: Vec<u8>,
    /// At depth 1, the next string is a key (after `{` or `,`).
    expect_key: bool,
}

/// What a byte is to the top-level arrays.
#[derive(Debug, PartialEq, Eq)]
enum Mark {
    /// `[` opening the array value of the member [`Scanner::key`].
    ArrayOpen,
    /// `,` between two elements of a top-level array.
    ElementEnd,
    /// `]` closing a top-level array.
    ArrayClose,
    /// Any other byte of a top-level array's element.
    Element,
    /// Any other byte.
    Other,
}

impl Scanner {
    fn step(&mut self, b: u8) -> Mark {
        let in_array = self.in_top_array && self.depth >= 2;
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                self.in_key = false;
                return if in_array { Mark::Element } else { Mark::Other };
            }
            if self.in_key {
                self.key.push(b);
            }
            return if in_array { Mark::Element } else { Mark::Other };
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.in_key = true;
                    self.expect_key = false;
                    self.key.clear();
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_key = true;
                } else if self.depth == 2 {
                    self.in_top_array = b == b'[';
                    if self.in_top_array {
                        return Mark::ArrayOpen;
                    }
                }
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 1 && self.in_top_array {
                    self.in_top_array = false;
                    return Mark::ArrayClose;
                }
            }
            b',' if self.depth == 1 => self.expect_key = true,
            b',' if self.depth == 2 && self.in_top_array => return Mark::ElementEnd,
            _ => {}
        }
        if in_array { Mark::Element } else { Mark::Other }
    }

    /// How many of `buf`'s first bytes [`Scanner::step`] would mark [`Mark::Element`] and no
    /// byte after them could make anything else: the inside of a top-level array's element,
    /// read as `step` reads it but a string's text at a time, since rows are mostly strings.
    /// Stops before a `,`, `]` or `}` at the array's own depth; 0 outside a top-level array.
    fn skip_element(&mut self, buf: &[u8]) -> usize {
        if !(self.in_top_array && self.depth >= 2) {
            return 0;
        }
        let mut i = 0;
        while i < buf.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                let Some(k) = memchr::memchr2(b'"', b'\\', &buf[i..]) else { return buf.len() };
                i += k + 1;
                if buf[i - 1] == b'\\' {
                    self.escaped = true;
                } else {
                    self.in_string = false;
                }
                continue;
            }
            match buf[i] {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' | b',' if self.depth == 2 => return i,
                b'}' | b']' => self.depth -= 1,
                _ => {}
            }
            i += 1;
        }
        buf.len()
    }
}

/// A top-level member of a table document, in document order.
#[derive(Debug)]
enum Member {
    /// A member whose value is not an array: `"key":value`, as written; repeated in every part.
    Other(Vec<u8>),
    /// The key of a member whose value is an array: each part holds a slice of it.
    Array(Vec<u8>),
}

/// The top-level members of a table document, in document order: what every part repeats or
/// slices. Learnt by an [`OutlineWriter`].
#[derive(Debug, Default)]
pub struct Outline {
    members: Vec<Member>,
}

/// Learns a table's [`Outline`] from its JSON written through it.
#[derive(Default)]
pub struct OutlineWriter {
    outline: Outline,
    scan: Scanner,
    /// The member being read, from its key, when it is no array.
    member: Vec<u8>,
}

impl OutlineWriter {
    /// The outline learnt.
    pub fn finish(self) -> Outline {
        self.outline
    }

    fn step(&mut self, b: u8) {
        let depth = self.scan.depth;
        match self.scan.step(b) {
            Mark::ArrayOpen => {
                self.outline.members.push(Member::Array(self.scan.key.clone()));
                self.member.clear();
            }
            Mark::ElementEnd | Mark::ArrayClose | Mark::Element => {}
            Mark::Other => {
                // A member runs from its key to the `,` or `}` that ends it at depth 1.
                if depth == 1 && (b == b',' || b == b'}') {
                    if !self.member.is_empty() {
                        self.outline.members.push(Member::Other(std::mem::take(&mut self.member)));
                    }
                } else if depth >= 1 {
                    self.member.push(b);
                }
            }
        }
    }
}

impl Write for OutlineWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut at = 0;
        while at < buf.len() {
            // An element's bytes outline nothing.
            at += self.scan.skip_element(&buf[at..]);
            if let Some(&b) = buf.get(at) {
                self.step(b);
                at += 1;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Cuts a table's JSON written through it into parts of about `part_bytes` each, given the
/// table's [`Outline`], handing each part's JSON to `emit` in order ([`PartWriter::finish`] hands
/// the last).
pub struct PartWriter<'o, E> {
    outline: &'o Outline,
    scan: Scanner,
    cutter: Cutter<'o>,
    /// The member whose array is being read.
    array: usize,
    emit: E,
}

impl<'o, E: FnMut(&[u8]) -> io::Result<()>> PartWriter<'o, E> {
    pub fn new(outline: &'o Outline, part_bytes: u64, emit: E) -> Self {
        PartWriter { outline, scan: Scanner::default(), cutter: Cutter::new(outline, part_bytes), array: 0, emit }
    }

    /// Hands on the last part.
    pub fn finish(mut self) -> io::Result<()> {
        self.cutter.close_part(&mut self.emit)
    }

    fn step(&mut self, b: u8) -> io::Result<()> {
        match self.scan.step(b) {
            Mark::ArrayOpen => {
                let key = &self.scan.key;
                let at = self.outline.members.iter().position(|m| matches!(m, Member::Array(k) if k == key));
                self.array = at.unwrap_or(0);
            }
            Mark::Element => self.cutter.element.push(b),
            Mark::ElementEnd | Mark::ArrayClose => self.cutter.end_element(self.array, &mut self.emit)?,
            Mark::Other => {}
        }
        Ok(())
    }
}

impl<E: FnMut(&[u8]) -> io::Result<()>> Write for PartWriter<'_, E> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut at = 0;
        while at < buf.len() {
            let inside = self.scan.skip_element(&buf[at..]);
            self.cutter.element.extend_from_slice(&buf[at..at + inside]);
            at += inside;
            if let Some(&b) = buf.get(at) {
                self.step(b)?;
                at += 1;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Cuts a table's JSON (read twice: `open` gives it from its start) into parts of about
/// `part_bytes` each, handing each part's JSON to `emit` in order. A document that fits in one
/// part is handed on as it is.
pub fn split<R: Read>(
    mut open: impl FnMut() -> io::Result<R>,
    size: u64,
    part_bytes: u64,
    emit: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let mut emit = emit;
    if size <= part_bytes {
        let mut whole = Vec::with_capacity(size as usize);
        open()?.read_to_end(&mut whole)?;
        return emit(&whole);
    }
    let mut outline = OutlineWriter::default();
    io::copy(&mut open()?, &mut outline)?;
    let outline = outline.finish();
    let mut parts = PartWriter::new(&outline, part_bytes, emit);
    io::copy(&mut open()?, &mut parts)?;
    parts.finish()
}

/// Builds parts from elements as a [`PartWriter`] finds them. A part holds every member in document
/// order: the non-array ones as written, each array with the elements that fell in the part.
struct Cutter<'o> {
    outline: &'o Outline,
    part_bytes: u64,
    /// The part being filled: its JSON up to the member being written.
    part: Vec<u8>,
    /// The index in `outline.members` of the next member to write; the one before it is still
    /// open when `open` (an array taking elements).
    next: usize,
    open: bool,
    /// Elements in the open array, and in the whole part.
    in_array: u64,
    in_part: u64,
    /// The element being read.
    element: Vec<u8>,
}

impl<'o> Cutter<'o> {
    fn new(outline: &'o Outline, part_bytes: u64) -> Self {
        let mut c = Cutter {
            outline,
            part_bytes,
            // Room for a full part and the members it repeats: grown by doubling, a part just
            // over a power of two would hold twice its size.
            part: Vec::with_capacity(part_bytes.min(PART_BYTES) as usize + (64 << 10)),
            next: 0,
            open: false,
            in_array: 0,
            in_part: 0,
            element: Vec::new(),
        };
        c.start_part();
        c
    }

    fn start_part(&mut self) {
        self.part.clear();
        self.part.push(b'{');
        self.next = 0;
        self.open = false;
        self.in_array = 0;
        self.in_part = 0;
    }

    /// Adds the element just read to the array member `array`, first ending the part when it is
    /// full.
    fn end_element(&mut self, array: usize, emit: &mut impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        if self.element.iter().all(u8::is_ascii_whitespace) {
            self.element.clear();
            return Ok(());
        }
        if self.in_part > 0 && (self.part.len() + self.element.len()) as u64 > self.part_bytes {
            self.close_part(emit)?;
            self.start_part();
        }
        if !(self.open && self.next == array + 1) {
            self.write_members_before(array);
            self.separate();
            let key = self.array_key(array);
            write_key(&mut self.part, key);
            self.next = array + 1;
            self.open = true;
            self.in_array = 0;
        }
        if self.in_array > 0 {
            self.part.push(b',');
        }
        self.part.extend_from_slice(&self.element);
        self.in_array += 1;
        self.in_part += 1;
        self.element.clear();
        Ok(())
    }

    /// Closes the open array, then writes the members before `end` not yet written (arrays
    /// among them empty).
    fn write_members_before(&mut self, end: usize) {
        if self.open {
            self.part.push(b']');
            self.open = false;
        }
        while self.next < end {
            self.separate();
            match &self.outline.members[self.next] {
                Member::Other(member) => self.part.extend_from_slice(member),
                Member::Array(key) => {
                    write_key(&mut self.part, key);
                    self.part.push(b']');
                }
            }
            self.next += 1;
        }
    }

    fn separate(&mut self) {
        if !self.part.ends_with(b"{") {
            self.part.push(b',');
        }
    }

    fn array_key(&self, member: usize) -> &'o [u8] {
        match &self.outline.members[member] {
            Member::Array(key) => key,
            Member::Other(_) => unreachable!("elements are read only inside an array member"),
        }
    }

    /// Ends the part: the open array, every member after it, then `}`.
    fn close_part(&mut self, emit: &mut impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        self.write_members_before(self.outline.members.len());
        self.part.push(b'}');
        emit(&self.part)
    }
}

fn write_key(out: &mut Vec<u8>, key: &[u8]) {
    out.push(b'"');
    out.extend_from_slice(key);
    out.extend_from_slice(b"\":[");
}

/// A table's parts read as the one document they were cut from: part 0, each of its top-level
/// arrays followed by the same member's elements in the later parts. `open(k)` gives part `k`'s
/// JSON from its start; each later part is opened once for each array, and read only up to it.
pub struct Joined<R, F> {
    open: F,
    parts: usize,
    first: BufReader<R>,
    scan: Scanner,
    /// Bytes ready to hand out, and how many are handed out.
    out: Vec<u8>,
    at: usize,
    /// Whether the array being read from part 0 has an element so far.
    array_has_element: bool,
}

impl<R: Read, F: FnMut(usize) -> io::Result<R>> Joined<R, F> {
    pub fn new(mut open: F, parts: usize) -> io::Result<Self> {
        let first = BufReader::with_capacity(1 << 16, open(0)?);
        Ok(Joined { open, parts, first, scan: Scanner::default(), out: Vec::new(), at: 0, array_has_element: false })
    }

    /// Moves the next block of part 0 to `out`, with the later parts' elements before each `]`
    /// that closes a top-level array; `false` at the end of part 0.
    fn fill(&mut self) -> io::Result<bool> {
        self.out.clear();
        self.at = 0;
        let buf = self.first.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        if self.parts == 1 {
            // Nothing to join: part 0 is the document.
            self.out.extend_from_slice(buf);
            let used = buf.len();
            self.first.consume(used);
            return Ok(true);
        }
        let mut used = buf.len();
        let mut closed = None;
        for (i, &b) in buf.iter().enumerate() {
            match self.scan.step(b) {
                Mark::ArrayOpen => self.array_has_element = false,
                Mark::Element if !b.is_ascii_whitespace() => self.array_has_element = true,
                Mark::ArrayClose => {
                    // The rest of this block waits until the later parts' elements are out.
                    closed = Some(b);
                    used = i + 1;
                    break;
                }
                _ => {}
            }
            self.out.push(b);
        }
        self.first.consume(used);
        if let Some(b) = closed {
            let key = self.scan.key.clone();
            self.append_later_parts(&key)?;
            self.out.push(b);
        }
        Ok(true)
    }

    fn append_later_parts(&mut self, key: &[u8]) -> io::Result<()> {
        for k in 1..self.parts {
            let mut scan = Scanner::default();
            let mut inside = false;
            let mut found = false;
            let mut element_started = false;
            let part = (self.open)(k)?;
            let mut reader = BufReader::with_capacity(1 << 16, part);
            'part: loop {
                let buf = reader.fill_buf()?;
                if buf.is_empty() {
                    break;
                }
                let mut used = 0;
                for &b in buf {
                    used += 1;
                    match scan.step(b) {
                        Mark::ArrayOpen if scan.key == key => {
                            inside = true;
                            found = true;
                        }
                        Mark::ArrayClose if inside => {
                            break 'part;
                        }
                        Mark::Element | Mark::ElementEnd if inside => {
                            if !element_started {
                                if b.is_ascii_whitespace() {
                                    continue;
                                }
                                if self.array_has_element {
                                    self.out.push(b',');
                                }
                                element_started = true;
                                self.array_has_element = true;
                            }
                            self.out.push(b);
                        }
                        _ => {}
                    }
                }
                reader.consume(used);
            }
            if !found {
                let key = String::from_utf8_lossy(key);
                return Err(io::Error::new(io::ErrorKind::InvalidData, format!("part {k} has no list {key:?}")));
            }
        }
        Ok(())
    }
}

impl<R: Read, F: FnMut(usize) -> io::Result<R>> Read for Joined<R, F> {
    fn read(&mut self, dest: &mut [u8]) -> io::Result<usize> {
        while self.at == self.out.len() {
            if !self.fill()? {
                return Ok(0);
            }
        }
        let n = dest.len().min(self.out.len() - self.at);
        dest[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn parts_of(doc: &Value, part_bytes: u64) -> Vec<Vec<u8>> {
        parts_read_in_chunks(doc, part_bytes, usize::MAX)
    }

    /// Reads at most `chunk` bytes at a time, so the writers see a document cut anywhere (inside
    /// a string, between a `\\` and the byte it escapes).
    struct Chunked<'a>(&'a [u8], usize);

    impl Read for Chunked<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn parts_read_in_chunks(doc: &Value, part_bytes: u64, chunk: usize) -> Vec<Vec<u8>> {
        let bytes = serde_json::to_vec(doc).unwrap();
        let mut parts = Vec::new();
        split(
            || Ok(Chunked(&bytes[..], chunk)),
            bytes.len() as u64,
            part_bytes,
            |p| {
                parts.push(p.to_vec());
                Ok(())
            },
        )
        .unwrap();
        parts
    }

    fn joined(parts: &[Vec<u8>]) -> Value {
        serde_json::from_slice(&joined_bytes(parts)).unwrap()
    }

    fn joined_bytes(parts: &[Vec<u8>]) -> Vec<u8> {
        let mut reader = Joined::new(|k| Ok(&parts[k][..]), parts.len()).unwrap();
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn a_small_table_is_one_part_as_written() {
        let doc = json!({"rows": [1, 2, 3], "total": 3});
        let parts = parts_of(&doc, 1000);
        assert_eq!(parts, vec![serde_json::to_vec(&doc).unwrap()]);
    }

    #[test]
    fn parts_hold_slices_of_every_list_and_every_other_member() {
        let rows: Vec<Value> = (0..50).map(|i| json!({"id": i, "s": "x,]}[{\"", "n": [i, [i]]})).collect();
        let doc =
            json!({"a": rows, "summary": {"k": [1, 2], "t": "]"}, "b": [], "c": (0..30).collect::<Vec<_>>(), "n": 7});
        let parts = parts_of(&doc, 300);
        assert!(parts.len() > 5, "{}", parts.len());
        let mut a = Vec::new();
        let mut c = Vec::new();
        for p in &parts {
            let v: Value = serde_json::from_slice(p).unwrap();
            assert_eq!(v["summary"], doc["summary"]);
            assert_eq!(v["n"], 7);
            assert_eq!(v["b"], json!([]));
            a.extend(v["a"].as_array().unwrap().iter().cloned());
            c.extend(v["c"].as_array().unwrap().iter().cloned());
            // Past the limit by at most the members without their rows, unless one row fills the part.
            let rows = v["a"].as_array().unwrap().len() + v["c"].as_array().unwrap().len();
            let skeleton =
                serde_json::to_vec(&json!({"a": [], "b": [], "c": [], "n": 7, "summary": doc["summary"]})).unwrap();
            assert!(p.len() <= 300 + skeleton.len() || rows == 1, "{} bytes, {rows} rows", p.len());
            // Every member, in the document's order (serde_json keeps the order it reads).
            assert_eq!(
                v.as_object().unwrap().keys().collect::<Vec<_>>(),
                doc.as_object().unwrap().keys().collect::<Vec<_>>()
            );
        }
        assert_eq!(Value::from(a), doc["a"]);
        assert_eq!(Value::from(c), doc["c"]);
        assert_eq!(
            joined_bytes(&parts),
            serde_json::to_vec(&doc).unwrap(),
            "joined, the parts are the document byte for byte"
        );
    }

    #[test]
    fn a_row_larger_than_a_part_is_a_part_of_its_own() {
        let doc = json!({"rows": ["x".repeat(500), "y", "z".repeat(500)]});
        let parts = parts_of(&doc, 100);
        assert_eq!(parts.len(), 3);
        assert_eq!(joined(&parts), doc);
    }

    #[test]
    fn joining_a_part_without_the_list_is_an_error() {
        let parts = [br#"{"rows":[1]}"#.to_vec(), br#"{"other":[2]}"#.to_vec()];
        let reader = Joined::new(|k| Ok(&parts[k][..]), 2).unwrap();
        let err = serde_json::from_reader::<_, Value>(reader).unwrap_err();
        assert!(err.to_string().contains("part 1 has no list"), "{err}");
    }

    proptest::proptest! {
        #[test]
        fn split_then_joined_is_the_document(rows in proptest::collection::vec(proptest::collection::vec(0u32..1000, 0..8), 0..60),
                                             more in proptest::collection::vec("[a-z\\]\\[{},\"\\\\]{0,12}", 0..40),
                                             part_bytes in 1u64..400,
                                             chunk in 1usize..20) {
            let doc = json!({"rows": rows, "n": rows.len(), "more": more, "meta": {"x": more.first()}});
            let parts = parts_read_in_chunks(&doc, part_bytes, chunk);
            proptest::prop_assert_eq!(&parts, &parts_of(&doc, part_bytes), "cut the same, however the JSON is read");
            for p in &parts {
                let v: Value = serde_json::from_slice(p).unwrap();
                proptest::prop_assert_eq!(&v["n"], &doc["n"]);
                proptest::prop_assert_eq!(&v["meta"], &doc["meta"]);
            }
            proptest::prop_assert_eq!(joined(&parts), doc.clone());
            proptest::prop_assert_eq!(joined_bytes(&parts), serde_json::to_vec(&doc).unwrap());
        }
    }
}
