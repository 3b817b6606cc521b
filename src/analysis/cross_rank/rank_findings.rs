//! `rank_findings`: what needs attention on each stream, from the stream's `failures`,
//! `recompiles` and `graph_breaks` tables, and across the streams, from the headlines of the
//! cross-rank tables computed before it (`compile_alignment`, `collective_schedules`,
//! `compile_time_imbalance`, `rank_differ`). Everything a viewer's overview warns about, in one
//! small table.

use super::{Alignment, StreamTables};
use crate::schema::cross_rank::StreamGroup;
use crate::schema::cross_rank::collective_schedules::CollectiveSchedules;
use crate::schema::cross_rank::compile_time_imbalance::CompileTimeImbalance;
use crate::schema::cross_rank::rank_differ::{ArtifactComparison, ArtifactStatus, RankDiffer};
use crate::schema::cross_rank::rank_findings::{
    ARTIFACTS_DESCRIBED, AlignmentFindings, ArtifactFindings, CompileTimeFindings, RankFindings, RecompileStorm,
    SCHEDULES_LISTED, ScheduleFinding, StreamFindings,
};
use crate::schema::tables::{Failures, GraphBreaks, Recompiles};

/// Compiles of one frame that make a recompile storm: torch's default `recompile_limit`.
pub const STORM_COMPILES: u64 = 8;

/// What the other cross-rank tables contribute, handed over as each is built
/// (`CrossRankTable::findings`).
#[derive(Debug, Default)]
pub struct Headlines {
    pub schedules: Vec<ScheduleFinding>,
    pub schedules_differ: u64,
    pub compile_time: Option<CompileTimeFindings>,
    pub artifacts: Option<ArtifactHeadline>,
}

/// What `rank_differ` hands over: its counts and the rows said in words (the first real
/// differences, then the first keys missing on a cache hit).
#[derive(Debug, Default)]
pub struct ArtifactHeadline {
    differ: u64,
    same_up_to_ids: u64,
    missing_on_cache_hit: u64,
    rows: Vec<ArtifactComparison>,
    /// Every stream of the table, in `members` order (an unlisted group's streams are the rest).
    streams: Vec<String>,
}

impl Headlines {
    /// The compiles whose schedules differ: the first few in full, all of them counted.
    pub fn add_schedules(&mut self, table: &CollectiveSchedules) {
        let differing = table.compiles.iter().filter(|c| c.differs);
        self.schedules_differ = differing.clone().count() as u64;
        self.schedules = differing
            .take(SCHEDULES_LISTED)
            .map(|c| ScheduleFinding {
                compile: c.compile.clone(),
                variants: c.variants.iter().map(|v| StreamGroup { streams: v.streams.clone() }).collect(),
            })
            .collect();
    }

    /// The artifact differences: counted, and the first few kept to be said in words.
    pub fn add_artifacts(&mut self, table: &RankDiffer) {
        let real = table.artifacts.iter().filter(|a| a.status == ArtifactStatus::Differs && a.difference.is_some());
        let on_hit = table.artifacts.iter().filter(|a| a.missing_on_cache_hit.is_some());
        self.artifacts = Some(ArtifactHeadline {
            differ: table.differs,
            same_up_to_ids: table.same_up_to_ids,
            missing_on_cache_hit: on_hit.clone().count() as u64,
            rows: real.chain(on_hit).take(ARTIFACTS_DESCRIBED).cloned().collect(),
            streams: table.streams.iter().map(|s| s.stream.clone()).collect(),
        });
    }

    /// The slowest and fastest streams and their ratio.
    pub fn add_compile_time(&mut self, table: &CompileTimeImbalance) {
        self.compile_time = Some(CompileTimeFindings {
            slowest: table.slowest.clone(),
            fastest: table.fastest.clone(),
            max_us: table.max_us,
            min_us: table.min_us,
            max_over_min: table.max_over_min,
        });
    }
}

/// "rank 1, rank 2 and 3 more": the labels of the first streams of a list.
fn labels_text(streams: &[StreamTables], ids: &[String]) -> String {
    const NAMED: usize = 3;
    let label =
        |id: &String| streams.iter().find(|s| &s.member.stream == id).map_or(id.clone(), |s| s.member.label.clone());
    let named: Vec<String> = ids.iter().take(NAMED).map(label).collect();
    match ids.len().saturating_sub(NAMED) {
        0 => named.join(", "),
        more => format!("{} and {more} more", named.join(", ")),
    }
}

