//! The command line: a thin clap layer over [`crate::bundle`], [`crate::serve`] and
//! [`crate::publish`]. Built without the `share` feature, it has no `serve`, `publish`, `proxy`
//! nor `--open`, and says so when asked for them.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use camino::Utf8PathBuf;
use clap::{Args, Parser, Subcommand};

use crate::analysis::alignment;
use crate::bundle::shard::{MergeOptions, ShardOptions};
use crate::bundle::{self, BuildOptions, reader};
#[cfg(feature = "share")]
use crate::http::AllowedOrigins;
use crate::parse::display_compile_id;
#[cfg(feature = "share")]
use crate::proxy::ProxyOptions;
#[cfg(feature = "share")]
use crate::publish::{self, Place, Progress, PublishOptions};
#[cfg(feature = "share")]
use crate::serve::{self, ServeOptions};
use tlparse_bundle::DirSource;

/// Compile PyTorch TORCH_TRACE logs into a bundle that static viewers read.
///
/// TRACE is a log file (plain, .gz or .zst) or a trace directory (every TORCH_TRACE log in it,
/// one per rank). Problems in the logs never stop the build: they are recorded in the bundle's
/// diagnostics.jsonl and summarised on stderr.
#[derive(Debug, Parser)]
#[command(name = "tlparse-build", version, args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    build: BuildArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build a bundle (the default command).
    Build(BuildArgs),
    /// Check a bundle: every file against its schema, every hash, every reference between
    /// files. Prints what is wrong and exits non-zero if anything is.
    Validate {
        /// The bundle directory.
        bundle: Utf8PathBuf,
    },
    /// Print a payload: `cat BUNDLE HASH`, or `cat BUNDLE COMPILE_ID NAME` where NAME is an
    /// artifact name or an entry kind (e.g. `cat b '[0/0]' inductor_output_code`).
    Cat {
        /// The bundle directory.
        bundle: Utf8PathBuf,
        /// A blob id (32 hex digits), or a compile id (`[0/1]` or `0/1`) followed by a name.
        #[arg(required = true, num_args = 1..=2)]
        what: Vec<String>,
        /// Only look in this stream (e.g. `rank0`).
        #[arg(long)]
        stream: Option<String>,
    },
    /// Compare two runs: their compiles aligned by code (as across ranks), and per compile what
    /// changed from A to B (status, compile time, graph sizes, guards, dynamic-shape symbols,
    /// graph breaks, cache outcomes, artifacts), compiles only one run made, recompile counts.
    /// A and B are each a bundle directory or a trace (a log file or trace directory, built to
    /// a temporary bundle first).
    Compare {
        /// Run A: a bundle directory or a trace.
        a: Utf8PathBuf,
        /// Run B: a bundle directory or a trace.
        b: Utf8PathBuf,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
        /// Print only the findings, without the per-stream headings (counts of compiles).
        #[arg(short, long)]
        quiet: bool,
    },
    /// Serve a bundle on 127.0.0.1 and open its viewer in a browser. Runs until stopped (Ctrl-C).
    #[cfg(feature = "share")]
    Serve {
        /// The bundle directory.
        bundle: Utf8PathBuf,
        /// The port to listen on (0: any free port). Without it: 8000, or the next free one up
        /// to 8020, else any free port.
        #[arg(long)]
        port: Option<u16>,
        /// Only print the URL; do not open a browser.
        #[arg(long)]
        no_open: bool,
        /// Let pages of ORIGIN (`scheme://host[:port]`, e.g. a hosted viewer's
        /// `https://NAME.github.io`) read the bundle; repeatable. `*` allows every origin.
        #[arg(long = "allow-origin", value_name = "ORIGIN")]
        allow_origin: Vec<String>,
    },
    /// Publish a bundle where a browser can read it: a bucket or a directory for GitHub Pages.
    ///
    /// URL is `s3://BUCKET/PREFIX` (AWS, R2, MinIO or any S3 API server: the endpoint, region
    /// and credentials come only from the standard AWS_* variables: AWS_ACCESS_KEY_ID,
    /// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL; or the instance's
    /// role), `gs://BUCKET/PREFIX`
    /// (GOOGLE_* variables), `az://CONTAINER/PREFIX` (AZURE_* variables, with
    /// AZURE_STORAGE_ACCOUNT_NAME), or a directory (a path or `file://`), which gets the bundle
    /// at its root plus a `.nojekyll`, ready to push to GitHub Pages.
    ///
    /// The bundle is validated first; a damaged one is refused. Each file gets its content type
    /// and a cache policy (hash-named packs immutable, everything else revalidated on each use);
    /// files already there with the same bytes are skipped. The manifest is written last, so a
    /// reader never sees a manifest whose files are missing.
    ///
    /// A different bundle already at URL is refused unless --replace. With --replace, the old
    /// manifest is deleted first (readers see no bundle rather than a mix of two), the new files
    /// are uploaded, the new manifest written, and then the old bundle's files that the new one
    /// does not list are deleted. With no manifest at URL (a publish stopped before writing it),
    /// --replace deletes the files it left there that the new bundle does not list (only paths
    /// a bundle uses: index.html, viewer/, blobs/, ...). Nothing else at URL is ever deleted.
    #[cfg(feature = "share")]
    Publish {
        /// The bundle directory.
        bundle: Utf8PathBuf,
        /// Where to publish: s3://, gs://, az://, file:// or a directory.
        url: String,
        /// Replace a different bundle already at URL (see above for the order of writes).
        #[arg(long)]
        replace: bool,
        /// Files transferred at once.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
        jobs: u16,
        /// Print one line per file written or deleted (on stderr), instead of a progress bar.
        #[arg(short, long)]
        verbose: bool,
        /// Print nothing but errors.
        #[arg(short, long, conflicts_with = "verbose")]
        quiet: bool,
    },
    /// Build one log's shard where the log is, for `merge` to put together with the others'
    /// (see docs/scale.md: an array job of shards, one per rank log, then one merge).
    Shard {
        /// One TORCH_TRACE log file (plain, .gz or .zst).
        log: Utf8PathBuf,
        /// The shard directory to write.
        #[arg(short, long)]
        out: Utf8PathBuf,
        /// The log's path in the merged bundle when it is not the file name: its path below the
        /// trace directory a one-run build would be given (e.g. `node3/rank17.log`).
        #[arg(long)]
        name: Option<String>,
        /// Replace the shard at OUT (never a directory that is not a shard).
        #[arg(long)]
        overwrite: bool,
        /// As for a build.
        #[arg(long, default_value_t = (bundle::DEFAULT_MAX_LINE >> 20) as u64, value_name = "MIB",
              value_parser = clap::value_parser!(u64).range(1..=512))]
        max_line_mb: u64,
    },
    /// Merge shards into one bundle: the bundle a build of all their logs at once makes, byte
    /// for byte. Shards are checked first (written whole, same version, every file's hash); a
    /// missing or damaged one stops the merge before anything is written.
    Merge {
        /// Shards, in any order: directories, or URLs of shards in a bucket (`s3://BUCKET/PREFIX`,
        /// `gs://`, `az://`; credentials from the environment, as for `publish`).
        #[arg(required = true)]
        shards: Vec<Utf8PathBuf>,
        /// The bundle directory to write.
        #[arg(short, long)]
        out: Utf8PathBuf,
        /// Replace the bundle at OUT, as for a build.
        #[arg(long)]
        overwrite: bool,
        /// Fail unless ranks 0 to N-1, and no others, are among the shards: an array job's lost
        /// task is then an error, not a smaller job.
        #[arg(long, value_name = "N")]
        expect_ranks: Option<u32>,
        /// Don't ship the reference viewer in the bundle.
        #[arg(long)]
        no_viewer: bool,
        /// Print nothing but errors.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Serve the bundles of an object store or web server to viewers on other origins: adds
    /// CORS for the origins given, forwards only bundle files (GET and HEAD), never lets a file
    /// run as a page of its own origin. Listens on 127.0.0.1; runs until stopped (Ctrl-C).
    #[cfg(feature = "share")]
    Proxy(ProxyArgs),
    /// `serve`, `publish` and `proxy` in a build without sharing: hidden, so that asking for
    /// them says why they are missing (rather than reading the name as a TRACE to build).
    #[cfg(not(feature = "share"))]
    #[command(name = "serve", aliases = ["publish", "proxy"], hide = true, disable_help_flag = true)]
    NoSharing {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

#[cfg(feature = "share")]
#[derive(Debug, Args)]
struct ProxyArgs {
    /// Where the bundles are: `s3://BUCKET/PREFIX`, `gs://...`, `az://CONTAINER/PREFIX` (credentials,
    /// region and endpoint from the standard environment variables, e.g. AWS_PROFILE,
    /// AWS_ENDPOINT_URL) or an `http(s)://` base URL. A bundle at UPSTREAM/job-1/ is served at
    /// /job-1/.
    upstream: String,
    /// An origin whose pages may read through the proxy (`https://you.github.io`,
    /// `http://127.0.0.1:8000`); repeat for more. `*` allows every origin.
    #[arg(long = "allow-origin", required = true, value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// The port to listen on (0: any free port).
    #[arg(long, default_value_t = crate::proxy::DEFAULT_PORT)]
    port: u16,
    /// The address to listen on. Anything but loopback needs --allow-host and --token-file (or
    /// --no-token); put a TLS reverse proxy in front.
    #[arg(long, default_value = "127.0.0.1")]
    bind: std::net::IpAddr,
    /// A name clients reach the proxy by (`proxy.example.com` or `proxy.example.com:8443`), as
    /// their `Host` header gives it; repeat for more. Other names are refused.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
    /// Require `Authorization: Bearer TOKEN` on every request, TOKEN being this file's content
    /// (16 printable characters or more; surrounding whitespace ignored).
    #[arg(long, value_name = "FILE", conflicts_with = "no_token")]
    token_file: Option<Utf8PathBuf>,
    /// With --bind off loopback, serve without a token: whoever reaches the port reads every
    /// bundle under the upstream (when something in front, e.g. the reverse proxy, checks who).
    #[arg(long)]
    no_token: bool,
    /// The largest file fetched from the upstream, in MiB.
    #[arg(long, default_value_t = crate::proxy::DEFAULT_MAX_FILE >> 20, value_name = "MIB")]
    max_file_mb: u64,
    /// Memory for recently read packs, in MiB (0: no cache).
    #[arg(long, default_value_t = crate::proxy::DEFAULT_CACHE_BYTES >> 20, value_name = "MIB")]
    cache_mb: u64,
    /// How long the upstream may stay silent (connecting, answering, or in the middle of a file)
    /// before the request fails: a 502, or a body cut short. Retried once.
    #[arg(long, default_value_t = crate::proxy::upstream::UpstreamTimeouts::DEFAULT_INACTIVITY.as_secs_f64(), value_name = "SECONDS")]
    upstream_timeout: f64,
}

#[derive(Debug, Args)]
struct BuildArgs {
    /// A TORCH_TRACE log file or trace directory.
    #[arg(required = true)]
    trace: Option<Utf8PathBuf>,
    /// The bundle directory to write.
    #[arg(short, long, required = true)]
    out: Option<Utf8PathBuf>,
    /// Replace the bundle at OUT. Only the old bundle's own entries are replaced: anything else in
    /// OUT (.git, CNAME, notes) stays, and a file the old manifest does not list inside one of a
    /// bundle's folders stops the build. A directory that is not a bundle is never touched.
    #[arg(long)]
    overwrite: bool,
    /// With a directory: read only its most recently modified log.
    #[arg(long)]
    latest: bool,
    /// Exit non-zero if the logs had any problem (the bundle is still written).
    #[arg(long)]
    strict: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
    /// Don't ship the reference viewer (`index.html` and `viewer/`) in the bundle.
    #[arg(long)]
    no_viewer: bool,
    /// The most MiB of one log line or payload held in memory. A longer header or stray line
    /// is kept only as a `line_too_long` diagnostic (its bytes stored), a longer payload is
    /// stored but not analysed (`payload_too_large`); both stream to the blob store.
    #[arg(long, default_value_t = (bundle::DEFAULT_MAX_LINE >> 20) as u64, value_name = "MIB",
          value_parser = clap::value_parser!(u64).range(1..=512))]
    max_line_mb: u64,
    /// Bytes of JSON in a part of a table (at most the default, 8 MiB): tests lower it to cut
    /// small tables into parts.
    #[arg(long, hide = true, value_name = "BYTES",
          value_parser = clap::value_parser!(u64).range(1..=tlparse_bundle::parts::PART_BYTES))]
    table_part_bytes: Option<u64>,
    /// After building, serve OUT and open its viewer in a browser, as `serve OUT` does.
    #[cfg(feature = "share")]
    #[arg(long)]
    open: bool,
    /// With --open: the port to listen on (0: any free port).
    #[cfg(feature = "share")]
    #[arg(long, requires = "open")]
    port: Option<u16>,
    /// `--open` in a build without sharing: hidden, so that asking for it says why it is missing.
    #[cfg(not(feature = "share"))]
    #[arg(long, hide = true)]
    open: bool,
}

