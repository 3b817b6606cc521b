//! The merged Chrome trace of a multi-stream bundle: every stream's trace file, read back one
//! event at a time (never a whole trace in memory), each event moved to its member's process
//! by splicing its text.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::blobs::DamagedFile;
use super::stream::{TRACE_HEADER, TraceFileWriter};
use crate::analysis::cross_rank::chrome_trace::{into_process, process_metadata};
use crate::parse::Fields;
use crate::schema::cross_rank::RankMember;

/// Writes `out` from the members' trace files (`traces[i]` is `members[i]`'s, `None` for a member
/// without one), member i as process i. Returns false, writing nothing, when no member has a trace.
pub fn merge(out: &Path, members: &[RankMember], traces: &[Option<PathBuf>]) -> io::Result<bool> {
    if traces.iter().all(Option::is_none) {
        return Ok(false);
    }
    let mut w = TraceFileWriter::create(out)?;
    for (pid, member) in members.iter().enumerate() {
        for event in process_metadata(pid, &member.label) {
            w.event(&event)?;
        }
    }
    let mut moved = Vec::new();
    for (pid, trace) in traces.iter().enumerate() {
        let Some(trace) = trace else { continue };
        // Bytes that are not a trace this version wrote are the trace's fault (a shard's, say).
        let damaged = |e: io::Error| match e.kind() {
            io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput | io::ErrorKind::UnexpectedEof => {
                DamagedFile::error(trace, format!("is not a Chrome trace this version wrote ({e})"))
            }
            _ => io::Error::new(e.kind(), format!("{}: {e}", trace.display())),
        };
        let events = Events::open(flate2::read::GzDecoder::new(File::open(trace)?)).map_err(damaged)?;
        events
            .for_each(|event, members| {
                moved.clear();
                if into_process(event, members, pid, &mut moved) { w.raw(&moved) } else { Ok(()) }
            })
            .map_err(damaged)?;
    }
    w.finish()?;
    Ok(true)
}

/// Bytes read from a trace at a time (more when one event is bigger).
const CHUNK: usize = 1 << 18;

/// A trace file's events, as [`TraceFileWriter`] wrote them (its header, then JSON objects
/// separated by commas, then `]}`), each read from a buffer that holds at least the whole event:
/// serde_json reads a slice much faster than a reader, and nothing is copied.
struct Events<R> {
    src: R,
    buf: Vec<u8>,
    /// Where the unread bytes of `buf` start.
    pos: usize,
    /// Whether `src` has no more bytes.
    ended: bool,
}

impl<R: Read> Events<R> {
    fn open(src: R) -> io::Result<Self> {
        let mut events = Events { src, buf: Vec::with_capacity(CHUNK), pos: 0, ended: false };
        while events.buf.len() < TRACE_HEADER.len() && events.fill()? {}
        if !events.buf.starts_with(TRACE_HEADER) {
            return Err(invalid("not a Chrome trace this version wrote"));
        }
        events.pos = TRACE_HEADER.len();
        Ok(events)
    }

    /// Calls `f` with each event's text and its members.
    fn for_each(mut self, mut f: impl FnMut(&[u8], &Fields) -> io::Result<()>) -> io::Result<()> {
        if self.next_token()? == Some(b']') {
            return self.end();
        }
        loop {
            if self.next_token()?.is_none() {
                return Err(invalid("the file ends in the event list"));
            }
            let mut de = serde_json::Deserializer::from_slice(&self.buf[self.pos..]).into_iter::<Fields>();
            match de.next().expect("a token is there") {
                Ok(members) => {
                    let len = de.byte_offset();
                    let text = self.buf[self.pos..self.pos + len].trim_ascii_start();
                    f(text, &members)?;
                    self.pos += len;
                }
                // The event goes on past what was read: read more, and read it again.
                Err(e) if e.is_eof() && !self.ended => {
                    self.fill()?;
                    continue;
                }
                Err(e) => return Err(invalid(e)),
            }
            match self.next_token()? {
                Some(b',') => self.pos += 1,
                Some(b']') => return self.end(),
                _ => return Err(invalid("an event not followed by a comma or the list's end")),
            }
        }
    }

    /// Checks what follows the event list: `]}` and whitespace.
    fn end(mut self) -> io::Result<()> {
        self.pos += 1;
        if self.next_token()? != Some(b'}') {
            return Err(invalid("the event list's end not followed by the object's"));
        }
        self.pos += 1;
        match self.next_token()? {
            None => Ok(()),
            Some(_) => Err(invalid("bytes after the trace object")),
        }
    }

    /// The next byte that is not whitespace, left unread (`None` at the end of the file).
    fn next_token(&mut self) -> io::Result<Option<u8>> {
        loop {
            match self.buf[self.pos..].iter().position(|b| !b.is_ascii_whitespace()) {
                Some(k) => {
                    self.pos += k;
                    return Ok(Some(self.buf[self.pos]));
                }
                None => {
                    self.pos = self.buf.len();
                    if !self.fill()? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Drops what was read and reads at least a chunk more (as much as is buffered, so that a
    /// long event is read again only a few times); false at the end of the file.
    fn fill(&mut self) -> io::Result<bool> {
        self.buf.drain(..self.pos);
        self.pos = 0;
        let want = CHUNK.max(self.buf.len());
        let read = self.src.by_ref().take(want as u64).read_to_end(&mut self.buf)?;
        self.ended = read == 0;
        Ok(read > 0)
    }
}

fn invalid(why: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events `Events` reads from `text` given `chunk` bytes at a time, as text.
    fn events(text: &[u8], chunk: usize) -> io::Result<Vec<String>> {
        /// A reader that hands out at most `chunk` bytes per read.
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = self.1.min(out.len()).min(self.0.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut seen = Vec::new();
        Events::open(Trickle(text, chunk))?.for_each(|event, _| {
            seen.push(String::from_utf8(event.to_vec()).unwrap());
            Ok(())
        })?;
        Ok(seen)
    }

    fn trace(events: &[&str]) -> Vec<u8> {
        [TRACE_HEADER, events.join(",\n").as_bytes(), b"\n]}\n"].concat()
    }

    #[test]
    fn events_are_read_whole_however_the_bytes_arrive() {
        let big = format!("{{\"args\": {{\"s\": \"{}\"}}}}", "x".repeat(3 * CHUNK));
        let list = ["{\"a\": [1, {\"b\": \"},\\n{\"}],\n\"pid\": 0\n}", " \n{}", big.as_str(), "{\"c\":\"é\"}"];
        let text = trace(&list);
        let expected: Vec<String> = list.iter().map(|e| e.trim_start().to_string()).collect();
        for chunk in [1, 7, 4096, usize::MAX] {
            assert_eq!(events(&text, chunk).unwrap(), expected, "chunk {chunk}");
        }
        assert_eq!(events(&trace(&[]), 3).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn damaged_traces_are_errors() {
        let good = trace(&["{\"a\": 1}", "{\"b\": 2}"]);
        for cut in [3, TRACE_HEADER.len() + 4, good.len() - 3] {
            assert!(events(&good[..cut], 5).is_err(), "cut at {cut}");
        }
        for bad in [trace(&["[1]"]), trace(&["{\"a\": 1} {\"b\": 2}"]), [&good[..], b"{}"].concat()] {
            let err = events(&bad, 64).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
        }
    }
}
