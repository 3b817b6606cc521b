//! The mutators: seeded, deterministic edits of a log, from blind byte damage to hostile values
//! put where the parser and the tables will read them. Every mutator changes its input.

use crate::hostile::{self, Hostile};
use crate::lines::{self, Lines};
use crate::rng::Rng;

/// How big the long things a mutator makes may get.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Longest string, line or payload made normally.
    pub long: usize,
    /// Size of the rare memory probe (a line or payload this long), if probes are on.
    pub probe: Option<usize>,
}

impl Budget {
    /// In-process parsing: nothing longer than 256 KiB, so thousands of cases run a second.
    pub const PARSE: Budget = Budget { long: 256 << 10, probe: None };
    /// Whole builds: strings and lines up to 4 MiB, and now and then a 40 MiB one.
    pub const BUILD: Budget = Budget { long: 4 << 20, probe: Some(40 << 20) };

    /// A length for a long thing: usually up to `long`, one time in 30 the probe size.
    fn long_len(&self, rng: &mut Rng) -> usize {
        match self.probe {
            Some(probe) if rng.one_in(30) => probe,
            _ => rng.log_size(1 << 10, self.long),
        }
    }
}

macro_rules! mutations {
    ($($variant:ident => $name:literal, $apply:path;)*) => {
        /// One kind of edit.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Mutation { $($variant,)* }

        impl Mutation {
            /// Every mutator.
            pub const ALL: &'static [Mutation] = &[$(Mutation::$variant,)*];

            /// The name used in reports.
            pub fn name(self) -> &'static str {
                match self { $(Mutation::$variant => $name,)* }
            }

            /// Applies the edit; `donor` is another log, for splicing.
            pub fn apply(self, rng: &mut Rng, input: &[u8], donor: &[u8], budget: Budget) -> Vec<u8> {
                match self { $(Mutation::$variant => $apply(rng, input, donor, budget),)* }
            }
        }
    };
}

mutations! {
    BitFlips => "bit_flips", bit_flips;
    InsertBytes => "insert_bytes", insert_bytes;
    DeleteBytes => "delete_bytes", delete_bytes;
    DeleteLines => "delete_lines", delete_lines;
    DuplicateLines => "duplicate_lines", duplicate_lines;
    SwapLines => "swap_lines", swap_lines;
    Truncate => "truncate", truncate;
    Splice => "splice", splice;
    CrLf => "crlf", crlf;
    Nul => "nul", nul;
    InvalidUtf8 => "invalid_utf8", invalid_utf8;
    LoneSurrogate => "lone_surrogate", lone_surrogate;
    HostileNumber => "hostile_number", hostile_number;
    DeepNesting => "deep_nesting", deep_nesting;
    LongString => "long_string", long_string;
    LongLine => "long_line", long_line;
    Banner => "banner", banner;
    Md5 => "md5", md5;
    OrphanPayload => "orphan_payload", orphan_payload;
    HugePayload => "huge_payload", huge_payload;
    GlogPrefix => "glog_prefix", glog_prefix;
}

impl Mutation {
    /// A mutator: the structured ones (which reach deeper code) as often as the blind ones.
    pub fn pick(rng: &mut Rng) -> Mutation {
        *rng.pick(Mutation::ALL)
    }
}

fn bit_flips(rng: &mut Rng, input: &[u8], _: &[u8], _: Budget) -> Vec<u8> {
    if input.is_empty() {
        return vec![rng.byte()];
    }
    let mut out = input.to_vec();
    let mut positions: Vec<usize> = (0..rng.between(1, 8)).map(|_| rng.below(input.len())).collect();
    positions.sort_unstable();
    positions.dedup();
    for at in positions {
        out[at] ^= 1 << rng.below(8);
    }
    out
}

/// Bytes that mean something to a log's reader.
const MEANINGFUL: &[&[u8]] = &[b"\n", b"\t", b"\n\t", b"{", b"}", b"\"", b"\\", b"] ", b"\r", b"V0101 ", b":", b","];

