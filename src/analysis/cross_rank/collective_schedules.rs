//! `collective_schedules`: the collective schedules of every stream aligned by compile id, from
//! each stream's `collectives` table (schedules, parity, unmatched calls) and `compile_directory`
//! (which compile ids the stream has at all, so that a missing compile is not taken for a
//! different schedule, which is tlparse's error: it concatenates every graph of a rank).

use std::collections::{BTreeMap, BTreeSet};

use super::{CrossRankTable, StreamTables, group_streams};
use crate::schema::CompileId;
use crate::schema::cross_rank::StreamGroup;
use crate::schema::cross_rank::collective_schedules::{
    CollectiveSchedules, CompileIdSchedules, ParityMismatch, ScheduleVariant, StreamParity, UnmatchedCollective,
};
use crate::schema::tables::{Collectives, CompileCollectives, UnmatchedCall};

pub struct CollectiveSchedulesTable;

/// The schedules of one compile id: one op list per artifact.
type Schedules = Vec<Vec<Option<String>>>;

/// What one stream says about one compile id's schedule.
#[derive(Debug, Clone, PartialEq)]
enum ScheduleState {
    /// The stream does not have the compile id.
    Missing,
    /// The stream logs no schedule at all: unknown.
    NoData,
    /// The stream logs schedules, but none for this compile id: no collective ran in it.
    NoSchedule,
    /// The stream's schedules for the compile id.
    Logged(Schedules),
}

/// One stream's inputs, read once.
struct StreamView {
    collectives: Option<Collectives>,
    /// Position of each compile id's row in `collectives`.
    rows: BTreeMap<String, usize>,
    /// Compile ids the stream has (compile directory and collectives rows), as displayed.
    compile_ids: BTreeSet<String>,
    logs_schedules: bool,
}

impl StreamView {
    fn row(&self, compile_id: &str) -> Option<&CompileCollectives> {
        Some(&self.collectives.as_ref()?.compiles[*self.rows.get(compile_id)?])
    }

    fn state(&self, compile_id: &str) -> ScheduleState {
        if !self.compile_ids.contains(compile_id) {
            return ScheduleState::Missing;
        }
        match self.row(compile_id).filter(|r| !r.schedules.is_empty()) {
            Some(r) => ScheduleState::Logged(r.schedules.iter().map(|s| s.ops.clone()).collect()),
            None if self.logs_schedules => ScheduleState::NoSchedule,
            None => ScheduleState::NoData,
        }
    }
}

impl CrossRankTable for CollectiveSchedulesTable {
    type Format = crate::schema::cross_rank::CollectiveSchedules;
    type Output = CollectiveSchedules;

