//! `runtime_estimations`: each graph's estimated runtime on every stream, from the streams'
//! `runtime_estimates` tables, aligned by compile id and occurrence. Also the alignment the other
//! runtime-estimate tables share.

use std::collections::{BTreeMap, BTreeSet};

use super::{CrossRankTable, StreamTables, group_streams};
use crate::schema::cross_rank::runtime_estimations::{
    GraphRuntimes, RuntimeEstimations, StreamGraphRuntime, StreamRuntime,
};
use crate::schema::tables::{RuntimeEstimates, RuntimeGraph};

/// Totals within this relative distance of each other are equal (see
/// `RuntimeEstimations::relative_tolerance`).
pub const RELATIVE_TOLERANCE: f64 = 1e-9;

/// Whether two totals are equal within [`RELATIVE_TOLERANCE`].
pub fn nearly_equal(a: f64, b: f64) -> bool {
    (a - b).abs() <= RELATIVE_TOLERANCE * a.abs().max(b.abs())
}

/// The parts of a displayed compile id (`[0/1]`, `[0/1_2]`, `[!0/1/2]`, `[!0/-/-]`) in the order
/// compile ids sort: compiled-autograd id, frame id, frame compile id, attempt (`-` is `None`;
/// no attempt is attempt 0, as displayed).
type CompileIdParts = (Option<u64>, Option<u64>, Option<u64>, u64);

fn parse_compile_id(display: &str) -> Option<CompileIdParts> {
    let inner = display.strip_prefix('[')?.strip_suffix(']')?;
    let part = |s: &str| if s == "-" { Some(None) } else { s.parse().ok().map(Some) };
    let (compiled_autograd, rest) = match inner.strip_prefix('!') {
        Some(r) => {
            let (ca, rest) = r.split_once('/')?;
            (part(ca)?, rest)
        }
        None => (None, inner),
    };
    let (frame, compile) = rest.split_once('/')?;
    let (compile, attempt) = match compile.split_once('_') {
        Some((c, a)) => (c, a.parse().ok()?),
        None => (compile, 0),
    };
    Some((compiled_autograd, part(frame)?, part(compile)?, attempt))
}

/// Where a graph sits across streams: its compile id and occurrence. Sorted by compile id (parsed),
/// then ids that do not parse (by text), then graphs logged outside any compile.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct GraphKey {
    order: (u8, Option<CompileIdParts>),
    /// The compile id as displayed; `None` outside any compile.
    pub compile_id: Option<String>,
    /// The occurrence of the artifact for that compile id in its stream.
    pub occurrence: u32,
}

impl GraphKey {
    pub fn of(g: &RuntimeGraph) -> GraphKey {
        let parsed = g.compile_id.as_deref().map(parse_compile_id);
        let order = match parsed {
            Some(Some(parts)) => (0, Some(parts)),
            Some(None) => (1, None),
            None => (2, None),
        };
        GraphKey { order, compile_id: g.compile_id.clone(), occurrence: g.occurrence }
    }
}

/// Every stream's runtime estimates, aligned by graph.
pub struct AlignedGraphs {
    /// Each stream's `runtime_estimates` table, in `streams` order; `None` when it has none.
    pub tables: Vec<Option<RuntimeEstimates>>,
    /// Each graph any stream has, in [`GraphKey`] order, with the index of its row in the table of
    /// each stream that has it (by stream index).
    pub graphs: BTreeMap<GraphKey, BTreeMap<usize, usize>>,
    /// Each stream's compile ids (displayed), from its `compile_directory`.
    compiled: Vec<BTreeSet<String>>,
}

impl AlignedGraphs {
    /// `None` when no stream has runtime estimates.
    pub fn of(streams: &[StreamTables]) -> Option<AlignedGraphs> {
        let tables: Vec<Option<RuntimeEstimates>> = streams.iter().map(|s| s.table::<RuntimeEstimates>()).collect();
        if tables.iter().all(Option::is_none) {
            return None;
        }
        let mut graphs: BTreeMap<GraphKey, BTreeMap<usize, usize>> = BTreeMap::new();
        for (i, table) in tables.iter().enumerate() {
            for (row, g) in table.iter().flat_map(|t| t.graphs.iter().enumerate()) {
                graphs.entry(GraphKey::of(g)).or_default().insert(i, row);
            }
        }
        let compiled = streams
            .iter()
            .map(|s| s.compile_directory.iter().flat_map(|d| &d.compiles).map(|c| c.compile_id.clone()).collect())
            .collect();
        Some(AlignedGraphs { tables, graphs, compiled })
    }

