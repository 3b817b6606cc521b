//! `validate` against every kind of tampering a review tried on bundles: each is reported as a
//! problem naming the file (never a panic, never exit 2), with the heap under 1 GiB, and nothing
//! outside the bundle is read (a sentinel file outside, which the tampering points at, shows up in
//! no output, and the problem names the refusal).

mod common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tlparse_bundle::DirSource;
use tlparse_bundle::reader::Bundle;
use tlparse_bundle::validate::validate;

#[global_allocator]
static ALLOC: common::Counting = common::Counting;

/// What the files outside the bundle hold; no output may ever show it.
const SECRET: &str = "SENTINEL-outside-the-bundle-5e1f";

/// The heap `validate` may use on any bundle.
const GIB: usize = 1 << 30;

/// A fresh bundle under `dir/bundle`, and `dir/outside` holding a secret text file
/// (`secret.txt`) and a zstd file of it (`secret.zst`).
fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let bundle = common::copy_bundle(dir);
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    std::fs::write(outside.join("secret.zst"), zstd::encode_all(SECRET.as_bytes(), 3).unwrap()).unwrap();
    (bundle, outside)
}

/// Validates `bundle`, checking the heap stays under 1 GiB and that it reports problems (rather
/// than refusing the bundle), none showing the secret.
fn problems(bundle: &Path) -> Vec<String> {
    let (result, peak) = common::measure(|| validate(DirSource::new(bundle)));
    assert!(peak < GIB, "validate took {peak} bytes of heap");
    let problems = result.unwrap_or_else(|e| panic!("a bundle with a manifest is reported, not refused: {e}"));
    assert!(!problems.is_empty(), "tampering went unnoticed");
    eprintln!("peak heap {:.1} MiB; problems:\n  {}", peak as f64 / (1 << 20) as f64, problems.join("\n  "));
    for p in &problems {
        assert!(!p.contains(SECRET), "a problem shows what lies outside the bundle: {p}");
    }
    problems
}

/// Asserts some problem holds every one of `parts`.
fn assert_reported(problems: &[String], parts: &[&str]) {
    assert!(
        problems.iter().any(|p| parts.iter().all(|part| p.contains(part))),
        "no problem mentions {parts:?}:\n{}",
        problems.join("\n")
    );
}

fn manifest(bundle: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(bundle.join("manifest.json")).unwrap()).unwrap()
}

/// The path of the first pack, as the manifest lists it.
fn first_pack(bundle: &Path) -> String {
    manifest(bundle)["blobs"]["packs"][0]["path"].as_str().unwrap().to_string()
}

/// Decompresses a zstd JSON file of the bundle, edits it, and compresses it back.
fn edit_zst_json(file: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value: Value =
        serde_json::from_slice(&zstd::decode_all(&std::fs::read(file).unwrap()[..]).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(file, zstd::encode_all(&serde_json::to_vec(&value).unwrap()[..], 3).unwrap()).unwrap();
}

/// `head`, then `unit` repeated to 16 MiB times `frames`, as zstd: one frame compressed once and
/// written `frames` times (a reader decompresses concatenated frames as one stream). 256 frames
/// are about 400 KB on disk and 4 GiB decompressed.
fn zstd_bomb(head: &[u8], unit: &[u8], frames: usize) -> Vec<u8> {
    let mut out = zstd::encode_all(head, 3).unwrap();
    let block: Vec<u8> = unit.iter().cycle().take(16 << 20).copied().collect();
    let frame = zstd::encode_all(&block[..], 3).unwrap();
    for _ in 0..frames {
        out.extend_from_slice(&frame);
    }
    out
}

#[test]
fn the_untouched_bundle_is_valid_within_the_heap_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (bundle, _) = setup(dir.path());
    let (result, peak) = common::measure(|| validate(DirSource::new(&bundle)));
    assert_eq!(result.unwrap(), Vec::<String>::new());
    assert!(peak < 64 << 20, "{peak}");
}

#[test]
fn a_flipped_byte_in_a_pack_is_reported_resealed_or_not() {
    for reseal in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (bundle, _) = setup(dir.path());
        let pack = first_pack(&bundle);
        let mut bytes = std::fs::read(bundle.join(&pack)).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0xff;
        std::fs::write(bundle.join(&pack), bytes).unwrap();
        common::edit_manifest(&bundle, reseal, |_| {});
        let problems = problems(&bundle);
        if reseal {
            // The manifest matches the new bytes; the pack's content gives it away.
            assert!(!problems.iter().any(|p| p.contains("blake3")), "{problems:?}");
            assert_reported(&problems, &[&format!("{pack}: ")]);
        } else {
            assert_reported(&problems, &[&pack, "blake3 does not match manifest.json"]);
        }
    }
}

