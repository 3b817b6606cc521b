//! The merged Chrome trace's events: every stream's trace events moved to one process per
//! member (torch logs `"pid": 0` on every rank, so unmoved they would all land in one process),
//! and metadata naming each process. The bundle writer streams the files through these.

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::parse::Fields;

/// Metadata events naming process `pid` after the member and keeping members in their order.
pub fn process_metadata(pid: usize, label: &str) -> [Value; 2] {
    [
        json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": label}}),
        json!({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}}),
    ]
}

/// One stream's event moved to process `pid`: `event` (JSON text, as its trace holds it, read
/// into `members`) is appended to `out` as it is but for its `pid` value(s), or with a `pid`
/// added at its end. A stream's own process name or sort index is dropped (false): the merged
/// trace names processes after the members. Text is spliced, not re-serialized: a thousand
/// ranks' traces are hundreds of MB of JSON, and building values of them was a third of a merge.
/// `members`' values must borrow from `event`.
pub fn into_process(event: &[u8], members: &Fields, pid: usize, out: &mut Vec<u8>) -> bool {
    let Fields(members) = members;
    // The last of duplicate keys is the one JSON readers keep.
    let is = |name: &str, one_of: &[&str]| {
        members.iter().rev().find(|(key, _)| key == name).is_some_and(|(_, value)| string_in(value, one_of))
    };
    if is("ph", &["M"]) && is("name", &["process_name", "process_sort_index"]) {
        return false;
    }
    let mut copied = 0;
    for (_, value) in members.iter().filter(|(key, _)| key == "pid") {
        // Where a value starts is its offset in the text it borrows from.
        let start = value.get().as_ptr() as usize - event.as_ptr() as usize;
        assert!(start < event.len(), "members borrow from the event");
        out.extend_from_slice(&event[copied..start]);
        out.extend_from_slice(pid.to_string().as_bytes());
        copied = start + value.get().len();
    }
    if copied > 0 {
        out.extend_from_slice(&event[copied..]);
    } else {
        // No pid: one goes before the closing brace.
        let close = event.iter().rposition(|&b| b == b'}').expect("an object's text ends with its brace");
        out.extend_from_slice(event[..close].trim_ascii_end());
        if !members.is_empty() {
            out.push(b',');
        }
        out.extend_from_slice(format!("\"pid\":{pid}}}").as_bytes());
    }
    true
}

/// Whether a JSON value is one of the strings `one_of` (compared as text unless it has escapes).
fn string_in(value: &RawValue, one_of: &[&str]) -> bool {
    let raw = value.get();
    let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else { return false };
    if !inner.contains('\\') {
        return one_of.contains(&inner);
    }
    serde_json::from_str::<String>(raw).is_ok_and(|text| one_of.contains(&text.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `event` moved to process `pid`, as text; `None` when it is dropped.
    fn moved_text(event: &str, pid: usize) -> Option<String> {
        let members: Fields = serde_json::from_str(event).unwrap();
        let mut out = Vec::new();
        let kept = into_process(event.as_bytes(), &members, pid, &mut out);
        assert_eq!(kept, !out.is_empty());
        kept.then(|| String::from_utf8(out).unwrap())
    }

    /// `event` moved to process `pid`, read back; `None` when it is dropped.
    fn moved(event: &str, pid: usize) -> Option<Value> {
        moved_text(event, pid).map(|text| serde_json::from_str(&text).unwrap())
    }

    #[test]
    fn events_move_and_process_names_are_replaced() {
        let event = r#"{"name": "dynamo", "ph": "B", "pid": 0, "tid": 3, "ts": 1.5}"#;
        assert_eq!(moved(event, 2).unwrap(), json!({"name": "dynamo", "ph": "B", "pid": 2, "tid": 3, "ts": 1.5}));
        let own_name = r#"{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "python"}}"#;
        assert!(moved(own_name, 2).is_none());
        let sort_index = r#"{"ph":"M","name":"process_sort_index","pid":0,"args":{"sort_index":5}}"#;
        assert!(moved(sort_index, 2).is_none());
        let thread_name = r#"{"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "main"}}"#;
        assert_eq!(moved(thread_name, 1).unwrap()["pid"], 1);
        assert_eq!(process_metadata(3, "rank 3")[0]["args"]["name"], "rank 3");
    }

    #[test]
    fn only_the_pid_changes_and_text_is_kept_as_logged() {
        let event = "{\n\"name\": \"a\\u0041\",\n\"args\": {\"pid\": 7},\n\"pid\": 0,\n\"tid\": 1\n}";
        assert_eq!(moved_text(event, 12).unwrap(), event.replace("\"pid\": 0", "\"pid\": 12"));
    }

    #[test]
    fn a_pid_is_added_where_there_is_none_and_duplicates_all_move() {
        assert_eq!(moved(r#"{"ph": "i", "ts": 1 }"#, 4).unwrap(), json!({"ph": "i", "ts": 1, "pid": 4}));
        assert_eq!(moved_text("{ }", 4).unwrap(), r#"{"pid":4}"#);
        assert_eq!(moved_text(r#"{"pid": 1, "ts": 0, "pid": "x"}"#, 9).unwrap(), r#"{"pid": 9, "ts": 0, "pid": 9}"#);
        // Which name counts is the last, as JSON readers read duplicates; escapes are read.
        assert!(moved(r#"{"ph": "M", "name": "process_name", "name": "thread_name"}"#, 1).is_some());
        assert!(moved(r#"{"ph": "\u004d", "name": "process_\u006eame"}"#, 1).is_none());
        assert!(moved(r#"{"ph": "M", "name": ["process_name"]}"#, 1).is_some());
    }
}
