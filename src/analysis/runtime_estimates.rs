//! Runtime estimates: each `inductor_runtime_and_tensor_meta` artifact's ops, their summed
//! estimated runtime, and a fingerprint of their tensor metadata that leaves the runtimes out
//! (tlparse fingerprints the whole payload, so ranks with identical shapes but different
//! estimates fall into different groups).

use serde::{Deserialize, Serialize};

use super::{Event, Finish, Observe, Table};
use crate::fast_hash::HashMap;
use crate::parse::json_text::escape_lone_surrogates;
use crate::schema::tables::{RuntimeEstimates, RuntimeGraph, RuntimeOp, TensorMeta};

const ARTIFACT: &str = "inductor_runtime_and_tensor_meta";

/// The payload as torch's `log_runtime_and_tensor_meta` writes it; other keys are ignored.
#[derive(Deserialize)]
struct LoggedPayload {
    ops: Vec<LoggedOp>,
}

#[derive(Deserialize)]
struct LoggedOp {
    name: String,
    #[serde(rename = "type")]
    op_type: String,
    estimated_runtime_ns: f64,
    #[serde(default)]
    outputs: Option<Vec<LoggedOutput>>,
}

#[derive(Deserialize)]
struct LoggedOutput {
    shape: Vec<i64>,
    stride: Vec<i64>,
    dtype: Option<String>,
}

/// One op of the canonical form the fingerprint hashes (see
/// `RuntimeGraph::tensor_meta_fingerprint`); the field order is part of the format.
#[derive(Serialize)]
struct CanonicalOp<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    op_type: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    outputs: Option<&'a [TensorMeta]>,
}

/// The canonical JSON of the ops' names, types and outputs (no runtimes).
pub fn canonical_tensor_meta(ops: &[RuntimeOp]) -> Vec<u8> {
    let canonical: Vec<CanonicalOp> = ops
        .iter()
        .map(|op| CanonicalOp { name: &op.name, op_type: &op.op_type, outputs: op.outputs.as_deref() })
        .collect();
    serde_json::to_vec(&canonical).expect("canonical ops serialize")
}

/// The first 16 bytes of the blake3 hash of [`canonical_tensor_meta`], in hex.
pub fn tensor_meta_fingerprint(ops: &[RuntimeOp]) -> String {
    let hash = blake3::hash(&canonical_tensor_meta(ops));
    hash.as_bytes()[..16].iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Default)]
pub struct RuntimeEstimatesTable {
    graphs: Vec<RuntimeGraph>,
    /// Artifacts seen so far per compile id, for `occurrence`.
    seen: HashMap<Option<String>, u32>,
}

impl Table for RuntimeEstimatesTable {
    type Format = crate::schema::tables::RuntimeEstimates;
    type Output<'a> = RuntimeEstimates;

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        if ev.kind != "artifact" || ev.name != Some(ARTIFACT) {
            return;
        }
        let Some(payload) = ev.payload else {
            diags.unusable(Self::NAME, ev, "no payload");
            return;
        };
        let logged: LoggedPayload = match serde_json::from_slice(&escape_lone_surrogates(payload.bytes)) {
            Ok(p) => p,
            Err(e) => {
                diags.unusable(Self::NAME, ev, format_args!("payload is not {{\"ops\": [...]}} as torch logs it: {e}"));
                return;
            }
        };
        // An estimate that cannot be a duration is ignored as if absent, and an op without one
        // leaves the artifact out of the table, as a payload missing it does.
        for op in &logged.ops {
            if diags.number(ev, "estimated_runtime_ns", Some(op.estimated_runtime_ns)).is_none() {
                return;
            }
        }
        let ops: Vec<RuntimeOp> = logged
            .ops
            .into_iter()
            .map(|op| RuntimeOp {
                name: op.name,
                op_type: op.op_type,
                estimated_runtime_ns: op.estimated_runtime_ns,
                outputs: op.outputs.map(|outputs| {
                    outputs
                        .into_iter()
                        .map(|o| TensorMeta { shape: o.shape, stride: o.stride, dtype: o.dtype })
                        .collect()
                }),
            })
            .collect();
        let compile_id = ev.display_id.map(str::to_string);
        let occurrence = self.seen.entry(compile_id.clone()).or_default();
        self.graphs.push(RuntimeGraph {
            compile_id,
            occurrence: *occurrence,
            seq: ev.seq,
            line: ev.line,
            blob: payload.hash.to_string(),
            op_count: ops.len() as u64,
            // Summed in log order, as a sequential Python `sum` would.
            total_estimated_runtime_ns: ops.iter().map(|op| op.estimated_runtime_ns).sum(),
            tensor_meta_fingerprint: tensor_meta_fingerprint(&ops),
            ops,
        });
        *occurrence += 1;
    }

    fn finish(self, _ctx: &Finish) -> Option<(RuntimeEstimates, u64)> {
        if self.graphs.is_empty() {
            return None;
        }
        let rows = self.graphs.len() as u64;
        Some((RuntimeEstimates { graphs: self.graphs }, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, runtime: f64, outputs: Option<Vec<TensorMeta>>) -> RuntimeOp {
        RuntimeOp { name: name.into(), op_type: "compute".into(), estimated_runtime_ns: runtime, outputs }
    }

    fn f16(shape: Vec<i64>, stride: Vec<i64>) -> TensorMeta {
        TensorMeta { shape, stride, dtype: Some("float16".into()) }
    }

    #[test]
    fn canonical_form_is_the_documented_one() {
        let ops = [op("op1", 2167.5, Some(vec![f16(vec![2, 3], vec![3, 1])])), op("wait", 0.0, None)];
        assert_eq!(
            String::from_utf8(canonical_tensor_meta(&ops)).unwrap(),
            r#"[{"name":"op1","type":"compute","outputs":[{"shape":[2,3],"stride":[3,1],"dtype":"float16"}]},{"name":"wait","type":"compute"}]"#
        );
        assert_eq!(tensor_meta_fingerprint(&ops).len(), 32);
    }

    #[test]
    fn fingerprint_ignores_runtimes_but_not_absent_outputs() {
        let a = [op("op1", 1.0, Some(vec![]))];
        let b = [op("op1", 2.0, Some(vec![]))];
        let absent = [op("op1", 1.0, None)];
        assert_eq!(tensor_meta_fingerprint(&a), tensor_meta_fingerprint(&b));
        assert_ne!(tensor_meta_fingerprint(&a), tensor_meta_fingerprint(&absent));
    }
}
