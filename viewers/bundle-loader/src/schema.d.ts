// schema.d.ts: the TypeScript types of every tlparse bundle file, format 2.x.
// GENERATED from schema/v2/ by viewers/bundle-loader/scripts/gen-types.mjs: do not edit;
// run scripts/regenerate.

/**
 * Why the streams' sequences differ.
 */
export type CacheDivergenceKind = 'none' | 'missing_compiles' | 'outcomes';
/**
 * The outcome of one lookup.
 */
export type CacheResult = 'hit' | 'miss' | 'bypass' | 'disabled';
/**
 * What became of a compile, with tlparse's stack-trie colours.
 */
export type CompileStatus =
  | 'ok'
  | 'ok_with_restart'
  | 'empty_graph'
  | 'failed'
  | 'restarted'
  | 'metrics_missing'
  | 'compiled_autograd_capture';
/**
 * The kinds of ambiguity.
 */
export type AmbiguityKind = 'same_code_several_frames' | 'code_unknown' | 'attempts_disagree';
/**
 * Where a phase's times come from.
 */
export type PhaseSource = 'metrics' | 'trace';
/**
 * Which graph of a compile Inductor compiled (a provenance graph's, an artifact's).
 */
export type GraphRole = 'forward' | 'backward' | 'inference';
/**
 * Whether the streams agree on one artifact key.
 */
export type ArtifactStatus = 'identical' | 'differs' | 'same_up_to_ids' | 'same_where_present';
/**
 * Kinds of diagnostics.
 */
export type DiagnosticKind =
  | 'bad_prefix'
  | 'bad_json'
  | 'md5_mismatch'
  | 'bad_md5'
  | 'undeclared_payload'
  | 'bad_string_table'
  | 'unresolved_string'
  | 'invalid_utf8'
  | 'rank_mismatch'
  | 'unusable_entry'
  | 'line_too_long'
  | 'payload_too_large'
  | 'truncated_input'
  | 'out_of_range'
  | 'too_deep'
  | 'unreadable_log';
/**
 * What a payload contains, detected from the entry's kind and the payload's content.
 */
export type PayloadFormat = 'json' | 'python' | 'text';
/**
 * Compression of an input log on disk, detected from its file name.
 */
export type InputCompression = 'none' | 'gzip' | 'zstd';
/**
 * The outcome of all of a compile's lookups in one cache.
 */
export type CacheVerdictKind = 'hit' | 'miss' | 'bypass' | 'disabled' | 'mixed';
/**
 * Where a lookup was read from.
 */
export type CacheLookupSource = 'artifact' | 'chromium_event';
/**
 * Where a compile's code was read from.
 */
export type CodeSource = 'metrics' | 'dynamo_start';
/**
 * Which half of a pair an unmatched event is.
 */
export type UnmatchedSide = 'begin' | 'end';
/**
 * Why an event is unpaired. None of these is routine in a complete torch log: torch ends every
 * phase it begins, even on an exception.
 */
export type UnmatchedCause = 'open_at_end' | 'abandoned' | 'no_begin';
/**
 * The kind of an export issue.
 */
export type ExportFailureType =
  'guard_evaluated' | 'data_dependent_error' | 'missing_fake_kernel' | 'mismatched_fake_kernel';
/**
 * How a provenance node was logged.
 */
export type ProvenanceNodeKind = 'expression' | 'unbacked_symbol';
/**
 * Whether a row is a restart or a failure.
 */
export type FailureKind = 'restart' | 'failure';
/**
 * Which entry kind logged a shape guard.
 */
export type ShapeGuardKind = 'guard_added_fast' | 'guard_added';
/**
 * Which entry kind logged a data-dependent guard.
 */
export type DataDependentKind =
  'guard_on_data_dependent_error' | 'propagate_real_tensors_provenance' | 'propagate_real_tensors';
/**
 * What a hint asks for.
 */
export type HintKind = 'report_to_pytorch' | 'action';
/**
 * A size, stride or offset: an integer, or a symbolic expression as logged (e.g. `s0`).
 */
export type Dim = number | string;
/**
 * Where a recompile's reasons were logged.
 */
export type RecompileReasonSource = 'recompile_reasons' | 'compilation_metrics';
/**
 * What a runnable artifact is.
 */
export type RunnableRole =
  'fx_graph_runnable' | 'output_code' | 'aot_wrapper_code' | 'aot_kernel_code' | 'aot_header_code';
/**
 * The language of a runnable artifact.
 */
export type RunnableLanguage = 'python' | 'cpp';
/**
 * What a search term is.
 */
export type SearchKind = 'function' | 'file' | 'artifact' | 'graph_break' | 'guard' | 'failure' | 'restart';

/**
 * Every JSON file type of a bundle, by its root type name.
 */
export interface BundleFiles {
  BlobIndexShard?: BlobIndexShard;
  CacheDivergence?: CacheDivergence;
  CollectiveSchedules?: CollectiveSchedules;
  CompileAlignment?: CompileAlignment;
  CompileTimeImbalance?: CompileTimeImbalance;
  ExecutionOrder?: ExecutionOrder;
  RankDiffer?: RankDiffer;
  RankFindings?: RankFindings;
  RuntimeEstimations?: RuntimeEstimations;
  CrossRankTensorMeta?: CrossRankTensorMeta;
  Diagnostic?: Diagnostic;
  IndexRow?: IndexRow;
  LiteManifest?: LiteManifest;
  Manifest?: Manifest;
  StackTable?: StackTable;
  CacheOutcomes?: CacheOutcomes;
  Collectives?: Collectives;
  CompilationMetrics?: CompilationMetrics;
  CompileDirectory?: CompileDirectory;
  CompileSummary?: CompileSummary;
  CompileTime?: CompileTime;
  ExportReport?: ExportReport;
  Failures?: Failures;
  GraphBreaks?: GraphBreaks;
  GraphExecution?: GraphExecution;
  GraphSizes?: GraphSizes;
  Guards?: Guards;
  Hints?: Hints;
  Inputs?: Inputs;
  LogVolume?: LogVolume;
  Provenance?: Provenance;
  Recompiles?: Recompiles;
  Runnables?: Runnables;
  RuntimeEstimates?: RuntimeEstimates;
  Search?: Search;
  StackTrie?: StackTrie;
}
/**
 * `blobs/index/<prefix>.json.zst` (zstd-compressed JSON): one shard of the blob index, mapping each blob id (32 hex
 * digits) that starts with the shard's prefix to its location.
 */
export interface BlobIndexShard {
  [k: string]: BlobLocation;
}
/**
 * Where a blob is: a byte range of a decompressed pack.
 */
export interface BlobLocation {
  /**
   * Position of the pack in `manifest.blobs.packs`.
   */
  pack: number;
  /**
   * Offset of the blob in the decompressed pack.
   */
  offset: number;
  /**
   * Size of the blob in bytes.
   */
  size: number;
}
/**
 * `tables/cross_rank/cache_divergence.json.zst`: each stream's cache outcome sequence (per
 * compile, what each cache did), the groups of streams with equal sequences, and per compile
 * whether the streams that compiled it got different outcomes. Compiles are aligned by the code
 * they compiled (`compile_alignment`), so a rank whose frame ids are shifted is compared with
 * the others' compiles of the same code. It tells "rank 3 missed the
 * cache where the others hit" apart from "rank 3 did not compile this at all". Present when a
 * stream logged a cache lookup. `rows` counts `compiles`.
 */
export interface CacheDivergence {
  /**
   * What splits the streams into several groups, if anything.
   */
  divergence: CacheDivergenceKind;
  /**
   * Groups of streams with equal sequences, the group of the first stream first. Every stream
   * is in exactly one group (a stream with no lookup has an empty sequence).
   */
  groups: CacheSequenceGroup[];
  /**
   * One row per stream, in `members` order.
   */
  streams: StreamCacheCounts[];
  /**
   * One row per aligned compile with a lookup on any stream, in `compile_alignment` order;
   * then, if any stream logged lookups outside any compile, a row with a null `compile`.
   */
  compiles: CompileOutcomes[];
  /**
   * Rows of `compiles` whose `differs` is true.
   */
  differing_compiles: number;
  /**
   * Rows of `compiles` with a non-empty `missing`.
   */
  compiles_with_missing: number;
  /**
   * Rows of `compiles` with a non-empty `no_lookups`.
   */
  compiles_without_lookups: number;
}
/**
 * Streams whose cache outcome sequences are equal.
 */
export interface CacheSequenceGroup {
  /**
   * The streams of the group, in `members` order.
   */
  streams: string[];
  /**
   * Their sequence: every compile for which they logged a lookup, in `compile_alignment`
   * order (the row with a null `compile` last).
   */
  sequence: CompileCacheOutcomes[];
}
/**
 * The outcomes of one compile's lookups.
 */
export interface CompileCacheOutcomes {
  /**
   * The compile, with each stream's compile id for it; null for lookups outside any compile.
   */
  compile: AlignedCompileRef | null;
  /**
   * Its lookups, by cache name, then in log order within a cache.
   */
  outcomes: CacheOutcomeItem[];
}
/**
 * A reference, from a row of another cross-rank table, to one aligned compile.
 */
export interface AlignedCompileRef {
  /**
   * Index of the compile in `compile_alignment`'s `compiles`.
   */
  aligned: number;
  /**
   * Its label there (`forward (model.py:20)`).
   */
  label: string;
  /**
   * Each stream's own compile id for it (its final attempt's), in `members` order; streams
   * that lack it are left out.
   */
  compile_ids: StreamCompileId[];
}
/**
 * A stream's own compile id.
 */
export interface StreamCompileId {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * The compile id there, as displayed.
   */
  compile_id: string;
}
/**
 * One lookup's cache and outcome.
 */
export interface CacheOutcomeItem {
  /**
   * The cache (`fx_graph_cache`, `aotautograd_cache`, ...), as in the stream's
   * `cache_outcomes`.
   */
  cache: string;
  /**
   * What it did.
   */
  outcome: CacheResult;
}
/**
 * One stream's lookups, counted.
 */
export interface StreamCacheCounts {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * Index of its group in `groups`.
   */
  group: number;
  /**
   * Compiles with a lookup (the outside-any-compile row counts as one).
   */
  compiles: number;
  /**
   * Lookups that hit.
   */
  hit: number;
  /**
   * Lookups that missed.
   */
  miss: number;
  /**
   * Lookups that bypassed the cache.
   */
  bypass: number;
  /**
   * Lookups skipped because the cache was disabled.
   */
  disabled: number;
}
/**
 * One compile's outcomes across the streams.
 */
export interface CompileOutcomes {
  /**
   * The compile, with each stream's compile id for it; null for lookups outside any compile
   * (every stream counts as having that row).
   */
  compile: AlignedCompileRef | null;
  /**
   * The streams that looked up the cache for the compile, grouped by equal outcomes, the
   * group of the first stream first.
   */
  groups: OutcomeGroup[];
  /**
   * Streams that made the compile but logged no lookup for it (e.g. the compile failed
   * before reaching the cache), in `members` order. Not counted as different.
   */
  no_lookups: string[];
  /**
   * Streams that did not make the compile at all, in `members` order. Missing is not
   * different.
   */
  missing: string[];
  /**
   * True when the streams that looked up the cache for the compile got different outcomes
   * (several groups).
   */
  differs: boolean;
}
/**
 * Streams that got the same outcomes for one compile.
 */
export interface OutcomeGroup {
  /**
   * The streams of the group, in `members` order.
   */
  streams: string[];
  /**
   * Their lookups, by cache name, then in log order within a cache.
   */
  outcomes: CacheOutcomeItem[];
}
/**
 * `tables/cross_rank/collective_schedules.json.zst`: the `inductor_collective_schedule`s of every
 * stream, compile by compile, aligned by the code compiled (`compile_alignment`; never by compile
 * id, file or graph order), grouped into streams that
 * scheduled exactly the same collectives; plus, per stream, where its generated code disagrees
 * with its schedules. Ranks that issue different collectives in the same graph hang or corrupt
 * data. Built from each stream's `collectives` table; written when at least one stream has one.
 * `rows` counts `compiles`.
 */
export interface CollectiveSchedules {
  /**
   * True when some compile has differing schedules on streams that both made it (its row's
   * `differs`). A compile that some streams lack is not a divergence: see `missing`.
   */
  diverges: boolean;
  /**
   * The compiles used for `groups` (their `compile_alignment` labels): those that every
   * stream made and that at least one stream has a schedule for, in `compile_alignment` order.
   */
  shared_compiles: string[];
  /**
   * Streams grouped by their schedules on every compile of `shared_compiles` (a stream with
   * no schedule for one counts as such), the group of the first stream first. One group when
   * no shared compile differs. A difference on a compile that only some streams made shows
   * in `compiles` and `diverges`, not here.
   */
  groups: StreamGroup[];
  /**
   * One row per compile that has a schedule on at least one stream, in `compile_alignment`
   * order.
   */
  compiles: CompileSchedules[];
  /**
   * One row per stream, in `members` order: its own schedule/code parity.
   */
  streams: StreamParity[];
}
/**
 * Streams that agree on something, named by stream id in `members` order.
 */
export interface StreamGroup {
  /**
   * The streams of the group, in `members` order.
   */
  streams: string[];
}
/**
 * One compile across the streams.
 */
export interface CompileSchedules {
  /**
   * The compile, with each stream's compile id for it.
   */
  compile: AlignedCompileRef;
  /**
   * True when the streams that made the compile and report on its schedule (those in
   * `variants` and in `no_schedule`) do not all agree.
   */
  differs: boolean;
  /**
   * Index in `variants` of the reference the others are compared with: the variant with the
   * most streams (the first one on ties); null when no stream has a schedule for it.
   */
  reference: number | null;
  /**
   * Streams with at least one schedule for the compile, grouped by identical schedules
   * (same ops in the same order), the group of the first stream first.
   */
  variants: ScheduleVariant[];
  /**
   * Streams that made the compile and log schedules for other compiles but none for this
   * one. Torch logs a schedule only when it is non-empty, so these ran no collective in
   * this graph: a difference from any variant.
   */
  no_schedule: string[];
  /**
   * Streams that made the compile but log no schedule at all (older torch, or logging
   * off): nothing is known of their collectives, so they are left out of the comparison.
   */
  no_data: string[];
  /**
   * Streams that made the compile from the FX graph cache (a hit of `fx_graph_cache`, or of
   * `aotautograd_cache`, which loads it, in their `cache_outcomes`) and logged no schedule
   * for it: torch logs none on a hit, so nothing is known of their collectives and they are
   * left out of the comparison, neither agreeing nor differing.
   */
  cache_hit: string[];
  /**
   * Streams that did not make the compile, in `members` order.
   */
  missing: string[];
  /**
   * Streams whose generated code for this compile disagrees with their own schedule (their
   * `collectives` parity does not match), in `members` order: the schedule itself may be
   * what is wrong. Details in `streams`.
   */
  parity_mismatches: string[];
}
/**
 * Streams whose schedules of one compile are identical.
 */
export interface ScheduleVariant {
  /**
   * The streams, in `members` order.
   */
  streams: string[];
  /**
   * Their schedules: one list per `inductor_collective_schedule` artifact of the compile,
   * in log order (a compile with a forward and a backward graph can log two), each the
   * collective kernels in scheduling order as logged
   * (`torch.ops._c10d_functional.all_reduce_.default`), waits included; null for a kernel
   * torch logged without a name.
   */
  schedules: (string | null)[][];
  /**
   * Ops of the reference variant's schedules that these lack, counting repeats (one element
   * per missing occurrence), in the reference's order. Empty for the reference.
   */
  lacks: (string | null)[];
  /**
   * Ops of these schedules that the reference lacks, counting repeats, in these schedules'
   * order. Empty for the reference.
   */
  extra: (string | null)[];
  /**
   * The first position, in the schedules taken one after the other, where these differ from
   * the reference's (a position past the shorter one's end when one is a prefix of the
   * other); null for the reference. When `lacks` and `extra` are empty, only the order differs.
   */
  first_difference: number | null;
}
/**
 * One stream's collectives, checked against its own schedules.
 */
export interface StreamParity {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * Whether the stream has a `collectives` table at all (a schedule or a collective call). When
   * false every other field is empty or 0: no data, which is not the same as no collectives.
   */
  has_data: boolean;
  /**
   * Compile ids with at least one schedule.
   */
  with_schedule: number;
  /**
   * Compile ids whose schedules were compared with their output code (parity not null).
   */
  parity_checked: number;
  /**
   * Compile ids whose output code disagrees with their schedules, in the stream's row order.
   */
  parity_mismatches: ParityMismatch[];
  /**
   * Collective calls of the output code that no `wait_tensor` waits for.
   */
  unmatched_collectives: UnmatchedCollective[];
  /**
   * `wait_tensor` calls of the output code on a handle no collective of that code produced.
   */
  unmatched_waits: UnmatchedCollective[];
  /**
   * Schedules logged outside any compile (no compile id), which cannot be aligned and are
   * left out of the comparison.
   */
  schedules_outside_compiles: number;
}
/**
 * A compile id whose output code does not call the collectives its schedules list.
 */
export interface ParityMismatch {
  /**
   * The compile id as displayed: `[0/0]`; null for schedules and code logged outside any
   * compile.
   */
  compile_id: string | null;
  /**
   * The op kinds whose counts differ between the schedules and the code (from the stream's
   * `collectives` parity).
   */
  ops: OpCount[];
  /**
   * Op kinds in the schedules and absent from the code.
   */
  only_in_schedule: string[];
  /**
   * Op kinds in the code and absent from the schedules (e.g. a `reduce_scatter_tensor` the
   * schedule lacks).
   */
  only_in_code: string[];
  /**
   * tlparse's `offset` for this compile id: the sum over op kinds (waits left out, kinds
   * merged as tlparse does) of |schedule count − code count|.
   */
  tlparse_offset: number;
  /**
   * tlparse's `missing_waits`: collective calls minus `wait_tensor` calls, 0 if negative.
   */
  tlparse_missing_waits: number;
}
/**
 * How often one op kind appears in the schedules and in the code.
 */
export interface OpCount {
  /**
   * The op (`torch.ops._c10d_functional.wait_tensor.default`).
   */
  op: string;
  /**
   * Occurrences in the schedules.
   */
  schedule: number;
  /**
   * Calls in the code.
   */
  code: number;
  /**
   * Whether the two counts are equal.
   */
  matches: boolean;
}
/**
 * A collective or `wait_tensor` call of an output code that found no partner.
 */
export interface UnmatchedCollective {
  /**
   * The compile id of the output code as displayed; null for code logged outside any compile.
   */
  compile_id: string | null;
  /**
   * The op (`torch.ops._c10d_functional.all_reduce_.default`).
   */
  op: string;
  /**
   * The call's handle: the name its result is waited on by (for a wait, the name it waits
   * on); null when the call has none.
   */
  handle: string | null;
  /**
   * Line of the call in the output code's payload, 1-based.
   */
  line: number;
  /**
   * Blob id of the output code.
   */
  blob: string;
}
/**
 * `tables/cross_rank/compile_alignment.json.zst`: every compile of every stream, aligned across
 * the streams by what it compiled. Dynamo numbers frames per process in the order it first
 * compiles them, so a rank that compiles one extra function shifts every later frame id by one:
 * its `[5/0]` is then another function than everyone else's `[5/0]`. Compiles are therefore
 * aligned by their key (`AlignmentKey`): the code object, which frame of that code on its stream,
 * and the frame compile's index within that frame; compiled-autograd compiles by their
 * compiled-autograd id and order. One row is one frame compile: its attempts (restarts of the
 * analysis) are its history, and its final attempt is the one compared. Every other cross-rank
 * table compares the compiles this table aligns (their `AlignedCompileRef`s point into
 * `compiles`). `rows` counts `compiles`.
 */
export interface CompileAlignment {
  /**
   * True when the streams did not all compile the same compiles (some row has `missing`).
   */
  diverges: boolean;
  /**
   * True when some aligned compile has different compile ids on the streams that have it
   * (frame ids shifted by a compile only some streams made).
   */
  ids_shifted: boolean;
  /**
   * Groups of streams that made exactly the same aligned compiles, the group of the first
   * stream first.
   */
  groups: AlignmentGroup[];
  /**
   * One row per aligned frame compile, grouped by code (codes in order of their first compile;
   * each code's frames in order of their first compile, each frame's recompiles after it).
   */
  compiles: AlignedCompile[];
  /**
   * Code that some streams compiled and others did not, in `compiles` order: the reason the
   * frame ids of the streams that compiled it are shifted.
   */
  partial_code: PartialCode[];
  /**
   * One row per stream, in `members` order.
   */
  streams: StreamAlignment[];
  /**
   * Every place where the key did not decide alone (two frames of the same code, a compile
   * whose code is unknown, ...), with how it was resolved. Nothing is paired silently.
   */
  ambiguities: AlignmentAmbiguity[];
}
/**
 * Streams that made the same aligned compiles.
 */
export interface AlignmentGroup {
  /**
   * The streams.
   */
  group: StreamGroup;
  /**
   * Their aligned compiles: indexes into `compiles`, in order.
   */
  compiles: number[];
}
/**
 * One aligned frame compile: the same frame of the same code compiled the same time, on each
 * stream that did.
 */