fn insert_bytes(rng: &mut Rng, input: &[u8], _: &[u8], _: Budget) -> Vec<u8> {
    let at = rng.below(input.len() + 1);
    let text: Vec<u8> = if rng.one_in(2) {
        rng.pick(MEANINGFUL).to_vec()
    } else {
        (0..rng.between(1, 64)).map(|_| rng.byte()).collect()
    };
    [&input[..at], &text, &input[at..]].concat()
}

fn delete_bytes(rng: &mut Rng, input: &[u8], donor: &[u8], budget: Budget) -> Vec<u8> {
    if input.is_empty() {
        return insert_bytes(rng, input, donor, budget);
    }
    let at = rng.below(input.len());
    let len = rng.between(1, (input.len() - at).min(256));
    [&input[..at], &input[at + len..]].concat()
}

fn delete_lines(rng: &mut Rng, input: &[u8], donor: &[u8], budget: Budget) -> Vec<u8> {
    let mut log = Lines::split(input);
    if log.lines.is_empty() {
        return insert_bytes(rng, input, donor, budget);
    }
    let at = rng.below(log.lines.len());
    let len = rng.between(1, (log.lines.len() - at).min(4));
    log.lines.drain(at..at + len);
    changed_or(log.join(), input, || input[..input.len() - 1].to_vec())
}

fn duplicate_lines(rng: &mut Rng, input: &[u8], donor: &[u8], budget: Budget) -> Vec<u8> {
    let mut log = Lines::split(input);
    if log.lines.is_empty() {
        return insert_bytes(rng, input, donor, budget);
    }
    let at = rng.below(log.lines.len());
    let run: Vec<Vec<u8>> = log.lines[at..(at + rng.between(1, 4)).min(log.lines.len())].to_vec();
    let to = rng.below(log.lines.len() + 1);
    log.lines.splice(to..to, run);
    log.final_newline = true;
    changed_or(log.join(), input, || [input, b"\n"].concat())
}

fn swap_lines(rng: &mut Rng, input: &[u8], donor: &[u8], budget: Budget) -> Vec<u8> {
    let mut log = Lines::split(input);
    let a = if log.lines.is_empty() { 0 } else { rng.below(log.lines.len()) };
    // Swap with a line that differs, or there is nothing to swap: duplicate instead.
    let others: Vec<usize> = (0..log.lines.len()).filter(|&b| log.lines[b] != log.lines[a]).collect();
    if others.is_empty() {
        return duplicate_lines(rng, input, donor, budget);
    }
    let b = *rng.pick(&others);
    log.lines.swap(a, b);
    log.join()
}

fn truncate(rng: &mut Rng, input: &[u8], donor: &[u8], budget: Budget) -> Vec<u8> {
    if input.is_empty() {
        return insert_bytes(rng, input, donor, budget);
    }
    input[..rng.below(input.len())].to_vec()
}

fn splice(rng: &mut Rng, input: &[u8], donor: &[u8], _: Budget) -> Vec<u8> {
    let mut log = Lines::split(input);
    let donor = Lines::split(donor);
    let from = rng.below(donor.lines.len().max(1));
    let mut run: Vec<Vec<u8>> = donor.lines.iter().skip(from).take(rng.between(1, 40)).cloned().collect();
    if run.is_empty() {
        run.push(lines::synthetic_header("{\"spliced\": {}}"));
    }
    let boundaries = log.entry_boundaries();
    let at = *rng.pick(&boundaries);
    // Insert the run, or let it replace a few lines.
    let replace = if rng.one_in(2) { rng.between(0, 3).min(log.lines.len() - at) } else { 0 };
    log.lines.splice(at..at + replace, run);
    log.final_newline = true;
    changed_or(log.join(), input, || [input, b"\nV0101 00:00:00.000000 1 a.py:1] {}\n"].concat())
}

