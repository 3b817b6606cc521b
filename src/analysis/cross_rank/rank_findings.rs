//! `rank_findings`: what needs attention on each stream, from the stream's `failures`,
//! `recompiles` and `graph_breaks` tables, and across the streams, from the headlines of the
//! cross-rank tables computed before it (`compile_alignment`, `collective_schedules`,
//! `compile_time_imbalance`). Everything a viewer's overview warns about, in one small table.

use super::{Alignment, StreamTables};
use crate::schema::cross_rank::StreamGroup;
use crate::schema::cross_rank::collective_schedules::CollectiveSchedules;
use crate::schema::cross_rank::compile_time_imbalance::CompileTimeImbalance;
use crate::schema::cross_rank::rank_findings::{
    AlignmentFindings, CompileTimeFindings, RankFindings, RecompileStorm, SCHEDULES_LISTED, ScheduleFinding,
    StreamFindings,
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
    let n = rows.len() as u64;
    let table = RankFindings {
        streams: rows,
        storm_compiles: STORM_COMPILES,
        alignment,
        schedules: headlines.schedules,
        schedules_differ: headlines.schedules_differ,
        compile_time: headlines.compile_time,
    };
    (table, n)
}
