//! `rank_differ`: every artifact key of any stream, with the streams grouped by payload blob,
//! from the `artifacts` and `unattributed` lists of each stream's `compile_directory`, compiles
//! aligned by code.

use std::collections::{BTreeMap, HashMap};

use super::{Alignment, CrossRankTable, StreamTables, row_order};
use crate::schema::cross_rank::AlignedCompileLabel;
use crate::schema::cross_rank::rank_differ::{
    ArtifactComparison, ArtifactStatus, PayloadGroup, RankDiffer, StreamDiffer,
};
use crate::schema::tables::{ArtifactRef, CompileDirectory};

pub struct RankDifferTable;

/// One key's payloads: the streams (by index, in order) of each distinct payload (an index
/// into `Payloads`), groups in order of their first stream. Four bytes a stream that has the key.
struct KeyRow {
    kind: String,
    name: String,
    occurrence: u32,
    groups: Vec<(u32, Vec<u32>)>,
}

/// Each distinct payload (blob id, size) once, numbered.
#[derive(Default)]
struct Payloads {
    ids: HashMap<(String, u64), u32>,
    list: Vec<(String, u64)>,
}

impl Payloads {
    fn id(&mut self, blob: &str, size: u64) -> u32 {
        if let Some(&id) = self.ids.get(&(blob.to_string(), size)) {
            return id;
        }
        let id = self.list.len() as u32;
        self.list.push((blob.to_string(), size));
        self.ids.insert((blob.to_string(), size), id);
        id
    }
}

/// The rows of one aligned compile, in order of first appearance, and where each key is.
#[derive(Default)]
struct CompileRows {
    compile: Option<u32>,
    rows: Vec<KeyRow>,
    index: HashMap<(String, String, u32), usize>,
}

impl CompileRows {
    /// Files one stream's artifacts of this compile (streams are filed in order).
    fn add(&mut self, stream: u32, artifacts: &[ArtifactRef], payloads: &mut Payloads) {
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
                    groups: Vec::new(),
                });
                self.rows.len() - 1
            });
            let payload = payloads.id(blob, a.size);
            let groups = &mut self.rows[i].groups;
            // Streams are filed in order, so a stream that filed this key already (two of its
            // compiles aligned as one) is the last of its group: its last payload counts.
            if let Some(k) = groups.iter().position(|(_, g)| g.last() == Some(&stream)) {
                groups[k].1.pop();
                if groups[k].1.is_empty() {
                    groups.remove(k);
                }
            }
            match groups.iter_mut().find(|(p, _)| *p == payload) {
                Some((_, streams)) => streams.push(stream),
                None => groups.push((payload, vec![stream])),
            }
        }
    }
}

impl CrossRankTable for RankDifferTable {
    type Format = crate::schema::cross_rank::RankDiffer;
    type Output = RankDiffer;

    fn build(streams: &[StreamTables], alignment: &Alignment) -> Option<(RankDiffer, u64)> {
        // Keyed by aligned compile; artifacts outside any compile last. Each stream's compile
        // directory is read in turn and dropped before the next.
        let mut compiles: BTreeMap<(bool, u32), CompileRows> = BTreeMap::new();
        let mut payloads = Payloads::default();
        for (i, s) in streams.iter().enumerate() {
            let Some(dir) = s.table::<CompileDirectory>() else { continue };
            let lists = dir.compiles.iter().map(|c| (alignment.aligned(i, &c.compile_id), &c.artifacts));
            for (aligned, artifacts) in lists.chain([(None, &dir.unattributed)]) {
                let rows = compiles.entry(row_order(aligned)).or_default();
                rows.compile = aligned;
                rows.add(i as u32, artifacts, &mut payloads);
            }
        }

        let n = streams.len();
        let id = |i: u32| streams[i as usize].member.stream.clone();
        let mut stream_rows: Vec<StreamDiffer> = streams
            .iter()
            .map(|s| StreamDiffer { stream: s.member.stream.clone(), present: 0, missing: 0, alone: 0 })
            .collect();
        let mut has = vec![false; n];
        let mut artifacts = Vec::new();
        for compile in compiles.into_values() {
            let compile_label = compile
                .compile
                .map(|a| AlignedCompileLabel { aligned: a, label: alignment.table.compiles[a as usize].label.clone() });
            for row in compile.rows {
                has.iter_mut().for_each(|h| *h = false);
                for &i in row.groups.iter().flat_map(|(_, g)| g) {
                    has[i as usize] = true;
                }
                let present = row.groups.iter().map(|(_, g)| g.len()).sum::<usize>();
                for (counts, &h) in stream_rows.iter_mut().zip(&has) {
                    match h {
                        false => counts.missing += 1,
                        true => counts.present += 1,
                    }
                }
                if row.groups.len() > 1 {
                    for (_, g) in row.groups.iter().filter(|(_, g)| g.len() == 1) {
                        stream_rows[g[0] as usize].alone += 1;
                    }
                }
                // The smaller side is listed: the missing streams, the largest group left
                // unlisted; or, when most streams lack the key, every group.
                let list_missing = n - present <= present;
                let largest = row
                    .groups
                    .iter()
                    .enumerate()
                    .fold(None, |best: Option<(usize, usize)>, (k, (_, g))| match best {
                        Some((_, m)) if m >= g.len() => best,
                        _ => Some((k, g.len())),
                    })
                    .map(|(k, _)| k);
                let groups: Vec<PayloadGroup> = row
                    .groups
                    .iter()
                    .enumerate()
                    .map(|(k, (p, g))| {
                        let (blob, size) = &payloads.list[*p as usize];
                        PayloadGroup {
                            count: g.len() as u64,
                            streams: (!(list_missing && Some(k) == largest))
                                .then(|| g.iter().map(|&i| id(i)).collect()),
                            blob: blob.clone(),
                            size: *size,
                        }
                    })
                    .collect();
                let missing = list_missing
                    .then(|| (0..n).filter(|&i| !has[i]).map(|i| streams[i].member.stream.clone()).collect::<Vec<_>>());
                let status = match (groups.len(), present == n) {
                    (1, true) => ArtifactStatus::Identical,
                    (1, false) => ArtifactStatus::SameWherePresent,
                    _ => ArtifactStatus::Differs,
                };
                artifacts.push(ArtifactComparison {
                    compile: compile_label.clone(),
                    kind: row.kind,
                    name: row.name,
                    occurrence: row.occurrence,
                    status,
                    present: present as u64,
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
            with_missing: artifacts.iter().filter(|a| a.present < n as u64).count() as u64,
            streams: stream_rows,
            artifacts,
        };
        let rows = table.keys;
        Some((table, rows))
    }
}