#[test]
fn a_truncated_table_is_reported_resealed_or_not() {
    for reseal in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (bundle, _) = setup(dir.path());
        let table = bundle.join("tables/log0/compile_directory.json.zst");
        let bytes = std::fs::read(&table).unwrap();
        std::fs::write(&table, &bytes[..bytes.len() / 2]).unwrap();
        common::edit_manifest(&bundle, reseal, |_| {});
        let problems = problems(&bundle);
        assert_reported(&problems, &["tables/log0/compile_directory.json.zst: cannot be read"]);
        if !reseal {
            assert_reported(&problems, &["tables/log0/compile_directory.json.zst: size"]);
        }
    }
}

#[test]
fn a_file_entry_pointing_outside_is_refused() {
    for target in ["../outside/secret.txt", "ABSOLUTE"] {
        let dir = tempfile::tempdir().unwrap();
        let (bundle, outside) = setup(dir.path());
        let target = match target {
            "ABSOLUTE" => outside.join("secret.txt").to_str().unwrap().to_string(),
            relative => relative.to_string(),
        };
        common::edit_manifest(&bundle, true, |m| {
            m["files"].as_array_mut().unwrap().push(json!({"path": target, "size": 0, "blake3": "", "schema": null}));
        });
        let problems = problems(&bundle);
        assert_reported(&problems, &[&target, "path is not allowed in a bundle", "refused"]);
    }
}

#[test]
fn a_pack_path_pointing_outside_is_refused_by_validate_and_by_the_reader() {
    for target in ["../outside/secret.zst", "ABSOLUTE"] {
        let dir = tempfile::tempdir().unwrap();
        let (bundle, outside) = setup(dir.path());
        let target = match target {
            "ABSOLUTE" => outside.join("secret.zst").to_str().unwrap().to_string(),
            relative => relative.to_string(),
        };
        let pack = first_pack(&bundle);
        common::edit_manifest(&bundle, true, |m| {
            m["blobs"]["packs"][0]["path"] = json!(target);
            for f in m["files"].as_array_mut().unwrap() {
                if f["path"] == json!(pack) {
                    f["path"] = json!(target);
                }
            }
        });
        let problems = problems(&bundle);
        assert_reported(&problems, &[&target, "path is not allowed in a bundle", "refused"]);
        // `cat` reads blobs through the same reader: a blob of that pack is refused too.
        let b = Bundle::open(&bundle).unwrap();
        let shard: Value = serde_json::from_slice(
            &zstd::decode_all(&std::fs::read(bundle.join("blobs/index/all.json.zst")).unwrap()[..]).unwrap(),
        )
        .unwrap();
        let in_first_pack = shard.as_object().unwrap().iter().find(|(_, l)| l["pack"] == 0).unwrap().0;
        let err = b.blob(in_first_pack).unwrap_err().to_string();
        assert!(err.contains("path is not allowed in a bundle") && !err.contains(SECRET), "{err}");
    }
}

#[test]
fn a_stream_index_pointing_outside_is_refused() {
    for target in ["../outside/secret.zst", "ABSOLUTE"] {
        let dir = tempfile::tempdir().unwrap();
        let (bundle, outside) = setup(dir.path());
        let target = match target {
            "ABSOLUTE" => outside.join("secret.zst").to_str().unwrap().to_string(),
            relative => relative.to_string(),
        };
        common::edit_manifest(&bundle, true, |m| {
            m["streams"][0]["index"] = json!(target);
            for f in m["files"].as_array_mut().unwrap() {
                if f["path"] == "index/log0.jsonl.zst" {
                    f["path"] = json!(target);
                }
            }
        });
        let problems = problems(&bundle);
        assert_reported(&problems, &[&target, "path is not allowed in a bundle", "refused"]);
        assert!(Bundle::open(&bundle).unwrap().index_rows("log0").unwrap_err().to_string().contains("not allowed"));
    }
}

