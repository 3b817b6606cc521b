//! tlparse-fuzz: mutated real TORCH_TRACE logs through tlparse-build, checking that hostile and
//! damaged logs never crash it, hang it, make it take unbounded memory, lose a rank, delete or
//! leak anything of the user's, or produce a bundle its own `validate` refuses.
//!
//! The modules, in the order a case flows through them: [`rng`] (seeded choices), [`corpus`]
//! (the fixture logs), [`mutate`] with [`lines`] and [`hostile`] (the edits), [`case`] (a seed
//! → a log in memory, or a trace on disk), then either [`in_process`] (the parser and tables in
//! this process) or [`child`] and [`oracle`] (the release binary and the invariants of a build),
//! and [`findings`] (grouped, saved, reported). [`run`] is the loop.

pub mod case;
pub mod child;
pub mod corpus;
pub mod findings;
pub mod hostile;
pub mod in_process;
pub mod lines;
pub mod mutate;
pub mod oracle;
pub mod rng;
pub mod run;

use std::path::PathBuf;

/// The root of the workspace this fuzzer was built in (its `fixtures-repo/` and `target/`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("fuzz/ is in the workspace").to_owned()
}
