//! Property tests of the parser, the blob store and the index rows' numbering.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use tlparse_build::bundle::blobs::{self, ChunkWriter};
use tlparse_build::parse::{self, Routed};

/// Where proptest keeps the failing cases of these tests: in the one regressions folder at the
/// repository's root, beside those of `src/` (proptest's default would put them in
/// `tests/proptest-regressions/`, the sibling of the folder holding this binary's `main.rs`).
const REGRESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/proptest-regressions/tests/it/properties.txt");

/// The tests' configuration: `cases` cases, failures kept in [`REGRESSIONS`].
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(REGRESSIONS))),
        ..ProptestConfig::with_cases(cases)
    }
}

/// Pieces that make random text look like a log, so the parser's deeper paths get exercised.
fn log_like_text() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"V0101 00:00:00.000000 1 a.py:1] ".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\n\t".to_vec()),
        Just(b"{\"artifact\": {\"name\": \"x\", \"encoding\": \"json\"}, \"has_payload\": \"".to_vec()),
        Just(b"{\"str\": [\"f.py\", 0]}".to_vec()),
        Just(b"{\"dynamo_start\": {\"stack\": [{\"line\": 1, \"name\": \"f\", \"filename\": 0}]}, \"frame_id\": 0, \"frame_compile_id\": 0}".to_vec()),
        Just(b"\"}".to_vec()),
        Just(b"\r".to_vec()),
        any::<Vec<u8>>(),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

/// One synthetic process log: `str` entries, entries with stacks, payloads with md5s.
#[derive(Debug, Clone)]
struct Entry {
    kind: &'static str,
    payload: Option<Vec<String>>,
    /// Index into the strings defined so far, for a stack frame.
    frame_file: Option<usize>,
}

fn process_log(pid: u64, entries: &[Entry], file_names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, name) in file_names.iter().enumerate() {
        out.push(format!(
            "V0101 00:00:00.000000 {pid} s.py:1] {{\"str\": [{}, {i}]}}",
            serde_json::to_string(name).unwrap()
        ));
    }
    for (i, e) in entries.iter().enumerate() {
        let mut env = serde_json::Map::new();
        let meta = match e.frame_file {
            Some(f) => {
                serde_json::json!({"stack": [{"line": i, "name": "fn", "filename": f % file_names.len().max(1)}]})
            }
            None => serde_json::json!({}),
        };
        env.insert(e.kind.to_string(), meta);
        env.insert("frame_id".into(), (i % 3).into());
        env.insert("frame_compile_id".into(), 0.into());
        if let Some(lines) = &e.payload {
            let digest: [u8; 16] = <md5::Md5 as md5::Digest>::digest(lines.join("\n").as_bytes()).into();
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            env.insert("has_payload".into(), hex.into());
        }
        let mut entry = format!("V0101 00:00:0{}.000000 {pid} x.py:{i}] {}", i % 10, serde_json::Value::Object(env));
        for l in e.payload.iter().flatten() {
            entry.push_str("\n\t");
            entry.push_str(l);
        }
        out.push(entry);
    }
    out
}

fn entry_strategy() -> impl Strategy<Value = Entry> {
    (
        prop_oneof![Just("dynamo_start"), Just("artifact"), Just("chromium_event"), Just("some_new_kind")],
        proptest::option::of(proptest::collection::vec("[ -~]{0,20}", 0..4)),
        proptest::option::of(0usize..4),
    )
        .prop_map(|(kind, payload, frame_file)| Entry { kind, payload, frame_file })
}

