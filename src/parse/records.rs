//! Splits a log's lines into records: a header line with the tab-indented payload lines that
//! follow it, or a run of lines that belong to no header. Cheap and sequential; the expensive
//! per-record work happens later, in parallel.
//!
//! Memory is bounded by the line limit, whatever the input: a header or stray line longer than
//! it, or a payload that grows past it, is streamed to a [`Spill`] (the blob store) as it is read,
//! hashed on the way, and never held whole.

use std::io::{self, BufRead};

use md5::{Digest, Md5};

use super::entry::BlobId;

/// The most bytes of one blob a bundle stores: what readers accept as one decompressed pack
/// (`tlparse_bundle::reader::Limits::pack`). The bytes of a longer line or payload past it are
/// hashed and counted, not stored.
pub const MAX_STORED: u64 = 512 << 20;

/// Bytes of a spilled line or payload kept in memory, to tell its format and name its process.
const HEAD: usize = 4096;

/// Where the bytes of a line or payload too long to hold go, as they are read: the blob store.
/// The parser does no I/O; the bundle writer implements this.
pub trait Spill: Send {
    /// Starts a blob.
    fn begin(&mut self) -> io::Result<()>;
    /// Appends bytes to the blob begun last.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Ends the blob begun last; `id` is the blob id of all the bytes written. Returns a token
    /// the writer finds the stored blob by.
    fn end(&mut self, id: BlobId) -> io::Result<u64>;
}

/// A line or payload streamed to a [`Spill`] rather than held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spilled {
    /// Blob id of the stored bytes.
    pub id: BlobId,
    /// Bytes of the line or payload (without line endings; payload lines without their tabs).
    pub size: u64,
    /// Bytes stored: `size`, or the first [`MAX_STORED`].
    pub stored: u64,
    /// md5 of all `size` bytes of a payload, checked against its `has_payload` (`None` for a
    /// line).
    pub md5: Option<[u8; 16]>,
    /// The first bytes.
    pub head: Vec<u8>,
    /// The [`Spill`]'s token for the stored blob.
    pub token: u64,
}

/// The payload lines of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawPayload {
    /// Held in memory: the lines without their tabs and line endings, joined with `\n`.
    Held(Vec<u8>),
    /// Longer than the line limit: streamed to the blob store.
    Spilled(Spilled),
}

/// A group of consecutive input lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawRecord {
    /// A header line (glog-shaped) and its payload lines.
    Entry {
        /// Line number (from 1) of the header.
        line: u64,
        /// The header line without its line ending.
        header: Vec<u8>,
        /// The payload; `None` when no payload line followed the header.
        payload: Option<RawPayload>,
        /// Number of payload lines.
        payload_lines: u64,
    },
    /// Consecutive lines that are neither a header nor a payload line following one (a run is
    /// cut where it would grow past the line limit).
    Stray {
        /// First line number (from 1).
        line: u64,
        /// Last line number.
        end_line: u64,
        /// The lines, each with a `\n` after it.
        raw: Vec<u8>,
        /// Whether the run comes right after an entry's payload lines (or an entry that declares a
        /// payload), where payload lines that lost their leading tab would be.
        after_payload: bool,
    },
    /// A header or stray line longer than the line limit, streamed to the blob store.
    LongLine {
        /// Line number (from 1).
        line: u64,
        spilled: Spilled,
    },
}

impl RawRecord {
    /// The bytes of input this record holds in memory, for batching.
    pub fn weight(&self) -> usize {
        match self {
            RawRecord::Entry { header, payload, .. } => {
                header.len()
                    + match payload {
                        Some(RawPayload::Held(p)) => p.len(),
                        Some(RawPayload::Spilled(s)) => s.head.len(),
                        None => 0,
                    }
            }
            RawRecord::Stray { raw, .. } => raw.len(),
            RawRecord::LongLine { spilled, .. } => spilled.head.len(),
        }
    }

    /// The payload of an entry, when it is held in memory (not streamed to a spill).
    pub fn held_payload(&self) -> Option<&[u8]> {
        match self {
            RawRecord::Entry { payload: Some(RawPayload::Held(bytes)), .. } => Some(bytes),
            _ => None,
        }
    }
}

