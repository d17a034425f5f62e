//! The opt-in conversion to XLA's serialized form (spec `schema.md` §4).
//!
//! The depth is checked over the whole tree before anything changes, so a message that is too
//! deep is left as it was.

use crate::depth::Depth;
use crate::error::Result;
use crate::primitive::PrimitiveType;
use crate::proto::{DimLevelType, Format, LayoutProto, LiteralProto, ProgramShapeProto, ShapeProto};
use crate::validate::Path;

pub(super) fn shape(shape: &mut ShapeProto) -> Result<()> {
    check_depth(shape, Path::Root, Depth::ROOT)?;
    convert_shape(shape);
    Ok(())
}

/// A layout on its own: its rank is the length of `minor_to_major`. Layouts hold no shapes the
/// conversion touches (`physical_shape` is sparse-only), so there is no depth to check.
#[allow(clippy::unnecessary_wraps)] // one signature for all three messages
pub(super) fn layout(layout: &mut LayoutProto) -> Result<()> {
    let rank = layout.minor_to_major.len();
    convert_layout(layout, rank);
    Ok(())
}

pub(super) fn program_shape(program: &mut ProgramShapeProto) -> Result<()> {
    for (i, parameter) in program.parameters.iter().enumerate() {
        check_depth(parameter, Path::Root.index("parameters", i), Depth::ROOT)?;
    }
    if let Some(result) = &program.result {
        check_depth(result, Path::Root.field("result"), Depth::ROOT)?;
    }
    program.parameters.iter_mut().for_each(convert_shape);
    convert_shape(program.result.get_or_insert_with(ShapeProto::default));
    Ok(())
}

/// A literal: the shape of every piece (the root and each element of `tuple_literals`). Values
/// are left as they are.
pub(super) fn literal(literal: &mut LiteralProto) -> Result<()> {
    check_literal_depth(literal, Path::Root, Depth::ROOT)?;
    convert_literal(literal);
    Ok(())
}

fn check_literal_depth(literal: &LiteralProto, path: Path<'_>, depth: Depth) -> Result<()> {
    depth.check(|| path.to_field_path())?;
    if let Some(shape) = &literal.shape {
        check_depth(shape, path.field("shape"), depth)?;
    }
    for (i, element) in literal.tuple_literals.iter().enumerate() {
        check_literal_depth(element, path.index("tuple_literals", i), depth.enter())?;
    }
    Ok(())
}

/// Recursion is bounded: `check_literal_depth` accepted the tree.
fn convert_literal(literal: &mut LiteralProto) {
    if let Some(shape) = &mut literal.shape {
        convert_shape(shape);
    }
    literal.tuple_literals.iter_mut().for_each(convert_literal);
}

fn check_depth(shape: &ShapeProto, path: Path<'_>, depth: Depth) -> Result<()> {
    depth.check(|| path.to_field_path())?;
    for (i, element) in shape.tuple_shapes.iter().enumerate() {
        check_depth(element, path.index("tuple_shapes", i), depth.enter())?;
    }
    Ok(())
}

/// Recursion is bounded: `check_depth` accepted the tree.
fn convert_shape(shape: &mut ShapeProto) {
    if PrimitiveType::from_i32(shape.element_type).is_some_and(PrimitiveType::is_array) {
        if shape.is_dynamic_dimension.is_empty() {
            shape.is_dynamic_dimension = vec![false; shape.dimensions.len()];
        }
        let rank = shape.dimensions.len();
        if let Some(layout) = &mut shape.layout {
            convert_layout(layout, rank);
        }
    }
    shape.tuple_shapes.iter_mut().for_each(convert_shape);
}

/// `rank` decides whether a sparse-era list is a complete all-dense description (then it is
/// dropped) or malformed (then it stays, for validation to report).
fn convert_layout(layout: &mut LayoutProto, rank: usize) {
    if layout.tail_padding_alignment_in_elements == 0 {
        layout.tail_padding_alignment_in_elements = 1;
    }
    if layout.format == Format::Dense as i32 {
        layout.format = Format::InvalidFormat as i32;
    }
    if layout.dim_level_types.len() == rank
        && layout.dim_level_types.iter().all(|&t| t == DimLevelType::DimDense as i32)
    {
        layout.dim_level_types.clear();
    }
    for flags in [&mut layout.dim_unique, &mut layout.dim_ordered] {
        if flags.len() == rank && flags.iter().all(|&f| f) {
            flags.clear();
        }
    }
}
