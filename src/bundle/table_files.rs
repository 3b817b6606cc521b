//! Writing a stream's finished tables: each serialized straight into its zstd compression (the
//! table's JSON never held whole), on one finishing thread or two, with the allocators' free
//! pages handed back to the system between tables of a big stream. The tables themselves (what
//! rows they hold) are the analysis's: it hands this module one job per table.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use zstd::zstd_safe::CParameter;

use tlparse_bundle::parts;

use crate::analysis::{Finding, FinishJob, TableSerializer};

/// A finished table, serialized.
#[derive(Debug)]
pub struct TableOutput {
    pub name: &'static str,
    pub rows: u64,
    /// Its parts (docs/format.md, Analysis tables), each compact JSON zstd-compressed (level
    /// [`TABLE_ZSTD_LEVEL`]): one for a table of up to [`TableCompressor::part_bytes`] of JSON.
    /// The table's uncompressed JSON is never held whole.
    pub parts: Vec<Vec<u8>>,
    /// What the build's closing lines say of it ([`crate::analysis::Table::finding`]).
    pub finding: Option<Finding>,
    /// Why a reader would refuse a part, if one would be: a single row too big for its limits.
    pub unreadable: Option<String>,
}

/// zstd level of the tables: they are small next to the logs and fetched on a viewer's first
/// pages, so they get a slower, tighter level than packs.
pub const TABLE_ZSTD_LEVEL: i32 = 9;

impl TableOutput {
    /// A table serialized straight into its compression, as one part when it is at most
    /// `part_bytes` of JSON. A longer one is cut into parts of about that much: serializing it
    /// stops at `part_bytes`, it is serialized again to learn its outline, then once more through
    /// the cutting, so its JSON is compressed once and its parts and its whole are never held at
    /// once.
    pub fn new(name: &'static str, rows: u64, table: &impl Serialize, part_bytes: u64) -> TableOutput {
        let mut output = TableOutput { name, rows, parts: Vec::new(), finding: None, unreadable: None };
        if let Some(whole) = compressed_json(table, search_log(name), part_bytes) {
            output.parts.push(whole);
            return output;
        }
        let mut outline = std::io::BufWriter::with_capacity(TABLE_BUFFER, parts::OutlineWriter::default());
        serde_json::to_writer(&mut outline, table).expect("tables serialize");
        let outline = outline.into_inner().map_err(|e| e.into_error()).expect("outlining in memory").finish();
        let limits = tlparse_bundle::Limits::default();
        let emit = |json: &[u8]| {
            if output.unreadable.is_none() {
                output.unreadable = unreadable(json, &limits);
            }
            output.parts.push(compressed_part(json, search_log(name))?);
            Ok(())
        };
        let mut cut =
            std::io::BufWriter::with_capacity(TABLE_BUFFER, parts::PartWriter::new(&outline, part_bytes, emit));
        serde_json::to_writer(&mut cut, table).expect("tables serialize");
        let cut = cut.into_inner().map_err(|e| e.into_error()).expect("cutting in memory");
        cut.finish().expect("compressing in memory");
        output
    }

    /// Fails when a reader would refuse one of the table's parts: the bundle would not validate.
    pub fn check_readable(&self) -> std::io::Result<()> {
        match &self.unreadable {
            None => Ok(()),
            Some(why) => Err(std::io::Error::other(format!(
                "the {} table cannot be written so that a reader takes it: {why}",
                self.name
            ))),
        }
    }
}

/// Why a reader with `limits` would refuse a part's JSON, if it would.
fn unreadable(json: &[u8], limits: &tlparse_bundle::Limits) -> Option<String> {
    if json.len() as u64 > limits.document {
        return Some(format!(
            "one of its rows alone is {} bytes of JSON, over the {} a reader takes",
            json.len(),
            limits.document
        ));
    }
    match tlparse_bundle::reader::json_memory(json) {
        Ok(need) if need > limits.json_memory => Some(format!(
            "one of its rows alone would take {need} bytes of memory to read, over the {} a reader takes",
            limits.json_memory
        )),
        _ => None,
    }
}

/// Where finished tables go.
type Sink<'s, E> = dyn FnMut(TableOutput) -> Result<(), E> + Send + 's;

