//! What in a payload is volatile by nature (differs between ranks and runs that did the same
//! work): masked by [`mask_volatile`], the one rule `rank_differ` compares payloads by after
//! their bytes differ. docs/cross_rank/rank_differ.md lists the rule; keep the two in step.

const COMPILE_ID_KEY: &[u8] = b"\"compile_id\": \"";

/// The text that stands for a masked value.
pub const MASK: &[u8] = b"<?>";

/// Whether a byte belongs to a keyed value.
type ValueByte = fn(u8) -> bool;

/// Values that follow a fixed prefix and are volatile whatever they hold: the prefix is kept,
/// the value (its run of `value` bytes) replaced by [`MASK`].
const KEYED: &[(&[u8], ValueByte)] = &[
    // The compile id a payload names (`aotautograd_cache_miss`): a rank whose frame ids are
    // shifted compiled the same code under another id.
    (COMPILE_ID_KEY, |b| b != b'"'),
    // The AOT graph counter of output code's `# AOT ID: ['0_forward']`: it counts every AOT
    // compile of the process, so a rank that compiled one more function numbers the rest apart.
    (b"# AOT ID: ['", |b| b.is_ascii_digit()),
    // Measured times, never the same twice.
    (b"Guard latency = ", is_number),
    (b"\"compile_time_us\": ", is_number),
    // Dynamo's name for the builtins dict it installs as a global, numbered in the process: a
    // rank that compiled one more function numbers it apart.
    (b"__builtins_dict___", |b| b.is_ascii_digit()),
    // Process ids.
    (b"\"pid\": ", |b| b.is_ascii_digit()),
    // The rank itself, in `fx_graph_runnable`'s `setup_fake_process_groups({'0': {'size': 4, 'rank': 1}})`.
    (b"'rank': ", |b| b.is_ascii_digit()),
];

fn is_number(b: u8) -> bool {
    b.is_ascii_digit() || b == b'.'
}

/// Bytes a path is made of (after its leading `/`).
fn is_path(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'~' | b'+')
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Artifacts whose content is a list of compile ids (the order graphs ran in): their compile ids
/// are what they say, never masked.
const COMPILE_IDS_ARE_CONTENT: &[&str] = &["graph_execution", "inductor_graph_execution"];

/// The payload `text` of an artifact called `name` with what is volatile by nature replaced by
/// [`MASK`], so that two payloads equal once
/// masked differ only in ids: object ids and other digit runs of 7 or more, hex addresses
/// (`0x7f…`) (a size of 7 digits or more in a shape or stride list is kept), temporary paths (under `/tmp/` or `/var/tmp/`, or any path through a
/// `torchinductor_*` cache directory: their names are random or content hashes), compile ids
/// (`"compile_id": "1/0"`, `[1/0]`, a recompile reason's leading `1/0: `; but in
/// [`COMPILE_IDS_ARE_CONTENT`]), output code's AOT
/// graph counter and Dynamo's `__builtins_dict___N` global, pids, measured guard latencies and kernel compile times, and the rank in
/// `setup_fake_process_groups`. Device strings (`cuda:0`) are kept: a tensor on another device
/// is a difference a user may need to see.
pub fn mask_volatile(name: &str, text: &[u8]) -> Vec<u8> {
    let ids_kept = COMPILE_IDS_ARE_CONTENT.contains(&name);
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let before = i.checked_sub(1).map(|p| text[p]);
        let line_start = before.is_none_or(|b| b == b'\n');
        let skip = keyed(text, i, ids_kept)
            .or_else(|| hex_address(text, i, before))
            .or_else(|| temp_path(text, i, before))
            .or_else(|| compile_id(text, i, before, line_start).filter(|_| !ids_kept))
            .or_else(|| long_digits(text, i, before));
        match skip {
            Some((kept, end)) => {
                out.extend_from_slice(&text[i..kept]);
                out.extend_from_slice(MASK);
                i = end;
            }
            None => {
                out.push(text[i]);
                i += 1;
            }
        }
    }
    out
}

/// A masked span at `i`: the end of what is kept of it (from `i`) and the end of the span.
type Span = Option<(usize, usize)>;

