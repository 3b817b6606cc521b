//! Runnable artifacts with their download file names.

use serde_json::Value;

use super::{built, rows, snapshot};

/// A file name a viewer can offer as is: `[A-Za-z0-9_.-]`, not starting with `-` or `.`.
fn is_safe(name: &str) -> bool {
    !name.starts_with(['-', '.']) && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn names(files: &[Value]) -> Vec<&str> {
    files.iter().map(|f| f["file_name"].as_str().unwrap()).collect()
}

#[test]
fn training_compile_lists_forward_and_backward_files() {
    // By hand on the log: cache_cold compiles [0/0] with a backward, so [0/0] logs an
    // fx_graph_runnable and an inductor_output_code (`# AOT ID: ['0_forward']`, file
    // c25i54mu....py) for the forward, then the same two for the backward (c7wjzbna....py); [1/0]
    // is an inference compile with one of each. The first fx_graph_runnable payload is 4174 bytes.
    let b = built("torch-2.15/cache_cold");
    let t = b.table("runnables");
    let files = rows(&t, "files");
    assert_eq!(
        names(files),
        [
            "fx_graph_runnable__-_0_0_0.py",
            "inductor_output_code_c25i54musczgwnyebt2fpgyhwjaas7cw3bpecn5kgjjwr4haabh6__-_0_0_0.py",
            "fx_graph_runnable__-_0_0_0__2.py",
            "inductor_output_code_c7wjzbnaisiypnvwrut2dgzjrshyufgm5jn5uhyyjvb3dqge5evw__-_0_0_0.py",
            "fx_graph_runnable__-_1_0_0.py",
            "inductor_output_code_cnzhk2d6l6k62no4mdqq2tgzjxlh7w3lig2mkk6cdfh6duf6rkfz__-_1_0_0.py",
        ]
    );
    assert_eq!(files[0]["compile_id"], "[0/0]");
    assert_eq!(files[0]["role"], "fx_graph_runnable");
    assert_eq!(files[0]["artifact"]["size"], 4174);
    assert_eq!(files[1]["role"], "output_code");
    assert!(files.iter().all(|f| f["language"] == "python" && f["artifact"]["format"] == "python"));
    let output_code = b.bundle.blob(files[1]["artifact"]["blob"].as_str().unwrap()).unwrap();
    assert!(output_code.starts_with(b"# AOT ID: ['0_forward']"));
    snapshot("runnables__cache_cold", &t);
}

#[test]
fn aot_inductor_code_is_cpp() {
    // By hand: the AOT Inductor run logs, without a compile id, an fx_graph_runnable and two
    // graph_dumps with `"type": "cpp"`: the wrapper (`....wrapper.cpp`, payload starting with an
    // empty line then `#include <torch/csrc/inductor/aoti_include/cpu.h>`) and the kernels
    // (`....kernel.cpp`, starting `// Triton kernels are embedded as comments`). Their payload
    // format is text: C++ is not Python.
    let b = built("torch-2.15/aot_inductor");
    let t = b.table("runnables");
    let files = rows(&t, "files");
    assert_eq!(
        names(files),
        [
            "fx_graph_runnable__-_-_-_-.py",
            "inductor_aot_wrapper_code__-_-_-_-.cpp",
            "inductor_aot_kernel_code__-_-_-_-.cpp"
        ]
    );
    assert_eq!(files[1]["compile_id"], Value::Null);
    assert_eq!(files[1]["dir"], "-_-_-_-");
    assert_eq!(files[1]["role"], "aot_wrapper_code");
    assert_eq!(files[2]["role"], "aot_kernel_code");
    for f in &files[1..] {
        assert_eq!(f["language"], "cpp");
        assert_eq!(f["artifact"]["format"], "text");
    }
    let wrapper = b.bundle.blob(files[1]["artifact"]["blob"].as_str().unwrap()).unwrap();
    assert!(wrapper.starts_with(b"\n#include <torch/csrc/inductor/aoti_include/cpu.h>"));
    snapshot("runnables__aot_inductor", &t);
}

#[test]
fn file_names_are_safe_and_unique_on_every_fixture_with_runnables() {
    // Counted with grep on each log (fx_graph_runnable artifacts + inductor_output_code entries +
    // inductor_aot_* graph_dumps): graph_breaks 11 + 11, recompiles 8 + 8, jit_cuda 1 + 1,
    // aot_cuda 1 + 2 graph_dumps, cache_hit_miss 2 + 3 (an older log).
    for (fixture, expected) in [
        ("torch-2.15/graph_breaks", 22),
        ("torch-2.15/recompiles", 16),
        ("tlparse-tests/inductor_provenance_jit_cuda_log.txt", 2),
        ("tlparse-tests/inductor_provenance_aot_cuda_log.txt", 3),
        ("tlparse-tests/cache_hit_miss.log", 5),
    ] {
        let b = built(fixture);
        let t = b.table("runnables");
        let files = rows(&t, "files");
        let mut seen = std::collections::BTreeSet::new();
        for name in names(files) {
            assert!(is_safe(name), "{fixture}: {name}");
            assert!(seen.insert(name), "{fixture}: {name} twice");
        }
        assert_eq!(files.len(), expected, "{fixture}");
        assert!(files.iter().all(|f| f["artifact"]["blob"].is_string()));
    }
}
