//! Tidy: rules about the repository's files themselves, as rust-analyzer's tidy test keeps them.
//! The files are git's (tracked, plus new ones not ignored): nothing cached or built is committed,
//! every source file opens with a header saying what it is, the prose that states the format's
//! version agrees with the code, the paths docs and tests name exist, proptest keeps its
//! failing cases in one folder, and the tests ARCHITECTURE.md names for its invariants exist.

use std::path::Path;
use std::process::Command;

use tlparse_build::schema::{FORMAT_VERSION, MIN_READER_VERSION};

/// The files git knows of, tracked or new and not ignored, that exist in the work tree.
fn repo_files() -> Vec<String> {
    let out = Command::new("git")
        .args(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git ls-files: {}", String::from_utf8_lossy(&out.stderr));
    let mut files: Vec<String> = String::from_utf8(out.stdout)
        .expect("UTF-8 paths")
        .split('\0')
        .filter(|p| !p.is_empty() && Path::new(p).is_file())
        .map(str::to_owned)
        .collect();
    files.sort();
    files.dedup();
    files
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Fails with every problem found, one a line, under `rule`.
fn assert_none(rule: &str, problems: Vec<String>) {
    assert!(problems.is_empty(), "{rule}:\n  {}", problems.join("\n  "));
}

// ---- No committed caches or build outputs --------------------------------------------------------

/// Why `path` is a cache or a build output that no commit should carry, if it is one.
fn cache_or_output(path: &str) -> Option<&'static str> {
    const FOLDERS: &[(&str, &str)] = &[
        ("__pycache__", "Python's bytecode cache"),
        (".pytest_cache", "pytest's cache"),
        ("node_modules", "npm's install folder"),
        ("target", "cargo's build folder"),
    ];
    const SUFFIXES: &[(&str, &str)] = &[
        (".pyc", "Python bytecode"),
        (".pyo", "Python bytecode"),
        (".snap.new", "an insta snapshot not yet reviewed"),
        (".pending-snap", "an insta inline snapshot not yet reviewed"),
    ];
    let mut folders = path.split('/').rev().skip(1);
    if folders.clone().any(|part| part.ends_with(".egg-info")) {
        return Some("a setuptools build output");
    }
    if let Some((_, why)) = folders.find_map(|part| FOLDERS.iter().find(|(name, _)| *name == part)) {
        return Some(why);
    }
    SUFFIXES.iter().find(|(suffix, _)| path.ends_with(suffix)).map(|(_, why)| *why)
}

#[test]
fn no_cache_or_build_output_is_committed() {
    let problems = repo_files()
        .into_iter()
        .filter_map(|path| cache_or_output(&path).map(|why| format!("{path}: {why}")))
        .collect();
    assert_none("caches and build outputs in git (remove them and list them in .gitignore)", problems);
}

// ---- Every source file has its header ------------------------------------------------------------

/// Source files that open otherwise, each with the reason.
const HEADER_EXCEPTIONS: &[(&str, &str)] = &[(
    "fixtures-repo/torch-2.15/scenarios/",
    "the scripts that recorded the torch-2.15 fixtures open with a `# Scenario` comment: they are \
     kept as they were run, with the logs they made",
)];

/// The language of a source file, by its extension or, for a script without one, its shebang.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Language {
    Rust,
    JavaScript,
    Python,
    Shell,
}

fn language(path: &str, text: &str) -> Option<Language> {
    let extension = Path::new(path).extension().and_then(|e| e.to_str());
    match extension {
        Some("rs") => Some(Language::Rust),
        Some("js" | "mjs" | "cjs" | "ts" | "tsx") => Some(Language::JavaScript),
        Some("py") => Some(Language::Python),
        Some("sh") => Some(Language::Shell),
        Some(_) => None,
        None => {
            let shebang = text.lines().next().filter(|l| l.starts_with("#!"))?;
            [("python", Language::Python), ("node", Language::JavaScript), ("sh", Language::Shell)]
                .into_iter()
                .find(|(program, _)| shebang.contains(program))
                .map(|(_, language)| language)
        }
    }
}

/// Whether `text` opens with the header its language uses in this tree: `//!` for Rust; a `//`
/// comment for JavaScript and TypeScript; a docstring for Python; a `#` comment for shell (after
/// the shebang, and for a sourced file a `# shellcheck shell=` directive).
fn has_header(language: Language, text: &str) -> bool {
    let mut lines = text.lines().peekable();
    if language != Language::Rust {
        lines.next_if(|l| l.starts_with("#!"));
    }
    if language == Language::Shell {
        lines.next_if(|l| l.starts_with("# shellcheck "));
    }
    let Some(first) = lines.next() else { return false };
    match language {
        Language::Rust => first.starts_with("//!"),
        Language::JavaScript => first.starts_with("// "),
        Language::Python => first.starts_with("\"\"\"") && first.len() > 3,
        Language::Shell => first.starts_with("# ") && first.len() > 2,
    }
}