    fn build(streams: &[StreamTables]) -> Option<(CollectiveSchedules, u64)> {
        let mut order: BTreeMap<String, Option<CompileId>> = BTreeMap::new();
        let views: Vec<StreamView> = streams
            .iter()
            .map(|s| {
                let collectives = s.table::<Collectives>();
                let mut compile_ids = BTreeSet::new();
                for c in s.compile_directory.iter().flat_map(|d| d.compiles.iter()) {
                    order.insert(c.compile_id.clone(), Some(c.cid));
                    compile_ids.insert(c.compile_id.clone());
                }
                let mut rows = BTreeMap::new();
                for (i, c) in collectives.iter().flat_map(|t| t.compiles.iter().enumerate()) {
                    if let Some(id) = &c.compile_id {
                        order.entry(id.clone()).or_insert(None);
                        compile_ids.insert(id.clone());
                        rows.entry(id.clone()).or_insert(i);
                    }
                }
                let logs_schedules = collectives.iter().flat_map(|t| &t.compiles).any(|c| !c.schedules.is_empty());
                StreamView { collectives, rows, compile_ids, logs_schedules }
            })
            .collect();
        if views.iter().all(|v| v.collectives.is_none()) {
            return None;
        }

        // Compile ids with a schedule on some stream, in compile-id order (ids no compile
        // directory knows, never seen, last by their display).
        let mut scheduled: Vec<&String> =
            order.keys().filter(|id| views.iter().any(|v| matches!(v.state(id), ScheduleState::Logged(_)))).collect();
        scheduled.sort_by_key(|id| (order[*id].is_none(), order[*id], (*id).clone()));

        let index = stream_index(streams);
        let compile_ids: Vec<CompileIdSchedules> =
            scheduled.iter().map(|id| compile_id_row(streams, &views, &index, id)).collect();
        let shared: Vec<&String> =
            scheduled.iter().copied().filter(|id| views.iter().all(|v| v.compile_ids.contains(*id))).collect();
        let groups: Vec<StreamGroup> = group_streams(streams, |s| {
            let v = &views[index[s.member.stream.as_str()]];
            Some(shared.iter().map(|id| v.state(id)).collect::<Vec<_>>())
        })
        .into_iter()
        .map(|(g, _)| g)
        .collect();
        let stream_rows = streams.iter().zip(&views).map(|(s, v)| stream_parity(&s.member.stream, v)).collect();
        let rows = compile_ids.len() as u64;
        Some((
            CollectiveSchedules {
                diverges: compile_ids.iter().any(|c| c.differs),
                shared_compile_ids: shared.into_iter().cloned().collect(),
                groups,
                compile_ids,
                streams: stream_rows,
            },
            rows,
        ))
    }
}

/// Stream id → position in `streams`.
fn stream_index(streams: &[StreamTables]) -> BTreeMap<&str, usize> {
    streams.iter().enumerate().map(|(i, s)| (s.member.stream.as_str(), i)).collect()
}

/// Index of the group with the most streams, the first one on ties.
pub(super) fn reference_group(sizes: impl Iterator<Item = usize>) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (i, n) in sizes.enumerate() {
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((i, n));
        }
    }
    best.map(|(i, _)| i)
}

fn compile_id_row(
    streams: &[StreamTables],
    views: &[StreamView],
    index: &BTreeMap<&str, usize>,
    id: &str,
) -> CompileIdSchedules {
    let ids_where = |want: fn(&ScheduleState) -> bool| -> Vec<String> {
        streams.iter().zip(views).filter(|(_, v)| want(&v.state(id))).map(|(s, _)| s.member.stream.clone()).collect()
    };
    let grouped = group_streams(streams, |s| match views[index[s.member.stream.as_str()]].state(id) {
        ScheduleState::Logged(schedules) => Some(schedules),
        _ => None,
    });
    let reference = reference_group(grouped.iter().map(|(g, _)| g.streams.len()));
    let reference_ops: Vec<Option<String>> = reference.map(|r| grouped[r].1.concat()).unwrap_or_default();
    let variants: Vec<ScheduleVariant> = grouped
        .into_iter()
        .enumerate()
        .map(|(i, (group, schedules))| {
            let ops = schedules.concat();
            let is_reference = Some(i) == reference;
            ScheduleVariant {
                streams: group.streams,
                lacks: if is_reference { Vec::new() } else { multiset_minus(&reference_ops, &ops) },
                extra: if is_reference { Vec::new() } else { multiset_minus(&ops, &reference_ops) },
                first_difference: (!is_reference).then(|| first_difference(&reference_ops, &ops)).flatten(),
                schedules,
            }
        })
        .collect();
    let no_schedule = ids_where(|s| *s == ScheduleState::NoSchedule);
    let parity_mismatches = streams
        .iter()
        .zip(views)
        .filter(|(_, v)| v.row(id).and_then(|r| r.parity.as_ref()).is_some_and(|p| !p.matches))
        .map(|(s, _)| s.member.stream.clone())
        .collect();
    CompileIdSchedules {
        compile_id: id.to_string(),
        differs: variants.len() + usize::from(!no_schedule.is_empty()) > 1,
        reference: reference.map(|r| r as u64),
        variants,
        no_schedule,
        no_data: ids_where(|s| *s == ScheduleState::NoData),
        missing: ids_where(|s| *s == ScheduleState::Missing),
        parity_mismatches,
    }
}

