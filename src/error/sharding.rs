//! The problems of a sharding ([`super::Error::Sharding`]): XLA's `HloSharding` rules
//! (`docs/sharding.md` §2), each with the numbers that explain it.

use std::fmt;

use super::FieldPath;

/// Why a sharding is refused (the [`super::Error::Sharding`] class). Messages carry XLA's key
/// phrase where XLA has one (`docs/sharding.md` §2 lists which check gives which problem).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShardingProblem {
    /// `type` is not one of the seven `OpSharding.Type` values.
    UnknownType {
        /// The raw value.
        value: i32,
    },
    /// A tuple sharding carries metadata (XLA: "Tuple sharding is expected to have no metadata").
    TupleMetadata,
    /// A maximal sharding does not name exactly one device (XLA: "Maximal sharding is expected
    /// to have single device assignment").
    MaximalDeviceCount {
        /// Entries in `tile_assignment_devices`.
        count: usize,
    },
    /// An iota tile assignment also lists devices, or neither form is given.
    TileAssignmentForm {
        /// Entries in `tile_assignment_devices`.
        devices: usize,
        /// Entries in `iota_reshape_dims`.
        reshape_dims: usize,
    },
    /// `iota_transpose_perm` and `iota_reshape_dims` differ in length.
    PermLength {
        /// Entries in `iota_reshape_dims`.
        reshape_dims: usize,
        /// Entries in `iota_transpose_perm`.
        perm: usize,
    },
    /// `iota_transpose_perm` is not a permutation of `0..n`.
    NotAPermutation {
        /// The first offending entry.
        index: usize,
        /// Its value.
        value: i64,
    },
    /// A tiled sharding has no `tile_assignment_dimensions`.
    NoTileDimensions,
    /// A tile-assignment or iota dimension is zero or negative (XLA aborts).
    NonPositiveDimension {
        /// The dimension number.
        index: usize,
        /// Its size.
        size: i64,
    },
    /// The tile assignment's element count differs from the device list's length or the iota's
    /// element count (XLA: "product of tile assignment tensor dimensions must be equal").
    DeviceCountMismatch {
        /// Product of `tile_assignment_dimensions`.
        tiles: u64,
        /// Devices listed, or the iota's product.
        devices: u64,
    },
    /// A product of dimensions does not fit in `i64`.
    ProductOverflow,
    /// A device id is negative (XLA: "device D is negative in tile assignment").
    NegativeDevice {
        /// The device id.
        device: i64,
    },
    /// A device id is not below the device count (XLA: "device D >= `num_devices` (N) in tile
    /// assignment").
    DeviceOutOfRange {
        /// The device id.
        device: i64,
        /// The device count.
        num_devices: u64,
    },
    /// A device appears twice (XLA: "device D is not unique in tile assignment").
    DuplicateDevice {
        /// The device id.
        device: i64,
    },
    /// The tile assignment uses a number of devices other than the one required (XLA:
    /// "`tile_assignment` should have N devices but has M").
    WrongDeviceCount {
        /// The device count required.
        expected: u64,
        /// The devices of the tile assignment.
        actual: u64,
    },
    /// `last_tile_dims` is given together with `replicate_on_last_tile_dim`.
    SubgroupsWithReplicateOnLastTileDim,
    /// A `last_tile_dims` entry is not a subgroup type (replicated, manual or unreduced).
    InvalidSubgroupType {
        /// The raw value.
        value: i32,
    },
    /// There are more subgroup dimensions than tile-assignment dimensions.
    TooManySubgroups {
        /// Subgroup dimensions.
        subgroups: usize,
        /// Tile-assignment dimensions.
        dimensions: usize,
    },
    /// The tile assignment has one device only (XLA: "Tile assignment only contains a single
    /// device"; "non-maximal shardings must have more than one device assigned").
    SingleDeviceTiled,
    /// The shape's rank differs from the tile assignment's data rank (XLA: "Number of tile
    /// assignment dimensions (excluding subgroups) is different than the input rank").
    RankMismatch {
        /// The shape's rank.
        shape_rank: usize,
        /// Tile-assignment dimensions without the subgroups.
        data_rank: usize,
    },
    /// A tuple sharding meets an array shape (XLA: "Sharding is tuple-shaped but validation shape
    /// is not").
    TupleShardingForArray,
    /// An array sharding meets a tuple shape (XLA: "Validation shape is a tuple but sharding is
    /// not").
    ArrayShardingForTuple,
    /// The tuple sharding's leaf count differs from the shape's (XLA: "Shape ... has N leaf nodes
    /// while this sharding has M").
    LeafCount {
        /// Leaves of the shape.
        shape: usize,
        /// Elements of the sharding.
        sharding: usize,
    },
    /// A tuple sharding holds a tuple: `tuple_shardings` are the leaves of the tuple shape.
    NestedTuple,
    /// A named ("V3") sharding XLA's `NamedSharding`, `Mesh` or `AxisRef` refuses or aborts on
    /// (`docs/sharding.md` §9.2).
    Named(NamedShardingProblem),
    /// A device count of zero was given for a replicated or maximal sharding.
    NoDevices,
    /// A replicated sharding was placed without the program's device count: `{replicated}`
    /// does not say which devices exist.
    DeviceCountRequired,
    /// The operation needs an array sharding, but the sharding is a tuple.
    NotAnArraySharding,
    /// Manual, unknown and unreduced shardings do not say where data lives.
    NoPlacement {
        /// `"manual"`, `"unknown"` or `"unreduced"`.
        kind: &'static str,
    },
    /// The sharding's devices exceed the limit on devices (`limits::MAX_DEVICES`).
    TooManyDevices {
        /// The device count.
        count: u64,
        /// The limit.
        max: u64,
    },
}

