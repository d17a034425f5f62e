//! The integration tests, as one binary: each file here is a module, so the library is linked
//! once for all of them (each file directly under `tests/` would be a crate of its own).
//!
//! `tests/adversarial.rs` stays a binary of its own: it installs a capped global allocator, which
//! must not see the allocations of any other test.

#[path = "../common/mod.rs"]
mod common;

mod architecture;
#[cfg(feature = "cli")]
mod cli;
#[cfg(all(feature = "cli", unix))]
mod cli_disk_full;
#[cfg(feature = "cli")]
mod cli_draw;
#[cfg(feature = "cli")]
mod cli_flags;
#[cfg(feature = "cli")]
mod cli_hlo;
#[cfg(feature = "cli")]
mod cli_lost;
#[cfg(feature = "cli")]
mod cli_relayout;
#[cfg(feature = "cli")]
mod cli_reshard;
#[cfg(feature = "cli")]
mod cli_shard_files;
#[cfg(feature = "cli")]
mod cli_shard_stream;
#[cfg(feature = "cli")]
mod cli_shards;
#[cfg(all(feature = "cli", unix))]
mod cli_signals;
#[cfg(feature = "cli")]
mod cli_values;
mod codec;
#[cfg(feature = "draw")]
mod draw;
#[cfg(feature = "draw")]
mod draw_sharding;
mod equality;
mod fuzz_corpus;
mod hlo;
mod hlo_module;
mod hlo_text;
mod hlo_text_prop;
mod hygiene;
mod index;
mod literal;
mod make;
mod padding;
mod relayout;
mod relayout_window;
mod reshard;
mod schema;
mod seeds;
mod serde;
mod shard_buffers;
mod sharding;
mod sharding_named;
mod shardy;
mod size;
#[cfg(feature = "cli")]
mod stablehlo;
mod stablehlo_prop;
mod strategy_smoke;
mod text;
mod text_lost;
mod tiling;
mod util;
mod validation;
#[cfg(feature = "cli")]
mod xla_dump;
mod xla_fixtures;