fn crlf(rng: &mut Rng, input: &[u8], _: &[u8], _: Budget) -> Vec<u8> {
    let newlines: Vec<usize> = (0..input.len()).filter(|&i| input[i] == b'\n').collect();
    if newlines.is_empty() || rng.one_in(4) {
        // A lone `\r` somewhere, which some readers take for a line end.
        let at = rng.below(input.len() + 1);
        return [&input[..at], b"\r", &input[at..]].concat();
    }
    // `\r\n` on a run of lines (all of them, a third of the time).
    let (first, last) = if rng.one_in(3) {
        (0, newlines.len() - 1)
    } else {
        let first = rng.below(newlines.len());
        (first, rng.between(first, (first + 50).min(newlines.len() - 1)))
    };
    let mut out = Vec::with_capacity(input.len() + last - first + 1);
    let mut start = 0;
    for &nl in &newlines[first..=last] {
        out.extend_from_slice(&input[start..nl]);
        out.extend_from_slice(b"\r\n");
        start = nl + 1;
    }
    out.extend_from_slice(&input[start..]);
    out
}

fn nul(rng: &mut Rng, input: &[u8], _: &[u8], _: Budget) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..rng.between(1, 16) {
        let at = rng.below(out.len() + 1);
        let run = vec![0u8; rng.between(1, 8)];
        out.splice(at..at, run);
    }
    out
}

/// Byte sequences that are not UTF-8: stray bytes, a lone lead byte, an overlong form, an
/// encoded surrogate, a cut-off four-byte sequence, Latin-1.
const NOT_UTF8: &[&[u8]] =
    &[b"\xff", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"caf\xe9", b"\xfe\xfe\xff", b"\x80"];

fn invalid_utf8(rng: &mut Rng, input: &[u8], _: &[u8], _: Budget) -> Vec<u8> {
    let bad = *rng.pick(NOT_UTF8);
    let mut log = Lines::split(input);
    let headers = log.headers();
    // Mostly into a header line (the parser reads those as text), else anywhere.
    if !headers.is_empty() && !rng.one_in(5) {
        let h = *rng.pick(&headers);
        let line = &log.lines[h];
        let at = rng.below(line.len() + 1);
        log.lines[h] = [&line[..at], bad, &line[at..]].concat();
        return log.join();
    }
    let at = rng.below(input.len() + 1);
    [&input[..at], bad, &input[at..]].concat()
}

fn lone_surrogate(rng: &mut Rng, input: &[u8], _: &[u8], _: Budget) -> Vec<u8> {
    let value = Hostile::InString(rng.pick(hostile::SURROGATES).to_string());
    inject_into_log(rng, input, &value)
}

fn hostile_number(rng: &mut Rng, input: &[u8], _: &[u8], _: Budget) -> Vec<u8> {
    let value = Hostile::Number(rng.pick(hostile::NUMBERS).to_string());
    inject_into_log(rng, input, &value)
}

fn deep_nesting(rng: &mut Rng, input: &[u8], _: &[u8], _: Budget) -> Vec<u8> {
    // Just past serde_json's limit of 128 most of the time; now and then far past it, for any
    // reader that recurses without a limit.
    let depth = if rng.one_in(10) { rng.log_size(2_000, 100_000) } else { rng.between(120, 2_000) };
    let value = Hostile::Value(hostile::deep_value(rng, depth));
    inject_into_log(rng, input, &value)
}

fn long_string(rng: &mut Rng, input: &[u8], _: &[u8], budget: Budget) -> Vec<u8> {
    let len = budget.long_len(rng);
    let value = Hostile::InString(hostile::long_string(rng, len));
    inject_into_log(rng, input, &value)
}