/// Serializes a finishing thread's tables into their compression, first handing free memory back
/// to the system when the stream is big enough for that to matter ([`TRIM_FROM_BYTES`]).
#[derive(Clone, Copy)]
pub struct TableCompressor {
    trim: bool,
    /// Bytes of JSON in a part of a table ([`parts::PART_BYTES`] unless tests lower it).
    part_bytes: u64,
}

impl TableCompressor {
    /// Compresses tables without handing memory back first: for the cross-rank tables, built
    /// once the streams are done.
    pub fn plain(part_bytes: u64) -> TableCompressor {
        TableCompressor { trim: false, part_bytes }
    }
}

impl TableSerializer for TableCompressor {
    type Serialized = TableOutput;

    fn serialize(
        &mut self,
        name: &'static str,
        rows: u64,
        finding: Option<Finding>,
        output: &impl Serialize,
    ) -> TableOutput {
        if self.trim {
            release_free_memory();
        }
        TableOutput { finding, ..TableOutput::new(name, rows, output, self.part_bytes) }
    }
}

/// How a build's streams keep and finish their tables: by default as their size says, which
/// tests override to run both ways on small fixtures.
#[derive(Debug, Clone)]
pub struct TableOptions {
    /// Every stream's tables finished on this many threads, whatever its size; `None`: on two
    /// for a stream of [`TRIM_FROM_BYTES`] or more, on one below.
    pub finish_threads: Option<FinishThreads>,
    /// Whether the tables hold what they keep until written in a spool file of the staging
    /// directory (else in memory, as when the file cannot be made).
    pub spool: bool,
    /// Where the build counts how its tables finished and spooled.
    pub counts: Arc<TableCounts>,
    /// Bytes of JSON in a part of a table: [`parts::PART_BYTES`], lowered by tests
    /// (`--table-part-bytes`) to cut small tables into parts.
    pub part_bytes: u64,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions { finish_threads: None, spool: true, counts: Arc::default(), part_bytes: parts::PART_BYTES }
    }
}

/// On how many threads a stream's tables finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishThreads {
    One,
    Two,
}

/// What a build counted of its tables' finishing and spooling (the tests of both paths check
/// that they were taken).
#[derive(Debug, Default)]
pub struct TableCounts {
    /// Tables finished on a stream's second finishing thread.
    pub on_second_thread: AtomicU64,
    /// Writes to the analysis spools.
    pub spool_writes: AtomicU64,
}

