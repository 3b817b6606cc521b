//! The merged Chrome trace of a multi-stream bundle: every stream's trace file, read back one
//! event at a time (never a whole trace in memory), each event moved to its member's process.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::stream::TraceFileWriter;
use crate::analysis::cross_rank::chrome_trace::{into_process, process_metadata};
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
    for (pid, trace) in traces.iter().enumerate() {
        let Some(trace) = trace else { continue };
        let reader = BufReader::new(flate2::read::GzDecoder::new(File::open(trace)?));
        let mut de = serde_json::Deserializer::from_reader(reader);
        TraceFile { w: &mut w, pid }.deserialize(&mut de).map_err(io::Error::other)?;
    }
    w.finish()?;
    Ok(true)
}

/// Visits one trace file's top-level object, streaming its `traceEvents`.
struct TraceFile<'a> {
    w: &'a mut TraceFileWriter,
    pid: usize,
}

impl<'de> DeserializeSeed<'de> for TraceFile<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TraceFile<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Chrome trace object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "traceEvents" {
                map.next_value_seed(TraceEvents { w: &mut *self.w, pid: self.pid })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// Visits a `traceEvents` list, writing each event as it is read.
struct TraceEvents<'a> {
    w: &'a mut TraceFileWriter,
    pid: usize,
}

impl<'de> DeserializeSeed<'de> for TraceEvents<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for TraceEvents<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(event) = seq.next_element::<Map<String, Value>>()? {
            if let Some(event) = into_process(event, self.pid) {
                self.w.event(&event).map_err(A::Error::custom)?;
            }
        }
        Ok(())
    }
}
