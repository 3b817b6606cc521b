//! `execution_order`: the order in which each stream ran its compiled graphs, from each stream's
//! `graph_execution` table, compared position by position within each recording. Legacy
//! `inductor_graph_execution` sequences (graph names, not compile ids) are compared only with
//! each other.

use std::collections::BTreeMap;

use super::collective_schedules::{first_difference, reference_group};
use super::{Alignment, CrossRankTable, StreamTables, group_streams};
use crate::schema::cross_rank::execution_order::{
    ExecutionOrder, OrderComparison, OrderDifference, OrderGroup, RecordingDifference, StreamOrder,
};
use crate::schema::tables::GraphExecution;

pub struct ExecutionOrderTable;

/// One stream's order: one list of runs per recording.
type Order = Vec<Vec<Option<String>>>;

impl CrossRankTable for ExecutionOrderTable {
    type Format = crate::schema::cross_rank::ExecutionOrder;
    type Output = ExecutionOrder;

    fn build(streams: &[StreamTables], alignment: &Alignment) -> Option<(ExecutionOrder, u64)> {
        let tables: Vec<Option<GraphExecution>> = streams.iter().map(|s| s.table::<GraphExecution>()).collect();
        // Runs are compared by what they ran (the aligned compile's label), not by compile id: a
        // rank whose frame ids are shifted runs the same graphs under other ids.
        let label = |i: usize, id: &str| match alignment.aligned(i, id) {
            Some(a) => alignment.table.compiles[a as usize].label.clone(),
            None => id.to_string(),
        };
        let recorded: Vec<Option<Order>> = tables
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let t = t.as_ref().filter(|t| !t.recordings.is_empty())?;
                let runs = |r: &crate::schema::tables::graph_execution::ExecutionRecording| -> Vec<Option<String>> {
                    r.order.iter().map(|run| run.compile_id.as_deref().map(|id| label(i, id))).collect()
                };
                Some(t.recordings.iter().map(runs).collect())
            })
            .collect();
        let legacy: Vec<Option<Order>> = tables
            .iter()
            .map(|t| {
                let t = t.as_ref().filter(|t| !t.legacy.is_empty())?;
                Some(vec![t.legacy.iter().map(|l| Some(l.graph.clone())).collect()])
            })
            .collect();
        let index: BTreeMap<&str, usize> =
            streams.iter().enumerate().map(|(i, s)| (s.member.stream.as_str(), i)).collect();
        let recorded_cmp = compare(streams, |s| recorded[index[s.member.stream.as_str()]].clone());
        let legacy_cmp = compare(streams, |s| legacy[index[s.member.stream.as_str()]].clone());
        if recorded_cmp.is_none() && legacy_cmp.is_none() {
            return None;
        }
        let group_of = |cmp: &Option<OrderComparison>, stream: &str| {
            cmp.as_ref()?.groups.iter().position(|g| g.streams.iter().any(|s| s == stream)).map(|i| i as u64)
        };
        let stream_rows: Vec<StreamOrder> = streams
            .iter()
            .zip(&recorded)
            .map(|(s, order)| StreamOrder {
                stream: s.member.stream.clone(),
                recorded_group: group_of(&recorded_cmp, &s.member.stream),
                legacy_group: group_of(&legacy_cmp, &s.member.stream),
                unknown_compile_ids: order.iter().flatten().flatten().filter(|run| run.is_none()).count() as u64,
            })
            .collect();
        let rows = stream_rows.iter().filter(|s| s.recorded_group.is_some() || s.legacy_group.is_some()).count();
        let legacy_note = legacy_cmp.as_ref().and_then(|_| tables.iter().flatten().find_map(|t| t.legacy_note.clone()));
        Some((
            ExecutionOrder {
                diverges: recorded_cmp.as_ref().is_some_and(|c| c.diverges),
                recorded: recorded_cmp,
                legacy: legacy_cmp,
                legacy_note,
                streams: stream_rows,
            },
            rows as u64,
        ))
    }
}

/// Groups the streams that have an order and compares each group with the reference; `None`
/// when no stream has one.
fn compare(streams: &[StreamTables], order: impl Fn(&StreamTables) -> Option<Order>) -> Option<OrderComparison> {
    let grouped = group_streams(streams, order);
    let reference = reference_group(grouped.iter().map(|(g, _)| g.streams.len()))?;
    let reference_order = grouped[reference].1.clone();
    let groups: Vec<OrderGroup> = grouped
        .into_iter()
        .enumerate()
        .map(|(i, (group, recordings))| OrderGroup {
            streams: group.streams,
            runs: recordings.iter().map(|r| r.len() as u64).sum(),
            difference: (i != reference).then(|| difference(&reference_order, &recordings)),
            recordings,
        })
        .collect();
    Some(OrderComparison { diverges: groups.len() > 1, reference: reference as u64, groups })
}

/// How `order` differs from `reference`, recording by recording.
fn difference(reference: &Order, order: &Order) -> OrderDifference {
    let empty = Vec::new();
    let recordings = (0..reference.len().max(order.len()))
        .filter_map(|i| {
            let a = reference.get(i).unwrap_or(&empty);
            let b = order.get(i).unwrap_or(&empty);
            let first_position = first_difference(a, b)?;
            let positions = (0..a.len().max(b.len())).filter(|&p| a.get(p) != b.get(p)).map(|p| p as u64).collect();
            Some(RecordingDifference {
                recording: i as u64,
                first_position,
                positions,
                length: b.len() as u64,
                reference_length: a.len() as u64,
            })
        })
        .collect();
    let counts = |o: &Order| {
        let mut c: BTreeMap<Option<String>, u64> = BTreeMap::new();
        for run in o.iter().flatten() {
            *c.entry(run.clone()).or_default() += 1;
        }
        c
    };
    OrderDifference { same_runs: counts(reference) == counts(order), recordings }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(recordings: &[&[&str]]) -> Order {
        recordings.iter().map(|r| r.iter().map(|c| Some(c.to_string())).collect()).collect()
    }

    #[test]
    fn positions_past_the_shorter_recording_differ() {
        let d = difference(&order(&[&["a", "b", "c"]]), &order(&[&["a", "c"], &["d"]]));
        assert!(!d.same_runs);
        assert_eq!(d.recordings.len(), 2);
        assert_eq!((d.recordings[0].first_position, d.recordings[0].positions.clone()), (1, vec![1, 2]));
        assert_eq!((d.recordings[1].recording, d.recordings[1].reference_length), (1, 0));
    }

    #[test]
    fn a_swap_keeps_the_same_runs() {
        let d = difference(&order(&[&["a", "b", "a"]]), &order(&[&["b", "a", "a"]]));
        assert!(d.same_runs);
        assert_eq!(d.recordings[0].positions, [0, 1]);
    }
}
