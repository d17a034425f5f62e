//! The validated view: `HloSharding` and the kinds it can be (`docs/sharding.md` §1). Values
//! exist only once XLA's rules held (through [`HloSharding::from_proto`], the text parser or the
//! checked constructors), so nothing downstream re-checks them.

use crate::proto::OpMetadata;

use super::device::DeviceId;
use super::named::NamedSharding;
use super::tile_assignment::TileAssignment;

/// The type of one trailing subgroup dimension of a tiled sharding (`last_tile_dims`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SubgroupType {
    /// The devices along the dimension hold the same data.
    Replicated,
    /// The dimension is partitioned by the user.
    Manual,
    /// The devices along the dimension hold partial results not yet reduced.
    Unreduced,
}

impl SubgroupType {
    /// The `OpSharding.Type` value.
    pub const fn proto_type(self) -> i32 {
        match self {
            Self::Replicated => 0,
            Self::Manual => 4,
            Self::Unreduced => 6,
        }
    }

    /// The type of an `OpSharding.Type` value, if it is a subgroup type.
    pub const fn from_proto_type(value: i32) -> Option<Self> {
        match value {
            0 => Some(Self::Replicated),
            4 => Some(Self::Manual),
            6 => Some(Self::Unreduced),
            _ => None,
        }
    }

    /// The name in XLA's text (`last_tile_dims={manual, replicated}`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Replicated => "replicated",
            Self::Manual => "manual",
            Self::Unreduced => "unreduced",
        }
    }

    /// XLA's order of subgroup types after merging (`kOrderedTypes`: manual, unreduced,
    /// replicated).
    pub(crate) const fn merge_rank(self) -> u8 {
        match self {
            Self::Manual => 0,
            Self::Unreduced => 1,
            Self::Replicated => 2,
        }
    }
}

/// A `shard_as N` / `shard_like N` group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShardGroup {
    /// The group id.
    pub id: i64,
    /// `As` (must be sharded the same) or `Like` (should be).
    pub kind: ShardGroupKind,
}

/// Whether a shard group is a hard (`shard_as`) or soft (`shard_like`) constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShardGroupKind {
    /// `shard_as`: `OpSharding.AS`.
    As,
    /// `shard_like`: `OpSharding.LIKE`.
    Like,
}

/// A tiled sharding: a tile-assignment array whose leading dimensions split the data and whose
/// trailing subgroup dimensions, if any, replicate it (or are manual or unreduced).
///
/// Invariant: `subgroup_types` is empty when `replicate_on_last_tile_dim` is set; the tile
/// assignment has at least `data_rank() + subgroup dims` dimensions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TiledSharding {
    pub(crate) tile_assignment: TileAssignment,
    pub(crate) replicate_on_last_tile_dim: bool,
    pub(crate) subgroup_types: Vec<SubgroupType>,
}

impl TiledSharding {
    /// The tile-assignment array.
    pub fn tile_assignment(&self) -> &TileAssignment {
        &self.tile_assignment
    }

    /// Whether the last tile-assignment dimension is a replication group
    /// (`last_tile_dim_replicate`).
    pub fn replicate_on_last_tile_dim(&self) -> bool {
        self.replicate_on_last_tile_dim
    }

    /// The types of the trailing subgroup dimensions (`last_tile_dims`), empty for
    /// `last_tile_dim_replicate`.
    pub fn subgroup_types(&self) -> &[SubgroupType] {
        &self.subgroup_types
    }

    /// The number of trailing subgroup dimensions (1 for `last_tile_dim_replicate`).
    pub fn subgroup_rank(&self) -> usize {
        if self.replicate_on_last_tile_dim { 1 } else { self.subgroup_types.len() }
    }

    /// The number of leading tile-assignment dimensions that split the data (XLA's
    /// `TiledDataRank`).
    pub fn data_rank(&self) -> usize {
        self.tile_assignment.dimensions().len().saturating_sub(self.subgroup_rank())
    }

    /// The number of tiles along each data dimension.
    pub fn tiles(&self) -> &[i64] {
        self.tile_assignment.dimensions().get(..self.data_rank()).unwrap_or_default()
    }

    /// The type of subgroup dimension `k` (counting from the first subgroup dimension).
    pub fn subgroup_type(&self, k: usize) -> Option<SubgroupType> {
        if self.replicate_on_last_tile_dim {
            (k == 0).then_some(SubgroupType::Replicated)
        } else {
            self.subgroup_types.get(k).copied()
        }
    }
}

