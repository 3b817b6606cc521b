//! The analysis tables' types: one module per table, each file `tables/<stream>/<name>.json.zst`
//! with its schema `schema/tables/<name>.schema.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::PayloadFormat;

pub mod cache_outcomes;
pub mod collectives;
pub mod compilation_metrics;
pub mod compile_directory;
pub mod compile_summary;
pub mod compile_time;
pub mod export_report;
pub mod failures;
pub mod graph_breaks;
pub mod graph_execution;
pub mod graph_sizes;
pub mod guards;
pub mod hints;
pub mod inputs;
pub mod log_volume;
pub mod provenance;
pub mod recompiles;
pub mod runnables;
pub mod runtime_estimates;
pub mod search;
pub mod stack_trie;

pub use collectives::{
    CollectiveCall, Collectives, CollectivesSummary, CompileCollectives, OpCount, OutputCode, Parity, Schedule,
    UnmatchedCall,
};
pub use compilation_metrics::{CompilationMetrics, MetricsRow};
pub use compile_directory::{
    CacheOutcome, CodeSource, CompileArtifact, CompileDirectory, CompileEntry, CompileStatus, CompiledCode,
};
pub use compile_summary::{CompileSummary, SlowCompile};
pub use export_report::ExportReport;
pub use failures::{Failure, FailureKind, Failures};
pub use graph_breaks::{BreakFrame, GraphBreakGroup, GraphBreaks};
pub use graph_execution::{ExecutionRecording, GraphExecution, GraphRun, LegacyExecution};
pub use graph_sizes::{CompileGraphs, GraphSize, GraphSizes};
pub use guards::Guards;
pub use hints::{Hint, HintKind, Hints};
pub use inputs::Inputs;
pub use log_volume::{LogVolume, Volume, VolumeRow};
pub use provenance::{
    GraphRole, KernelStackTraces, LineMap, LineMappings, Provenance, ProvenanceCompile, ProvenanceGraph, ProvenancePane,
};
pub use recompiles::{ArtifactChange, Changes, RecompileReasonSource, RecompileStep, RecompiledFrame, Recompiles};
pub use runnables::{RunnableFile, RunnableLanguage, RunnableRole, Runnables};
pub use runtime_estimates::{RuntimeEstimates, RuntimeGraph, RuntimeOp, TensorMeta};
pub use search::{Search, SearchKind, SearchTerm};
pub use stack_trie::{StackTrie, TrieCompile, TrieNode};

pub use cache_outcomes::{
    CacheLookup, CacheLookupSource, CacheOutcomes, CacheResult, CacheSummary, CacheVerdict, CacheVerdictKind,
    CompileCaches,
};
pub use compile_time::{
    CompileTime, CompileTiming, InstantCount, OuterPhase, Overlap, PhCount, Phase, PhaseTotal, UnmatchedCause,
    UnmatchedEvent, UnmatchedSide,
};

/// A logged artifact, as tables refer to it: an entry of a named kind (`artifact`, `graph_dump`,
/// `link`, `dump_file`, `optimize_ddp_split_child`), with or without a payload, or any other entry
/// with a payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ArtifactRef {
    /// `seq` of the entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// The entry's kind (`artifact`, `dynamo_output_graph`, `inductor_output_code`, ...).
    pub kind: String,
    /// What to call it, by the one rule of [`crate::naming::artifact_names`]: the logged name of
    /// named kinds (`artifact`, `graph_dump`, `link`, `dump_file`), `optimize_ddp_split_child_`
    /// and the logged name for DDP split children, the kind otherwise (output code is
    /// `inductor_output_code`). The same for the same artifact of every compile and rank. Not
    /// unique within a compile: a training compile logs `inductor_output_code` for its forward
    /// and its backward graph (see `graph`); pick an artifact by name and occurrence (the Nth of
    /// that name, in log order), never by name alone.
    pub name: String,
    /// tlparse's name for its output file (without its `_<N>` counter and extension) when it
    /// differs from `name`: `inductor_output_code_<file stem>`, `eval_with_key_<N>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlparse_name: Option<String>,
    /// Blob id of the payload; null for links and payload-less entries.
    pub blob: Option<String>,
    /// Payload size in bytes (0 without a payload).
    pub size: u64,
    /// Payload lines (0 without a payload).
    pub lines: u64,
    /// Detected payload format; null without a payload.
    pub format: Option<PayloadFormat>,
    /// The URL of a `link` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// True (and only then present) for an entry logged without a payload that is not a link:
    /// its envelope had no `has_payload` (torch logs some artifacts so, e.g. the
    /// `inductor_provenance_tracking_*` ones on an FX graph cache hit). `blob` is then null and
    /// `size` and `lines` 0; tlparse shows such an artifact as an empty file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_payload: bool,
    /// Which AOT graph it was produced for, absent when not known or not
    /// one graph's: `aot_forward_graph`, `aot_backward_graph` and `aot_inference_graph` by their
    /// names; output code by its `# AOT ID: ['<n>_<graph>']` line; any other artifact logged
    /// inside Inductor's compile of one graph (the `fw_compiler_base` trace span: forward, or
    /// inference when the compile's AOT graph is `aot_inference_graph`; `bw_compiler`: backward,
    /// often after the compile's `compilation_metrics`) gets that graph. An AOTAutograd cache hit
    /// loads its graphs one after another inside one `AOTAutogradCache.inductor_load` span, each
    /// load ending with its `fx_graph_cache_hit`: every entry of a load gets the graph its output
    /// code names. `aot_joint_graph` (both graphs) and artifacts of a log without those spans
    /// (but output code) have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphRole>,
}
