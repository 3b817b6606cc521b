//! The integration tests, one binary (as ripgrep does): real fixtures in, real bundles out.
//! The tests of sharing (servers, publishing, the proxy) need the `share` feature; the rest run
//! without it (`cargo test --no-default-features --test it`).

#[cfg(feature = "share")]
mod attacks;
mod build;
mod cli;
mod comments;
mod compare;
mod consistency;
mod cross_rank;
mod discovery;
mod docs;
mod fixtures;
mod format_crate;
mod hostile_json;
mod layers;
mod memory;
mod output_safety;
mod parts;
mod properties;
#[cfg(feature = "share")]
mod proxy;
#[cfg(feature = "share")]
mod publish;
#[cfg(feature = "share")]
mod publish_store;
mod refs;
mod schema_drift;
#[cfg(feature = "share")]
mod serve;
#[cfg(feature = "share")]
mod serve_attacks;
#[cfg(feature = "share")]
mod server_process;
mod shard_merge;
mod snapshots;
mod tables;
mod tidy;
mod util;
mod viewer;
mod volatile;