impl fmt::Display for ShardingProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownType { value } => write!(f, "unknown sharding type {value}"),
            Self::TupleMetadata => f.write_str("tuple sharding is expected to have no metadata"),
            Self::MaximalDeviceCount { count } => {
                write!(f, "maximal sharding is expected to have single device assignment, but {count} has provided")
            }
            Self::TileAssignmentForm { devices, reshape_dims } => write!(
                f,
                "only one of tile_assignment_devices ({devices} entries) and iota_reshape_dims ({reshape_dims} \
                 entries) shall be non-empty"
            ),
            Self::PermLength { reshape_dims, perm } => {
                write!(f, "iota_transpose_perm has {perm} entries but iota_reshape_dims has {reshape_dims}")
            }
            Self::NotAPermutation { index, value } => {
                write!(f, "iota_transpose_perm is not a permutation: entry {index} is {value}")
            }
            Self::NoTileDimensions => f.write_str("tiled sharding has no tile_assignment_dimensions"),
            Self::NonPositiveDimension { index, size } => {
                write!(f, "tile assignment dimension {index} is {size}, must be positive")
            }
            Self::DeviceCountMismatch { tiles, devices } => write!(
                f,
                "product of tile assignment tensor dimensions ({tiles}) must be equal to the number of devices \
                 ({devices})"
            ),
            Self::ProductOverflow => f.write_str("product of tile assignment dimensions overflows int64_t"),
            Self::NegativeDevice { device } => write!(f, "device {device} is negative in tile assignment"),
            Self::DeviceOutOfRange { device, num_devices } => {
                write!(f, "device {device} >= num_devices ({num_devices}) in tile assignment")
            }
            Self::DuplicateDevice { device } => write!(f, "device {device} is not unique in tile assignment"),
            Self::WrongDeviceCount { expected, actual } => {
                write!(f, "tile_assignment should have {expected} devices but has {actual}")
            }
            Self::SubgroupsWithReplicateOnLastTileDim => {
                f.write_str("last_tile_dims and replicate_on_last_tile_dim are both set")
            }
            Self::InvalidSubgroupType { value } => {
                write!(f, "last_tile_dims entry {value} is not replicated, manual or unreduced")
            }
            Self::TooManySubgroups { subgroups, dimensions } => {
                write!(f, "{subgroups} subgroup dimensions but the tile assignment has {dimensions} dimensions")
            }
            Self::SingleDeviceTiled => f.write_str(
                "tile assignment only contains a single device: non-maximal shardings must have more than one \
                 device assigned",
            ),
            Self::RankMismatch { shape_rank, data_rank } => write!(
                f,
                "number of tile assignment dimensions (excluding subgroups) is different than the input rank: \
                 {data_rank} vs {shape_rank}"
            ),
            Self::TupleShardingForArray => f.write_str("sharding is tuple-shaped but validation shape is not"),
            Self::ArrayShardingForTuple => f.write_str("validation shape is a tuple but sharding is not"),
            Self::LeafCount { shape, sharding } => {
                write!(f, "shape has {shape} leaf nodes while this sharding has {sharding}")
            }
            Self::NestedTuple => f.write_str(
                "a tuple sharding's elements are the leaves of the tuple shape, never tuples (nested tuple sharding)",
            ),
            Self::Named(problem) => problem.fmt(f),
            Self::NoDevices => f.write_str("a device count of 0 was given"),
            Self::DeviceCountRequired => f.write_str(
                "a replicated sharding needs the program's device count (`--devices`, `num_devices`): \
                 {replicated} does not say which devices exist",
            ),
            Self::NotAnArraySharding => f.write_str("a tuple sharding has no single placement"),
            Self::NoPlacement { kind } => write!(f, "a {kind} sharding does not say where data lives"),
            Self::TooManyDevices { count, max } => {
                write!(f, "the sharding uses {count} devices, more than the limit of {max}")
            }
        }
    }
}

