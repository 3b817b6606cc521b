//! What the shared facts read of a compile's `compilation_metrics` ([`Metrics`]), and the bytes
//! [`super::Compiles`] holds it as until the tables finish: held as a struct, with its strings
//! and lists, it took half a KiB of every compile of a long log.

use serde::{Deserialize, Serialize};

/// What the shared facts read of a compile's `compilation_metrics`, read once: the whole object
/// (dozens of fields, some of them whole configs) held for every compile of a long log was
/// several MiB.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub co_name: Option<Box<str>>,
    pub co_filename: Option<Box<str>>,
    pub co_firstlineno: Option<i64>,
    pub start_time: Option<f64>,
    pub entire_frame_compile_time_s: Option<f64>,
    /// The same time in µs, which older torch (late 2024) logs instead.
    pub dynamo_cumulative_compile_time_us: Option<f64>,
    /// `fail_type` is set (not null), whatever its type.
    pub failed: bool,
    pub fail_type: Option<Box<str>>,
    pub fail_reason: Option<Box<str>>,
    /// Empty when null or absent.
    pub restart_reasons: Vec<String>,
    pub graph_op_count: Option<u64>,
    pub graph_node_count: Option<u64>,
    pub graph_input_count: Option<u64>,
    pub guard_count: Option<u64>,
    pub shape_env_guard_count: Option<u64>,
    /// The non-zero cache counters (number fields named `*cache*`, but the cache sizes): name (in
    /// `Compiles::names`) and value.
    pub(super) cache_counters: Vec<(u32, f64)>,
}

impl Metrics {
    /// The frame compile's time in µs: `entire_frame_compile_time_s`, else
    /// `dynamo_cumulative_compile_time_us` (they agree wherever both are logged).
    pub fn frame_compile_us(&self) -> Option<f64> {
        self.entire_frame_compile_time_s.map(|s| s * 1e6).or(self.dynamo_cumulative_compile_time_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_read_back_as_they_were() {
        let full = Metrics {
            co_name: Some("f".into()),
            co_filename: Some("a.py".into()),
            co_firstlineno: Some(-3),
            start_time: Some(0.1 + 0.2),
            entire_frame_compile_time_s: Some(f64::MIN_POSITIVE),
            dynamo_cumulative_compile_time_us: None,
            failed: true,
            fail_type: None,
            fail_reason: Some(String::new().into()),
            restart_reasons: vec!["r1".into(), String::new()],
            graph_op_count: Some(0),
            graph_node_count: None,
            graph_input_count: Some(u64::MAX),
            guard_count: Some(7),
            shape_env_guard_count: None,
            cache_counters: vec![(3, 1.5), (0, -0.0)],
        };
        // Held in `store::Records` (postcard): floats by their bits, which JSON would not promise.
        let mut held = crate::store::Records::default();
        for m in [full, Metrics::default()] {
            let at = held.push(&m);
            assert_eq!(held.get(at), m);
            assert_eq!(held.get(at).start_time.map(f64::to_bits), m.start_time.map(f64::to_bits));
        }
    }
}
