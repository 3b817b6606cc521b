//! The glog prefix PyTorch's `TorchLogsFormatter` writes before every structured-log envelope:
//! `V1206 15:18:15.925000 1500233 torch/_dynamo/utils.py:1288] {...}`.

/// The parts of a glog prefix, borrowed from the header line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix<'a> {
    /// Severity letter: V, I, W, E or F.
    pub level: u8,
    /// `MMDD HH:MM:SS.ffffff`, exactly as logged (glog writes no year).
    pub timestamp: &'a str,
    /// Process id.
    pub pid: u64,
    /// `path/file.py:LINE`, as logged.
    pub source: &'a str,
    /// Everything after `] `: the JSON envelope.
    pub rest: &'a str,
}

/// True when `line` starts like a glog header (`L` + `MMDD `): a cheap test the line splitter
/// uses to tell headers from stray text before the full parse.
pub fn looks_like_header(line: &[u8]) -> bool {
    line.len() > 6
        && matches!(line[0], b'V' | b'I' | b'W' | b'E' | b'F')
        && line[1..5].iter().all(u8::is_ascii_digit)
        && line[5] == b' '
}

/// Parses the glog prefix of a header line; `None` when the line is not shaped like one.
pub fn parse_prefix(line: &str) -> Option<Prefix<'_>> {
    let bytes = line.as_bytes();
    if !looks_like_header(bytes) {
        return None;
    }
    // `MMDD HH:MM:SS.ffffff`: date, one space, time.
    let time_end = 6 + line[6..].find(' ')?;
    let time = &line[6..time_end];
    if time.len() < 8 || !time.bytes().all(|b| b.is_ascii_digit() || b == b':' || b == b'.') {
        return None;
    }
    let timestamp = &line[1..time_end];
    let after_time = line[time_end..].trim_start_matches(' ');
    let pid_len = after_time.bytes().take_while(u8::is_ascii_digit).count();
    if pid_len == 0 {
        return None;
    }
    let pid = after_time[..pid_len].parse().ok()?;
    let after_pid = &after_time[pid_len..];
    if !after_pid.starts_with(' ') {
        return None;
    }
    let after_pid = after_pid.trim_start_matches(' ');
    // The first `] `, found with memchr: a string searcher's setup costs more than the search.
    let rest = after_pid.as_bytes();
    let close = memchr::memchr_iter(b']', rest).find(|&at| rest.get(at + 1) == Some(&b' '))?;
    let source = &after_pid[..close];
    let (_, lineno) = source.rsplit_once(':')?;
    if lineno.is_empty() || !lineno.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Prefix { level: bytes[0], timestamp, pid, source, rest: &after_pid[close + 2..] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_real_header() {
        let line = r#"V1206 15:18:15.925000 1500233 torch/_dynamo/utils.py:1288] {"chromium_event": {}}"#;
        let p = parse_prefix(line).unwrap();
        assert_eq!(p.level, b'V');
        assert_eq!(p.timestamp, "1206 15:18:15.925000");
        assert_eq!(p.pid, 1500233);
        assert_eq!(p.source, "torch/_dynamo/utils.py:1288");
        assert_eq!(p.rest, r#"{"chromium_event": {}}"#);
    }

    #[test]
    fn rejects_text_that_is_not_a_header() {
        for line in ["", "hello world", "V1206", "V1206 15:18:15.925000 x a.py:1] {}", "V1206 15:18:15.9 12 a.py] {}"] {
            assert_eq!(parse_prefix(line), None, "{line:?}");
        }
    }
}
