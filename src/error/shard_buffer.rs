//! The problems of splitting a global buffer into per-device shard buffers and assembling them
//! back ([`crate::sharding::buffers`]): each names the device it is about.

use std::fmt;

use crate::PrimitiveType;

/// Why shard buffers cannot be split or assembled ([`Error::ShardBuffer`](crate::Error::ShardBuffer)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShardBufferProblem {
    /// A device of the sharding has no buffer.
    Missing {
        /// The device.
        device: u64,
    },
    /// A buffer is given for a device the sharding does not name.
    UnknownDevice {
        /// The device.
        device: u64,
    },
    /// Two buffers, or two ranges, are given for one device.
    DuplicateDevice {
        /// The device.
        device: u64,
    },
    /// A shard buffer's length is not its shard shape's byte size.
    Length {
        /// The device.
        device: u64,
        /// The shard shape's byte size.
        expected: u64,
        /// The buffer's length.
        actual: u64,
    },
    /// The global buffer's length is not the global shape's byte size.
    GlobalLength {
        /// The global shape's byte size.
        expected: u64,
        /// The buffer's length.
        actual: u64,
    },
    /// Two devices hold the same slice of the array (replicas) but their buffers differ.
    ReplicaMismatch {
        /// The device whose buffer differs.
        device: u64,
        /// The lowest device of the same slice, whose buffer was taken.
        replica_of: u64,
        /// The first byte that differs.
        byte: u64,
    },
    /// A device's range does not have the array's rank.
    RangeRank {
        /// The device.
        device: u64,
        /// The array's rank.
        rank: usize,
        /// The range's length.
        actual: usize,
    },
    /// A device's `[start, limit)` is not inside the array's dimension.
    RangeOutOfBounds {
        /// The device.
        device: u64,
        /// The logical dimension.
        dimension: usize,
        /// The range's start.
        start: u64,
        /// The range's limit.
        limit: u64,
        /// The dimension's size.
        size: u64,
    },
    /// A padded shard's tile is smaller than the device's range.
    TileTooSmall {
        /// The device.
        device: u64,
        /// The logical dimension.
        dimension: usize,
        /// The tile's size in it.
        tile: u64,
        /// The range's extent in it.
        extent: u64,
    },
    /// A reshard's two shapes differ in element type ([`crate::sharding::reshard`]).
    ReshardElementType {
        /// The source shape's element type.
        from: PrimitiveType,
        /// The target shape's element type.
        to: PrimitiveType,
    },
    /// A reshard's two shapes differ in rank.
    ReshardRank {
        /// The source shape's rank.
        from: usize,
        /// The target shape's rank.
        to: usize,
    },
    /// A reshard's two shapes differ in a dimension (bounds, for dynamic ones).
    ReshardDimension {
        /// The logical dimension.
        dimension: usize,
        /// Its size in the source shape.
        from: u64,
        /// Its size in the target shape.
        to: u64,
    },
}

impl fmt::Display for ShardBufferProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Missing { device } => write!(f, "no buffer for device {device}"),
            Self::UnknownDevice { device } => write!(f, "device {device} is not in the sharding"),
            Self::DuplicateDevice { device } => write!(f, "device {device} is given twice"),
            Self::Length { device, expected, actual } => {
                write!(f, "buffer of device {device} has {actual} bytes, expected {expected}")
            }
            Self::GlobalLength { expected, actual } => {
                write!(f, "global buffer has {actual} bytes, expected {expected}")
            }
            Self::ReplicaMismatch { device, replica_of, byte } => {
                write!(f, "buffer of device {device} differs from its replica on device {replica_of} at byte {byte}")
            }
            Self::RangeRank { device, rank, actual } => {
                write!(f, "range of device {device} has {actual} dimensions, the array {rank}")
            }
            Self::RangeOutOfBounds { device, dimension, start, limit, size } => write!(
                f,
                "range [{start}, {limit}) of device {device} is out of bounds in dimensions[{dimension}] of size {size}"
            ),
            Self::TileTooSmall { device, dimension, tile, extent } => write!(
                f,
                "tile size {tile} is smaller than the extent {extent} of device {device} in dimensions[{dimension}]"
            ),
            Self::ReshardElementType { from, to } => {
                write!(f, "cannot reshard: the source's element type is {from}, the target's {to}")
            }
            Self::ReshardRank { from, to } => {
                write!(f, "cannot reshard: the source has {from} dimensions, the target {to}")
            }
            Self::ReshardDimension { dimension, from, to } => {
                write!(f, "cannot reshard: dimensions[{dimension}] is {from} in the source and {to} in the target")
            }
        }
    }
}
