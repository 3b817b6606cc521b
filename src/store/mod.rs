//! Where the analysis tables keep what they hold until they are written, in the tables' words:
//! [`Rows`] pushed while observing and read back when finishing, [`Distinct`] rows each kept once,
//! values [`PerCompile`] record and records in a [`CompileList`], [`Numbers`] given to keys,
//! [`Records`] written once and read back by index, [`Pairs`], [`NameCounts`], [`SeenTexts`],
//! [`CompileIds`], [`CompactId`], [`CompressedBytes`]. Below those, and
//! named by no table: rows packed and compressed in blocks, digests, pages written to the spool.
//! Tables never open files: each value that may spill is made with the [`Store`] its table was
//! given, a handle to the spool the bundle writer owns (a file of its staging directory).

mod compile_list;
mod digest_ids;
mod distinct;
mod names;
mod numbers;
pub mod packed_rows;
mod pairs;
mod per_compile;
mod records;
mod rows;
mod seen_texts;
mod small_id;

pub use compile_list::CompileList;
pub use distinct::Distinct;
pub use names::{NameCounts, index_in};
pub use numbers::Numbers;
pub use packed_rows::{CompressedBytes, Store};
pub use pairs::Pairs;
pub use per_compile::PerCompile;
pub use records::Records;
pub use rows::{RowJson, RowList, RowReader, Rows};
pub use seen_texts::{SeenTexts, Unseen};
pub use small_id::{CompactId, CompileIds};
