//! The JSON the docs show is real: every ```json fence of `docs/**/*.md` and `docs/llms-full.txt`
//! parses (as one JSON value, or as JSON Lines), and every one in a `.md` page is cut from a real
//! bundle: the comment on the line above it, `<!-- example: FIXTURE FILE -->`, names a fixture and
//! a file of its bundle, and the example is an abridgement of a value in that file (objects may
//! leave out members, lists items; nothing is changed, and `[]` means an empty list). A fence
//! marked `<!-- cors: NAME -->` instead is a storage host's CORS configuration, not bundle data:
//! tests/docs/hosting.test.mjs checks those.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::fixture;

/// A ```json fence: where it starts, its text, and the `<!-- example: ... -->` line above it.
struct Fence {
    at: String,
    body: String,
    example: Option<(String, String)>,
    /// Marked `<!-- cors: NAME -->`: a host's configuration, checked by tests/docs.
    is_cors_config: bool,
}

fn doc_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new("docs")
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    assert!(files.len() > 20, "docs/ has its pages");
    files
}

fn fences(path: &Path) -> Vec<Fence> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() == "```json" {
            let start = i;
            let end = (i + 1..lines.len()).find(|&j| lines[j].trim_end() == "```").unwrap_or_else(|| {
                panic!("{}:{}: unclosed ```json fence", path.display(), start + 1);
            });
            let above = lines[..start].iter().rev().find(|l| !l.trim().is_empty()).copied().unwrap_or("");
            let example = above
                .trim()
                .strip_prefix("<!-- example: ")
                .and_then(|r| r.strip_suffix(" -->"))
                .and_then(|r| r.split_once(' '))
                .map(|(f, p)| (f.to_string(), p.to_string()));
            out.push(Fence {
                at: format!("{}:{}", path.display(), start + 1),
                body: lines[start + 1..end].join("\n"),
                example,
                is_cors_config: above.trim().starts_with("<!-- cors: "),
            });
            i = end;
        }
        i += 1;
    }
    out
}

/// The values of a fence: one JSON document, or one per line.
fn parse(fence: &Fence) -> Result<Vec<Value>, String> {
    match serde_json::from_str::<Value>(&fence.body) {
        Ok(v) => Ok(vec![v]),
        Err(whole) => fence
            .body
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str::<Value>)
            .collect::<Result<_, _>>()
            .map_err(|_| format!("{}: not JSON nor JSON Lines: {whole}", fence.at)),
    }
}

#[test]
fn every_json_fence_in_the_docs_parses() {
    let mut files = doc_files();
    files.push(PathBuf::from("docs/llms-full.txt"));
    let mut problems = Vec::new();
    let mut count = 0;
    for file in files.iter().filter(|f| f.exists()) {
        for fence in fences(file) {
            count += 1;
            if let Err(e) = parse(&fence) {
                problems.push(e);
            }
        }
    }
    assert!(count > 20, "found the fences");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// True when `example` is `real` with members or list items left out.
fn abridges(example: &Value, real: &Value) -> bool {
    match (example, real) {
        (Value::Object(e), Value::Object(r)) => e.iter().all(|(k, v)| r.get(k).is_some_and(|rv| abridges(v, rv))),
        (Value::Array(e), Value::Array(r)) => {
            if e.is_empty() {
                return r.is_empty();
            }
            let mut rest = r.iter();
            e.iter().all(|item| rest.any(|candidate| abridges(item, candidate)))
        }
        (Value::Number(e), Value::Number(r)) => e == r || e.as_f64() == r.as_f64(),
        _ => example == real,
    }
}

/// `value` or any value inside it that `example` abridges.
fn found_in(example: &Value, value: &Value) -> bool {
    abridges(example, value)
        || match value {
            Value::Object(m) => m.values().any(|v| found_in(example, v)),
            Value::Array(a) => a.iter().any(|v| found_in(example, v)),
            _ => false,
        }
}

/// A bundle file as JSON (a JSONL file as the list of its lines).
fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.to_string_lossy();
    let text = if name.ends_with(".zst") {
        zstd::decode_all(&bytes[..]).unwrap()
    } else if name.ends_with(".gz") {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut out).unwrap();
        out
    } else {
        bytes
    };
    if name.contains(".jsonl") {
        let lines = text.split(|&b| b == b'\n').filter(|l| !l.is_empty());
        Value::Array(lines.map(|l| serde_json::from_slice(l).unwrap()).collect())
    } else {
        serde_json::from_slice(&text).unwrap()
    }
}

#[test]
fn every_json_example_in_the_docs_is_cut_from_a_bundle_of_its_fixture() {
    let fences: Vec<Fence> = doc_files().iter().flat_map(|f| fences(f)).collect();
    let mut problems = Vec::new();
    let mut by_fixture: BTreeMap<&str, Vec<&Fence>> = BTreeMap::new();
    for fence in &fences {
        match &fence.example {
            Some((fixture, _)) => by_fixture.entry(fixture).or_default().push(fence),
            None if fence.is_cors_config => problems.extend(parse(fence).err()),
            None => problems.push(format!(
                "{}: no `<!-- example: FIXTURE FILE -->` line above the fence names where it is cut from",
                fence.at
            )),
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for (i, (name, fences)) in by_fixture.iter().enumerate() {
        let out = dir.path().join(i.to_string());
        let built = crate::util::run(&[fixture(name).as_str(), "-o", out.to_str().unwrap(), "--no-viewer", "-q"]);
        assert!(built.status.success(), "{name}: {}", String::from_utf8_lossy(&built.stderr));
        for fence in fences {
            let (_, file) = fence.example.as_ref().unwrap();
            let real = read_json(&out.join(file));
            let values = match parse(fence) {
                Ok(values) => values,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            for (n, value) in values.iter().enumerate() {
                if !found_in(value, &real) {
                    problems.push(format!(
                        "{} (value {n}): not found in {file} of a bundle of {name}: fix the example (cut it from \
                         the bundle again) or the comment above it",
                        fence.at
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn abridging_leaves_out_and_never_changes() {
    let real: Value = serde_json::from_str(r#"{"a": 1, "b": [1, 2, {"c": 3, "d": 4}], "e": []}"#).unwrap();
    let ok = [r#"{"a": 1}"#, r#"{"b": [2]}"#, r#"{"b": [1, {"d": 4}]}"#, r#"{"e": []}"#, r#"{"a": 1.0}"#];
    for e in ok {
        assert!(abridges(&serde_json::from_str(e).unwrap(), &real), "{e}");
    }
    let bad = [r#"{"a": 2}"#, r#"{"b": [2, 1]}"#, r#"{"b": []}"#, r#"{"x": 1}"#, r#"{"b": [{"c": 4}]}"#];
    for e in bad {
        assert!(!abridges(&serde_json::from_str(e).unwrap(), &real), "{e}");
    }
}
