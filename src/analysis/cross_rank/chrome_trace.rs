//! The merged Chrome trace's events: every stream's trace events moved to one process per
//! member (torch logs `"pid": 0` on every rank, so unmoved they would all land in one process),
//! and metadata naming each process. The bundle writer streams the files through these.

use serde_json::{Map, Value, json};

/// Metadata events naming process `pid` after the member and keeping members in their order.
pub fn process_metadata(pid: usize, label: &str) -> [Value; 2] {
    [
        json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": label}}),
        json!({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}}),
    ]
}

/// One stream's event, moved to process `pid`. A stream's own process name or sort index is
/// dropped (`None`): the merged trace names processes after the members.
pub fn into_process(mut event: Map<String, Value>, pid: usize) -> Option<Map<String, Value>> {
    let names_process = event.get("ph").and_then(Value::as_str) == Some("M")
        && matches!(event.get("name").and_then(Value::as_str), Some("process_name" | "process_sort_index"));
    if names_process {
        return None;
    }
    event.insert("pid".into(), pid.into());
    Some(event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_move_and_process_names_are_replaced() {
        let event = json!({"name": "dynamo", "ph": "B", "pid": 0, "tid": 3, "ts": 1.5});
        let moved = into_process(event.as_object().unwrap().clone(), 2).unwrap();
        assert_eq!(Value::Object(moved), json!({"name": "dynamo", "ph": "B", "pid": 2, "tid": 3, "ts": 1.5}));
        let own_name = json!({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "python"}});
        assert!(into_process(own_name.as_object().unwrap().clone(), 2).is_none());
        let thread_name = json!({"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "main"}});
        assert_eq!(into_process(thread_name.as_object().unwrap().clone(), 1).unwrap()["pid"], 1);
        assert_eq!(process_metadata(3, "rank 3")[0]["args"]["name"], "rank 3");
    }
}
