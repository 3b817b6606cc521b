//! A log as lines, for the mutators that work on lines, entries and payloads: which lines are
//! headers, where an entry's payload lines are, and the md5 a header declares for them.

use md5::Digest;

/// A log's lines without their `\n`, and whether the last one had one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lines {
    pub lines: Vec<Vec<u8>>,
    pub final_newline: bool,
}

/// The JSON envelope of a header line starts after this.
const PREFIX_END: &[u8] = b"] {";

impl Lines {
    pub fn split(bytes: &[u8]) -> Lines {
        let final_newline = bytes.last() == Some(&b'\n');
        let body = if final_newline { &bytes[..bytes.len() - 1] } else { bytes };
        let lines =
            if bytes.is_empty() { Vec::new() } else { body.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect() };
        Lines { lines, final_newline }
    }

    pub fn join(&self) -> Vec<u8> {
        let mut out = self.lines.join(&b'\n');
        if self.final_newline && !self.lines.is_empty() {
            out.push(b'\n');
        }
        out
    }

    /// Indices of the header lines (a glog prefix followed by a JSON envelope).
    pub fn headers(&self) -> Vec<usize> {
        (0..self.lines.len()).filter(|&i| envelope_start(&self.lines[i]).is_some()).collect()
    }

    /// Indices of the headers followed by at least one payload line.
    pub fn headers_with_payload(&self) -> Vec<usize> {
        self.headers().into_iter().filter(|&h| self.payload_end(h) > h + 1).collect()
    }

    /// One past the last payload line of the header at `header`.
    pub fn payload_end(&self, header: usize) -> usize {
        let mut end = header + 1;
        while self.lines.get(end).is_some_and(|l| l.first() == Some(&b'\t')) {
            end += 1;
        }
        end
    }

    /// Where a new entry can go without splitting one: before a header, or at the end.
    pub fn entry_boundaries(&self) -> Vec<usize> {
        let mut at = self.headers();
        at.push(self.lines.len());
        at
    }

    /// The payload text of a header's entry, as its md5 is computed: the payload lines without
    /// their tab, joined with `\n`.
    pub fn payload_text(&self, header: usize) -> Vec<u8> {
        self.lines[header + 1..self.payload_end(header)].iter().map(|l| &l[1..]).collect::<Vec<_>>().join(&b'\n')
    }

    /// Replaces a header's payload lines with `payload` (split on `\n`, each line given its tab).
    pub fn set_payload(&mut self, header: usize, payload: &[u8]) {
        let end = self.payload_end(header);
        let new = payload.split(|&b| b == b'\n').map(|l| [b"\t".as_slice(), l].concat());
        self.lines.splice(header + 1..end, new);
    }

    /// Makes a header's `has_payload` the md5 of its payload, when it declares one as 32 hex
    /// digits: the payload is then read as valid, so what was injected reaches the tables.
    pub fn fix_md5(&mut self, header: usize) {
        let digest = md5_hex(&self.payload_text(header));
        let line = &mut self.lines[header];
        if let Some(at) = find(line, b"\"has_payload\": \"") {
            let start = at + b"\"has_payload\": \"".len();
            if line.len() >= start + 32 && line[start..start + 32].iter().all(u8::is_ascii_hexdigit) {
                line[start..start + 32].copy_from_slice(digest.as_bytes());
            }
        }
    }
}

/// Where the JSON envelope of a header line starts, if the line is one.
pub fn envelope_start(line: &[u8]) -> Option<usize> {
    if !tlparse_build::parse::glog::looks_like_header(line) {
        return None;
    }
    find(line, PREFIX_END).map(|at| at + 2)
}

/// The md5 of some bytes, as torch writes it in `has_payload`.
pub fn md5_hex(bytes: &[u8]) -> String {
    md5::Md5::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The first position of `needle` in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A made-up header line, for a hostile value when the input has no header left to put it in.
pub fn synthetic_header(envelope: &str) -> Vec<u8> {
    format!("V1120 23:44:52.007000 4242 torch/_logging/structured.py:28] {envelope}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &[u8] = b"V0101 00:00:00.000000 1 a.py:1] {\"a\": {}, \"has_payload\": \"00000000000000000000000000000000\"}\n\tx\n\ty\nstray\nV0101 00:00:00.000000 1 a.py:2] {\"b\": {}}\n";

    #[test]
    fn split_and_join_are_inverse() {
        for text in [LOG, b"", b"a", b"a\n", b"\n", b"a\n\nb"] {
            assert_eq!(Lines::split(text).join(), text, "{:?}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn headers_payloads_and_md5() {
        let mut lines = Lines::split(LOG);
        assert_eq!(lines.headers(), vec![0, 4]);
        assert_eq!(lines.headers_with_payload(), vec![0]);
        assert_eq!(lines.payload_text(0), b"x\ny");
        lines.fix_md5(0);
        assert!(find(&lines.lines[0], md5_hex(b"x\ny").as_bytes()).is_some());
        lines.set_payload(0, b"z");
        assert_eq!(lines.lines[1], b"\tz");
        assert_eq!(lines.lines[2], b"stray");
    }
}
