//! Multi-rank fixtures edited in a temporary copy, for cases the fixtures lack.

use crate::tables::{Built, built};
use crate::util::fixture;

/// Builds a copy of `tlparse-tests/<dir>` where `edit(file name, lines)` may change each file's
/// lines (split on `\n`, joined back the same way), plus `extra` fixtures copied in under new
/// names (`(fixture path, file name)`), which `edit` sees under their new name.
pub fn built_edited(dir: &str, extra: &[(&str, &str)], edit: impl Fn(&str, &mut Vec<String>)) -> Built {
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture(&format!("tlparse-tests/{dir}"))).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        edit(&name, &mut lines);
        std::fs::write(copy.path().join(&name), lines.join("\n")).unwrap();
    }
    for (rel, name) in extra {
        let text = std::fs::read_to_string(fixture(rel)).unwrap();
        let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        edit(name, &mut lines);
        std::fs::write(copy.path().join(name), lines.join("\n")).unwrap();
    }
    // An absolute path replaces the fixtures root that `built` joins it to.
    built(copy.path().to_str().unwrap())
}

/// Builds a copy of the rank logs of `fixtures-repo/<rel>` where `edit(file name, lines)` may
/// change each file's lines, as [`built_edited`] does for `tlparse-tests/<dir>`.
pub fn built_edited_at(rel: &str, edit: impl Fn(&str, &mut Vec<String>)) -> Built {
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture(rel)).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        edit(&name, &mut lines);
        std::fs::write(copy.path().join(&name), lines.join("\n")).unwrap();
    }
    built(copy.path().to_str().unwrap())
}
