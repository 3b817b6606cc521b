//! `compile_ids`: which streams compiled which compile ids, from each stream's
//! `compile_directory`.

use std::collections::BTreeMap;

use super::{CrossRankTable, StreamTables, group_streams};
use crate::schema::CompileId;
use crate::schema::cross_rank::compile_ids::{CompileIdGroup, CompileIdPresence, CompileIds, StreamStatus};
use crate::schema::tables::{CompileDirectory, CompileStatus};

pub struct CompileIdsTable;

impl CrossRankTable for CompileIdsTable {
    type Format = crate::schema::cross_rank::CompileIds;
    type Output = CompileIds;

    fn build(streams: &[StreamTables]) -> Option<(CompileIds, u64)> {
        let directories: Vec<Option<&CompileDirectory>> =
            streams.iter().map(|s| s.compile_directory.as_ref()).collect();
        // Compile id → (display, status per stream index).
        let mut all: BTreeMap<CompileId, (String, BTreeMap<usize, CompileStatus>)> = BTreeMap::new();
        for (i, dir) in directories.iter().enumerate() {
            for c in dir.iter().flat_map(|d| &d.compiles) {
                all.entry(c.cid).or_insert_with(|| (c.compile_id.clone(), BTreeMap::new())).1.insert(i, c.status);
            }
        }
        if all.is_empty() {
            return None;
        }
        let compile_ids: Vec<CompileIdPresence> = all
            .iter()
            .map(|(cid, (display, statuses))| {
                let present: Vec<StreamStatus> = statuses
                    .iter()
                    .map(|(&i, &status)| StreamStatus { stream: streams[i].member.stream.clone(), status })
                    .collect();
                CompileIdPresence {
                    compile_id: display.clone(),
                    cid: *cid,
                    status_differs: present.iter().any(|p| p.status != present[0].status),
                    present,
                    missing: (0..streams.len())
                        .filter(|i| !statuses.contains_key(i))
                        .map(|i| streams[i].member.stream.clone())
                        .collect(),
                }
            })
            .collect();
        let index: BTreeMap<&str, usize> =
            streams.iter().enumerate().map(|(i, s)| (s.member.stream.as_str(), i)).collect();
        let groups: Vec<CompileIdGroup> = group_streams(streams, |s| {
            let i = index[s.member.stream.as_str()];
            Some(all.values().filter(|(_, st)| st.contains_key(&i)).map(|(d, _)| d.clone()).collect::<Vec<_>>())
        })
        .into_iter()
        .map(|(group, compile_ids)| CompileIdGroup { group, compile_ids })
        .collect();
        let rows = compile_ids.len() as u64;
        Some((CompileIds { diverges: groups.len() > 1, groups, compile_ids }, rows))
    }
}