export interface AlignedCompile {
  /**
   * What it is, for people: `forward (model.py:20)`, `forward (model.py:20), recompile 1`
   * (the frame compile index within the frame), `resume (model.py:18), frame 2` (the second
   * frame of that code), `compiled autograd 0: capture`, `compiled autograd 0: graph 1`,
   * `[3/0] (code unknown)`. Unique in the table.
   */
  label: string;
  /**
   * The key the streams' compiles were aligned by.
   */
  key: AlignmentKey;
  /**
   * Each stream that made it, with its final attempt's compile id and status there and the
   * attempts before it, in `members` order.
   */
  present: StreamCompile[];
  /**
   * Streams that did not make it, in `members` order.
   */
  missing: string[];
  /**
   * True when the streams that made it disagree on its (final attempt's) status.
   */
  status_differs: boolean;
  /**
   * True when the streams that made it gave its final attempt different compile ids.
   */
  compile_id_differs: boolean;
}
/**
 * What makes two frame compiles on two streams the same compile. Every attempt of one frame
 * compile has the same key: the attempt is not part of it.
 */
export interface AlignmentKey {
  /**
   * The `compiled_autograd_id`, for compiles inside compiled autograd.
   */
  compiled_autograd_id: number | null;
  /**
   * The code compiled; null inside compiled autograd (its graphs are generated code whose
   * file name, `<eval_with_key>.N`, counts per process: they align by `ordinal`) and for a
   * compile whose code is unknown (then `compile_id` is set).
   */
  code: CodeKey | null;
  /**
   * Which frame of `code` on its stream: 0 for the first frame that compiled that code, 1 for
   * the second (two resume functions of one line, two lambdas of one line, the same function
   * again after `torch._dynamo.reset()`), in order of their first compile. Null when `code`
   * is.
   */
  frame: number | null;
  /**
   * The frame compile's ordinal within its frame (its recompile index): 0 for the frame's
   * first compile, 1 for its first recompile, ..., counted over the frame's compiles on the
   * stream in `frame_compile_id` order. Inside compiled autograd, the ordinal among the frame
   * compiles of the `compiled_autograd_id`. Null for a capture and for unknown code.
   */
  ordinal: number | null;
  /**
   * For a compile whose code is unknown and is not a capture: its frame compile's id (`[3/0]`,
   * no attempt), the only key left (such compiles align by compile id, and `ambiguities` says
   * so).
   */
  compile_id: string | null;
}
/**
 * A code object: where its source starts and its name.
 */
export interface CodeKey {
  /**
   * `co_filename`.
   */
  filename: string;
  /**
   * `co_firstlineno`.
   */
  line: number;
  /**
   * `co_name`.
   */
  name: string;
}
/**
 * One stream's frame compile of an aligned compile.
 */
export interface StreamCompile {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * The final attempt's compile id there, as displayed (`[1/0]`, `[0/0_2]`): the attempt
   * that was not restarted (the highest attempt logged).
   */
  compile_id: string;
  /**
   * The final attempt's status there (as in the stream's `compile_directory`).
   */
  status: CompileStatus;
  /**
   * The attempts before the final one (restarts of the analysis), lowest first; empty when
   * the frame compile was not restarted.
   */
  earlier_attempts: CompileAttempt[];
  /**
   * The final attempt's `restart_reasons` (`compile_directory`): why torch restarted the
   * analysis of this frame compile, one per restart as torch logged them.
   */
  restart_reasons: string[];
}
/**
 * One attempt of a frame compile, before its final one.
 */
export interface CompileAttempt {
  /**
   * Its compile id, as displayed (`[0/0]`, `[0/0_1]`).
   */
  compile_id: string;
  /**
   * Its status (as in the stream's `compile_directory`; `restarted` for an attempt Dynamo
   * restarted).
   */
  status: CompileStatus;
}
/**
 * Code that only some streams compiled.
 */
export interface PartialCode {
  /**
   * The code.
   */
  code: CodeKey;
  /**
   * Its `compiled_autograd_id`, when compiled inside compiled autograd.
   */
  compiled_autograd_id: number | null;
  /**
   * For people: `rank_local_metric (ranks_shifted.py:24)`.
   */
  label: string;
  /**
   * Streams that compiled it (at least once), with their first frame compile of it, in
   * `members` order.
   */
  compiled_by: StreamCompile[];
  /**
   * Streams that never compiled it, in `members` order.
   */
  not_compiled_by: string[];
  /**
   * When one stream compiled it: the amount by which that stream's frame ids are shifted
   * (against the usual ones, see `streams[].frame_id_shifts`) for every code it first compiled
   * later; null when no later code is shifted, or not all by the same amount.
   */
  later_frame_id_shift: number | null;
}
/**
 * One stream's place in the alignment.
 */
export interface StreamAlignment {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * Its compiles (rows of its `compile_directory`: every attempt).
   */
  compiles: number;
  /**
   * Aligned compiles (frame compiles) it lacks.
   */
  missing: number;
  /**
   * Where its frame ids differ from the other streams' for the same frame: one row per frame
   * (of a code) whose first compile has another frame id on this stream than on most streams
   * that compiled it, in `compiles` order.
   */
  frame_id_shifts: FrameIdShift[];
}
/**
 * A code whose frame id on one stream differs from the frame id most streams gave it.
 */
export interface FrameIdShift {
  /**
   * Index in `compiles` of the frame's first compile.
   */
  aligned: number;
  /**
   * The stream's frame id for the code.
   */
  frame_id: number;
  /**
   * The frame id most other streams that compiled the code gave it (the smallest on a tie).
   */
  usual_frame_id: number;
  /**
   * `frame_id − usual_frame_id`.
   */
  by: number;
}
/**
 * Why a compile could not be aligned by its key alone, and what was done.
 */
export interface AlignmentAmbiguity {
  /**
   * The stream.
   */
  stream: string;
  /**
   * What is ambiguous.
   */
  kind: AmbiguityKind;
  /**
   * The stream's compile ids concerned.
   */
  compile_ids: string[];
  /**
   * How it was resolved, in words.
   */
  resolution: string;
}
/**
 * `tables/cross_rank/compile_time_imbalance.json.zst`: each stream's total compile time, the
 * slowest and fastest streams and their ratios, the spread per phase and per compile (aligned by code). In a
 * distributed job the other ranks wait at the next collective for the slowest one to finish
 * compiling. Present when a stream logged a compile time. All times in µs. `rows` counts
 * `compiles`.
 *
 * A compile's time is its `compile_directory` `total_s` (forward plus lazily compiled backward,
 * as every per-stream table gives it; see docs/definitions.md), over the stream's timed compiles
 * (a `total_s` above 0, as `compile_summary`'s `timed`).
 */
export interface CompileTimeImbalance {
  /**
   * One row per stream, in `members` order.
   */
  streams: StreamCompileTime[];
  /**
   * Streams with the largest `total_us` (several on a tie), in `members` order.
   */
  slowest: string[];
  /**
   * Streams with the smallest `total_us` (several on a tie), in `members` order.
   */
  fastest: string[];
  /**
   * The largest `total_us` (µs).
   */
  max_us: number;
  /**
   * The smallest `total_us` (µs).
   */
  min_us: number;
  /**
   * Median of the streams' `total_us` (µs; the mean of the middle two for an even count).
   * Streams without a time are left out.
   */
  median_us: number;
  /**
   * `max_us` / `min_us`; null when `min_us` is 0.
   */
  max_over_min: number | null;
  /**
   * `max_us` / `median_us`; null when `median_us` is 0.
   */
  max_over_median: number | null;
  /**
   * One row per phase with a time on any stream: the `compilation_metrics` phase fields first,
   * then the trace-event phases; within each, by `max_us` descending (ties by name).
   */
  phases: PhaseSpread[];
  /**
   * One row per aligned compile (see `compile_alignment`) with a time on any stream, in
   * `compile_alignment` order.
   */
  compiles: CompileSpread[];
}
/**
 * One stream's compile time.
 */
export interface StreamCompileTime {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * Summed time of its timed compiles (µs): its `compile_summary`'s `total_s`; null when none
   * has a time.
   */
  total_us: number | null;
  /**
   * Its timed compiles: compile ids with a `total_s` above 0 (its `compile_summary`'s `timed`).
   */
  compiles: number;
  /**
   * Its other compile ids, with no time of their own (not in `total_us`): restarted attempts,
   * whose frame compile counts in the attempt that completed it, compiled-autograd captures,
   * and compiles that logged neither metrics nor trace events.
   */
  untimed: number;
  /**
   * `total_us` / the table's `min_us`; null without a time or when `min_us` is 0.
   */
  over_fastest: number | null;
  /**
   * `total_us` / the table's `median_us`; null without a time or when `median_us` is 0.
   */
  over_median: number | null;
  /**
   * Time spent compiling at run time (µs): the summed `runtime_*_time_us` fields
   * (`runtime_triton_autotune_time_us`, `runtime_cudagraphify_time_us`) of its `*_runtime`
   * metrics entries; null when it logged none with such a field. Not part of `total_us`.
   */
  runtime_us: number | null;
}
/**
 * One phase across the streams.
 */
export interface PhaseSpread {
  /**
   * The phase: a metrics field name or a trace-event name (see `source`).
   */
  name: string;
  /**
   * Where the times come from.
   */
  source: PhaseSource;
  /**
   * The streams with a time for the phase, in `members` order.
   */
  streams: StreamTime[];
  /**
   * Streams without a time for it, in `members` order.
   */
  missing: string[];
  /**
   * Streams with the largest time (several on a tie).
   */
  slowest: string[];
  /**
   * Streams with the smallest time (several on a tie).
   */
  fastest: string[];
  /**
   * The largest time (µs).
   */
  max_us: number;
  /**
   * The smallest time (µs).
   */
  min_us: number;
  /**
   * `max_us` − `min_us` (µs).
   */
  delta_us: number;
}
/**
 * One stream's time in a phase or a compile id.
 */
export interface StreamTime {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * Its time (µs).
   */
  us: number;
}
/**
 * One compile across the streams, aligned by the code it compiled (never by compile id or
 * position).
 */
export interface CompileSpread {
  /**
   * The compile, and each stream's compile id for it.
   */
  compile: AlignedCompileRef;
  /**
   * The streams with a time for it, in `members` order.
   */
  streams: StreamTime[];
  /**
   * Streams that did not make the compile at all, in `members` order.
   */
  missing: string[];
  /**
   * Streams that made the compile but have no time for it (its `compile_directory` `total_s`
   * is null or 0), in `members` order.
   */
  untimed: string[];
  /**
   * Streams with the largest time (several on a tie).
   */
  slowest: string[];
  /**
   * Streams with the smallest time (several on a tie).
   */
  fastest: string[];
  /**
   * The largest time (µs).
   */
  max_us: number;
  /**
   * The smallest time (µs).
   */
  min_us: number;
  /**
   * `max_us` − `min_us` (µs); 0 when one stream has a time.
   */
  delta_us: number;
  /**
   * `max_us` / `min_us`; null when `min_us` is 0.
   */
  max_over_min: number | null;
}
/**
 * `tables/cross_rank/execution_order.json.zst`: the order in which each stream ran its compiled
 * graphs, streams grouped by identical orders, and where the others differ from the most common
 * order. Ranks that run graphs in different orders issue their collectives in different orders
 * and hang. Built from each stream's `graph_execution` table; written when at least one stream
 * has one. `rows` counts the streams with an order (`streams` entries with a group).
 */
export interface ExecutionOrder {
  /**
   * True when the streams with `graph_execution` recordings did not all run the same
   * compiles in the same order (`recorded` has more than one group).
   */
  diverges: boolean;
  /**
   * The orders of the streams with `graph_execution` recordings (compile ids); null when no
   * stream has one.
   */
  recorded: OrderComparison | null;
  /**
   * The orders of the streams with legacy `inductor_graph_execution` entries (graph names
   * such as `graph_0`, which the log does not map to compile ids); null when no stream has
   * any. Never compared with `recorded`.
   */
  legacy: OrderComparison | null;
  /**
   * Set when `legacy` is set: why its graph names are not comparable with compile ids.
   */
  legacy_note: string | null;
  /**
   * One row per stream, in `members` order: which group it is in.
   */
  streams: StreamOrder[];
}
/**
 * Streams grouped by identical execution orders, and how each group differs from the reference.
 */
export interface OrderComparison {
  /**
   * True when there is more than one group.
   */
  diverges: boolean;
  /**
   * Index in `groups` of the reference the others are compared with: the group with the most
   * streams (the first one on ties).
   */
  reference: number;
  /**
   * Streams with identical orders, the group of the first stream first.
   */
  groups: OrderGroup[];
}
/**
 * Streams that ran their graphs in the same order.
 */
export interface OrderGroup {
  /**
   * The streams, in `members` order.
   */
  streams: string[];
  /**
   * Their order: one list per recording, in log order (for `recorded`: one per
   * `graph_execution` artifact, i.e. per recording block; for `legacy`: a single list of
   * every `inductor_graph_execution` entry). Each item is one graph run: for `recorded` the
   * label of the compile it ran in `compile_alignment` (`forward (model.py:20)`: ranks whose
   * frame ids are shifted ran the same graphs under other compile ids), or the compile id as
   * logged when the stream's `compile_directory` lacks it, null when torch logged none (null or
   * `None`, equal to each other here); for `legacy` the graph name (`graph_0`).
   */
  recordings: (string | null)[][];
  /**
   * Number of graph runs, over all recordings.
   */
  runs: number;
  /**
   * How this group's order differs from the reference group's; null for the reference.
   */
  difference: OrderDifference | null;
}
/**
 * Where a group's order differs from the reference's, position by position.
 */
export interface OrderDifference {
  /**
   * True when both ran the same graphs the same number of times (over all recordings), so
   * only the order differs.
   */
  same_runs: boolean;
  /**
   * The recordings that differ (a recording only one side has counts as empty on the other).
   */
  recordings: RecordingDifference[];
}
/**
 * One recording that differs from the reference's recording at the same index.
 */
export interface RecordingDifference {
  /**
   * Index of the recording, 0-based.
   */
  recording: number;
  /**
   * The first position (0-based) where the two differ.
   */
  first_position: number;
  /**
   * Every position (0-based) where the two differ, in order; positions past the end of the
   * shorter recording count as differing.
   */
  positions: number[];
  /**
   * Number of runs in this group's recording.
   */
  length: number;
  /**
   * Number of runs in the reference's recording.
   */
  reference_length: number;
}
/**
 * One stream's place in the comparison.
 */
export interface StreamOrder {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * Index of its group in `recorded.groups`; null when it has no `graph_execution` recording.
   */
  recorded_group: number | null;
  /**
   * Index of its group in `legacy.groups`; null when it has no legacy entry.
   */
  legacy_group: number | null;
  /**
   * Runs whose compile id torch did not log (null in its order).
   */
  unknown_compile_ids: number;
}
/**
 * `tables/cross_rank/rank_differ.json.zst`: every artifact key (compile, name, graph, occurrence)
 * of any stream, compiles aligned by the code they compiled (`compile_alignment`, final attempts
 * only), with the streams grouped by identical payload (same blob id) and the streams that lack
 * it. Payloads whose bytes differ are compared again once what is volatile by nature (object
 * ids, addresses, compile ids, temporary paths, pids, measured times: the rule of
 * docs/cross_rank/rank_differ.md) is masked: groups equal once masked share a `variant`, and a
 * key whose groups are all one variant is `same_up_to_ids`. "Rank 3's `dynamo_output_graph` of
 * `forward` differs from ranks 0-2": fetch one blob per variant and diff them. A device string
 * (`cuda:0` vs `cuda:1`) is content. Present when a stream logged an artifact with a payload.
 * `rows` counts `artifacts`.
 *
 * A row names only the streams that differ from the majority: the largest payload group holds
 * "every other stream that has the key" without listing them, and the streams that lack a key
 * are listed only when they are fewer than those that have it (else every group is listed and
 * the streams of no group lack it). A row's size grows with the streams outside its largest
 * side, not with the number of streams; `streams` (every stream, in `members` order) is what
 * the unlisted streams are taken from.
 *
 * Source: the `artifacts` (and `unattributed`) lists of each stream's `compile_directory`
 * (attempts that restarted are left out: only a frame compile's final attempt is compared);
 * entries without a payload and `str` entries are left out (`chromium_event`s are not in those
 * lists).
 */
export interface RankDiffer {
  /**
   * Rows of `artifacts`.
   */
  keys: number;
  /**
   * Rows whose `status` is `identical`.
   */
  identical: number;
  /**
   * Rows whose `status` is `differs`.
   */
  differs: number;
  /**
   * Rows whose `status` is `same_up_to_ids`.
   */
  same_up_to_ids: number;
  /**
   * Rows whose `status` is `same_where_present`.
   */
  same_where_present: number;
  /**
   * Rows some stream lacks (`present` below the number of streams; any status).
   */
  with_missing: number;
  /**
   * One row per stream, in `members` order.
   */
  streams: StreamDiffer[];
  /**
   * One row per artifact key: by compile in `compile_alignment` order (keys outside any
   * compile last), then in order of first appearance (the first stream's log order, then keys only
   * later streams have).
   */
  artifacts: ArtifactComparison[];
}
/**
 * How one stream compares with the others.
 */
export interface StreamDiffer {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * Keys the stream has.
   */
  present: number;
  /**
   * Keys the stream lacks (some other stream has them).
   */
  missing: number;
  /**
   * Keys where its payload matches no other stream's while another stream has the key: the
   * stream is the odd one out there (byte for byte: a payload that differs only in ids counts).
   */
  alone: number;
}
/**
 * One artifact key across the streams.
 */
export interface ArtifactComparison {
  /**
   * The compile (its index and label in `compile_alignment`, whose row gives each stream's own
   * compile id for it); null for artifacts logged outside any compile (e.g. `graph_execution`).
   */
  compile: AlignedCompileLabel | null;
  /**
   * The entry's kind (`artifact`, `dynamo_output_graph`, `inductor_output_code`, ...), as the
   * first stream that has the key logged it (a cache hit logs some graphs under their own
   * kind: the key is the name).
   */
  kind: string;
  /**
   * The entry's name as in `compile_directory` (the format's one naming rule: no name holds
   * a content hash, so output code is `inductor_output_code` on every rank).
   */
  name: string;
  /**
   * The AOT graph it was produced for (`compile_directory`'s `graph` of the artifact:
   * forward, backward or inference); absent when not one graph's. Part of the key: a rank
   * whose FX cache hit logged no post-grad graph for the forward has no forward key, and its
   * backward graph is still compared with the others' backward.
   */
  graph?: GraphRole | null;
  /**
   * Which occurrence of this name and graph within the compile (0 for the first), counted in
   * each stream's log order.
   */
  occurrence: number;
  /**
   * Whether the streams agree.
   */
  status: ArtifactStatus;
  /**
   * How many streams have it (the others lack it).
   */
  present: number;
  /**
   * The streams that have it, grouped by payload, the group of the first stream first. When
   * `missing` is listed, the largest group (the first of them on a tie) lists no `streams`:
   * it holds every stream that has the key and is in no other group.
   */
  groups: PayloadGroup[];
  /**
   * The streams that lack it, in `members` order (`[]` when every stream has it), listed
   * when no more streams lack it than have it. Left out otherwise: every group lists its
   * streams then, and the streams in no group lack it.
   */
  missing?: string[] | null;
  /**
   * Of the `missing` streams (when listed), those that logged an `fx_graph_cache_hit` for
   * the same compile and graph: an FX graph cache hit skips Inductor's compile, so it logs no
   * post-grad graph. Left out when there are none.
   */
  missing_on_cache_hit?: string[] | null;
  /**
   * For a `differs` row: the first line where a group of another variant than the largest
   * differs from the largest's, once masked. Absent on other rows, and when the payloads could
   * not be read.
   */
  difference?: LineDifference | null;
}
/**
 * A reference, from a row that must not grow with the number of streams, to one aligned
 * compile: its index and label alone; each stream's own compile id for it is in that
 * `compile_alignment` row's `present`.
 */
export interface AlignedCompileLabel {
  /**
   * Index of the compile in `compile_alignment`'s `compiles`.
   */
  aligned: number;
  /**
   * Its label there (`forward (model.py:20)`).
   */
  label: string;
}
/**
 * Streams that logged the same payload.
 */
export interface PayloadGroup {
  /**
   * How many streams the group holds.
   */
  count: number;
  /**
   * The streams, in `members` order; left out for the largest group when the row lists
   * `missing` (see `groups`).
   */
  streams?: string[] | null;
  /**
   * Blob id of the payload.
   */
  blob: string;
  /**
   * Payload size in bytes.
   */
  size: number;
  /**
   * Groups with the same variant logged payloads equal once ids are masked: 0 for the first
   * group's, then numbered in order of first group. Every group is its own variant when the
   * payloads could not be read.
   */
  variant: number;
}
/**
 * Where two variants of a payload first differ, line by line, masked (`<?>` for what is
 * volatile): the odd variant's line and the largest variant's line at the same place.
 */
export interface LineDifference {
  /**
   * The `variant` of the odd group described (its first group).
   */
  variant: number;
  /**
   * The line number (from 1) where they first differ.
   */
  line: number;
  /**
   * That line of the odd variant (empty past its end), clipped to 160 characters around the
   * first differing character (`…` marks a cut).
   */
  text: string;
  /**
   * That line of the largest variant (empty past its end), clipped the same way.
   */
  usual: string;
}
/**
 * `tables/cross_rank/rank_findings.json.zst`: per stream, the counts an overview warns about
 * (failed compiles, restarts, recompiled frames and recompile storms, graph breaks), from the
 * stream's own `failures`, `recompiles` and `graph_breaks` tables; across the streams, the
 * headline findings of `compile_alignment`, `collective_schedules` and `compile_time_imbalance`.
 * It grows with the number of streams and of findings, never with streams × compiles, so that a
 * viewer shows what needs attention at thousands of ranks by fetching it alone, not three tables
 * per stream. Present when the bundle has two streams or more. `rows` counts `streams`.
 */
