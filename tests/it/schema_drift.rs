//! The committed JSON Schemas in schema/v{FORMAT_MAJOR} are exactly what the code generates. Run with
//! `UPDATE_SCHEMAS=1` to rewrite them after changing a type in `src/schema/`. A minor version
//! rewrites its major's directory (it only adds); an older major's directory stays as released.

use tlparse_build::schema::{FORMAT_MAJOR, schemas};

#[test]
fn committed_schemas_match_the_code() {
    let dir = std::path::PathBuf::from(format!("schema/v{FORMAT_MAJOR}"));
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
    if update {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut expected_files = Vec::new();
    for (name, schema) in schemas() {
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        let path = dir.join(&name);
        expected_files.push(name.to_string());
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("{path:?} is missing; run UPDATE_SCHEMAS=1 cargo test"));
        assert!(committed == text, "{path:?} is out of date with src/schema/; run UPDATE_SCHEMAS=1 cargo test");
    }
    let mut on_disk: Vec<String> = walkdir::WalkDir::new(&dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/"))
        .collect();
    on_disk.sort();
    expected_files.sort();
    assert_eq!(on_disk, expected_files, "schema/v{FORMAT_MAJOR} holds files the code does not generate");
}

#[test]
fn every_type_and_field_has_a_description() {
    fn walk(v: &serde_json::Value, path: &str, missing: &mut Vec<String>) {
        if let Some(props) = v.get("properties").and_then(|p| p.as_object()) {
            for (k, p) in props {
                if p.get("description").is_none() {
                    missing.push(format!("{path}.{k}"));
                }
            }
        }
        if let Some(defs) = v.get("$defs").and_then(|d| d.as_object()) {
            for (k, d) in defs {
                if d.get("description").is_none() {
                    missing.push(format!("{path}/$defs/{k}"));
                }
                walk(d, &format!("{path}/$defs/{k}"), missing);
            }
        }
    }
    let mut missing = Vec::new();
    for (name, schema) in schemas() {
        if schema.get("description").is_none() {
            missing.push(name.clone());
        }
        walk(schema.as_value(), &name, &mut missing);
    }
    assert!(missing.is_empty(), "undocumented: {missing:#?}");
}
