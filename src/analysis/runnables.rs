//! Runnable artifacts: `fx_graph_runnable` repros, Inductor's output code and AOT Inductor's C++
//! code, each with a stable, safe file name to download it as.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::provenance::{artifact_at, compile_names};
use super::{Event, Finish, Observe, Table, compiles};
use crate::schema::tables::{RunnableFile, RunnableLanguage, RunnableRole, Runnables};
use crate::schema::{CompileId, PayloadFormat};
use crate::store::Rows;
use crate::store::{NameCounts, Store};

/// One runnable artifact, until `finish` looks up its reference.
#[derive(Serialize, Deserialize)]
struct Seen {
    key: Option<CompileId>,
    seq: u64,
    role: RunnableRole,
    language: RunnableLanguage,
    file_name: String,
}

#[derive(Default)]
pub struct RunnablesTable {
    /// A long log has a few per compile, thousands of them.
    seen: Rows<Seen>,
    /// How many files each file name stem (`{name}__{dir}.{ext}`) was given so far.
    taken: NameCounts,
}

/// What an entry is, if it is runnable.
fn role(ev: &Event) -> Option<RunnableRole> {
    Some(match (ev.kind, ev.name) {
        ("artifact", Some("fx_graph_runnable")) => RunnableRole::FxGraphRunnable,
        ("inductor_output_code", _) => RunnableRole::OutputCode,
        ("graph_dump", Some("inductor_aot_wrapper_code")) => RunnableRole::AotWrapperCode,
        ("graph_dump", Some("inductor_aot_kernel_code")) => RunnableRole::AotKernelCode,
        ("graph_dump", Some("inductor_aot_header_code")) => RunnableRole::AotHeaderCode,
        _ => return None,
    })
}

/// `[A-Za-z0-9_.-]` only, other characters replaced by `_`, and not starting with `-` or `.` (a
/// file name a shell or a browser will not take for an option or a hidden file).
fn safe(name: &str) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(['-', '.']) {
        out.insert(0, '_');
    }
    out
}

/// The extension of the logged C++ file (`x.wrapper.cpp` → `cpp`, `x.h` → `h`), else `cpp`.
fn cpp_extension(ev: &Event) -> String {
    let file = ev.meta().get("filename").and_then(Value::as_str).unwrap_or("");
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    match base.rsplit_once('.') {
        Some((_, ext)) if !ext.is_empty() && ext.len() <= 8 && ext.chars().all(|c| c.is_ascii_alphanumeric()) => {
            ext.to_ascii_lowercase()
        }
        _ => "cpp".to_string(),
    }
}

impl Table for RunnablesTable {
    type Format = crate::schema::tables::Runnables;
    type Output<'a> = Runnables;

    fn new(store: &Store) -> Self {
        RunnablesTable { seen: Rows::new(store), ..RunnablesTable::default() }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        let Some(role) = role(ev) else { return };
        let Some(payload) = ev.payload else {
            diags.unusable(Self::NAME, ev, "no payload to run");
            return;
        };
        let aot =
            matches!(role, RunnableRole::AotWrapperCode | RunnableRole::AotKernelCode | RunnableRole::AotHeaderCode);
        let (language, extension) = match payload.format {
            PayloadFormat::Python => (RunnableLanguage::Python, "py".to_string()),
            _ if aot => (RunnableLanguage::Cpp, cpp_extension(ev)),
            other => {
                diags.unusable(Self::NAME, ev, format_args!("the payload is not Python code (detected {other:?})"));
                return;
            }
        };
        let key = ev.compile_id.map(compiles::normalize);
        let (_, dir) = compile_names(key);
        // tlparse's name where it differs: output code files keep the stem of the logged file.
        let names = ev.names();
        let stem = format!("{}__{dir}", safe(names.tlparse_name.as_ref().unwrap_or(&names.name)));
        let count = self.taken.add(&format!("{stem}.{extension}"));
        let file_name = if count == 1 { format!("{stem}.{extension}") } else { format!("{stem}__{count}.{extension}") };
        self.seen.push(&Seen { key, seq: ev.seq, role, language, file_name });
    }

    fn finish(self, ctx: &Finish) -> Option<(Runnables, u64)> {
        let mut files: Vec<RunnableFile> = Vec::new();
        self.seen.for_each("runnables", |s| files.extend(file(ctx, s)));
        if files.is_empty() {
            return None;
        }
        let rows = files.len() as u64;
        Some((Runnables { files }, rows))
    }
}

/// The row of a runnable artifact, unless its artifact is missing.
fn file(ctx: &Finish, s: Seen) -> Option<RunnableFile> {
    let (compile_id, dir) = compile_names(s.key);
    Some(RunnableFile {
        compile_id,
        dir,
        role: s.role,
        language: s.language,
        file_name: s.file_name,
        artifact: artifact_at(ctx.compiles, s.key.as_ref(), s.seq)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe() {
        assert_eq!(safe("inductor_output_code_c2o2b5kn"), "inductor_output_code_c2o2b5kn");
        assert_eq!(safe("a b/c:d"), "a_b_c_d");
        assert_eq!(safe("-rf"), "_-rf");
        assert_eq!(safe(".hidden"), "_.hidden");
        assert_eq!(safe("é"), "_");
    }
}