export interface RankFindings {
  /**
   * One row per member, in `members` order.
   */
  streams: StreamFindings[];
  /**
   * How many compiles of one frame make a recompile storm (`storms`): 8, torch's default
   * `recompile_limit` (`cache_size_limit`), past which Dynamo stops recompiling the frame.
   */
  storm_compiles: number;
  /**
   * What `compile_alignment` found; null when the bundle has no `compile_alignment` table (no
   * stream has a compile).
   */
  alignment: AlignmentFindings | null;
  /**
   * The first [`SCHEDULES_LISTED`] compiles whose collective schedules differ between streams
   * (`collective_schedules` rows with `differs`), in that table's order.
   */
  schedules: ScheduleFinding[];
  /**
   * How many compiles' collective schedules differ (`schedules` lists the first ones).
   */
  schedules_differ: number;
  /**
   * The headline of `compile_time_imbalance`; null when the bundle has no such table (no
   * stream logged a compile time).
   */
  compile_time: CompileTimeFindings | null;
  /**
   * The headline of `rank_differ`; null when the bundle has no such table.
   */
  artifacts: ArtifactFindings | null;
}
/**
 * One stream's findings. Counts are 0 when the stream has no such table (nothing to report).
 */
export interface StreamFindings {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * Compiles that failed: the stream's `failures.failed`.
   */
  failed: number;
  /**
   * Times Dynamo restarted its analysis of a frame: `failures.restarts`.
   */
  restarts: number;
  /**
   * Frames compiled more than once: the rows of the stream's `recompiles`, storms included.
   */
  recompiled_frames: number;
  /**
   * The recompiled frames with at least `storm_compiles` compiles, in `recompiles` order (most
   * compiles first).
   */
  storms: RecompileStorm[];
  /**
   * Graph breaks: `graph_breaks.total`.
   */
  graph_breaks: number;
  /**
   * Distinct graph breaks (reason, location and where raised): the rows of `graph_breaks`.
   */
  graph_break_groups: number;
}
/**
 * A frame compiled at least `storm_compiles` times: its `recompiles` row, without the compiles.
 */
export interface RecompileStorm {
  /**
   * The frame's `frame_id` on this stream.
   */
  frame_id: number;
  /**
   * `compiled_autograd_id`, for frames compiled inside compiled autograd.
   */
  compiled_autograd_id: number | null;
  /**
   * `co_name` of the frame, when logged.
   */
  co_name: string | null;
  /**
   * `co_filename:co_firstlineno` of the frame, when logged.
   */
  location: string | null;
  /**
   * How many times the frame was compiled.
   */
  compiles: number;
}
/**
 * What `compile_alignment` found: whether the streams made different compiles, and the code only
 * some streams compiled or that could not be aligned for sure. Its per-compile rows are left out.
 */
export interface AlignmentFindings {
  /**
   * `compile_alignment.diverges`: the streams did not all make the same compiles.
   */
  diverges: boolean;
  /**
   * `compile_alignment.ids_shifted`: the same code has other compile ids on some streams.
   */
  ids_shifted: boolean;
  /**
   * The streams of each of `compile_alignment.groups`, in its order.
   */
  groups: StreamGroup[];
  /**
   * `compile_alignment.partial_code`, as it is.
   */
  partial_code: PartialCode[];
  /**
   * `compile_alignment.ambiguities`, as they are.
   */
  ambiguities: AlignmentAmbiguity[];
}
/**
 * A compile whose collective schedules differ between streams.
 */
export interface ScheduleFinding {
  /**
   * The compile, and each stream's compile id for it.
   */
  compile: AlignedCompileRef;
  /**
   * The streams of each schedule variant, in `collective_schedules` order.
   */
  variants: StreamGroup[];
}
/**
 * The headline of `compile_time_imbalance`.
 */
export interface CompileTimeFindings {
  /**
   * Streams with the largest compile time (several on a tie), in `members` order.
   */
  slowest: string[];
  /**
   * Streams with the smallest compile time (several on a tie), in `members` order.
   */
  fastest: string[];
  /**
   * The largest compile time of a stream (µs).
   */
  max_us: number;
  /**
   * The smallest compile time of a stream (µs).
   */
  min_us: number;
  /**
   * `max_us` / `min_us`; null when `min_us` is 0.
   */
  max_over_min: number | null;
}
/**
 * What `rank_differ` found, counted, and its first findings in words.
 */
export interface ArtifactFindings {
  /**
   * Keys whose payloads differ even once ids are masked (`rank_differ.differs`).
   */
  differ: number;
  /**
   * Keys whose payloads differ only in ids (`rank_differ.same_up_to_ids`).
   */
  same_up_to_ids: number;
  /**
   * Keys some stream lacks because it hit the FX graph cache (rows with
   * `missing_on_cache_hit`).
   */
  missing_on_cache_hit: number;
  /**
   * The first [`ARTIFACTS_DESCRIBED`] findings in words, in `rank_differ` order: real
   * differences first ("rank 1's `dynamo_cpp_guards_str` of `forward (m.py:20)` differs at
   * line 32: `…size=[12, 16]…` where the others have `…size=[8, 16]…`"), then keys missing on
   * a cache hit ("rank 3 logged no `inductor_post_grad_graph` (forward) of `allreduce_fn
   * (m.py:40)`: FX graph cache hit").
   */
  described: string[];
}
/**
 * `tables/cross_rank/runtime_estimations.json.zst`: inductor's estimated runtime of every graph
 * (the sum of its ops' `estimated_runtime_ns`, from each stream's `runtime_estimates` table),
 * aligned by compile (by the code compiled: `compile_alignment`; never by compile id or graph
 * order) and occurrence, with the fastest and slowest
 * streams and the spread per graph. A rank whose graphs are estimated slower than the others'
 * makes the others wait at every collective. `rows` counts `graphs`.
 */
export interface RuntimeEstimations {
  /**
   * Two totals `a` and `b` count as equal when `|a − b| ≤ relative_tolerance × max(|a|, |b|)`
   * (1e-9: a nanosecond per second). Floating-point noise and digits lost in a log stay
   * under it; any real change of an estimate is far above it.
   */
  relative_tolerance: number;
  /**
   * True when some graph's totals differ (beyond the tolerance) between the streams that have
   * it. A graph missing on a stream does not count.
   */
  differs: boolean;
  /**
   * The compiles (their `compile_alignment` labels; null for graphs logged outside any
   * compile) of the graphs whose totals differ, in `graphs` order.
   */
  differing_compiles: (string | null)[];
  /**
   * Groups of streams with the same graphs and equal totals on each (within the tolerance of
   * the group's first stream), the group of the first stream first. Streams in `no_data`
   * belong to no group.
   */
  groups: StreamGroup[];
  /**
   * Each stream with runtime estimates: how many graphs and their summed estimate, in
   * `members` order.
   */
  streams: StreamRuntime[];
  /**
   * Streams without any runtime estimate (no `runtime_estimates` table), in `members` order.
   */
  no_data: string[];
  /**
   * One row per (compile, occurrence) estimated on any stream, in `compile_alignment` order
   * (graphs logged outside any compile last).
   */
  graphs: GraphRuntimes[];
}
/**
 * One stream's estimates, all graphs together.
 */
export interface StreamRuntime {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * Number of graphs with an estimate.
   */
  graphs: number;
  /**
   * Sum of the graphs' estimated totals, in nanoseconds. Comparable between streams only
   * when they have the same graphs (see `groups` and `graphs[].missing`).
   */
  total_estimated_runtime_ns: number;
}
/**
 * One graph's estimated total on every stream that has it.
 */
export interface GraphRuntimes {
  /**
   * The compile, with each stream's compile id for it; null for a graph logged outside any
   * compile.
   */
  compile: AlignedCompileRef | null;
  /**
   * Which of the compile's estimates this is, per stream (0 for the first; a compile with
   * forward and backward graphs has 0 and 1).
   */
  occurrence: number;
  /**
   * The graph's total on each stream that has it, in `members` order.
   */
  totals: StreamGraphRuntime[];
  /**
   * Streams without an estimate for this graph, in `members` order ("missing", never
   * "different").
   */
  missing: string[];
  /**
   * The streams of `missing` that did make this compile but logged no estimate for it.
   */
  compiled_without_estimate: string[];
  /**
   * The smallest total, in nanoseconds.
   */
  fastest_ns: number;
  /**
   * The streams whose total equals the smallest (within the tolerance), in `members` order.
   */
  fastest: string[];
  /**
   * The largest total, in nanoseconds.
   */
  slowest_ns: number;
  /**
   * The streams whose total equals the largest (within the tolerance), in `members` order.
   */
  slowest: string[];
  /**
   * `slowest_ns − fastest_ns`, exactly (it can be a tiny non-zero number while `differs` is
   * false), in nanoseconds.
   */
  delta_ns: number;
  /**
   * `delta_ns` as a percentage of `fastest_ns`; null when `fastest_ns` is 0.
   */
  delta_percent: number | null;
  /**
   * True when the largest and smallest totals differ beyond the tolerance.
   */
  differs: boolean;
}
/**
 * One graph's estimate on one stream.
 */
export interface StreamGraphRuntime {
  /**
   * The stream id.
   */
  stream: string;
  /**
   * Sum of the graph's ops' `estimated_runtime_ns` there (its `runtime_estimates` row).
   */
  total_estimated_runtime_ns: number;
  /**
   * Number of ops.
   */
  op_count: number;
}
/**
 * `tables/cross_rank/tensor_meta.json.zst`: which streams scheduled the same ops with the same
 * output tensor metadata (shape, stride, dtype), per graph and over the whole run, from the
 * `tensor_meta_fingerprint` of each stream's `runtime_estimates` table (runtime estimates left
 * out, unlike tlparse). Graphs are aligned by compile (by the code compiled:
 * `compile_alignment`) and occurrence; a graph missing on a
 * stream is "missing", never "different". Where streams differ, `graphs[].differences` lists the
 * differing ops. Ranks that disagree on tensor layouts run different kernels and can exchange
 * mismatched buffers in collectives. `rows` counts `graphs`.
 */
export interface CrossRankTensorMeta {
  /**
   * True when the streams with data form more than one whole-run group (`groups`): tlparse's
   * "divergent tensor meta", but without counting the runtime numbers. Can be true only
   * because of missing artifacts; see `fingerprints_differ`.
   */
  diverges: boolean;
  /**
   * True when some graph has different fingerprints on two streams that both have it.
   */
  fingerprints_differ: boolean;
  /**
   * Whole-run groups: streams with exactly the same graphs and the same fingerprint for each,
   * the group of the first stream first. Streams in `no_data` belong to no group.
   */
  groups: TensorMetaGroup[];
  /**
   * Streams without any `inductor_runtime_and_tensor_meta` artifact (no `runtime_estimates`
   * table), in `members` order.
   */
  no_data: string[];
  /**
   * One row per (compile, occurrence) that any stream has, in `compile_alignment` order
   * (graphs logged outside any compile last).
   */
  graphs: GraphTensorMeta[];
}
/**
 * Streams that agree on every graph's tensor metadata.
 */
export interface TensorMetaGroup {
  /**
   * The streams of the group, in `members` order.
   */
  streams: string[];
  /**
   * Their graphs and fingerprints, in `compile_alignment` order.
   */
  graphs: GraphFingerprint[];
  /**
   * Indexes (in `groups`) of the other groups that have the same fingerprint on every graph
   * both have: this group is separate from those only because one side lacks some graphs'
   * artifacts (e.g. a rank that logged no estimate for one compile).
   */
  differs_only_by_missing_from: number[];
}
/**
 * One graph's fingerprint in a whole-run group.
 */
export interface GraphFingerprint {
  /**
   * The compile, with each stream's compile id for it; null for a graph logged outside any
   * compile.
   */
  compile: AlignedCompileRef | null;
  /**
   * The occurrence of the artifact for that compile (0 for the first).
   */
  occurrence: number;
  /**
   * The `tensor_meta_fingerprint` (see the `runtime_estimates` table).
   */
  fingerprint: string;
}
/**
 * One graph across the streams.
 */
export interface GraphTensorMeta {
  /**
   * The compile, with each stream's compile id for it; null for a graph logged outside any
   * compile.
   */
  compile: AlignedCompileRef | null;
  /**
   * Which of the compile's artifacts this is, per stream (0 for the first).
   */
  occurrence: number;
  /**
   * Streams with equal fingerprints for this graph, in order of their first stream; the
   * first group is the reference the `differences` compare to.
   */
  groups: FingerprintGroup[];
  /**
   * Streams without this graph's artifact, in `members` order ("missing", never "different").
   */
  missing: string[];
  /**
   * The streams of `missing` that did make this compile but logged no artifact for it.
   */
  compiled_without_artifact: string[];
  /**
   * True when `groups` has more than one group.
   */
  differs: boolean;
  /**
   * For each group after the first, how its ops differ from the first group's (both taken
   * from the group's first stream). Empty when `differs` is false.
   */
  differences: GroupDifference[];
}
/**
 * Streams with one fingerprint for a graph.
 */
export interface FingerprintGroup {
  /**
   * The streams of the group, in `members` order.
   */
  streams: string[];
  /**
   * Their `tensor_meta_fingerprint`.
   */
  fingerprint: string;
  /**
   * Number of ops in the graph.
   */
  op_count: number;
}
/**
 * How one fingerprint group's ops differ from the reference group's (the row's first group).
 */
export interface GroupDifference {
  /**
   * Index of the group in the row's `groups` (1 or more).
   */
  group: number;
  /**
   * The differing ops, in op order. Ops are paired by name along the longest common
   * subsequence of the two op-name lists (so an inserted op does not shift every later pair);
   * a paired op is listed when its type or outputs differ, an unpaired one always.
   */
  ops: OpDifference[];
}
/**
 * One op that differs between the reference group and another group.
 */
export interface OpDifference {
  /**
   * The op's name (`op1_op2_op4`, `torch.ops._c10d_functional.wait_tensor.default`).
   */
  name: string;
  /**
   * Its index in the reference group's ops (0-based); null when only the other group has it.
   */
  reference_index: number | null;
  /**
   * Its index in the other group's ops (0-based); null when only the reference has it.
   */
  other_index: number | null;
  /**
   * The op in the reference group; null when only the other group has it.
   */
  reference: OpLayout | null;
  /**
   * The op in the other group; null when only the reference has it.
   */
  other: OpLayout | null;
}
/**
 * The compared part of an op (its runtime estimate is not compared).
 */
export interface OpLayout {
  /**
   * `compute` or `collective`, as logged.
   */
  type: string;
  /**
   * The output buffers; null when the op had no `outputs` key (not the same as `[]`).
   */
  outputs: TensorMeta[] | null;
}
/**
 * Layout of one output buffer.
 */
export interface TensorMeta {
  /**
   * Sizes (size hints for symbolic sizes); `[]` for collectives' outputs.
   */
  shape: number[];
  /**
   * Strides, in elements.
   */
  stride: number[];
  /**
   * The dtype as logged (`float16`); null when unknown (collectives).
   */
  dtype: string | null;
}
/**
 * One line of `diagnostics.jsonl`: a problem found in an input. Nothing is dropped: the raw
 * text of unreadable lines is stored as a blob.
 */
export interface Diagnostic {
  /**
   * What went wrong.
   */
  kind: DiagnosticKind;
  /**
   * Path of the input file, as in `inputs[].path` (or, for `unreadable_log`, as in
   * `skipped[].paths`).
   */
  file: string;
  /**
   * First line (from 1) concerned; 0 for a problem with the whole file (`unreadable_log`).
   */
  line: number;
  /**
   * Last line concerned (equal to `line` for a single line).
   */
  end_line: number;
  /**
   * The stream the entry belongs to, when it could be read far enough to know.
   */
  stream?: string | null;
  /**
   * Human-readable explanation.
   */
  message: string;
  /**
   * Blob id of a blob holding the raw bytes of the lines concerned (for lines that could not
   * be read, or were read with a loss: a header line that is not UTF-8, a line too long).
   */
  raw?: string | null;
}
/**
 * One row of a stream's event index (`index/<stream>.jsonl.zst`): one log entry.
 *
 * `M` is the type of `meta`: a JSON value when reading; the writer passes raw JSON text through.
 */
export interface IndexRow {
  /**
   * Line number (from 1) of the entry's header line in its input file. Stored only where the
   * row before does not imply it (the first row implies line 1; a row implies the line after
   * its payload: `line + 1 + payload.lines`); readers fill it in ([`RowNumbering`]).
   */
  line?: number;
  /**
   * Glog timestamp as logged, `MMDD HH:MM:SS.ffffff` (glog writes no year).
   */
  ts: string;
  /**
   * Glog severity letter: `V`, `I`, `W`, `E` or `F`.
   */
  level: string;
  /**
   * The source location that logged the entry, `path/file.py:LINE`, as logged.
   */
  src: string;
  /**
   * The entry's kind: the envelope's non-structural key, e.g. `dynamo_start`, `artifact`,
   * `chromium_event`, `str`. Unknown kinds are kept as they are.
   */
  kind: string;
  /**
   * The name of a named entry: `artifact`, `graph_dump`, `link`, `dump_file` and
   * `optimize_ddp_split_child` entries carry one in their metadata.
   */
  name?: string | null;
  /**
   * Compile id as tlparse displays it: `[0/1]`, `[0/1_2]` (attempt 2), `[!0/1/2]` (compiled
   * autograd id 0); `-` stands for a missing part.
   */
  compile_id?: string | null;
  /**
   * The compile id's parts, as logged in the envelope.
   */
  cid?: CompileId | null;
  /**
   * The envelope's `rank`, when it has one.
   */
  rank?: number | null;
  /**
   * The kind's metadata, as logged, except that every stack in it (a top-level field holding
   * a list of frames) is replaced by the integer id of that stack in the stream's stack table.
   */
  meta: {
    [k: string]: unknown;
  };
  /**
   * The top-level `meta` fields that held a stack and now hold its id in the stream's stack
   * table (e.g. `["stack", "user_stack"]`).
   */
  meta_stacks?: string[];
  /**
   * The metadata's raw JSON text when the bundle does not hold it as JSON: nested deeper than
   * 100 levels (files holding it nest it deeper, within the 128 levels JSON readers accept) or
   * holding a number beyond a 64-bit float. `meta` is then null; a `too_deep` or
   * `out_of_range` diagnostic names the entry.
   */
  meta_text?: string | null;
  /**
   * Id, in the stream's stack table, of the envelope-level `stack` (logged by entries outside
   * any compile).
   */
  stack?: number | null;
  /**
   * Envelope keys that are neither the kind nor structural (e.g. `subgraph_name`), as logged.
   */
  extra?: {
    [k: string]: unknown;
  } | null;
  /**
   * The entry's payload, if the envelope declared one (`has_payload`).
   */
  payload?: PayloadRef | null;
}
/**
 * The parts of a compile id. Null parts were absent in the envelope.
 */
export interface CompileId {
  /**
   * `compiled_autograd_id`: set for compiles inside compiled autograd.
   */
  compiled_autograd_id: number | null;
  /**
   * `frame_id`: which Python frame Dynamo compiled.
   */
  frame_id: number | null;
  /**
   * `frame_compile_id`: how many times that frame was compiled before (recompiles).
   */
  frame_compile_id: number | null;
  /**
   * `attempt`: restarts of the analysis of one compile (after a graph break).
   */
  attempt: number | null;
}
/**
 * A reference from an index row to its payload blob.
 */
export interface PayloadRef {
  /**
   * The blob id: the first 128 bits of the blake3 hash of the payload bytes, as 32 lowercase
   * hex digits (blake3 is an extendable-output hash; this is its 16-byte output).
   */
  hash: string;
  /**
   * Payload size in bytes (the payload lines without their leading tab, joined with `\n`).
   */
  size: number;
  /**
   * Number of payload lines.
   */
  lines: number;
  /**
   * Detected format of the payload.
   */
  format: PayloadFormat;
  /**
   * True when the payload's md5 differs from the envelope's `has_payload` (the payload is
   * kept as read; a diagnostic names the line).
   */
  md5_mismatch?: boolean;
}
/**
 * `manifest.lite.json.zst`: `manifest.json` without what grows with every file of the bundle
 * and only a checker needs: the file lists (`files`, `viewer`) and the inputs' hashes;
 * zstd-compressed compact JSON. Everything else is as in the manifest, field for field. At 1,000 ranks it is about 2% of the manifest's size (the file list alone holds a
 * 64-digit hash for each of about 20 files a stream), so a viewer reads it first and shows its
 * first page without fetching the manifest; `validate` checks that it is exactly the manifest's.
 * Files are written before it and it before the manifest (and it is removed with the old
 * manifest when a bundle is replaced), so a reader that finds it finds every file it names.
 */
export interface LiteManifest {
  /**
   * As in the manifest.
   */
  format: string;
  /**
   * As in the manifest.
   */
  format_version: string;
  /**
   * As in the manifest.
   */
  min_reader_version: number;
  /**
   * As in the manifest.
   */
  generator: Generator;
  /**
   * The manifest's `inputs`, each without its `blake3`.
   */
  inputs: LiteInput[];
  /**
   * As in the manifest.
   */
  skipped: Skipped[];
  /**
   * As in the manifest.
   */
  streams: Stream[];
  /**
   * As in the manifest.
   */
  cross_rank: CrossRank | null;
  /**
   * As in the manifest.
   */
  counts: Counts;
  /**
   * As in the manifest.
   */
  diagnostics: DiagnosticsSummary;
  /**
   * As in the manifest.
   */
  blobs: BlobStore;
}
/**
 * Name and version of the program that wrote a bundle.
 */
