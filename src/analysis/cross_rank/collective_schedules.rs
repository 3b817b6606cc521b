//! `collective_schedules`: the collective schedules of every stream, compile by compile (aligned
//! by code), from each stream's `collectives` table (schedules, parity, unmatched calls) and
//! `compile_directory` (which compiles the stream made at all, so that a missing compile is not
//! taken for a different schedule, which is tlparse's error: it concatenates every graph of a
//! rank).

use std::collections::{BTreeMap, BTreeSet};

use indexmap::IndexSet;

use super::{Alignment, CrossRankTable, StreamTables, group_streams};
use crate::schema::cross_rank::StreamGroup;
use crate::schema::cross_rank::collective_schedules::{
    CollectiveSchedules, CompileSchedules, ParityMismatch, ScheduleVariant, StreamParity, UnmatchedCollective,
};
use crate::schema::tables::{CacheOutcomes, Collectives, CompileCaches, CompileCollectives, UnmatchedCall};

pub struct CollectiveSchedulesTable;

/// The schedules of one compile: one op list per artifact.
type Schedules = Vec<Vec<Option<String>>>;

/// Every distinct schedule list of any stream, each once: ranks that run alike log the same
/// schedules, so a thousand ranks' views hold each list once, and equal ids mean equal lists.
type ScheduleLists = IndexSet<Schedules>;

/// What one stream says about one compile's schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ScheduleState {
    /// The stream did not make the compile.
    Missing,
    /// The stream made the compile from the FX graph or AOTAutograd cache and logged no schedule
    /// for it: Inductor did not schedule it again, so torch logged none. Unknown.
    CacheHit,
    /// The stream logs no schedule at all: unknown.
    NoData,
    /// The stream logs schedules, but none for this compile: no collective ran in it.
    NoSchedule,
    /// The stream's schedules for the compile (their index in [`ScheduleLists`]).
    Logged(usize),
}

/// One stream's inputs, read once, keeping what the table compares rather than the stream's
/// whole `collectives` table (whose output code calls and parity ops a merge of a thousand ranks
/// would otherwise hold for every rank at once).
struct StreamView {
    has_data: bool,
    /// What each aligned compile's row says (the first row of the compile id).
    rows: BTreeMap<u32, RowView>,
    /// The aligned compiles the stream made.
    compiles: BTreeSet<u32>,
    /// The aligned compiles whose graph the stream loaded from a cache ([`loaded_from_cache`]).
    cache_hits: BTreeSet<u32>,
    logs_schedules: bool,
    /// The stream's row of the table's `streams`.
    parity: StreamParity,
}

/// What the table reads of one row of a stream's `collectives`.
struct RowView {
    /// The row's schedules (index in [`ScheduleLists`]); `None` when it has none.
    schedules: Option<usize>,
    /// Whether the row's parity check found the schedules and the code disagree.
    parity_mismatch: bool,
}

impl StreamView {
    /// Whether the stream made the compile and logged a schedule for it (`state` is `Logged`).
    fn has_schedule(&self, aligned: u32) -> bool {
        self.compiles.contains(&aligned) && self.rows.get(&aligned).is_some_and(|r| r.schedules.is_some())
    }

    fn state(&self, aligned: u32) -> ScheduleState {
        if !self.compiles.contains(&aligned) {
            return ScheduleState::Missing;
        }
        match self.rows.get(&aligned).and_then(|r| r.schedules) {
            Some(list) => ScheduleState::Logged(list),
            None if self.cache_hits.contains(&aligned) => ScheduleState::CacheHit,
            None if self.logs_schedules => ScheduleState::NoSchedule,
            None => ScheduleState::NoData,
        }
    }
}

impl CrossRankTable for CollectiveSchedulesTable {
    type Format = crate::schema::cross_rank::CollectiveSchedules;
    type Output = CollectiveSchedules;

    fn findings(table: &CollectiveSchedules, headlines: &mut super::rank_findings::Headlines) {
        headlines.add_schedules(table);
    }

