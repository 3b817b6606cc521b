//! The invariants of a whole build, checked on one written case: the binary neither panics,
//! dies of a signal, hangs nor takes more than the memory limit; it exits 0, or 2 only with a
//! reason that is true of the input; it leaves no staging directory; every bundle it writes
//! passes its own `validate`; no rank is lost; the user's files are neither deleted nor changed;
//! and the bundle holds neither the absolute path of the trace nor the names of its non-log files.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::case::{OutSetup, WrittenCase};
use std::ffi::OsString;

use crate::child::{Ending, Finished, Limits, Runner};
use crate::lines::md5_hex;

/// One invariant broken by one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Which invariant (`panic`, `hang`, `memory`, ...).
    pub invariant: &'static str,
    /// What tells this failure from others of the same invariant: cases with the same
    /// signature are one finding. Free of paths and numbers that vary between cases.
    pub signature: String,
    /// Everything known about this occurrence.
    pub detail: String,
}

impl Violation {
    fn new(invariant: &'static str, signature: impl Into<String>, detail: impl Into<String>) -> Self {
        Violation { invariant, signature: signature.into(), detail: detail.into() }
    }
}

/// The first bytes of a decompressed input looked at to tell whether it is a log: what the
/// format's `skipped` reasons promise to look through ("no log header in its first 4 MiB").
const LOOK_FOR_HEADER: u64 = 4 << 20;

/// Runs the build and `validate` on a written case; returns every invariant broken.
pub fn check_build(binary: &Path, runner: &Runner, case: &WrittenCase) -> io::Result<Vec<Violation>> {
    let before: Vec<String> =
        case.inputs.iter().map(|p| std::fs::read(p).map(|b| md5_hex(&b))).collect::<Result<_, _>>()?;
    let build = runner.run(binary, &build_args(case), &case.dir, "build", case.closed_stdout)?;
    let mut found = process_violations("build", &build, runner.limits);
    // Dying of SIGPIPE when stdout is closed is what Unix tools do: not a crash by itself.
    let sigpipe = case.closed_stdout && build.ending == Ending::Signaled(libc::SIGPIPE);
    if sigpipe {
        found.retain(|v| v.invariant != "signal");
    }
    match build.ending {
        Ending::Exited(0) if case.out_setup == OutSetup::UserDir => found.push(Violation::new(
            "deleted",
            "built over a directory that is not a bundle",
            "exit 0 with --overwrite onto a directory of the user's",
        )),
        Ending::Exited(0) => found.extend(check_bundle(binary, runner, case)?),
        _ if sigpipe && case.out.join("manifest.json").exists() => found.extend(check_bundle(binary, runner, case)?),
        Ending::Exited(code) => found.extend(check_refusal(code, &build, case)?),
        _ => {}
    }
    // A process we killed had no chance to clean up: its hang or memory is the finding.
    if !matches!(build.ending, Ending::TimedOut | Ending::RanAway) {
        found.extend(staging_left(case)?);
    }
    found.extend(user_files_changed(case, &before)?);
    Ok(found)
}

fn build_args(case: &WrittenCase) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![case.trace.clone().into(), "-o".into(), case.out.clone().into()];
    if case.out_setup == OutSetup::UserDir {
        args.push("--overwrite".into());
    }
    if case.no_viewer {
        args.push("--no-viewer".into());
    }
    args
}

/// Panics, signals, hangs and memory: what any run of the binary must not do.
pub fn process_violations(what: &str, run: &Finished, limits: Limits) -> Vec<Violation> {
    let mut found = Vec::new();
    let panic = panic_message(&run.stderr);
    match run.ending {
        Ending::Signaled(signal) => found.push(Violation::new(
            "signal",
            format!("{what}: killed by signal {signal}"),
            format!("killed by signal {signal}; stderr: {}", tail(&run.stderr)),
        )),
        Ending::TimedOut => found.push(Violation::new(
            "hang",
            format!("{what}: no exit within the time limit"),
            format!("killed after {:.0} s", run.seconds),
        )),
        Ending::RanAway | Ending::Exited(_) => {}
    }
    if run.ending == Ending::Exited(101) || panic.is_some() {
        let (location, message) = panic.unwrap_or_else(|| ("(no location)".into(), tail(&run.stderr)));
        found.push(Violation::new(
            "panic",
            format!("{what}: panicked at {location}: {}", normalize(&message, None)),
            format!("panicked at {location}: {}\n(exit {:?})", shorten(&message, 300), run.ending),
        ));
    }
    if run.ending == Ending::RanAway || run.peak_rss > limits.max_rss {
        found.push(Violation::new(
            "memory",
            format!("{what}: peak RSS over the limit"),
            format!(
                "peak RSS {} MiB > limit {} MiB{}",
                run.peak_rss >> 20,
                limits.max_rss >> 20,
                if run.ending == Ending::RanAway { " (killed: it kept growing)" } else { "" }
            ),
        ));
    }
    found
}

