//! The `ShapeUtil` / `LayoutUtil` operations XLA users know, on validated views (spec
//! `linearization.md` §6).
//!
//! | file | XLA | what |
//! |---|---|---|
//! | `construction` | `ShapeUtil::Make*`, `LayoutUtil::SetToDefaultLayout`, `ClearLayout`, … | whole-shape rewrites (§6.1) |
//! | `dimensions` | `ShapeUtil::GetDimension`, `DeleteDimensions`, `PermuteDimensions`, … | logical dimensions (§6.2) |
//! | `layout_ops` | `LayoutUtil::Major`, `MoveDimToMajor`, `CopyLayoutBetweenShapes`, … | layout queries and edits (§6.3) |
//! | `equality` | `ShapeUtil::Equal`, `Shape::Equal`, `Layout::Equal`, `Compatible`, … | semantic equality (§6.4) |
//!
//! Everything is re-exported here, so `xla_shape::util::permute_dimensions` is the path to use.
//!
//! Rules shared by every function:
//! * Inputs are validated views; nothing validates them again. A shape without a layout is
//!   treated as having the default descending layout `{n-1,…,0}` wherever a layout is needed, and
//!   stays without a layout where the operation only edits an existing one.
//! * A function that builds a shape returns `Result<ShapeBuf>`: the result is put into XLA's form
//!   ([`crate::codec::to_xla_form`]: `is_dynamic_dimension` for every dimension, tail padding
//!   alignment 1 instead of 0, …) and validated (optional-layout mode) before it is handed out. Where XLA would crash, these return
//!   an [`Error`](crate::Error).
//! * **Legacy padding (crate rule):** an operation that permutes, inserts or deletes logical
//!   dimensions applies the same change to a non-empty legacy `padded_dimensions` (an inserted
//!   dimension is padded to its own bound), so the result still validates. Every other layout
//!   field follows XLA.
//! * Recursion over tuples stops at [`MAX_DEPTH`](crate::MAX_DEPTH) levels.
//!
//! ```
//! use xla_shape::{make, util, Dim, PrimitiveType};
//! let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[10, 100, 1000], &[2, 1, 0]).unwrap();
//! let t = util::permute_dimensions(&[1, 2, 0], s.as_array().unwrap()).unwrap();
//! assert_eq!(t.to_string(), "f32[100,1000,10]{1,0,2}");
//! assert!(util::compatible(s.view(), util::permute_dimensions(&[0, 1, 2], s.as_array().unwrap()).unwrap().view()));
//! assert_eq!(util::get_dimension(s.as_array().unwrap(), -1).unwrap(), 1000);
//! assert_eq!(util::delete_dimension(Dim(1), s.as_array().unwrap()).unwrap().to_string(), "f32[10,1000]{1,0}");
//! ```

mod construction;
mod dimensions;
mod equality;
mod layout_ops;

pub use construction::*;
pub use dimensions::*;
pub use equality::*;
pub use layout_ops::*;

use crate::depth::Depth;
use crate::error::{FieldPath, Result};
use crate::primitive::PrimitiveType;
use crate::proto::ShapeProto;
use crate::shape::{ArrayShape, Shape, ShapeBuf, ShapeKind};

/// Puts a proto the crate built into XLA's form ([`crate::codec::to_xla_form`]) and validates it
/// (optional-layout mode).
fn finish(mut proto: ShapeProto) -> Result<ShapeBuf> {
    crate::codec::to_xla_form(&mut proto)?;
    ShapeBuf::try_from_proto_optional_layout(proto)
}

/// Rebuilds `shape` with every array (the array of a buffer included) replaced by `f(array)`.
/// Tuples are rebuilt element by element; tokens and opaque shapes are copied.
fn map_arrays(shape: Shape<'_>, f: &mut dyn FnMut(ArrayShape<'_>) -> Result<ShapeProto>) -> Result<ShapeProto> {
    map_arrays_at(shape, f, Depth::ROOT)
}

fn map_arrays_at(
    shape: Shape<'_>,
    f: &mut dyn FnMut(ArrayShape<'_>) -> Result<ShapeProto>,
    depth: Depth,
) -> Result<ShapeProto> {
    depth.check(FieldPath::root)?;
    match shape.kind() {
        ShapeKind::Array(array) => f(array),
        ShapeKind::Buffer(array) => Ok(wrap(PrimitiveType::BUFFER, vec![f(array)?])),
        ShapeKind::Tuple(tuple) => {
            let elements = tuple.iter().map(|e| map_arrays_at(e, f, depth.enter())).collect::<Result<Vec<_>>>()?;
            Ok(wrap(PrimitiveType::TUPLE, elements))
        }
        ShapeKind::Token | ShapeKind::Opaque => Ok(shape.proto().clone()),
    }
}

fn wrap(element_type: PrimitiveType, tuple_shapes: Vec<ShapeProto>) -> ShapeProto {
    ShapeProto { element_type: element_type.as_i32(), tuple_shapes, ..ShapeProto::default() }
}

/// Whether `leaf` holds for every non-tuple subshape (true for the empty tuple).
fn all_leaves(shape: Shape<'_>, leaf: &dyn Fn(Shape<'_>) -> bool) -> bool {
    fold_leaves(shape, leaf, true, Depth::ROOT)
}

/// Whether `leaf` holds for some non-tuple subshape (false for the empty tuple).
fn any_leaf(shape: Shape<'_>, leaf: &dyn Fn(Shape<'_>) -> bool) -> bool {
    fold_leaves(shape, leaf, false, Depth::ROOT)
}

/// `all = true`: every leaf; `all = false`: some leaf. Validated shapes never reach the depth
/// limit; if one did, the answer would be `!all` (no claim about what was not inspected).
fn fold_leaves(shape: Shape<'_>, leaf: &dyn Fn(Shape<'_>) -> bool, all: bool, depth: Depth) -> bool {
    if depth.exceeded() {
        return !all;
    }
    match shape.as_tuple() {
        Some(tuple) => {
            let mut elements = tuple.iter();
            if all {
                elements.all(|e| fold_leaves(e, leaf, all, depth.enter()))
            } else {
                elements.any(|e| fold_leaves(e, leaf, all, depth.enter()))
            }
        }
        None => leaf(shape),
    }
}

/// Which end of `minor_to_major` a dimension goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The last entry: most major.
    Major,
    /// The first entry: most minor.
    Minor,
}

/// A dimension number as stored in `minor_to_major`.
fn to_i64(d: usize) -> i64 {
    // Dimension numbers come from validated ranks, far below i64::MAX.
    i64::try_from(d).unwrap_or(i64::MAX)
}

/// A validated `minor_to_major` entry as an index.
fn to_usize(d: i64) -> usize {
    usize::try_from(d).unwrap_or(usize::MAX)
}