    /// The graph of stream `i` at row `row` of its table.
    pub fn graph(&self, i: usize, row: usize) -> &RuntimeGraph {
        &self.tables[i].as_ref().expect("aligned rows come from tables").graphs[row]
    }

    /// Streams (by index) without a `runtime_estimates` table.
    pub fn no_data(&self) -> Vec<usize> {
        self.tables.iter().enumerate().filter(|(_, t)| t.is_none()).map(|(i, _)| i).collect()
    }

    /// The ids of the streams without the graph `key`, and of those of them that compiled its
    /// compile id all the same (it is in their `compile_directory`), in `streams` order.
    pub fn missing(
        &self,
        streams: &[StreamTables],
        key: &GraphKey,
        rows: &BTreeMap<usize, usize>,
    ) -> (Vec<String>, Vec<String>) {
        let missing: Vec<usize> = (0..streams.len()).filter(|i| !rows.contains_key(i)).collect();
        let compiled: Vec<String> = match &key.compile_id {
            Some(id) => missing
                .iter()
                .filter(|&&i| self.compiled[i].contains(id))
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

    fn build(streams: &[StreamTables]) -> Option<(RuntimeEstimations, u64)> {
        let aligned = AlignedGraphs::of(streams)?;
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
                    compile_id: key.compile_id.clone(),
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
                    graphs: t.graphs.len() as u64,
                    total_estimated_runtime_ns: t.graphs.iter().map(|g| g.total_estimated_runtime_ns).sum(),
                })
            })
            .collect();
        let differing_compile_ids: Vec<Option<String>> =
            graphs.iter().filter(|g| g.differs).map(|g| g.compile_id.clone()).collect();
        let rows = graphs.len() as u64;
        Some((
            RuntimeEstimations {
                relative_tolerance: RELATIVE_TOLERANCE,
                differs: !differing_compile_ids.is_empty(),
                differing_compile_ids,
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
    fn compile_ids_parse_in_every_displayed_form() {
        assert_eq!(parse_compile_id("[0/1]"), Some((None, Some(0), Some(1), 0)));
        assert_eq!(parse_compile_id("[0/1_2]"), Some((None, Some(0), Some(1), 2)));
        assert_eq!(parse_compile_id("[!3/1/2]"), Some((Some(3), Some(1), Some(2), 0)));
        assert_eq!(parse_compile_id("[!0/-/-]"), Some((Some(0), None, None, 0)));
        assert_eq!(parse_compile_id("0/1"), None);
        assert_eq!(parse_compile_id("[x/1]"), None);
    }

    #[test]
    fn compile_ids_sort_numerically() {
        let key = |id: &str| {
            let order = parse_compile_id(id).map_or((1, None), |p| (0, Some(p)));
            GraphKey { order, compile_id: Some(id.into()), occurrence: 0 }
        };
        let mut keys = [key("[0/10]"), key("[1/0]"), key("[0/2]"), key("[0/2_1]"), key("weird")];
        keys.sort();
        let sorted: Vec<&str> = keys.iter().map(|k| k.compile_id.as_deref().unwrap()).collect();
        assert_eq!(sorted, ["[0/2]", "[0/2_1]", "[0/10]", "[1/0]", "weird"]);
    }

    #[test]
    fn tolerance_is_relative() {
        // multi_rank_runtime: rank 0's hand-edited [0/1] vs files 5/6.
        assert!(nearly_equal(13859314.55187109, 13859314.549121048));
        assert!(!nearly_equal(13859314.55187109, 13859314.55187109 * 1.000001));
        assert!(nearly_equal(0.0, 0.0));
        assert!(!nearly_equal(0.0, 1e-300));
    }
}