fn long_line(rng: &mut Rng, input: &[u8], _: &[u8], budget: Budget) -> Vec<u8> {
    let len = budget.long_len(rng);
    let mut log = Lines::split(input);
    let filler = |rng: &mut Rng| -> Vec<u8> { rng.pick(&[b"a".as_slice(), b"{", b"\t", b"\xff"]).repeat(len) };
    let line = match rng.below(4) {
        // Stray text, a header's prefix before garbage, or a payload line.
        0 => filler(rng),
        1 => [lines::synthetic_header("").as_slice(), &filler(rng)].concat(),
        2 => [b"\t".as_slice(), &filler(rng)].concat(),
        // The log's last line, with no newline after it.
        _ => {
            let mut out = input.to_vec();
            out.extend(filler(rng));
            return out;
        }
    };
    let at = rng.below(log.lines.len() + 1);
    log.lines.insert(at, line);
    log.final_newline = true;
    log.join()
}

/// What shows up in a log before the first header when something else writes to the same file.
const BANNERS: &[&str] = &[
    "+ python train.py --compile",
    "Loading checkpoint shards: 100%|\u{2588}\u{2588}\u{2588}| 2/2",
    "*****************************************",
    "",
    "W1120 23:44:52.007000 4242 torch/distributed/run.py:793] ",
    "I1120 23:44:52.007000 4242 torch/_dynamo/config.py:10] not json at all",
    "\u{feff}",
    "\tan orphan payload line",
    "[rank0]: Traceback (most recent call last):",
];

fn banner(rng: &mut Rng, input: &[u8], _: &[u8], budget: Budget) -> Vec<u8> {
    let mut text: Vec<u8> = Vec::new();
    for _ in 0..rng.between(1, 5) {
        text.extend_from_slice(rng.pick(BANNERS).as_bytes());
        text.push(b'\n');
    }
    // Now and then a banner too long to look past cheaply.
    if budget.probe.is_some() && rng.one_in(20) {
        let line = b"Still loading...\n".repeat(rng.log_size(1 << 16, 5 << 20) / 17 + 1);
        text.extend_from_slice(&line);
    }
    // A byte-order mark goes right before the first header, on its line.
    if text == "\u{feff}\n".as_bytes() {
        text.pop();
    }
    [text.as_slice(), input].concat()
}

fn md5(rng: &mut Rng, input: &[u8], donor: &[u8], budget: Budget) -> Vec<u8> {
    let mut log = Lines::split(input);
    let with_md5: Vec<usize> =
        log.headers().into_iter().filter(|&h| lines::find(&log.lines[h], b"\"has_payload\"").is_some()).collect();
    if with_md5.is_empty() {
        return huge_payload(rng, input, donor, budget);
    }
    let h = *rng.pick(&with_md5);
    let line = log.lines[h].clone();
    let start = lines::find(&line, b"\"has_payload\"").expect("found above");
    let value_end = start + line[start..].iter().position(|&b| b == b',' || b == b'}').unwrap_or(line.len() - start);
    let replacement: &[u8] = match rng.below(5) {
        0 => b"\"has_payload\": \"ffffffffffffffffffffffffffffffff\"",
        1 => b"\"has_payload\": \"not-an-md5\"",
        2 => b"\"has_payload\": 12345",
        3 => b"\"has_payload\": null",
        // Removed (with the comma before it, if any).
        _ => b"",
    };
    let start = if replacement.is_empty() && line[..start].ends_with(b", ") { start - 2 } else { start };
    log.lines[h] = [&line[..start], replacement, &line[value_end..]].concat();
    changed_or(log.join(), input, || [input, b"\n\tlost"].concat())
}

fn orphan_payload(rng: &mut Rng, input: &[u8], _: &[u8], _: Budget) -> Vec<u8> {
    let mut log = Lines::split(input);
    let with_payload = log.headers_with_payload();
    // Drop a header and keep its payload lines (they then follow another entry, or none), or
    // put payload lines where no header precedes them.
    if !with_payload.is_empty() && rng.one_in(2) {
        log.lines.remove(*rng.pick(&with_payload));
        return log.join();
    }
    let orphans: Vec<Vec<u8>> = (0..rng.between(1, 5)).map(|i| format!("\torphan {i}").into_bytes()).collect();
    let at = if rng.one_in(2) { 0 } else { rng.below(log.lines.len() + 1) };
    log.lines.splice(at..at, orphans);
    log.final_newline = true;
    log.join()
}

