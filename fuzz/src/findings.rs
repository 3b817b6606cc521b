//! Findings: violations grouped by signature (one group per bug, however many cases hit it),
//! each group with the seed of its smallest case; failing inputs saved under
//! `<findings dir>/<mode>-<seed>/` with a README saying how to reproduce them. Only a few cases
//! per group are saved, so a bug hit thousands of times fills no disk.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::oracle::Violation;

/// Cases saved per group: the first, then each one smaller than every case saved before.
const SAVED_PER_GROUP: usize = 4;
/// Cases saved in one run, over all groups.
const SAVED_PER_RUN: usize = 100;

/// Everything known about one finding.
#[derive(Debug, Clone)]
pub struct Group {
    pub invariant: &'static str,
    pub signature: String,
    /// Cases that broke it.
    pub cases: u64,
    /// The smallest case that broke it: its seed, input size and details.
    pub smallest_seed: u64,
    pub smallest_size: usize,
    pub detail: String,
    /// Directories the failing inputs were saved to.
    pub saved: Vec<PathBuf>,
}

/// A failing case, as the worker that ran it hands it over.
pub struct FailedCase<'a> {
    pub seed: u64,
    /// Bytes of input, to find the smallest case of each group.
    pub size: usize,
    pub description: &'a str,
    pub violations: &'a [Violation],
    /// Copies the case's input into the directory given.
    pub save: &'a dyn Fn(&Path) -> io::Result<()>,
}

/// The findings of one run.
#[derive(Debug)]
pub struct Findings {
    mode: &'static str,
    dir: PathBuf,
    /// How to rerun one case: the command, to which `--seed S --cases 1` is added.
    rerun: String,
    pub groups: BTreeMap<String, Group>,
    /// Cases with at least one violation.
    pub failed_cases: u64,
    saved: usize,
}

impl Findings {
    pub fn new(mode: &'static str, dir: PathBuf, rerun: String) -> Findings {
        Findings { mode, dir, rerun, groups: BTreeMap::new(), failed_cases: 0, saved: 0 }
    }

    /// Records a failing case, saving its input when it is among the first or the smallest of
    /// one of its groups.
    pub fn record(&mut self, case: FailedCase) -> io::Result<()> {
        self.failed_cases += 1;
        let mut worth_saving = false;
        for v in case.violations {
            let group = self.groups.entry(v.signature.clone()).or_insert_with(|| Group {
                invariant: v.invariant,
                signature: v.signature.clone(),
                cases: 0,
                smallest_seed: case.seed,
                smallest_size: case.size,
                detail: v.detail.clone(),
                saved: Vec::new(),
            });
            group.cases += 1;
            let smaller = case.size < group.smallest_size;
            if smaller {
                (group.smallest_seed, group.smallest_size, group.detail) = (case.seed, case.size, v.detail.clone());
            }
            worth_saving |= group.saved.is_empty() || (smaller && group.saved.len() < SAVED_PER_GROUP);
        }
        if !worth_saving || self.saved >= SAVED_PER_RUN {
            return Ok(());
        }
        let dir = self.dir.join(format!("{}-{}", self.mode, case.seed));
        std::fs::create_dir_all(&dir)?;
        (case.save)(&dir)?;
        std::fs::write(dir.join("README"), self.readme(&case))?;
        self.saved += 1;
        for v in case.violations {
            let group = self.groups.get_mut(&v.signature).expect("inserted above");
            if group.saved.len() < SAVED_PER_GROUP && !group.saved.contains(&dir) {
                group.saved.push(dir.clone());
            }
        }
        Ok(())
    }

    /// The command that reruns one case.
    pub fn rerun(&self, seed: u64) -> String {
        format!("{} --seed {seed} --cases 1", self.rerun)
    }

    fn readme(&self, case: &FailedCase) -> String {
        let mut text = format!("reproduce: {}\n", self.rerun(case.seed));
        let _ = writeln!(text, "tlparse-fuzz {} finding, seed {}, {} bytes of input", self.mode, case.seed, case.size);
        let _ = writeln!(text, "case: {}\n\ninvariants broken:", case.description);
        for v in case.violations {
            let _ = writeln!(text, "- [{}] {}\n  {}", v.invariant, v.signature, v.detail.replace('\n', "\n  "));
        }
        text
    }

    /// The report: one line per group, most frequent first.
    pub fn report(&self) -> String {
        let mut groups: Vec<&Group> = self.groups.values().collect();
        groups.sort_by(|a, b| b.cases.cmp(&a.cases).then_with(|| a.signature.cmp(&b.signature)));
        let mut text = String::new();
        for g in groups {
            let _ = writeln!(
                text,
                "FINDING [{}] {}\n  {} case(s); smallest: seed {} ({} bytes): {}\n  reproduce: {}",
                g.invariant,
                g.signature,
                g.cases,
                g.smallest_seed,
                g.smallest_size,
                g.detail.lines().next().unwrap_or(""),
                self.rerun(g.smallest_seed),
            );
            for dir in &g.saved {
                let _ = writeln!(text, "  saved: {}", dir.display());
            }
        }
        text
    }
}
