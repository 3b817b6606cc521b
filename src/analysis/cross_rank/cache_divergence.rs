//! `cache_divergence`: each stream's cache outcomes per compile id (from its `cache_outcomes`),
//! grouped, and compared compile by compile (aligned by code; `compile_directory` says who has
//! which).

use std::collections::{BTreeMap, BTreeSet};

use indexmap::IndexSet;

use super::{Alignment, CrossRankTable, StreamTables, group_by, row_order};
use crate::schema::cross_rank::cache_divergence::{
    CacheDivergence, CacheDivergenceKind, CacheOutcomeItem, CacheSequenceGroup, CompileCacheOutcomes, CompileOutcomes,
    OutcomeGroup, StreamCacheCounts,
};
use crate::schema::tables::{CacheOutcomes, CacheResult};

pub struct CacheDivergenceTable;

/// A row's place (see `row_order`): an aligned compile, or (last) lookups outside any compile.
type RowKey = (bool, u32);

/// Every distinct list of one compile's outcomes, each once: ranks that run alike look their
/// caches up alike, so a thousand ranks' views hold each list once, and equal ids mean equal lists.
type OutcomeLists = IndexSet<Vec<CacheOutcomeItem>>;

/// One stream's view: its outcomes per aligned compile (only those with a lookup, as an index in
/// [`OutcomeLists`]; the compile's reference, which names every stream, is made once per row, not
/// kept per stream) and the aligned compiles it made at all.
struct StreamCaches {
    outcomes: BTreeMap<RowKey, usize>,
    compiles: BTreeSet<u32>,
}

impl CrossRankTable for CacheDivergenceTable {
    type Format = crate::schema::cross_rank::CacheDivergence;
    type Output = CacheDivergence;

    fn build(streams: &[StreamTables], alignment: &Alignment) -> Option<(CacheDivergence, u64)> {
        let mut lists = OutcomeLists::new();
        let per_stream: Vec<StreamCaches> = streams
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut outcomes = BTreeMap::new();
                let dir = s.compiles.iter();
                let compiles: BTreeSet<u32> = dir.filter_map(|c| alignment.aligned(i, &c.compile_id)).collect();
                for c in s.table::<CacheOutcomes>().into_iter().flat_map(|t| t.compiles) {
                    let aligned = c.compile_id.as_deref().and_then(|id| alignment.aligned(i, id));
                    if c.compile_id.is_some() && aligned.is_none() {
                        continue; // not in the stream's compile directory: nothing to align it with
                    }
                    // Compared per cache, never by position: torch logs fx before aot in some
                    // versions and aot first in others.
                    let mut items: Vec<CacheOutcomeItem> = c
                        .lookups
                        .into_iter()
                        .map(|l| CacheOutcomeItem { cache: l.cache, outcome: l.outcome })
                        .collect();
                    items.sort_by(|a, b| a.cache.cmp(&b.cache));
                    if !items.is_empty() {
                        outcomes.insert(row_order(aligned), lists.insert_full(items).0);
                    }
                }
                StreamCaches { outcomes, compiles }
            })
            .collect();
        if per_stream.iter().all(|s| s.outcomes.is_empty()) {
            return None;
        }

        // A row's compile: `row_order`'s key back to the aligned compile (None: outside any).
        let compile_of = |key: &RowKey| (!key.0).then(|| alignment.compile_ref(key.1));
        let groups: Vec<CacheSequenceGroup> =
            group_by(streams.iter().zip(&per_stream).map(|(s, p)| (s.member.stream.as_str(), &p.outcomes)))
                .into_iter()
                .map(|(group, outcomes)| CacheSequenceGroup {
                    group,
                    sequence: outcomes
                        .iter()
                        .map(|(key, &items)| CompileCacheOutcomes {
                            compile: compile_of(key),
                            outcomes: lists[items].clone(),
                        })
                        .collect(),
                })
                .collect();

        let rows: BTreeSet<&RowKey> = per_stream.iter().flat_map(|p| p.outcomes.keys()).collect();
        let compiles: Vec<CompileOutcomes> = rows
            .into_iter()
            .map(|key| (key, compile_of(key)))
            .map(|(key, compile)| {
                let aligned = (!key.0).then_some(key.1);
                let has = |p: &StreamCaches| aligned.is_none_or(|a| p.compiles.contains(&a));
                let looked_up = streams
                    .iter()
                    .zip(&per_stream)
                    .filter_map(|(s, p)| Some((s.member.stream.as_str(), *p.outcomes.get(key)?)));
                let groups: Vec<OutcomeGroup> = group_by(looked_up)
                    .into_iter()
                    .map(|(group, outcomes)| OutcomeGroup { group, outcomes: lists[outcomes].clone() })
                    .collect();
                let streams_where = |f: &dyn Fn(&StreamCaches) -> bool| -> Vec<String> {
                    streams
                        .iter()
                        .zip(&per_stream)
                        .filter(|(_, p)| f(p))
                        .map(|(s, _)| s.member.stream.clone())
                        .collect()
                };
                CompileOutcomes {
                    compile,
                    differs: groups.len() > 1,
                    groups,
                    no_lookups: streams_where(&|p| has(p) && !p.outcomes.contains_key(key)),
                    missing: streams_where(&|p| !has(p)),
                }
            })
            .collect();

        let differing_compiles = compiles.iter().filter(|c| c.differs).count() as u64;
        let compiles_with_missing = compiles.iter().filter(|c| !c.missing.is_empty()).count() as u64;
        let compiles_without_lookups = compiles.iter().filter(|c| !c.no_lookups.is_empty()).count() as u64;
        let divergence = if groups.len() == 1 {
            CacheDivergenceKind::None
        } else if differing_compiles > 0 {
            CacheDivergenceKind::Outcomes
        } else {
            CacheDivergenceKind::MissingCompiles
        };
        let stream_counts = streams
            .iter()
            .zip(&per_stream)
            .map(|(s, p)| {
                let count = |r: CacheResult| {
                    p.outcomes.values().flat_map(|&i| &lists[i]).filter(|o| o.outcome == r).count() as u64
                };
                StreamCacheCounts {
                    stream: s.member.stream.clone(),
                    group: groups.iter().position(|g| g.group.streams.contains(&s.member.stream)).unwrap_or_default()
                        as u32,
                    compiles: p.outcomes.len() as u64,
                    hit: count(CacheResult::Hit),
                    miss: count(CacheResult::Miss),
                    bypass: count(CacheResult::Bypass),
                    disabled: count(CacheResult::Disabled),
                }
            })
            .collect();
        let rows = compiles.len() as u64;
        Some((
            CacheDivergence {
                divergence,
                groups,
                streams: stream_counts,
                compiles,
                differing_compiles,
                compiles_with_missing,
                compiles_without_lookups,
            },
            rows,
        ))
    }
}
