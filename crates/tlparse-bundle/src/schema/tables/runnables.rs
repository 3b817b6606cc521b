//! `runnables`: the artifacts that are programs (runnable repros and generated code), with a file
//! name to download each as.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ArtifactRef;

/// `tables/<stream>/runnables.json.zst`: every `fx_graph_runnable` artifact, every
/// `inductor_output_code` and every AOT Inductor C++ `graph_dump` of the stream, in log order.
/// `rows` counts `files`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Runnables {
    /// One row per artifact, in log order.
    pub files: Vec<RunnableFile>,
}

/// What a runnable artifact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunnableRole {
    /// `fx_graph_runnable`: a standalone Python script that rebuilds the graph handed to Inductor
    /// and runs it (`python file.py`).
    FxGraphRunnable,
    /// `inductor_output_code`: the Python wrapper Inductor generated (kernels and `call`); running
    /// it benchmarks the compiled graph on random inputs.
    OutputCode,
    /// `graph_dump` `inductor_aot_wrapper_code`: AOT Inductor's generated C++ wrapper.
    AotWrapperCode,
    /// `graph_dump` `inductor_aot_kernel_code`: AOT Inductor's generated C++ kernels.
    AotKernelCode,
    /// `graph_dump` `inductor_aot_header_code`: AOT Inductor's generated C++ header.
    AotHeaderCode,
}

/// The language of a runnable artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunnableLanguage {
    /// Python source (the payload's detected format is `python`).
    Python,
    /// C++ source (AOT Inductor; the payload's detected format is `text`).
    Cpp,
}

/// One runnable artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RunnableFile {
    /// The compile id as displayed (`[0/0]`); null for entries logged without one.
    pub compile_id: Option<String>,
    /// tlparse's directory name for the compile id (`-_0_0_0`; `-_-_-_-` without one).
    pub dir: String,
    /// What the artifact is.
    pub role: RunnableRole,
    /// The language of the code.
    pub language: RunnableLanguage,
    /// A file name to save it as: `{name}__{dir}.{ext}`, with `__2`, `__3`, ... before the
    /// extension for later artifacts of the same name in the same compile id. `name` is the
    /// artifact's `tlparse_name` when it has one, else its `name` (so output code keeps the stem
    /// of the logged file name, `inductor_output_code_c25i...`, as tlparse's file does), `ext` is
    /// `py` for Python, else the logged file's extension (`cpp`, `h`). Only `[A-Za-z0-9_.-]`
    /// (other characters become `_`); never starts with `-` or `.`; unique in the stream; the
    /// same for the same log.
    pub file_name: String,
    /// The artifact; its blob is the file's content.
    pub artifact: ArtifactRef,
}