/// The location and first line of the message of the first panic in a Rust program's stderr.
pub fn panic_message(stderr: &str) -> Option<(String, String)> {
    let at = stderr.find("panicked at ")?;
    let rest = &stderr[at + "panicked at ".len()..];
    let (location, message) = rest.split_once(":\n").unwrap_or((rest.lines().next().unwrap_or(""), ""));
    Some((location.to_string(), message.lines().next().unwrap_or("").to_string()))
}

/// A bundle was written: it must validate, name every rank, and leak nothing.
fn check_bundle(binary: &Path, runner: &Runner, case: &WrittenCase) -> io::Result<Vec<Violation>> {
    let run = runner.run(binary, &["validate".into(), case.out.clone().into()], &case.dir, "validate", false)?;
    let mut found = process_violations("validate", &run, runner.limits);
    if run.ending != Ending::Exited(0) {
        let problem = run.stdout.lines().chain(run.stderr.lines()).find(|l| !l.trim().is_empty()).unwrap_or("");
        found.push(Violation::new(
            "invalid_bundle",
            format!("validate: {}", normalize(problem, Some(&case.dir))),
            format!(
                "{}\nvalidate ended {:?}:\n{}{}",
                shorten(problem, 300),
                run.ending,
                tail(&run.stdout),
                tail(&run.stderr)
            ),
        ));
    }
    let manifest = match read_json(&case.out.join("manifest.json")) {
        Ok(m) => m,
        Err(e) => {
            found.push(Violation::new("invalid_bundle", "manifest.json unreadable", e.to_string()));
            return Ok(found);
        }
    };
    if case.rank_dir {
        found.extend(lost_ranks(case, &manifest)?);
    }
    found.extend(leaks(case)?);
    Ok(found)
}

/// Exit codes other than 0: only 2, with a reason that is true, and no bundle.
fn check_refusal(code: i32, run: &Finished, case: &WrittenCase) -> io::Result<Vec<Violation>> {
    if code == 101 {
        return Ok(Vec::new()); // a panic, reported already
    }
    let message = run.stderr.lines().find(|l| l.starts_with("error:")).unwrap_or("(no error line)").to_string();
    let mut found = Vec::new();
    // The inputs are looked at before the output, so a trace of no logs is refused first.
    let refuses_user_dir = case.out_setup == OutSetup::UserDir && message.contains("not a tlparse-build bundle");
    let says_not_a_log = message.contains("no TORCH_TRACE logs found") || message.contains("is not a TORCH_TRACE log");
    let justified = refuses_user_dir || (says_not_a_log && !any_input_has_a_header(case)?);
    if code != 2 || !justified {
        found.push(Violation::new(
            "exit_code",
            format!("exit {code}: {}", normalize(&message, Some(&case.dir))),
            format!("{}\nexit {code}; stderr:\n{}", shorten(&message, 300), tail(&run.stderr)),
        ));
    }
    let bundle_written = case.out_setup != OutSetup::UserDir && case.out.join("manifest.json").exists();
    if bundle_written {
        found.push(Violation::new("exit_code", format!("exit {code} with a bundle written"), shorten(&message, 300)));
    }
    Ok(found)
}

