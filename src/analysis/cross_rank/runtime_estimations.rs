//! `runtime_estimations`: each graph's estimated runtime on every stream, from the streams'
//! `runtime_estimates` tables, aligned by compile (by code: `compile_alignment`) and occurrence. Also the alignment the other
//! runtime-estimate tables share.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::{Alignment, CrossRankTable, StreamTables, group_streams, row_order};
use crate::schema::cross_rank::runtime_estimations::{
    GraphRuntimes, RuntimeEstimations, StreamGraphRuntime, StreamRuntime,
};
use crate::schema::tables::RuntimeEstimates;

/// Totals within this relative distance of each other are equal (see
/// `RuntimeEstimations::relative_tolerance`).
pub const RELATIVE_TOLERANCE: f64 = 1e-9;

/// Whether two totals are equal within [`RELATIVE_TOLERANCE`].
pub fn nearly_equal(a: f64, b: f64) -> bool {
    (a - b).abs() <= RELATIVE_TOLERANCE * a.abs().max(b.abs())
}

/// Where a graph sits across streams: its aligned compile and its occurrence there. Sorted as
/// `row_order` sorts compiles (graphs logged outside any compile last), then by occurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphKey {
    /// The aligned compile (see `compile_alignment`); `None` outside any compile.
    pub aligned: Option<u32>,
    /// The occurrence of the artifact for that compile in its stream.
    pub occurrence: u32,
}

impl GraphKey {
    /// The key of stream `i`'s graph `g`; `None` when its compile id is not in the stream's
    /// compile directory (nothing to align it by).
    fn of(i: usize, g: &GraphSummary, alignment: &Alignment) -> Option<GraphKey> {
        let aligned = match &g.compile_id {
            Some(id) => Some(alignment.aligned(i, id)?),
            None => None,
        };
        Some(GraphKey { aligned, occurrence: g.occurrence })
    }
}

impl Ord for GraphKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (row_order(self.aligned), self.occurrence).cmp(&(row_order(other.aligned), other.occurrence))
    }
}

impl PartialOrd for GraphKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A row of a stream's `runtime_estimates` table without its ops: what aligning and comparing
/// graphs across streams reads. A merge of a thousand ranks held every rank's ops at once before
/// (a third of its peak heap at 200 ranks); the ops are read again, one stream at a time, by
/// what needs them.
#[derive(Debug, Deserialize)]
pub struct GraphSummary {
    pub compile_id: Option<String>,
    pub occurrence: u32,
    pub op_count: u64,
    pub total_estimated_runtime_ns: f64,
    pub tensor_meta_fingerprint: String,
}

/// A `runtime_estimates` table read as [`GraphSummary`] rows (the fields it leaves out are
/// skipped unbuilt).
#[derive(Deserialize)]
struct GraphSummaries {
    graphs: Vec<GraphSummary>,
}

/// Every stream's runtime estimates, aligned by graph.
pub struct AlignedGraphs {
    /// Each stream's `runtime_estimates` rows, in `streams` order; `None` when it has no table.
    pub tables: Vec<Option<Vec<GraphSummary>>>,
    /// Each graph any stream has, in [`GraphKey`] order, with the index of its row in the table of
    /// each stream that has it (by stream index).
    pub graphs: BTreeMap<GraphKey, BTreeMap<usize, usize>>,
    /// The key of each stream's rows (by stream index, then row).
    pub keys: Vec<Vec<Option<GraphKey>>>,
    /// Each stream's aligned compiles, from its `compile_directory`.
    compiled: Vec<BTreeSet<u32>>,
}

impl AlignedGraphs {
    /// `None` when no stream has runtime estimates.
    pub fn of(streams: &[StreamTables], alignment: &Alignment) -> Option<AlignedGraphs> {
        let tables: Vec<Option<Vec<GraphSummary>>> =
            streams.iter().map(|s| s.table_as::<RuntimeEstimates, GraphSummaries>().map(|t| t.graphs)).collect();
        if tables.iter().all(Option::is_none) {
            return None;
        }
        let keys: Vec<Vec<Option<GraphKey>>> = tables
            .iter()
            .enumerate()
            .map(|(i, t)| t.iter().flatten().map(|g| GraphKey::of(i, g, alignment)).collect())
            .collect();
        let mut graphs: BTreeMap<GraphKey, BTreeMap<usize, usize>> = BTreeMap::new();
        for (i, rows) in keys.iter().enumerate() {
            for (row, key) in rows.iter().enumerate() {
                if let Some(key) = key {
                    graphs.entry(key.clone()).or_default().insert(i, row);
                }
            }
        }
        let compiled = streams
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let dir = s.compiles.iter();
                dir.filter_map(|c| alignment.aligned(i, &c.compile_id)).collect()
            })
            .collect();
        Some(AlignedGraphs { tables, graphs, keys, compiled })
    }

    /// The graph of stream `i` at row `row` of its table.
    pub fn graph(&self, i: usize, row: usize) -> &GraphSummary {
        &self.tables[i].as_ref().expect("aligned rows come from tables")[row]
    }

    /// Streams (by index) without a `runtime_estimates` table.
    pub fn no_data(&self) -> Vec<usize> {
        self.tables.iter().enumerate().filter(|(_, t)| t.is_none()).map(|(i, _)| i).collect()
    }

    /// The ids of the streams without the graph `key`, and of those of them that made its
    /// compile all the same (it is in their `compile_directory`), in `streams` order.
    pub fn missing(
        &self,
        streams: &[StreamTables],
        key: &GraphKey,
        rows: &BTreeMap<usize, usize>,
    ) -> (Vec<String>, Vec<String>) {
        let missing: Vec<usize> = (0..streams.len()).filter(|i| !rows.contains_key(i)).collect();
        let compiled: Vec<String> = match key.aligned {
            Some(a) => missing
                .iter()
                .filter(|&&i| self.compiled[i].contains(&a))
                .map(|&i| streams[i].member.stream.clone())
                .collect(),
            None => Vec::new(),
        };
        (missing.iter().map(|&i| streams[i].member.stream.clone()).collect(), compiled)
    }
}

