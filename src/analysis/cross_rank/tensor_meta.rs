//! `tensor_meta`: which streams scheduled the same ops with the same output tensor metadata, per
//! graph and over the whole run, from the `tensor_meta_fingerprint`s of the streams'
//! `runtime_estimates` tables (which leave the runtime numbers out), and which ops differ.

use std::collections::{BTreeMap, BTreeSet};

use super::runtime_estimations::{AlignedGraphs, GraphKey};
use super::{Alignment, CrossRankTable, StreamTables, group_streams};
use crate::schema::cross_rank::StreamGroup;
use crate::schema::cross_rank::tensor_meta::{
    CrossRankTensorMeta, FingerprintGroup, GraphFingerprint, GraphTensorMeta, GroupDifference, OpDifference, OpLayout,
    TensorMetaGroup,
};
use crate::schema::tables::{RuntimeEstimates, RuntimeOp};

/// Largest op-list product diffed with a full longest-common-subsequence table (4 MiB of u32);
/// longer middles (after the common prefix and suffix) are paired by position instead.
const MAX_LCS_CELLS: usize = 1 << 20;

pub struct TensorMetaTable;

impl CrossRankTable for TensorMetaTable {
    type Format = crate::schema::cross_rank::CrossRankTensorMeta;
    type Output = CrossRankTensorMeta;

    fn build(streams: &[StreamTables], alignment: &Alignment) -> Option<(CrossRankTensorMeta, u64)> {
        let aligned = AlignedGraphs::of(streams, alignment)?;
        let stream_id = |i: usize| streams[i].member.stream.clone();
        // Each graph's fingerprint groups, in order of their first stream; each keeps that
        // stream and row, whose ops the groups' differences compare.
        let grouped: Vec<Vec<(FingerprintGroup, (usize, usize))>> = aligned
            .graphs
            .values()
            .map(|rows| {
                let mut groups: Vec<(FingerprintGroup, (usize, usize))> = Vec::new();
                for (&i, &row) in rows {
                    let g = aligned.graph(i, row);
                    match groups.iter_mut().find(|(fg, _)| fg.fingerprint == g.tensor_meta_fingerprint) {
                        Some((fg, _)) => fg.group.streams.push(stream_id(i)),
                        None => groups.push((
                            FingerprintGroup {
                                group: StreamGroup { streams: vec![stream_id(i)] },
                                fingerprint: g.tensor_meta_fingerprint.clone(),
                                op_count: g.op_count,
                            },
                            (i, row),
                        )),
                    }
                }
                groups
            })
            .collect();
        let ops = compared_ops(streams, &grouped);
        let ops_of = |at: &(usize, usize)| ops.get(at).map_or(&[][..], Vec::as_slice);
        let graphs: Vec<GraphTensorMeta> = aligned
            .graphs
            .iter()
            .zip(grouped)
            .map(|((key, rows), groups)| {
                let differences = groups
                    .iter()
                    .enumerate()
                    .skip(1)
                    .map(|(n, (_, at))| GroupDifference {
                        group: n as u32,
                        ops: op_differences(ops_of(&groups[0].1), ops_of(at)),
                    })
                    .collect();
                let (missing, compiled_without_artifact) = aligned.missing(streams, key, rows);
                GraphTensorMeta {
                    compile: key.aligned.map(|a| alignment.compile_ref(a)),
                    occurrence: key.occurrence,
                    differs: groups.len() > 1,
                    groups: groups.into_iter().map(|(g, _)| g).collect(),
                    missing,
                    compiled_without_artifact,
                    differences,
                }
            })
            .collect();

        // Whole-run groups: the same graphs with the same fingerprints.
        let index: BTreeMap<&str, usize> =
            streams.iter().enumerate().map(|(i, s)| (s.member.stream.as_str(), i)).collect();
        let whole_run: Vec<(StreamGroup, Vec<(&GraphKey, &str)>)> = group_streams(streams, |s| {
            let i = index[s.member.stream.as_str()];
            aligned.tables[i].as_ref()?;
            Some(
                aligned
                    .graphs
                    .iter()
                    .filter_map(|(key, rows)| {
                        rows.get(&i).map(|&row| (key, aligned.graph(i, row).tensor_meta_fingerprint.as_str()))
                    })
                    .collect::<Vec<_>>(),
            )
        });
        let agree_where_both_have = |a: &[(&GraphKey, &str)], b: &[(&GraphKey, &str)]| {
            a.iter().all(|(key, fa)| b.iter().find(|(k, _)| k == key).is_none_or(|(_, fb)| fa == fb))
        };
        let groups: Vec<TensorMetaGroup> = whole_run
            .iter()
            .enumerate()
            .map(|(n, (group, fingerprints))| TensorMetaGroup {
                group: group.clone(),
                graphs: fingerprints
                    .iter()
                    .map(|(key, fp)| GraphFingerprint {
                        compile: key.aligned.map(|a| alignment.compile_ref(a)),
                        occurrence: key.occurrence,
                        fingerprint: fp.to_string(),
                    })
                    .collect(),
                differs_only_by_missing_from: whole_run
                    .iter()
                    .enumerate()
                    .filter(|&(m, (_, other))| m != n && agree_where_both_have(fingerprints, other))
                    .map(|(m, _)| m as u32)
                    .collect(),
            })
            .collect();

        let rows = graphs.len() as u64;
        Some((
            CrossRankTensorMeta {
                diverges: groups.len() > 1,
                fingerprints_differ: graphs.iter().any(|g| g.differs),
                groups,
                no_data: aligned.no_data().into_iter().map(stream_id).collect(),
                graphs,
            },
            rows,
        ))
    }
}