/// Whether any input shows a log header in the first [`LOOK_FOR_HEADER`] bytes that decompress.
fn any_input_has_a_header(case: &WrittenCase) -> io::Result<bool> {
    for input in &case.inputs {
        if has_header(&decodable_start(input)?) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether a text holds a line that is a log header: a glog prefix, then a JSON object.
pub fn has_header(text: &[u8]) -> bool {
    text.split(|&b| b == b'\n').any(|line| {
        let line = String::from_utf8_lossy(line);
        tlparse_build::parse::glog::parse_prefix(line.trim_end()).is_some_and(|p| p.rest.trim_start().starts_with('{'))
    })
}

/// The first [`LOOK_FOR_HEADER`] bytes of a file's text, decompressed as far as it decompresses.
pub fn decodable_start(path: &Path) -> io::Result<Vec<u8>> {
    let bytes = std::fs::read(path)?;
    let reader: Box<dyn Read> = match bytes.as_slice() {
        [0x1f, 0x8b, ..] => Box::new(flate2::read::MultiGzDecoder::new(bytes.as_slice())),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Box::new(zstd::Decoder::new(bytes.as_slice())?),
        _ => Box::new(bytes.as_slice()),
    };
    let mut text = Vec::new();
    let mut limited = reader.take(LOOK_FOR_HEADER);
    let mut buf = [0u8; 1 << 16];
    // Stop at the first decoding error: what came before it is what a reader can use.
    while let Ok(n @ 1..) = limited.read(&mut buf) {
        text.extend_from_slice(&buf[..n]);
    }
    Ok(text)
}

/// A rank file of the trace directory must be an input, or, when it holds no log header, be
/// reported missing by an `unreadable_log` diagnostic: a rank never disappears silently.
fn lost_ranks(case: &WrittenCase, manifest: &serde_json::Value) -> io::Result<Vec<Violation>> {
    let inputs: Vec<&str> =
        manifest["inputs"].as_array().into_iter().flatten().filter_map(|i| i["path"].as_str()).collect();
    let diagnostics = diagnostics(case, manifest);
    let mut found = Vec::new();
    for input in &case.inputs {
        let name = input.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let names_it = |path: &str| path == name || path.ends_with(&format!("/{name}"));
        if inputs.iter().any(|p| names_it(p)) {
            continue;
        }
        let has_header = has_header(&decodable_start(input)?);
        let reported =
            diagnostics.iter().any(|d| d["kind"] == "unreadable_log" && d["file"].as_str().is_some_and(names_it));
        if has_header || !reported {
            let why =
                if has_header { "a log with headers is not among the inputs" } else { "no unreadable_log diagnostic" };
            found.push(Violation::new("lost_rank", format!("rank file not read: {why}"), format!("{name}: {why}")));
        }
    }
    Ok(found)
}

/// The bundle's diagnostics, as JSON values (none when the file cannot be read: `validate`
/// reports that).
fn diagnostics(case: &WrittenCase, manifest: &serde_json::Value) -> Vec<serde_json::Value> {
    let path = manifest["diagnostics"]["path"].as_str().unwrap_or("diagnostics.jsonl");
    let text = std::fs::read(case.out.join(path)).unwrap_or_default();
    text.split(|&b| b == b'\n').filter_map(|l| serde_json::from_slice(l).ok()).collect()
}

/// Bytes of a bundle file looked through for leaks (decompressed).
const LEAK_SCAN_LIMIT: u64 = 64 << 20;

/// The bundle must hold neither the absolute path of the case (where the user keeps the
/// trace) nor the name of a file of the trace directory that is not a log. Blob packs hold the
/// logs' payloads and the viewer files are fixed, so neither is read.
fn leaks(case: &WrittenCase) -> io::Result<Vec<Violation>> {
    let absolute = case.dir.to_string_lossy().into_owned();
    let mut needles = vec![("the trace's absolute path", absolute)];
    if let Some(name) = &case.private_name {
        needles.push(("the name of a non-log file of the trace directory", name.clone()));
    }
    let mut found = Vec::new();
    for file in bundle_files(&case.out)? {
        let rel = file.strip_prefix(&case.out).unwrap_or(&file).to_string_lossy().replace('\\', "/");
        if rel.starts_with("blobs/packs/") || rel.starts_with("viewer/") || rel == "index.html" {
            continue;
        }
        let text = read_decompressed(&file)?;
        for (what, needle) in &needles {
            if text.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                found.push(Violation::new("leak", format!("{rel} holds {what}"), format!("{rel} holds {needle:?}")));
            }
        }
    }
    Ok(found)
}

fn bundle_files(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_owned()];
    while let Some(dir) = dirs.pop() {
        for item in std::fs::read_dir(&dir)? {
            let item = item?;
            if item.file_type()?.is_dir() {
                dirs.push(item.path());
            } else {
                files.push(item.path());
            }
        }
    }
    files.sort();
    Ok(files)
}

/// A bundle file's bytes, decompressed when it is `.zst` or `.gz` (up to [`LEAK_SCAN_LIMIT`]).
fn read_decompressed(path: &Path) -> io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let name = path.to_string_lossy();
    let reader: Box<dyn Read> = if name.ends_with(".zst") {
        Box::new(zstd::Decoder::new(file)?)
    } else if name.ends_with(".gz") {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut text = Vec::new();
    // A file that does not decompress is validate's to report.
    let _ = reader.take(LEAK_SCAN_LIMIT).read_to_end(&mut text);
    Ok(text)
}