export interface Generator {
  /**
   * Program name, `tlparse-build`.
   */
  name: string;
  /**
   * Program version (semver).
   */
  version: string;
}
/**
 * One of the manifest's `inputs`, without its hash.
 */
export interface LiteInput {
  /**
   * As in the manifest.
   */
  path: string;
  /**
   * As in the manifest.
   */
  size: number;
  /**
   * As in the manifest.
   */
  compression: InputCompression;
  /**
   * As in the manifest.
   */
  rank_from_name?: number | null;
  /**
   * As in the manifest.
   */
  lines: number;
  /**
   * As in the manifest.
   */
  streams: string[];
}
/**
 * The files of an input directory that were not read for one reason.
 */
export interface Skipped {
  /**
   * Why they were not read, e.g. `not a TORCH_TRACE log (no log header in its first 4 MiB)`,
   * `symlink leading out of the trace directory`, `not a regular file (FIFO, socket or device)`.
   */
  reason: string;
  /**
   * How many files (or directory entries) were skipped for this reason.
   */
  count: number;
  /**
   * Those of them whose names look like logs (`.log`, `.txt`, `.gz`, `.zst`, or a name with
   * `torch_trace` in it), relative to the trace directory, sorted. Other names are counted,
   * never written.
   */
  paths: string[];
}
/**
 * A stream: the entries one process wrote into one input file for one rank, in log order.
 */
export interface Stream {
  /**
   * Stream id, unique in the bundle: `rank{N}` for a rank (with `-{k}` appended when several
   * streams share a rank), `log{k}` for streams with no rank. Used in file names.
   */
  id: string;
  /**
   * The rank: the first `rank` the process's envelopes name, else the one in the file name;
   * null when neither exists.
   */
  rank: number | null;
  /**
   * Process id from the glog prefix.
   */
  pid: number;
  /**
   * Index into `inputs` of the file the entries came from.
   */
  input: number;
  /**
   * Number of log entries (index rows) in the stream.
   */
  entries: number;
  /**
   * Sum of the payload sizes in bytes of the stream's entries.
   */
  payload_bytes: number;
  /**
   * Glog timestamp of the first entry, as logged (`MMDD HH:MM:SS.ffffff`; glog has no year).
   */
  first_timestamp: string;
  /**
   * Glog timestamp of the last entry, as logged.
   */
  last_timestamp: string;
  /**
   * Number of entries of each kind (`artifact:NAME` for named kinds such as artifacts).
   */
  kinds: {
    [k: string]: number;
  };
  /**
   * Number of distinct compile ids seen in the stream.
   */
  compile_ids: number;
  /**
   * Path of the stream's event index (zstd-compressed JSONL of `IndexRow`).
   */
  index: string;
  /**
   * Path of the stream's interned stack table (`StackTable`).
   */
  stacks: string;
  /**
   * The stream's analysis tables that have at least one row, by table name (e.g.
   * `compile_directory`). Each file is zstd-compressed JSON following
   * `schema/tables/<name>.schema.json`.
   */
  tables: {
    [k: string]: TableRef;
  };
  /**
   * Path of a Chrome trace-event file (gzip-compressed JSON, `{"traceEvents": [...]}`) of the
   * stream's `chromium_event` entries, which Perfetto and chrome://tracing open as is. Null when
   * the stream logged none.
   */
  chrome_trace: string | null;
}
/**
 * Where one table is: its parts (docs/format.md, Analysis tables).
 */
export interface TableRef {
  /**
   * Paths of the table's parts, in order, at least one: `tables/<stream>/<name>.json.zst` for
   * a table in one part, `tables/<stream>/<name>.<k>.json.zst` (k from 0) for several. Each
   * part is a whole document of the table's schema; each of its top-level lists holds a slice
   * of the table's list (the list is the slices in part order), and its other members are
   * the same in every part.
   *
   * @minItems 1
   */
  parts: [string, ...string[]];
  /**
   * Number of rows in the table (its main list; see each table's description).
   */
  rows: number;
}
/**
 * The manifest's `cross_rank` section, present when the bundle has two streams or more.
 */
export interface CrossRank {
  /**
   * The streams compared, in the order of the manifest's `streams`. Every cross-rank table
   * names streams by `stream` id; show them by `label`.
   */
  members: RankMember[];
  /**
   * The cross-rank tables with at least one row, by name. Each file is zstd-compressed JSON
   * following `schema/cross_rank/<name>.schema.json`.
   */
  tables: {
    [k: string]: TableRef;
  };
  /**
   * Path of a Chrome trace-event file (gzip-compressed JSON, `tables/cross_rank/chrome_trace.json.gz`)
   * merging every stream's `chromium_event`s: `members[i]`'s events are process `pid` i, named
   * by its `label`; null when no stream logged any.
   */
  chrome_trace: string | null;
  /**
   * Path of a Chrome trace-event file (gzip-compressed JSON) of inductor's runtime
   * estimates: one process per member, one thread per graph (per aligned compile: the same row
   * in every process), its ops laid end to end with their estimated durations; null when no stream has runtime estimates.
   */
  runtime_estimates_trace: string | null;
}
/**
 * One stream, as the cross-rank tables know it.
 */
export interface RankMember {
  /**
   * The stream id (as in the manifest's `streams`).
   */
  stream: string;
  /**
   * The stream's rank (from its envelopes, else its file name); null when neither has one.
   */
  rank: number | null;
  /**
   * The rank in the stream's file name (`..._rank_N...`), when it has one. It can differ from
   * `rank` when a file's entries name another rank; tlparse only knows this one.
   */
  file_rank: number | null;
  /**
   * What to call the stream: `rank N` when N (the stream's rank, else its file rank) names
   * no other stream, the stream id otherwise.
   */
  label: string;
}
/**
 * Totals over the whole bundle.
 */
export interface Counts {
  /**
   * Log entries (index rows) over all streams.
   */
  entries: number;
  /**
   * Input lines over all inputs.
   */
  lines: number;
  /**
   * Input bytes over all inputs, as read (decompressed).
   */
  input_bytes: number;
  /**
   * Payload bytes referenced by index rows, duplicates included.
   */
  payload_bytes: number;
  /**
   * Distinct blobs stored.
   */
  unique_blobs: number;
  /**
   * Bytes of the distinct blobs, uncompressed.
   */
  unique_blob_bytes: number;
  /**
   * Bytes of the compressed packs on disk.
   */
  packed_bytes: number;
  /**
   * Bytes not stored again because identical bytes (a payload of any stream, or the raw text
   * of a diagnostic) were already stored: payload and raw diagnostic bytes minus
   * `unique_blob_bytes`.
   */
  dedup_saved_bytes: number;
  /**
   * The part of `dedup_saved_bytes` saved across input files (ranks): what storing each
   * input's distinct payloads separately would cost, minus `unique_blob_bytes`.
   */
  cross_input_saved_bytes: number;
  /**
   * Bytes of the whole bundle but its two manifests and the viewer: every file `files` lists
   * except `manifest.lite.json.zst` (index, stacks, tables, traces, packs, blob index,
   * schemas, diagnostics). `manifest.json` cannot count itself, the lite manifest holds this
   * count, and the viewer's files are listed apart (`viewer`).
   */
  bundle_bytes: number;
}
/**
 * Problems found while reading; details are in the diagnostics file.
 */
export interface DiagnosticsSummary {
  /**
   * Total number of diagnostics.
   */
  total: number;
  /**
   * Number of diagnostics of each kind.
   */
  by_kind: {
    [k: string]: number;
  };
  /**
   * Path of the diagnostics file (JSONL of `Diagnostic`).
   */
  path: string;
}
/**
 * The blob store: payloads content-addressed by blake3, stored in zstd packs.
 *
 * To read a blob with hash `H`: fetch the index shard named by `index_path` with `{prefix}`
 * replaced by the first `index_prefix_len` hex digits of `H` (`all` when that is 0), look up
 * `H` in it (zstd-compressed JSON) to get a `BlobLocation`, fetch `packs[location.pack].path`, zstd-decompress it, and take
 * `location.size` bytes from `location.offset`.
 */
export interface BlobStore {
  /**
   * Hash function of blob ids: `blake3-128`, the first 128 bits of the blake3 hash of the
   * uncompressed bytes, as 32 lowercase hex digits.
   */
  hash: string;
  /**
   * Compression of pack files: `zstd` (one frame per pack, with content size and checksum).
   */
  compression: string;
  /**
   * Number of leading hex digits of a hash that name its index shard (0 = one shard `all`).
   * Every shard exists, even when empty.
   */
  index_prefix_len: number;
  /**
   * Path template of the index shards, with `{prefix}` to be replaced.
   */
  index_path: string;
  /**
   * The packs, referenced by their position in this list.
   */
  packs: Pack[];
}
/**
 * One pack file: many blobs concatenated and compressed as a single zstd frame.
 */
export interface Pack {
  /**
   * Path of the pack, `blobs/packs/<blake3 of the compressed file, 32 hex>.zst`.
   */
  path: string;
  /**
   * Size of the pack file in bytes (compressed).
   */
  size: number;
  /**
   * Size of the pack once decompressed.
   */
  raw_size: number;
  /**
   * Number of blobs in the pack.
   */
  blobs: number;
}
/**
 * `manifest.json`: the entry point of a bundle. A viewer reads it first and learns from it what
 * else exists and where.
 */
export interface Manifest {
  /**
   * Always `"tlparse-bundle"`.
   */
  format: string;
  /**
   * The format version of this bundle, `"MAJOR.MINOR"` (e.g. `"1.0"`); informative: readers
   * decide by `min_reader_version`.
   */
  format_version: string;
  /**
   * The oldest reader version able to read this bundle: the major of `format_version`. A
   * reader refuses a bundle whose `min_reader_version` is above the major it implements, and
   * ignores fields it does not know.
   */
  min_reader_version: number;
  /**
   * The program that wrote the bundle.
   */
  generator: Generator;
  /**
   * Every log file that was read, in the order they were processed (rank order for rank logs).
   */
  inputs: Input[];
  /**
   * Files found in an input directory that were not read, grouped by reason (sorted by
   * reason). Only names that look like logs are listed, so a bundle shared publicly does not
   * reveal the other files of the directory.
   */
  skipped: Skipped[];
  /**
   * The streams of log entries: one per (input file, process, rank). Usually one per rank.
   */
  streams: Stream[];
  /**
   * What differs between the streams: present when there are two streams or more.
   */
  cross_rank: CrossRank | null;
  /**
   * Totals over all streams.
   */
  counts: Counts;
  /**
   * Summary of the problems found while reading the inputs.
   */
  diagnostics: DiagnosticsSummary;
  /**
   * Where payload blobs are stored and how to find one by hash.
   */
  blobs: BlobStore;
  /**
   * Every file of the bundle except `manifest.json` itself and the shipped viewer's files,
   * sorted by path.
   */
  files: FileEntry[];
  /**
   * The files of the viewer shipped in the bundle (`index.html` and files under `viewer/`),
   * sorted by path; null when the bundle ships none (built with `--no-viewer`). A bundle
   * holds no other file at those paths, and a server shows a viewer file only when its bytes
   * still have the size and hash listed here: the viewer runs as a page of the bundle's
   * origin, so a replaced one could run anything there.
   */
  viewer: ViewerFile[] | null;
}
/**
 * One log file that was read.
 */
export interface Input {
  /**
   * Path of the file relative to the trace given on the command line: its path below the
   * trace directory (`/`-separated), or its file name when the trace given was a file. No
   * absolute path or machine-specific prefix is recorded.
   */
  path: string;
  /**
   * Size of the file on disk in bytes (compressed size for `.gz` / `.zst` logs).
   */
  size: number;
  /**
   * blake3 of the file's bytes on disk, 64 lowercase hex digits.
   */
  blake3: string;
  /**
   * How the file was compressed on disk.
   */
  compression: InputCompression;
  /**
   * Rank parsed from a `dedicated_log_torch_trace_rank_N_*` file name, if the name has one.
   */
  rank_from_name?: number | null;
  /**
   * Number of lines in the (decompressed) file.
   */
  lines: number;
  /**
   * Ids of the streams whose entries came from this file.
   */
  streams: string[];
}
/**
 * A file of the bundle.
 */
export interface FileEntry {
  /**
   * Path relative to the bundle root, `/`-separated.
   */
  path: string;
  /**
   * Size in bytes.
   */
  size: number;
  /**
   * blake3 of the file's bytes, 64 lowercase hex digits.
   */
  blake3: string;
  /**
   * Path (relative to the bundle root) of the JSON Schema the file's content follows; for
   * JSONL files, the schema of one line. Null for binary files such as packs.
   */
  schema: string | null;
}
/**
 * A file of the shipped viewer.
 */
export interface ViewerFile {
  /**
   * Path relative to the bundle root, `/`-separated: `index.html` or `viewer/...`.
   */
  path: string;
  /**
   * Size in bytes.
   */
  size: number;
  /**
   * blake3 of the file's bytes, 64 lowercase hex digits.
   */
  blake3: string;
}
/**
 * `stacks/<stream>.json`: the stream's stacks, frames interned once.
 */
export interface StackTable {
  /**
   * Distinct frames; stacks refer to them by position.
   */
  frames: Frame[];
  /**
   * Distinct stacks, each a list of frame ids, outermost call first (as logged). Index rows
   * refer to stacks by position.
   */
  stacks: number[][];
}
/**
 * One frame of a logged Python stack.
 */
export interface Frame {
  /**
   * File name, resolved through the process's string table. Null when the log referenced a
   * string-table index it never defined (a diagnostic names the line).
   */
  file: string | null;
  /**
   * Line number in the file.
   */
  line: number;
  /**
   * Function name.
   */
  name: string;
  /**
   * The source line, when the log has it.
   */
  loc?: string | null;
}
/**
 * `tables/<stream>/cache_outcomes.json.zst`: the cache lookups of each compile id, a verdict per
 * cache and compile, and counts per cache over the stream. `rows` counts `compiles`.
 *
 * A lookup is an `artifact` named `*cache_hit*`, `*cache_miss*`, `*cache_bypass*` or
 * `*cache_disabled*` (`fx_graph_cache_miss`, `aotautograd_cache_hit`, `fx_graph_bundled_cache_hit`,
 * `precompile_cache_bypass`, ...); an `artifact` with another `*cache_*` name (older torch's
 * `aotautograd_cache_hash`) whose JSON payload has a `cache_state` of `hit`, `miss` or `bypass`;
 * or a `chromium_event` instant named `*_cache_disabled` (torch logs no artifact for some of
 * those) unless the same compile has a `disabled` artifact for that cache.
 */
export interface CacheOutcomes {
  /**
   * One row per compile id with a lookup or a non-zero cache counter in its
   * `compilation_metrics`, in order of first appearance in the stream; then, if any, a row with
   * a null `compile_id` for lookups outside any compile.
   */
  compiles: CompileCaches[];
  /**
   * One row per cache over the whole stream, by cache name.
   */
  summary: CacheSummary[];
}
/**
 * The cache lookups of one compile id.
 */
export interface CompileCaches {
  /**
   * The compile id as displayed (`[0/1]`); null for lookups outside any compile.
   */
  compile_id: string | null;
  /**
   * What each cache did for this compile, in order of its first lookup.
   */
  caches: CacheVerdict[];
  /**
   * Every lookup, in log order.
   */
  lookups: CacheLookup[];
  /**
   * Cache counters of the compile's `compilation_metrics`: numeric fields whose name contains
   * `cache` (`aotautograd_local_cache_hit_count`, `inductor_fx_local_cache_miss_count`,
   * `remote_cache_time_saved_s`, ...), except Dynamo's `cache_size` and
   * `accumulated_cache_size`; zero and null values are left out.
   */
  metrics: {
    [k: string]: number;
  };
}
/**
 * What one cache did for one compile.
 */
export interface CacheVerdict {
  /**
   * The cache: the lookup name up to and including `cache` (`fx_graph_cache`,
   * `aotautograd_cache`, `fx_graph_bundled_cache`, ...).
   */
  cache: string;
  /**
   * The outcome of every lookup, or `mixed` when they differ (e.g. the forward graph hit and
   * the backward graph missed).
   */
  outcome: CacheVerdictKind;
  /**
   * Hits.
   */
  hit: number;
  /**
   * Misses.
   */
  miss: number;
  /**
   * Bypasses (the graph could not be cached).
   */
  bypass: number;
  /**
   * Lookups skipped because the cache was disabled.
   */
  disabled: number;
}
/**
 * One cache lookup.
 */
export interface CacheLookup {
  /**
   * The cache (see `CacheVerdict::cache`).
   */
  cache: string;
  /**
   * The outcome.
   */
  outcome: CacheResult;
  /**
   * The artifact's or trace event's name as logged.
   */
  name: string;
  /**
   * Where it was read from.
   */
  source: CacheLookupSource;
  /**
   * `seq` of its entry in the stream's index.
   */
  seq: number;
  /**
   * Blob id of the payload (the artifact's JSON, or the trace event); null without a payload.
   */
  blob: string | null;
  /**
   * The cache key (`key`), when logged.
   */
  key: string | null;
  /**
   * `cache_status_detailed` (e.g. `full_miss`, `hit`), when logged.
   */
  status: string | null;
  /**
   * Why: `cache_bypass_reason` (or `reason`, `_reason`) of the payload; for a payload that is a
   * JSON string or not JSON, its first line.
   */
  reason: string | null;
  /**
   * Time the hit saved, in ms: `time_saved_ms`, or `time_saved_ns` / 1e6.
   */
  time_saved_ms: number | null;
  /**
   * Time the missed compile took, in ms (`time_taken_ns` / 1e6), when logged.
   */
  time_taken_ms: number | null;
  /**
   * `cache_status_guard_expr`: the guard under which a cached dynamic-shape entry applies.
   */
  guard_expr: string | null;
  /**
   * Number of the key's components (`components`: lines `[hash] name: value`, one per input
   * of the key: `gm`, `example_inputs[0]`, every `inductor_config[...]` entry, ...). They are
   * left in the blob (hundreds per FX graph lookup); diffing two lookups' blobs shows which
   * component changed.
   */
  components: number;
  /**
   * The payload's other top-level fields that are strings, numbers or booleans
   * (`cache_event_time`, `cache_bypass_hard_exception`, `forward_time_saved_ms`,
   * `triton_bundler_meta`, ...).
   */
  details: {
    [k: string]: unknown;
  };
}
/**
 * One cache over the whole stream.
 */
export interface CacheSummary {
  /**
   * The cache.
   */
  cache: string;
  /**
   * Hits.
   */
  hit: number;
  /**
   * Misses.
   */
  miss: number;
  /**
   * Bypasses.
   */
  bypass: number;
  /**
   * Disabled lookups.
   */
  disabled: number;
  /**
   * Rows of `compiles` with a lookup in this cache.
   */
  compiles: number;
  /**
   * Summed `time_saved_ms` of the hits (ms).
   */
  time_saved_ms: number;
}
/**
 * `tables/<stream>/collectives.json.zst`: for each compile id with an
 * `inductor_collective_schedule` artifact or a collective call in its `inductor_output_code`,
 * the schedule(s), the calls found in the code, their parity, and the unmatched calls; plus a
 * summary over the stream. `rows` counts `compiles`. Written only when the stream has a schedule
 * or a collective call.
 */
export interface Collectives {
  /**
   * Totals over the stream.
   */
  summary: CollectivesSummary;
  /**
   * One row per compile id with a schedule or a collective call, in order of first appearance
   * of the compile id in the stream; then, if any, a row with a null `compile_id` for schedules
   * or code logged outside any compile.
   */
  compiles: CompileCollectives[];
}
/**
 * Totals over the stream.
 */
export interface CollectivesSummary {
  /**
   * Rows with at least one `inductor_collective_schedule` artifact.
   */
  with_schedule: number;
  /**
   * Rows whose output code has at least one collective or `wait_tensor` call.
   */
  with_code_calls: number;
  /**
   * Rows whose `parity` is not null.
   */
  parity_checked: number;
  /**
   * Compile ids (as displayed) whose parity does not match, in row order.
   */
  parity_mismatches: string[];
  /**
   * Collective calls with no `wait_tensor` on their handle, over all rows.
   */
  unmatched_collectives: number;
  /**
   * `wait_tensor` calls on a handle no collective of the same output code produced, over all
   * rows.
   */
  unmatched_waits: number;
}
/**
 * The collectives of one compile id.
 */
export interface CompileCollectives {
  /**
   * The compile id as displayed (`[0/1]`); null for entries outside any compile.
   */
  compile_id: string | null;
  /**
   * Every `inductor_collective_schedule` artifact of the compile id, in log order (a compile
   * with a forward and a backward graph can log one per graph). Empty when none was logged:
   * torch logs a schedule only when it is non-empty, and only since mid-2025.
   */
  schedules: Schedule[];
  /**
   * Every `inductor_output_code` of the compile id, in log order, with the calls found in it
   * (output codes without any call are listed too, with no calls).
   */
  code: OutputCode[];
  /**
   * The schedules compared with the code, counting each op over all schedules and all output
   * codes of the compile id. Null when the compile id has no output code, or when it has no
   * schedule and the stream logged no schedule at all (a torch that does not log schedules).
   * When the stream has schedules, a compile id without one is compared as an empty schedule,
   * since torch logs only non-empty ones.
   */
  parity: Parity | null;
  /**
   * Collective calls (not `wait_tensor`) that no `wait_tensor` of the same output code waits
   * for, in log order then payload order.
   */
  unmatched: UnmatchedCall[];
  /**
   * `wait_tensor` calls whose argument is the handle of no earlier collective of the same
   * output code (e.g. a wait on a graph input produced by another graph), in log order then
   * payload order.
   */
  unmatched_waits: UnmatchedCall[];
}
/**
 * One `inductor_collective_schedule` artifact.
 */
