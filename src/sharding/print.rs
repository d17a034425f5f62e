//! XLA's `HloSharding::ToString()` (`docs/sharding.md` §3.2): metadata is not printed, an iota
//! prints as `<=[…]` with `T(…)` only for more than one reshape dimension, tuples mark every
//! fifth element with `/*index=N*/`.

use std::fmt::{self, Write};

use super::model::{HloSharding, ShardGroupKind, ShardingKind};
use super::named::{AxisRef, Mesh, NamedSharding};
use super::tile_assignment::TileAssignment;

fn join<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: impl IntoIterator<Item = T>) -> fmt::Result {
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            f.write_char(',')?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

impl fmt::Display for TileAssignment {
    /// `devices=[2,2]0,2,1,3` or `devices=[2,2]<=[2,2]T(1,0)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("devices=[")?;
        join(f, self.dimensions())?;
        f.write_char(']')?;
        match self {
            TileAssignment::Iota(iota) => {
                f.write_str("<=[")?;
                join(f, iota.reshape_dims())?;
                f.write_char(']')?;
                if iota.reshape_dims().len() > 1 {
                    f.write_str("T(")?;
                    join(f, iota.transpose_perm())?;
                    f.write_char(')')?;
                }
                Ok(())
            }
            TileAssignment::Explicit { devices, .. } => join(f, devices),
        }
    }
}

impl fmt::Display for HloSharding {
    /// XLA's text, byte for byte as `HloSharding::ToString()` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let ShardingKind::Tuple(elements) = &self.kind {
            f.write_char('{')?;
            for (i, element) in elements.iter().enumerate() {
                if i > 0 {
                    if i % 5 == 0 {
                        write!(f, ", /*index={i}*/")?;
                    } else {
                        f.write_str(", ")?;
                    }
                }
                write!(f, "{element}")?;
            }
            return f.write_char('}');
        }
        if let ShardingKind::Named(named) = &self.kind {
            return write!(f, "{named}");
        }
        f.write_char('{')?;
        match &self.kind {
            ShardingKind::Replicated | ShardingKind::Tuple(_) | ShardingKind::Named(_) => f.write_str("replicated")?,
            ShardingKind::Manual => f.write_str("manual")?,
            ShardingKind::Unknown => f.write_str("unknown")?,
            ShardingKind::Unreduced => f.write_str("unreduced")?,
            ShardingKind::Maximal(device) => write!(f, "maximal device={device}")?,
            ShardingKind::Tiled(tiled) => {
                write!(f, "{}", tiled.tile_assignment)?;
                if tiled.replicate_on_last_tile_dim {
                    f.write_str(" last_tile_dim_replicate")?;
                }
                if !tiled.subgroup_types.is_empty() {
                    f.write_str(" last_tile_dims={")?;
                    for (i, ty) in tiled.subgroup_types.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        f.write_str(ty.name())?;
                    }
                    f.write_char('}')?;
                }
            }
        }
        if let Some(group) = self.shard_group {
            let kind = match group.kind {
                ShardGroupKind::As => "shard_as",
                ShardGroupKind::Like => "shard_like",
            };
            write!(f, " {kind} {}", group.id)?;
        }
        f.write_char('}')
    }
}

/// One axis as jaxlib 0.10.2 prints it: its name between single quotes, unescaped (a name with a
/// `'` prints text that does not parse back, `docs/sharding.md` §9.5), then `:(pre)size` for a
/// sub-axis.
struct Axis<'a>(&'a NamedSharding, AxisRef);

impl fmt::Display for Axis<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.0.mesh.axis_names().nth(self.1.index).unwrap_or_default();
        write!(f, "'{name}'")?;
        if let Some(sub) = self.1.sub {
            write!(f, ":({}){}", sub.pre_size, sub.size)?;
        }
        Ok(())
    }
}

impl NamedSharding {
    fn write_axes(&self, f: &mut fmt::Formatter<'_>, axes: &[AxisRef]) -> fmt::Result {
        for (i, &axis) in axes.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", Axis(self, axis))?;
        }
        Ok(())
    }
}

impl fmt::Display for Mesh {
    /// `maximal_mesh[device_id=5]`, `mesh[]`, `mesh['x'=2,'y'=4]` and, unless the devices are
    /// `iota(N)` in mesh order, `, device_ids=([4,2]T(1,0))` or `, device_ids=(7,6,5,4)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (names, devices) = match self {
            Self::Maximal(device) => return write!(f, "maximal_mesh[device_id={device}]"),
            Self::Empty => return f.write_str("mesh[]"),
            Self::Axes { names, devices } => (names, devices),
        };
        f.write_str("mesh[")?;
        for (i, (name, size)) in names.iter().zip(devices.dimensions()).enumerate() {
            if i > 0 {
                f.write_char(',')?;
            }
            write!(f, "'{name}'={size}")?;
        }
        f.write_char(']')?;
        match devices {
            _ if Self::simple_iota(devices) => Ok(()),
            TileAssignment::Iota(iota) => {
                f.write_str(", device_ids=([")?;
                join(f, iota.reshape_dims())?;
                f.write_str("]T(")?;
                join(f, iota.transpose_perm())?;
                f.write_str("))")
            }
            TileAssignment::Explicit { devices, .. } => {
                f.write_str(", device_ids=(")?;
                join(f, devices)?;
                f.write_char(')')
            }
        }
    }
}

impl fmt::Display for NamedSharding {
    /// jaxlib 0.10.2's `NamedSharding::ToString()`: the mesh, then, without a dimension list,
    /// `replicated` when there is no axis list, `unreduced` (else `manual`) when that list's axes
    /// hold every device (whatever the other lists say: jaxlib's rule, not upstream HEAD's
    /// "every axis in order"); otherwise the dimension list and the axis lists. Metadata is not
    /// printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}", self.mesh)?;
        if matches!(self.mesh, Mesh::Maximal(_)) {
            return f.write_char('}');
        }
        if self.dims.is_empty() {
            if self.replicated.is_empty() && self.unreduced.is_empty() && self.manual.is_empty() {
                return f.write_str(", replicated}");
            }
            if self.covers_mesh(&self.unreduced) {
                return f.write_str(", unreduced}");
            }
            if self.covers_mesh(&self.manual) {
                return f.write_str(", manual}");
            }
        }
        f.write_str(", [")?;
        for (i, dim) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_char('{')?;
            self.write_axes(f, &dim.axes)?;
            if !dim.closed {
                f.write_str(if dim.axes.is_empty() { "?" } else { ", ?" })?;
            }
            f.write_char('}')?;
        }
        f.write_char(']')?;
        for (name, axes) in [("replicated", &self.replicated), ("unreduced", &self.unreduced), ("manual", &self.manual)]
        {
            if !axes.is_empty() {
                write!(f, ", {name}={{")?;
                self.write_axes(f, axes)?;
                f.write_char('}')?;
            }
        }
        f.write_char('}')
    }
}