#[test]
fn a_blob_index_path_template_pointing_outside_is_refused() {
    for target in ["../outside/{prefix}.zst", "ABSOLUTE"] {
        let dir = tempfile::tempdir().unwrap();
        let (bundle, outside) = setup(dir.path());
        // The shard the template names, outside: a real shard, so following it would "work".
        std::fs::copy(bundle.join("blobs/index/all.json.zst"), outside.join("all.zst")).unwrap();
        let target = match target {
            "ABSOLUTE" => format!("{}/{{prefix}}.zst", outside.to_str().unwrap()),
            relative => relative.to_string(),
        };
        common::edit_manifest(&bundle, true, |m| m["blobs"]["index_path"] = json!(target));
        let problems = problems(&bundle);
        assert_reported(&problems, &["manifest.json: blobs.index_path", "path is not allowed in a bundle", "refused"]);
        let hash = manifest(&bundle)["files"][0]["blake3"].as_str().unwrap()[..32].to_string();
        let err = Bundle::open(&bundle).unwrap().locate(&hash).unwrap_err().to_string();
        assert!(err.contains("path is not allowed in a bundle"), "{err}");
    }
}

#[cfg(unix)]
#[test]
fn a_listed_file_replaced_by_a_symlink_to_outside_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (bundle, outside) = setup(dir.path());
    // The outside file is a real copy, resealed: only the symlink is wrong.
    std::fs::copy(bundle.join("stacks/log0.json"), outside.join("stacks.json")).unwrap();
    std::fs::remove_file(bundle.join("stacks/log0.json")).unwrap();
    std::os::unix::fs::symlink(outside.join("stacks.json"), bundle.join("stacks/log0.json")).unwrap();
    common::edit_manifest(&bundle, true, |_| {});
    let problems = problems(&bundle);
    assert_reported(&problems, &["stacks/log0.json: is a symlink, which a bundle never holds"]);
    assert_reported(&problems, &["stacks/log0.json: is or lies under a symlink", "refused"]);
}

#[cfg(unix)]
#[test]
fn added_symlinks_to_a_file_and_to_a_directory_outside_are_reported_and_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let (bundle, outside) = setup(dir.path());
    std::os::unix::fs::symlink(outside.join("secret.txt"), bundle.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, bundle.join("tables/extra")).unwrap();
    // Listing a file through the directory link does not make it readable.
    common::edit_manifest(&bundle, false, |m| {
        m["files"]
            .as_array_mut()
            .unwrap()
            .push(json!({"path": "tables/extra/secret.txt", "size": 0, "blake3": "", "schema": null}));
    });
    let problems = problems(&bundle);
    assert_reported(&problems, &["notes.txt: is a symlink, which a bundle never holds"]);
    assert_reported(&problems, &["tables/extra: is a symlink, which a bundle never holds"]);
    assert_reported(&problems, &["tables/extra/secret.txt: is or lies under a symlink", "refused"]);
}

#[test]
fn an_overflowing_blob_offset_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (bundle, _) = setup(dir.path());
    let mut edited = String::new();
    edit_zst_json(&bundle.join("blobs/index/all.json.zst"), |shard| {
        let (hash, loc) = shard.as_object_mut().unwrap().iter_mut().next().unwrap();
        loc["offset"] = json!(u64::MAX - 1);
        edited = hash.clone();
    });
    common::edit_manifest(&bundle, true, |_| {});
    let problems = problems(&bundle);
    assert_reported(&problems, &["blobs/index/all.json.zst: blob", &edited, "lies outside pack"]);
    let err = Bundle::open(&bundle).unwrap().blob(&edited).unwrap_err().to_string();
    assert!(err.contains("lies outside the pack"), "{err}");
}

#[test]
fn huge_declared_sizes_are_reported_without_being_allocated() {
    // A file's size, a pack's raw_size, a blob's size: each near u64::MAX.
    let dir = tempfile::tempdir().unwrap();
    let (bundle, _) = setup(dir.path());
    let pack = first_pack(&bundle);
    let mut edited = String::new();
    edit_zst_json(&bundle.join("blobs/index/all.json.zst"), |shard| {
        let (hash, loc) = shard.as_object_mut().unwrap().iter_mut().nth(1).unwrap();
        loc["size"] = json!(u64::MAX - 7);
        edited = hash.clone();
    });
    common::edit_manifest(&bundle, true, |m| m["blobs"]["packs"][0]["raw_size"] = json!(u64::MAX - 1));
    // After the reseal, which would set it right.
    common::edit_manifest(&bundle, false, |m| m["files"][0]["size"] = json!(u64::MAX));
    let first_file = manifest(&bundle)["files"][0]["path"].as_str().unwrap().to_string();
    let problems = problems(&bundle);
    assert_reported(&problems, &[&first_file, "manifest.json says 18446744073709551615"]);
    assert_reported(&problems, &[&pack, "declares 18446744073709551614 bytes decompressed, over the limit"]);
    assert_reported(&problems, &["blobs/index/all.json.zst: blob", &edited, "lies outside pack"]);
}