    fn build(streams: &[StreamTables], alignment: &Alignment) -> Option<(CollectiveSchedules, u64)> {
        let mut lists = ScheduleLists::new();
        let views: Vec<StreamView> =
            streams.iter().enumerate().map(|(i, s)| stream_view(i, s, alignment, &mut lists)).collect();
        if views.iter().all(|v| !v.has_data) {
            return None;
        }

        // Aligned compiles with a schedule on some stream, in alignment order (only the streams'
        // collectives rows can have one; `state` would copy every schedule to say so).
        let scheduled: Vec<u32> = views
            .iter()
            .flat_map(|v| v.rows.keys().copied().filter(|&a| v.has_schedule(a)))
            .collect::<BTreeSet<u32>>()
            .into_iter()
            .collect();

        let index = stream_index(streams);
        let compiles: Vec<CompileSchedules> =
            scheduled.iter().map(|&a| compile_row(streams, &views, &lists, &index, alignment, a)).collect();
        let shared: Vec<u32> =
            scheduled.iter().copied().filter(|a| views.iter().all(|v| v.compiles.contains(a))).collect();
        let groups: Vec<StreamGroup> = group_streams(streams, |s| {
            let v = &views[index[s.member.stream.as_str()]];
            Some(shared.iter().map(|&a| v.state(a)).collect::<Vec<_>>())
        })
        .into_iter()
        .map(|(g, _)| g)
        .collect();
        let stream_rows = views.into_iter().map(|v| v.parity).collect();
        let rows = compiles.len() as u64;
        let label = |a: u32| alignment.table.compiles[a as usize].label.clone();
        Some((
            CollectiveSchedules {
                diverges: compiles.iter().any(|c| c.differs),
                shared_compiles: shared.into_iter().map(label).collect(),
                groups,
                compiles,
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

/// One stream's collectives, keyed by aligned compile. Rows of compile ids the stream's compile
/// directory lacks cannot be aligned and are left out (its own parity check still reports them).
fn stream_view(i: usize, s: &StreamTables, alignment: &Alignment, lists: &mut ScheduleLists) -> StreamView {
    let collectives = s.table::<Collectives>();
    let dir = s.compiles.iter();
    let compiles: BTreeSet<u32> = dir.filter_map(|c| alignment.aligned(i, &c.compile_id)).collect();
    let mut rows = BTreeMap::new();
    for c in collectives.iter().flat_map(|t| &t.compiles) {
        if let Some(a) = c.compile_id.as_deref().and_then(|id| alignment.aligned(i, id)) {
            rows.entry(a).or_insert_with(|| RowView {
                schedules: (!c.schedules.is_empty())
                    .then(|| lists.insert_full(c.schedules.iter().map(|s| s.ops.clone()).collect()).0),
                parity_mismatch: c.parity.as_ref().is_some_and(|p| !p.matches),
            });
        }
    }
    let logs_schedules = collectives.iter().flat_map(|t| &t.compiles).any(|c| !c.schedules.is_empty());
    let parity = stream_parity(&s.member.stream, collectives.as_ref());
    let cache_hits = s
        .table::<CacheOutcomes>()
        .iter()
        .flat_map(|t| &t.compiles)
        .filter(|c| loaded_from_cache(c))
        .filter_map(|c| alignment.aligned(i, c.compile_id.as_deref()?))
        .collect();
    StreamView { has_data: collectives.is_some(), rows, compiles, cache_hits, logs_schedules, parity }
}

/// Whether a compile loaded a graph from the FX graph cache (or through the AOTAutograd cache,
/// which loads the FX graph cache's entry): Inductor does not schedule such a graph, and torch
/// logs no `inductor_collective_schedule` for it.
fn loaded_from_cache(c: &CompileCaches) -> bool {
    c.caches.iter().any(|v| (v.cache.starts_with("fx_graph") || v.cache.starts_with("aotautograd")) && v.hit > 0)
}

fn compile_row(
    streams: &[StreamTables],
    views: &[StreamView],
    lists: &ScheduleLists,
    index: &BTreeMap<&str, usize>,
    alignment: &Alignment,
    id: u32,
) -> CompileSchedules {
    let ids_where = |want: fn(&ScheduleState) -> bool| -> Vec<String> {
        streams.iter().zip(views).filter(|(_, v)| want(&v.state(id))).map(|(s, _)| s.member.stream.clone()).collect()
    };
    let grouped = group_streams(streams, |s| match views[index[s.member.stream.as_str()]].state(id) {
        ScheduleState::Logged(schedules) => Some(schedules),
        _ => None,
    });
    let reference = reference_group(grouped.iter().map(|(g, _)| g.streams.len()));
    let reference_ops: Vec<Option<String>> = reference.map(|r| lists[grouped[r].1].concat()).unwrap_or_default();
    let variants: Vec<ScheduleVariant> = grouped
        .into_iter()
        .enumerate()
        .map(|(i, (group, schedules))| {
            let schedules = lists[schedules].clone();
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
        .filter(|(_, v)| v.rows.get(&id).is_some_and(|r| r.parity_mismatch))
        .map(|(s, _)| s.member.stream.clone())
        .collect();
    CompileSchedules {
        compile: alignment.compile_ref(id),
        differs: variants.len() + usize::from(!no_schedule.is_empty()) > 1,
        reference: reference.map(|r| r as u64),
        variants,
        no_schedule,
        no_data: ids_where(|s| *s == ScheduleState::NoData),
        cache_hit: ids_where(|s| *s == ScheduleState::CacheHit),
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

fn stream_parity(stream: &str, collectives: Option<&Collectives>) -> StreamParity {
    let rows: &[CompileCollectives] = collectives.map_or(&[], |t| &t.compiles);
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
        has_data: collectives.is_some(),
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