/// The ops of the rows that differing graphs compare (the first stream of each fingerprint
/// group), by (stream, row): each stream's table read once, and only by streams that have such a
/// row, so a merge never holds every rank's ops. A table that does not read back gives none
/// (and `StreamTables::damaged` names it, which fails the bundle).
fn compared_ops(
    streams: &[StreamTables],
    grouped: &[Vec<(FingerprintGroup, (usize, usize))>],
) -> BTreeMap<(usize, usize), Vec<RuntimeOp>> {
    let mut wanted: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for &(_, (i, row)) in grouped.iter().filter(|groups| groups.len() > 1).flatten() {
        wanted.entry(i).or_default().insert(row);
    }
    let mut ops = BTreeMap::new();
    for (i, rows) in wanted {
        let Some(table) = streams[i].table::<RuntimeEstimates>() else { continue };
        let graphs = table.graphs.into_iter().enumerate().filter(|(row, _)| rows.contains(row));
        ops.extend(graphs.map(|(row, g)| ((i, row), g.ops)));
    }
    ops
}

fn layout(op: &RuntimeOp) -> OpLayout {
    OpLayout { op_type: op.op_type.clone(), outputs: op.outputs.clone() }
}

/// The ops of `other` that differ from `reference`'s, paired by name (see
/// `GroupDifference::ops`).
fn op_differences(reference: &[RuntimeOp], other: &[RuntimeOp]) -> Vec<OpDifference> {
    let mut out = Vec::new();
    for (r, o) in pair_by_name(reference, other) {
        let same = match (r, o) {
            (Some(r), Some(o)) => {
                let (a, b) = (&reference[r], &other[o]);
                a.op_type == b.op_type && a.outputs == b.outputs
            }
            _ => false,
        };
        if same {
            continue;
        }
        let name = r.map_or_else(|| other[o.expect("one side is set")].name.clone(), |r| reference[r].name.clone());
        out.push(OpDifference {
            name,
            reference_index: r.map(|r| r as u64),
            other_index: o.map(|o| o as u64),
            reference: r.map(|r| layout(&reference[r])),
            other: o.map(|o| layout(&other[o])),
        });
    }
    out
}

/// Pairs the two op lists along the longest common subsequence of their names, in order; an op
/// without a partner is paired with `None`. Common prefix and suffix are paired directly; a
/// middle too large for the LCS table is paired by position.
fn pair_by_name(a: &[RuntimeOp], b: &[RuntimeOp]) -> Vec<(Option<usize>, Option<usize>)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x.name == y.name).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x.name == y.name).count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut pairs: Vec<(Option<usize>, Option<usize>)> = (0..prefix).map(|i| (Some(i), Some(i))).collect();
    let (n, m) = (a_mid.len(), b_mid.len());
    if n * m <= MAX_LCS_CELLS {
        // lcs[i][j]: LCS length of a_mid[i..] and b_mid[j..].
        let mut lcs = vec![0u32; (n + 1) * (m + 1)];
        let at = |i: usize, j: usize| i * (m + 1) + j;
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[at(i, j)] = if a_mid[i].name == b_mid[j].name {
                    lcs[at(i + 1, j + 1)] + 1
                } else {
                    lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && a_mid[i].name == b_mid[j].name {
                pairs.push((Some(prefix + i), Some(prefix + j)));
                i += 1;
                j += 1;
            } else if j == m || (i < n && lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
                pairs.push((Some(prefix + i), None));
                i += 1;
            } else {
                pairs.push((None, Some(prefix + j)));
                j += 1;
            }
        }
    } else {
        for k in 0..n.max(m) {
            pairs.push(((k < n).then_some(prefix + k), (k < m).then_some(prefix + k)));
        }
    }
    pairs.extend((0..suffix).map(|k| (Some(a.len() - suffix + k), Some(b.len() - suffix + k))));
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(names: &[&str]) -> Vec<RuntimeOp> {
        names
            .iter()
            .map(|n| RuntimeOp {
                name: n.to_string(),
                op_type: "compute".into(),
                estimated_runtime_ns: 1.0,
                outputs: None,
            })
            .collect()
    }

    #[test]
    fn an_inserted_op_does_not_shift_later_pairs() {
        let a = ops(&["mm", "all_reduce", "wait", "mm", "op13"]);
        let b = ops(&["mm", "all_reduce", "wait", "reduce_scatter", "mm", "op13"]);
        let pairs = pair_by_name(&a, &b);
        assert_eq!(
            pairs,
            [
                (Some(0), Some(0)),
                (Some(1), Some(1)),
                (Some(2), Some(2)),
                (None, Some(3)),
                (Some(3), Some(4)),
                (Some(4), Some(5))
            ]
        );
        let diff = op_differences(&a, &b);
        assert_eq!(diff.len(), 1);
        assert_eq!(
            (diff[0].name.as_str(), diff[0].reference_index, diff[0].other_index),
            ("reduce_scatter", None, Some(3))
        );
    }

    #[test]
    fn renamed_ops_are_removed_and_added() {
        let pairs = pair_by_name(&ops(&["a", "x", "c"]), &ops(&["a", "y", "c"]));
        assert_eq!(pairs, [(Some(0), Some(0)), (Some(1), None), (None, Some(1)), (Some(2), Some(2))]);
    }

    #[test]
    fn changed_outputs_are_listed_with_both_sides() {
        let a = ops(&["wait"]);
        let mut b = ops(&["wait"]);
        b[0].outputs = Some(vec![]);
        let diff = op_differences(&a, &b);
        assert_eq!(diff.len(), 1);
        assert_eq!(diff[0].reference.as_ref().unwrap().outputs, None);
        assert_eq!(diff[0].other.as_ref().unwrap().outputs, Some(vec![]));
        assert!(op_differences(&a, &a).is_empty());
    }
}
