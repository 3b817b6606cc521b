//! insta snapshots of whole bundle files built from real fixtures: the manifest, the event
//! index, the stack table and the diagnostics. A change in any of them shows up in review.

use tlparse_build::bundle::reader::Bundle;

use crate::util::{build, fixture};

/// The manifest as reviewed: the shipped viewer's sizes and hashes are left out, so an edit to
/// the viewer changes no snapshot (tests/it/viewer.rs checks them against the files).
fn manifest_for_review(manifest: &tlparse_build::schema::Manifest) -> String {
    let mut value = serde_json::to_value(manifest).unwrap();
    for file in value["viewer"].as_array_mut().into_iter().flatten() {
        file["size"] = "[checked by tests/it/viewer.rs]".into();
        file["blake3"] = "[checked by tests/it/viewer.rs]".into();
    }
    serde_json::to_string_pretty(&value).unwrap()
}

/// Snapshots every JSON file of a bundle that is small enough to read in review.
fn snapshot_bundle(name: &str, rel: &str, max_rows: usize) {
    let (_dir, out, manifest) = build(&fixture(rel));
    insta::assert_snapshot!(format!("{name}__manifest"), manifest_for_review(&manifest));
    let b = Bundle::open(&out).unwrap();
    for s in &manifest.streams {
        // The index as stored (no `seq`, a `line` only where not implied), checked against the
        // rows the reader numbers from it.
        let stored = String::from_utf8(b.read_zst(&s.index, u64::MAX).unwrap()).unwrap();
        let stored: Vec<&str> = stored.lines().collect();
        let rows = b.index_rows(&s.id).unwrap();
        assert_eq!(stored.len(), rows.len());
        for (n, (text, row)) in stored.iter().zip(&rows).enumerate() {
            assert_eq!(row.seq, n as u64);
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            assert!(value.get("seq").is_none(), "{name}: row {n} stores seq");
            if let Some(line) = value.get("line") {
                assert_eq!(line.as_u64(), Some(row.line), "{name}: row {n}");
                let implied = rows[..n].last().map_or(1, |p| p.line + 1 + p.payload.as_ref().map_or(0, |p| p.lines));
                assert_ne!(row.line, implied, "{name}: row {n} stores a line that the row before implies");
            }
        }
        let lines: Vec<&str> = stored.iter().take(max_rows).copied().collect();
        let more = rows.len().saturating_sub(max_rows);
        let tail = if more > 0 { format!("\n... {more} more rows") } else { String::new() };
        insta::assert_snapshot!(format!("{name}__index_{}", s.id), format!("{}{tail}", lines.join("\n")));
        insta::assert_snapshot!(
            format!("{name}__stacks_{}", s.id),
            serde_json::to_string_pretty(&b.stacks(&s.id).unwrap()).unwrap()
        );
    }
    let diags: Vec<String> = b.diagnostics().unwrap().iter().map(|d| serde_json::to_string(d).unwrap()).collect();
    insta::assert_snapshot!(format!("{name}__diagnostics"), diags.join("\n"));
}

#[test]
fn comp_metrics() {
    snapshot_bundle("comp_metrics", "tlparse-tests/comp_metrics.log", usize::MAX);
}

#[test]
fn simple_corrupted_json() {
    snapshot_bundle("simple_corrupted_json", "tlparse-tests/simple_corrupted_json.log", usize::MAX);
}

#[test]
fn torch_2_15_simple() {
    snapshot_bundle("torch_2_15_simple", "torch-2.15/simple/dedicated_log_torch_trace_oqrpb3uu.log", usize::MAX);
}

#[test]
fn torch_2_15_export_dtrace_two_files_one_process() {
    snapshot_bundle("export_dtrace", "torch-2.15/export_dtrace", 60);
}

#[test]
fn multi_rank_schedule() {
    snapshot_bundle("multi_rank_schedule", "tlparse-tests/multi_rank_schedule", 40);
}