/// "`inductor_post_grad_graph` (forward) of `forward (m.py:20)`".
fn artifact_text(row: &ArtifactComparison) -> String {
    let graph = row.graph.map(|g| {
        format!(" ({})", serde_json::to_value(g).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default())
    });
    let compile = row.compile.as_ref().map_or(" outside any compile".to_string(), |c| format!(" of `{}`", c.label));
    let nth = if row.occurrence > 0 { format!(" #{}", row.occurrence + 1) } else { String::new() };
    format!("`{}`{nth}{}{compile}", row.name, graph.unwrap_or_default())
}

/// A row's finding in words: where its odd variant differs, or who lacks it on a cache hit.
fn artifact_sentence(streams: &[StreamTables], all: &[String], row: &ArtifactComparison) -> Option<String> {
    if let Some(d) = &row.difference {
        let odd_groups = row.groups.iter().filter(|g| g.variant == d.variant);
        let odd: Vec<String> = odd_groups.clone().flat_map(|g| group_streams(row, g, all)).collect();
        // An empty payload has no line to show (a cache hit logs `fx_graph_runnable` empty).
        if odd_groups.clone().all(|g| g.size == 0) {
            let sizes = || row.groups.iter().filter(|g| g.variant != d.variant).map(|g| g.size);
            let (least, most) = (sizes().min().unwrap_or(0), sizes().max().unwrap_or(0));
            let usual = if least == most { format!("{most}") } else { format!("{least}-{most}") };
            return Some(format!(
                "{}'s {} is empty where the others logged {usual} bytes",
                labels_text(streams, &odd),
                artifact_text(row)
            ));
        }
        return Some(format!(
            "{}'s {} differs at line {}: `{}` where the others have `{}`",
            labels_text(streams, &odd),
            artifact_text(row),
            d.line,
            d.text,
            d.usual
        ));
    }
    let missing = row.missing_on_cache_hit.as_ref()?;
    Some(format!("{} logged no {}: FX graph cache hit", labels_text(streams, missing), artifact_text(row)))
}

/// A group's streams: listed, or (the unlisted largest group) every stream in no other group
/// and not missing.
fn group_streams(
    row: &ArtifactComparison,
    group: &crate::schema::cross_rank::rank_differ::PayloadGroup,
    all: &[String],
) -> Vec<String> {
    if let Some(s) = &group.streams {
        return s.clone();
    }
    let listed: Vec<&String> =
        row.groups.iter().filter_map(|g| g.streams.as_ref()).flatten().chain(row.missing.iter().flatten()).collect();
    all.iter().filter(|s| !listed.contains(s)).cloned().collect()
}

/// One stream's findings, from its own tables.
fn stream_findings(s: &StreamTables) -> StreamFindings {
    let failures = s.table::<Failures>();
    let frames = s.table::<Recompiles>().map(|r| r.frames).unwrap_or_default();
    let breaks = s.table::<GraphBreaks>();
    StreamFindings {
        stream: s.member.stream.clone(),
        failed: failures.as_ref().map_or(0, |f| f.failed),
        restarts: failures.as_ref().map_or(0, |f| f.restarts),
        recompiled_frames: frames.len() as u64,
        storms: frames
            .into_iter()
            .filter(|f| f.compiles.len() as u64 >= STORM_COMPILES)
            .map(|f| RecompileStorm {
                frame_id: f.frame_id,
                compiled_autograd_id: f.compiled_autograd_id,
                co_name: f.co_name,
                location: f.location,
                compiles: f.compiles.len() as u64,
            })
            .collect(),
        graph_breaks: breaks.as_ref().map_or(0, |b| b.total),
        graph_break_groups: breaks.as_ref().map_or(0, |b| b.breaks.len() as u64),
    }
}

/// The table and its rows (one per stream).
pub fn build(streams: &[StreamTables], alignment: &Alignment, headlines: Headlines) -> (RankFindings, u64) {
    let rows: Vec<StreamFindings> = streams.iter().map(stream_findings).collect();
    let alignment = (!alignment.is_empty()).then(|| {
        let t = &alignment.table;
        AlignmentFindings {
            diverges: t.diverges,
            ids_shifted: t.ids_shifted,
            groups: t.groups.iter().map(|g| g.group.clone()).collect(),
            partial_code: t.partial_code.clone(),
            ambiguities: t.ambiguities.clone(),
        }
    });
    let artifacts = headlines.artifacts.map(|a| ArtifactFindings {
        differ: a.differ,
        same_up_to_ids: a.same_up_to_ids,
        missing_on_cache_hit: a.missing_on_cache_hit,
        described: a.rows.iter().filter_map(|r| artifact_sentence(streams, &a.streams, r)).collect(),
    });
    let n = rows.len() as u64;
    let table = RankFindings {
        streams: rows,
        storm_compiles: STORM_COMPILES,
        alignment,
        schedules: headlines.schedules,
        schedules_differ: headlines.schedules_differ,
        compile_time: headlines.compile_time,
        artifacts,
    };
    (table, n)
}