/// A sharding problem and where it sits (boxed in [`super::Error::Sharding`] to keep `Error`
/// small).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShardingError {
    /// The field, e.g. `tuple_shardings[1].tile_assignment_devices[3]`.
    pub path: FieldPath,
    /// What is wrong.
    pub problem: ShardingProblem,
}

/// Where a list of mesh axes sits in a named sharding (for the messages that name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AxisList {
    /// A dimension's axes (`[{'x', 'y'}]`).
    Dimension,
    /// `replicated={…}`.
    Replicated,
    /// `unreduced={…}`.
    Unreduced,
    /// `manual={…}`.
    Manual,
}

impl AxisList {
    /// XLA's word for the list in its messages.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Dimension => "dimension sharding",
            Self::Replicated => "Replicated",
            Self::Unreduced => "Unreduced",
            Self::Manual => "Manual",
        }
    }
}

/// Why a named ("V3") sharding is refused: each of XLA's checks in `Mesh::FromProto`,
/// `Mesh::ValidateMesh`, `AxisRef` and `VerifyNamedSharding` (jaxlib 0.10.2 aborts the process on
/// every one of them), with XLA's phrase, plus the crate's stricter rules (`docs/sharding.md`
/// §9.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NamedShardingProblem {
    /// A mesh without axes lists more than one device (XLA: "Maximal mesh must have exactly 1
    /// device id").
    MaximalMeshDeviceCount {
        /// Device ids listed.
        count: usize,
    },
    /// A maximal mesh (one device, no axes) with dimension shardings or axes: XLA keeps empty
    /// dimensions and aborts on any axis (no axis exists); the crate refuses both.
    MaximalMeshWithDimensions,
    /// A mesh axis of size zero or less (XLA: "Mesh axis size must be positive").
    NonPositiveAxisSize {
        /// The axis number.
        axis: usize,
        /// Its size.
        size: i64,
    },
    /// Two mesh axes have one name (XLA: "Mesh has duplicate axis names").
    DuplicateAxisName {
        /// The name.
        name: String,
    },
    /// `device_ids` and `iota_transform` are both given (XLA: "Mesh must not have an iota
    /// transform and a device ID list").
    IotaTransformAndDeviceIds,
    /// The device list's length differs from the mesh's size (XLA: "Number of device ids must
    /// match the product of mesh axis sizes").
    DeviceIdCount {
        /// Device ids listed.
        ids: usize,
        /// The product of the axis sizes.
        mesh: u64,
    },
    /// A listed device id is negative (XLA: "Mesh device ids must be non-negative").
    NegativeDeviceId {
        /// The id.
        device: i64,
    },
    /// The listed device ids are `0, 1, 2, …` in order: XLA wants an iota written as one
    /// (XLA: "Non-iota device assignment has iota device id list").
    IotaDeviceList,
    /// The listed device ids are not a permutation of `0..N` (XLA: "Device ids must be a
    /// permutation of [0,1,2,3...]").
    NotAPermutationOfIota,
    /// An axis reference names a mesh axis that does not exist (XLA: "Axis index must be less
    /// than number of axes").
    AxisIndexOutOfRange {
        /// The index.
        index: i64,
        /// The mesh's axis count.
        axes: usize,
    },
    /// A text axis name is neither a mesh axis nor an axis number (XLA's parser: "is not a valid
    /// axis name or index in mesh").
    UnknownAxisName {
        /// The name as written.
        name: String,
    },
    /// A sub-axis whose `pre_size` is below 1 or whose size is below 2 (XLA: "sub-axis pre-size
    /// must be >= 1", "sub-axis size must be > 1").
    SubAxisBounds {
        /// `pre_size`.
        pre_size: i64,
        /// `size`.
        size: i64,
    },
    /// `pre_size · size` does not divide the axis (XLA: "Sub-axis `next_pre_size` must divide the
    /// full axis size").
    SubAxisNotDividing {
        /// `pre_size · size`.
        next_pre_size: i64,
        /// The axis size.
        axis_size: i64,
    },
    /// A sub-axis as large as its axis (XLA: "Sub-axis size must be strictly less than the full
    /// axis size").
    SubAxisTooLarge {
        /// The sub-axis size.
        size: i64,
        /// The axis size.
        axis_size: i64,
    },
    /// An axis used twice, or two sub-axes that overlap or cannot both exist (XLA: "Axes cannot
    /// coexist or axes overlap").
    AxesOverlap {
        /// The mesh axis.
        axis: i64,
    },
    /// Two neighbouring sub-axes that make one (`'y':(1)2, 'y':(2)2`; XLA: "Adjacent axes in
    /// dimension sharding can be merged").
    MergeableAxes {
        /// The list they are in.
        list: AxisList,
    },
    /// `replicated`, `unreduced` or `manual` axes out of order (XLA: "axes must be sorted by mesh
    /// axis index and sub-axis pre-size").
    UnsortedAxes {
        /// The list.
        list: AxisList,
    },
    /// The text's `manual` or `unreduced` on a mesh without axes (XLA: "Manual sharding requires
    /// non-empty mesh").
    EmptyMeshKeyword {
        /// `Manual` or `Unreduced`.
        list: AxisList,
    },
    /// `NamedShardingProto` field 1, reserved by jaxlib 0.10.2 (which ignores it): tuples are
    /// `OpSharding` tuples whose leaves carry `named_sharding`.
    ReservedTupleField,
}

