//! TORCH_TRACE text → entries and diagnostics. Nothing here writes files.
//!
//! The pipeline for one log: [`records::Records`] splits lines into records (sequential, cheap),
//! [`entry::parse_record`] parses each record (pure, run in parallel), and [`process::Demux`]
//! applies per-process context in log order (string tables, stacks, rank routing).

mod checked_members;
pub mod entry;
pub mod glog;
pub mod json_text;
pub mod md5_lanes;
pub mod process;
pub mod records;
mod string_end;
pub mod trace_event;

use std::collections::BTreeMap;
use std::io::BufRead;

pub use entry::{
    BlobId, Entry, Fields, Key, Meta, NAMED_KINDS, Parsed, Payload, Unreadable, blob_id, display_compile_id, hex,
    parse_record, parse_record_with_md5,
};
pub use process::{Demux, RankSlot, Routed, StackSlot, StreamKey};
pub use records::{MAX_STORED, RawPayload, RawRecord, Records, Spill, Spilled};
pub use trace_event::{TraceEvent, parse_trace_event};

/// Bytes as text, invalid UTF-8 replaced by U+FFFD: the same as `String::from_utf8_lossy`, but
/// valid text (nearly all of a log) is checked by `str::from_utf8`, which checks long payloads
/// a word at a time where the lossy decoder walks them byte by byte.
pub fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A whole log parsed in memory, sequentially: for tests and small inputs. The bundle writer
/// streams instead.
#[derive(Debug, Default)]
pub struct ParsedLog {
    /// Entries per stream, in log order.
    pub streams: BTreeMap<StreamKey, Vec<Routed>>,
    /// Records that could not be read, in log order.
    pub unreadable: Vec<Unreadable>,
    /// Lines read.
    pub lines: u64,
}

/// Parses a whole log held in memory.
pub fn parse_log(reader: impl BufRead, file_rank: Option<u32>) -> std::io::Result<ParsedLog> {
    let mut records = Records::new(reader);
    let mut demux = Demux::new(file_rank);
    let mut log = ParsedLog::default();
    for record in records.by_ref() {
        match parse_record(record?) {
            Parsed::Entry(entry) => {
                let routed = demux.route(entry);
                log.streams.entry(routed.key).or_default().push(routed);
            }
            Parsed::Unreadable(u) => log.unreadable.push(u),
        }
    }
    log.lines = records.lines_read();
    Ok(log)
}

/// The rank in a `dedicated_log_torch_trace_rank_N[_anything].log` file name.
pub fn rank_from_file_name(name: &str) -> Option<u32> {
    let rest = name.split_once("_rank_")?.1;
    let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    let after = &rest[digits.len()..];
    if digits.is_empty() || !(after.starts_with('_') || after.starts_with('.')) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_come_from_torch_trace_file_names() {
        assert_eq!(rank_from_file_name("dedicated_log_torch_trace_rank_3_a74od7a1.log"), Some(3));
        assert_eq!(rank_from_file_name("dedicated_log_torch_trace_rank_12.log"), Some(12));
        assert_eq!(rank_from_file_name("dedicated_log_torch_trace_rank_0.log.gz"), Some(0));
        assert_eq!(rank_from_file_name("dedicated_log_torch_trace_oqrpb3uu.log"), None);
        assert_eq!(rank_from_file_name("my_rank_x.log"), None);
    }
}
