//! Where the analysis tables keep what they hold until they are written. Tables speak of the
//! [`rows::Rows`] they push and read back and the [`names`] they number or count. Below those:
//! rows packed and compressed in blocks ([`packed_rows`]), values by compile record that go to
//! disk once long past ([`per_compile`], [`compile_list`]), interned digests and texts
//! ([`digest_ids`], [`seen_texts`]), compact compile ids ([`small_id`]). A layer below the
//! analysis: tables use these types but never open files; the bundle writer owns the
//! [`packed_rows::Spool`] that holds their bytes on disk (a file of its staging directory) and
//! hands it to them.

pub mod compile_list;
pub mod digest_ids;
pub mod distinct;
pub mod names;
pub mod numbers;
pub mod packed_rows;
pub mod pairs;
pub mod per_compile;
pub mod rows;
pub mod seen_texts;
pub mod small_id;

pub use compile_list::CompileList;
pub use distinct::Distinct;
pub use names::{NameCounts, index_in};
pub use numbers::Numbers;
pub use pairs::Pairs;
pub use per_compile::PerCompile;
pub use rows::{RowJson, RowList, RowReader, Rows};
pub use seen_texts::{SeenTexts, Unseen};