fn huge_payload(rng: &mut Rng, input: &[u8], _: &[u8], budget: Budget) -> Vec<u8> {
    let mut log = Lines::split(input);
    let len = budget.long_len(rng);
    let payload = match rng.below(3) {
        // Many short lines, one long line, or a trace event with a huge argument.
        0 => b"x = torch.ones(3)\n".repeat(len / 18 + 1).trim_ascii_end().to_vec(),
        1 => b"a".repeat(len),
        _ => format!(
            "{{\n\"name\": \"huge\",\n\"ts\": 1700000000000000,\n\"args\": {{\"big\": \"{}\"}},\n\"ph\": \"i\",\n\"pid\": 0,\n\"tid\": 0\n}}",
            "b".repeat(len)
        )
        .into_bytes(),
    };
    let kind = rng.pick(&[
        r#""chromium_event": {}"#,
        r#""artifact": {"name": "huge", "encoding": "string"}"#,
        r#""inductor_output_code": {"filename": "/tmp/x.py"}"#,
        r#""dynamo_output_graph": {"sizes": {}}"#,
    ]);
    let envelope = format!(
        "{{{kind}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": \"{}\"}}",
        lines::md5_hex(&payload)
    );
    let at = *rng.pick(&log.entry_boundaries());
    log.lines.insert(at, lines::synthetic_header(&envelope));
    log.set_payload(at, &payload);
    log.final_newline = true;
    log.join()
}

fn glog_prefix(rng: &mut Rng, input: &[u8], _: &[u8], _: Budget) -> Vec<u8> {
    let mut log = Lines::split(input);
    let headers = log.headers();
    if headers.is_empty() {
        log.lines.insert(0, lines::synthetic_header("{\"str\": [\"a.py\", 0]}"));
        return log.join();
    }
    let h = *rng.pick(&headers);
    let line = log.lines[h].clone();
    let envelope = lines::envelope_start(&line).expect("a header");
    let prefix = match rng.below(6) {
        0 => "V9999 99:99:99.999999 4242 a.py:1] ".to_string(),
        1 => "V0101 00:00:00.0000000000000000000001 4242 a.py:1] ".to_string(),
        2 => "V0101 00:00:00.000000 18446744073709551616 a.py:1] ".to_string(),
        3 => "V0101 00:00:00.000000 0 a.py:99999999999999999999999] ".to_string(),
        4 => "X0101 00:00:00.000000 4242 a.py:1] ".to_string(),
        _ => format!("V0101 00:00:00.000000 {} a.py:1] ", rng.next_u64()),
    };
    log.lines[h] = [prefix.as_bytes(), &line[envelope..]].concat();
    changed_or(log.join(), input, || [b"V".as_slice(), input].concat())
}

/// Puts a hostile value into the JSON of a header's envelope or, a third of the time, of a
/// payload (whose md5 is then usually fixed, so the payload is read as valid).
fn inject_into_log(rng: &mut Rng, input: &[u8], value: &Hostile) -> Vec<u8> {
    let mut log = Lines::split(input);
    let headers = log.headers();
    if headers.is_empty() {
        let envelope = hostile::inject(rng, b"{\"str\": [\"a.py\", 0]}", value);
        log.lines.insert(0, lines::synthetic_header(&String::from_utf8_lossy(&envelope)));
        log.final_newline = true;
        return log.join();
    }
    let json_payloads: Vec<usize> = log
        .headers_with_payload()
        .into_iter()
        .filter(|&h| matches!(log.lines[h + 1].get(1), Some(b'{' | b'[')))
        .collect();
    if !json_payloads.is_empty() && rng.one_in(3) {
        let h = *rng.pick(&json_payloads);
        let payload = hostile::inject(rng, &log.payload_text(h), value);
        log.set_payload(h, &payload);
        if !rng.one_in(5) {
            log.fix_md5(h);
        }
    } else {
        let h = *rng.pick(&headers);
        let start = lines::envelope_start(&log.lines[h]).expect("a header");
        let envelope = hostile::inject(rng, &log.lines[h][start..], value);
        log.lines[h].truncate(start);
        log.lines[h].extend_from_slice(&envelope);
    }
    log.join()
}

