//! `cache_divergence`: each stream's cache outcomes per compile id (from its `cache_outcomes`),
//! grouped, and compared compile id by compile id (from `compile_directory` for who has it).

use std::collections::{BTreeMap, BTreeSet};

use super::{CompileOrder, CompileSortKey, CrossRankTable, StreamTables, group_by};
use crate::schema::cross_rank::cache_divergence::{
    CacheDivergence, CacheDivergenceKind, CacheOutcomeItem, CacheSequenceGroup, CompileCacheOutcomes,
    CompileIdOutcomes, OutcomeGroup, StreamCacheCounts,
};
use crate::schema::tables::{CacheOutcomes, CacheResult, CompileDirectory};

pub struct CacheDivergenceTable;

/// One stream's view: its outcomes per compile id (only those with a lookup) and the compile ids
/// it has at all.
struct StreamCaches {
    outcomes: BTreeMap<CompileSortKey, CompileCacheOutcomes>,
    compile_ids: BTreeSet<String>,
}

impl CrossRankTable for CacheDivergenceTable {
    type Format = crate::schema::cross_rank::CacheDivergence;
    type Output = CacheDivergence;

    fn build(streams: &[StreamTables]) -> Option<(CacheDivergence, u64)> {
        let directories: Vec<Option<&CompileDirectory>> =
            streams.iter().map(|s| s.compile_directory.as_ref()).collect();
        let order = CompileOrder::new(directories.iter().flatten().copied());
        let per_stream: Vec<StreamCaches> = streams
            .iter()
            .zip(&directories)
            .map(|(s, dir)| {
                let mut outcomes = BTreeMap::new();
                let mut compile_ids: BTreeSet<String> =
                    dir.iter().flat_map(|d| &d.compiles).map(|c| c.compile_id.clone()).collect();
                for c in s.table::<CacheOutcomes>().into_iter().flat_map(|t| t.compiles) {
                    compile_ids.extend(c.compile_id.clone());
                    // Compared per cache, never by position: torch logs fx before aot in some
                    // versions and aot first in others.
                    let mut items: Vec<CacheOutcomeItem> = c
                        .lookups
                        .into_iter()
                        .map(|l| CacheOutcomeItem { cache: l.cache, outcome: l.outcome })
                        .collect();
                    items.sort_by(|a, b| a.cache.cmp(&b.cache));
                    if !items.is_empty() {
                        let key = order.key(c.compile_id.as_deref());
                        outcomes.insert(key, CompileCacheOutcomes { compile_id: c.compile_id, outcomes: items });
                    }
                }
                StreamCaches { outcomes, compile_ids }
            })
            .collect();
        if per_stream.iter().all(|s| s.outcomes.is_empty()) {
            return None;
        }

        let groups: Vec<CacheSequenceGroup> = group_by(
            streams
                .iter()
                .zip(&per_stream)
                .map(|(s, p)| (s.member.stream.as_str(), p.outcomes.values().cloned().collect::<Vec<_>>())),
        )
        .into_iter()
        .map(|(group, sequence)| CacheSequenceGroup { group, sequence })
        .collect();

        let rows: BTreeMap<&CompileSortKey, Option<&str>> =
            per_stream.iter().flat_map(|p| p.outcomes.iter().map(|(k, c)| (k, c.compile_id.as_deref()))).collect();
        let compile_ids: Vec<CompileIdOutcomes> = rows
            .into_iter()
            .map(|(key, compile_id)| {
                let has = |p: &StreamCaches| compile_id.is_none_or(|c| p.compile_ids.contains(c));
                let looked_up = streams
                    .iter()
                    .zip(&per_stream)
                    .filter_map(|(s, p)| Some((s.member.stream.as_str(), p.outcomes.get(key)?.outcomes.clone())));
                let groups: Vec<OutcomeGroup> =
                    group_by(looked_up).into_iter().map(|(group, outcomes)| OutcomeGroup { group, outcomes }).collect();
                let streams_where = |f: &dyn Fn(&StreamCaches) -> bool| -> Vec<String> {
                    streams
                        .iter()
                        .zip(&per_stream)
                        .filter(|(_, p)| f(p))
                        .map(|(s, _)| s.member.stream.clone())
                        .collect()
                };
                CompileIdOutcomes {
                    compile_id: compile_id.map(str::to_string),
                    differs: groups.len() > 1,
                    groups,
                    no_lookups: streams_where(&|p| has(p) && !p.outcomes.contains_key(key)),
                    missing: streams_where(&|p| !has(p)),
                }
            })
            .collect();

        let differing_compile_ids = compile_ids.iter().filter(|c| c.differs).count() as u64;
        let compile_ids_with_missing = compile_ids.iter().filter(|c| !c.missing.is_empty()).count() as u64;
        let compile_ids_without_lookups = compile_ids.iter().filter(|c| !c.no_lookups.is_empty()).count() as u64;
        let divergence = if groups.len() == 1 {
            CacheDivergenceKind::None
        } else if differing_compile_ids > 0 {
            CacheDivergenceKind::Outcomes
        } else {
            CacheDivergenceKind::MissingCompiles
        };
        let stream_counts = streams
            .iter()
            .zip(&per_stream)
            .map(|(s, p)| {
                let count = |r: CacheResult| {
                    p.outcomes.values().flat_map(|c| &c.outcomes).filter(|o| o.outcome == r).count() as u64
                };
                StreamCacheCounts {
                    stream: s.member.stream.clone(),
                    group: groups.iter().position(|g| g.group.streams.contains(&s.member.stream)).unwrap_or_default()
                        as u32,
                    compile_ids: p.outcomes.len() as u64,
                    hit: count(CacheResult::Hit),
                    miss: count(CacheResult::Miss),
                    bypass: count(CacheResult::Bypass),
                    disabled: count(CacheResult::Disabled),
                }
            })
            .collect();
        let rows = compile_ids.len() as u64;
        Some((
            CacheDivergence {
                divergence,
                groups,
                streams: stream_counts,
                compile_ids,
                differing_compile_ids,
                compile_ids_with_missing,
                compile_ids_without_lookups,
            },
            rows,
        ))
    }
}