export interface Schedule {
  /**
   * `seq` of the artifact in the stream's index.
   */
  seq: number;
  /**
   * Line of the artifact's header in its input file.
   */
  line: number;
  /**
   * Blob id of the payload.
   */
  blob: string;
  /**
   * The scheduler's collective kernels in scheduling order, wait kernels included: each
   * kernel's `python_kernel_name` as logged (`torch.ops._c10d_functional.all_reduce_.default`).
   * Null where torch logged null (a kernel without a Python name) or, never seen, a value that
   * is not a string.
   */
  ops: (string | null)[];
}
/**
 * One `inductor_output_code` entry and the collective calls in it.
 */
export interface OutputCode {
  /**
   * `seq` of the entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * Blob id of the payload (the generated Python wrapper).
   */
  blob: string;
  /**
   * Calls of functional collective ops in the code, in payload order: every
   * `torch.ops.<ns>.<op>.<overload>(` outside comments and string literals where `<ns>` contains
   * `c10d_functional` (`_c10d_functional`, older `c10d_functional`). `wait_tensor` calls are
   * included.
   */
  calls: CollectiveCall[];
}
/**
 * One collective (or `wait_tensor`) call in an output code.
 */
export interface CollectiveCall {
  /**
   * The op as the schedule names it: `torch.ops.<ns>.<op>.<overload>`, whitespace removed
   * (`torch.ops._c10d_functional.all_gather_into_tensor.default`).
   */
  op: string;
  /**
   * For a collective, the name its result is waited on by: the left-hand side of
   * `X = torch.ops...(...)`, else (in-place ops such as `all_reduce_`) the first argument as
   * written (`buf4`; a list such as `[buf0, buf1]` for coalesced in-place ops). For a
   * `wait_tensor`, its first argument: the handle it waits on. Null when there is neither.
   */
  handle: string | null;
  /**
   * Line of the call in the payload, 1-based.
   */
  line: number;
}
/**
 * The schedules compared with the calls in the code.
 */
export interface Parity {
  /**
   * Every op kind has the same count in the schedules as in the code (null schedule elements
   * are not compared; see `unnamed_in_schedule`).
   */
  matches: boolean;
  /**
   * The code's calls, in payload order, name for name the same sequence as the schedules'
   * named ops (a stronger check than `matches`: the scheduler's order is the code's order).
   */
  same_sequence: boolean;
  /**
   * Per op kind, in order of first appearance in the schedules then in the code.
   */
  ops: OpCount[];
  /**
   * Op kinds in the schedules and absent from the code.
   */
  only_in_schedule: string[];
  /**
   * Op kinds in the code and absent from the schedules.
   */
  only_in_code: string[];
  /**
   * Null elements of the schedules, which cannot be compared.
   */
  unnamed_in_schedule: number;
  /**
   * tlparse's `offset`, for comparison: the sum over op kinds of |schedule count − code count|,
   * leaving out `wait_tensor` and merging kinds as tlparse's `normalize_op` does (`all_reduce`,
   * `reduce_scatter`, `all_gather`, `broadcast`, `all_to_all`, else `reduce`, else the name).
   */
  tlparse_offset: number;
  /**
   * tlparse's `missing_waits`, for comparison: collective calls in the code minus
   * `wait_tensor` calls, 0 if negative (so surplus waits hide missing ones; `unmatched` does
   * not).
   */
  tlparse_missing_waits: number;
}
/**
 * A call that found no partner: a collective never waited for, or a wait for no collective.
 */
export interface UnmatchedCall {
  /**
   * The op (`torch.ops._c10d_functional.all_reduce_.default`).
   */
  op: string;
  /**
   * The call's handle (see `CollectiveCall::handle`).
   */
  handle: string | null;
  /**
   * Line of the call in the payload, 1-based.
   */
  line: number;
  /**
   * Blob id of the output code the call is in.
   */
  blob: string;
}
/**
 * `tables/<stream>/compilation_metrics.json.zst`: the metrics entries of the stream:
 * `compilation_metrics`, `bwd_compilation_metrics`, `aot_autograd_backward_compilation_metrics`
 * and the `*_runtime` variants torch logs for runtime (e.g. autotuning) work. `rows` counts
 * `metrics`.
 */
export interface CompilationMetrics {
  /**
   * Metrics entries in log order.
   */
  metrics: MetricsRow[];
  /**
   * Distinct large field values (over 1 KiB of JSON, such as `dynamo_config`), stored once:
   * in `metrics`, such a field holds `{"shared": i}`, meaning `shared[i]`.
   */
  shared: unknown[];
}
/**
 * One metrics entry.
 */
export interface MetricsRow {
  /**
   * The compile id as displayed; null for entries logged outside a compile.
   */
  compile_id: string | null;
  /**
   * The entry's kind, e.g. `compilation_metrics` or `bwd_compilation_metrics_runtime`.
   */
  kind: string;
  /**
   * True for the `*_runtime` kinds.
   */
  runtime: boolean;
  /**
   * `seq` of the entry.
   */
  seq: number;
  /**
   * Line of the entry in its input file.
   */
  line: number;
  /**
   * The compile's phase times in seconds, from the fields torch logs (`entire_frame_compile_time_s`,
   * `backend_compile_time_s`, `inductor_compile_time_s`, `code_gen_time_s`,
   * `dynamo_time_before_restart_s`, `elapsed_time`, ...): every field ending in `_time_s` or
   * named `elapsed_time` whose value is a number.
   */
  times_s: {
    [k: string]: number;
  };
  /**
   * The metrics object as logged (fields vary with the torch version), except that a field
   * whose value is over 1 KiB of JSON holds `{"shared": i}`, an index into the table's
   * `shared` list.
   */
  metrics: {
    [k: string]: unknown;
  };
}
/**
 * `tables/<stream>/compile_directory.json.zst`: every compile id of the stream in order of first
 * appearance, their artifacts, and the artifacts logged outside any compile. `rows` counts
 * `compiles`.
 */
export interface CompileDirectory {
  /**
   * One row per compile id, in order of first appearance in the stream.
   */
  compiles: CompileEntry[];
  /**
   * Every compile's artifacts, compile by compile in `compiles` order, each compile's in log
   * order: a compile's are `artifacts[first_artifact .. first_artifact + artifact_count]` (of
   * the table joined from its parts). A list of their own, not one in each row, because one
   * compile can log a million.
   */
  artifacts: CompileArtifact[];
  /**
   * Artifacts logged with no compile id (tlparse files them under `-_-_-_-`).
   */
  unattributed: ArtifactRef[];
}
/**
 * One compile id.
 */
export interface CompileEntry {
  /**
   * The compile id as displayed: `[0/1]`, `[0/1_2]`, `[!0/1/2]`.
   */
  compile_id: string;
  /**
   * Its parts.
   */
  cid: CompileId;
  /**
   * tlparse's directory name for the compile id, `{compiled_autograd_id}_{frame_id}_{frame_compile_id}_{attempt}`
   * with `-` for missing parts (e.g. `-_0_0_0`).
   */
  dir: string;
  /**
   * The compile's status.
   */
  status: CompileStatus;
  /**
   * For a `restarted` attempt, the compile id of the attempt that replaced it.
   */
  restarted_as: string | null;
  /**
   * For a `compiled_autograd_capture`, the compile ids that compiled its graph: every compile
   * id of the stream with the same `compiled_autograd_id` and a frame (`[!0/2/0]`, and more
   * after graph breaks, restarts or recompiles of the captured graph), in order of first
   * appearance. Present only when not empty.
   */
  graph_compiles?: string[];
  /**
   * `co_name` of the compiled frame, from the compile id's own `compilation_metrics`: null
   * when not logged there, as on every `restarted` attempt (torch logs metrics on the last
   * attempt only). Name a compile's function by `code.name`, set on restarted attempts too.
   */
  co_name: string | null;
  /**
   * `co_filename` of the compiled frame, from its `compilation_metrics`; null as `co_name` is
   * (prefer `code.filename`).
   */
  co_filename: string | null;
  /**
   * `co_firstlineno` of the compiled frame, from its `compilation_metrics`; null as `co_name`
   * is (prefer `code.line`).
   */
  co_firstlineno: number | null;
  /**
   * The code object compiled, the field to name a compile's function by (`code.name`): from
   * `compilation_metrics` (`co_*`), else from the innermost frame of the `dynamo_start` stack
   * (torch logs the compiled function's first line there), so restarted attempts have it;
   * null when neither was logged (e.g. a compiled-autograd capture). Cross-rank tables align
   * compiles by it.
   */
  code: CompiledCode | null;
  /**
   * Id, in the stream's stack table, of the `dynamo_start` stack (the user code that
   * triggered the compile).
   */
  stack: number | null;
  /**
   * `seq` of the compile's first entry in the stream's index.
   */
  first_seq: number;
  /**
   * `seq` of the compile's last entry.
   */
  last_seq: number;
  /**
   * When the compile id's first entry was logged: its glog time as written,
   * `MMDD HH:MM:SS.ffffff`, the logging machine's local time (no year, no time zone). Compare
   * within one stream only; for an absolute time use `start_time`.
   */
  start_ts: string;
  /**
   * When the compile id's last entry was logged, in `start_ts`'s form: it can be the lazy
   * backward's, long after the frame compile (`end_ts - start_ts` is no compile time).
   */
  end_ts: string;
  /**
   * When the frame compile started (its first attempt), in seconds since the Unix epoch:
   * `start_time` of the compile id's `compilation_metrics`; null when not logged there (older
   * logs, `restarted` attempts).
   */
  start_time: number | null;
  /**
   * Forward: wall time of the frame compile in seconds, `compilation_metrics`'
   * `entire_frame_compile_time_s` (or `dynamo_cumulative_compile_time_us`), else the duration
   * of the `entire_frame_compile` trace phases that ended under this compile id:
   * `compile_time`'s `forward_us`, in seconds.
   */
  duration_s: number | null;
  /**
   * Backward: the lazily compiled backward, in seconds (`compile_time`'s `backward_us`): the
   * compile's outermost `entire_backward_compile` trace phases, at the first backward call.
   * Null when there is none, or the stream logged no trace events.
   */
  backward_s: number | null;
  /**
   * The backward graphs compiled inside the frame compile, not lazily, in seconds
   * (`compile_time`'s `backward_in_forward_us`): part of `duration_s`, not added to `total_s`.
   * Absent when there is none.
   */
  backward_in_forward_s?: number | null;
  /**
   * The compile's time in seconds: `duration_s` + `backward_s` (`compile_time`'s `total_us`).
   * Null when both are.
   */
  total_s: number | null;
  /**
   * The compile's other outermost trace phases, in seconds, not in `total_s`
   * (`compile_time`'s `other_us`: Triton autotuning and CUDA graph recording at the first
   * run, compiled autograd's capture). Null when there is none.
   */
  other_s: number | null;
  /**
   * `fail_type` from `compilation_metrics`, for failed compiles.
   */
  fail_type: string | null;
  /**
   * `fail_reason` from `compilation_metrics`, for failed compiles.
   */
  fail_reason: string | null;
  /**
   * `restart_reasons` from `compilation_metrics` (why the analysis restarted, often a graph
   * break).
   */
  restart_reasons: string[];
  /**
   * Graph-break reasons logged for the compile (`dynamo_graph_break_reason` artifacts), first
   * line of each.
   */
  graph_breaks: string[];
  /**
   * Cache outcomes logged for the compile, in log order.
   */
  cache: CacheOutcome[];
  /**
   * Where the compile's artifacts start in the table's `artifacts`: every entry of the compile
   * that carries a payload (except `chromium_event`) or a link, in log order, are the
   * `artifact_count` from there.
   */
  first_artifact: number;
  /**
   * How many artifacts the compile has.
   */
  artifact_count: number;
  /**
   * The compile's alignment key as a canonical string:
   * compiles of two streams or two runs that `compile_alignment` would pair (same code,
   * ordinal for that code on the stream, attempt; see the cross-rank `compile_alignment`
   * table) have equal strings, and no others do. Readers pair compiles by equality of this
   * string alone; its content is the JSON of `compile_alignment`'s `key`, but only equality
   * is meant to be used.
   */
  align_key?: string | null;
}
/**
 * The code object a compile compiled.
 */
export interface CompiledCode {
  /**
   * The file (`co_filename`).
   */
  filename: string;
  /**
   * The first line of the code (`co_firstlineno`).
   */
  line: number;
  /**
   * The code's name (`co_name`): the function, `<lambda>`, `<module>`, ...
   */
  name: string;
  /**
   * Where it was read from.
   */
  from: CodeSource;
}
/**
 * A cache hit, miss or bypass, from an artifact named `*cache_hit*`, `*cache_miss*` or
 * `*cache_bypass*`.
 */
export interface CacheOutcome {
  /**
   * The cache, from the artifact name: `fx_graph_cache`, `aotautograd_cache`, ...
   */
  cache: string;
  /**
   * `hit`, `miss` or `bypass`.
   */
  outcome: string;
  /**
   * The artifact's name as logged.
   */
  name: string;
  /**
   * `seq` of the artifact's entry.
   */
  seq: number;
}
/**
 * An artifact of a compile: the compile's id and the artifact.
 */
export interface CompileArtifact {
  /**
   * The compile's id in display form, as in its row.
   */
  compile_id: string;
  /**
   * `seq` of the entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * The entry's kind (`artifact`, `dynamo_output_graph`, `inductor_output_code`, ...).
   */
  kind: string;
  /**
   * What to call it, by the one rule of [`crate::naming::artifact_names`]: the logged name of
   * named kinds (`artifact`, `graph_dump`, `link`, `dump_file`), `optimize_ddp_split_child_`
   * and the logged name for DDP split children, the kind otherwise (output code is
   * `inductor_output_code`). The same for the same artifact of every compile and rank. Not
   * unique within a compile: a training compile logs `inductor_output_code` for its forward
   * and its backward graph (see `graph`); pick an artifact by name and occurrence (the Nth of
   * that name, in log order), never by name alone.
   */
  name: string;
  /**
   * tlparse's name for its output file (without its `_<N>` counter and extension) when it
   * differs from `name`: `inductor_output_code_<file stem>`, `eval_with_key_<N>`.
   */
  tlparse_name?: string | null;
  /**
   * Blob id of the payload; null for links and payload-less entries.
   */
  blob: string | null;
  /**
   * Payload size in bytes (0 without a payload).
   */
  size: number;
  /**
   * Payload lines (0 without a payload).
   */
  lines: number;
  /**
   * Detected payload format; null without a payload.
   */
  format: PayloadFormat | null;
  /**
   * The URL of a `link` entry.
   */
  url?: string | null;
  /**
   * True (and only then present) for an entry logged without a payload that is not a link:
   * its envelope had no `has_payload` (torch logs some artifacts so, e.g. the
   * `inductor_provenance_tracking_*` ones on an FX graph cache hit). `blob` is then null and
   * `size` and `lines` 0; tlparse shows such an artifact as an empty file.
   */
  no_payload?: boolean;
  /**
   * Which AOT graph it was produced for, absent when not known or not
   * one graph's: `aot_forward_graph`, `aot_backward_graph` and `aot_inference_graph` by their
   * names; output code by its `# AOT ID: ['<n>_<graph>']` line; any other artifact logged
   * inside Inductor's compile of one graph (the `fw_compiler_base` trace span: forward, or
   * inference when the compile's AOT graph is `aot_inference_graph`; `bw_compiler`: backward,
   * often after the compile's `compilation_metrics`) gets that graph. An AOTAutograd cache hit
   * loads its graphs one after another inside one `AOTAutogradCache.inductor_load` span, each
   * load ending with its `fx_graph_cache_hit`: every entry of a load gets the graph its output
   * code names. `aot_joint_graph` (both graphs) and artifacts of a log without those spans
   * (but output code) have none.
   */
  graph?: GraphRole | null;
}
/**
 * A logged artifact, as tables refer to it: an entry of a named kind (`artifact`, `graph_dump`,
 * `link`, `dump_file`, `optimize_ddp_split_child`), with or without a payload, or any other entry
 * with a payload.
 */
export interface ArtifactRef {
  /**
   * `seq` of the entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * The entry's kind (`artifact`, `dynamo_output_graph`, `inductor_output_code`, ...).
   */
  kind: string;
  /**
   * What to call it, by the one rule of [`crate::naming::artifact_names`]: the logged name of
   * named kinds (`artifact`, `graph_dump`, `link`, `dump_file`), `optimize_ddp_split_child_`
   * and the logged name for DDP split children, the kind otherwise (output code is
   * `inductor_output_code`). The same for the same artifact of every compile and rank. Not
   * unique within a compile: a training compile logs `inductor_output_code` for its forward
   * and its backward graph (see `graph`); pick an artifact by name and occurrence (the Nth of
   * that name, in log order), never by name alone.
   */
  name: string;
  /**
   * tlparse's name for its output file (without its `_<N>` counter and extension) when it
   * differs from `name`: `inductor_output_code_<file stem>`, `eval_with_key_<N>`.
   */
  tlparse_name?: string | null;
  /**
   * Blob id of the payload; null for links and payload-less entries.
   */
  blob: string | null;
  /**
   * Payload size in bytes (0 without a payload).
   */
  size: number;
  /**
   * Payload lines (0 without a payload).
   */
  lines: number;
  /**
   * Detected payload format; null without a payload.
   */
  format: PayloadFormat | null;
  /**
   * The URL of a `link` entry.
   */
  url?: string | null;
  /**
   * True (and only then present) for an entry logged without a payload that is not a link:
   * its envelope had no `has_payload` (torch logs some artifacts so, e.g. the
   * `inductor_provenance_tracking_*` ones on an FX graph cache hit). `blob` is then null and
   * `size` and `lines` 0; tlparse shows such an artifact as an empty file.
   */
  no_payload?: boolean;
  /**
   * Which AOT graph it was produced for, absent when not known or not
   * one graph's: `aot_forward_graph`, `aot_backward_graph` and `aot_inference_graph` by their
   * names; output code by its `# AOT ID: ['<n>_<graph>']` line; any other artifact logged
   * inside Inductor's compile of one graph (the `fw_compiler_base` trace span: forward, or
   * inference when the compile's AOT graph is `aot_inference_graph`; `bw_compiler`: backward,
   * often after the compile's `compilation_metrics`) gets that graph. An AOTAutograd cache hit
   * loads its graphs one after another inside one `AOTAutogradCache.inductor_load` span, each
   * load ending with its `fx_graph_cache_hit`: every entry of a load gets the graph its output
   * code names. `aot_joint_graph` (both graphs) and artifacts of a log without those spans
   * (but output code) have none.
   */
  graph?: GraphRole | null;
}
/**
 * `tables/<stream>/compile_summary.json.zst`: how many compiles the stream has, how long they
 * took and which took longest, made from the same rows as `compile_directory`, so that an
 * overview need not fetch the directory (megabytes for a long log). Written whenever
 * `compile_directory` has a compile. `rows` counts `slowest_compiles`.
 */
export interface CompileSummary {
  /**
   * Compile ids of the stream: the rows of `compile_directory`'s `compiles`.
   */
  compiles: number;
  /**
   * Compile ids by `status` (as `compile_directory` gives it); statuses no compile has are
   * left out.
   */
  by_status: {
    [k: string]: number;
  };
  /**
   * The stream's compile time in seconds: the sum of every compile's `total_s` (forward plus
   * backward, `compile_time`'s `total_us`; compiles without one count 0).
   */
  total_s: number;
  /**
   * The sum of the compiles' forwards (`compile_time`'s `forward_us`), in seconds.
   */
  forward_s: number;
  /**
   * The sum of the compiles' lazily compiled backwards (`compile_time`'s `backward_us`), in
   * seconds. A backward compiled inside the frame compile is in `forward_s` (see
   * `backward_in_forward_s`), so this is 0 when every backward was.
   */
  backward_s: number;
  /**
   * The sum of the compiles' backwards compiled inside their frame compile
   * (`compile_directory`'s `backward_in_forward_s`), in seconds: part of `forward_s`, not added
   * to `total_s`. Absent when no compile has one.
   */
  backward_in_forward_s?: number | null;
  /**
   * Timed compiles: compile ids with a `total_s` above 0, the ones the time was spent in (the
   * Compile time page's "compiles timed", `compile_time_imbalance`'s `compiles`).
   */
  timed: number;
  /**
   * At most the 10 compiles with the longest `total_s` above 0, longest first (ties in
   * `compile_directory` order).
   */
  slowest_compiles: SlowCompile[];
}
/**
 * One of the slowest compiles.
 */
export interface SlowCompile {
  /**
   * The compile id as displayed (`[0/1]`): its `compile_directory` row.
   */
  compile_id: string;
  /**
   * Its status, as in `compile_directory`.
   */
  status: CompileStatus;
  /**
   * Its time in seconds (`compile_directory`'s `total_s`).
   */
  total_s: number;
  /**
   * Its forward in seconds; null when it has none.
   */
  forward_s: number | null;
  /**
   * Its lazily compiled backward in seconds; null when it has none.
   */
  backward_s: number | null;
  /**
   * Its backward compiled inside the frame compile, in seconds (part of `forward_s`); absent
   * when it has none.
   */
  backward_in_forward_s?: number | null;
  /**
   * The function compiled (`compile_directory`'s `code.name`), when known.
   */
  function: string | null;
  /**
   * Where it is defined: `file:line` of `compile_directory`'s `code`, when known.
   */
  location: string | null;
}
/**
 * `tables/<stream>/compile_time.json.zst`: the stream's `chromium_event` trace events paired into
 * timed phases and summed per compile id, keeping their nesting. Times are microseconds on the
 * trace's clock (the events' `ts`). The events themselves are in `tables/<stream>/chrome_trace.json.gz`.
 * `rows` counts `compiles`.
 */