/// A line as read: held, or streamed away for being too long.
enum Line {
    Held(Vec<u8>),
    Long(Spilled),
}

/// Iterator over the records of a log.
pub struct Records<R> {
    reader: R,
    line_no: u64,
    /// A line read ahead that starts the next record.
    pending: Option<Line>,
    /// Whether the last record read was an entry with payload lines or one that declares a payload.
    after_payload: bool,
    /// Where the payload lines found in the reader's buffer end (reused).
    line_ends: Vec<usize>,
    /// Bytes read so far (decompressed), for counts.
    pub bytes_read: u64,
    /// The most bytes of a line, a stray run or a payload held in memory.
    max_line: usize,
    /// Where longer ones go; without one, nothing is too long.
    spill: Option<Box<dyn Spill>>,
}

impl<R: BufRead> Records<R> {
    /// Records held whole in memory, however long (for tests and small inputs).
    pub fn new(reader: R) -> Self {
        Records {
            reader,
            line_no: 0,
            pending: None,
            after_payload: false,
            line_ends: Vec::new(),
            bytes_read: 0,
            max_line: usize::MAX,
            spill: None,
        }
    }

    /// Records holding at most `max_line` bytes of a line or payload; longer ones stream to
    /// `spill`.
    pub fn with_spill(reader: R, max_line: usize, spill: Box<dyn Spill>) -> Self {
        Records { max_line: max_line.max(1), spill: Some(spill), ..Records::new(reader) }
    }

