//! tlparse-build: compiles PyTorch `TORCH_TRACE` logs into a versioned, JSON-Schema-described
//! bundle that static viewers read.
//!
//! The modules read as the pipeline: [`parse`] (log text → entries and diagnostics),
//! [`analysis`] (entries → tables), [`bundle`] (the only code that writes a bundle), with [`cli`]
//! the command line and [`viewer`] the embedded reference viewer. Sharing a bundle: [`serve`]
//! (the local server that shows it) and [`proxy`] (CORS in front of a bucket), both on the
//! hardened server core [`http`]; [`publish`] (puts it in a bucket or a Pages directory); and
//! [`media`] (each file's content type and cache policy, for all three). The format itself
//! (types, table registry, strict reader, validation) is the crate `tlparse_bundle`, which depends
//! on nothing here.

/// Prints a line on stdout. A closed stdout (`tlparse-build ... | head -1`) is not an error: the
/// rest was not wanted, and the work it reports is done (`println!` would panic).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

pub mod analysis;
pub mod bundle;
pub mod cli;
pub mod compare;
pub mod fast_hash;
pub mod http;
pub mod media;
pub mod parse;
pub mod proxy;
pub mod publish;
pub mod serve;
pub mod sorted_runs;
pub mod store;
pub mod viewer;

/// The bundle's types: the format crate's, re-exported where the compiler has always used them.
pub use tlparse_bundle::schema;
