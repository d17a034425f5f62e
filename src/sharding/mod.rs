//! Shardings: XLA's `HloSharding` exactly (`docs/sharding.md`).
//!
//! A sharding says which devices hold which slice of an array: `{replicated}`, `{maximal
//! device=3}`, `{devices=[2,1,4]<=[8] last_tile_dim_replicate}`. This module reads it from an
//! `OpSharding` ([`HloSharding::from_proto`]) or from XLA's text ([`parse`]), validates it as XLA
//! does, prints and encodes it as XLA does, and answers where each device's data is
//! ([`Placement`]).
//!
//! One file per concept: `device` (the id type), `arith` (products and row-major digits),
//! `build` (checked tile assignments from raw parts),
//! `iota` and `tile_assignment` (the device array, lazily for an iota), `model` (the validated
//! view), `canonical` (XLA's constructors and canonical forms), `proto` (⇄ `OpSharding`),
//! `validate` (against a shape), `parse` and `print` (text), `placement` (device ranges);
//! `named` (XLA's named "V3" sharding: mesh, axes, checks), `named_v2` (its tile-assignment
//! form, `v3_to_v2_sharding`), `parse_named` (its text);
//! `buffers` splits a global buffer into per-device shard buffers and assembles them back,
//! `stream` does it a byte range at a time (and gives a dense layout's byte runs);
//! `reshard` moves the shard buffers of one sharding to those of another, without a global buffer;
//! `shardy` converts Shardy's mesh and tensor-sharding attributes to the `HloSharding` XLA exports.
//!
//! ```
//! use xla_shape::{sharding::{DeviceId, HloSharding}, text, Dim};
//! let sharding: HloSharding = "{devices=[2,2]<=[4]}".parse()?;
//! let shape = text::parse_shape("f32[5,8]")?;
//! let placement = sharding.placement(&shape.as_array().expect("array"), None)?;
//! let rows: Vec<_> = placement.shards().map(|s| s.start(Dim(0))..s.limit(Dim(0))).collect();
//! assert_eq!(rows, [0..3, 0..3, 3..5, 3..5]);
//! let holders: Vec<DeviceId> = placement.devices_holding(&[4, 7])?.collect();
//! assert_eq!(holders, [DeviceId(3)]);
//! # Ok::<(), xla_shape::Error>(())
//! ```

mod arith;
pub mod buffers;
mod build;
mod canonical;
mod device;
mod iota;
mod model;
mod named;
mod named_proto;
mod named_v2;
mod parse;
mod placement;
mod print;
mod proto;
pub mod reshard;
pub(crate) mod runs;
pub mod shardy;
pub mod stream;
mod tile_assignment;
mod validate;

pub use device::DeviceId;

/// The most devices a sharding may use (2²⁰, far above any real system): XLA's canonical forms
/// materialize some tile assignments and factor iota dimensions, and this bounds that work
/// (`docs/sharding.md` §2.3, DS-9).
pub const MAX_SHARDING_DEVICES: u64 = 1 << 20;
pub use iota::Iota;
pub use model::{HloSharding, ShardGroup, ShardGroupKind, ShardingKind, SubgroupType, TiledSharding};
pub use named::{AxisRef, DimSharding, Mesh, NamedSharding, SubAxis};
pub use parse::{canonical_text, parse};
pub use placement::{Holders, Placement, Shard, Shards};
pub use tile_assignment::TileAssignment;
