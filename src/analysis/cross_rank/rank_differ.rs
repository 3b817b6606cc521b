//! `rank_differ`: every artifact key of any stream, with the streams grouped by payload blob,
//! from the `artifacts` and `unattributed` lists of each stream's `compile_directory`, compiles
//! aligned by code (final attempts only), artifacts paired by identity (name, graph, occurrence
//! of that name and graph), never by position. Payloads whose bytes differ are read back and
//! compared again once masked ([`super::volatile::mask_volatile`]).

use std::collections::{BTreeMap, HashMap};

use super::volatile::mask_volatile;
use super::{Alignment, CrossRankTable, PayloadReader, StreamTables, row_order};
use crate::schema::cross_rank::AlignedCompileLabel;
use crate::schema::cross_rank::rank_differ::{
    ArtifactComparison, ArtifactStatus, LineDifference, PayloadGroup, RankDiffer, StreamDiffer,
};
use crate::schema::tables::{ArtifactRef, CompileDirectory, GraphRole};

pub struct RankDifferTable;

/// An artifact's identity within its compile: its name and graph, and which occurrence of that
/// name and graph it is in its stream's log order.
type Identity = (String, Option<GraphRole>, u32);

/// One key's payloads: the streams (by index, in order) of each distinct payload (an index
/// into `Payloads`), groups in order of their first stream. Four bytes a stream that has the key.
struct KeyRow {
    kind: String,
    name: String,
    graph: Option<GraphRole>,
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
    index: HashMap<Identity, usize>,
    /// The streams that logged an `fx_graph_cache_hit` for a graph of this compile.
    cache_hits: Vec<(u32, Option<GraphRole>)>,
}