impl TableCounts {
    /// Counts one more in `counter`.
    pub fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// Whether a stream finishes its tables on two threads: when it is big enough to `trim` for,
/// unless `options` say.
fn finish_on_two_threads(trim: bool, options: &TableOptions) -> bool {
    match options.finish_threads {
        Some(threads) => threads == FinishThreads::Two,
        None => trim,
    }
}

/// Finishes a stream's tables (`jobs`, in order) and hands each one with rows, compressed, to
/// `sink`; `observed_bytes` are the stream's entry bytes (headers and payloads).
///
/// A stream of [`TRIM_FROM_BYTES`] or more finishes its tables on two threads, each taking the
/// next job when done with its last (alone, the tables' finishing left one core of two idle for
/// a fifth of a build); `sink` is then called from both, in no fixed order, and callers sort
/// what it gets. A smaller stream finishes all on this thread, as a second thread's zstd context
/// costs more than it saves.
pub fn finish_tables<E: Send>(
    jobs: Vec<FinishJob<'_, TableCompressor>>,
    observed_bytes: u64,
    options: &TableOptions,
    sink: &mut Sink<'_, E>,
) -> Result<(), E> {
    // The reading's last batches are freed by now; the tables' buffers should not stack on their
    // pages (unless the stream is too small for that to matter).
    let trim = observed_bytes >= TRIM_FROM_BYTES;
    if trim {
        release_free_memory();
    }
    let second_thread = finish_on_two_threads(trim, options).then_some(&options.counts.on_second_thread);
    run_finish_jobs(jobs, TableCompressor { trim, part_bytes: options.part_bytes }, second_thread, sink)
}

/// Finishes `jobs` in order on this thread and, when given a `second_thread` (where to count the
/// tables it finishes), on a second one at once, each taking the next job when done with its
/// last, each with its own copy of `compressor`.
fn run_finish_jobs<E: Send>(
    jobs: Vec<FinishJob<'_, TableCompressor>>,
    compressor: TableCompressor,
    second_thread: Option<&AtomicU64>,
    sink: &mut Sink<'_, E>,
) -> Result<(), E> {
    let jobs = std::sync::Mutex::new(jobs.into_iter());
    let next = || jobs.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).next();
    let run = |job: FinishJob<'_, TableCompressor>, sink: &mut dyn FnMut(TableOutput) -> Result<(), E>| {
        let mut compressor = compressor;
        job(&mut compressor).map_or(Ok(()), sink)
    };
    let Some(on_second_thread) = second_thread else {
        return std::iter::from_fn(next).try_for_each(|job| run(job, sink));
    };
    let sink = std::sync::Mutex::new(sink);
    let mut shared_sink = |table: TableOutput| sink.lock().unwrap_or_else(|poisoned| poisoned.into_inner())(table);
    std::thread::scope(|scope| {
        let mut second_sink = shared_sink;
        // The second thread takes the first job, this one waits for that: so the second always
        // finishes a table (a small stream's could all be finished here before it starts), and
        // a stream finished on two threads is finished on two, however small.
        let (took_one, second_took_one) = std::sync::mpsc::channel::<()>();
        let second = scope.spawn(move || {
            let first = next();
            let _ = took_one.send(());
            first.into_iter().chain(std::iter::from_fn(next)).try_for_each(|job| {
                TableCounts::add(on_second_thread);
                run(job, &mut second_sink)
            })
        });
        let _ = second_took_one.recv();
        let here = std::iter::from_fn(next).try_for_each(|job| run(job, &mut shared_sink));
        let second = second.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        here.and(second)
    })
}

thread_local! {
    /// The thread's zstd context for tables, kept from one table to the next: a new one for each
    /// table (about 10 MB at level 9, fresh pages the kernel zeroes) cost more system time than
    /// the compressing itself when a build has many small streams.
    static TABLE_CCTX: std::cell::RefCell<Option<zstd::zstd_safe::CCtx<'static>>> = const { std::cell::RefCell::new(None) };
}

/// zstd's search log for a table (0: the level's own). Level 9's lazy matching finds nearly all
/// it can in the `inputs` table with one attempt a position instead of sixteen: its rows repeat
/// the same fields with a few values changed, so it comes out smaller and sooner (it is the
/// last table to finish, and sets when a build ends). Other tables compress worse that way.
fn search_log(table: &str) -> u32 {
    if table == <crate::schema::tables::inputs::Inputs as tlparse_bundle::Table>::NAME { 1 } else { 0 }
}

/// A table's compact JSON, compressed as it is serialized, when it is at most `cap` bytes
/// (memory: the compressed bytes and zstd's context, never the JSON whole); `None` for a longer
/// one, whose serializing stops at `cap` rather than compressing what would be thrown away. A
/// table longer than one buffer is compressed on a thread of its own while this one goes on
/// serializing (level 9 costs about as much as reading the rows back and serializing them); the
/// encoder sees the same writes either way, so the same bytes come out.
fn compressed_json(output: &impl Serialize, search_log: u32, cap: u64) -> Option<Vec<u8>> {
    with_table_context(|context| {
        // A table that went streaming bounded the context's tables (see `bound_streaming_memory`):
        // the next one starts from the level's own choice again, which fits a small table's size.
        for auto in [CParameter::WindowLog(0), CParameter::ChainLog(0), CParameter::HashLog(0)] {
            context.set_parameter(auto).expect("zstd's default is always valid");
        }
        context.set_parameter(CParameter::SearchLog(search_log)).expect("a search log in range");
        // The context's session is reset by the encoder: nothing of the last table is kept.
        let encoder = zstd::stream::Encoder::with_context(Vec::new(), context);
        let compressed = std::thread::scope(|scope| {
            // serde_json writes in small pieces: buffered, zstd sees them in blocks.
            let mut out = std::io::BufWriter::with_capacity(
                TABLE_BUFFER,
                PipedEncoder { scope, state: Piping::Inline(Some(encoder)), may_start: true },
            );
            let mut capped = Capped { inner: &mut out, left: cap, over: false };
            let fits = match serde_json::to_writer(&mut capped, output) {
                Ok(()) => true,
                Err(_) if capped.over => false,
                Err(e) => panic!("tables serialize: {e}"),
            };
            // A table that fit in the buffer is compressed here: a thread is not worth it.
            out.get_mut().may_start = false;
            let compressed = out.into_inner().map_err(|e| e.into_error()).expect("writing to memory").finish();
            compressed.map(|c| fits.then_some(c))
        })
        .expect("compressing to memory");
        compressed.map(|mut c| {
            c.shrink_to_fit();
            c
        })
    })
}