    /// Number of lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.line_no
    }

    /// Reads one line without its `\n` (and a `\r` before it); `None` at end of input. A line
    /// longer than the limit is streamed to the spill.
    fn read_line(&mut self) -> io::Result<Option<Line>> {
        let mut line = Vec::new();
        let (n, complete) = read_until_newline(&mut self.reader, &mut line, self.max_line)?;
        if n == 0 {
            return Ok(None);
        }
        self.bytes_read += n as u64;
        self.line_no += 1;
        if !complete && self.spill.is_some() {
            let mut stream = Streaming::begin(self.spill.as_deref_mut().expect("checked"), false)?;
            stream.content(&line)?;
            drop(line);
            let (spilled, read) = stream.rest_of_line(&mut self.reader)?;
            self.bytes_read += read;
            return Ok(Some(Line::Long(spilled)));
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(Some(Line::Held(line)))
    }

    /// Reads the payload lines (tab-indented) that follow a header, without their tabs and line
    /// endings, joined with `\n`. The lines that sit whole in the reader's buffer (nearly all:
    /// it holds 1 MiB) are measured first and copied once into a buffer of the right size. A
    /// payload growing past the line limit goes on streaming to the spill.
    fn read_payload(&mut self) -> io::Result<(Option<RawPayload>, u64)> {
        let mut payload: Option<Vec<u8>> = None;
        let mut lines = 0;
        loop {
            if payload.as_ref().is_some_and(|p| p.len() > self.max_line) && self.spill.is_some() {
                let held = payload.take().expect("checked");
                return self.stream_payload(held, lines, true);
            }
            let buf = self.reader.fill_buf()?;
            if buf.first() != Some(&b'\t') {
                return Ok((payload.map(RawPayload::Held), lines));
            }
            // Whole payload lines in the buffer: where each ends, and their total length.
            self.line_ends.clear();
            let (mut end, mut len) = (0, 0);
            while buf.get(end) == Some(&b'\t') {
                let Some(nl) = memchr::memchr(b'\n', &buf[end..]) else { break };
                len += trim_cr(&buf[end + 1..end + nl]).len() + 1;
                end += nl + 1;
                self.line_ends.push(end);
            }
            let p = payload.get_or_insert_with(Vec::new);
            if self.line_ends.is_empty() {
                // A line running past the buffer (or the input's last line, unterminated).
                self.reader.consume(1);
                if lines > 0 {
                    p.push(b'\n');
                }
                let start = p.len();
                // At least a byte, even when the payload already reached the limit.
                let cap = self.max_line.max(p.len() + 1);
                let (n, complete) = read_until_newline(&mut self.reader, p, cap)?;
                self.bytes_read += n as u64 + 1;
                self.line_no += 1;
                lines += 1;
                if !complete && self.spill.is_some() {
                    // Too long to hold: stream this line's rest and the lines after it.
                    let held = payload.take().expect("set above");
                    return self.stream_payload(held, lines, false);
                }
                // Strip the line ending, never the `\n` joining this line to the previous one.
                if p.len() > start && p.last() == Some(&b'\n') {
                    p.pop();
                }
                if p.len() > start && p.last() == Some(&b'\r') {
                    p.pop();
                }
                continue;
            }
            p.reserve_exact(len);
            let mut start = 0;
            for &line_end in &self.line_ends {
                if lines > 0 {
                    p.push(b'\n');
                }
                p.extend_from_slice(trim_cr(&buf[start + 1..line_end - 1]));
                start = line_end;
                lines += 1;
            }
            self.reader.consume(end);
            self.bytes_read += end as u64;
            self.line_no += self.line_ends.len() as u64;
        }
    }

    /// Streams a payload to the spill: `held` (the payload so far), then the rest of the current
    /// line unless `at_line_end`, then every payload line after it.
    fn stream_payload(
        &mut self,
        held: Vec<u8>,
        mut lines: u64,
        at_line_end: bool,
    ) -> io::Result<(Option<RawPayload>, u64)> {
        let mut stream = Streaming::begin(self.spill.as_deref_mut().expect("callers check"), true)?;
        if at_line_end {
            // Whole lines, their endings already stripped: a final `\r` is content.
            stream.bytes(&held)?;
        } else {
            stream.content(&held)?;
        }
        drop(held);
        if !at_line_end {
            self.bytes_read += stream.through_line_end(&mut self.reader)?;
        }
        while self.reader.fill_buf()?.first() == Some(&b'\t') {
            self.reader.consume(1);
            self.line_no += 1;
            lines += 1;
            stream.joining_newline()?;
            self.bytes_read += 1 + stream.through_line_end(&mut self.reader)?;
        }
        Ok((Some(RawPayload::Spilled(stream.end()?)), lines))
    }

    fn next_line(&mut self) -> io::Result<Option<Line>> {
        match self.pending.take() {
            Some(line) => Ok(Some(line)),
            None => self.read_line(),
        }
    }

    /// Reads the next record.
    pub fn next_record(&mut self) -> io::Result<Option<RawRecord>> {
        let after_payload = std::mem::take(&mut self.after_payload);
        let Some(first) = self.next_line()? else { return Ok(None) };
        // A pending line is always the last one read, so its number is `line_no`.
        let line = self.line_no;
        let first = match first {
            Line::Long(spilled) => return Ok(Some(RawRecord::LongLine { line, spilled })),
            Line::Held(first) => first,
        };
        if super::glog::looks_like_header(&first) {
            let (payload, payload_lines) = self.read_payload()?;
            // Also when no payload line came: the first one may be the one that lost its tab.
            self.after_payload = payload.is_some() || memchr::memmem::find(&first, b"\"has_payload\"").is_some();
            return Ok(Some(RawRecord::Entry { line, header: first, payload, payload_lines }));
        }
        // A stray run: everything up to the next header, a long line, or the line limit.
        let start = line;
        let mut raw = first;
        raw.push(b'\n');
        let mut end_line = start;
        while let Some(next) = self.read_line()? {
            match next {
                Line::Held(next)
                    if !super::glog::looks_like_header(&next) && raw.len() + next.len() < self.max_line =>
                {
                    raw.extend_from_slice(&next);
                    raw.push(b'\n');
                    end_line = self.line_no;
                }
                next => {
                    self.pending = Some(next);
                    break;
                }
            }
        }
        Ok(Some(RawRecord::Stray { line: start, end_line, raw, after_payload }))
    }
}

