//! Who is compared: members, labels, and what sharing storage across ranks saved.

use super::built_ranks;

/// multi_rank_runtime: files 5 and 6 say `"rank": 1` in their envelopes (copied from another
/// run), so three streams have rank 1; their file names still tell them apart, and the labels
/// use those, as tlparse does.
#[test]
fn labels_fall_back_to_the_file_rank_when_ranks_collide() {
    let b = built_ranks("multi_rank_runtime");
    let c = b.bundle.manifest.cross_rank.as_ref().expect("seven streams are compared");
    let got: Vec<(&str, Option<u32>, Option<u32>, &str)> =
        c.members.iter().map(|m| (m.stream.as_str(), m.rank, m.file_rank, m.label.as_str())).collect();
    assert_eq!(
        got,
        [
            ("rank0", Some(0), Some(0), "rank 0"),
            ("rank1-0", Some(1), Some(1), "rank 1"),
            ("rank2", Some(2), Some(2), "rank 2"),
            ("rank3", Some(3), Some(3), "rank 3"),
            ("rank4", Some(4), Some(4), "rank 4"),
            ("rank1-1", Some(1), Some(5), "rank 5"),
            ("rank1-2", Some(1), Some(6), "rank 6"),
        ]
    );
}

/// A single log has nothing to compare.
#[test]
fn one_stream_has_no_cross_rank_section() {
    let b = crate::tables::built("tlparse-tests/simple.log");
    assert!(b.bundle.manifest.cross_rank.is_none());
    assert_eq!(b.bundle.manifest.counts.cross_input_saved_bytes, 0);
}

/// Bytes saved only because another rank logged the same payload: each input's distinct payload
/// bytes, summed, minus the distinct bytes of the whole bundle. Computed independently with
/// Python over the raw logs (md5-checked payloads, deduplicated per file and globally).
#[test]
fn sharing_across_ranks_is_counted() {
    for (dir, saved) in [
        ("multi_rank_logs", 325_459),
        ("multi_rank_messy_input", 226_387),
        ("multi_rank_runtime", 2_973_924),
        ("multi_rank_schedule", 98_472),
        ("graph_exec_order", 25_475),
    ] {
        let b = built_ranks(dir);
        assert_eq!(b.bundle.manifest.counts.cross_input_saved_bytes, saved, "{dir}");
    }
    // messy_input's two rank logs are byte-identical: rank 1 costs nothing.
    let b = built_ranks("multi_rank_messy_input");
    assert_eq!(b.bundle.manifest.counts.cross_input_saved_bytes, b.bundle.manifest.streams[1].payload_bytes);
}
