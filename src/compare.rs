//! `tlparse-build compare A B`: opens each run (a bundle directory, or a trace built to a
//! temporary bundle first), reads the tables the comparison needs and compares them with
//! [`crate::analysis::run_compare`], which reads the payloads of differing artifacts from the
//! two bundles.

use std::path::{Path, PathBuf};

use camino::Utf8Path;

use crate::analysis::run_compare::{self, Run, RunComparison, StreamTables};
use crate::bundle::{self, BuildOptions, reader};
use crate::schema::tables::{CompileDirectory, GraphBreaks, GraphSizes, Guards, Recompiles};

/// Compares run `a` with run `b`.
pub fn compare(a: &Utf8Path, b: &Utf8Path) -> Result<RunComparison, String> {
    let (run_a, run_b) = (open_run(a)?, open_run(b)?);
    let payload = |run: Run, blob: &str| {
        let bundle = if run == Run::A { &run_a.bundle } else { &run_b.bundle };
        bundle.blob(blob).ok()
    };
    Ok(run_compare::compare(&run_a.streams, &run_b.streams, &payload))
}

/// An opened run: its bundle (read for payloads) and the tables the comparison reads.
pub struct OpenRun {
    pub bundle: reader::Bundle,
    pub streams: Vec<StreamTables>,
    /// The temporary directory of a bundle built from a trace, removed when the run is dropped.
    _built: Option<TempDir>,
}

/// A temporary directory removed when dropped, or when SIGINT or SIGTERM stops the process
/// (where the command line handles them: [`bundle::interrupt`]).
struct TempDir(PathBuf);

impl TempDir {
    fn new(path: PathBuf) -> TempDir {
        bundle::interrupt::remove_on_signal(&path);
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        bundle::interrupt::keep_on_signal(&self.0);
    }
}

/// A run: the bundle at `path`, or a bundle built from the trace at `path` in a temporary
/// directory (removed when the run is dropped).
pub fn open_run(path: &Utf8Path) -> Result<OpenRun, String> {
    if path.join(tlparse_bundle::paths::MANIFEST).is_file() {
        return read_run(path.as_std_path(), None).map_err(|e| format!("{path}: {e}"));
    }
    if !path.exists() {
        return Err(format!("{path}: no such file or directory (expected a bundle directory or a trace)"));
    }
    let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
    let tmp = TempDir::new(std::env::temp_dir().join(format!("tlparse-compare-{}-{nonce}", std::process::id())));
    let out =
        camino::Utf8PathBuf::from_path_buf(tmp.0.join("bundle")).map_err(|p| format!("{}: not UTF-8", p.display()))?;
    let options = BuildOptions {
        input: path.to_owned(),
        output: out.clone(),
        overwrite: false,
        latest: false,
        progress: false,
        viewer: false,
        max_line: bundle::DEFAULT_MAX_LINE,
    };
    bundle::build(&options).map_err(|e| format!("{path} is neither a bundle nor a trace that builds: {e}"))?;
    read_run(out.as_std_path(), Some(tmp)).map_err(|e| format!("{path}: {e}"))
}

fn read_run(root: &Path, built: Option<TempDir>) -> Result<OpenRun, reader::ReadError> {
    let b = reader::Bundle::open(root)?;
    let streams = b
        .manifest
        .streams
        .iter()
        .map(|s| {
            Ok(StreamTables {
                stream: s.id.clone(),
                compile_directory: b.stream_table::<CompileDirectory>(&s.id)?,
                graph_sizes: b.stream_table::<GraphSizes>(&s.id)?,
                guards: b.stream_table::<Guards>(&s.id)?,
                recompiles: b.stream_table::<Recompiles>(&s.id)?,
                graph_breaks: b.stream_table::<GraphBreaks>(&s.id)?,
            })
        })
        .collect::<Result<_, reader::ReadError>>()?;
    Ok(OpenRun { bundle: b, streams, _built: built })
}
