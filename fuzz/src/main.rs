//! The `tlparse-fuzz` command: `tlparse-fuzz build|parse [--seconds N] [--cases N] [--seed S]
//! ...`; see fuzz/README.md.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use tlparse_fuzz::child::{self, Limits, Runner};
use tlparse_fuzz::run::{self, Mode, Options};

/// Fuzz tlparse-build with mutated real logs. Exits 1 when anything was found.
#[derive(Debug, Parser)]
#[command(name = "tlparse-fuzz")]
struct Cli {
    /// `parse`: the parser and stream tables in this process (fast); `build`: the release
    /// binary and its `validate`, as child processes.
    mode: CliMode,
    /// Stop starting cases after this many seconds.
    #[arg(long)]
    seconds: Option<f64>,
    /// Stop after this many cases (with neither this nor --seconds: 60 seconds).
    #[arg(long)]
    cases: Option<u64>,
    /// Seed of the first case (case i has seed S+i); default: from the clock.
    #[arg(long)]
    seed: Option<u64>,
    /// Peak RSS allowed to a build, in MiB.
    #[arg(long, default_value_t = 256)]
    max_rss_mb: u64,
    /// Seconds after which a case counts as hung (default: 60 for build, 10 for parse).
    #[arg(long)]
    timeout_s: Option<f64>,
    /// The tlparse-build binary (default: target/release/tlparse-build of this workspace).
    #[arg(long)]
    binary: Option<PathBuf>,
    /// Cases run at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Where the fixture logs are (default: fixtures-repo/ of this workspace).
    #[arg(long)]
    fixtures: Option<PathBuf>,
    /// Where fuzz-findings/ and the scratch directory go (default: target/ of this workspace).
    #[arg(long)]
    out_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CliMode {
    Parse,
    Build,
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == child::WATCH) {
        return match child::watch_main(&args[2..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("tlparse-fuzz {}: {e}", child::WATCH);
                ExitCode::from(2)
            }
        };
    }
    let cli = Cli::parse();
    let options = match options(&cli) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("tlparse-fuzz: cannot find its own binary (the watcher): {e}");
            return ExitCode::from(2);
        }
    };
    match run::run(&options) {
        Ok(report) => {
            print!("{}", report.summary(&options));
            if report.findings.groups.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Err(e) => {
            eprintln!("tlparse-fuzz: {e}");
            ExitCode::from(2)
        }
    }
}

fn options(cli: &Cli) -> std::io::Result<Options> {
    let root = tlparse_fuzz::workspace_root();
    let mode = match cli.mode {
        CliMode::Parse => Mode::Parse,
        CliMode::Build => Mode::Build,
    };
    let timeout = cli.timeout_s.unwrap_or(if mode == Mode::Build { 60.0 } else { 10.0 });
    let binary = cli.binary.clone().unwrap_or_else(|| root.join("target/release/tlparse-build"));
    let seconds = if cli.seconds.is_none() && cli.cases.is_none() { Some(60.0) } else { cli.seconds };
    let seed = cli.seed.unwrap_or_else(clock_seed);
    Ok(Options {
        mode,
        seconds,
        cases: cli.cases,
        seed,
        runner: Runner {
            watcher: std::env::current_exe()?,
            limits: Limits { max_rss: cli.max_rss_mb << 20, timeout: Duration::from_secs_f64(timeout) },
        },
        rerun: rerun_command(cli, mode),
        binary,
        jobs: cli.jobs.max(1),
        fixtures: cli.fixtures.clone().unwrap_or_else(|| root.join("fixtures-repo")),
        out_dir: cli.out_dir.clone().unwrap_or_else(|| root.join("target")),
    })
}

/// A different seed for every run, so that runs explore different cases; printed in the
/// summary, so any run can be repeated.
fn clock_seed() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (now.as_secs() << 20) ^ u64::from(now.subsec_micros())
}

/// The command that reruns one case of this run: the options that change a case's outcome.
fn rerun_command(cli: &Cli, mode: Mode) -> String {
    let mut command = format!("target/release/tlparse-fuzz {}", mode.name());
    if let Some(binary) = &cli.binary {
        command.push_str(&format!(" --binary {}", binary.display()));
    }
    if cli.max_rss_mb != 256 {
        command.push_str(&format!(" --max-rss-mb {}", cli.max_rss_mb));
    }
    if let Some(t) = cli.timeout_s {
        command.push_str(&format!(" --timeout-s {t}"));
    }
    if let Some(f) = &cli.fixtures {
        command.push_str(&format!(" --fixtures {}", f.display()));
    }
    command
}