/// A staging directory (`.bundle.tlparse-build-*`) left next to the output.
fn staging_left(case: &WrittenCase) -> io::Result<Vec<Violation>> {
    let parent = case.out.parent().expect("the output has a parent");
    let mut left = Vec::new();
    for item in std::fs::read_dir(parent)? {
        let name = item?.file_name().to_string_lossy().into_owned();
        if name.starts_with(".bundle.tlparse-build-") {
            left.push(name);
        }
    }
    Ok(if left.is_empty() {
        Vec::new()
    } else {
        vec![Violation::new("staging_left", "staging directory left next to the output", left.join(", "))]
    })
}

/// The user's files (inputs and sentinels) must be exactly as they were.
fn user_files_changed(case: &WrittenCase, inputs_before: &[String]) -> io::Result<Vec<Violation>> {
    let mut found = Vec::new();
    for (path, before) in case.inputs.iter().zip(inputs_before) {
        if std::fs::read(path).map(|b| md5_hex(&b)).ok().as_ref() != Some(before) {
            found.push(Violation::new("deleted", "an input file was changed or deleted", path.display().to_string()));
        }
    }
    for (path, bytes) in &case.sentinels {
        if std::fs::read(path).ok().as_ref() != Some(bytes) {
            let which = path.file_name().unwrap_or_default().to_string_lossy();
            found.push(Violation::new(
                "deleted",
                format!("the user's {which} was changed or deleted"),
                path.display().to_string(),
            ));
        }
    }
    Ok(found)
}

fn read_json(path: &Path) -> io::Result<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(path)?).map_err(io::Error::from)
}

/// The last lines of an output, for a report.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(12)..].iter().map(|l| shorten(l, 300)).collect::<Vec<_>>().join("\n")
}

/// At most `max` characters of a line (logs put megabytes into some messages).
fn shorten(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}[... {} more bytes]", &line[..cut], line.len() - cut),
        None => line.to_string(),
    }
}

/// A message with what varies between cases taken out: paths in the case's directory (an input
/// becomes `<input>`, a bundle file the top directory of the bundle it is in) and every number.
pub fn normalize(message: &str, case_dir: Option<&Path>) -> String {
    let mut text = message.to_string();
    if let Some(dir) = case_dir {
        text = text.replace(&*dir.to_string_lossy(), "<case>");
        text = text.split(' ').map(shorten_case_path).collect::<Vec<_>>().join(" ");
    }
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out.chars().take(160).collect()
}

/// `<case>/out/bundle/index/rank0.jsonl.zst:3:` → `<bundle>/index:`; the staging directory →
/// `<staging>`; `<case>/trace/x.log:` → `<input>:`; other words unchanged.
fn shorten_case_path(word: &str) -> String {
    let colon = if word.ends_with(':') { ":" } else { "" };
    if let Some(rest) = word.strip_prefix("<case>/out/bundle/") {
        format!("<bundle>/{}{colon}", rest.split(['/', ':', '#']).next().unwrap_or(""))
    } else if word.starts_with("<case>/out/.bundle.tlparse-build-") {
        format!("<staging>{colon}")
    } else if word.starts_with("<case>") {
        format!("<input>{colon}")
    } else {
        word.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_are_read_from_stderr() {
        let stderr = "warning: x\n\nthread 'main' panicked at src/a/b.rs:12:5:\nindex out of bounds: the len is 3\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(
            panic_message(stderr),
            Some(("src/a/b.rs:12:5".to_string(), "index out of bounds: the len is 3".to_string()))
        );
        assert_eq!(panic_message("error: no such file\n"), None);
    }

    #[test]
    fn signatures_leave_out_paths_and_numbers() {
        let dir = Path::new("/tmp/fuzz/case-17");
        assert_eq!(
            normalize("error: /tmp/fuzz/case-17/trace/x.log: line 12345 is 3 MB", Some(dir)),
            "error: <input>: line N is N MB"
        );
        assert_eq!(
            normalize("/tmp/fuzz/case-17/out/bundle/index/rank3.jsonl.zst:19: cannot be parsed", Some(dir)),
            "<bundle>/index: cannot be parsed"
        );
        assert_eq!(
            normalize("error: /tmp/fuzz/case-17/out/.bundle.tlparse-build-4242: bad", Some(dir)),
            "error: <staging>: bad"
        );
    }

    #[test]
    fn long_lines_are_shortened_for_reports() {
        assert_eq!(shorten("abc", 5), "abc");
        assert_eq!(shorten("ééééé", 2), "éé[... 6 more bytes]");
    }

    #[test]
    fn headers_are_told_from_other_lines() {
        assert!(has_header(b"banner\nV0101 00:00:00.000000 1 a.py:1] {\"a\": 1}\n"));
        assert!(!has_header(b"banner\nV0101 00:00:00.000000 1 a.py:1] not json\n\tpayload\n"));
    }
}
