//! The one naming rule for artifacts: what every table calls an entry (`name`), and the name
//! tlparse gives its output file where that differs (`tlparse_name`). Documented in
//! docs/format.md, "Artifact names".

/// The names of one logged entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactNames {
    /// What the tables call it. The same for the same artifact of every compile and rank (it
    /// never holds a content hash), so tables compare artifacts by it.
    pub name: String,
    /// tlparse's name for its output file, without tlparse's run-wide `_<N>` counter and
    /// extension, when it differs from `name`; None otherwise.
    pub tlparse_name: Option<String>,
}

/// The names of an entry of `kind`, logged with metadata `name` (the `name` of an index row:
/// `artifact`, `graph_dump`, `link`, `dump_file` and `optimize_ddp_split_child` have one) and
/// metadata `filename` (`inductor_output_code` has one).
///
/// - `name`: `optimize_ddp_split_child_<name>` for an `optimize_ddp_split_child` (its logged
///   name is a submodule, `submod_0`, which alone does not say what the entry is); else the
///   logged name when there is one; else the kind. Output code is therefore
///   `inductor_output_code`: its file name is the hash of the code, which changes with the code.
/// - `tlparse_name`: `inductor_output_code_<stem of filename>` for output code with a file name;
///   `eval_with_key_<N>` for a `dump_file` whose name contains `<eval_with_key>.<N>`; else None
///   (tlparse's name is `name`).
pub fn artifact_names(kind: &str, name: Option<&str>, filename: Option<&str>) -> ArtifactNames {
    let ours = match name {
        Some(n) if kind == "optimize_ddp_split_child" => format!("{kind}_{n}"),
        Some(n) => n.to_string(),
        None => kind.to_string(),
    };
    let tlparse_name = match kind {
        "inductor_output_code" => filename.and_then(file_stem).map(|stem| format!("{kind}_{stem}")),
        "dump_file" => name.and_then(eval_with_key).map(|n| format!("eval_with_key_{n}")),
        _ => None,
    };
    ArtifactNames { tlparse_name: tlparse_name.filter(|t| *t != ours), name: ours }
}

/// Rust's `Path::file_stem` (which tlparse calls) on a logged path: the last component (after `/`
/// or `\`) without its last extension; a name starting with its only `.` keeps it; None for an
/// empty name, `.` or `..`.
fn file_stem(path: &str) -> Option<&str> {
    let base = path.rsplit(['/', '\\']).next()?;
    if base.is_empty() || base == "." || base == ".." {
        return None;
    }
    match base.rfind('.') {
        Some(0) | None => Some(base),
        Some(at) => Some(&base[..at]),
    }
}

/// The number N of the first `<eval_with_key>.N` in a name (tlparse's
/// `extract_eval_with_key_id`), as a decimal u64.
fn eval_with_key(name: &str) -> Option<u64> {
    const MARK: &str = "<eval_with_key>.";
    name.match_indices(MARK).find_map(|(at, _)| {
        let rest = &name[at + MARK.len()..];
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        rest[..digits].parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(kind: &str, name: Option<&str>, filename: Option<&str>) -> (String, Option<String>) {
        let n = artifact_names(kind, name, filename);
        (n.name, n.tlparse_name)
    }

    #[test]
    fn output_code_is_named_by_its_kind_and_tlparse_adds_the_file_stem() {
        let file = "/tmp/torchinductor_user/ty/ctyqpz4y5tp.py";
        assert_eq!(
            names("inductor_output_code", None, Some(file)),
            ("inductor_output_code".into(), Some("inductor_output_code_ctyqpz4y5tp".into()))
        );
        // tlparse's stem drops only the last extension.
        assert_eq!(
            names("inductor_output_code", None, Some("a/b.c.py")).1.as_deref(),
            Some("inductor_output_code_b.c")
        );
        assert_eq!(names("inductor_output_code", None, Some(".py")).1.as_deref(), Some("inductor_output_code_.py"));
        assert_eq!(names("inductor_output_code", None, None), ("inductor_output_code".into(), None));
        assert_eq!(names("inductor_output_code", None, Some("dir/")).1, None);
    }

    #[test]
    fn ddp_split_children_and_eval_with_key_dumps() {
        assert_eq!(
            names("optimize_ddp_split_child", Some("submod_3"), None),
            ("optimize_ddp_split_child_submod_3".into(), None)
        );
        assert_eq!(
            names("dump_file", Some("<eval_with_key>.12"), None),
            ("<eval_with_key>.12".into(), Some("eval_with_key_12".into()))
        );
        assert_eq!(names("dump_file", Some("helper.py"), None), ("helper.py".into(), None));
        assert_eq!(names("dump_file", Some("<eval_with_key>.x"), None).1, None);
    }

    #[test]
    fn named_kinds_keep_their_name_and_others_are_their_kind() {
        assert_eq!(names("artifact", Some("fx_graph_cache_hit"), None), ("fx_graph_cache_hit".into(), None));
        assert_eq!(names("graph_dump", Some("inductor_aot_wrapper_code"), None).0, "inductor_aot_wrapper_code");
        assert_eq!(names("dynamo_output_graph", None, None), ("dynamo_output_graph".into(), None));
        // An artifact logged without a name (malformed) is called by its kind.
        assert_eq!(names("artifact", None, None).0, "artifact");
    }
}