/// A stream's totals per graph, equal to another's when the graphs are the same and each total
/// is equal within the tolerance.
struct Totals<'a>(Vec<(&'a GraphKey, f64)>);

impl PartialEq for Totals<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self.0.iter().zip(&other.0).all(|((ka, a), (kb, b))| ka == kb && nearly_equal(*a, *b))
    }
}

pub struct RuntimeEstimationsTable;

impl CrossRankTable for RuntimeEstimationsTable {
    type Format = crate::schema::cross_rank::RuntimeEstimations;
    type Output = RuntimeEstimations;

    fn build(streams: &[StreamTables], alignment: &Alignment) -> Option<(RuntimeEstimations, u64)> {
        let aligned = AlignedGraphs::of(streams, alignment)?;
        let stream_id = |i: usize| streams[i].member.stream.clone();
        let graphs: Vec<GraphRuntimes> = aligned
            .graphs
            .iter()
            .map(|(key, rows)| {
                let totals: Vec<StreamGraphRuntime> = rows
                    .iter()
                    .map(|(&i, &row)| {
                        let g = aligned.graph(i, row);
                        StreamGraphRuntime {
                            stream: stream_id(i),
                            total_estimated_runtime_ns: g.total_estimated_runtime_ns,
                            op_count: g.op_count,
                        }
                    })
                    .collect();
                let fastest_ns = totals.iter().map(|t| t.total_estimated_runtime_ns).fold(f64::INFINITY, f64::min);
                let slowest_ns = totals.iter().map(|t| t.total_estimated_runtime_ns).fold(f64::NEG_INFINITY, f64::max);
                let near = |target: f64| -> Vec<String> {
                    totals
                        .iter()
                        .filter(|t| nearly_equal(t.total_estimated_runtime_ns, target))
                        .map(|t| t.stream.clone())
                        .collect()
                };
                let delta_ns = slowest_ns - fastest_ns;
                let (missing, compiled_without_estimate) = aligned.missing(streams, key, rows);
                GraphRuntimes {
                    compile: key.aligned.map(|a| alignment.compile_ref(a)),
                    occurrence: key.occurrence,
                    fastest: near(fastest_ns),
                    slowest: near(slowest_ns),
                    totals,
                    missing,
                    compiled_without_estimate,
                    fastest_ns,
                    slowest_ns,
                    delta_ns,
                    delta_percent: (fastest_ns != 0.0).then(|| delta_ns / fastest_ns * 100.0),
                    differs: !nearly_equal(fastest_ns, slowest_ns),
                }
            })
            .collect();

        let index: BTreeMap<&str, usize> =
            streams.iter().enumerate().map(|(i, s)| (s.member.stream.as_str(), i)).collect();
        let groups = group_streams(streams, |s| {
            let i = index[s.member.stream.as_str()];
            aligned.tables[i].as_ref()?;
            Some(Totals(
                aligned
                    .graphs
                    .iter()
                    .filter_map(|(key, rows)| {
                        rows.get(&i).map(|&row| (key, aligned.graph(i, row).total_estimated_runtime_ns))
                    })
                    .collect(),
            ))
        })
        .into_iter()
        .map(|(group, _)| group)
        .collect();

        let stream_totals: Vec<StreamRuntime> = aligned
            .tables
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let t = t.as_ref()?;
                Some(StreamRuntime {
                    stream: stream_id(i),
                    graphs: t.len() as u64,
                    total_estimated_runtime_ns: t.iter().map(|g| g.total_estimated_runtime_ns).sum(),
                })
            })
            .collect();
        let differing_compiles: Vec<Option<String>> =
            graphs.iter().filter(|g| g.differs).map(|g| g.compile.as_ref().map(|c| c.label.clone())).collect();
        let rows = graphs.len() as u64;
        Some((
            RuntimeEstimations {
                relative_tolerance: RELATIVE_TOLERANCE,
                differs: !differing_compiles.is_empty(),
                differing_compiles,
                groups,
                streams: stream_totals,
                no_data: aligned.no_data().into_iter().map(stream_id).collect(),
                graphs,
            },
            rows,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_is_relative() {
        // multi_rank_runtime: rank 0's hand-edited [0/1] vs files 5/6.
        assert!(nearly_equal(13859314.55187109, 13859314.549121048));
        assert!(!nearly_equal(13859314.55187109, 13859314.55187109 * 1.000001));
        assert!(nearly_equal(0.0, 0.0));
        assert!(!nearly_equal(0.0, 1e-300));
    }
}