/// Passes on at most `left` bytes, then fails: a table found longer than one part stops being
/// serialized (and compressed) there.
struct Capped<W> {
    inner: W,
    left: u64,
    over: bool,
}

impl<W: std::io::Write> std::io::Write for Capped<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() as u64 > self.left {
            self.over = true;
            return Err(std::io::Error::other("longer than one part"));
        }
        let n = self.inner.write(buf)?;
        self.left -= n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Runs `f` with the thread's table context ([`TABLE_CCTX`]), made at the first table.
fn with_table_context<R>(f: impl FnOnce(&mut zstd::zstd_safe::CCtx<'static>) -> R) -> R {
    TABLE_CCTX.with(|slot| {
        let mut slot = slot.borrow_mut();
        let context = slot.get_or_insert_with(|| {
            let mut context = zstd::zstd_safe::CCtx::create();
            context
                .set_parameter(zstd::zstd_safe::CParameter::CompressionLevel(TABLE_ZSTD_LEVEL))
                .expect("a zstd level in range");
            context
        });
        f(context)
    })
}

/// One part of a table cut into several, compressed with the thread's table context bounded as
/// for a streamed table (a context sized for a whole part is larger than the part), into a
/// buffer no larger than the compressed bytes: a table's parts are held until they are written.
fn compressed_part(json: &[u8], search_log: u32) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    with_table_context(|context| {
        let mut encoder = zstd::stream::Encoder::with_context(Vec::new(), context);
        encoder.set_parameter(CParameter::SearchLog(search_log))?;
        bound_streaming_memory(&mut encoder)?;
        encoder.write_all(json)?;
        let mut compressed = encoder.finish()?;
        compressed.shrink_to_fit();
        Ok(compressed)
    })
}

/// The window and match tables of a table compressed as it streams. zstd sizes them for the
/// whole input when told its size (a table that fits in one buffer), and at the level's largest
/// otherwise, which made the first such table the highest point of a long build's memory. A
/// 2 MiB window and match tables of 2^17 entries lower that peak and compress as well; a
/// smaller window compresses worse, smaller match tables lower nothing more
/// (docs/perf-notes.md).
const STREAMING_WINDOW_LOG: u32 = 21;
const STREAMING_CHAIN_LOG: u32 = 17;
const STREAMING_HASH_LOG: u32 = 17;

/// Bounds the memory of an encoder about to compress a table as it streams (before its first
/// byte, as zstd requires); the same table always gets the same bounds, so the same bytes.
fn bound_streaming_memory(encoder: &mut TableEncoder) -> std::io::Result<()> {
    encoder.set_parameter(CParameter::WindowLog(STREAMING_WINDOW_LOG))?;
    encoder.set_parameter(CParameter::ChainLog(STREAMING_CHAIN_LOG))?;
    encoder.set_parameter(CParameter::HashLog(STREAMING_HASH_LOG))
}

/// Bytes of table JSON handed to zstd at once.
const TABLE_BUFFER: usize = 64 << 10;

/// Buffers of JSON waiting for the compressing thread: enough to even out the two threads' pace,
/// few enough to keep memory flat.
const TABLE_BUFFERS_QUEUED: usize = 4;

type TableEncoder<'c> = zstd::stream::Encoder<'c, Vec<u8>>;