#[test]
fn every_source_file_opens_with_its_header() {
    let problems = repo_files()
        .into_iter()
        .filter(|path| !HEADER_EXCEPTIONS.iter().any(|(prefix, _)| path.starts_with(prefix)))
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let language = language(&path, &text)?;
            (!has_header(language, &text)).then(|| format!("{path}: no {language:?} header"))
        })
        .collect();
    assert_none(
        "source files without a header saying what they are (Rust `//!`, JS/TS `// `, Python a \
         docstring, shell a `# ` comment after the shebang)",
        problems,
    );
}

// ---- Version prose agrees with the code ----------------------------------------------------------

/// The readers' own version constants: each reads what this code writes, so each is the code's
/// `MIN_READER_VERSION`.
const READER_CONSTANTS: &[(&str, &str)] = &[
    ("viewers/bundle-loader/src/bundle-loader.js", "export const READER_VERSION = "),
    ("python/src/tlparse_bundle/limits.py", "READER_VERSION = "),
];

/// Where the prose says which format a package reads or a document describes: the opening lines of
/// these files (a package's docs, a README's first paragraph, a loader's header comment).
const VERSION_STATEMENTS: &[&str] = &[
    "crates/tlparse-bundle/README.md",
    "docs/format.md",
    "python/README.md",
    "python/src/tlparse_bundle/__init__.py",
    "viewers/bundle-loader/README.md",
    "viewers/bundle-loader/src/bundle-loader.js",
    "viewers/react-template/README.md",
];
const OPENING_LINES: usize = 12;

/// The version numbers `text` states: each number after "format", "format version" or "version",
/// except those of a range of past versions ("format 8 and later", "version 7 or older", "8+").
fn stated_versions(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut found = Vec::new();
    for (at, _) in lower.match_indices("version ").chain(lower.match_indices("format ")) {
        let rest = &lower[at..];
        let rest = rest.strip_prefix("format version ").or_else(|| rest.split_once(' ').map(|(_, r)| r)).unwrap();
        let number: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        let number = number.trim_end_matches('.');
        if number.is_empty() || !number.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let after = &rest[number.len()..];
        let past = [" and later", " and older", " or older", " or later", "+"].iter().any(|s| after.starts_with(s));
        if !past {
            found.push(number.to_owned());
        }
    }
    found
}

/// What a statement may say: the format version, or its major (`FORMAT_VERSION` up to a dot).
fn current_versions() -> [String; 2] {
    let full = FORMAT_VERSION.to_string();
    let major = full.split('.').next().unwrap().to_owned();
    [full, major]
}

/// The text of the places that state a version: the opening lines of [`VERSION_STATEMENTS`] and
/// the description of every package.json.
fn version_statements(files: &[String]) -> Vec<(String, String)> {
    let openings = VERSION_STATEMENTS.iter().map(|path| {
        let text = read(path);
        let opening: Vec<&str> = text.lines().take(OPENING_LINES).collect();
        (path.to_string(), opening.join("\n"))
    });
    let descriptions =
        files.iter().filter(|p| p.ends_with("package.json") && !p.starts_with("fixtures-repo/")).map(|path| {
            let json: serde_json::Value = serde_json::from_str(&read(path)).unwrap();
            (format!("{path} (description)"), json["description"].as_str().unwrap_or_default().to_owned())
        });
    openings.chain(descriptions).collect()
}

#[test]
fn version_prose_agrees_with_the_format_version() {
    let current = current_versions();
    let mut problems = Vec::new();
    for (place, text) in version_statements(&repo_files()) {
        for stated in stated_versions(&text) {
            if !current.contains(&stated) {
                problems.push(format!("{place}: says version {stated}; the format is {}", current[0]));
            }
        }
    }
    for (path, prefix) in READER_CONSTANTS {
        let text = read(path);
        let line = text.lines().find_map(|l| l.strip_prefix(prefix)).unwrap_or_else(|| panic!("{path}: no `{prefix}`"));
        let value: u32 = line.trim_end_matches(';').trim().parse().unwrap_or_else(|_| panic!("{path}: `{line}`"));
        if value != MIN_READER_VERSION {
            problems
                .push(format!("{path}: READER_VERSION {value}; the code's MIN_READER_VERSION is {MIN_READER_VERSION}"));
        }
    }
    assert_none("version prose or constants that disagree with crates/tlparse-bundle's", problems);
}

// ---- Paths named in docs and tests exist ---------------------------------------------------------

/// Named paths of files this repository does not hold, each with the reason.
const PATH_EXCEPTIONS: &[(&str, &str)] = &[
    ("tests/integration_test.rs", "upstream tlparse's test file, named as the source of a fixture"),
    ("src/fake.rs", "the fuzz oracle's tests feed it panic messages of made-up files"),
    ("src/a/b.rs", "the fuzz oracle's tests feed it panic messages of made-up files"),
    ("src/components/FailuresPage.tsx", "the React template's README walks through adding this page"),
    ("src/readme-examples.ts", "written by the React template's README test into its fork"),
    ("tests/it/m.rs", "ARCHITECTURE.md's pattern for naming a test: `it::m::f` is `f` in `tests/it/m.rs`"),
];

