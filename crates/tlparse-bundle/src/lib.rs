//! The tlparse bundle format: the directory `tlparse-build` compiles PyTorch `TORCH_TRACE` logs
//! into, for viewers to read. This crate is the format alone: its types ([`schema`]), the one
//! list of its tables ([`registry`]), where its files live ([`paths`]), how artifacts are named
//! ([`naming`]), and a strict reader
//! ([`reader`]) that treats every bundle as untrusted input, reading through a [`ByteSource`]
//! (a local directory here; anything that can fetch a file by path). With the `validate`
//! feature, [`validate::validate`] checks a whole bundle against its JSON Schemas. README.md
//! shows how to use it (its examples are tests).
//!
//! Open a bundle and read rows of a table:
//!
//! ```
//! use tlparse_bundle::reader::Bundle;
//! use tlparse_bundle::schema::tables::CompileDirectory;
//!
//! # let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bundles/simple");
//! let bundle = Bundle::open(&root)?;
//! for stream in &bundle.manifest.streams {
//!     let Some(directory) = bundle.stream_table::<CompileDirectory>(&stream.id)? else { continue };
//!     for compile in directory.compiles.iter().take(3) {
//!         println!("{} {} {:?} {:?}", stream.id, compile.compile_id, compile.status, compile.co_name);
//!     }
//! }
//! # Ok::<(), tlparse_bundle::reader::ReadError>(())
//! ```

/// The examples of README.md, compiled and run by `cargo test -p tlparse-bundle`.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub mod ids;
pub mod naming;
pub mod parts;
pub mod paths;
pub mod reader;
pub mod registry;
pub mod schema;
pub mod source;
#[cfg(feature = "validate")]
pub mod validate;

pub use reader::{Bundle, Limits, ReadError};
pub use registry::{Scope, Table};
pub use source::{BundlePath, ByteSource, DirSource, SourceError};