impl fmt::Display for NamedShardingProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MaximalMeshDeviceCount { count } => {
                write!(f, "maximal mesh must have exactly 1 device id, but has {count}")
            }
            Self::MaximalMeshWithDimensions => f.write_str("a maximal mesh has no axes to shard dimensions over"),
            Self::NonPositiveAxisSize { axis, size } => {
                write!(f, "mesh axis size must be positive: axis {axis} has size {size}")
            }
            Self::DuplicateAxisName { name } => write!(f, "mesh has duplicate axis names: {name:?}"),
            Self::IotaTransformAndDeviceIds => f.write_str("mesh must not have an iota transform and a device id list"),
            Self::DeviceIdCount { ids, mesh } => write!(
                f,
                "number of device ids must match the product of mesh axis sizes: {ids} ids, mesh of {mesh} devices"
            ),
            Self::NegativeDeviceId { device } => write!(f, "mesh device ids must be non-negative: device id {device}"),
            Self::IotaDeviceList => f.write_str("non-iota device assignment has iota device id list [0,1,2,3...]"),
            Self::NotAPermutationOfIota => f.write_str("device ids must be a permutation of [0,1,2,3...]"),
            Self::AxisIndexOutOfRange { index, axes } => write!(
                f,
                "axis index must be less than number of axes (and non-negative): axis index {index}, number of axes \
                 {axes}"
            ),
            Self::UnknownAxisName { name } => write!(f, "axis {name:?} is not a valid axis name or index in mesh"),
            Self::SubAxisBounds { pre_size, size } => write!(
                f,
                "sub-axis pre-size must be >= 1 and sub-axis size must be > 1: pre-size {pre_size}, size {size}"
            ),
            Self::SubAxisNotDividing { next_pre_size, axis_size } => write!(
                f,
                "sub-axis next_pre_size must divide the full axis size: next pre-size {next_pre_size}, axis size \
                 {axis_size}"
            ),
            Self::SubAxisTooLarge { size, axis_size } => write!(
                f,
                "sub-axis size must be strictly less than the full axis size: sub-axis size {size}, axis size \
                 {axis_size}"
            ),
            Self::AxesOverlap { axis } => write!(f, "axes cannot coexist or axes overlap (mesh axis {axis})"),
            Self::MergeableAxes { list } => write!(f, "adjacent axes in {} can be merged", list.name()),
            Self::UnsortedAxes { list } => {
                write!(f, "{} axes must be sorted by mesh axis index and sub-axis pre-size", list.name())
            }
            Self::EmptyMeshKeyword { list } => write!(f, "{} sharding requires non-empty mesh", list.name()),
            Self::ReservedTupleField => f.write_str(
                "named_sharding field 1 (tuple_shardings) is reserved: a tuple is an OpSharding tuple of named leaves",
            ),
        }
    }
}