/// Files whose paths are not this repository's: recorded logs and what is generated from them
/// (fixtures, snapshots, bundles, schemas), and the changelog, which names files as they were.
fn names_foreign_paths(path: &str) -> bool {
    ["fixtures-repo/", "schema/", "crates/tlparse-bundle/tests/bundles/", "CHANGELOG.md"]
        .iter()
        .any(|prefix| path.starts_with(prefix))
        || [".snap", ".log", ".jsonl", ".zst", ".gz", ".txt"].iter().any(|suffix| path.ends_with(suffix))
}

/// The repository paths `text` names: a word that starts with one of the top folders and ends in
/// a file name with an extension (`tests/it/tidy.rs`, `viewers/bundle-loader/src/bundle-loader.js`).
fn named_paths(text: &str) -> Vec<&str> {
    const TOP: &[&str] = &["crates/", "docs/", "fuzz/", "python/", "scripts/", "src/", "tests/", "viewers/"];
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut found = Vec::new();
    for (at, _) in text.match_indices(|c: char| c.is_ascii_lowercase()) {
        if text[..at].ends_with(is_path_char) || !TOP.iter().any(|top| text[at..].starts_with(top)) {
            continue;
        }
        let word = &text[at..];
        let word = &word[..word.find(|c: char| !is_path_char(c)).unwrap_or(word.len())];
        let word = word.trim_end_matches(['.', '-']);
        let file_name = word.rsplit('/').next().unwrap();
        if file_name.contains('.') && !file_name.starts_with('.') && !word.contains("..") {
            found.push(word);
        }
    }
    found
}

/// Whether a file of the tree is `named` or ends with it: a path from the root, or one from a
/// package's folder (a README names `src/bundle-loader.js` of its package). A path that moved
/// names no file any more.
fn names_a_file(named: &str, files: &[String]) -> bool {
    let tail = format!("/{named}");
    files.iter().any(|f| f == named || f.ends_with(&tail))
}

#[test]
fn paths_named_in_docs_and_tests_exist() {
    let files = repo_files();
    let mut problems = Vec::new();
    for file in files.iter().filter(|f| !names_foreign_paths(f)) {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        for named in named_paths(&text) {
            if !names_a_file(named, &files) && !PATH_EXCEPTIONS.iter().any(|(path, _)| *path == named) {
                problems.push(format!("{file}: names {named}, which does not exist"));
            }
        }
    }
    problems.dedup();
    assert_none("paths named in the tree that do not exist (moved or removed?)", problems);
}

// ---- proptest keeps its failing cases in one folder ----------------------------------------------

/// proptest writes a failing case's seed to `proptest-regressions/` beside the `src/` of the test
/// (tests/it/properties.rs sends its own there too): every seed file lives in that one folder and
/// belongs to a source file that still exists, `src/<name>.rs` or, for an integration test,
/// `<name>.rs` from the root.
#[test]
fn proptest_regressions_are_in_one_folder_and_belong_to_a_source_file() {
    let mut problems = Vec::new();
    for path in repo_files().iter().filter(|p| p.contains("proptest-regressions/")) {
        let Some(source) = path.strip_prefix("proptest-regressions/").and_then(|p| p.strip_suffix(".txt")) else {
            problems.push(format!("{path}: outside the root's proptest-regressions/ folder"));
            continue;
        };
        let in_src = format!("src/{source}.rs");
        let integration = format!("{source}.rs");
        if !Path::new(&in_src).exists() && !Path::new(&integration).exists() {
            problems.push(format!("{path}: neither {in_src} nor {integration} exists"));
        }
    }
    assert_none("proptest regressions", problems);
}

/// The `it::MODULE::NAME` tests ARCHITECTURE.md names for its invariants.
fn architecture_tests(text: &str) -> Vec<(&str, &str)> {
    let mut named = Vec::new();
    for (at, _) in text.match_indices("`it::") {
        let path = text[at + 1..].split('`').next().unwrap_or_default();
        let parts: Vec<&str> = path.split("::").collect();
        if let [_, module, name] = parts[..] {
            named.push((module, name));
        }
    }
    named
}

#[test]
fn every_test_architecture_names_for_an_invariant_exists() {
    let text = read("ARCHITECTURE.md");
    let named = architecture_tests(&text);
    assert!(named.len() > 10, "ARCHITECTURE.md names the tests of its invariants: {named:?}");
    let missing: Vec<String> = named
        .into_iter()
        .filter(|(module, _)| *module != "m") // the doc's placeholder `it::m::f`
        .filter(|(module, name)| {
            let source = [format!("tests/it/{module}.rs"), format!("tests/it/{module}/mod.rs")]
                .iter()
                .find_map(|path| std::fs::read_to_string(path).ok())
                .unwrap_or_default();
            !source.contains(&format!("fn {name}("))
        })
        .map(|(module, name)| format!("it::{module}::{name}"))
        .collect();
    assert_none("ARCHITECTURE.md names tests that do not exist", missing);
}
