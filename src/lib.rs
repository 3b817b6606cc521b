//! tlparse-build: compiles PyTorch `TORCH_TRACE` logs into a versioned, JSON-Schema-described
//! bundle that static viewers read.
//!
//! The modules read as the pipeline: [`parse`] (log text → entries and diagnostics),
//! [`analysis`] (entries → tables), [`bundle`] (the only code that writes, plus a strict
//! reader), with [`schema`] holding the bundle's types, [`cli`] the command line, [`viewer`] the
//! embedded reference viewer and [`serve`] the local server that shows a bundle in it.

pub mod analysis;
pub mod bundle;
pub mod cli;
pub mod parse;
pub mod schema;
pub mod serve;
pub mod viewer;