/// Where a table's JSON goes: the encoder itself, or (once more than a buffer was written) the
/// thread that owns it now.
enum Piping<'scope, 'c> {
    Inline(Option<TableEncoder<'c>>),
    Thread {
        buffers: std::sync::mpsc::SyncSender<Vec<u8>>,
        thread: std::thread::ScopedJoinHandle<'scope, std::io::Result<Vec<u8>>>,
    },
}

struct PipedEncoder<'scope, 'env, 'c> {
    scope: &'scope std::thread::Scope<'scope, 'env>,
    state: Piping<'scope, 'c>,
    /// Whether a write may still move the encoder to a thread.
    may_start: bool,
}

impl<'scope, 'env, 'c: 'scope> std::io::Write for PipedEncoder<'scope, 'env, 'c> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Piping::Inline(encoder) = &mut self.state {
            if !self.may_start {
                // The whole table is this one buffer: told its size, zstd fits its window and
                // match tables to it (for an unknown size it takes level 9's largest, 11 MiB of
                // fresh pages, which the thread's context then keeps).
                let encoder = encoder.as_mut().expect("an encoder until finished");
                encoder.set_pledged_src_size(Some(buf.len() as u64))?;
                encoder.write_all(buf)?;
                return Ok(buf.len());
            }
            let mut encoder = encoder.take().expect("an encoder until finished");
            bound_streaming_memory(&mut encoder)?;
            let (buffers, received) = std::sync::mpsc::sync_channel::<Vec<u8>>(TABLE_BUFFERS_QUEUED);
            let thread = self.scope.spawn(move || {
                // The same writes, in the same order, as the serializing thread's buffer made.
                for buffer in received {
                    encoder.write_all(&buffer)?;
                }
                encoder.finish()
            });
            self.state = Piping::Thread { buffers, thread };
        }
        let Piping::Thread { buffers, .. } = &self.state else { unreachable!("moved to a thread above") };
        // A closed channel means the thread failed: `finish` reports its error.
        buffers.send(buf.to_vec()).map_err(|_| std::io::Error::other("the table's compressing thread stopped"))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl PipedEncoder<'_, '_, '_> {
    /// The compressed bytes, once every buffer is compressed.
    fn finish(self) -> std::io::Result<Vec<u8>> {
        match self.state {
            Piping::Inline(encoder) => encoder.expect("an encoder until finished").finish(),
            Piping::Thread { buffers, thread } => {
                drop(buffers);
                thread.join().map_err(|_| std::io::Error::other("the table's compressing thread panicked"))?
            }
        }
    }
}

/// The entry bytes (headers and payloads) from which a stream's tables hand free memory back to
/// the system as they finish. A smaller stream's tables free too little to matter, and a trim is
/// not free: it walks the whole heap (`madvise` on every free page) while other threads wait on
/// the allocator's locks. At 1,000 small ranks, a trim before each table of each stream cost a
/// minute of system time in a build of 15 s of user time.
pub const TRIM_FROM_BYTES: u64 = 32 << 20;