/// The elements of `a` that `b` lacks, counting repeats, in `a`'s order.
fn multiset_minus(a: &[Option<String>], b: &[Option<String>]) -> Vec<Option<String>> {
    let mut available: BTreeMap<&Option<String>, usize> = BTreeMap::new();
    for x in b {
        *available.entry(x).or_default() += 1;
    }
    a.iter()
        .filter(|x| match available.get_mut(x) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

/// The first position where two sequences differ (the shorter one's length when one is a prefix
/// of the other); `None` when they are equal.
pub(super) fn first_difference<T: PartialEq>(a: &[T], b: &[T]) -> Option<u64> {
    let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    (common < a.len().max(b.len())).then_some(common as u64)
}

fn stream_parity(stream: &str, view: &StreamView) -> StreamParity {
    let rows: &[CompileCollectives] = view.collectives.as_ref().map_or(&[], |t| &t.compiles);
    let unmatched = |pick: fn(&CompileCollectives) -> &Vec<UnmatchedCall>| -> Vec<UnmatchedCollective> {
        rows.iter()
            .flat_map(|r| {
                pick(r).iter().map(|u| UnmatchedCollective {
                    compile_id: r.compile_id.clone(),
                    op: u.op.clone(),
                    handle: u.handle.clone(),
                    line: u.line,
                    blob: u.blob.clone(),
                })
            })
            .collect()
    };
    StreamParity {
        stream: stream.to_string(),
        has_data: view.collectives.is_some(),
        with_schedule: rows.iter().filter(|r| r.compile_id.is_some() && !r.schedules.is_empty()).count() as u64,
        parity_checked: rows.iter().filter(|r| r.parity.is_some()).count() as u64,
        parity_mismatches: rows
            .iter()
            .filter_map(|r| {
                let p = r.parity.as_ref().filter(|p| !p.matches)?;
                Some(ParityMismatch {
                    compile_id: r.compile_id.clone(),
                    ops: p.ops.iter().filter(|o| !o.matches).cloned().collect(),
                    only_in_schedule: p.only_in_schedule.clone(),
                    only_in_code: p.only_in_code.clone(),
                    tlparse_offset: p.tlparse_offset,
                    tlparse_missing_waits: p.tlparse_missing_waits,
                })
            })
            .collect(),
        unmatched_collectives: unmatched(|r| &r.unmatched),
        unmatched_waits: unmatched(|r| &r.unmatched_waits),
        schedules_outside_compiles: rows
            .iter()
            .filter(|r| r.compile_id.is_none())
            .map(|r| r.schedules.len() as u64)
            .sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(names: &[&str]) -> Vec<Option<String>> {
        names.iter().map(|n| Some(n.to_string())).collect()
    }

    #[test]
    fn lacks_and_extra_count_repeats() {
        let reference = ops(&["ar", "w", "ag", "rs", "w", "w"]);
        let other = ops(&["ar", "w", "ag", "w"]);
        assert_eq!(multiset_minus(&reference, &other), ops(&["rs", "w"]));
        assert!(multiset_minus(&other, &reference).is_empty());
        assert_eq!(first_difference(&reference, &other), Some(3));
        assert_eq!(first_difference(&reference, &reference), None);
        assert_eq!(first_difference(&other[..2], &other), Some(2));
    }

    #[test]
    fn the_reference_is_the_largest_group_first_on_ties() {
        assert_eq!(reference_group([1, 2, 2].into_iter()), Some(1));
        assert_eq!(reference_group([1, 1].into_iter()), Some(0));
        assert_eq!(reference_group(std::iter::empty()), None);
    }
}
