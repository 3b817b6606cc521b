//! The integration tests, one binary (as ripgrep does): real fixtures in, real bundles out.

mod attacks;
mod build;
mod cli;
mod compare;
mod consistency;
mod cross_rank;
mod discovery;
mod docs;
mod fixtures;
mod format_crate;
mod hostile_json;
mod memory;
mod output_safety;
mod properties;
mod proxy;
mod publish;
mod refs;
mod schema_drift;
mod serve;
mod serve_attacks;
mod server_process;
mod shard_merge;
mod snapshots;
mod tables;
mod util;
mod viewer;