/// Runs the command line; the exit code is 0 on success, 1 when validation or `--strict` found
/// problems, 2 when the command could not run.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // A build, shard or merge stopped by SIGINT or SIGTERM removes its unfinished bundle; a
    // compare, the temporary bundles it builds from traces.
    let builds = matches!(
        cli.command,
        None | Some(Command::Build(_) | Command::Shard { .. } | Command::Merge { .. } | Command::Compare { .. })
    );
    if builds {
        if let Err(e) = bundle::interrupt::clean_up_on_signals() {
            eprintln!("error: cannot handle SIGINT and SIGTERM: {e}");
            return ExitCode::from(2);
        }
    }
    let result = match cli.command {
        Some(Command::Build(args)) => run_build(args),
        None => run_build(cli.build),
        Some(Command::Validate { bundle }) => run_validate(&bundle),
        Some(Command::Cat { bundle, what, stream }) => run_cat(&bundle, &what, stream.as_deref()),
        #[cfg(feature = "share")]
        Some(Command::Serve { bundle, port, no_open, allow_origin }) => {
            AllowedOrigins::parse(&allow_origin).and_then(|allowed_origins| {
                run_serve(&bundle, &ServeOptions { port, open_browser: !no_open, allowed_origins })
            })
        }
        #[cfg(feature = "share")]
        Some(Command::Publish { bundle, url, replace, jobs, verbose, quiet }) => {
            let progress = if verbose { Progress::Lines } else { publish::default_progress(quiet) };
            let options = PublishOptions { bundle, url, replace, jobs: jobs.into(), progress };
            run_publish(&options, quiet)
        }
        #[cfg(feature = "share")]
        Some(Command::Proxy(args)) => run_proxy(args),
        #[cfg(not(feature = "share"))]
        Some(Command::NoSharing { .. }) => Err(format!("serve, publish and proxy need sharing, which {NO_SHARING}")),
        Some(Command::Compare { a, b, json, quiet }) => run_compare(&a, &b, json, quiet),
        Some(Command::Shard { log, out, name, overwrite, max_line_mb }) => {
            let options = ShardOptions { log, output: out, name, overwrite, max_line: (max_line_mb << 20) as usize };
            run_shard(&options)
        }
        Some(Command::Merge { shards, out, overwrite, expect_ranks, no_viewer, quiet }) => {
            let options = MergeOptions { output: out, overwrite, viewer: !no_viewer, expect_ranks };
            run_merge(&shards, &options, quiet)
        }
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {}", shown(&message));
            ExitCode::from(2)
        }
    }
}