export interface CompileTime {
  /**
   * One row per compile id that has timed events, in order of first appearance among the
   * trace events; a row with a null `compile_id` holds the events outside any compile.
   */
  compiles: CompileTiming[];
  /**
   * Every phase name over the whole stream, by `total_us` descending (ties by name).
   */
  phases: PhaseTotal[];
  /**
   * Wall time in phases over the whole stream: the summed durations of the outermost phases
   * (those that were the only phase open on their thread when they ended).
   */
  total_us: number;
  /**
   * Begin events never ended and end events with no open begin of the same name, in log order.
   */
  unmatched: UnmatchedEvent[];
  /**
   * Phases that outlived the phase they began in instead of nesting in it, by (name, outlived
   * phase's name), in order of first occurrence. Routine: torch logs the events of every thread
   * with the same `pid` and `tid`, so a compile worker's `compile_file` and the main thread's
   * `async_compile.wait` interleave on one stack. They are paired by name and timed as logged.
   */
  overlaps: Overlap[];
  /**
   * Number of `chromium_event` entries read as trace events.
   */
  events: number;
  /**
   * Trace events whose phase type (`ph`) is none of `B`, `E`, `X`, `i`, `I`, `n`, counted by
   * `ph` (they are in the Chrome trace but not timed here).
   */
  other_events: PhCount[];
}
/**
 * The timed phases of one compile id.
 */
export interface CompileTiming {
  /**
   * The compile id as displayed (`[0/1]`, as in `compile_directory`); null for events outside
   * any compile.
   */
  compile_id: string | null;
  /**
   * `ts` of the compile's first event (µs, trace clock); phases' `offset_us` count from it.
   */
  start_us: number;
  /**
   * Wall-clock span: from `start_us` to the end of the compile's last phase or instant (µs).
   * Not the compile's time (`total_us`): it also holds the gaps between phases and its `other_us`
   * phases, and leaves out a frame compile counted here from another attempt.
   */
  span_us: number;
  /**
   * Forward: the frame compile (µs): `compilation_metrics`' `entire_frame_compile_time_s` (or
   * `dynamo_cumulative_compile_time_us`) when the compile logged it, else the duration of its
   * `entire_frame_compile` phases. A restarted frame compile counts in the attempt that
   * completed it, under whose id the phase ended and the metrics were logged (see
   * `counted_in`). Null when the compile has none. Equals `compile_directory`'s `duration_s`.
   */
  forward_us: number | null;
  /**
   * Backward: the compile's outermost `entire_backward_compile` phases (µs). AOTAutograd
   * compiles the backward graph lazily, at the first backward call, after the frame compile;
   * its events carry the compile's id. Null when there is none.
   */
  backward_us: number | null;
  /**
   * The backward graphs AOTAutograd compiled inside the frame compile, not lazily (µs): the
   * outermost `compile_fx.<locals>.bw_compiler` phases within `entire_frame_compile`. Part of
   * `forward_us`, not added to `total_us`. Absent when there is none.
   */
  backward_in_forward_us?: number | null;
  /**
   * The compile's time (µs): `forward_us` + `backward_us`, as torch's own `total_wall_time`
   * (0 when both are null). Equals `compile_directory`'s `total_s`.
   */
  total_us: number;
  /**
   * The compile's other outermost phases (µs), not in `total_us`: those neither around its
   * frame compile (`dynamo`) nor a backward compile. At the first run, Triton autotuning and
   * CUDA graph recording (torch counts them as runtime: `runtime_triton_autotune_time_us`,
   * `runtime_cudagraphify_time_us`); compiled autograd's capture (`compiled_autograd`, under an
   * id like `[!0/-/-]`); in the row with a null `compile_id`, work outside `torch.compile` (AOT
   * Inductor's `compile_fx_aot`, export's `fullgraph_capture`). Null when there is none. A phase that began inside another compile's phase counts in that one's
   * time: different compiles' `total_us` and `other_us` can be added up (a frame compile
   * nested in another's, rare, counts in both, as in their metrics).
   */
  other_us: number | null;
  /**
   * The compile id whose `forward_us` counts this compile's `entire_frame_compile`, when it
   * ended under another id (a restarted attempt `[0/0]`, completed as `[0/0_1]`); else null.
   */
  counted_in: string | null;
  /**
   * The compile's phases, one per distinct (enclosing phase, name), in order of first begin.
   */
  phases: Phase[];
  /**
   * Instant events (`ph` `i`, `I`, `n`: cache hits and misses, ...) by name, in order of first
   * appearance.
   */
  instants: InstantCount[];
}
/**
 * A phase of a compile: every begin/end pair (or complete `X` event) with this name under the
 * same enclosing phase, summed.
 */
export interface Phase {
  /**
   * The trace event's `name` (`dynamo`, `entire_frame_compile`, `backend_compile`,
   * `inductor_compile`, ...: whatever the log has).
   */
  name: string;
  /**
   * Index in this compile's `phases` of the enclosing phase; null when the phase began with no
   * phase open, or inside a phase of another compile (see `outer`).
   */
  parent: number | null;
  /**
   * The enclosing phase when it belongs to another compile (a restarted attempt's phases sit
   * inside the first attempt's `entire_frame_compile`); null otherwise. Following `parent` and
   * `outer` gives every phase that was open around this one.
   */
  outer: OuterPhase | null;
  /**
   * Completed occurrences.
   */
  count: number;
  /**
   * Occurrences that began and never ended (also listed in `unmatched`).
   */
  unfinished: number;
  /**
   * Summed duration of the completed occurrences (µs).
   */
  total_us: number;
  /**
   * Time of the completed occurrences when they were the innermost open phase of their thread
   * (not inside a nested phase of any compile), minus complete (`X`) events directly inside
   * (µs). Never more than `total_us`.
   */
  self_us: number;
  /**
   * Start of the first occurrence, relative to the compile's `start_us` (µs).
   */
  offset_us: number;
  /**
   * `seq` of the first occurrence's begin entry in the stream's index.
   */
  first_seq: number;
}
/**
 * A phase of another compile, as the enclosing phase of a phase.
 */
export interface OuterPhase {
  /**
   * That compile's id as displayed (`[0/0]`); null for phases logged outside any compile.
   */
  compile_id: string | null;
  /**
   * Index of the phase in that compile's `phases`.
   */
  phase: number;
}
/**
 * An instant event name and how often it occurred.
 */
export interface InstantCount {
  /**
   * The event's `name` (e.g. `fx_graph_cache_miss`).
   */
  name: string;
  /**
   * Occurrences.
   */
  count: number;
  /**
   * `seq` of the first occurrence's entry.
   */
  first_seq: number;
}
/**
 * One phase name over the whole stream.
 */
export interface PhaseTotal {
  /**
   * The phase name.
   */
  name: string;
  /**
   * Completed occurrences.
   */
  count: number;
  /**
   * Time with an occurrence of this name open (µs), over its completed occurrences: an
   * occurrence nested in another of the same name is not added again.
   */
  total_us: number;
  /**
   * Summed self time of the completed occurrences (µs), as in `Phase`. Never more than
   * `total_us`.
   */
  self_us: number;
  /**
   * Number of rows of `compiles` that have the phase.
   */
  compiles: number;
}
/**
 * A begin or end event that could not be paired.
 */
export interface UnmatchedEvent {
  /**
   * Which side is missing its partner.
   */
  side: UnmatchedSide;
  /**
   * Why it is unpaired.
   */
  cause: UnmatchedCause;
  /**
   * The event's `name`.
   */
  name: string;
  /**
   * The compile id it was attributed to, if any.
   */
  compile_id: string | null;
  /**
   * `seq` of its entry.
   */
  seq: number;
  /**
   * Header line of its entry in the input file.
   */
  line: number;
  /**
   * The event's `ts` (µs).
   */
  ts_us: number;
}
/**
 * Phases of one name that outlived an enclosing phase of another name (see
 * `CompileTime::overlaps`).
 */
export interface Overlap {
  /**
   * The phase that began inside `outlived` and ended after it.
   */
  name: string;
  /**
   * The enclosing phase's name.
   */
  outlived: string;
  /**
   * Occurrences.
   */
  count: number;
  /**
   * `seq` of the first occurrence's begin entry.
   */
  first_seq: number;
  /**
   * Header line of that entry in the input file.
   */
  first_line: number;
}
/**
 * A count of trace events of one `ph`.
 */
export interface PhCount {
  /**
   * The event's `ph` (null when absent).
   */
  ph: string | null;
  /**
   * Events.
   */
  count: number;
}
/**
 * `tables/<stream>/export_report.json.zst`: the export issues of the stream as tlparse `-e`
 * reports them, with the expression nodes their provenance refers to and the exported
 * programs. Written for streams with any export-trace entry (`exported_program`, `export`,
 * `guard_added`, `propagate_real_tensors_provenance`, `missing_fake_kernel`,
 * `mismatched_fake_kernel`, `expression_created`). `rows` counts `failures`; none means
 * tlparse's "no issues".
 */
export interface ExportReport {
  /**
   * The issues, in log order.
   */
  failures: ExportFailure[];
  /**
   * The expression nodes referred to by the failures' provenance, in order of first
   * reference.
   */
  nodes: ProvenanceNode[];
  /**
   * Every `exported_program` artifact, in log order (tlparse links the first).
   */
  exported_programs: ArtifactRef[];
  /**
   * `guard_added` entries that are not failures because their `prefix` is not `eval`.
   */
  skipped_guards: number;
}
/**
 * One export issue.
 */
export interface ExportFailure {
  /**
   * The compile id as displayed; null outside a compile (older export logs).
   */
  compile_id: string | null;
  /**
   * `seq` of the entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * The kind of issue.
   */
  failure_type: ExportFailureType;
  /**
   * tlparse's name for the kind, e.g. `Guard Evaluated`.
   */
  title: string;
  /**
   * tlparse's explanation as plain text (code in backquotes), e.g. ``When exporting, the
   * following guard was evaluated `Eq(s77, 6)`. This might've resulted in a constraint
   * violation error.``
   */
  summary: string;
  /**
   * The guard expression (guards and data-dependent errors).
   */
  expr: string | null;
  /**
   * The value a data-dependent expression was specialized to (`result`).
   */
  result: string | null;
  /**
   * The operator (fake-kernel issues), e.g. `mylib.foo.default`.
   */
  op: string | null;
  /**
   * Why the fake kernel mismatched (`mismatched_fake_kernel`).
   */
  reason: string | null;
  /**
   * `expr_node_id`: the node the provenance starts from.
   */
  expr_node_id: number | null;
  /**
   * Id, in the stream's stack table, of the user stack; null when not logged.
   */
  user_stack: number | null;
  /**
   * Id, in the stream's stack table, of the framework stack; null when not logged.
   */
  stack: number | null;
  /**
   * The innermost frame of the user stack whose file is user code (not under
   * `site-packages`, `dist-packages` or a `torch` directory, nor the Python standard
   * library), else its innermost frame; null when the user stack is missing or empty.
   */
  user_frame: Frame | null;
  /**
   * `symbol_to_sources`: symbol → source expression, as logged.
   */
  symbol_to_sources: {
    [k: string]: unknown;
  };
  /**
   * `frame_locals`, when logged.
   */
  frame_locals: FrameLocals | null;
  /**
   * How the expression was built: its node, then each argument's node, depth first, as
   * tlparse's provenance tree (each node shown once). Built from the `expression_created`
   * and `create_unbacked_symbol` entries logged before the issue. Empty without
   * `expr_node_id`.
   */
  provenance: ProvenanceStep[];
}
/**
 * The user frame's locals at a guard (`frame_locals` of `guard_added` and
 * `propagate_real_tensors_provenance`).
 */
export interface FrameLocals {
  /**
   * The user source line, e.g. `return x.reshape(2, 3) * 2`.
   */
  loc: string | null;
  /**
   * Local name → rendered value(s), as logged (a string, or a list of strings in newer
   * logs), e.g. `"Tensor(shape: torch.Size([s77]), stride: (1,), storage_offset: 0)"`.
   */
  locals: {
    [k: string]: unknown;
  };
  /**
   * Symbol → source expression, as logged, e.g. `s77` → `L['x'].size()[0]`.
   */
  symbols: {
    [k: string]: unknown;
  };
}
/**
 * One line of a provenance tree.
 */
export interface ProvenanceStep {
  /**
   * Depth in the tree: 0 for the expression itself, 1 for its arguments, ...
   */
  depth: number;
  /**
   * The node's id (`result_id` / `node_id` as logged).
   */
  id: number;
  /**
   * Index of the node in `nodes`; null when no entry created that id before the issue
   * (e.g. a backed symbol such as `s0`). tlparse leaves such nodes out.
   */
  node: number | null;
}
/**
 * A node of a provenance tree: a symbolic expression and how it was computed.
 */
export interface ProvenanceNode {
  /**
   * The node id (`result_id` or `node_id`).
   */
  id: number;
  /**
   * How it was logged.
   */
  kind: ProvenanceNodeKind;
  /**
   * The compile id as displayed; null outside a compile.
   */
  compile_id: string | null;
  /**
   * `seq` of the entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * The expression (`result`), or the symbol of an unbacked symbol, e.g. `-u0`.
   */
  result: string | null;
  /**
   * The operation, e.g. `int_floordiv`; null for unbacked symbols.
   */
  method: string | null;
  /**
   * The operation's arguments as text, e.g. `["-u0", "3"]`.
   */
  arguments: string[];
  /**
   * Node ids of the symbolic arguments (constants have none).
   */
  argument_ids: number[];
  /**
   * Id, in the stream's stack table, of the user stack; null when not logged.
   */
  user_stack: number | null;
  /**
   * Id, in the stream's stack table, of the framework stack; null when not logged.
   */
  stack: number | null;
  /**
   * The innermost frame of the user stack whose file is user code (not under
   * `site-packages`, `dist-packages` or a `torch` directory, nor the Python standard
   * library), else its innermost frame; null when the user stack is missing or empty.
   */
  user_frame: Frame | null;
}
/**
 * `tables/<stream>/failures.json.zst`: tlparse's "Failures and Restarts" page, plus failures of
 * backward compiles. `rows` counts `failures`.
 */
export interface Failures {
  /**
   * Failures and restarts in log order.
   */
  failures: Failure[];
  /**
   * Number of `restart` rows.
   */
  restarts: number;
  /**
   * Number of `failure` rows.
   */
  failed: number;
}
/**
 * One failure or restart.
 */
export interface Failure {
  /**
   * The compile id as displayed.
   */
  compile_id: string;
  /**
   * Restart or failure.
   */
  kind: FailureKind;
  /**
   * Which metrics entry reported it: `compilation_metrics`, `bwd_compilation_metrics`,
   * `aot_autograd_backward_compilation_metrics` (or a `_runtime` variant).
   */
  source: string;
  /**
   * `fail_type` (exception class) for failures; `RestartAnalysis` for restarts.
   */
  failure_type: string;
  /**
   * The restart reason, or `fail_reason`; null when a failure logged no reason (tlparse aborts
   * the whole run on that).
   */
  reason: string | null;
  /**
   * Where in the user's code it failed, `file:line`: torch's `fail_user_frame_filename` /
   * `fail_user_frame_lineno` when that file is user code (not under `site-packages`,
   * `dist-packages` or a `torch` directory, nor the Python standard library); else, but for
   * a `BackendCompilerFailed` (the backend refused the whole graph, not a line of it), the
   * innermost user-code frame of the last `user_stack` the compile logged before its metrics
   * (a symbol or guard entry: where tracing was); else torch's frame as logged. Null for
   * restarts, and when none of these was logged.
   */
  user_frame: string | null;
  /**
   * `exception_stack_trace` from the metrics, when logged.
   */
  exception: string[] | null;
  /**
   * Blob id of the compile's `dynamo_error` artifact (the traceback), when logged.
   */
  error_blob: string | null;
  /**
   * Id of the compile's `dynamo_start` stack in the stream's stack table (that of an earlier
   * attempt of the same frame compile when this attempt logged none).
   */
  stack: number | null;
  /**
   * `seq` of the metrics entry.
   */
  seq: number;
}
/**
 * `tables/<stream>/graph_breaks.json.zst`: every graph break (a `dynamo_graph_break_reason`
 * entry; restarts are counted apart, in `failures`) grouped by (reason, user-code
 * location, raised_at), most frequent first (tlparse #118). `rows` counts `breaks` (the
 * groups).
 */
export interface GraphBreaks {
  /**
   * Groups, by `count` descending, then first appearance.
   */
  breaks: GraphBreakGroup[];
  /**
   * Total number of graph breaks (the sum of `count`): the stream's `dynamo_graph_break_reason`
   * entries.
   */
  total: number;
}
/**
 * One (reason, location, raised_at) group.
 */
export interface GraphBreakGroup {
  /**
   * The short reason, e.g. `Failed to trace builtin operator`.
   */
  reason: string;
  /**
   * `file:line` of the user's code the break happened in: the innermost frame of the logged
   * "User code traceback" that is user code (see [`BreakFrame::user`]); when no frame is, or
   * there is no traceback, the logged `Graph break in user code at file:line`. Null when the
   * log says neither.
   */
  location: string | null;
  /**
   * Where torch raised the break, `file:line` (the logged `Graph break in user code at`, the
   * innermost frame of the traceback), when it is not `location`: a break inside torch code
   * (`.../torch/optim/optimizer.py:78`) called from the user's line `location`.
   */
  raised_at: string | null;
  /**
   * The first occurrence's "User code traceback", outermost call first; empty when not logged.
   */
  traceback: BreakFrame[];
  /**
   * The `Explanation:` of the break, when logged.
   */
  explanation: string | null;
  /**
   * The graph-break site page for this kind of break (`https://.../gb/gbNNNN.html`), when logged.
   */
  url: string | null;
  /**
   * Where the break was read from: `dynamo_graph_break_reason` (the artifact, torch ≥ 2.6).
   * Bundles built before graph breaks were defined as these entries alone may say
   * `restart_reasons` (a restart reason read as a break, in logs without the artifact).
   */
  source: string;
  /**
   * How many times it happened.
   */
  count: number;
  /**
   * The compile ids it happened in, in log order (one per occurrence).
   */
  compile_ids: string[];
  /**
   * Blob id of the first occurrence's full text (reason, hints, user traceback), when it came
   * from an artifact.
   */
  example_blob: string | null;
}
/**
 * One frame of a graph break's "User code traceback"
 * (`  File "/home/user/train.py", line 45, in train_step`, then the code line).
 */
export interface BreakFrame {
  /**
   * The file, as logged.
   */
  file: string;
  /**
   * The line, 1-based.
   */
  line: number;
  /**
   * The function.
   */
  name: string;
  /**
   * The source line, trimmed, when logged.
   */
  code: string | null;
  /**
   * Whether the file is user code: not in a `site-packages` or `dist-packages` directory, not
   * under a directory named `torch` (a PyTorch source checkout), not in the Python standard
   * library (a `lib/pythonX.Y` or `lib64/pythonX.Y` directory, or `PythonXY/Lib` on Windows),
   * and not Python's frozen modules (`<frozen ...>`) nor FX-generated code (`<eval_with_key>`).
   */
  user: boolean;
}
/**
 * `tables/<stream>/graph_execution.json.zst`: every recorded run of a compiled graph. `rows`
 * counts executions: the items of every recording's `order` plus the `legacy` rows.
 *
 * Current torch logs a `graph_execution` artifact when a
 * `torch._inductor.debug.record_and_log_graph_execution_order()` block exits: the compile id of
 * every compiled graph called inside it, in call order. Older torch logged one
 * `inductor_graph_execution` artifact per call, naming the graph `graph_N`.
 */
export interface GraphExecution {
  /**
   * One row per usable `graph_execution` artifact, in log order.
   */
  recordings: ExecutionRecording[];
  /**
   * One row per usable legacy `inductor_graph_execution` artifact (one per call), in log order.
   */
  legacy: LegacyExecution[];
  /**
   * Set when `legacy` is not empty: why its graph names cannot be compared with compile ids.
   */
  legacy_note: string | null;
}
/**
 * One `graph_execution` artifact: a recorded sequence of calls.
 */
export interface ExecutionRecording {
  /**
   * `seq` of the artifact's entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * Blob id of the payload.
   */
  blob: string;
  /**
   * Id, in the stream's stack table, of the entry's envelope `stack` (where the recording
   * block exited), when logged.
   */
  stack: number | null;
  /**
   * The calls in the order they ran; none is dropped, so positions match the log's.
   */
  order: GraphRun[];
}
/**
 * One call of a compiled graph.
 */
export interface GraphRun {
  /**
   * The compile id of the graph as displayed (`[0/1]`, as `compile_directory` shows it); null
   * when torch had none (logged as null or as the string `None`) or the item is not a compile
   * id.
   */
  compile_id: string | null;
  /**
   * What was logged: the compile id string without brackets (`0/1`, `None`), or the compact
   * JSON of an item of another shape; null when logged as null.
   */
  logged: string | null;
}
/**
 * One legacy `inductor_graph_execution` artifact: one call of the graph it names.
 */