/// A blob being streamed to a spill: hashed, counted, stored up to [`MAX_STORED`], with the
/// `\r` of a `\r\n` line ending held back until the next byte shows whether it is one.
struct Streaming<'s> {
    spill: &'s mut dyn Spill,
    blake3: blake3::Hasher,
    /// Payloads only: a line is never checked against an md5.
    md5: Option<Md5>,
    size: u64,
    head: Vec<u8>,
    held_cr: bool,
}

impl<'s> Streaming<'s> {
    fn begin(spill: &'s mut dyn Spill, payload: bool) -> io::Result<Self> {
        spill.begin()?;
        Ok(Streaming {
            spill,
            blake3: blake3::Hasher::new(),
            md5: payload.then(Md5::new),
            size: 0,
            head: Vec::new(),
            held_cr: false,
        })
    }

    /// Appends bytes of the blob as they are.
    fn bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        if let Some(md5) = &mut self.md5 {
            md5.update(bytes);
        }
        if self.head.len() < HEAD {
            let take = bytes.len().min(HEAD - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
        }
        let room = MAX_STORED.saturating_sub(self.size) as usize;
        let stored = &bytes[..bytes.len().min(room)];
        if !stored.is_empty() {
            self.blake3.update(stored);
            self.spill.write(stored)?;
        }
        self.size += bytes.len() as u64;
        Ok(())
    }

    /// Appends the content of a line (a piece of it), holding back a final `\r`.
    fn content(&mut self, piece: &[u8]) -> io::Result<()> {
        if piece.is_empty() {
            return Ok(());
        }
        if std::mem::take(&mut self.held_cr) {
            self.bytes(b"\r")?;
        }
        match piece.strip_suffix(b"\r") {
            Some(body) => {
                self.held_cr = true;
                self.bytes(body)
            }
            None => self.bytes(piece),
        }
    }

    /// The `\n` joining two payload lines (a held `\r` was the previous line's ending).
    fn joining_newline(&mut self) -> io::Result<()> {
        self.held_cr = false;
        self.bytes(b"\n")
    }

    /// Streams the current line up to and without its line ending; returns the bytes consumed.
    fn through_line_end(&mut self, reader: &mut impl BufRead) -> io::Result<u64> {
        let mut read = 0;
        loop {
            let buf = reader.fill_buf()?;
            if buf.is_empty() {
                return Ok(read);
            }
            let (take, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let piece = if done { &buf[..take - 1] } else { &buf[..take] };
            // `content` needs `&mut self` while `buf` borrows the reader: copy pieces out.
            let piece = piece.to_vec();
            reader.consume(take);
            read += take as u64;
            self.content(&piece)?;
            if done {
                return Ok(read);
            }
        }
    }

    /// Streams the rest of a long line and ends the blob; returns it and the bytes consumed.
    fn rest_of_line(mut self, reader: &mut impl BufRead) -> io::Result<(Spilled, u64)> {
        let read = self.through_line_end(reader)?;
        Ok((self.end()?, read))
    }

    /// Ends the blob (a held `\r` was a line ending: dropped).
    fn end(self) -> io::Result<Spilled> {
        let id = tlparse_bundle::ids::blob_id_of(&self.blake3);
        let token = self.spill.end(id)?;
        Ok(Spilled {
            id,
            size: self.size,
            stored: self.size.min(MAX_STORED),
            md5: self.md5.map(|m| m.finalize().into()),
            head: self.head,
            token,
        })
    }
}

/// `BufRead::read_until(b'\n')` with a vectorized search (the standard library's is bytewise,
/// slow on long lines), stopping once `out` holds `cap` bytes
/// (all of it, not just this line's).
/// Returns the bytes read and whether the line ended (`\n` or end of input).
fn read_until_newline(reader: &mut impl BufRead, out: &mut Vec<u8>, cap: usize) -> io::Result<(usize, bool)> {
    let mut read = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((read, true));
        }
        if out.len() >= cap {
            return Ok((read, false));
        }
        let room = cap - out.len();
        let (take, done) = match memchr::memchr(b'\n', &buf[..buf.len().min(room)]) {
            Some(i) => (i + 1, true),
            None => (buf.len().min(room), false),
        };
        out.extend_from_slice(&buf[..take]);
        reader.consume(take);
        read += take;
        if done {
            return Ok((read, true));
        }
    }
}

