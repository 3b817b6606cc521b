//! Splits a log's lines into records: a header line with the tab-indented payload lines that
//! follow it, or a run of lines that belong to no header. Cheap and sequential; the expensive
//! per-record work happens later, in parallel.

use std::io::{self, BufRead};

/// A group of consecutive input lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawRecord {
    /// A header line (glog-shaped) and its payload lines.
    Entry {
        /// Line number (from 1) of the header.
        line: u64,
        /// The header line without its line ending.
        header: Vec<u8>,
        /// The payload lines without their leading tab, joined with `\n`; `None` when no
        /// payload line followed the header.
        payload: Option<Vec<u8>>,
        /// Number of payload lines.
        payload_lines: u64,
    },
    /// Consecutive lines that are neither a header nor a payload line following one.
    Stray {
        /// First line number (from 1).
        line: u64,
        /// Last line number.
        end_line: u64,
        /// The lines, each with a `\n` after it.
        raw: Vec<u8>,
    },
}

impl RawRecord {
    /// The bytes of input this record stands for, for batching.
    pub fn weight(&self) -> usize {
        match self {
            RawRecord::Entry { header, payload, .. } => header.len() + payload.as_ref().map_or(0, Vec::len),
            RawRecord::Stray { raw, .. } => raw.len(),
        }
    }
}

/// Iterator over the records of a log.
pub struct Records<R> {
    reader: R,
    line_no: u64,
    /// A line read ahead that starts the next record.
    pending: Option<Vec<u8>>,
    buf: Vec<u8>,
    /// Where the payload lines found in the reader's buffer end (reused).
    line_ends: Vec<usize>,
    /// Bytes read so far (decompressed), for counts.
    pub bytes_read: u64,
}

impl<R: BufRead> Records<R> {
    pub fn new(reader: R) -> Self {
        Records { reader, line_no: 0, pending: None, buf: Vec::new(), line_ends: Vec::new(), bytes_read: 0 }
    }

    /// Number of lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.line_no
    }

    /// Reads one line without its `\n` (and a `\r` before it); `None` at end of input.
    fn read_line(&mut self) -> io::Result<Option<Vec<u8>>> {
        self.buf.clear();
        let n = read_until_newline(&mut self.reader, &mut self.buf)?;
        if n == 0 {
            return Ok(None);
        }
        self.bytes_read += n as u64;
        self.line_no += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(Some(std::mem::take(&mut self.buf)))
    }

    /// Reads the payload lines (tab-indented) that follow a header, without their tabs and line
    /// endings, joined with `\n`. The lines that sit whole in the reader's buffer (nearly all:
    /// it holds 1 MiB) are measured first and copied once into a buffer of the right size.
    fn read_payload(&mut self) -> io::Result<(Option<Vec<u8>>, u64)> {
        let mut payload: Option<Vec<u8>> = None;
        let mut lines = 0;
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.first() != Some(&b'\t') {
                return Ok((payload, lines));
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
                let n = read_until_newline(&mut self.reader, p)?;
                self.bytes_read += n as u64 + 1;
                self.line_no += 1;
                lines += 1;
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

    fn next_line(&mut self) -> io::Result<Option<Vec<u8>>> {
        match self.pending.take() {
            Some(line) => Ok(Some(line)),
            None => self.read_line(),
        }
    }

    /// Reads the next record.
    pub fn next_record(&mut self) -> io::Result<Option<RawRecord>> {
        let Some(first) = self.next_line()? else { return Ok(None) };
        // A pending line is always the last one read, so its number is `line_no`.
        let line = self.line_no;
        if super::glog::looks_like_header(&first) {
            let (payload, payload_lines) = self.read_payload()?;
            return Ok(Some(RawRecord::Entry { line, header: first, payload, payload_lines }));
        }
        // A stray run: everything up to the next header.
        let start = line;
        let mut raw = first;
        raw.push(b'\n');
        let mut end_line = start;
        while let Some(next) = self.read_line()? {
            if super::glog::looks_like_header(&next) {
                self.pending = Some(next);
                break;
            }
            raw.extend_from_slice(&next);
            raw.push(b'\n');
            end_line = self.line_no;
        }
        Ok(Some(RawRecord::Stray { line: start, end_line, raw }))
    }
}

/// `BufRead::read_until(b'\n')` with a vectorized search (the standard library's is bytewise
/// and was most of the time spent splitting records).
fn read_until_newline(reader: &mut impl BufRead, out: &mut Vec<u8>) -> io::Result<usize> {
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
        out.extend_from_slice(&buf[..take]);
        reader.consume(take);
        read += take;
        if done {
            return Ok(read);
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
                payload: Some(b"p1\np2".to_vec()),
                payload_lines: 2
            }
        );
        assert!(matches!(&got[1], RawRecord::Entry { line: 4, payload: None, .. }));
        assert_eq!(got[2], RawRecord::Stray { line: 5, end_line: 6, raw: b"garbage\n\torphan\n".to_vec() });
        assert!(matches!(&got[3], RawRecord::Entry { line: 7, payload: None, .. }));
    }

    #[test]
    fn records_do_not_depend_on_where_the_read_buffer_ends() {
        // Payload lines are measured inside the reader's buffer and read line by line when one
        // runs past it: every buffer size must give the same records.
        let text = "V0101 00:00:00.000000 1 a.py:1] {\"x\": {}}\r\n\tp1\r\n\t\n\t\r\n\tlonger payload line\nstray\n\torphan\nV0101 00:00:00.000000 1 a.py:2] {\"y\": {}}\n\tlast\tline";
        let expected = records(text);
        assert!(
            matches!(&expected[0], RawRecord::Entry { payload: Some(p), payload_lines: 4, .. } if p == b"p1\n\n\nlonger payload line")
        );
        for capacity in 1..text.len() + 2 {
            let got: Vec<RawRecord> = Records::new(io::BufReader::with_capacity(capacity, text.as_bytes()))
                .collect::<io::Result<_>>()
                .unwrap();
            assert_eq!(got, expected, "buffer of {capacity} bytes");
        }
    }

    #[test]
    fn empty_payload_lines_at_end_of_input_are_kept() {
        // Found by proptest: two empty payload lines, the last one unterminated.
        let got = records("V0101 00:00:00.000000 1 a.py:1] {\"x\": {}}\n\t\n\t");
        assert!(matches!(&got[0], RawRecord::Entry { payload: Some(p), payload_lines: 2, .. } if p == b"\n"));
    }
}
