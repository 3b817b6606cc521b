//! `compile_time_imbalance`: compile time per stream, phase and compile id, from each stream's
//! `compile_directory` (each compile's time, who has which compile; compiles aligned by code),
//! `compilation_metrics` (which compiles count, metrics phases) and `compile_time` (trace phases).

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::{Alignment, CrossRankTable, StreamTables};
use crate::parse::json_text::usable_number;
use crate::schema::cross_rank::compile_time_imbalance::{
    CompileSpread, CompileTimeImbalance, PhaseSource, PhaseSpread, StreamCompileTime, StreamTime,
};
#[cfg(doc)]
use crate::schema::tables::MetricsRow;
use crate::schema::tables::{CompilationMetrics, CompileTime};

pub struct CompileTimeImbalanceTable;

/// What one stream contributes.
#[derive(Default)]
struct StreamTimes {
    total_us: Option<f64>,
    compiles: u64,
    untimed: u64,
    runtime_us: Option<f64>,
    /// Aligned compile → summed time.
    by_compile: BTreeMap<u32, f64>,
    /// (source, phase name) → summed time.
    phases: BTreeMap<(PhaseSource, String), f64>,
    /// Aligned compiles the stream has at all.
    compile_ids: BTreeSet<u32>,
}

/// Microseconds from seconds, to the nanosecond (torch's `*_time_s` fields are floats).
fn us_from_s(s: f64) -> f64 {
    round_ns(s * 1e6)
}

/// Rounds µs to the nanosecond, so sums of logged values do not print float noise.
fn round_ns(us: f64) -> f64 {
    (us * 1e3).round() / 1e3
}

/// What this table reads of a `compilation_metrics` table ([`CompilationMetrics`]): its rows'
/// times. Its rows' other metrics and its shared values, most of its bytes, are skipped unbuilt.
#[derive(Deserialize)]
struct MetricsTimes {
    metrics: Vec<MetricsTimesRow>,
}

/// What this table reads of a `compile_time` table ([`CompileTime`]): the stream's phase totals,
/// not its per-compile rows.
#[derive(Deserialize)]
struct PhaseTotals {
    phases: Vec<PhaseTotal>,
}

/// A [`CompileTime`] phase total: its name and time.
#[derive(Deserialize)]
struct PhaseTotal {
    name: String,
    total_us: f64,
}

/// A [`MetricsRow`] without the metrics no time is read from.
#[derive(Deserialize)]
struct MetricsTimesRow {
    kind: String,
    runtime: bool,
    times_s: BTreeMap<String, f64>,
    metrics: TimeMetrics,
}

/// The metrics named `*_time_us`, as logged (the last of duplicate names, as a JSON object
/// keeps); none when the metrics are not an object.
#[derive(Default)]
struct TimeMetrics(Map<String, Value>);

impl<'de> Deserialize<'de> for TimeMetrics {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = TimeMetrics;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("the metrics as logged")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TimeMetrics, A::Error> {
                let mut times = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key.ends_with("_time_us") {
                        times.insert(key, map.next_value()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(TimeMetrics(times))
            }
        }
        // Metrics that are not an object hold no times (the full row keeps them as logged).
        let value = d.deserialize_any(NotAnObject(Visit))?;
        Ok(value.unwrap_or_default())
    }
}

/// Reads an object with the visitor it wraps; any other JSON value is skipped, as `None`.
struct NotAnObject<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for NotAnObject<V> {
    type Value = Option<V::Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(map).map(Some)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A logged time, when it can be one: the rows keep every metric as logged, and the stream's
/// diagnostics already name those out of range.
fn time(value: &Value) -> Option<f64> {
    value.as_f64().and_then(usable_number)
}

impl StreamTimes {
    fn read(i: usize, s: &StreamTables, alignment: &Alignment) -> StreamTimes {
        let aligned = |id: &str| alignment.aligned(i, id);
        let mut t = StreamTimes {
            compile_ids: s.compiles.iter().filter_map(|c| aligned(&c.compile_id)).collect(),
            ..StreamTimes::default()
        };
        // Each compile's time as every per-stream table and page gives it (its frame compile and
        // its lazily compiled backward: `compile_directory`'s `total_s`), over the timed compiles,
        // those with a time above 0, as `compile_summary` counts them (docs/definitions.md).
        for c in &s.compiles {
            let Some(us) = c.total_s.filter(|&t| t > 0.0).map(us_from_s) else {
                t.untimed += 1;
                continue;
            };
            t.compiles += 1;
            *t.total_us.get_or_insert(0.0) += us;
            if let Some(a) = aligned(&c.compile_id) {
                *t.by_compile.entry(a).or_default() += us;
            }
        }
        for row in s.table_as::<CompilationMetrics, MetricsTimes>().into_iter().flat_map(|m| m.metrics) {
            let fields = Some(&row.metrics.0);
            if row.runtime {
                let runtime =
                    fields.into_iter().flatten().filter(|(k, _)| k.starts_with("runtime_") && k.ends_with("_time_us"));
                for v in runtime.filter_map(|(_, v)| time(v)) {
                    *t.runtime_us.get_or_insert(0.0) += v;
                }
                continue;
            }
            if row.kind != "compilation_metrics" {
                continue;
            }
            let seconds = row.times_s.iter().map(|(k, &v)| (k.clone(), us_from_s(v)));
            let cumulative = fields
                .into_iter()
                .flatten()
                .filter(|(k, _)| k.ends_with("_cumulative_compile_time_us"))
                .filter_map(|(k, v)| Some((k.clone(), time(v)?)));
            for (name, us) in seconds.chain(cumulative) {
                *t.phases.entry((PhaseSource::Metrics, name)).or_default() += us;
            }
        }
        for p in s.table_as::<CompileTime, PhaseTotals>().into_iter().flat_map(|c| c.phases) {
            *t.phases.entry((PhaseSource::Trace, p.name)).or_default() += p.total_us;
        }
        t.total_us = t.total_us.map(round_ns);
        t.runtime_us = t.runtime_us.map(round_ns);
        t.phases.values_mut().for_each(|v| *v = round_ns(*v));
        t.by_compile.values_mut().for_each(|v| *v = round_ns(*v));
        t
    }
}

/// The streams with the largest and the smallest time, and those times.
fn extremes(times: &[StreamTime]) -> (Vec<String>, Vec<String>, f64, f64) {
    let max = times.iter().map(|t| t.us).fold(f64::NEG_INFINITY, f64::max);
    let min = times.iter().map(|t| t.us).fold(f64::INFINITY, f64::min);
    let at = |v: f64| times.iter().filter(|t| t.us == v).map(|t| t.stream.clone()).collect();
    (at(max), at(min), max, min)
}

/// `a / b`, when it is a number: not for a zero `b`, nor one so small the ratio overflows.
fn ratio(a: f64, b: f64) -> Option<f64> {
    Some(a / b).filter(|r| b != 0.0 && r.is_finite())
}

impl CrossRankTable for CompileTimeImbalanceTable {
    type Format = crate::schema::cross_rank::CompileTimeImbalance;
    type Output = CompileTimeImbalance;