fn run_end(text: &[u8], from: usize, f: impl Fn(u8) -> bool) -> usize {
    from + text[from..].iter().take_while(|&&b| f(b)).count()
}

fn keyed(text: &[u8], i: usize, ids_kept: bool) -> Span {
    KEYED.iter().filter(|(prefix, _)| !(ids_kept && *prefix == COMPILE_ID_KEY)).find_map(|(prefix, value)| {
        let kept = i + prefix.len();
        let end = text[i..].starts_with(prefix).then(|| run_end(text, kept, value))?;
        (end > kept).then_some((kept, end))
    })
}

/// `0x` and hex digits, not inside a word.
fn hex_address(text: &[u8], i: usize, before: Option<u8>) -> Span {
    if before.is_some_and(is_word) || !text[i..].starts_with(b"0x") {
        return None;
    }
    let end = run_end(text, i + 2, |b| b.is_ascii_hexdigit());
    (end > i + 2).then_some((i + 2, end))
}

/// A path under a temporary directory or through an Inductor cache directory, whole.
fn temp_path(text: &[u8], i: usize, before: Option<u8>) -> Span {
    if text[i] != b'/' || before.is_some_and(is_path) {
        return None;
    }
    let end = run_end(text, i + 1, is_path);
    let path = &text[i..end];
    let temporary = path.starts_with(b"/tmp/") || path.starts_with(b"/var/tmp/");
    let cache = path.windows(15).any(|w| w == b"/torchinductor_");
    (temporary || cache).then_some((i, end))
}

/// A compile id: `[0/1]`, `[0/1_2]`, `[!0/1/2]`, or `0/1: ` opening a line (or a JSON string
/// of a recompile reason list).
fn compile_id(text: &[u8], i: usize, before: Option<u8>, line_start: bool) -> Span {
    let id_byte = |b: u8| b.is_ascii_digit() || matches!(b, b'/' | b'_' | b'-');
    if text[i] == b'[' {
        let from = i + 1 + usize::from(text.get(i + 1) == Some(&b'!'));
        let end = run_end(text, from, id_byte);
        let id = &text[from..end];
        let closed = text.get(end) == Some(&b']');
        return (closed && id.contains(&b'/') && id[0].is_ascii_digit()).then_some((i + 1, end));
    }
    if !(line_start || before == Some(b'"')) || !text[i].is_ascii_digit() {
        return None;
    }
    let end = run_end(text, i, id_byte);
    let id = &text[i..end];
    let reason = text[end..].starts_with(b": ") && id.contains(&b'/');
    reason.then_some((i, end))
}

/// Seven digits or more in a row (object ids, addresses printed in decimal), but for a size in
/// a shape or stride list (`f32[1048576, 16]`: after `[` or `, `, before `,` or `]`).
fn long_digits(text: &[u8], i: usize, before: Option<u8>) -> Span {
    if !text[i].is_ascii_digit() || before.is_some_and(|b| b.is_ascii_digit()) {
        return None;
    }
    let end = run_end(text, i, |b| b.is_ascii_digit());
    let opens_item = before == Some(b'[') || text[..i].ends_with(b", ");
    let closes_item = matches!(text.get(end), Some(b',' | b']'));
    (end - i >= 7 && !(opens_item && closes_item)).then_some((i, end))
}

#[cfg(test)]
mod tests {
    use super::mask_volatile;

    fn masked(text: &str) -> String {
        String::from_utf8(mask_volatile("a", text.as_bytes())).unwrap()
    }

    fn same(a: &str, b: &str) -> bool {
        mask_volatile("a", a.as_bytes()) == mask_volatile("a", b.as_bytes())
    }

    #[test]
    fn object_ids_and_addresses() {
        // ranks_shifted's guards: the id of `torch` differs on every rank.
        assert_eq!(masked("___check_obj_id(G['torch'], 139958002446672)"), "___check_obj_id(G['torch'], <?>)");
        assert!(same("<function f at 0x7f3a2c1b5e40>", "<function f at 0x7f91d0e3a160>"));
        assert_eq!(masked("obj at 0x7f3a2c"), "obj at 0x<?>");
        // Six digits are a size, not an id; a word holding `0x` is a name.
        assert_eq!(masked("numel 123456 of buf0x12"), "numel 123456 of buf0x12");
        // A size of a million elements is content.
        assert!(!same("f32[1048576, 16][16, 1]", "f32[1048577, 16][16, 1]"));
        assert!(!same("size=[16, 1048576]", "size=[16, 2097152]"));
    }