/// The entries of each stream, without line numbers (which interleaving changes).
fn streams(text: &str) -> Vec<Vec<String>> {
    let log = parse::parse_log(text.as_bytes(), None).unwrap();
    assert!(log.unreadable.is_empty(), "{:?}", log.unreadable);
    log.streams
        .values()
        .map(|rows: &Vec<Routed>| {
            rows.iter()
                .map(|r| {
                    let e = &r.entry;
                    format!(
                        "{}|{}|{:?}|{:?}|{:?}|{:?}",
                        e.kind,
                        e.meta.to_value(),
                        e.compile_id,
                        e.payload.as_ref().map(|p| (p.hash, p.md5_mismatch)),
                        r.stacks,
                        e.problems
                    )
                })
                .collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn the_parser_never_panics(bytes in log_like_text()) {
        let log = parse::parse_log(&bytes[..], None).unwrap();
        // Every line is accounted for: entries plus unreadable runs cover the input.
        let covered: u64 = log.streams.values().flatten().map(|r| r.entry.end_line - r.entry.line + 1).sum::<u64>()
            + log.unreadable.iter().map(|u| u.end_line - u.line + 1).sum::<u64>();
        prop_assert_eq!(covered, log.lines);
    }

    #[test]
    fn interleaved_processes_demultiplex_back_to_the_originals(
        a in proptest::collection::vec(entry_strategy(), 1..20),
        b in proptest::collection::vec(entry_strategy(), 1..20),
        schedule in proptest::collection::vec(any::<bool>(), 0..60),
    ) {
        let (la, lb) = (process_log(11, &a, &["/a/one.py".into(), "/a/two.py".into()]), process_log(22, &b, &["/b/other.py".into()]));
        let mut merged = Vec::new();
        let (mut ia, mut ib) = (la.iter().peekable(), lb.iter().peekable());
        let mut turns = schedule.iter().chain(std::iter::repeat(&true));
        while ia.peek().is_some() || ib.peek().is_some() {
            let take_a = *turns.next().unwrap();
            let next = if (take_a && ia.peek().is_some()) || ib.peek().is_none() { ia.next() } else { ib.next() };
            merged.push(next.unwrap().clone());
        }
        let separate: Vec<Vec<String>> = [la.join("\n"), lb.join("\n")].iter().flat_map(|t| streams(t)).collect();
        prop_assert_eq!(streams(&merged.join("\n")), separate);
    }

    #[test]
    fn the_blob_store_round_trips(
        files in proptest::collection::vec(proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..3000), 0..60), 1..4),
        repeat in 0usize..3,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut chunks = Vec::new();
        for (i, blobs_of_file) in files.iter().enumerate() {
            let mut w = ChunkWriter::new(dir.path(), &format!("f{i}"));
            for blob in blobs_of_file.iter().chain(files[0].iter().take(repeat)) {
                w.add(blob.len() % blobs::CLASSES, parse::blob_id(blob), blob).unwrap();
            }
            chunks.push(w.finish().unwrap());
        }
        let store = blobs::assemble(dir.path(), dir.path(), chunks, tlparse_build::bundle::Placement::Move).unwrap();
        let distinct: std::collections::HashSet<&Vec<u8>> = files.iter().flatten().collect();
        let locations = store.locations.sorted().unwrap();
        prop_assert_eq!(locations.len(), distinct.len());
        prop_assert_eq!(store.locations.len(), distinct.len());
        prop_assert!(locations.windows(2).all(|w| w[0].0 < w[1].0), "sorted, no duplicates");
        for blob in distinct {
            let loc = store.get(&parse::blob_id(blob)).unwrap().unwrap();
            let pack = &store.packs[loc.pack as usize];
            let data = zstd::decode_all(&std::fs::read(dir.path().join(&pack.path)).unwrap()[..]).unwrap();
            prop_assert_eq!(data.len() as u64, pack.raw_size);
            prop_assert_eq!(&data[loc.offset as usize..(loc.offset + loc.size) as usize], &blob[..]);
        }
        let stored: u64 = store.packs.iter().map(|p| p.raw_size).sum();
        prop_assert_eq!(stored, locations.iter().map(|(_, l)| l.size).sum::<u64>(), "each blob stored once");
        prop_assert_eq!(stored, store.locations.blob_bytes());
    }
}

proptest! {
    // Each case builds and validates a bundle: fewer cases than above.
    #![proptest_config(config(48))]

    /// Index rows store `line` only where the rows before do not imply it: across
    /// blank, damaged and `\r` lines the reader still gives every entry the header line the
    /// parser found for it.
    #[test]
    fn index_rows_read_back_with_the_parsers_line_numbers(text in log_like_text()) {
        // A first entry, without which the build refuses the file as no TORCH_TRACE log.
        let bytes = [&b"V0101 00:00:00.000000 1 a.py:1] {\"str\": [\"f.py\", 0]}\n"[..], &text].concat();
        let parsed = parse::parse_log(&bytes[..], None).unwrap();
        let mut parsed_lines: Vec<u64> = parsed.streams.values().flatten().map(|r| r.entry.line).collect();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log.log");
        std::fs::write(&log, &bytes).unwrap();
        let out = dir.path().join("bundle");
        let manifest = crate::util::build_to(&camino::Utf8PathBuf::from_path_buf(log).unwrap(), &out);
        let bundle = tlparse_build::bundle::reader::Bundle::open(&out).unwrap();
        let mut read_lines = Vec::new();
        for s in &manifest.streams {
            for (n, row) in bundle.index_rows(&s.id).unwrap().into_iter().enumerate() {
                prop_assert_eq!(row.seq, n as u64);
                read_lines.push(row.line);
            }
        }
        parsed_lines.sort_unstable();
        read_lines.sort_unstable();
        prop_assert_eq!(read_lines, parsed_lines);
    }
}