impl CompileRows {
    /// Files one stream's artifacts of this compile (streams are filed in order).
    fn add<'a>(&mut self, stream: u32, artifacts: impl IntoIterator<Item = &'a ArtifactRef>, payloads: &mut Payloads) {
        let mut seen: HashMap<(&str, Option<GraphRole>), u32> = HashMap::new();
        for a in artifacts {
            if a.name == "fx_graph_cache_hit" && a.graph.is_some() {
                self.cache_hits.push((stream, a.graph));
            }
            let Some(blob) = &a.blob else { continue };
            if a.kind == "str" || a.kind == "chromium_event" {
                continue;
            }
            // `compile_directory`'s names follow the one naming rule, which keeps content hashes
            // (output code's file name) out of names: the same artifact has one name on every
            // rank. The kind is left out of the key: a cache hit logs the post-grad graph as an
            // entry of its own kind, which is still the same graph.
            let n = seen.entry((a.name.as_str(), a.graph)).or_default();
            let key = (a.name.clone(), a.graph, *n);
            *n += 1;
            let i = *self.index.entry(key).or_insert_with(|| {
                self.rows.push(KeyRow {
                    kind: a.kind.clone(),
                    name: a.name.clone(),
                    graph: a.graph,
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

/// Every stream's artifacts, keyed by aligned compile (artifacts outside any compile last). Each
/// stream's compile directory is read in turn and dropped before the next.
fn file_streams(streams: &[StreamTables], alignment: &Alignment) -> (Vec<CompileRows>, Payloads) {
    let mut compiles: BTreeMap<(bool, u32), CompileRows> = BTreeMap::new();
    let mut payloads = Payloads::default();
    for (i, s) in streams.iter().enumerate() {
        let Some(dir) = s.table::<CompileDirectory>() else { continue };
        // Only a frame compile's final attempt is compared: its restarted attempts are history.
        let finals = dir.compiles.iter().filter_map(|c| Some((alignment.aligned_final(i, &c.compile_id)?, c)));
        let lists =
            finals.map(|(aligned, c)| (Some(aligned), dir.artifacts_of(c).iter().map(|a| &a.artifact).collect()));
        let unattributed = (None, dir.unattributed.iter().collect::<Vec<_>>());
        for (aligned, artifacts) in lists.chain([unattributed]) {
            let rows = compiles.entry(row_order(aligned)).or_default();
            rows.compile = aligned;
            rows.add(i as u32, artifacts, &mut payloads);
        }
    }
    (compiles.into_values().collect(), payloads)
}

/// Each payload's masked text, numbered (payloads equal once masked share a number), for the
/// payloads of keys whose streams logged more than one: read in the store's order, one at a
/// time, only its digest kept. `None` for a payload not read.
fn masked_ids(compiles: &[CompileRows], payloads: &Payloads, reader: &dyn PayloadReader) -> Vec<Option<u32>> {
    let mut wanted: Vec<(u32, &str)> = compiles
        .iter()
        .flat_map(|c| &c.rows)
        .filter(|r| r.groups.len() > 1)
        .flat_map(|r| r.groups.iter().map(|(p, _)| (*p, r.name.as_str())))
        .collect();
    wanted.sort_unstable();
    wanted.dedup_by_key(|(p, _)| *p);
    let mut placed: Vec<((u32, u64), u32, &str)> = wanted
        .into_iter()
        .filter_map(|(p, name)| Some((reader.place(&payloads.list[p as usize].0)?, p, name)))
        .collect();
    placed.sort_unstable();
    let mut ids = vec![None; payloads.list.len()];
    let mut digests: HashMap<blake3::Hash, u32> = HashMap::new();
    for (_, p, name) in placed {
        let Some(text) = reader.payload(&payloads.list[p as usize].0) else { continue };
        let digest = blake3::hash(&mask_volatile(name, &text));
        let next = digests.len() as u32;
        ids[p as usize] = Some(*digests.entry(digest).or_insert(next));
    }
    ids
}

/// Each group's variant: groups whose payloads are equal once masked share one, numbered in
/// order of first group; a payload not read is a variant of its own.
fn variants(groups: &[(u32, Vec<u32>)], masked: &[Option<u32>]) -> Vec<u32> {
    let mut seen: Vec<Option<u32>> = Vec::new();
    groups
        .iter()
        .map(|(p, _)| {
            let m = masked[*p as usize];
            match seen.iter().position(|s| m.is_some() && *s == m) {
                Some(v) => v as u32,
                None => {
                    seen.push(m);
                    seen.len() as u32 - 1
                }
            }
        })
        .collect()
}

/// The most characters of a line a [`LineDifference`] shows.
const LINE_SHOWN: usize = 160;

/// `line` clipped to [`LINE_SHOWN`] characters from a little before `at` (a byte offset).
fn clip(line: &str, at: usize) -> String {
    let mut start = at.saturating_sub(40).min(line.len());
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    let rest = &line[start..];
    let end = rest.char_indices().nth(LINE_SHOWN).map_or(rest.len(), |(i, _)| i);
    let head = if start > 0 { "…" } else { "" };
    let tail = if end < rest.len() { "…" } else { "" };
    format!("{head}{}{tail}", &rest[..end])
}

/// The first line where two masked texts differ: its number (from 1), and each text's line.
fn first_difference(odd: &str, usual: &str) -> Option<(u64, String, String)> {
    let (mut a, mut b) = (odd.lines(), usual.lines());
    for n in 1.. {
        match (a.next(), b.next()) {
            (None, None) => return None,
            (x, y) if x == y => continue,
            (x, y) => {
                let (x, y) = (x.unwrap_or(""), y.unwrap_or(""));
                let at = x.bytes().zip(y.bytes()).take_while(|(p, q)| p == q).count();
                return Some((n, clip(x, at), clip(y, at)));
            }
        }
    }
    None
}

/// Where the odd variant (the first group's of any variant but the largest) differs from the
/// largest variant (most streams; the first on a tie), once both are masked.
fn describe(
    name: &str,
    groups: &[(u32, Vec<u32>)],
    variants: &[u32],
    payloads: &Payloads,
    reader: &dyn PayloadReader,
) -> Option<LineDifference> {
    let mut sizes: Vec<usize> = vec![0; *variants.iter().max()? as usize + 1];
    for ((_, g), &v) in groups.iter().zip(variants) {
        sizes[v as usize] += g.len();
    }
    let largest = sizes.iter().enumerate().rev().max_by_key(|(_, n)| **n)?.0 as u32;
    let odd = variants.iter().position(|&v| v != largest)?;
    let usual = variants.iter().position(|&v| v == largest)?;
    let text = |k: usize| {
        let bytes = reader.payload(&payloads.list[groups[k].0 as usize].0)?;
        Some(String::from_utf8_lossy(&mask_volatile(name, &bytes)).into_owned())
    };
    let (line, text, usual) = first_difference(&text(odd)?, &text(usual)?)?;
    Some(LineDifference { variant: variants[odd], line, text, usual })
}

impl CrossRankTable for RankDifferTable {
    type Format = crate::schema::cross_rank::RankDiffer;
    type Output = RankDiffer;

    fn build(streams: &[StreamTables], alignment: &Alignment) -> Option<(RankDiffer, u64)> {
        Self::build_reading(streams, alignment, &super::NoPayloads)
    }

    fn build_reading(
        streams: &[StreamTables],
        alignment: &Alignment,
        reader: &dyn PayloadReader,
    ) -> Option<(RankDiffer, u64)> {
        let (compiles, payloads) = file_streams(streams, alignment);
        let masked = masked_ids(&compiles, &payloads, reader);
        let n = streams.len();
        let mut stream_rows: Vec<StreamDiffer> = streams
            .iter()
            .map(|s| StreamDiffer { stream: s.member.stream.clone(), present: 0, missing: 0, alone: 0 })
            .collect();
        let mut artifacts = Vec::with_capacity(compiles.iter().map(|c| c.rows.len()).sum());
        for mut compile in compiles {
            let compile_label = compile
                .compile
                .map(|a| AlignedCompileLabel { aligned: a, label: alignment.table.compiles[a as usize].label.clone() });
            // Each key's row is consumed as its comparison is made (its names moved, not
            // copied): a compile of many artifacts never holds both whole.
            compile.index = HashMap::new();
            for row in std::mem::take(&mut compile.rows) {
                let compared = compare(row, &compile, streams, &mut stream_rows, &masked, &payloads, reader);
                artifacts.push(ArtifactComparison { compile: compile_label.clone(), ..compared });
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
            same_up_to_ids: count(ArtifactStatus::SameUpToIds),
            same_where_present: count(ArtifactStatus::SameWherePresent),
            with_missing: artifacts.iter().filter(|a| a.present < n as u64).count() as u64,
            streams: stream_rows,
            artifacts,
        };
        let rows = table.keys;
        Some((table, rows))
    }

    fn findings(table: &RankDiffer, headlines: &mut super::rank_findings::Headlines) {
        headlines.add_artifacts(table);
    }
}

/// One key's row (its `compile` left for the caller), counted in `stream_rows`.
fn compare(
    row: KeyRow,
    compile: &CompileRows,
    streams: &[StreamTables],
    stream_rows: &mut [StreamDiffer],
    masked: &[Option<u32>],
    payloads: &Payloads,
    reader: &dyn PayloadReader,
) -> ArtifactComparison {
    let n = streams.len();
    let mut has = vec![false; n];
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
    // The smaller side is listed: the missing streams, the largest group left unlisted; or,
    // when most streams lack the key, every group.
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
    let variants = variants(&row.groups, masked);
    let id = |i: u32| streams[i as usize].member.stream.clone();
    let groups: Vec<PayloadGroup> = row
        .groups
        .iter()
        .zip(&variants)
        .enumerate()
        .map(|(k, ((p, g), &variant))| {
            let (blob, size) = &payloads.list[*p as usize];
            PayloadGroup {
                count: g.len() as u64,
                streams: (!(list_missing && Some(k) == largest)).then(|| g.iter().map(|&i| id(i)).collect()),
                blob: blob.clone(),
                size: *size,
                variant,
            }
        })
        .collect();
    let missing_streams = || (0..n).filter(|&i| !has[i]);
    let missing = list_missing.then(|| missing_streams().map(|i| id(i as u32)).collect::<Vec<_>>());
    let on_cache_hit: Vec<String> = match (list_missing, row.graph) {
        (true, Some(_)) => missing_streams()
            .filter(|&i| compile.cache_hits.contains(&(i as u32, row.graph)))
            .map(|i| id(i as u32))
            .collect(),
        _ => Vec::new(),
    };
    let distinct = variants.iter().max().map_or(0, |v| v + 1);
    let status = match (groups.len(), distinct, present == n) {
        (1, _, true) => ArtifactStatus::Identical,
        (1, _, false) => ArtifactStatus::SameWherePresent,
        (_, 1, _) => ArtifactStatus::SameUpToIds,
        _ => ArtifactStatus::Differs,
    };
    let difference = (status == ArtifactStatus::Differs)
        .then(|| describe(&row.name, &row.groups, &variants, payloads, reader))
        .flatten();
    ArtifactComparison {
        compile: None,
        kind: row.kind,
        name: row.name,
        graph: row.graph,
        occurrence: row.occurrence,
        status,
        present: present as u64,
        groups,
        missing,
        missing_on_cache_hit: (!on_cache_hit.is_empty()).then_some(on_cache_hit),
        difference,
    }
}

#[cfg(test)]
mod tests {
    use super::{clip, first_difference, variants};

    #[test]
    fn first_difference_is_the_first_differing_line() {
        let odd = "a\nsize=[12, 16]\nc";
        let usual = "a\nsize=[8, 16]\nc";
        assert_eq!(first_difference(odd, usual), Some((2, "size=[12, 16]".into(), "size=[8, 16]".into())));
        assert_eq!(first_difference("a\nb", "a"), Some((2, "b".into(), String::new())));
        assert_eq!(first_difference("a\nb", "a\nb"), None);
    }

    #[test]
    fn clip_keeps_the_difference_in_view() {
        let line = format!("{}X{}", "a".repeat(300), "b".repeat(300));
        let shown = clip(&line, 300);
        assert!(shown.starts_with('…') && shown.ends_with('…') && shown.contains('X'), "{shown}");
        assert_eq!(clip("short", 2), "short");
        // Never cut inside a character.
        assert!(clip(&"é".repeat(200), 101).chars().count() <= 162);
    }

    #[test]
    fn groups_equal_once_masked_share_a_variant() {
        let groups = vec![(0, vec![0]), (1, vec![1]), (2, vec![2]), (3, vec![3])];
        // Payloads 0 and 2 mask alike, 1 differs, 3 was not read.
        let masked = [Some(0), Some(1), Some(0), None];
        assert_eq!(variants(&groups, &masked), [0, 1, 0, 2]);
    }
}
