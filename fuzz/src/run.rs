//! The fuzzing loop: workers take case numbers in turn until the time or case budget is spent;
//! case `i` of a run with seed `S` has seed `S + i`, so `--seed S+i --cases 1` reruns it alone.
//! In `parse` mode a watchdog stops the run when a case never ends (code running in this
//! process cannot be killed; its seed is reported first).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::case::{BuildCase, ParseCase};
use crate::child::Runner;
use crate::corpus::Corpus;
use crate::findings::{FailedCase, Findings};
use crate::in_process::{self, Outcome};
use crate::oracle::{self, Violation};

/// Which code the cases go through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The parser and the stream tables, in this process.
    Parse,
    /// The release binary, then its `validate`, as child processes.
    Build,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Parse => "parse",
            Mode::Build => "build",
        }
    }
}

/// A run's settings.
#[derive(Debug, Clone)]
pub struct Options {
    pub mode: Mode,
    /// Stop starting cases after this long (`None`: no time limit).
    pub seconds: Option<f64>,
    /// Stop after this many cases (`None`: no case limit).
    pub cases: Option<u64>,
    pub seed: u64,
    /// Runs the binary under the limits (hang, memory).
    pub runner: Runner,
    pub binary: PathBuf,
    pub jobs: usize,
    pub fixtures: PathBuf,
    /// Where `fuzz-findings/` and the scratch directory `fuzz-tmp/` go.
    pub out_dir: PathBuf,
    /// The command line that reruns a case of this run, without `--seed` and `--cases`.
    pub rerun: String,
}

/// What a run did.
#[derive(Debug)]
pub struct Report {
    pub cases: u64,
    pub seconds: f64,
    pub findings: Findings,
}

impl Report {
    /// The one-line summary, then the findings.
    pub fn summary(&self, options: &Options) -> String {
        let rate = self.cases as f64 / self.seconds.max(1e-9);
        let last = options.seed.wrapping_add(self.cases.saturating_sub(1));
        format!(
            "tlparse-fuzz {}: {} case(s) in {:.1} s ({rate:.1}/s), seeds {}..={last}: {} failing case(s), {} finding(s)\n{}",
            options.mode.name(),
            self.cases,
            self.seconds,
            options.seed,
            self.findings.failed_cases,
            self.findings.groups.len(),
            self.findings.report()
        )
    }
}

/// The state the workers share.
struct Shared<'a> {
    options: &'a Options,
    corpus: Corpus,
    next: AtomicU64,
    done: AtomicU64,
    start: Instant,
    findings: Mutex<Findings>,
    /// Per worker: the case it runs and since when (for the watchdog).
    running: Vec<Mutex<Option<(u64, Instant)>>>,
}

/// Runs cases until the budget is spent.
pub fn run(options: &Options) -> io::Result<Report> {
    let corpus = Corpus::load(&options.fixtures)?;
    let scratch = options.out_dir.join("fuzz-tmp").join(format!("{}-{}", options.mode.name(), std::process::id()));
    let findings_dir = options.out_dir.join("fuzz-findings");
    let shared = Shared {
        options,
        corpus,
        next: AtomicU64::new(0),
        done: AtomicU64::new(0),
        start: Instant::now(),
        findings: Mutex::new(Findings::new(options.mode.name(), findings_dir, options.rerun.clone())),
        running: (0..options.jobs).map(|_| Mutex::new(None)).collect(),
    };
    if options.mode == Mode::Parse {
        in_process::install_panic_hook();
    }
    let result = std::thread::scope(|scope| -> io::Result<()> {
        let workers: Vec<_> = (0..options.jobs)
            .map(|w| {
                let (shared, dir) = (&shared, scratch.join(format!("w{w}")));
                scope.spawn(move || work(shared, w, &dir))
            })
            .collect();
        if options.mode == Mode::Parse {
            scope.spawn(|| watchdog(&shared));
        }
        workers.into_iter().try_for_each(|w| w.join().expect("workers turn their cases' panics into errors"))
    });
    let _ = std::fs::remove_dir_all(&scratch);
    result?;
    Ok(Report {
        cases: shared.done.load(Ordering::Relaxed),
        seconds: shared.start.elapsed().as_secs_f64(),
        findings: shared.findings.into_inner().unwrap_or_else(|e| e.into_inner()),
    })
}

/// One worker: takes the next case number until the budget is spent.
fn work(shared: &Shared, worker: usize, scratch: &Path) -> io::Result<()> {
    std::fs::create_dir_all(scratch)?;
    let options = shared.options;
    loop {
        let index = shared.next.fetch_add(1, Ordering::Relaxed);
        let out_of_time = options.seconds.is_some_and(|s| shared.start.elapsed().as_secs_f64() >= s);
        if out_of_time || options.cases.is_some_and(|n| index >= n) {
            *shared.running[worker].lock().expect("running lock") = None;
            return Ok(());
        }
        let seed = options.seed.wrapping_add(index);
        *shared.running[worker].lock().expect("running lock") = Some((seed, Instant::now()));
        let case = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match options.mode {
            Mode::Parse => parse_case(shared, seed),
            Mode::Build => build_case(shared, seed, scratch),
        }));
        // The code under test has its panics caught inside the case; one that gets here is the
        // fuzzer's own, and the seed is what reproduces it.
        case.unwrap_or_else(|_| {
            Err(io::Error::other(format!(
                "the fuzzer itself panicked on seed {seed} (--seed {seed} --cases 1 reruns it)"
            )))
        })?;
        shared.done.fetch_add(1, Ordering::Relaxed);
    }
}