fn run_compare(a: &Utf8PathBuf, b: &Utf8PathBuf, json: bool, quiet: bool) -> Result<ExitCode, String> {
    let comparison = crate::compare::compare(a, b)?;
    if json {
        say!("{}", serde_json::to_string_pretty(&comparison).map_err(|e| e.to_string())?);
        return Ok(ExitCode::SUCCESS);
    }
    let lines = crate::analysis::run_compare::findings(&comparison);
    // Quiet: no per-stream heading (a stream only one run has is still said).
    let heading = |l: &str| l.starts_with("stream ") && l.contains(" frame compile(s) in both runs");
    for line in lines.iter().filter(|l| !(quiet && heading(l))) {
        say!("{}", shown(&if quiet { line.trim_start() } else { line }));
    }
    Ok(ExitCode::SUCCESS)
}

fn run_shard(options: &ShardOptions) -> Result<ExitCode, String> {
    let shard = bundle::shard::build_shard(options).map_err(|e| e.to_string())?;
    let entries: u64 = shard.streams.iter().map(|s| s.entries).sum();
    say!(
        "wrote shard {}: {} as {:?}, {} stream(s), {entries} entries, {} diagnostic(s)",
        shown(&options.output),
        shown(&options.log),
        shard.input.name,
        shard.streams.len(),
        shard.diagnostics.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// How a build without the `share` feature says what it cannot do.
#[cfg(not(feature = "share"))]
const NO_SHARING: &str = "this tlparse-build was built without (the cargo feature `share`, on by default: `cargo install tlparse-build` has it)";

fn run_merge(shards: &[Utf8PathBuf], options: &MergeOptions, quiet: bool) -> Result<ExitCode, String> {
    #[cfg(feature = "share")]
    let manifest = publish::shards::merge(shards, options).map_err(|e| e.to_string())?;
    #[cfg(not(feature = "share"))]
    let manifest = {
        if let Some(url) = shards.iter().find(|s| s.as_str().contains("://")) {
            return Err(format!(
                "{url}: a shard in a bucket needs sharing, which {NO_SHARING}; download the shard and merge its directory"
            ));
        }
        let local: Vec<bundle::shard::ShardDir> = shards.iter().cloned().map(bundle::shard::ShardDir::local).collect();
        bundle::shard::merge(&local, options).map_err(|e| e.to_string())?
    };
    if !quiet {
        say!(
            "wrote {}: {} shard(s), {} stream(s), {} entries, {} distinct payloads in {} pack(s), {} diagnostic(s)",
            shown(&options.output),
            manifest.inputs.len(),
            manifest.streams.len(),
            manifest.counts.entries,
            manifest.counts.unique_blobs,
            manifest.blobs.packs.len(),
            manifest.diagnostics.total
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "share")]
fn run_proxy(args: ProxyArgs) -> Result<ExitCode, String> {
    let options = ProxyOptions {
        upstream: args.upstream,
        allow_origins: args.allow_origins,
        allow_hosts: args.allow_hosts,
        bind: args.bind,
        port: args.port,
        token_file: args.token_file,
        no_token: args.no_token,
        max_file: args.max_file_mb.saturating_mul(1 << 20),
        cache_bytes: args.cache_mb.saturating_mul(1 << 20),
        upstream_timeouts: crate::proxy::upstream::UpstreamTimeouts::with_inactivity(
            std::time::Duration::try_from_secs_f64(args.upstream_timeout)
                .ok()
                .filter(|t| !t.is_zero())
                .ok_or("--upstream-timeout: a positive number of seconds")?,
        ),
    };
    crate::proxy::run(&options)?;
    Ok(ExitCode::SUCCESS)
}

fn run_build(args: BuildArgs) -> Result<ExitCode, String> {
    let (Some(trace), Some(out)) = (args.trace, args.out) else {
        return Err("usage: tlparse-build TRACE -o OUT".into());
    };
    #[cfg(not(feature = "share"))]
    if args.open {
        return Err(format!("--open needs sharing (it serves the bundle), which {NO_SHARING}"));
    }
    let options = BuildOptions {
        input: trace,
        output: out.clone(),
        overwrite: args.overwrite,
        latest: args.latest,
        progress: !args.quiet && std::io::stderr().is_terminal(),
        viewer: !args.no_viewer,
        max_line: (args.max_line_mb << 20) as usize,
    };
    // Everything the closing lines need is read before the bundle replaces OUT, quiet or not:
    // a bundle that does not read back is not installed, and after the swap nothing can fail.
    let mut tables = bundle::table_files::TableOptions::default();
    if let Some(bytes) = args.table_part_bytes {
        tables.part_bytes = bytes;
    }
    let (manifest, _, report) = bundle::build_checked(&options, &tables, |root, manifest, findings| {
        BuildReport::read(root, manifest, findings).map_err(|e| e.to_string())
    })
    .map_err(|e| e.to_string())?;
    let d = &manifest.diagnostics;
    if !args.quiet {
        report.print(&out, &manifest);
    }
    if args.strict && d.total > 0 {
        let (out, total) = (shown(&out), d.total);
        let _ = writeln!(std::io::stderr(), "error: --strict: the logs had {total} problem(s); see {out}/{}", d.path);
        return Ok(ExitCode::from(1));
    }
    #[cfg(feature = "share")]
    if args.open {
        return run_serve(&out, &ServeOptions { port: args.port, open_browser: true, ..ServeOptions::default() });
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "share")]
fn run_publish(options: &PublishOptions, quiet: bool) -> Result<ExitCode, String> {
    let summary = publish::publish(options).map_err(|e| publish::redact_credentials(&e.to_string()))?;
    if quiet {
        return Ok(ExitCode::SUCCESS);
    }
    let replaced = if summary.replaced { "replaced the bundle there: " } else { "" };
    say!(
        "published {} to {}: {replaced}{} file(s) uploaded ({}), {} already there, {} old file(s) deleted, in {:.1} s",
        options.bundle,
        options.url,
        summary.uploaded,
        human_bytes(summary.uploaded_bytes),
        summary.already_there,
        summary.deleted,
        summary.elapsed.as_secs_f64()
    );
    if summary.foreign_viewer {
        say!(
            "note: the bundle's viewer is not the one this tlparse-build ships (another version's, or changed by \
             whoever built it); it was published as it is and runs as a page of the destination's origin"
        );
    }
    if summary.leftovers > 0 {
        say!("note: {} of the old file(s) deleted were left by an earlier, interrupted publish", summary.leftovers);
    }
    match &summary.place {
        Place::Url(folder) => {
            say!("open:       {folder}index.html");
            say!("bundle URL: {folder}  (for a viewer hosted elsewhere; the bucket must allow its origin by CORS)");
            say!(
                "note: browsers read it only if the bucket (or this prefix) allows public reads; where the bucket \
                 is served under another domain (a CDN, R2's r2.dev), open PREFIX/index.html there"
            );
        }
        Place::Dir(dir) => {
            say!("open:       tlparse-build serve {dir}");
            say!(
                "GitHub Pages: commit {dir} (with its .nojekyll) as the root of the branch or /docs folder Pages \
                 serves; the viewer is then at https://OWNER.github.io/REPO/ and the bundle URL is that folder"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `1.8 MB`, `912 B`.
#[cfg(feature = "share")]
fn human_bytes(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KB", b as f64 / (1u64 << 10) as f64),
        b => format!("{b} B"),
    }
}

#[cfg(feature = "share")]
fn run_serve(bundle: &Utf8PathBuf, options: &ServeOptions) -> Result<ExitCode, String> {
    serve::serve(bundle, options).map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// Exits 1 on any problem of a bundle, however damaged; 2 only when `path` is no bundle at all.
fn run_validate(path: &Utf8PathBuf) -> Result<ExitCode, String> {
    if !path.is_dir() {
        return Err(format!("{path} is not a directory, so not a bundle"));
    }
    let problems = tlparse_bundle::validate::validate(DirSource::new(path.as_std_path()))
        .map_err(|e| format!("{path} is not a bundle ({e})"))?;
    if problems.is_empty() {
        say!("{}: valid", shown(path));
        return Ok(ExitCode::SUCCESS);
    }
    for p in &problems {
        say!("{}", shown(&format!("{path}/{p}")));
    }
    say!("{}: {} problem(s)", shown(path), problems.len());
    Ok(ExitCode::from(1))
}

fn run_cat(path: &Utf8PathBuf, what: &[String], stream: Option<&str>) -> Result<ExitCode, String> {
    let b = reader::Bundle::open(path.as_std_path()).map_err(|e| e.to_string())?;
    let hash = match what {
        [hash] => hash.clone(),
        [compile_id, name] => {
            let wanted = tlparse_bundle::ids::displayed_compile_id(compile_id);
            let mut matches = Vec::new();
            // The first matching entry logged without a payload, to say so rather than "none".
            let mut payloadless = None;
            for s in b.manifest.streams.iter().filter(|s| stream.is_none_or(|id| id == s.id)) {
                // One row at a time: an index can be hundreds of MB, or a hostile bomb.
                for row in b.index_rows_iter(&s.id).map_err(|e| e.to_string())? {
                    let row = row.map_err(|e| e.to_string())?;
                    let id_matches = row.cid.as_ref().map(display_compile_id).as_deref() == Some(wanted.as_str());
                    let name_matches = row.name.as_deref() == Some(name.as_str()) || row.kind == *name;
                    match (id_matches && name_matches, row.payload) {
                        (true, Some(p)) if matches.len() < 100 => matches.push((s.id.clone(), row.line, p.hash)),
                        (true, None) if payloadless.is_none() => payloadless = Some((s.id.clone(), row.line)),
                        _ => {}
                    }
                }
            }
            match (matches.len(), payloadless) {
                (0, Some((s, line))) => {
                    return Err(format!(
                        "{name:?} of compile id {wanted} was logged without a payload (stream {s}, log line {line})"
                    ));
                }
                (0, None) => return Err(format!("no payload named {name:?} for compile id {wanted} in {path}")),
                (1, _) => {}
                (n, _) => {
                    eprintln!("note: {n} payloads match; printing the first. Others:");
                    for (s, line, h) in &matches[1..] {
                        eprintln!("  stream {}, log line {line}: {h}", shown(s));
                    }
                }
            }
            matches.swap_remove(0).2
        }
        _ => return Err("usage: tlparse-build cat BUNDLE (HASH | COMPILE_ID NAME)".into()),
    };
    let bytes = b.blob(&hash).map_err(|e| e.to_string())?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&bytes).and_then(|()| stdout.flush()).map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// `text` as it may go to a terminal: a control character (ESC, a newline, C1's CSI) in a file
/// name or a log's text could forge lines or move the cursor, so each is written as an escape
/// (`\n`, `\u{1b}`), as Rust's `escape_debug` writes it.
pub fn shown(text: &dyn std::fmt::Display) -> String {
    let text = text.to_string();
    if !text.chars().any(char::is_control) {
        return text;
    }
    text.chars().map(|c| if c.is_control() { c.escape_debug().to_string() } else { c.to_string() }).collect()
}

/// How many of a build's diagnostics it prints.
const DIAGNOSTICS_PRINTED: usize = 10;

/// What a build prints once its bundle is in place, read from the staged bundle before the swap.
struct BuildReport {
    /// The first diagnostics, as `file:line: message`.
    warnings: Vec<String>,
    /// What the tables found, a line each.
    findings: Vec<String>,
}

impl BuildReport {
    /// Reads the staged bundle at `root` for the closing lines.
    fn read(
        root: &std::path::Path,
        manifest: &crate::schema::Manifest,
        findings: &bundle::Findings,
    ) -> Result<BuildReport, reader::ReadError> {
        let mut warnings = Vec::new();
        if manifest.diagnostics.total > 0 {
            let b = reader::Bundle::open(root)?;
            for diag in b.diagnostics_iter()?.take(DIAGNOSTICS_PRINTED) {
                let diag = diag?;
                warnings.push(shown(&format_args!("{}:{}: {}", diag.file, diag.line, diag.message)));
            }
        }
        Ok(BuildReport { warnings, findings: finding_lines(root, manifest, findings)? })
    }

    /// Prints the report; a failing stderr or stdout is ignored, as nothing may fail now.
    fn print(&self, out: &Utf8PathBuf, manifest: &crate::schema::Manifest) {
        let out = shown(out);
        let mut stderr = std::io::stderr().lock();
        for line in &self.warnings {
            let _ = writeln!(stderr, "warning: {line}");
        }
        let d = &manifest.diagnostics;
        if d.total > self.warnings.len() as u64 {
            let _ =
                writeln!(stderr, "warning: ... and {} more in {out}/{}", d.total - self.warnings.len() as u64, d.path);
        }
        drop(stderr);
        let c = &manifest.counts;
        let pct = if c.input_bytes > 0 {
            100.0 * manifest.files.iter().map(|f| f.size).sum::<u64>() as f64 / c.input_bytes as f64
        } else {
            0.0
        };
        say!(
            "wrote {out}: {} input(s), {} stream(s), {} entries, {} distinct payloads in {} pack(s), {} diagnostic(s); bundle is {pct:.1}% of the input",
            manifest.inputs.len(),
            manifest.streams.len(),
            c.entries,
            c.unique_blobs,
            manifest.blobs.packs.len(),
            d.total,
        );
        for line in &self.findings {
            say!("{}", shown(line));
        }
    }
}

/// One line per stream (up to 8) of what the tables found: compiles by status, graph breaks,
/// recompiles, failed compiles and restarts (counted apart: a restart is no failure), as the
/// tables said when they finished; then what the cross-rank tables of the bundle at `root` found.
fn finding_lines(
    root: &std::path::Path,
    manifest: &crate::schema::Manifest,
    findings: &bundle::Findings,
) -> Result<Vec<String>, reader::ReadError> {
    let mut lines = Vec::new();
    for s in manifest.streams.iter().take(8) {
        let Some(found) = findings.get(&s.id) else { continue };
        let mut parts = Vec::new();
        if let Some(by_status) = &found.compiles_by_status {
            let detail: Vec<String> = by_status.iter().map(|(k, n)| format!("{n} {k}")).collect();
            parts.push(format!("{} compile id(s) ({})", by_status.values().sum::<u64>(), detail.join(", ")));
        }
        if let Some((total, places)) = found.graph_breaks {
            parts.push(format!("{total} graph break(s) at {places} place(s)"));
        }
        if let Some(frames) = found.recompiled_frames {
            parts.push(format!("{frames} frame(s) recompiled"));
        }
        if let Some((failed, restarts)) = found.failures {
            parts.push(format!("{failed} failed compile(s), {restarts} restart(s)"));
        }
        if !parts.is_empty() {
            lines.push(format!("  {}: {}", s.id, parts.join("; ")));
        }
    }
    if manifest.streams.len() > 8 {
        lines.push(format!("  ... and {} more stream(s)", manifest.streams.len() - 8));
    }
    if let Some(cross) = &manifest.cross_rank {
        // These still read their tables back from the bundle.
        let b = reader::Bundle::open(root)?;
        for line in cross_rank_findings(&b, cross)? {
            lines.push(format!("  across {} streams: {line}", cross.members.len()));
        }
    }
    Ok(lines)
}

/// One line per cross-rank table that found something worth a look.
fn cross_rank_findings(
    b: &reader::Bundle,
    cross: &crate::schema::cross_rank::CrossRank,
) -> Result<Vec<String>, reader::ReadError> {
    use crate::schema::cross_rank::cache_divergence::CacheDivergenceKind;
    use crate::schema::cross_rank::{
        CacheDivergence, CollectiveSchedules, CompileAlignment, CompileTimeImbalance, CrossRankTensorMeta,
        ExecutionOrder, RankDiffer, RankFindings, RuntimeEstimations,
    };
    let names = |streams: &[String]| group_label(cross, streams);
    let mut lines = Vec::new();
    if let Some(t) = b.cross_rank::<CompileAlignment>()? {
        lines.extend(alignment::findings(&t, |streams| names(streams)));
        if t.diverges {
            let groups: Vec<String> =
                t.groups.iter().map(|g| format!("{} [{}]", names(&g.group.streams), g.compiles.len())).collect();
            lines.push(format!("compiles DIVERGE (aligned by code): {}", groups.join(" vs ")));
        } else {
            lines.push(format!("same {} compile(s) everywhere (aligned by code)", t.compiles.len()));
        }
    }
    if let Some(t) = b.cross_rank::<CollectiveSchedules>()? {
        if t.diverges {
            let differing: Vec<String> = t
                .compiles
                .iter()
                .filter(|c| c.differs)
                .map(|c| {
                    let variants: Vec<String> = c.variants.iter().map(|v| names(&v.streams)).collect();
                    format!("{}: {}", compile_label(cross, &c.compile), variants.join(" vs "))
                })
                .collect();
            lines.push(format!("collective schedules DIFFER on {}", differing.join("; ")));
        }
        let mismatched: Vec<String> =
            t.streams.iter().filter(|s| !s.parity_mismatches.is_empty()).map(|s| s.stream.clone()).collect();
        if !mismatched.is_empty() {
            lines.push(format!("scheduler/output-code collective parity fails on {}", names(&mismatched)));
        }
    }
    if let Some(t) = b.cross_rank::<CrossRankTensorMeta>()? {
        if t.diverges {
            let groups: Vec<String> = t.groups.iter().map(|g| names(&g.group.streams)).collect();
            lines.push(format!("tensor metadata groups: {}", groups.join(" | ")));
        }
    }
    if let Some(t) = b.cross_rank::<RuntimeEstimations>()? {
        if t.differs {
            lines.push(format!("estimated runtimes differ on {} graph(s)", t.differing_compiles.len()));
        }
    }
    if let Some(t) = b.cross_rank::<CacheDivergence>()? {
        match t.divergence {
            CacheDivergenceKind::Outcomes => {
                let named: Vec<String> = t
                    .compiles
                    .iter()
                    .filter(|c| c.differs)
                    .filter_map(|c| c.compile.as_ref().map(|c| compile_label(cross, c)))
                    .take(3)
                    .collect();
                let more = (t.differing_compiles as usize).saturating_sub(named.len());
                let more = if more > 0 { format!(" +{more} more") } else { String::new() };
                lines.push(format!(
                    "cache outcomes DIFFER on {} compile(s): {}{more}",
                    t.differing_compiles,
                    named.join("; ")
                ))
            }
            CacheDivergenceKind::MissingCompiles | CacheDivergenceKind::None => {}
        }
    }
    if let Some(t) = b.cross_rank::<ExecutionOrder>()? {
        if t.diverges {
            lines.push("graphs ran in a different order on some ranks".to_string());
        }
    }
    if let Some(t) = b.cross_rank::<CompileTimeImbalance>()? {
        lines.extend(compile_time_lines(cross, &t));
    }
    if let Some(parts) = b.cross_rank_table_parts::<RankDifferCounts>(<RankDiffer as tlparse_bundle::Table>::NAME)? {
        lines.push(rank_differ_line(parts)?);
        // The findings say the first real differences and cache-hit gaps in words.
        let findings = b.cross_rank::<RankFindings>()?;
        let described = findings.and_then(|f| f.artifacts).map(|a| a.described).unwrap_or_default();
        lines.extend(described.into_iter().take(ARTIFACT_FINDINGS_PRINTED));
    }
    Ok(lines)
}

/// How many of `rank_findings.artifacts.described` a build prints (the bundle keeps ten).
const ARTIFACT_FINDINGS_PRINTED: usize = 3;

/// What the closing line reads of `rank_differ`, a part at a time (the table grows with the
/// artifacts): its counts, and of each artifact only whether a cache hit explains its absence.
#[derive(serde::Deserialize)]
struct RankDifferCounts {
    keys: u64,
    identical: u64,
    differs: u64,
    same_up_to_ids: u64,
    same_where_present: u64,
    with_missing: u64,
    artifacts: Vec<MissingOnCacheHit>,
}

#[derive(serde::Deserialize)]
struct MissingOnCacheHit {
    missing_on_cache_hit: Option<serde::de::IgnoredAny>,
}

/// `rank_differ`'s counts in the table's own words (its statuses add up to `keys`; a key some
/// rank lacks is counted apart, whatever its status): `artifacts: 28 keys: 17 identical, 10 same
/// up to ids, 1 differs, 0 same where present; 0 missing on some rank (rank_differ)`.
fn rank_differ_line(
    parts: impl Iterator<Item = Result<RankDifferCounts, reader::ReadError>>,
) -> Result<String, reader::ReadError> {
    let mut counts = None;
    let mut on_cache_hit = 0;
    for part in parts {
        let part = part?;
        on_cache_hit += part.artifacts.iter().filter(|a| a.missing_on_cache_hit.is_some()).count();
        // Every part repeats the counts.
        counts.get_or_insert(part);
    }
    let Some(t) = counts else { return Ok(String::new()) };
    let cache_hit = match on_cache_hit {
        0 => String::new(),
        n => format!(", {n} of them on an FX cache hit"),
    };
    Ok(format!(
        "artifacts: {} keys: {} identical, {} same up to ids, {} differs, {} same where present; \
         {} missing on some rank{cache_hit} (rank_differ)",
        t.keys, t.identical, t.same_up_to_ids, t.differs, t.same_where_present, t.with_missing
    ))
}

/// The compile-time findings across ranks: the rank that spent longest compiling (its total over
/// its timed compiles, when it is 1.2x the fastest's or more), and the slowest single compile with
/// its compile id. Two lines, as a rank's total and one compile's time are different quantities.
fn compile_time_lines(
    cross: &crate::schema::cross_rank::CrossRank,
    t: &crate::schema::cross_rank::CompileTimeImbalance,
) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(r) = t.max_over_min.filter(|&r| r >= 1.2) {
        let compiles: u64 = t.streams.iter().filter(|s| t.slowest.first() == Some(&s.stream)).map(|s| s.compiles).sum();
        lines.push(format!(
            "slowest rank to compile: {} ({:.2} s in total over {compiles} timed compile(s), {r:.1}x the fastest rank)",
            group_label(cross, &t.slowest),
            t.max_us / 1e6
        ));
    }
    // Ties keep the first in alignment order.
    let slowest = t.compiles.iter().fold(
        None,
        |best: Option<&crate::schema::cross_rank::compile_time_imbalance::CompileSpread>, c| {
            if best.is_some_and(|b| b.max_us >= c.max_us) { best } else { Some(c) }
        },
    );
    if let Some(c) = slowest {
        let on: Vec<(&str, &String)> = c
            .compile
            .compile_ids
            .iter()
            .filter(|s| c.slowest.contains(&s.stream))
            .map(|s| (s.stream.as_str(), &s.compile_id))
            .collect();
        let ids: Vec<String> = crate::analysis::cross_rank::group_by(on)
            .iter()
            .map(|(group, id)| format!("{id} on {}", group_label(cross, &group.streams)))
            .collect();
        lines.push(format!("slowest single compile: {} {} ({:.2} s)", c.compile.label, ids.join("; "), c.max_us / 1e6));
    }
    lines
}

/// An aligned compile with each stream's own compile id: `sync_grads (model.py:28) = [1/0] on
/// rank 0, rank 1, rank 3; [2/0] on rank 2`.
fn compile_label(
    cross: &crate::schema::cross_rank::CrossRank,
    c: &crate::schema::cross_rank::AlignedCompileRef,
) -> String {
    let by_id = crate::analysis::cross_rank::group_by(c.compile_ids.iter().map(|s| (s.stream.as_str(), &s.compile_id)));
    if let [(_, id)] = by_id.as_slice() {
        return format!("{} {id}", c.label);
    }
    let ids: Vec<String> =
        by_id.iter().map(|(group, id)| format!("{id} on {}", group_label(cross, &group.streams))).collect();
    format!("{} = {}", c.label, ids.join("; "))
}

/// A group of streams by label, shortened for a terminal: `rank 0, rank 2` or `rank 0, rank 1, rank 2 +61 more`.
fn group_label(cross: &crate::schema::cross_rank::CrossRank, streams: &[String]) -> String {
    let label = |id: &String| -> String {
        cross.members.iter().find(|m| &m.stream == id).map_or_else(|| id.clone(), |m| m.label.clone())
    };
    let shown: Vec<String> = streams.iter().take(3).map(label).collect();
    match streams.len() {
        n if n > 3 => format!("{} +{} more", shown.join(", "), n - 3),
        _ => shown.join(", "),
    }
}