    #[test]
    fn temp_and_cache_paths() {
        assert!(same(
            "# kernel path: /tmp/torchinductor_cache/u7/cu7mirwm4hrhsoflfplz.py\n",
            "# kernel path: /tmp/torchinductor_cache/my/cmyfmoj3csqqipysxnla.py\n"
        ));
        assert!(same(
            "os.environ['TRITON_CACHE_DIR'] = '/tmp/torchinductor_cache/triton/0'",
            "os.environ['TRITON_CACHE_DIR'] = '/tmp/torchinductor_cache/triton/1'"
        ));
        assert!(same("/home/u/.cache/torchinductor_u/ab/cabc.py", "/home/u/.cache/torchinductor_u/cd/ccd.py"));
        // A user's file is no temporary path.
        assert_eq!(masked("File: /home/user/model.py:21"), "File: /home/user/model.py:21");
        assert!(!same("File: /home/user/a.py", "File: /home/user/b.py"));
    }

    #[test]
    fn compile_ids_and_counters() {
        assert!(same(r#"{"key": "aq2v", "compile_id": "0/0"}"#, r#"{"key": "aq2v", "compile_id": "1/0"}"#));
        assert!(!same(r#"{"key": "aq2v", "compile_id": "0/0"}"#, r#"{"key": "zzzz", "compile_id": "1/0"}"#));
        assert!(same("1/0: tensor 'g' rank mismatch", "2/0: tensor 'g' rank mismatch"));
        // graph_exec_order: the order graphs ran in is a list of compile ids, which it says.
        let order =
            |first: &str| format!("{{\n\"graph_execution_order\": [\n{{\n\"compile_id\": \"{first}\"\n}}\n]\n}}");
        let run = |text: String| mask_volatile("graph_execution", text.as_bytes());
        assert_ne!(run(order("0/1")), run(order("0/0")));
        assert!(same("[\n\"1/1: tensor 'g'\",\n\"1/0: x\"\n]", "[\n\"2/1: tensor 'g'\",\n\"2/0: x\"\n]"));
        assert!(same("compiled [0/1_2] then [!0/1/0]", "compiled [3/1_2] then [!1/1/0]"));
        assert!(same("# AOT ID: ['0_backward']\n", "# AOT ID: ['1_backward']\n"));
        assert!(same("source=G['__builtins_dict___4']", "source=G['__builtins_dict___2']"));
        assert!(!same("# AOT ID: ['0_backward']\n", "# AOT ID: ['0_forward']\n"));
        // A shape is no compile id, nor a ratio inside a line.
        assert_eq!(masked("size=[8, 16] ratio 1/2: ok"), "size=[8, 16] ratio 1/2: ok");
        assert!(!same("x = [8, 16]", "x = [12, 16]"));
    }

    #[test]
    fn measurements_pids_and_the_rank() {
        assert!(same("Guard latency = 310.97 us", "Guard latency = 166.68 us"));
        assert!(same(
            r#"{"num_configs": 2, "compile_time_us": 288597}"#,
            r#"{"num_configs": 2, "compile_time_us": 285427}"#
        ));
        assert!(same(r#"{"pid": 0, "tid": 1}"#, r#"{"pid": 4411, "tid": 1}"#));
        assert!(same("{'0': {'size': 4, 'rank': 0}}", "{'0': {'size': 4, 'rank': 3}}"));
        assert!(!same("{'0': {'size': 4, 'rank': 0}}", "{'0': {'size': 8, 'rank': 0}}"));
        // The device is content.
        assert!(!same("f16[1024]cuda:0", "f16[1024]cuda:1"));
    }

    #[test]
    fn not_utf8_and_edges() {
        assert_eq!(mask_volatile("a", b""), b"");
        assert_eq!(mask_volatile("a", b"\xff0x1f\xfe"), b"\xff0x<?>\xfe");
        assert_eq!(masked("0x"), "0x");
        assert_eq!(masked("[0/"), "[0/");
        assert_eq!(masked("1234567"), "<?>");
    }
}