#[test]
fn a_huge_shard_prefix_length_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (bundle, _) = setup(dir.path());
    common::edit_manifest(&bundle, true, |m| m["blobs"]["index_prefix_len"] = json!(4_000_000_000u32));
    let problems = problems(&bundle);
    assert_reported(&problems, &["manifest.json: blobs.index_prefix_len 4000000000 is more than 8"]);
    let hash = "0123456789abcdef0123456789abcdef";
    let err = Bundle::open(&bundle).unwrap().locate(hash).unwrap_err().to_string();
    assert!(err.contains("index_prefix_len 4000000000"), "{err}");
}

#[test]
fn a_zstd_bomb_in_an_index_is_refused_within_memory() {
    // 4 GiB of `[0,0,0,...` in about 400 KB: one line that never ends.
    let dir = tempfile::tempdir().unwrap();
    let (bundle, _) = setup(dir.path());
    let bomb = zstd_bomb(b"[", b"0,", 256);
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    std::fs::write(bundle.join("index/log0.jsonl.zst"), bomb).unwrap();
    common::edit_manifest(&bundle, true, |_| {});
    let problems = problems(&bundle);
    assert_reported(&problems, &["index/log0.jsonl.zst:1: line longer than", "refused"]);
}

#[test]
fn a_zstd_bomb_of_short_lines_in_an_index_stops_after_a_few_problems() {
    // 4 GiB of `[0]` lines: every line is a problem, so reading stops early.
    let dir = tempfile::tempdir().unwrap();
    let (bundle, _) = setup(dir.path());
    std::fs::write(bundle.join("index/log0.jsonl.zst"), zstd_bomb(b"", b"[0]\n", 256)).unwrap();
    common::edit_manifest(&bundle, true, |_| {});
    let started = std::time::Instant::now();
    let problems = problems(&bundle);
    assert_reported(&problems, &["index/log0.jsonl.zst: more than", "problems; stopped reading it"]);
    assert!(started.elapsed().as_secs() < 60);
}

/// Runs `work` on its own thread and waits for it at most `bound`: a reader that goes on reading
/// fails the test then, rather than holding it for minutes.
fn within<T: Send + 'static>(bound: std::time::Duration, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(work()));
    result.recv_timeout(bound).unwrap_or_else(|_| panic!("still reading after {bound:?}"))
}

#[test]
fn an_index_that_inflates_past_the_entries_the_manifest_declares_is_stopped_there() {
    // The real index, then 4 GiB of valid rows in about 400 KB: each row would be parsed and
    // checked, for minutes, were reading not stopped at the rows manifest.json declares.
    let dir = tempfile::tempdir().unwrap();
    let (bundle, _) = setup(dir.path());
    let index = bundle.join("index/log0.jsonl.zst");
    let rows = zstd::decode_all(&std::fs::read(&index).unwrap()[..]).unwrap();
    let declared = rows.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(manifest(&bundle)["streams"][0]["entries"], declared);
    let row = br#"{"ts":"1206 15:18:15.925000","level":"V","src":"a.py:1","kind":"str","meta":{}}"#;
    let bomb = zstd_bomb(&rows, &[&row[..], b"\n"].concat(), 256);
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    std::fs::write(&index, bomb).unwrap();
    common::edit_manifest(&bundle, true, |_| {});
    let bound = std::time::Duration::from_secs(5);
    let checked = bundle.clone();
    let problems = within(bound, move || validate(DirSource::new(&checked)).unwrap());
    let past = format!("index/log0.jsonl.zst:{}: more lines than the {declared} manifest.json declares", declared + 1);
    assert_reported(&problems, &[&past, "the rest is not read"]);
    // The reader's own index rows stop there too.
    let read = within(bound, move || Bundle::open(&bundle).unwrap().index_rows("log0").map(|r| r.len()));
    assert!(read.unwrap_err().to_string().contains(&past));
}

#[test]
fn a_zstd_bomb_in_a_table_is_refused_within_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (bundle, _) = setup(dir.path());
    let table = "tables/log0/compile_directory.json.zst";
    std::fs::write(bundle.join(table), zstd_bomb(b"[", b"0,", 256)).unwrap();
    common::edit_manifest(&bundle, true, |_| {});
    let problems = problems(&bundle);
    assert_reported(&problems, &[table, "decompresses to more than", "refused"]);
}