/// A line without the `\r` of a `\r\n` ending.
fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

impl<R: BufRead> Iterator for Records<R> {
    type Item = io::Result<RawRecord>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str) -> Vec<RawRecord> {
        Records::new(text.as_bytes()).collect::<io::Result<_>>().unwrap()
    }

    #[test]
    fn groups_payload_lines_with_their_header_and_numbers_lines() {
        let text = "V0101 00:00:00.000000 1 a.py:1] {\"x\": {}}\n\tp1\n\tp2\nV0101 00:00:00.000000 1 a.py:2] {\"y\": {}}\r\ngarbage\n\torphan\nV0101 00:00:01.000000 1 a.py:3] {\"z\": {}}";
        let got = records(text);
        assert_eq!(got.len(), 4);
        assert_eq!(
            got[0],
            RawRecord::Entry {
                line: 1,
                header: b"V0101 00:00:00.000000 1 a.py:1] {\"x\": {}}".to_vec(),
                payload: Some(RawPayload::Held(b"p1\np2".to_vec())),
                payload_lines: 2
            }
        );
        assert!(matches!(&got[1], RawRecord::Entry { line: 4, payload: None, .. }));
        let raw = b"garbage\n\torphan\n".to_vec();
        assert_eq!(got[2], RawRecord::Stray { line: 5, end_line: 6, raw, after_payload: false });
        assert!(matches!(&got[3], RawRecord::Entry { line: 7, payload: None, .. }));
    }

    #[test]
    fn records_do_not_depend_on_where_the_read_buffer_ends() {
        // Payload lines are measured inside the reader's buffer and read line by line when one
        // runs past it: every buffer size must give the same records.
        let text = "V0101 00:00:00.000000 1 a.py:1] {\"x\": {}}\r\n\tp1\r\n\t\n\t\r\n\tlonger payload line\nstray\n\torphan\nV0101 00:00:00.000000 1 a.py:2] {\"y\": {}}\n\tlast\tline";
        let expected = records(text);
        assert!(
            matches!(&expected[0], RawRecord::Entry { payload: Some(RawPayload::Held(p)), payload_lines: 4, .. } if p == b"p1\n\n\nlonger payload line")
        );
        for capacity in 1..text.len() + 2 {
            let got: Vec<RawRecord> = Records::new(io::BufReader::with_capacity(capacity, text.as_bytes()))
                .collect::<io::Result<_>>()
                .unwrap();
            assert_eq!(got, expected, "buffer of {capacity} bytes");
        }
    }

    /// A spill keeping every blob in memory, to compare with what was held.
    #[derive(Default, Clone)]
    struct MemorySpill(std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>);

    impl Spill for MemorySpill {
        fn begin(&mut self) -> io::Result<()> {
            self.0.lock().unwrap().push(Vec::new());
            Ok(())
        }
        fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
            self.0.lock().unwrap().last_mut().unwrap().extend_from_slice(bytes);
            Ok(())
        }
        fn end(&mut self, _id: BlobId) -> io::Result<u64> {
            Ok(self.0.lock().unwrap().len() as u64 - 1)
        }
    }

    /// The records of `text` read with a line limit, spilled blobs put back in place: what a
    /// reader without a limit would have held.
    fn records_limited(text: &str, capacity: usize, max_line: usize) -> (Vec<RawRecord>, Vec<RawRecord>) {
        let spill = MemorySpill::default();
        let reader = io::BufReader::with_capacity(capacity, text.as_bytes());
        let got: Vec<RawRecord> =
            Records::with_spill(reader, max_line, Box::new(spill.clone())).collect::<io::Result<_>>().unwrap();
        let blobs = spill.0.lock().unwrap().clone();
        let unspilled = got
            .iter()
            .map(|r| match r {
                RawRecord::Entry { line, header, payload: Some(RawPayload::Spilled(s)), payload_lines } => {
                    let bytes = &blobs[s.token as usize];
                    assert_eq!(s.id, crate::parse::blob_id(bytes));
                    assert_eq!(s.size, bytes.len() as u64);
                    assert_eq!(s.md5, Some(<[u8; 16]>::from(Md5::digest(bytes))));
                    assert!(
                        bytes.len() >= max_line,
                        "only payloads reaching the limit spill: {} of {max_line}: {:?}",
                        bytes.len(),
                        String::from_utf8_lossy(bytes)
                    );
                    RawRecord::Entry {
                        line: *line,
                        header: header.clone(),
                        payload: Some(RawPayload::Held(bytes.clone())),
                        payload_lines: *payload_lines,
                    }
                }
                other => other.clone(),
            })
            .collect();
        (got, unspilled)
    }

    #[test]
    fn payloads_past_the_line_limit_stream_to_the_spill_with_the_same_bytes() {
        // Every buffer size and every limit from "the first line spills" to "nothing does": a
        // payload spilled from its first line, mid-line or after whole lines holds exactly the
        // bytes it would have held, `\r\n` endings stripped and a `\r` of content kept. (Short
        // headers: the splitter only needs `L` + `MMDD `.)
        let text = "V0101 a\r\n\tp1\r\n\t\n\t\r\n\tlonger payload line\r\r\n\tend\nV0101 b\n\tlast\r";
        let expected = records(text);
        assert!(
            matches!(&expected[0], RawRecord::Entry { payload: Some(RawPayload::Held(p)), payload_lines: 5, .. } if p == b"p1\n\n\nlonger payload line\r\nend")
        );
        let mut spilled = 0;
        for max_line in 10..40 {
            for capacity in 1..text.len() + 2 {
                let (got, unspilled) = records_limited(text, capacity, max_line);
                assert_eq!(unspilled, expected, "limit {max_line}, buffer of {capacity} bytes");
                spilled += got
                    .iter()
                    .filter(|r| matches!(r, RawRecord::Entry { payload: Some(RawPayload::Spilled(_)), .. }))
                    .count();
            }
        }
        assert!(spilled > 0);
    }

    #[test]
    fn long_header_and_stray_lines_stream_whole_and_stray_runs_stay_under_the_limit() {
        let long = "V0101 00:00:00.000000 7 a.py:1] {\"x\": \"".to_string() + &"a".repeat(100) + "\"}";
        let text = format!("stray 1\nstray 2\nstray 3\n{long}\r\n\tpayload\nV0101 b\n");
        for capacity in [1, 7, 64, 4096] {
            let (got, _) = records_limited(&text, capacity, 20);
            // "stray 1\nstray 2\n" fits 20 bytes, "stray 3" starts a new run.
            assert!(
                matches!(&got[0], RawRecord::Stray { line: 1, end_line: 2, raw, .. } if raw == b"stray 1\nstray 2\n")
            );
            assert!(matches!(&got[1], RawRecord::Stray { line: 3, end_line: 3, .. }));
            let RawRecord::LongLine { line: 4, spilled } = &got[2] else { panic!("{:?}", got[2]) };
            assert_eq!(spilled.size, long.len() as u64, "the `\r\n` ending is not part of the line");
            assert_eq!(spilled.head, long.as_bytes());
            // The payload line of the unreadable header is a stray line; the next header is read.
            assert!(matches!(&got[3], RawRecord::Stray { line: 5, raw, .. } if raw == b"\tpayload\n"));
            assert!(matches!(&got[4], RawRecord::Entry { line: 6, .. }));
        }
    }

    #[test]
    fn empty_payload_lines_at_end_of_input_are_kept() {
        // Found by proptest: two empty payload lines, the last one unterminated.
        let got = records("V0101 00:00:00.000000 1 a.py:1] {\"x\": {}}\n\t\n\t");
        assert!(
            matches!(&got[0], RawRecord::Entry { payload: Some(RawPayload::Held(p)), payload_lines: 2, .. } if p == b"\n")
        );
    }
}
