//! Log volume: entries and bytes by kind, artifact name and call site.

use tlparse_build::schema::tables::{LogVolume, VolumeRow};

use super::{built, snapshot};
use crate::util::fixture;

fn log_volume(rel: &str) -> (LogVolume, serde_json::Value) {
    let b = built(rel);
    let v = b.table("log_volume");
    (serde_json::from_value(v.clone()).unwrap(), v)
}

fn find<'a>(rows: &'a [VolumeRow], key: &str) -> &'a VolumeRow {
    rows.iter().find(|r| r.key == key).unwrap_or_else(|| panic!("no row {key}"))
}

#[test]
fn simple_log_bytes_add_up_to_the_file() {
    // Checked by hand (python over the raw bytes): the file is 365403 bytes with `\n` endings
    // and no stray lines; 165 header lines of 71221 bytes in all and 3459 payload lines. 138
    // entries are chromium_event, 136 of them logged from torch/_dynamo/utils.py:2473. The one
    // compilation_metrics header line is 39951 bytes long and has no payload.
    let (t, v) = log_volume("torch-2.15/simple");
    let size = std::fs::metadata(fixture("torch-2.15/simple/dedicated_log_torch_trace_oqrpb3uu.log")).unwrap().len();
    assert_eq!(t.total.log_bytes, size);
    assert_eq!(size, 365403);
    assert_eq!((t.total.entries, t.total.header_bytes, t.total.payload_lines), (165, 71221, 3459));
    assert_eq!(find(&t.by_kind, "chromium_event").entries, 138);
    assert_eq!(t.by_kind[0].key, "chromium_event", "the biggest kind comes first");
    let metrics = find(&t.by_kind, "compilation_metrics");
    assert_eq!((metrics.header_bytes, metrics.payload_bytes, metrics.log_bytes), (39951, 0, 39952));
    assert_eq!(find(&t.by_source, "torch/_dynamo/utils.py:2473").entries, 136);
    // The 78 KB fx_graph_cache_miss payload (key components) is the biggest artifact.
    assert_eq!((t.by_name[0].key.as_str(), t.by_name[0].kind.as_deref()), ("fx_graph_cache_miss", Some("artifact")));
    snapshot("log_volume__simple", &v);
}

#[test]
fn groupings_partition_the_stream_and_are_sorted() {
    let (t, _) = log_volume("torch-2.15/graph_breaks");
    let size =
        std::fs::metadata(fixture("torch-2.15/graph_breaks/dedicated_log_torch_trace_vyoaitj6.log")).unwrap().len();
    assert_eq!(t.total.log_bytes, size);
    for rows in [&t.by_kind, &t.by_source] {
        assert_eq!(rows.iter().map(|r| r.log_bytes).sum::<u64>(), t.total.log_bytes);
        assert_eq!(rows.iter().map(|r| r.entries).sum::<u64>(), t.total.entries);
        assert_eq!(rows.iter().map(|r| r.payload_bytes).sum::<u64>(), t.total.payload_bytes);
    }
    // Named kinds: every artifact (and other named entry) is in exactly one by_name row.
    let named: u64 = t.by_kind.iter().filter(|r| r.key == "artifact").map(|r| r.entries).sum();
    assert_eq!(
        t.by_name.iter().filter(|r| r.kind.as_deref() == Some("artifact")).map(|r| r.entries).sum::<u64>(),
        named
    );
    for rows in [&t.by_kind, &t.by_name, &t.by_source] {
        for w in rows.windows(2) {
            assert!(
                w[0].log_bytes > w[1].log_bytes || (w[0].log_bytes == w[1].log_bytes && w[0].key <= w[1].key),
                "{} before {}",
                w[0].key,
                w[1].key
            );
        }
    }
}
