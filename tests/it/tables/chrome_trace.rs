//! The per-stream Chrome trace.

use super::built;

#[test]
fn every_chromium_event_is_in_the_trace_with_big_arguments_elided() {
    // The graph_breaks fixture logs 1193 chromium_event entries (grep), all JSON objects; some
    // (e.g. the `inductor_compile` ends) carry whole configs and cache details of tens of KB in
    // `args`.
    let b = built("torch-2.15/graph_breaks");
    let stream = b.only_stream();
    let trace = b.bundle.chrome_trace(&stream).unwrap().expect("trace");
    assert_eq!(trace["displayTimeUnit"], "ms");
    let events = trace["traceEvents"].as_array().unwrap();
    assert_eq!(events.len(), 1193);
    let rows = b.bundle.index_rows(&stream).unwrap();
    let chromium: Vec<_> = rows.iter().filter(|r| r.kind == "chromium_event").collect();
    assert_eq!(chromium.len(), events.len());
    let mut elided = 0;
    for (event, row) in events.iter().zip(&chromium) {
        let full: serde_json::Value =
            serde_json::from_slice(&b.bundle.blob(&row.payload.as_ref().unwrap().hash).unwrap()).unwrap();
        // Same event: name, phase, timestamp as logged.
        for key in ["name", "ph", "ts", "pid", "tid"] {
            assert_eq!(event[key], full[key], "{key}");
        }
        for (k, v) in event["args"].as_object().into_iter().flatten() {
            if v.as_str().is_some_and(|s| s.contains("bytes elided; the full event is blob")) {
                elided += 1;
                assert!(v.as_str().unwrap().ends_with(&format!("blob {}]", row.payload.as_ref().unwrap().hash)));
                assert!(serde_json::to_string(&full["args"][k]).unwrap().len() > 256);
            } else {
                assert_eq!(v, &full["args"][k]);
            }
        }
    }
    assert!(elided > 0);
}

#[test]
fn a_log_without_chromium_events_has_no_trace() {
    // comp_metrics.log (April 2024) predates chromium events.
    let b = built("tlparse-tests/comp_metrics.log");
    assert!(b.bundle.chrome_trace(&b.only_stream()).unwrap().is_none());
}