/// Hands the allocators' free pages back to the system before a table is serialized: they keep
/// the pages of blocks freed (the states of the tables finished so far, the last batches of
/// entries), and the table's buffers would be resident on top of them. jemalloc (the binary's
/// allocator) would give them back within its `dirty_decay_ms`, but a table finishes sooner, and
/// its peak would stand above the free pages; glibc's `malloc_trim` is for the C code (zstd's
/// contexts) that allocates with it.
fn release_free_memory() {
    #[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
    // SAFETY: `arena.<MALLCTL_ARENAS_ALL>.purge` (4096) reads and writes no value; it only gives
    // back pages no allocation uses.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"arena.4096.purge".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs that each give one output, numbered by `rows`; every third gives none (a table with
    /// no rows).
    fn numbered_jobs(count: u64) -> Vec<FinishJob<'static, TableCompressor>> {
        (0..count)
            .map(|rows| -> FinishJob<'static, TableCompressor> {
                Box::new(move |_: &mut TableCompressor| {
                    (rows % 3 != 2).then(|| TableOutput {
                        name: "t",
                        rows,
                        parts: Vec::new(),
                        finding: None,
                        unreadable: None,
                    })
                })
            })
            .collect()
    }

    const ONE: TableCompressor = TableCompressor { trim: false, part_bytes: parts::PART_BYTES };

    #[test]
    fn finishing_jobs_on_two_threads_hands_every_output_to_the_sink_once() {
        for two_threads in [false, true] {
            let mut got = Vec::new();
            let on_second_thread = AtomicU64::new(0);
            let second_thread = two_threads.then_some(&on_second_thread);
            run_finish_jobs(numbered_jobs(50), ONE, second_thread, &mut |t: TableOutput| -> Result<(), String> {
                got.push(t.rows);
                Ok(())
            })
            .unwrap();
            got.sort_unstable();
            let want: Vec<u64> = (0..50).filter(|rows| rows % 3 != 2).collect();
            assert_eq!(got, want, "two threads: {two_threads}");
            assert_eq!(TableCounts::get(&on_second_thread) > 0, two_threads);
        }
    }

    #[test]
    fn a_failing_sink_fails_the_finishing_on_either_thread() {
        let on_second_thread = AtomicU64::new(0);
        for second_thread in [None, Some(&on_second_thread)] {
            let full = &mut |t: TableOutput| -> Result<(), String> {
                if t.rows == 12 { Err("disk full".into()) } else { Ok(()) }
            };
            let failed = run_finish_jobs(numbered_jobs(50), ONE, second_thread, full);
            assert_eq!(failed, Err("disk full".to_string()), "{second_thread:?}");
        }
    }

    /// A table of `rows` rows `{"id": k, "text": "xx…"}` of `text` bytes each.
    fn table_of(rows: usize, text: usize) -> serde_json::Value {
        let row = |k: usize| serde_json::json!({"id": k, "text": "x".repeat(text)});
        serde_json::json!({"note": "kept in every part", "rows": (0..rows).map(row).collect::<Vec<_>>()})
    }

    fn decompressed(parts: &[Vec<u8>]) -> Vec<serde_json::Value> {
        parts.iter().map(|p| serde_json::from_slice(&zstd::decode_all(&p[..]).unwrap()).unwrap()).collect()
    }

    #[test]
    fn a_table_longer_than_a_part_is_cut_by_rows_into_documents_that_join_back() {
        let table = table_of(100, 90);
        let one = TableOutput::new("t", 100, &table, parts::PART_BYTES);
        assert_eq!(decompressed(&one.parts), std::slice::from_ref(&table));
        let cut = TableOutput::new("t", 100, &table, 1000);
        let docs = decompressed(&cut.parts);
        assert!(docs.len() >= 10, "{} parts of about 1000 bytes for 10 KB", docs.len());
        assert!(docs.iter().all(|d| d["note"] == "kept in every part"));
        let rows: Vec<_> = docs.iter().flat_map(|d| d["rows"].as_array().unwrap().clone()).collect();
        assert_eq!(rows, *table["rows"].as_array().unwrap());
        assert_eq!(cut.unreadable, None);
        assert!(cut.check_readable().is_ok());
    }

    #[test]
    fn a_row_longer_than_a_part_stays_whole_in_a_part_of_its_own() {
        let table = table_of(3, 5000);
        let cut = TableOutput::new("t", 3, &table, 1000);
        let docs = decompressed(&cut.parts);
        assert_eq!(docs.iter().map(|d| d["rows"].as_array().unwrap().len()).collect::<Vec<_>>(), [1, 1, 1]);
    }

    #[test]
    fn a_part_a_reader_would_refuse_is_named_with_why() {
        let json = serde_json::to_vec(&table_of(1, 500)).unwrap();
        let roomy = tlparse_bundle::Limits::default();
        assert_eq!(unreadable(&json, &roomy), None);
        let short = tlparse_bundle::Limits { document: 100, ..roomy };
        let why = unreadable(&json, &short).unwrap();
        assert!(why.contains(&format!("{} bytes of JSON, over the 100", json.len())), "{why}");
        let small_memory = tlparse_bundle::Limits { json_memory: 64, ..roomy };
        assert!(unreadable(&json, &small_memory).unwrap().contains("bytes of memory to read, over the 64"));
        let output =
            TableOutput { name: "compile_directory", rows: 1, parts: Vec::new(), finding: None, unreadable: Some(why) };
        let error = output.check_readable().unwrap_err().to_string();
        assert!(
            error.starts_with("the compile_directory table cannot be written so that a reader takes it: "),
            "{error}"
        );
    }
}