export interface LegacyExecution {
  /**
   * `seq` of the artifact's entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * Id, in the stream's stack table, of the entry's envelope `stack` (the call site), when
   * logged.
   */
  stack: number | null;
  /**
   * The payload's `graph`: inductor's name for the graph in this process (`graph_0`), not a
   * compile id.
   */
  graph: string;
}
/**
 * `tables/<stream>/graph_sizes.json.zst`: per compile id, every graph or generated-code entry in
 * log order with its size. `rows` counts `compiles`.
 *
 * An entry is a graph when its kind is `dynamo_output_graph`, `aot_forward_graph`,
 * `aot_backward_graph`, `aot_joint_graph`, `aot_inference_graph`, `inductor_pre_grad_graph`,
 * `inductor_post_grad_graph`, `compiled_autograd_graph`, `optimize_ddp_split_graph` (any kind
 * ending in `_graph`), `optimize_ddp_split_child`, `exported_program`, `inductor_output_code` or
 * `graph_dump`; or when it is an `artifact` whose name ends in `_graph` or whose payload is a
 * readable FX GraphModule (`before_pre_grad_graph`, `after_post_grad_graph`,
 * `before_recompile_pre_grad`, ...). Entries without a payload are left out.
 */
export interface GraphSizes {
  /**
   * One row per compile id with graphs or graph counts in its `compilation_metrics`, in order of
   * first appearance in the stream; then, if any, a row with a null `compile_id` for graphs
   * logged outside any compile.
   */
  compiles: CompileGraphs[];
}
/**
 * The graphs of one compile id.
 */
export interface CompileGraphs {
  /**
   * The compile id as displayed (`[0/1]`); null for graphs outside any compile.
   */
  compile_id: string | null;
  /**
   * `graph_op_count` from the compile's `compilation_metrics` (call nodes of the Dynamo graph),
   * when logged.
   */
  graph_op_count: number | null;
  /**
   * `graph_node_count` from `compilation_metrics` (all nodes of the Dynamo graph, with
   * placeholders and the output), when logged.
   */
  graph_node_count: number | null;
  /**
   * `graph_input_count` from `compilation_metrics`, when logged.
   */
  graph_input_count: number | null;
  /**
   * The compile's graphs, in log order.
   */
  graphs: GraphSize[];
}
/**
 * The size of one graph or generated-code entry.
 */
export interface GraphSize {
  /**
   * What to call it, as in `compile_directory` artifacts ([`super::ArtifactRef::name`]): the
   * artifact / graph_dump name, else the kind.
   */
  name: string;
  /**
   * tlparse's name for it where that differs ([`super::ArtifactRef::tlparse_name`]).
   */
  tlparse_name?: string | null;
  /**
   * The entry's kind.
   */
  kind: string;
  /**
   * `seq` of the entry in the stream's index.
   */
  seq: number;
  /**
   * Blob id of the payload.
   */
  blob: string;
  /**
   * Payload size in bytes.
   */
  bytes: number;
  /**
   * Payload lines.
   */
  lines: number;
  /**
   * For a readable FX GraphModule (`class X(torch.nn.Module):` then `def forward(...)`, as
   * `print_readable` writes it; `ExportedProgram:` may come first): the number of FX nodes of
   * the top-level graph other than placeholders and the output. Counted as the lines of the
   * top-level `forward` body of the form `name = ...` or `name: "type" = ...`, leaving out
   * `name = other_name` (a placeholder renamed, as Dynamo graphs print their inputs). Nested
   * submodule classes (e.g. a `cond` branch or a flex-attention `score_mod`) are not counted.
   * Null for payloads that are not readable FX graphs (output code, C++).
   */
  fx_nodes: number | null;
  /**
   * Of `fx_nodes`, the call nodes: those whose right-hand side is not a `self.` attribute
   * (a `get_attr`). On a `dynamo_output_graph` this equals `compilation_metrics`'
   * `graph_op_count`. Null when `fx_nodes` is.
   */
  fx_ops: number | null;
}
/**
 * `tables/<stream>/guards.json.zst`: the guards and shape facts of every compile id of the
 * stream, as lists of rows that each name their compile id. `rows` counts the rows of every list
 * except `compiles` (a summary of the others).
 */
export interface Guards {
  /**
   * One summary per compile id that has any row below (or null, for rows logged outside a
   * compile), in order of first appearance.
   */
  compiles: GuardsCompile[];
  /**
   * Structured Dynamo guards (`dynamo_guards` entries), one row per guard. Only older torch
   * fills them: torch that logs guard trees leaves this empty. Show a compile's guards from
   * `guard_trees`, from this list only for a compile without a tree.
   */
  dynamo_guards: DynamoGuard[];
  /**
   * The guards torch installed, as C++ guard trees (`dynamo_cpp_guards_str` entries): one row
   * per tree, its leaf guards in `guards[]`. The list to show a compile's guards from.
   */
  guard_trees: GuardTree[];
  /**
   * Shape guards added to the shape environment (`guard_added_fast`, and `guard_added` where
   * logged), in log order.
   */
  shape_guards: ShapeGuard[];
  /**
   * Symbols specialized to a constant (`symbolic_shape_specialization`), in log order.
   */
  specializations: Specialization[];
  /**
   * Symbols created (`create_symbol`, `create_unbacked_symbol`), in log order.
   */
  symbols: SymbolCreated[];
  /**
   * Guards on data-dependent values (`guard_on_data_dependent_error`,
   * `propagate_real_tensors_provenance`, `propagate_real_tensors`), in log order.
   */
  data_dependent: DataDependent[];
}
/**
 * Counts of one compile id's rows in the lists of this table, and its guard figures.
 */
export interface GuardsCompile {
  /**
   * The compile id as displayed (`[0/1]`); null for rows logged outside any compile.
   */
  compile_id: string | null;
  /**
   * `guard_count` from the compile's `compilation_metrics` (all Dynamo guards), when logged.
   */
  guard_count: number | null;
  /**
   * `shape_env_guard_count` from `compilation_metrics` (shape guards), when logged.
   */
  shape_env_guard_count: number | null;
  /**
   * Rows in `dynamo_guards`.
   */
  dynamo_guards: number;
  /**
   * Leaf guards in the compile's `guard_trees` (all trees together).
   */
  tree_guards: number;
  /**
   * `Guard latency = N us` of the compile's last guard tree, in microseconds, when logged.
   */
  latency_us: number | null;
  /**
   * Rows in `shape_guards`.
   */
  shape_guards: number;
  /**
   * Rows in `specializations`.
   */
  specializations: number;
  /**
   * Rows in `symbols` with `unbacked` false.
   */
  backed_symbols: number;
  /**
   * Rows in `symbols` with `unbacked` true.
   */
  unbacked_symbols: number;
  /**
   * Rows in `data_dependent`.
   */
  data_dependent: number;
}
/**
 * One guard of a `dynamo_guards` payload (a JSON list of `{code, stack, user_stack}`). Its
 * stacks live in the payload, not in the stream's stack table: the innermost frames are
 * resolved here, and the whole payload is the blob.
 */
export interface DynamoGuard {
  /**
   * The compile id as displayed; null outside a compile.
   */
  compile_id: string | null;
  /**
   * `seq` of the `dynamo_guards` entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * Blob id of the payload (the whole guard list).
   */
  blob: string;
  /**
   * Position of this guard in the payload's list, from 0.
   */
  index: number;
  /**
   * The guard's Python code, e.g. `utils_device.CURRENT_DEVICE == None`.
   */
  code: string;
  /**
   * Where in the user's code the guard came from: the innermost frame of the guard's
   * `user_stack` whose file is user code (not under `site-packages`, `dist-packages` or a
   * `torch` directory, nor the Python standard library), else its innermost frame; null when
   * the stack is null or empty. File names are resolved through the process's string table
   * (null when it never defined the index).
   */
  user_frame: Frame | null;
  /**
   * Innermost frame of the guard's `stack` (where in torch it was created); null when the
   * stack is null or empty.
   */
  frame: Frame | null;
}
/**
 * A `dynamo_cpp_guards_str` entry: the C++ guard-manager tree installed for a compiled frame.
 */
export interface GuardTree {
  /**
   * The compile id as displayed; null outside a compile.
   */
  compile_id: string | null;
  /**
   * `seq` of the entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * Blob id of the payload: the tree as text (`TREE_GUARD_MANAGER:` then `+- ` lines).
   */
  blob: string;
  /**
   * Lines of the payload.
   */
  lines: number;
  /**
   * The `Guard latency = N us` figure: time to run the guards once, in microseconds; null
   * when the tree does not state it (older logs).
   */
  latency_us: number | null;
  /**
   * Nodes of the tree that only hold other nodes (`RootGuardManager`, `GuardManager`,
   * `DictGuardManager`, `KeyValueManager`, `KeyManager`, `ValueManager`, ...).
   */
  managers: number;
  /**
   * The leaf guards, in tree order (depth first, as printed).
   */
  guards: TreeGuard[];
}
/**
 * One leaf guard line of a C++ guard tree, e.g.
 * `| | +- TYPE_MATCH: ___check_type_id(L['x'], 9419...)  # n = x.shape[0]  # f.py:15 in f`.
 */
export interface TreeGuard {
  /**
   * Nesting depth as printed (the number of `| ` before `+- `): guards of the root manager
   * are at 1, and shape guards (`LAMBDA_GUARD`) printed after the root's subtree at 0.
   */
  depth: number;
  /**
   * The guard type as printed: `TENSOR_MATCH`, `TYPE_MATCH`, `ID_MATCH`, `LAMBDA_GUARD`
   * (shape guards), `DIMENSION_DYNAMIC_MARKING_GUARD`, `NO_TENSOR_ALIASING`, ...
   */
  kind: string;
  /**
   * `source=` of the nearest enclosing manager (the value guarded, e.g. `L['x']`); null
   * directly under the root.
   */
  source: string | null;
  /**
   * The guard's check, e.g. `___check_type_id(L['x'], 94197043380640)`; empty when the line
   * has none (e.g. a repeated `NO_TENSOR_ALIASING`).
   */
  code: string;
  /**
   * The comment's text before its location: usually the user source line that caused the
   * guard, e.g. `n = x.shape[0]` (its own `  # ` comments kept), sometimes a note such as
   * `(unknown source ..., please file a bug)`.
   */
  user_code: string | null;
  /**
   * The code location in the comment, `file.py:LINE in function` (user code when there is
   * user code, else where torch installed the guard).
   */
  location: string | null;
  /**
   * The parenthesised framework location at the end of the comment, e.g.
   * `_subclasses/fake_impls.py:1519 in _compute_slice_index`.
   */
  framework_location: string | null;
}
/**
 * A shape guard, e.g. `Eq(Mod(s17, 4), 0)` or `s77 > 4`.
 */
export interface ShapeGuard {
  /**
   * The compile id as displayed; null outside a compile.
   */
  compile_id: string | null;
  /**
   * `seq` of the entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * Which entry kind logged it.
   */
  kind: ShapeGuardKind;
  /**
   * The guard expression (sympy), e.g. `Eq(s77, 6)`.
   */
  expr: string | null;
  /**
   * `prefix` of `guard_added` (`eval` when a guard was evaluated); null for
   * `guard_added_fast`.
   */
  prefix: string | null;
  /**
   * `expr_node_id` of `guard_added`: the id of the expression's node (see `export_report`'s
   * provenance).
   */
  expr_node_id: number | null;
  /**
   * Id, in the stream's stack table, of the user stack; null when not logged.
   */
  user_stack: number | null;
  /**
   * Id, in the stream's stack table, of the framework stack; null when not logged.
   */
  stack: number | null;
  /**
   * Where in the user's code the guard came from: the innermost frame of the user stack whose
   * file is user code (not under `site-packages`, `dist-packages` or a `torch` directory, nor
   * the Python standard library), else its innermost frame; null when the user stack is
   * missing or empty.
   */
  user_frame: Frame | null;
  /**
   * `symbol_to_sources` of `guard_added`: symbol → source expression, as logged.
   */
  symbol_to_sources: {
    [k: string]: unknown;
  };
  /**
   * `frame_locals` of `guard_added`, when logged.
   */
  frame_locals: FrameLocals | null;
}
/**
 * A symbol replaced by a constant, e.g. `s77` = `7` because its range was refined to a
 * singleton.
 */
export interface Specialization {
  /**
   * The compile id as displayed; null outside a compile.
   */
  compile_id: string | null;
  /**
   * `seq` of the entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * The symbol, e.g. `s77`.
   */
  symbol: string | null;
  /**
   * The sources the symbol stands for, e.g. `L['x'].size()[0]`.
   */
  sources: string[];
  /**
   * The constant it was specialized to, as logged (a string).
   */
  value: string | null;
  /**
   * Why, e.g. `range_refined_to_singleton`.
   */
  reason: string | null;
  /**
   * Id, in the stream's stack table, of the user stack; null when not logged.
   */
  user_stack: number | null;
  /**
   * Id, in the stream's stack table, of the framework stack; null when not logged.
   */
  stack: number | null;
  /**
   * The innermost frame of the user stack whose file is user code (not under
   * `site-packages`, `dist-packages` or a `torch` directory, nor the Python standard
   * library), else its innermost frame; null when the user stack is missing or empty.
   */
  user_frame: Frame | null;
}
/**
 * A symbol created for a dynamic size or value.
 */
export interface SymbolCreated {
  /**
   * The compile id as displayed; null outside a compile.
   */
  compile_id: string | null;
  /**
   * `seq` of the entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * The symbol, e.g. `s77` (backed) or `u0` (unbacked).
   */
  symbol: string | null;
  /**
   * True for `create_unbacked_symbol` (a data-dependent value with no hint, e.g. from
   * `.item()` or `nonzero()`), false for `create_symbol`.
   */
  unbacked: boolean;
  /**
   * The example value the symbol was created from (`val`, a string; backed symbols only).
   */
  hint: string | null;
  /**
   * The value range (`vr`), e.g. `[2, int_oo]`.
   */
  range: string | null;
  /**
   * The source expression (`source`, backed symbols only), e.g. `L['x'].size()[0]`.
   */
  source: string | null;
  /**
   * `node_id` of an unbacked symbol (the key expressions refer to it by).
   */
  node_id: number | null;
  /**
   * Id, in the stream's stack table, of the user stack; null when not logged.
   */
  user_stack: number | null;
  /**
   * Id, in the stream's stack table, of the framework stack; null when not logged.
   */
  stack: number | null;
  /**
   * The innermost frame of the user stack whose file is user code (not under
   * `site-packages`, `dist-packages` or a `torch` directory, nor the Python standard
   * library), else its innermost frame; null when the user stack is missing or empty.
   */
  user_frame: Frame | null;
}
/**
 * A guard on a data-dependent (unbacked) expression.
 */
export interface DataDependent {
  /**
   * The compile id as displayed; null outside a compile.
   */
  compile_id: string | null;
  /**
   * `seq` of the entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * Which entry kind logged it.
   */
  kind: DataDependentKind;
  /**
   * The expression guarded on, e.g. `Eq(u0, 1)`.
   */
  expr: string | null;
  /**
   * `unhinted_expr` (`guard_on_data_dependent_error` only).
   */
  unhinted_expr: string | null;
  /**
   * The value it was decided to (`result`, e.g. `False`); null for errors.
   */
  result: string | null;
  /**
   * The expression's node id (`expr_id` or `expr_node_id`).
   */
  expr_id: number | null;
  /**
   * Id, in the stream's stack table, of the user stack; null when not logged.
   */
  user_stack: number | null;
  /**
   * Id, in the stream's stack table, of the framework stack; null when not logged.
   */
  stack: number | null;
  /**
   * The innermost frame of the user stack whose file is user code (not under
   * `site-packages`, `dist-packages` or a `torch` directory, nor the Python standard
   * library), else its innermost frame; null when the user stack is missing or empty.
   */
  user_frame: Frame | null;
  /**
   * `frame_locals`, when logged.
   */
  frame_locals: FrameLocals | null;
}
/**
 * `tables/<stream>/hints.json.zst`: every distinct `Hint:` line torch wrote in a graph break
 * (`dynamo_graph_break_reason` payload), a restart reason (`restart_reasons` item) or a failure's
 * `fail_reason` (torch 2.7 and later write them), quoted as logged: the advice is torch's, none is
 * added. Absent when no such message carries a hint. `rows` counts `hints`.
 */
export interface Hints {
  /**
   * One row per distinct hint text, by occurrences (`graph_breaks + restarts + failures`)
   * descending, then by `hint`.
   */
  hints: Hint[];
}
/**
 * One distinct hint and the messages that carried it.
 */
export interface Hint {
  /**
   * The hint, as torch wrote it after `Hint: ` on its line, trimmed.
   */
  hint: string;
  /**
   * What the hint asks for, by a rule on its text alone.
   */
  kind: HintKind;
  /**
   * Graph breaks (`dynamo_graph_break_reason` entries, as `graph_breaks` counts them) whose
   * text carries the hint.
   */
  graph_breaks: number;
  /**
   * Restarts (`restart_reasons` items, as `failures.restarts` counts them) whose text carries
   * the hint.
   */
  restarts: number;
  /**
   * Failures (metrics with a `fail_type`, as `failures.failed` counts them) whose `fail_reason`
   * carries the hint.
   */
  failures: number;
  /**
   * The short reasons of those messages (as `graph_breaks` reads a reason), each once, in order
   * of first appearance.
   */
  reasons: string[];
  /**
   * The user-code locations (`file:line`, as `graph_breaks` gives a break's `location`) of the
   * messages that name one, each once, in order of first appearance. Restart and failure
   * reasons name none.
   */
  locations: string[];
  /**
   * The compile ids of those messages' entries, each once, in order of first appearance (`[-/-]`
   * for an entry without one).
   */
  compile_ids: string[];
}
/**
 * `tables/<stream>/inputs.json.zst`: one row per tensor a compile described, with its source
 * expressions, metadata and storage. `rows` counts `inputs`.
 */
export interface Inputs {
  /**
   * One row per (compile id, describer, tensor id), in order of the first entry about it.
   */
  inputs: InputTensor[];
}
/**
 * A tensor one compile turned into a fake tensor.
 */
export interface InputTensor {
  /**
   * The compile id as displayed; null outside a compile.
   */
  compile_id: string | null;
  /**
   * `seq` of the first entry about this tensor in this compile.
   */
  seq: number;
  /**
   * Line of that entry's header in its input file.
   */
  line: number;
  /**
   * `describer_id`: which describer (one per fake-tensor converter) numbered the tensor.
   */
  describer_id: number;
  /**
   * The tensor's id within its describer (`id`).
   */
  id: number;
  /**
   * Source expressions the compile reached the tensor by (`describe_source`), e.g.
   * `L['x']` or `L['self']._modules['lin']._parameters['weight']`, in log order. Empty when
   * none was logged (e.g. a view's base).
   */
  sources: string[];
  /**
   * The tensor's description (`describe_tensor`). torch logs it once per describer, so a
   * later compile reusing the describer shows the earlier description (see its `line`); null
   * when no description was logged.
   */
  tensor: TensorInfo | null;
  /**
   * The tensor's storage (`describe_storage`, matched by describer and storage id); null
   * when the tensor has no storage id.
   */
  storage: StorageInfo | null;
  /**
   * The symbol each dimension's size became in this compile (`create_symbol` entries whose
   * source is `<source>.size()[i]` for one of `sources`), null for static dimensions; empty
   * when no dimension is symbolic.
   */
  size_symbols: (string | null)[];
}
/**
 * A `describe_tensor` entry. torch leaves out fields equal to their defaults; they are filled
 * in here (false, 0, `torch.strided`).
 */
export interface TensorInfo {
  /**
   * Line of the `describe_tensor` entry's header.
   */
  line: number;
  /**
   * Compile id (as displayed) of the `describe_tensor` entry; differs from the row's when an
   * earlier compile described the tensor.
   */
  compile_id: string | null;
  /**
   * Number of dimensions.
   */
  ndim: number | null;
  /**
   * dtype as logged, e.g. `torch.float32`.
   */
  dtype: string | null;
  /**
   * Device, shortened from its repr: `cpu`, `cuda:0`, `meta` (the repr when it does not
   * parse).
   */
  device: string | null;
  /**
   * Sizes, one per dimension; null when not logged.
   */
  size: Dim[] | null;
  /**
   * Strides, one per dimension; null when not logged (e.g. sparse tensors).
   */
  stride: Dim[] | null;
  /**
   * Storage offset in elements.
   */
  storage_offset: Dim;
  /**
   * Layout, e.g. `torch.strided`.
   */
  layout: string;
  /**
   * `requires_grad`.
   */
  requires_grad: boolean;
  /**
   * `is_leaf` (autograd leaf).
   */
  is_leaf: boolean;
  /**
   * `is_parameter` (an `nn.Parameter`).
   */
  is_parameter: boolean;
  /**
   * `is_view`: the tensor is a view of `base`.
   */
  is_view: boolean;
  /**
   * Id (same describer) of the tensor this one is a view of.
   */
  base: number | null;
  /**
   * The other boolean flags that are true, by name as logged (`is_inference`, `is_sparse`,
   * `is_nested`, `is_functional`, `is_conj`, `is_neg`, `is_traceable_wrapper_subclass`,
   * ...).
   */
  flags: string[];
  /**
   * Dimensions marked dynamic (`dynamo_dynamic_indices`).
   */
  dynamic_dims: number[];
  /**
   * `dynamo_hint_overrides`: dimension → size hint, as logged.
   */
  hint_overrides: {
    [k: string]: unknown;
  };
  /**
   * `creation_meta` of a view, e.g. `CreationMeta.DEFAULT`.
   */
  creation_meta: string | null;
  /**
   * The `view_func` repr as logged, null when not logged. Torch 2.15 logs it for every tensor,
   * views or not (`_CustomViewFunc(func=<built-in method _view_func_unsafe of Tensor object at
   * 0x7f…>)`, an object address that differs from run to run).
   */
  view_func: string | null;
  /**
   * Every other field logged (e.g. `grad`, `attrs`, `unwrapped`, `bdim`, `sparse_dim`,
   * `type`, `ctx`), as logged.
   */
  other: {
    [k: string]: unknown;
  };
}
/**
 * A `describe_storage` entry.
 */
