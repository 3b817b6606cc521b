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
    CompileTime, CompileTiming, InstantCount, OuterPhase, PhCount, Phase, PhaseTotal, UnmatchedEvent, UnmatchedSide,
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

/// Every table's schema, with its file name under the bundle's `schema/` directory.
pub fn schemas(generator: impl Fn() -> schemars::SchemaGenerator) -> Vec<(&'static str, schemars::Schema)> {
    vec![
        ("tables/compile_directory.schema.json", generator().into_root_schema_for::<CompileDirectory>()),
        ("tables/stack_trie.schema.json", generator().into_root_schema_for::<StackTrie>()),
        ("tables/failures.schema.json", generator().into_root_schema_for::<Failures>()),
        ("tables/compilation_metrics.schema.json", generator().into_root_schema_for::<CompilationMetrics>()),
        ("tables/guards.schema.json", generator().into_root_schema_for::<Guards>()),
        ("tables/inputs.schema.json", generator().into_root_schema_for::<Inputs>()),
        ("tables/recompiles.schema.json", generator().into_root_schema_for::<Recompiles>()),
        ("tables/graph_breaks.schema.json", generator().into_root_schema_for::<GraphBreaks>()),
        ("tables/graph_sizes.schema.json", generator().into_root_schema_for::<GraphSizes>()),
        ("tables/cache_outcomes.schema.json", generator().into_root_schema_for::<CacheOutcomes>()),
        ("tables/compile_time.schema.json", generator().into_root_schema_for::<CompileTime>()),
        ("tables/log_volume.schema.json", generator().into_root_schema_for::<LogVolume>()),
        ("tables/export_report.schema.json", generator().into_root_schema_for::<ExportReport>()),
        ("tables/provenance.schema.json", generator().into_root_schema_for::<Provenance>()),
        ("tables/runnables.schema.json", generator().into_root_schema_for::<Runnables>()),
        ("tables/collectives.schema.json", generator().into_root_schema_for::<Collectives>()),
        ("tables/runtime_estimates.schema.json", generator().into_root_schema_for::<RuntimeEstimates>()),
        ("tables/graph_execution.schema.json", generator().into_root_schema_for::<GraphExecution>()),
    ]
}

/// The names of every table (`tables/<stream>/<name>.json.zst`, schema
/// `schema/tables/<name>.schema.json`).
pub const NAMES: &[&str] = &[
    "compile_directory",
    "stack_trie",
    "failures",
    "compilation_metrics",
    "guards",
    "inputs",
    "recompiles",
    "graph_breaks",
    "graph_sizes",
    "cache_outcomes",
    "compile_time",
    "log_volume",
    "export_report",
    "provenance",
    "runnables",
    "collectives",
    "runtime_estimates",
    "graph_execution",
];
