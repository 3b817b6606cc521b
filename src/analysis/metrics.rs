//! What the shared facts read of a compile's `compilation_metrics` ([`Metrics`]), and the bytes
//! [`super::Compiles`] holds it as until the tables finish: held as a struct, with its strings
//! and lists, it took half a KiB of every compile of a long log.

/// What the shared facts read of a compile's `compilation_metrics`, read once: the whole object
/// (dozens of fields, some of them whole configs) held for every compile of a long log was
/// several MiB.
#[derive(Debug, Clone, Default, PartialEq)]
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

    /// The metrics as bytes, which [`Metrics::from_bytes`] reads back exactly (floats by their
    /// bits: JSON would not promise that).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        for text in [&self.co_name, &self.co_filename, &self.fail_type, &self.fail_reason] {
            put_text(&mut out, text.as_deref());
        }
        put_u64(&mut out, self.co_firstlineno.map(|n| n as u64));
        for x in [self.start_time, self.entire_frame_compile_time_s, self.dynamo_cumulative_compile_time_us] {
            put_u64(&mut out, x.map(f64::to_bits));
        }
        out.push(u8::from(self.failed));
        out.extend_from_slice(&(self.restart_reasons.len() as u32).to_le_bytes());
        for reason in &self.restart_reasons {
            put_text(&mut out, Some(reason));
        }
        let counts = [
            self.graph_op_count,
            self.graph_node_count,
            self.graph_input_count,
            self.guard_count,
            self.shape_env_guard_count,
        ];
        for n in counts {
            put_u64(&mut out, n);
        }
        out.extend_from_slice(&(self.cache_counters.len() as u32).to_le_bytes());
        for &(name, x) in &self.cache_counters {
            out.extend_from_slice(&name.to_le_bytes());
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        out
    }

    /// Metrics from [`Metrics::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Metrics {
        let mut r = Reader(bytes);
        let (co_name, co_filename, fail_type, fail_reason) = (r.text(), r.text(), r.text(), r.text());
        let co_firstlineno = r.option().map(|n| n as i64);
        let mut float = || r.option().map(f64::from_bits);
        let (start_time, entire_frame_compile_time_s, dynamo_cumulative_compile_time_us) = (float(), float(), float());
        let failed = r.take(1)[0] != 0;
        let restart_reasons = (0..r.u32()).map(|_| r.text().map(String::from).unwrap_or_default()).collect();
        let mut count = || r.option();
        let (graph_op_count, graph_node_count, graph_input_count) = (count(), count(), count());
        let (guard_count, shape_env_guard_count) = (count(), count());
        let cache_counters = (0..r.u32()).map(|_| (r.u32(), f64::from_bits(r.u64()))).collect();
        Metrics {
            co_name,
            co_filename,
            co_firstlineno,
            start_time,
            entire_frame_compile_time_s,
            dynamo_cumulative_compile_time_us,
            failed,
            fail_type,
            fail_reason,
            restart_reasons,
            graph_op_count,
            graph_node_count,
            graph_input_count,
            guard_count,
            shape_env_guard_count,
            cache_counters,
        }
    }
}

/// Length (`u32::MAX`: absent), then the text.
fn put_text(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(t) => {
            out.extend_from_slice(&(t.len() as u32).to_le_bytes());
            out.extend_from_slice(t.as_bytes());
        }
        None => out.extend_from_slice(&u32::MAX.to_le_bytes()),
    }
}

/// A flag byte, then the value when present.
fn put_u64(out: &mut Vec<u8>, n: Option<u64>) {
    match n {
        Some(n) => {
            out.push(1);
            out.extend_from_slice(&n.to_le_bytes());
        }
        None => out.push(0),
    }
}

/// Reads what `Metrics::to_bytes` wrote, in order.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        head
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().expect("4 bytes"))
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().expect("8 bytes"))
    }

    fn option(&mut self) -> Option<u64> {
        (self.take(1)[0] != 0).then(|| self.u64())
    }

    fn text(&mut self) -> Option<Box<str>> {
        let len = self.u32();
        (len != u32::MAX).then(|| String::from_utf8(self.take(len as usize).to_vec()).expect("held as text").into())
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
        for m in [full, Metrics::default()] {
            assert_eq!(Metrics::from_bytes(&m.to_bytes()), m);
        }
    }
}