    fn findings(table: &CompileTimeImbalance, headlines: &mut super::rank_findings::Headlines) {
        headlines.add_compile_time(table);
    }

    fn build(streams: &[StreamTables], alignment: &Alignment) -> Option<(CompileTimeImbalance, u64)> {
        let per_stream: Vec<StreamTimes> =
            streams.iter().enumerate().map(|(i, s)| StreamTimes::read(i, s, alignment)).collect();
        let ids = |f: &dyn Fn(&StreamTimes) -> bool| -> Vec<String> {
            streams.iter().zip(&per_stream).filter(|(_, p)| f(p)).map(|(s, _)| s.member.stream.clone()).collect()
        };

        let totals: Vec<StreamTime> = streams
            .iter()
            .zip(&per_stream)
            .filter_map(|(s, p)| Some(StreamTime { stream: s.member.stream.clone(), us: p.total_us? }))
            .collect();
        if totals.is_empty() {
            return None;
        }
        let (slowest, fastest, max_us, min_us) = extremes(&totals);
        let mut sorted: Vec<f64> = totals.iter().map(|t| t.us).collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median_us = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };

        let stream_rows = streams
            .iter()
            .zip(&per_stream)
            .map(|(s, p)| StreamCompileTime {
                stream: s.member.stream.clone(),
                total_us: p.total_us,
                compiles: p.compiles,
                untimed: p.untimed,
                over_fastest: p.total_us.and_then(|t| ratio(t, min_us)),
                over_median: p.total_us.and_then(|t| ratio(t, median_us)),
                runtime_us: p.runtime_us,
            })
            .collect();

        let phase_names: BTreeSet<&(PhaseSource, String)> = per_stream.iter().flat_map(|p| p.phases.keys()).collect();
        let mut phases: Vec<PhaseSpread> = phase_names
            .into_iter()
            .map(|key| {
                let times: Vec<StreamTime> = streams
                    .iter()
                    .zip(&per_stream)
                    .filter_map(|(s, p)| Some(StreamTime { stream: s.member.stream.clone(), us: *p.phases.get(key)? }))
                    .collect();
                let (slowest, fastest, max_us, min_us) = extremes(&times);
                PhaseSpread {
                    name: key.1.clone(),
                    source: key.0,
                    streams: times,
                    missing: ids(&|p| !p.phases.contains_key(key)),
                    slowest,
                    fastest,
                    max_us,
                    min_us,
                    delta_us: round_ns(max_us - min_us),
                }
            })
            .collect();
        phases.sort_by(|a, b| a.source.cmp(&b.source).then(b.max_us.total_cmp(&a.max_us)).then(a.name.cmp(&b.name)));

        let timed: BTreeSet<u32> = per_stream.iter().flat_map(|p| p.by_compile.keys().copied()).collect();
        let compiles: Vec<CompileSpread> = timed
            .into_iter()
            .map(|a| {
                let times: Vec<StreamTime> = streams
                    .iter()
                    .zip(&per_stream)
                    .filter_map(|(s, p)| {
                        Some(StreamTime { stream: s.member.stream.clone(), us: *p.by_compile.get(&a)? })
                    })
                    .collect();
                let (slowest, fastest, max_us, min_us) = extremes(&times);
                CompileSpread {
                    compile: alignment.compile_ref(a),
                    streams: times,
                    missing: ids(&|p| !p.compile_ids.contains(&a)),
                    untimed: ids(&|p| p.compile_ids.contains(&a) && !p.by_compile.contains_key(&a)),
                    slowest,
                    fastest,
                    max_us,
                    min_us,
                    delta_us: round_ns(max_us - min_us),
                    max_over_min: ratio(max_us, min_us),
                }
            })
            .collect();

        let rows = compiles.len() as u64;
        Some((
            CompileTimeImbalance {
                streams: stream_rows,
                slowest,
                fastest,
                max_us,
                min_us,
                median_us,
                max_over_min: ratio(max_us, min_us),
                max_over_median: ratio(max_us, median_us),
                phases,
                compiles,
            },
            rows,
        ))
    }
}
