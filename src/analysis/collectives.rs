//! Collectives: per compile id, the `inductor_collective_schedule` artifacts, the functional
//! collective calls in the `inductor_output_code`, their parity, and the calls without a partner
//! wait. Output code is scanned as it is observed (only the calls are kept).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Event, Finish, Observe, Table};
use crate::fast_hash::HashMap;
use crate::parse::{BlobId, display_compile_id, hex};
use crate::schema::tables::{
    CollectiveCall, Collectives, CollectivesSummary, CompileCollectives, OpCount, OutputCode, Parity, Schedule,
    UnmatchedCall,
};
use crate::store::{PerCompile, Store};
use tlparse_bundle::ids::parse_blob_id;

/// The artifact name of the scheduler's collective order.
const SCHEDULE: &str = "inductor_collective_schedule";
/// What every namespace of a functional collective op contains.
const NAMESPACE_MARK: &[u8] = b"c10d_functional";

/// The source with comments and the contents of string literals replaced by spaces (quotes and
/// newlines kept), read as Python: `#` comments, `'`/`"` strings with backslash escapes, and
/// triple-quoted strings (which hold the Triton kernels' source) spanning lines. Byte offsets and
/// line numbers stay those of the input.
pub fn blank_comments_and_strings(src: &[u8]) -> Vec<u8> {
    let mut out = src.to_vec();
    let n = src.len();
    let mut i = 0;
    while i < n {
        match src[i] {
            b'#' => {
                while i < n && src[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            quote @ (b'\'' | b'"') => {
                let triple = i + 2 < n && src[i + 1] == quote && src[i + 2] == quote;
                let delimiter = if triple { 3 } else { 1 };
                i += delimiter;
                while i < n {
                    let c = src[i];
                    if c == b'\\' {
                        out[i] = b' ';
                        if i + 1 < n && src[i + 1] != b'\n' {
                            out[i + 1] = b' ';
                        }
                        i += 2;
                        continue;
                    }
                    if c == b'\n' && !triple {
                        break; // unterminated: a single-quoted string ends with its line
                    }
                    if c == quote && (!triple || (i + 2 < n && src[i + 1] == quote && src[i + 2] == quote)) {
                        i += delimiter;
                        break;
                    }
                    if c != b'\n' {
                        out[i] = b' ';
                    }
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && !b[0].is_ascii_digit() && b.iter().all(|&c| is_ident_byte(c))
}

fn skip_blanks(code: &[u8], mut i: usize) -> usize {
    while i < code.len() && matches!(code[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// The identifier at `i` (after blanks) and the position after it.
fn ident_at(code: &[u8], i: usize) -> Option<(&[u8], usize)> {
    let start = skip_blanks(code, i);
    let end = start + code[start..].iter().take_while(|&&b| is_ident_byte(b)).count();
    (end > start).then(|| (&code[start..end], end))
}

/// `expected` at `i` after blanks; the position after it.
fn byte_at(code: &[u8], i: usize, expected: u8) -> Option<usize> {
    let i = skip_blanks(code, i);
    (code.get(i) == Some(&expected)).then_some(i + 1)
}

/// A call `torch.ops.<ns>.<op>.<overload>(` starting at `i` with `<ns>` a functional-collective
/// namespace: the op's full name and the position after `(`.
fn op_call_at(code: &[u8], i: usize) -> Option<(String, usize)> {
    let (torch, i) = ident_at(code, i)?;
    let i = byte_at(code, i, b'.')?;
    let (ops, i) = ident_at(code, i)?;
    if torch != b"torch" || ops != b"ops" {
        return None;
    }
    let mut parts = Vec::with_capacity(3);
    let mut i = i;
    for _ in 0..3 {
        i = byte_at(code, i, b'.')?;
        let (part, next) = ident_at(code, i)?;
        parts.push(String::from_utf8_lossy(part).into_owned());
        i = next;
    }
    let open = byte_at(code, i, b'(')?;
    if !parts[0].as_bytes().windows(NAMESPACE_MARK.len()).any(|w| w == NAMESPACE_MARK) {
        return None;
    }
    Some((format!("torch.ops.{}.{}.{}", parts[0], parts[1], parts[2]), open))
}

/// The first argument of a call whose `(` ends just before `i`, as written with runs of
/// whitespace made one space; `None` for a call without arguments.
fn first_argument(code: &[u8], i: usize) -> Option<String> {
    let mut depth = 0usize;
    let mut end = i;
    while end < code.len() {
        match code[end] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 => break,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => break,
            _ => {}
        }
        end += 1;
    }
    let text = String::from_utf8_lossy(&code[i..end]);
    let arg = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!arg.is_empty()).then_some(arg)
}

/// The short op name of a full one: `all_reduce_` for `torch.ops._c10d_functional.all_reduce_.default`.
fn short_op(op: &str) -> &str {
    match op.strip_prefix("torch.ops.") {
        Some(rest) => rest.split('.').nth(1).unwrap_or(op),
        None => op,
    }
}

fn is_wait(op: &str) -> bool {
    short_op(op) == "wait_tensor"
}

/// The names a wait may use for a collective's result: its handle, or the elements of a list
/// handle (coalesced in-place ops wait on each input).
fn handle_names(handle: &str) -> Vec<String> {
    match handle.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(list) => list.split(',').map(str::trim).filter(|s| is_identifier(s)).map(str::to_string).collect(),
        None => vec![handle.to_string()],
    }
}

/// The collective calls of one output code, and which of them found no partner.
#[derive(Debug, Default, PartialEq)]
pub struct CodeScan {
    pub calls: Vec<CollectiveCall>,
    /// Indexes in `calls` of collectives no wait waits for.
    pub unmatched: Vec<usize>,
    /// Indexes in `calls` of waits for no earlier collective.
    pub unmatched_waits: Vec<usize>,
}

/// Finds the functional collective calls of a generated Python wrapper and pairs collectives with
/// waits (see `CollectiveCall::handle` for the handle rule). A wait matches the latest earlier
/// collective whose handle (or a list element of it, or an alias `Y = handle[i]` as coalesced
/// out-of-place ops are unpacked) it names.
pub fn scan_output_code(payload: &[u8]) -> CodeScan {
    let mut scan = CodeScan::default();
    if !payload.windows(NAMESPACE_MARK.len()).any(|w| w == NAMESPACE_MARK) {
        return scan;
    }
    let code = blank_comments_and_strings(payload);
    // Name -> (index in `calls` of the collective it stands for).
    let mut pending: HashMap<String, usize> = HashMap::default();
    let mut waited: Vec<bool> = Vec::new();
    let mut line_start = 0;
    for (line_index, line) in code.split(|&b| b == b'\n').enumerate() {
        let mut statement_start = line_start;
        for statement in line.split(|&b| b == b';') {
            let offset = statement_start;
            statement_start += statement.len() + 1;
            let mut found_call = false;
            let mut at = 0;
            while let Some(pos) = statement[at..].windows(5).position(|w| w == b"torch").map(|p| p + at) {
                at = pos + 5;
                if pos > 0 && (is_ident_byte(statement[pos - 1]) || statement[pos - 1] == b'.') {
                    continue;
                }
                let Some((op, after_paren)) = op_call_at(&code, offset + pos) else { continue };
                found_call = true;
                let argument = first_argument(&code, after_paren);
                let prefix = String::from_utf8_lossy(&statement[..pos]);
                let assigned = prefix.trim_end().strip_suffix('=').map(str::trim).filter(|lhs| is_identifier(lhs));
                let index = scan.calls.len();
                let handle = if is_wait(&op) {
                    match argument.as_deref().and_then(|a| pending.get(a)) {
                        Some(&collective) => waited[collective] = true,
                        None => scan.unmatched_waits.push(index),
                    }
                    argument
                } else {
                    let handle = assigned.map(str::to_string).or(argument);
                    for name in handle.iter().flat_map(|h| handle_names(h)) {
                        pending.insert(name, index);
                    }
                    handle
                };
                waited.push(false);
                scan.calls.push(CollectiveCall { op, handle, line: line_index as u64 + 1 });
            }
            if !found_call {
                record_alias(statement, &mut pending);
            }
        }
        line_start += line.len() + 1;
    }
    scan.unmatched = (0..scan.calls.len()).filter(|&i| !is_wait(&scan.calls[i].op) && !waited[i]).collect();
    scan
}

/// `Y = X[...]` with `X` a pending handle makes `Y` stand for the same collective.
fn record_alias(statement: &[u8], pending: &mut HashMap<String, usize>) {
    let text = String::from_utf8_lossy(statement);
    let Some((lhs, rhs)) = text.split_once('=') else { return };
    let (lhs, rhs) = (lhs.trim(), rhs.trim());
    let Some((base, _)) = rhs.split_once('[') else { return };
    if !is_identifier(lhs) || !rhs.ends_with(']') {
        return;
    }
    if let Some(&collective) = pending.get(base.trim()) {
        pending.insert(lhs.to_string(), collective);
    }
}

/// tlparse's `normalize_op`, applied to the short op name.
fn tlparse_kind(op: &str) -> String {
    let name = short_op(op).trim_end_matches('_');
    for kind in ["all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all"] {
        if name.contains(kind) {
            return kind.to_string();
        }
    }
    if name.contains("reduce") { "reduce".to_string() } else { name.to_string() }
}

/// Compares the schedules' ops with the code's calls (see `Parity`).
pub fn parity(schedules: &[Schedule], code: &[OutputCode]) -> Parity {
    let scheduled: Vec<&str> = schedules.iter().flat_map(|s| s.ops.iter().flatten()).map(String::as_str).collect();
    let called: Vec<&str> = code.iter().flat_map(|c| &c.calls).map(|c| c.op.as_str()).collect();
    let unnamed = schedules.iter().flat_map(|s| &s.ops).filter(|o| o.is_none()).count() as u64;
    let mut ops: Vec<OpCount> = Vec::new();
    let mut tally = |op: &str, in_schedule: bool| {
        let at = match ops.iter().position(|c| c.op == op) {
            Some(at) => at,
            None => {
                ops.push(OpCount { op: op.to_string(), schedule: 0, code: 0, matches: true });
                ops.len() - 1
            }
        };
        if in_schedule { ops[at].schedule += 1 } else { ops[at].code += 1 }
    };
    scheduled.iter().for_each(|op| tally(op, true));
    called.iter().for_each(|op| tally(op, false));
    for c in &mut ops {
        c.matches = c.schedule == c.code;
    }
    let mut by_kind: Vec<(String, i64)> = Vec::new();
    for (op, sign) in scheduled.iter().map(|o| (o, 1)).chain(called.iter().map(|o| (o, -1))) {
        if is_wait(op) {
            continue;
        }
        let kind = tlparse_kind(op);
        match by_kind.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += sign,
            None => by_kind.push((kind, sign)),
        }
    }
    let waits = called.iter().filter(|o| is_wait(o)).count() as u64;
    let collectives = called.len() as u64 - waits;
    Parity {
        matches: ops.iter().all(|c| c.matches),
        same_sequence: scheduled == called,
        only_in_schedule: ops.iter().filter(|c| c.code == 0).map(|c| c.op.clone()).collect(),
        only_in_code: ops.iter().filter(|c| c.schedule == 0).map(|c| c.op.clone()).collect(),
        ops,
        unnamed_in_schedule: unnamed,
        tlparse_offset: by_kind.iter().map(|(_, n)| n.unsigned_abs()).sum(),
        tlparse_missing_waits: collectives.saturating_sub(waits),
    }
}

/// What was observed for one compile id. Most compiles of a long log have output code and
/// nothing else, kept until the tables finish in case a schedule comes: so it is held small.
#[derive(Default, Serialize, Deserialize)]
struct Observed {
    schedules: Vec<Schedule>,
    code: Vec<HeldCode>,
    /// The calls without a partner: (collectives, waits); few compiles have any.
    unmatched: Option<Box<(Vec<UnmatchedCall>, Vec<UnmatchedCall>)>>,
}

/// An [`OutputCode`] as held until the table finishes: its blob id as bytes, not hex.
#[derive(Serialize, Deserialize)]
struct HeldCode {
    seq: u64,
    line: u64,
    blob: BlobId,
    calls: Vec<CollectiveCall>,
}

impl HeldCode {
    fn row(self) -> OutputCode {
        OutputCode { seq: self.seq, line: self.line, blob: hex(&self.blob), calls: self.calls }
    }
}

#[derive(Default)]
pub struct CollectivesTable {
    /// By compile record (`Observe::record`); those long past written out.
    by_compile: PerCompile<Observed>,
    /// Of the entries outside any compile.
    outside: Observed,
    /// Whether any compile logged its collective schedule.
    schedules_seen: bool,
}

impl CollectivesTable {
    /// What was observed of compile `record` (`None`: outside any compile).
    fn observed(&mut self, record: Option<u32>) -> &mut Observed {
        match record {
            Some(record) => self.by_compile.entry(record),
            None => &mut self.outside,
        }
    }
}

impl Table for CollectivesTable {
    type Format = crate::schema::tables::Collectives;
    type Output<'a> = Collectives;

    fn new(store: &Store) -> Self {
        CollectivesTable { by_compile: PerCompile::new(store), ..CollectivesTable::default() }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        if ev.kind == "artifact" && ev.name == Some(SCHEDULE) {
            let Some(payload) = ev.payload else {
                diags.unusable(Self::NAME, ev, "no payload");
                return;
            };
            let Some(Value::Array(items)) = ev.payload_json() else {
                diags.unusable(Self::NAME, ev, "payload is not a JSON list");
                return;
            };
            let ops = items.iter().map(|i| i.as_str().map(str::to_string)).collect();
            let schedule = Schedule { seq: ev.seq, line: ev.line, blob: payload.hash.to_string(), ops };
            self.schedules_seen = true;
            self.observed(cx.record).schedules.push(schedule);
        } else if ev.kind == "inductor_output_code" {
            let Some(payload) = ev.payload else { return };
            let Some(blob) = parse_blob_id(payload.hash) else { return };
            let scan = scan_output_code(payload.bytes);
            let unmatched = |indexes: &[usize]| -> Vec<UnmatchedCall> {
                indexes
                    .iter()
                    .map(|&i| {
                        let c = &scan.calls[i];
                        UnmatchedCall {
                            op: c.op.clone(),
                            handle: c.handle.clone(),
                            line: c.line,
                            blob: payload.hash.to_string(),
                        }
                    })
                    .collect()
            };
            let (unmatched_collectives, unmatched_waits) =
                (unmatched(&scan.unmatched), unmatched(&scan.unmatched_waits));
            let observed = self.observed(cx.record);
            if !unmatched_collectives.is_empty() || !unmatched_waits.is_empty() {
                let held = observed.unmatched.get_or_insert_default();
                held.0.extend(unmatched_collectives);
                held.1.extend(unmatched_waits);
            }
            observed.code.push(HeldCode { seq: ev.seq, line: ev.line, blob, calls: scan.calls });
        }
    }

    fn finish(self, ctx: &Finish) -> Option<(Collectives, u64)> {
        let stream_logs_schedules = self.schedules_seen;
        let records = &ctx.compiles.records;
        let keyed = (self.by_compile.into_values().map(|(record, o)| (Some(records.id(record as usize)), o)))
            .chain(std::iter::once((None, self.outside)));
        let compiles: Vec<CompileCollectives> = keyed
            .filter(|(_, o)| !o.schedules.is_empty() || o.code.iter().any(|c| !c.calls.is_empty()))
            .map(|(id, o)| {
                let code: Vec<OutputCode> = o.code.into_iter().map(HeldCode::row).collect();
                let comparable = !code.is_empty() && (stream_logs_schedules || !o.schedules.is_empty());
                let (unmatched, unmatched_waits) = o.unmatched.map(|held| *held).unwrap_or_default();
                CompileCollectives {
                    compile_id: id.as_ref().map(display_compile_id),
                    parity: comparable.then(|| parity(&o.schedules, &code)),
                    schedules: o.schedules,
                    code,
                    unmatched,
                    unmatched_waits,
                }
            })
            .collect();
        if compiles.is_empty() {
            return None;
        }
        let count = |f: &dyn Fn(&CompileCollectives) -> bool| compiles.iter().filter(|c| f(c)).count() as u64;
        let summary = CollectivesSummary {
            with_schedule: count(&|c| !c.schedules.is_empty()),
            with_code_calls: count(&|c| c.code.iter().any(|o| !o.calls.is_empty())),
            parity_checked: count(&|c| c.parity.is_some()),
            parity_mismatches: compiles
                .iter()
                .filter(|c| c.parity.as_ref().is_some_and(|p| !p.matches))
                .map(|c| c.compile_id.clone().unwrap_or_else(|| "[-/-]".to_string()))
                .collect(),
            unmatched_collectives: compiles.iter().map(|c| c.unmatched.len() as u64).sum(),
            unmatched_waits: compiles.iter().map(|c| c.unmatched_waits.len() as u64).sum(),
        };
        let rows = compiles.len() as u64;
        Some((Collectives { summary, compiles }, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AR: &str = "torch.ops._c10d_functional.all_reduce_.default";
    const AG: &str = "torch.ops._c10d_functional.all_gather_into_tensor.default";
    const WAIT: &str = "torch.ops._c10d_functional.wait_tensor.default";

    fn ops(scan: &CodeScan) -> Vec<(&str, Option<&str>, u64)> {
        scan.calls.iter().map(|c| (short_op(&c.op), c.handle.as_deref(), c.line)).collect()
    }

    #[test]
    fn comments_and_strings_are_not_calls() {
        let code = format!(
            "# {AR}(buf0)\nx = '''\n{AR}(buf9)\n'''\n        {AR}(buf4, 'sum', '0')\n        #{WAIT}(buf4)\n        assert_size_stride(buf4, (2, 2), (2, 1), '{AR}')\n        s = \"{WAIT}(buf4)\"\n"
        );
        let scan = scan_output_code(code.as_bytes());
        assert_eq!(ops(&scan), [("all_reduce_", Some("buf4"), 5)]);
        assert_eq!(scan.unmatched, [0]);
        assert!(scan.unmatched_waits.is_empty());
    }

    #[test]
    fn handles_are_the_assignment_or_the_first_argument() {
        let code = format!(
            "        {AR}(buf4, 'sum', '0')\n        buf11 = {AG}(buf10, 2, '0')\n        {WAIT}(buf4)\n        {WAIT}(buf11)\n        {WAIT}(arg3_1)\n"
        );
        let scan = scan_output_code(code.as_bytes());
        assert_eq!(
            ops(&scan),
            [
                ("all_reduce_", Some("buf4"), 1),
                ("all_gather_into_tensor", Some("buf11"), 2),
                ("wait_tensor", Some("buf4"), 3),
                ("wait_tensor", Some("buf11"), 4),
                ("wait_tensor", Some("arg3_1"), 5),
            ]
        );
        assert!(scan.unmatched.is_empty());
        assert_eq!(scan.unmatched_waits, [4]);
    }

    #[test]
    fn coalesced_collectives_are_waited_through_their_parts() {
        // As torch's test_c10d_functional_native checks the generated code.
        let code = "buf1 = torch.ops._c10d_functional.all_gather_into_tensor_coalesced.default([buf0, arg0_1], 2, '0')\nbuf2 = buf1[0]\nbuf3 = buf1[1]\ntorch.ops._c10d_functional.wait_tensor.default(buf2)\ntorch.ops._c10d_functional.all_reduce_coalesced_.default([buf5, buf6], 'sum', '0')\nbuf7 = buf5; del buf5  # reuse\ntorch.ops._c10d_functional.wait_tensor.default(buf6)\n";
        let scan = scan_output_code(code.as_bytes());
        assert_eq!(scan.calls[0].handle.as_deref(), Some("buf1"));
        assert_eq!(scan.calls[2].handle.as_deref(), Some("[buf5, buf6]"));
        assert!(scan.unmatched.is_empty());
        assert!(scan.unmatched_waits.is_empty());
    }

    #[test]
    fn a_reused_handle_needs_its_own_wait() {
        let code = format!("{AR}(buf4)\n{WAIT}(buf4)\n{AR}(buf4)\n");
        let scan = scan_output_code(code.as_bytes());
        assert_eq!(scan.unmatched, [2]);
    }

    #[test]
    fn parity_counts_every_kind_and_tlparse_offset_leaves_out_waits() {
        let schedule =
            Schedule { seq: 0, line: 1, blob: String::new(), ops: vec![Some(AR.into()), None, Some(WAIT.into())] };
        let code = format!("{AR}(buf4)\nbuf5 = {AG}(buf4)\n{WAIT}(buf4)\n{WAIT}(buf5)\n");
        let out = OutputCode { seq: 1, line: 2, blob: String::new(), calls: scan_output_code(code.as_bytes()).calls };
        let p = parity(&[schedule], &[out]);
        assert!(!p.matches);
        assert!(!p.same_sequence);
        assert_eq!(p.unnamed_in_schedule, 1);
        assert_eq!(p.only_in_code, [AG]);
        assert!(p.only_in_schedule.is_empty());
        let wait = p.ops.iter().find(|c| c.op == WAIT).unwrap();
        assert_eq!((wait.schedule, wait.code, wait.matches), (1, 2, false));
        assert_eq!(p.tlparse_offset, 1);
        assert_eq!(p.tlparse_missing_waits, 0);
    }

    #[test]
    fn tlparse_kinds() {
        assert_eq!(tlparse_kind(AR), "all_reduce");
        assert_eq!(tlparse_kind("torch.ops._c10d_functional.reduce_scatter_tensor.default"), "reduce_scatter");
        assert_eq!(tlparse_kind("torch.ops._c10d_functional.all_to_all_single.default"), "all_to_all");
        assert_eq!(tlparse_kind("torch.ops._c10d_functional.reduce.default"), "reduce");
    }
}
