//! XLA's `HloSharding::Validate(shape, num_devices)` (`docs/sharding.md` §2.2): a sharding
//! against the shape it annotates and the program's device count.

use crate::error::{Error, FieldPath, Result, ShardingProblem};
use crate::shape::{Shape, ShapeKind};

use super::build::device_i64;
use super::model::{HloSharding, ShardingKind};
use super::tile_assignment::TileAssignment;

fn err(path: &FieldPath, problem: ShardingProblem) -> Error {
    Error::sharding(path.clone(), problem)
}

impl HloSharding {
    /// Checks the sharding against `shape` and, if given, the program's device count, as XLA's
    /// `Validate` does: a tuple sharding needs a tuple shape with as many leaves (an empty tuple
    /// may have one sharding or none); a tiled leaf needs the shape's rank in its data
    /// dimensions, more than one device, and with `num_devices` exactly the devices
    /// `0..num_devices`; a maximal device must be below `num_devices`. A token accepts anything.
    ///
    /// # Errors
    ///
    /// [`Error::Sharding`], its path naming the tuple element (`tuple_shardings[2]`).
    ///
    /// ```
    /// use xla_shape::{sharding::HloSharding, text};
    /// let shape = text::parse_shape("(f32[8,4], s32[])")?;
    /// let sharding: HloSharding = "{{devices=[4,1,2]<=[8] last_tile_dim_replicate}, {replicated}}".parse()?;
    /// sharding.validate(&shape.view(), Some(8))?;
    /// assert!(sharding.validate(&shape.view(), Some(16)).is_err());
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn validate(&self, shape: &Shape<'_>, num_devices: Option<u64>) -> Result<()> {
        if shape.is_token() {
            return Ok(());
        }
        let root = FieldPath::root();
        let ShardingKind::Tuple(elements) = &self.kind else {
            return self.validate_leaf(shape, num_devices, &root);
        };
        if !shape.is_tuple() {
            return Err(err(&root, ShardingProblem::TupleShardingForArray));
        }
        let mut leaves = Vec::new();
        collect_leaves(*shape, &mut leaves);
        let allowed = leaves.len() == elements.len() || (leaves.is_empty() && elements.len() <= 1);
        if !allowed {
            return Err(err(&root, ShardingProblem::LeafCount { shape: leaves.len(), sharding: elements.len() }));
        }
        for (i, (leaf, element)) in leaves.iter().zip(elements).enumerate() {
            element.validate_leaf(leaf, num_devices, &root.clone().field("tuple_shardings").index(i))?;
        }
        Ok(())
    }

    /// XLA's `ValidateNonTuple`.
    fn validate_leaf(&self, shape: &Shape<'_>, num_devices: Option<u64>, path: &FieldPath) -> Result<()> {
        if shape.is_tuple() {
            return Err(err(path, ShardingProblem::ArrayShardingForTuple));
        }
        match &self.kind {
            ShardingKind::Replicated | ShardingKind::Manual | ShardingKind::Unknown | ShardingKind::Unreduced => Ok(()),
            ShardingKind::Tuple(_) => Err(err(path, ShardingProblem::TupleShardingForArray)),
            ShardingKind::Named(named) => {
                super::named_v2::v3_to_v2(named, Vec::new()).validate_leaf(shape, num_devices, path)
            }
            ShardingKind::Maximal(device) => match num_devices {
                Some(n) if device.0 >= n => {
                    Err(err(path, ShardingProblem::DeviceOutOfRange { device: device_i64(*device), num_devices: n }))
                }
                _ => Ok(()),
            },
            ShardingKind::Tiled(tiled) => {
                let count = tiled.tile_assignment.num_elements();
                if count == 1 {
                    return Err(err(path, ShardingProblem::SingleDeviceTiled));
                }
                let rank = shape.array_or_buffer().map_or(0, |a| a.rank());
                if rank != tiled.data_rank() {
                    return Err(err(
                        path,
                        ShardingProblem::RankMismatch { shape_rank: rank, data_rank: tiled.data_rank() },
                    ));
                }
                let Some(n) = num_devices else { return Ok(()) };
                if let TileAssignment::Explicit { devices, .. } = &tiled.tile_assignment {
                    if let Some(&d) = devices.iter().find(|d| d.0 >= n) {
                        return Err(err(
                            path,
                            ShardingProblem::DeviceOutOfRange { device: device_i64(d), num_devices: n },
                        ));
                    }
                }
                if count != n {
                    return Err(err(path, ShardingProblem::WrongDeviceCount { expected: n, actual: count }));
                }
                Ok(())
            }
        }
    }
}

/// The non-tuple subshapes of `shape` in pre-order (XLA's `ShapeTree` leaves).
fn collect_leaves<'a>(shape: Shape<'a>, out: &mut Vec<Shape<'a>>) {
    match shape.kind() {
        ShapeKind::Tuple(tuple) => {
            for element in tuple.iter() {
                collect_leaves(element, out);
            }
        }
        _ => out.push(shape),
    }
}