export interface StorageInfo {
  /**
   * Storage id within the describer.
   */
  id: number;
  /**
   * Size in bytes; null when no `describe_storage` entry was logged for the id.
   */
  size: Dim | null;
  /**
   * Line of the `describe_storage` entry's header; null when none was logged.
   */
  line: number | null;
}
/**
 * `tables/<stream>/log_volume.json.zst`: the stream's entries and bytes grouped three ways (by
 * kind, by artifact name, by logging call site), each list sorted by `log_bytes` descending, ties
 * by `key`. `rows` counts `by_kind`.
 */
export interface LogVolume {
  /**
   * Every entry of the stream.
   */
  total: Volume;
  /**
   * By entry kind (`chromium_event`, `artifact`, `inductor_output_code`, ...).
   */
  by_kind: VolumeRow[];
  /**
   * By the `name` of named kinds (`artifact`, `graph_dump`, `link`, `dump_file`,
   * `optimize_ddp_split_child`); entries of other kinds are not in this list.
   */
  by_name: VolumeRow[];
  /**
   * By the logging call site in the glog prefix, `path/file.py:LINE` (for
   * `trace_structured_artifact` entries this is the wrapper's own line).
   */
  by_source: VolumeRow[];
}
/**
 * Sizes of a group of entries. Bytes are counted as in the log: header lines without their line
 * ending; payloads as stored (lines joined with `\n`, without the leading tab).
 */
export interface Volume {
  /**
   * Entries.
   */
  entries: number;
  /**
   * Entries that have a payload.
   */
  payload_entries: number;
  /**
   * Bytes of the header lines (glog prefix and JSON envelope).
   */
  header_bytes: number;
  /**
   * Bytes of the payloads.
   */
  payload_bytes: number;
  /**
   * Payload lines.
   */
  payload_lines: number;
  /**
   * Bytes the entries take in the log file with `\n` line endings: each header plus its `\n`,
   * each payload line plus its leading tab and `\n`. For a log of only readable entries with
   * `\n` endings, the total is the file's size.
   */
  log_bytes: number;
}
/**
 * One group of entries.
 */
export interface VolumeRow {
  /**
   * The kind, the name, or the `file:line` call site.
   */
  key: string;
  /**
   * In `by_name`: the kind the name belongs to (the key is `(kind, name)`); null elsewhere.
   */
  kind: string | null;
  /**
   * Entries.
   */
  entries: number;
  /**
   * Entries that have a payload.
   */
  payload_entries: number;
  /**
   * Bytes of the header lines.
   */
  header_bytes: number;
  /**
   * Bytes of the payloads.
   */
  payload_bytes: number;
  /**
   * Payload lines.
   */
  payload_lines: number;
  /**
   * Bytes in the log file, as in `Volume`.
   */
  log_bytes: number;
}
/**
 * `tables/<stream>/provenance.json.zst`: for each compile id that logged provenance node
 * mappings (`inductor_provenance_tracking_node_mappings`), every graph Inductor compiled in it
 * (a training compile has a forward and a backward), each with the code panes tlparse's
 * `provenance_tracking_<dir>.html` shows and the line maps between them; and the kernels' stack
 * traces (`inductor_provenance_tracking_kernel_stack_traces`). `rows` counts `compiles`.
 */
export interface Provenance {
  /**
   * One row per compile id with node mappings, in order of the compile id's first provenance
   * artifact in the stream.
   */
  compiles: ProvenanceCompile[];
  /**
   * One row per kernel of each `inductor_provenance_tracking_kernel_stack_traces` artifact, in
   * log order, then in the payload's kernel order.
   */
  kernel_stack_traces: KernelStackTraces[];
}
/**
 * The provenance of one compile id: its pre-grad graph and every graph Inductor compiled from it.
 */
export interface ProvenanceCompile {
  /**
   * The compile id as displayed (`[0/0]`); null for entries logged without a compile id (AOT
   * Inductor logs, for instance).
   */
  compile_id: string | null;
  /**
   * Its parts; null without a compile id.
   */
  cid: CompileId | null;
  /**
   * tlparse's directory name for the compile id (`-_0_0_0`; `-_-_-_-` without one).
   */
  dir: string;
  /**
   * The pre-grad graph (Dynamo's graph, before AOTAutograd; the same for every graph of the
   * compile): the last `before_pre_grad_graph` artifact of the compile, else the last
   * `inductor_pre_grad_graph`. Null when neither was logged.
   */
  pre_grad: ProvenancePane | null;
  /**
   * Every graph with node mappings, in log order (see [`ProvenanceGraph`] for how entries are
   * grouped into graphs).
   */
  graphs: ProvenanceGraph[];
}
/**
 * One code pane: an artifact and where its lines are in the maps.
 */
export interface ProvenancePane {
  /**
   * The artifact (its blob holds the text).
   */
  artifact: ArtifactRef;
  /**
   * What to add to a line number of the maps to get the 1-based line of the blob. 0 for the
   * graphs. For the C++ code, the number of empty lines the payload starts with (tlparse drops
   * them before numbering). For the Python code, that plus the position of the first
   * `# AOT ID:` line, which tlparse numbers 1.
   */
  line_offset: number;
}
/**
 * One graph Inductor compiled (the forward, the backward, or an inference graph): its post-grad
 * graph, generated code and node mappings. The compile's post-grad graphs, output code and node
 * mappings are grouped in log order: an entry joins the current graph unless that graph already
 * has an entry of its kind (post-grad graph, Python code, C++ code, node mappings), in which case
 * it starts the next graph.
 */
export interface ProvenanceGraph {
  /**
   * Which graph it is, from the `# AOT ID: ['<n>_<graph>']` line torch writes atop the graph's
   * Python output code; null when the graph has no Python code with that line (AOT Inductor's
   * C++ code has none) or the line names another kind.
   */
  graph: GraphRole | null;
  /**
   * The AOT ID as logged (`0_forward`); null likewise.
   */
  aot_id: string | null;
  /**
   * The post-grad graph: the `after_post_grad_graph`, else the `inductor_post_grad_graph`, of
   * the graph.
   */
  post_grad: ProvenancePane | null;
  /**
   * The generated Python wrapper code: the graph's `inductor_output_code` (JIT compiles).
   */
  python_code: ProvenancePane | null;
  /**
   * The generated C++ wrapper code: the graph's `inductor_aot_wrapper_code` `graph_dump` (AOT
   * Inductor).
   */
  cpp_code: ProvenancePane | null;
  /**
   * The `inductor_provenance_tracking_node_mappings` artifact the maps come from.
   */
  node_mappings: ArtifactRef;
  /**
   * The line maps, exactly as tlparse embeds them in its page (`lineMappings`), computed with
   * the compile's pre-grad graph and this graph's panes.
   */
  line_mappings: LineMappings;
  /**
   * The node mappings as logged: `preToPost` / `postToPre` (FX node name → node names),
   * `cppCodeToPost` (kernel name, possibly with a `:N` debug handle → post-grad node names),
   * `postToCppCode`, and `version` when logged. Despite their names, the kernel maps serve the
   * Python code too. A backward's are often only `{"version": 2.0}`.
   */
  raw_node_mappings: {
    [k: string]: unknown;
  };
}
/**
 * tlparse's `lineMappings`: which lines of one pane correspond to a line of another.
 */
export interface LineMappings {
  /**
   * Pre-grad graph line → post-grad graph lines.
   */
  preToPost: {
    [k: string]: number[];
  };
  /**
   * Post-grad graph line → pre-grad graph lines.
   */
  postToPre: {
    [k: string]: number[];
  };
  /**
   * Python code line (a kernel's call) → post-grad graph lines.
   */
  pyCodeToPost: {
    [k: string]: number[];
  };
  /**
   * Post-grad graph line → Python code lines.
   */
  postToPyCode: {
    [k: string]: number[];
  };
  /**
   * C++ code line (a kernel's call) → post-grad graph lines.
   */
  cppCodeToPost: {
    [k: string]: number[];
  };
  /**
   * Post-grad graph line → C++ code lines.
   */
  postToCppCode: {
    [k: string]: number[];
  };
}
/**
 * The user stack traces of one generated kernel.
 */
export interface KernelStackTraces {
  /**
   * The compile id as displayed; null without one.
   */
  compile_id: string | null;
  /**
   * tlparse's directory name for the compile id.
   */
  dir: string;
  /**
   * `seq` of the `inductor_provenance_tracking_kernel_stack_traces` entry.
   */
  seq: number;
  /**
   * Blob id of its payload.
   */
  blob: string;
  /**
   * The kernel's name as logged, with its `:N` debug handle when there is one.
   */
  kernel: string;
  /**
   * Its stack traces, as tlparse's readable page shows them: a literal `\n` (backslash, n) in
   * the logged string becomes a newline, and trailing newlines are dropped.
   */
  traces: string[];
}
/**
 * `tables/<stream>/recompiles.json.zst`: every frame Dynamo compiled more than once (tlparse
 * #44, #153). `rows` counts `frames`.
 */
export interface Recompiles {
  /**
   * Frames with at least one recompile, by number of compiles descending, then frame id.
   */
  frames: RecompiledFrame[];
}
/**
 * One frame and its compiles.
 */
export interface RecompiledFrame {
  /**
   * `frame_id`.
   */
  frame_id: number;
  /**
   * `compiled_autograd_id`, for frames compiled inside compiled autograd.
   */
  compiled_autograd_id: number | null;
  /**
   * `co_name` of the frame (from its metrics), when logged.
   */
  co_name: string | null;
  /**
   * `co_filename:co_firstlineno` of the frame, when logged.
   */
  location: string | null;
  /**
   * The frame's compiles in `frame_compile_id` order (the final attempt of each).
   */
  compiles: RecompileStep[];
}
/**
 * One compile of a frame, compared with the previous one.
 */
export interface RecompileStep {
  /**
   * The compile id as displayed.
   */
  compile_id: string;
  /**
   * Its status.
   */
  status: CompileStatus;
  /**
   * Why torch recompiled: the `recompile_reasons` artifact, one reason per earlier cache
   * entry whose guards failed (`0/0: tensor 'x' size mismatch at index 0. expected 4, actual
   * 6`); without that artifact, the `recompile_reason` of the frame compile's
   * `compilation_metrics` (torch writes only the first reason there). A frame compile's
   * attempts share one reason: it is the frame compile's, whichever attempt logged it. Empty
   * for the first compile, and when no reason was logged.
   */
  reasons: string[];
  /**
   * Where `reasons` were read; null when they are empty.
   */
  reasons_from: RecompileReasonSource | null;
  /**
   * The attempt whose entry held `reasons` (`[0/1]`), which is not `compile_id` when the frame
   * compile was restarted after the reason was logged (`compile_id` is then `[0/1_1]`); null
   * when `reasons` is empty.
   */
  reasons_logged_on: string | null;
  /**
   * What differs from the previous compile of the frame; null for the first compile.
   */
  changes: Changes | null;
}
/**
 * The difference between two consecutive compiles of a frame.
 */
export interface Changes {
  /**
   * The compile compared against.
   */
  previous: string;
  /**
   * Artifacts logged by both compiles whose payloads differ (by blob id), in log order of this compile.
   */
  changed: ArtifactChange[];
  /**
   * Artifacts only this compile logged, named as in `changed` (`x#2`: the previous compile
   * logged one `x`).
   */
  added: string[];
  /**
   * Artifacts only the previous compile logged, named as in `changed`.
   */
  removed: string[];
  /**
   * Artifacts both compiles logged with the same payload, named as in `changed`; with
   * `changed` and `added`, every artifact of this compile but `no_payload` ones.
   */
  unchanged: string[];
  /**
   * Guards this compile has that the previous did not (from `dynamo_cpp_guards_str`, or
   * `dynamo_guards` in older logs; source comments after `#` are ignored when comparing).
   */
  guards_added: string[];
  /**
   * Guards the previous compile had that this one does not.
   */
  guards_removed: string[];
}
/**
 * An artifact whose payload changed. Artifacts of the two compiles are paired by name and
 * occurrence: the Nth of a name in one with the Nth of that name in the other.
 */
export interface ArtifactChange {
  /**
   * The artifact's name as `compile_directory` gives it (`ArtifactRef.name`), with `#N`
   * appended for the Nth artifact of that name in the compile (none on the first), counted in
   * log order over those with a payload or a URL (not `no_payload`).
   */
  name: string;
  /**
   * The previous compile's payload: a blob id (read it as any blob), or a `link`'s URL.
   */
  before: string;
  /**
   * This compile's payload: a blob id, or a `link`'s URL.
   */
  after: string;
}
/**
 * `tables/<stream>/runnables.json.zst`: every `fx_graph_runnable` artifact, every
 * `inductor_output_code` and every AOT Inductor C++ `graph_dump` of the stream, in log order.
 * `rows` counts `files`.
 */
export interface Runnables {
  /**
   * One row per artifact, in log order.
   */
  files: RunnableFile[];
}
/**
 * One runnable artifact.
 */
export interface RunnableFile {
  /**
   * The compile id as displayed (`[0/0]`); null for entries logged without one.
   */
  compile_id: string | null;
  /**
   * tlparse's directory name for the compile id (`-_0_0_0`; `-_-_-_-` without one).
   */
  dir: string;
  /**
   * What the artifact is.
   */
  role: RunnableRole;
  /**
   * The language of the code.
   */
  language: RunnableLanguage;
  /**
   * A file name to save it as: `{name}__{dir}.{ext}`, with `__2`, `__3`, ... before the
   * extension for later artifacts of the same name in the same compile id. `name` is the
   * artifact's `tlparse_name` when it has one, else its `name` (so output code keeps the stem
   * of the logged file name, `inductor_output_code_c25i...`, as tlparse's file does), `ext` is
   * `py` for Python, else the logged file's extension (`cpp`, `h`). Only `[A-Za-z0-9_.-]`
   * (other characters become `_`); never starts with `-` or `.`; unique in the stream; the
   * same for the same log.
   */
  file_name: string;
  /**
   * The artifact; its blob is the file's content.
   */
  artifact: ArtifactRef;
}
/**
 * `tables/<stream>/runtime_estimates.json.zst`: one row per `inductor_runtime_and_tensor_meta`
 * artifact (inductor logs one per compiled graph when runtime estimation is on), in log order.
 * `rows` counts `graphs`.
 */
export interface RuntimeEstimates {
  /**
   * One row per usable artifact, in log order.
   */
  graphs: RuntimeGraph[];
}
/**
 * The estimates of one compiled graph.
 */
export interface RuntimeGraph {
  /**
   * The compile id as displayed (`[0/1]`); null for an artifact logged outside any compile.
   * Joins with `compile_directory`, and across streams (never align by row position).
   */
  compile_id: string | null;
  /**
   * How many earlier artifacts of this kind the same compile id has in the stream (0 for the
   * first; a compile with forward and backward graphs would have 0 and 1).
   */
  occurrence: number;
  /**
   * `seq` of the artifact's entry in the stream's index.
   */
  seq: number;
  /**
   * Line of the entry's header in its input file.
   */
  line: number;
  /**
   * Blob id of the payload.
   */
  blob: string;
  /**
   * Number of ops.
   */
  op_count: number;
  /**
   * Sum of the ops' `estimated_runtime_ns`, in log order (nanoseconds).
   */
  total_estimated_runtime_ns: number;
  /**
   * Hash of the ops' names, types and outputs, without their runtimes: equal fingerprints mean
   * the same ops with the same output shapes, strides and dtypes, whatever the runtime numbers.
   * The first 16 bytes of the blake3 hash of the canonical JSON, as 32 lowercase hex digits.
   * The canonical JSON is the ops array, compact (no whitespace), each op an object with keys in
   * this order: `name`, `type`, then `outputs` only when the op had an `outputs` array (an
   * absent or null `outputs` leaves the key out, so it differs from `[]`); each output is
   * `{"shape":[..],"stride":[..],"dtype":..}` (dtype a string or `null`). Strings are written
   * as serde_json writes them (UTF-8; only `"`, `\` and control characters escaped), integers
   * in decimal. Example for one op: `[{"name":"op1","type":"compute","outputs":[{"shape":[2,3],"stride":[3,1],"dtype":"float16"}]}]`.
   */
  tensor_meta_fingerprint: string;
  /**
   * The ops in scheduler order, as logged.
   */
  ops: RuntimeOp[];
}
/**
 * One scheduled op (a kernel, an extern call or a collective).
 */
export interface RuntimeOp {
  /**
   * The op: the kernel's Python name (`extern_kernels.mm`,
   * `torch.ops._c10d_functional.all_reduce_.default`) or the scheduler node's name (`op5`,
   * `op1_op2_op4` for fused nodes).
   */
  name: string;
  /**
   * `compute` or `collective`, as logged (inductor logs `wait_tensor` as `compute`).
   */
  type: string;
  /**
   * Inductor's runtime estimate for the op, in nanoseconds.
   */
  estimated_runtime_ns: number;
  /**
   * The op's output buffers; null when the op had no `outputs` key (or a null one), which is
   * not the same as `[]` (torch logs `[]` when it could not read the buffers' layouts).
   */
  outputs: TensorMeta[] | null;
}
/**
 * `tables/<stream>/search.json.zst`: every distinct searchable name or text of the stream (the
 * compiled functions and their files, artifact names, graph-break reasons, guards, failure and
 * restart reasons) with the compiles it appears in. A viewer loads it on its first search only.
 * The full text of artifacts is not here: search it in the packs, mapping each blob to its
 * compile and name through `compile_directory`. `rows` counts `terms`.
 */
export interface Search {
  /**
   * Compile ids as displayed (`[0/1]`), in order of first appearance; `terms[].compiles`
   * refers to them by position (so a term seen in every compile costs a few bytes each).
   */
  compiles: string[];
  /**
   * Distinct (kind, text) pairs, grouped by kind in the order of [`SearchKind`], each group in
   * order of first appearance.
   */
  terms: SearchTerm[];
}
/**
 * One distinct searchable text.
 */
export interface SearchTerm {
  /**
   * What the text is, which says where a viewer shows it.
   */
  kind: SearchKind;
  /**
   * The text as logged (a guard or reason may be long: it is kept whole, so a search finds
   * any part of it).
   */
  text: string;
  /**
   * Positions in `compiles` of the compiles it appears in, ascending, each once; empty for a
   * term logged outside any compile.
   */
  compiles: number[];
}
/**
 * `tables/<stream>/stack_trie.json.zst`: the user-code stacks that triggered compiles, merged
 * into a prefix tree (tlparse's "Stack trie"), and the envelope-level stacks of entries logged
 * outside any compile (tlparse's "Unknown stacks"). Frames are ids into the stream's stack
 * table (`stacks/<stream>.json`), which holds each frame once. `rows` counts the nodes of both
 * trees.
 */
export interface StackTrie {
  /**
   * Every node of the compile trie; `roots` and `children` refer to positions in this list.
   * A node's position is always greater than its parent's.
   */
  nodes: TrieNode[];
  /**
   * The top-level nodes (outermost frames), in order of first appearance.
   */
  roots: number[];
  /**
   * The trie of envelope-level stacks (entries logged with a `stack` and no compile id);
   * its leaves list entry `seq`s instead of compile ids.
   */
  unknown_nodes: TrieNode[];
  /**
   * The top-level nodes of the unknown-stacks trie.
   */
  unknown_roots: number[];
}
/**
 * One frame in the trie: the path from a root to it is a call stack prefix.
 */
export interface TrieNode {
  /**
   * Frame id in the stream's stack table (`frames[frame]`: file, line, function, source line).
   */
  frame: number;
  /**
   * Position of the parent node; null for a root.
   */
  parent: number | null;
  /**
   * Child nodes, in order of first appearance (so roughly chronological).
   */
  children: number[];
  /**
   * Compiles whose stack ends at this frame, in log order.
   */
  compiles: TrieCompile[];
  /**
   * For the unknown-stacks trie: `seq`s of the entries whose stack ends here.
   */
  entries?: number[];
  /**
   * Number of compiles (or entries) at or below this node.
   */
  total: number;
}
/**
 * A compile id at the end of a stack.
 */
export interface TrieCompile {
  /**
   * The compile id as displayed, `[0/1]`.
   */
  compile_id: string;
  /**
   * Its status (the colour tlparse gives it).
   */
  status: CompileStatus;
}

/** The per-stream tables (`manifest.streams[i].tables`), by name. */
export interface StreamTables {
  cache_outcomes: CacheOutcomes;
  collectives: Collectives;
  compilation_metrics: CompilationMetrics;
  compile_directory: CompileDirectory;
  compile_summary: CompileSummary;
  compile_time: CompileTime;
  export_report: ExportReport;
  failures: Failures;
  graph_breaks: GraphBreaks;
  graph_execution: GraphExecution;
  graph_sizes: GraphSizes;
  guards: Guards;
  hints: Hints;
  inputs: Inputs;
  log_volume: LogVolume;
  provenance: Provenance;
  recompiles: Recompiles;
  runnables: Runnables;
  runtime_estimates: RuntimeEstimates;
  search: Search;
  stack_trie: StackTrie;
}

/** The cross-rank tables (`manifest.cross_rank.tables`), by name. */
export interface CrossRankTables {
  cache_divergence: CacheDivergence;
  collective_schedules: CollectiveSchedules;
  compile_alignment: CompileAlignment;
  compile_time_imbalance: CompileTimeImbalance;
  execution_order: ExecutionOrder;
  rank_differ: RankDiffer;
  rank_findings: RankFindings;
  runtime_estimations: RuntimeEstimations;
  tensor_meta: CrossRankTensorMeta;
}