/// `out`, or `fallback()` in the rare case an edit left the input as it was.
fn changed_or(out: Vec<u8>, input: &[u8], fallback: impl FnOnce() -> Vec<u8>) -> Vec<u8> {
    if out == input { fallback() } else { out }
}

/// Applies one to four mutations, each on the result of the last; returns the result and the
/// names of the mutations, in order.
pub fn mutate(rng: &mut Rng, input: &[u8], donor: &[u8], budget: Budget) -> (Vec<u8>, Vec<&'static str>) {
    let mut text = input.to_vec();
    let mut names = Vec::new();
    for _ in 0..rng.between(1, 4) {
        let m = Mutation::pick(rng);
        text = m.apply(rng, &text, donor, budget);
        names.push(m.name());
    }
    (text, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real fixtures of several shapes (payloads, chromium events, string tables, hostile
    /// strings), plus a one-line log.
    fn inputs() -> Vec<Vec<u8>> {
        let root = crate::workspace_root().join("fixtures-repo");
        let mut logs: Vec<Vec<u8>> =
            ["tlparse-tests/comp_metrics.log", "tlparse-tests/links.log", "hostile/hostile.log"]
                .iter()
                .map(|rel| std::fs::read(root.join(rel)).expect("fixture"))
                .collect();
        logs.push(b"V0101 00:00:00.000000 1 a.py:1] {\"str\": [\"a.py\", 0]}\n".to_vec());
        logs
    }

    #[test]
    fn every_mutator_changes_its_input() {
        let inputs = inputs();
        for &m in Mutation::ALL {
            for (i, input) in inputs.iter().enumerate() {
                for seed in 0..40 {
                    let out = m.apply(&mut Rng::new(seed), input, &inputs[0], Budget::PARSE);
                    assert_ne!(&out, input, "{} left input {i} unchanged with seed {seed}", m.name());
                }
            }
        }
    }

    #[test]
    fn mutators_are_deterministic_for_a_seed() {
        let inputs = inputs();
        for &m in Mutation::ALL {
            for seed in 0..20 {
                let once = m.apply(&mut Rng::new(seed), &inputs[0], &inputs[1], Budget::PARSE);
                let again = m.apply(&mut Rng::new(seed), &inputs[0], &inputs[1], Budget::PARSE);
                assert!(once == again, "{} differs between two runs of seed {seed}", m.name());
            }
        }
        let first = mutate(&mut Rng::new(5), &inputs[0], &inputs[1], Budget::BUILD);
        assert_eq!(first, mutate(&mut Rng::new(5), &inputs[0], &inputs[1], Budget::BUILD));
    }

    #[test]
    fn hostile_values_land_in_header_lines() {
        let input = &inputs()[0];
        let mut hits = 0;
        for seed in 0..50 {
            let out = lone_surrogate(&mut Rng::new(seed), input, b"", Budget::PARSE);
            let log = Lines::split(&out);
            let in_header = log.headers().iter().any(|&h| lines::find(&log.lines[h], b"\\u").is_some());
            hits += usize::from(in_header);
        }
        // A third of the injections go into payloads; most of the rest must reach a header.
        assert!(hits >= 25, "only {hits} of 50 surrogates went into a header line");
    }
}
