//! The one list of the format's tables: each table's name, Rust type and JSON Schema live here
//! together, and everything else (file paths, schema files, the reader, the compiler's writers)
//! takes them from it.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::schema::cross_rank::*;
use crate::schema::tables::*;

/// Whether a table describes one stream or compares the streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `tables/<stream>/<name>.json.zst`, schema `schema/tables/<name>.schema.json`.
    Stream,
    /// `tables/cross_rank/<name>.json.zst`, schema `schema/cross_rank/<name>.schema.json`.
    CrossRank,
}

/// A table of the format, implemented by the Rust type of its JSON.
pub trait Table: Serialize + DeserializeOwned + JsonSchema {
    /// The table's name, as in file names and the manifest's `tables` maps.
    const NAME: &'static str;
    const SCOPE: Scope;
}

/// What the registry knows of one table.
#[derive(Debug, Clone, Copy)]
pub struct TableInfo {
    pub name: &'static str,
    pub scope: Scope,
    schema: fn(SchemaGenerator) -> Schema,
}

impl TableInfo {
    /// The table's schema file, relative to the bundle's `schema/` directory.
    pub fn schema_file(&self) -> String {
        match self.scope {
            Scope::Stream => format!("tables/{}.schema.json", self.name),
            Scope::CrossRank => format!("cross_rank/{}.schema.json", self.name),
        }
    }

    /// The table's JSON Schema, made with `generator`.
    pub fn schema(&self, generator: SchemaGenerator) -> Schema {
        (self.schema)(generator)
    }
}

macro_rules! registry {
    ($($scope:ident { $($name:ident: $ty:ty),* $(,)? })*) => {
        $($(impl Table for $ty {
            const NAME: &'static str = stringify!($name);
            const SCOPE: Scope = Scope::$scope;
        })*)*

        /// Every table, stream tables first, each group in the order the format lists them.
        pub const TABLES: &[TableInfo] = &[$($(TableInfo {
            name: stringify!($name),
            scope: Scope::$scope,
            schema: |g| g.into_root_schema_for::<$ty>(),
        },)*)*];
    };
}

registry! {
    Stream {
        compile_directory: CompileDirectory,
        stack_trie: StackTrie,
        failures: Failures,
        compilation_metrics: CompilationMetrics,
        guards: Guards,
        inputs: Inputs,
        recompiles: Recompiles,
        graph_breaks: GraphBreaks,
        graph_sizes: GraphSizes,
        cache_outcomes: CacheOutcomes,
        compile_time: CompileTime,
        log_volume: LogVolume,
        export_report: ExportReport,
        provenance: Provenance,
        runnables: Runnables,
        collectives: Collectives,
        runtime_estimates: RuntimeEstimates,
        graph_execution: GraphExecution,
        search: Search,
        compile_summary: CompileSummary,
        hints: Hints,
    }
    CrossRank {
        compile_alignment: CompileAlignment,
        cache_divergence: CacheDivergence,
        compile_time_imbalance: CompileTimeImbalance,
        rank_differ: RankDiffer,
        collective_schedules: CollectiveSchedules,
        execution_order: ExecutionOrder,
        runtime_estimations: RuntimeEstimations,
        tensor_meta: CrossRankTensorMeta,
        rank_findings: RankFindings,
    }
}

/// The tables of one scope, in registry order.
pub fn tables(scope: Scope) -> impl Iterator<Item = &'static TableInfo> {
    TABLES.iter().filter(move |t| t.scope == scope)
}

/// The table of that scope and name, if the format has one.
pub fn find(scope: Scope, name: &str) -> Option<&'static TableInfo> {
    tables(scope).find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_a_scope_and_types_say_theirs() {
        for t in TABLES {
            assert_eq!(tables(t.scope).filter(|o| o.name == t.name).count(), 1, "{}", t.name);
        }
        assert_eq!(<CompileDirectory as Table>::NAME, "compile_directory");
        assert_eq!(<CompileAlignment as Table>::SCOPE, Scope::CrossRank);
        assert_eq!(find(Scope::Stream, "compile_alignment").map(|t| t.name), None);
    }
}
