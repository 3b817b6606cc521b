//! tlparse-build: compiles PyTorch `TORCH_TRACE` logs into a versioned, JSON-Schema-described
//! bundle that static viewers read.
//!
//! The modules read as the pipeline: [`parse`] (log text → entries and diagnostics),
//! [`analysis`] (entries → tables), [`bundle`] (the only code that writes a bundle), with [`cli`]
//! the command line and [`viewer`] the embedded reference viewer. Sharing a bundle: [`serve`]
//! (the local server that shows it) and [`proxy`] (CORS in front of a bucket), both on the
//! hardened server core [`http`]; [`publish`] (puts it in a bucket or a Pages directory); and
//! [`media`] (each file's content type and cache policy, for all three): all behind the cargo
//! feature `share` (on by default), so the compiler builds without object storage, an async
//! runtime or an HTTP server. Sharing depends on the compiler, never the reverse. The format itself
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
#[cfg(feature = "share")]
pub mod http;
#[cfg(feature = "share")]
pub mod media;
pub mod parse;
#[cfg(feature = "share")]
pub mod proxy;
#[cfg(feature = "share")]
pub mod publish;
#[cfg(feature = "share")]
pub mod serve;
pub mod sorted_runs;
pub mod store;
pub mod viewer;

/// The bundle's types: the format crate's, re-exported where the compiler has always used them.
pub use tlparse_bundle::schema;
