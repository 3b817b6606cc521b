//! Multi-rank fixtures edited in a temporary copy, for cases the fixtures lack.

use crate::tables::{Built, built};
use crate::util::fixture;

/// Builds a copy of `tlparse-tests/<dir>` where `edit(file name, lines)` may change each file's
/// lines (split on `\n`, joined back the same way), plus `extra` fixtures copied in under new
/// names (`(fixture path, file name)`), which `edit` sees under their new name.
pub fn built_edited(dir: &str, extra: &[(&str, &str)], edit: impl Fn(&str, &mut Vec<String>)) -> Built {
    let rel = format!("tlparse-tests/{dir}");
    let files = std::fs::read_dir(fixture(&rel)).unwrap().map(|entry| {
        let entry = entry.unwrap();
        (entry.path(), entry.file_name().into_string().unwrap())
    });
    let extra = extra.iter().map(|(rel, name)| (fixture(rel).into_std_path_buf(), name.to_string()));
    built_copy(files.chain(extra), edit)
}

/// Builds a copy of the rank logs of `fixtures-repo/<rel>` where `edit(file name, lines)` may
/// change each file's lines, as [`built_edited`] does for `tlparse-tests/<dir>`.
pub fn built_edited_at(rel: &str, edit: impl Fn(&str, &mut Vec<String>)) -> Built {
    let files = std::fs::read_dir(fixture(rel)).unwrap().map(|entry| {
        let entry = entry.unwrap();
        (entry.path(), entry.file_name().into_string().unwrap())
    });
    built_copy(files, edit)
}

/// Copies each `(path, name)` file as `name` into a temporary directory, its lines edited by
/// `edit`, and builds the copy.
fn built_copy(
    files: impl Iterator<Item = (std::path::PathBuf, String)>,
    edit: impl Fn(&str, &mut Vec<String>),
) -> Built {
    let copy = tempfile::tempdir().unwrap();
    for (path, name) in files {
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        edit(&name, &mut lines);
        std::fs::write(copy.path().join(&name), lines.join("\n")).unwrap();
    }
    // An absolute path replaces the fixtures root that `built` joins it to.
    built(copy.path().to_str().unwrap())
}
