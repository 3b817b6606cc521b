//! The analysis tables' types: one module per table, each file `tables/<stream>/<name>.json.zst`
//! with its schema `schema/tables/<name>.schema.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::PayloadFormat;

pub mod cache_outcomes;
pub mod collectives;
pub mod compilation_metrics;
pub mod compile_directory;
pub mod compile_time;
pub mod export_report;
pub mod failures;
pub mod graph_breaks;
pub mod graph_execution;
pub mod graph_sizes;
pub mod guards;
pub mod inputs;
pub mod log_volume;
pub mod provenance;
pub mod recompiles;
pub mod runnables;
pub mod runtime_estimates;
pub mod stack_trie;

pub use collectives::{
    CollectiveCall, Collectives, CollectivesSummary, CompileCollectives, OpCount, OutputCode, Parity, Schedule,
    UnmatchedCall,
};
pub use compilation_metrics::{CompilationMetrics, MetricsRow};
pub use compile_directory::{CacheOutcome, CompileDirectory, CompileEntry, CompileStatus};
pub use export_report::ExportReport;
pub use failures::{Failure, FailureKind, Failures};
pub use graph_breaks::{GraphBreakGroup, GraphBreaks};
pub use graph_execution::{ExecutionRecording, GraphExecution, GraphRun, LegacyExecution};
pub use graph_sizes::{CompileGraphs, GraphSize, GraphSizes};
pub use guards::Guards;
pub use inputs::Inputs;
pub use log_volume::{LogVolume, Volume, VolumeRow};
pub use provenance::{KernelStackTraces, LineMap, LineMappings, Provenance, ProvenanceCompile, ProvenancePane};
pub use recompiles::{ArtifactChange, Changes, RecompileStep, RecompiledFrame, Recompiles};
pub use runnables::{RunnableFile, RunnableLanguage, RunnableRole, Runnables};
pub use runtime_estimates::{RuntimeEstimates, RuntimeGraph, RuntimeOp, TensorMeta};
pub use stack_trie::{StackTrie, TrieCompile, TrieNode};

pub use cache_outcomes::{
    CacheLookup, CacheLookupSource, CacheOutcomes, CacheResult, CacheSummary, CacheVerdict, CacheVerdictKind,
    CompileCaches,
};
pub use compile_time::{
    CompileTime, CompileTiming, InstantCount, OuterPhase, Overlap, PhCount, Phase, PhaseTotal, UnmatchedCause,
    UnmatchedEvent, UnmatchedSide,
};

/// A logged artifact: an entry with a payload (or a link), as tables refer to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactRef {
    /// `seq` of the entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// The entry's kind (`artifact`, `dynamo_output_graph`, `inductor_output_code`, ...).
    pub kind: String,
    /// What to call it: the entry's name for named kinds (`artifact`, `graph_dump`, ...), the
    /// kind otherwise; `inductor_output_code` adds the stem of its `filename`.
    pub name: String,
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
}
