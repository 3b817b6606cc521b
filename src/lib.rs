//! tlparse-build: compiles PyTorch `TORCH_TRACE` logs into a versioned, JSON-Schema-described
//! bundle that static viewers read.
//!
//! The modules read as the pipeline: [`parse`] (log text → entries and diagnostics),
//! [`analysis`] (entries → tables), [`bundle`] (the only code that writes), with [`cli`] the
//! command line, [`viewer`] the embedded reference viewer, [`serve`] the local server that
//! shows a bundle in it, and [`publish`] what puts a bundle in a bucket or a Pages directory
//! ([`media`]: the content type and cache policy of each file, for both). The format itself (types, table registry, strict reader, validation)
//! is the crate `tlparse_bundle`, which depends on nothing here.

pub mod analysis;
pub mod bundle;
pub mod cli;
pub mod media;
pub mod parse;
pub mod publish;
pub mod serve;
pub mod viewer;

/// The bundle's types: the format crate's, re-exported where the compiler has always used them.
pub use tlparse_bundle::schema;