/// What a sharding is.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant, reason = "built once per sharding; boxing would cost every reader")]
pub enum ShardingKind {
    /// Every device holds the whole array (`{replicated}`).
    Replicated,
    /// Partitioned by the user (`{manual}`).
    Manual,
    /// A placeholder (`{unknown}`).
    Unknown,
    /// Partial results not yet reduced (`{unreduced}`).
    Unreduced,
    /// One device holds the whole array (`{maximal device=3}`).
    Maximal(DeviceId),
    /// Tiles over devices (`{devices=[2,2]0,2,1,3}`).
    Tiled(TiledSharding),
    /// The leaf shardings of a tuple shape, in pre-order (`{{replicated}, {maximal device=0}}`).
    Tuple(Vec<HloSharding>),
    /// A named ("V3") sharding over a mesh (`{mesh['x'=2,'y'=4], [{'x'}, {}]}`,
    /// `{maximal_mesh[device_id=5]}`; `docs/sharding.md` §9). [`HloSharding::to_v2`] is its
    /// tile-assignment form.
    Named(NamedSharding),
}

/// XLA's `HloSharding`: a validated sharding with its metadata and shard group.
///
/// Built from an `OpSharding` ([`HloSharding::from_proto`]), from XLA's text (`str::parse`), or
/// from the constructors; printed as XLA prints it ([`std::fmt::Display`]) and encoded as XLA
/// encodes it ([`HloSharding::to_proto`]). Construction applies XLA's canonical forms (a
/// replicated subgroup becomes `last_tile_dim_replicate`, size-1 subgroup dimensions are dropped,
/// an iota stays an iota), so two equal values print the same.
///
/// ```
/// use xla_shape::sharding::HloSharding;
/// let sharding: HloSharding = "{devices=[2,1,4]<=[8] last_tile_dims={replicated}}".parse()?;
/// assert_eq!(sharding.to_string(), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
/// assert_eq!(
///     xla_shape::encode(&sharding.to_proto()),
///     [0x08, 0x03, 0x1a, 0x03, 0x02, 0x01, 0x04, 0x30, 0x01, 0x4a, 0x01, 0x08, 0x52, 0x01, 0x00]
/// );
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HloSharding {
    pub(crate) kind: ShardingKind,
    pub(crate) metadata: Vec<OpMetadata>,
    pub(crate) shard_group: Option<ShardGroup>,
}

impl HloSharding {
    pub(crate) fn of(kind: ShardingKind, metadata: Vec<OpMetadata>) -> Self {
        Self { kind, metadata, shard_group: None }
    }

    /// `{replicated}`.
    pub fn replicate() -> Self {
        Self::of(ShardingKind::Replicated, Vec::new())
    }

    /// `{manual}`.
    pub fn manual() -> Self {
        Self::of(ShardingKind::Manual, Vec::new())
    }

    /// `{unknown}`.
    pub fn unknown() -> Self {
        Self::of(ShardingKind::Unknown, Vec::new())
    }

    /// `{unreduced}`.
    pub fn unreduced() -> Self {
        Self::of(ShardingKind::Unreduced, Vec::new())
    }

    /// `{maximal device=D}`.
    pub fn maximal(device: DeviceId) -> Self {
        Self::of(ShardingKind::Maximal(device), Vec::new())
    }

    /// A tuple of leaf shardings (XLA's `FlatTuple`).
    pub fn tuple(elements: Vec<HloSharding>) -> Self {
        Self::of(ShardingKind::Tuple(elements), Vec::new())
    }

    /// What the sharding is.
    pub fn kind(&self) -> &ShardingKind {
        &self.kind
    }

    /// The tiled sharding, if it is one.
    pub fn as_tiled(&self) -> Option<&TiledSharding> {
        match &self.kind {
            ShardingKind::Tiled(tiled) => Some(tiled),
            _ => None,
        }
    }

    /// A tuple's leaf shardings, if it is one.
    pub fn tuple_elements(&self) -> Option<&[HloSharding]> {
        match &self.kind {
            ShardingKind::Tuple(elements) => Some(elements),
            _ => None,
        }
    }

    /// Where the sharding came from (kept, never printed by [`std::fmt::Display`]).
    pub fn metadata(&self) -> &[OpMetadata] {
        &self.metadata
    }

    /// The `shard_as` / `shard_like` group, if any.
    pub fn shard_group(&self) -> Option<ShardGroup> {
        self.shard_group
    }

    /// The same sharding with `metadata` (a tuple keeps none: XLA sets metadata on the leaves).
    #[must_use]
    pub fn with_metadata(mut self, metadata: Vec<OpMetadata>) -> Self {
        if !matches!(self.kind, ShardingKind::Tuple(_)) {
            self.metadata = metadata;
        }
        self
    }

    /// The same sharding in shard group `group`.
    #[must_use]
    pub fn with_shard_group(mut self, group: Option<ShardGroup>) -> Self {
        self.shard_group = group;
        self
    }
}