#[test]
fn a_table_under_the_size_limit_that_would_expand_in_memory_is_refused() {
    // 48 MiB of `[0,0,...]` fits the document limit, but as a serde_json::Value it would take
    // 72 bytes for every 2: it is refused before parsing.
    let dir = tempfile::tempdir().unwrap();
    let (bundle, _) = setup(dir.path());
    let table = "tables/log0/compile_directory.json.zst";
    let mut doc = b"[".to_vec();
    doc.extend(b"0,".iter().cycle().take(48 << 20));
    doc.extend(b"0]");
    std::fs::write(bundle.join(table), zstd::encode_all(&doc[..], 3).unwrap()).unwrap();
    drop(doc);
    common::edit_manifest(&bundle, true, |_| {});
    let problems = problems(&bundle);
    assert_reported(&problems, &[table, "would take up to", "over the limit"]);
}

#[test]
fn a_deeply_nested_manifest_is_a_problem_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let (bundle, _) = setup(dir.path());
    std::fs::write(bundle.join("manifest.json"), "[".repeat(100_000)).unwrap();
    let problems = problems(&bundle);
    assert_reported(&problems, &["manifest.json: refused: JSON nested more than 128 levels deep"]);
}

#[test]
fn a_manifest_that_is_not_json_or_of_another_format_is_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    let (bundle, _) = setup(dir.path());
    std::fs::write(bundle.join("manifest.json"), "{\"format\": \"tlparse-bundle\", ").unwrap();
    assert_reported(&problems(&bundle), &["manifest.json: cannot be parsed: EOF"]);
    std::fs::write(bundle.join("manifest.json"), r#"{"format": "something-else"}"#).unwrap();
    assert_reported(&problems(&bundle), &["manifest.json: not a tlparse-bundle manifest", "something-else"]);
}

#[test]
fn wrong_types_in_the_manifest_are_problems() {
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit); 4] = [
        ("a string for a number", |m| m["files"][0]["size"] = json!("1234")),
        ("an object for a list", |m| m["files"] = json!({"a": 1})),
        ("a negative number", |m| m["streams"][0]["entries"] = json!(-1)),
        ("a number for an object", |m| m["blobs"] = json!(7)),
    ];
    for (what, edit) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (bundle, _) = setup(dir.path());
        common::edit_manifest(&bundle, false, edit);
        let problems = problems(&bundle);
        assert_reported(&problems, &["manifest.json: does not follow schema/manifest.schema.json"]);
        assert!(Bundle::open(&bundle).is_err(), "{what}: the reader opened it");
    }
}

#[test]
fn a_directory_without_a_manifest_is_no_bundle() {
    let dir = tempfile::tempdir().unwrap();
    assert!(validate(DirSource::new(dir.path())).is_err());
    assert!(validate(DirSource::new(&dir.path().join("nope"))).is_err());
}

#[test]
fn the_estimate_of_json_memory_bounds_what_serde_json_allocates() {
    // Shapes that expand most, and every JSON document of the committed bundle.
    let n = 100_000;
    let mut docs: Vec<(String, Vec<u8>)> = vec![
        ("zeros".into(), format!("[{}0]", "0,".repeat(n)).into_bytes()),
        ("empty lists".into(), format!("[{}[]]", "[],".repeat(n)).into_bytes()),
        ("one-element lists".into(), format!("[{}[0]]", "[0],".repeat(n)).into_bytes()),
        ("empty objects".into(), format!("[{}{{}}]", "{},".repeat(n)).into_bytes()),
        ("one-key objects".into(), format!("[{}{{\"a\":0}}]", "{\"a\":0},".repeat(n)).into_bytes()),
        (
            "many keys".into(),
            format!("{{{}\"end\":0}}", (0..n).map(|i| format!("\"{i}\":0,")).collect::<String>()).into_bytes(),
        ),
        ("escaped strings".into(), format!("[{}\"\"]", "\"\\n\\\"\",".repeat(n)).into_bytes()),
        ("unclosed".into(), format!("[{}", "0,".repeat(n)).into_bytes()),
    ];
    for entry in walk(&common::committed_bundle()) {
        let name = entry.to_string_lossy().into_owned();
        let bytes = std::fs::read(&entry).unwrap();
        if name.ends_with(".json") {
            docs.push((name, bytes));
        } else if name.ends_with(".json.zst") {
            docs.push((name, zstd::decode_all(&bytes[..]).unwrap()));
        }
    }
    for (what, doc) in docs {
        let estimate = tlparse_bundle::reader::json_memory(&doc).unwrap();
        let (_, peak) = common::measure(|| serde_json::from_slice::<Value>(&doc).ok());
        assert!(peak as u64 <= estimate, "{what}: estimated {estimate}, took {peak}");
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { files.extend(walk(&path)) } else { files.push(path) }
    }
    files
}
