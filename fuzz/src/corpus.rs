//! The real logs every case starts from: the `.log` and `.txt` files of `fixtures-repo/`, read
//! once, and the directories that hold several ranks of one job (for rank-directory cases, so the
//! cross-rank code sees ranks that really belong together).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::rng::Rng;

/// Logs at most this big are "small": most cases start from one, so they run fast.
const SMALL: usize = 320 * 1024;

/// One fixture log.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// Path below the fixtures directory, for reports.
    pub name: String,
    pub bytes: Arc<Vec<u8>>,
}

/// Every fixture log, sorted by path so that a seed picks the same one everywhere.
#[derive(Debug, Default)]
pub struct Corpus {
    pub logs: Vec<Fixture>,
    /// Indices into `logs` of the small ones.
    small: Vec<usize>,
    /// Directories of rank logs (`dedicated_log_torch_trace_rank_N*`), two or more each.
    rank_groups: Vec<Vec<usize>>,
}

impl Corpus {
    /// Reads every non-empty `.log` and `.txt` file under `dir`.
    pub fn load(dir: &Path) -> io::Result<Corpus> {
        let mut paths = Vec::new();
        collect_logs(dir, &mut paths)?;
        paths.sort();
        let mut corpus = Corpus::default();
        let mut by_dir: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
        for path in paths {
            let bytes = std::fs::read(&path)?;
            if bytes.is_empty() {
                continue;
            }
            let index = corpus.logs.len();
            if bytes.len() <= SMALL {
                corpus.small.push(index);
            }
            if is_rank_log(&path) {
                by_dir.entry(path.parent().unwrap_or(dir).to_owned()).or_default().push(index);
            }
            let name = path.strip_prefix(dir).unwrap_or(&path).to_string_lossy().into_owned();
            corpus.logs.push(Fixture { name, bytes: Arc::new(bytes) });
        }
        corpus.rank_groups = by_dir.into_values().filter(|g| g.len() >= 2).collect();
        if corpus.logs.is_empty() {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("no fixture logs under {}", dir.display())));
        }
        Ok(corpus)
    }

    /// A corpus of the given logs, for tests.
    pub fn of(logs: Vec<Fixture>) -> Corpus {
        let small = (0..logs.len()).filter(|&i| logs[i].bytes.len() <= SMALL).collect();
        Corpus { logs, small, rank_groups: Vec::new() }
    }

    /// A fixture: usually a small one, sometimes any (the large ones are slow to build).
    pub fn pick(&self, rng: &mut Rng) -> &Fixture {
        if self.small.is_empty() || rng.one_in(8) { rng.pick(&self.logs) } else { &self.logs[*rng.pick(&self.small)] }
    }

    /// Two to four rank logs of one job, smallest first when the job has more; `None` when the
    /// fixtures hold no rank directory.
    pub fn pick_ranks(&self, rng: &mut Rng) -> Option<Vec<&Fixture>> {
        if self.rank_groups.is_empty() {
            return None;
        }
        let mut group: Vec<&Fixture> = rng.pick(&self.rank_groups).iter().map(|&i| &self.logs[i]).collect();
        group.sort_by_key(|f| f.bytes.len());
        let n = rng.between(2, group.len().min(4));
        group.truncate(n);
        Some(group)
    }
}

fn collect_logs(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for item in std::fs::read_dir(dir)? {
        let item = item?;
        let path = item.path();
        let kind = item.file_type()?;
        if kind.is_dir() {
            collect_logs(&path, out)?;
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "log" || e == "txt") {
            out.push(path);
        }
    }
    Ok(())
}

fn is_rank_log(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("dedicated_log_torch_trace_rank_"))
}

/// The fixtures directory of this checkout (`fixtures-repo/` at the workspace root).
pub fn default_fixtures_dir() -> PathBuf {
    crate::workspace_root().join("fixtures-repo")
}