fn parse_case(shared: &Shared, seed: u64) -> io::Result<()> {
    let case = ParseCase::generate(&shared.corpus, seed);
    let files: Vec<(&[u8], Option<u32>)> = case.files.iter().map(|f| (f.text.as_slice(), f.file_rank)).collect();
    let violations = parse_violations(in_process::run(&files));
    if violations.is_empty() {
        return Ok(());
    }
    let save = |dir: &Path| case.save(dir);
    let failed =
        FailedCase { seed, size: case.size(), description: &case.description, violations: &violations, save: &save };
    shared.findings.lock().expect("findings lock").record(failed)
}

/// The invariants of the in-process run: no panic, no error on an in-memory log.
pub fn parse_violations(outcome: Outcome) -> Vec<Violation> {
    match outcome {
        Outcome::Done { .. } => Vec::new(),
        Outcome::Panicked(text) => {
            let (location, message) =
                oracle::panic_message(&text).unwrap_or_else(|| ("(unknown)".into(), text.clone()));
            vec![Violation {
                invariant: "panic",
                signature: format!("parse: panicked at {location}: {}", oracle::normalize(&message, None)),
                detail: text,
            }]
        }
        Outcome::LostLines(what) => vec![Violation {
            invariant: "lost_lines",
            signature: format!("parse: lines in no entry and no diagnostic: {}", oracle::normalize(&what, None)),
            detail: what,
        }],
        Outcome::Failed(error) => vec![Violation {
            invariant: "error",
            signature: format!("parse: error: {}", oracle::normalize(&error, None)),
            detail: error,
        }],
    }
}

fn build_case(shared: &Shared, seed: u64, scratch: &Path) -> io::Result<()> {
    let case = BuildCase::generate(&shared.corpus, seed);
    let dir = scratch.join(format!("case-{seed}"));
    let _ = std::fs::remove_dir_all(&dir);
    let written = case.write(&dir)?;
    let violations = oracle::check_build(&shared.options.binary, &shared.options.runner, &written)?;
    if !violations.is_empty() {
        let description = case.description();
        let save = |to: &Path| save_build_case(&written.trace, &dir, to);
        let failed =
            FailedCase { seed, size: case.size(), description: &description, violations: &violations, save: &save };
        shared.findings.lock().expect("findings lock").record(failed)?;
    }
    std::fs::remove_dir_all(&dir)
}

/// Inputs larger than this are not copied into the findings (the seed makes them again).
const LARGEST_SAVED_INPUT: u64 = 4 << 20;

/// Copies the trace (file or directory) and the binary's output of a failing build case.
fn save_build_case(trace: &Path, case_dir: &Path, to: &Path) -> io::Result<()> {
    for name in ["build.stderr", "build.stdout", "validate.stdout", "validate.stderr"] {
        let from = case_dir.join(name);
        if from.exists() {
            std::fs::copy(&from, to.join(name))?;
        }
    }
    let files: Vec<PathBuf> = if trace.is_dir() {
        std::fs::read_dir(trace)?.map(|e| e.map(|e| e.path())).collect::<io::Result<_>>()?
    } else {
        vec![trace.to_owned()]
    };
    let size: u64 = files.iter().map(|f| f.metadata().map(|m| m.len()).unwrap_or(0)).sum();
    if size > LARGEST_SAVED_INPUT {
        return std::fs::write(to.join("INPUT-NOT-SAVED"), format!("{size} bytes: rerun the seed to make it again\n"));
    }
    let into = if trace.is_dir() { to.join("trace") } else { to.to_owned() };
    std::fs::create_dir_all(&into)?;
    for file in files {
        std::fs::copy(&file, into.join(file.file_name().expect("a file name")))?;
    }
    Ok(())
}

/// Stops the run when an in-process case has run past the time limit: it reports the case as
/// a hang, saves its input and exits (the stuck thread cannot be stopped).
fn watchdog(shared: &Shared) {
    let timeout = shared.options.runner.limits.timeout;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let stuck = shared.running.iter().find_map(|r| {
            let running = *r.lock().expect("running lock");
            running.filter(|(_, since)| since.elapsed() > timeout).map(|(seed, _)| seed)
        });
        if let Some(seed) = stuck {
            report_hang(shared, seed);
        }
        let all_idle = shared.running.iter().all(|r| r.lock().expect("running lock").is_none());
        if all_idle && shared.next.load(Ordering::Relaxed) > 0 && finished(shared) {
            return;
        }
    }
}

/// Whether the workers have stopped taking cases.
fn finished(shared: &Shared) -> bool {
    let options = shared.options;
    options.seconds.is_some_and(|s| shared.start.elapsed().as_secs_f64() >= s)
        || options.cases.is_some_and(|n| shared.next.load(Ordering::Relaxed) >= n)
}

fn report_hang(shared: &Shared, seed: u64) -> ! {
    let case = ParseCase::generate(&shared.corpus, seed);
    let violations = vec![Violation {
        invariant: "hang",
        signature: "parse: a case did not end within the time limit".into(),
        detail: format!("still running after {:?}", shared.options.runner.limits.timeout),
    }];
    let save = |dir: &Path| case.save(dir);
    let failed =
        FailedCase { seed, size: case.size(), description: &case.description, violations: &violations, save: &save };
    let mut findings = shared.findings.lock().unwrap_or_else(|e| e.into_inner());
    if let Err(e) = findings.record(failed) {
        eprintln!("tlparse-fuzz: could not save the hanging case: {e}");
    }
    println!(
        "tlparse-fuzz parse: stopped after {} case(s): seed {seed} hangs\n{}",
        shared.done.load(Ordering::Relaxed),
        findings.report()
    );
    std::process::exit(1);
}
