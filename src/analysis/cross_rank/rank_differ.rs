//! `rank_differ`: every artifact key of any stream, with the streams grouped by payload blob,
//! from the `artifacts` and `unattributed` lists of each stream's `compile_directory`, compiles
//! aligned by code.

use std::collections::{BTreeMap, HashMap};

use super::{Alignment, CrossRankTable, StreamTables, group_by, row_order};
use crate::schema::cross_rank::AlignedCompileRef;
use crate::schema::cross_rank::rank_differ::{
    ArtifactComparison, ArtifactStatus, PayloadGroup, RankDiffer, StreamDiffer,
};
use crate::schema::tables::ArtifactRef;

pub struct RankDifferTable;

/// One key's payload on each stream (by stream index): blob id and size.
struct KeyRow {
    kind: String,
    name: String,
    occurrence: u32,
    payloads: Vec<Option<(String, u64)>>,
}

/// The rows of one aligned compile, in order of first appearance, and where each key is.
#[derive(Default)]
struct CompileRows {
    compile: Option<AlignedCompileRef>,
    rows: Vec<KeyRow>,
    index: HashMap<(String, String, u32), usize>,
}

impl CompileRows {
    /// Files one stream's artifacts of this compile.
    fn add(&mut self, stream: usize, streams: usize, artifacts: &[ArtifactRef]) {
        let mut seen: HashMap<(&str, &str), u32> = HashMap::new();
        for a in artifacts {
            let Some(blob) = &a.blob else { continue };
            if a.kind == "str" || a.kind == "chromium_event" {
                continue;
            }
            // `compile_directory`'s names follow the one naming rule, which keeps content hashes
            // (output code's file name) out of names: the same artifact has one name on every rank.
            let name = a.name.as_str();
            let n = seen.entry((&a.kind, name)).or_default();
            let key = (a.kind.clone(), name.to_string(), *n);
            *n += 1;
            let i = *self.index.entry(key).or_insert_with(|| {
                self.rows.push(KeyRow {
                    kind: a.kind.clone(),
                    name: name.to_string(),
                    occurrence: *n - 1,
                    payloads: vec![None; streams],
                });
                self.rows.len() - 1
            });
            self.rows[i].payloads[stream] = Some((blob.clone(), a.size));
        }
    }
}

impl CrossRankTable for RankDifferTable {
    type Format = crate::schema::cross_rank::RankDiffer;
    type Output = RankDiffer;

    fn build(streams: &[StreamTables], alignment: &Alignment) -> Option<(RankDiffer, u64)> {
        // Keyed by aligned compile; artifacts outside any compile last.
        let mut compiles: BTreeMap<(bool, u32), CompileRows> = BTreeMap::new();
        for (i, s) in streams.iter().enumerate() {
            let Some(dir) = &s.compile_directory else { continue };
            let lists = dir.compiles.iter().map(|c| (alignment.aligned(i, &c.compile_id), &c.artifacts));
            for (aligned, artifacts) in lists.chain([(None, &dir.unattributed)]) {
                let rows = compiles.entry(row_order(aligned)).or_default();
                rows.compile = aligned.map(|a| alignment.compile_ref(a));
                rows.add(i, streams.len(), artifacts);
            }
        }

        let mut stream_rows: Vec<StreamDiffer> = streams
            .iter()
            .map(|s| StreamDiffer { stream: s.member.stream.clone(), present: 0, missing: 0, alone: 0 })
            .collect();
        let mut artifacts = Vec::new();
        for compile in compiles.into_values() {
            for row in compile.rows {
                let present = streams
                    .iter()
                    .zip(&row.payloads)
                    .filter_map(|(s, p)| Some((s.member.stream.as_str(), p.as_ref()?)));
                let groups: Vec<PayloadGroup> = group_by(present)
                    .into_iter()
                    .map(|(group, (blob, size))| PayloadGroup { group, blob: blob.clone(), size: *size })
                    .collect();
                let missing: Vec<String> = streams
                    .iter()
                    .zip(&row.payloads)
                    .filter(|(_, p)| p.is_none())
                    .map(|(s, _)| s.member.stream.clone())
                    .collect();
                for (counts, payload) in stream_rows.iter_mut().zip(&row.payloads) {
                    match payload {
                        None => counts.missing += 1,
                        Some(_) => counts.present += 1,
                    }
                }
                if groups.len() > 1 {
                    for g in groups.iter().filter(|g| g.group.streams.len() == 1) {
                        if let Some(counts) = stream_rows.iter_mut().find(|c| c.stream == g.group.streams[0]) {
                            counts.alone += 1;
                        }
                    }
                }
                let status = match (groups.len(), missing.is_empty()) {
                    (1, true) => ArtifactStatus::Identical,
                    (1, false) => ArtifactStatus::SameWherePresent,
                    _ => ArtifactStatus::Differs,
                };
                artifacts.push(ArtifactComparison {
                    compile: compile.compile.clone(),
                    kind: row.kind,
                    name: row.name,
                    occurrence: row.occurrence,
                    status,
                    groups,
                    missing,
                });
            }
        }
        if artifacts.is_empty() {
            return None;
        }
        let count = |s: ArtifactStatus| artifacts.iter().filter(|a| a.status == s).count() as u64;
        let table = RankDiffer {
            keys: artifacts.len() as u64,
            identical: count(ArtifactStatus::Identical),
            differs: count(ArtifactStatus::Differs),
            same_where_present: count(ArtifactStatus::SameWherePresent),
            with_missing: artifacts.iter().filter(|a| !a.missing.is_empty()).count() as u64,
            streams: stream_rows,
            artifacts,
        };
        let rows = table.keys;
        Some((table, rows))
    }
}
