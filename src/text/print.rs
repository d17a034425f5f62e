//! The printer (`ShapeUtil::PrintHumanString[WithLayout]`, `Layout::Print`, `Tile::Print`, the
//! `ProgramShape` printer), byte for byte as XLA HEAD.

use std::fmt::{self, Write};

use crate::primitive::PrimitiveType;
use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto};

/// Raw protos can nest arbitrarily deep in memory; printing stops descending here and writes
/// `...`, so printing never exhausts the stack. Valid shapes are far shallower.
const PRINT_DEPTH_LIMIT: usize = 128;

/// Prints a raw shape as XLA does, with or without layouts. Invalid protos print too, the way
/// XLA prints them (an unknown element type is `primitive_type_invalid[]`).
///
/// ```
/// use xla_shape::{proto::ShapeProto, text::shape_to_string};
/// let p = ShapeProto { element_type: 11, dimensions: vec![2, 3], ..Default::default() };
/// assert_eq!(shape_to_string(&p, true), "f32[2,3]");
/// assert_eq!(shape_to_string(&ShapeProto::default(), true), "primitive_type_invalid[]");
/// ```
pub fn shape_to_string(shape: &ShapeProto, with_layout: bool) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_shape(&mut out, shape, with_layout);
    out
}

/// Prints a raw layout as XLA's `Layout::ToString`.
///
/// ```
/// use xla_shape::{proto::LayoutProto, text::layout_to_string};
/// let l = LayoutProto { minor_to_major: vec![1, 0], memory_space: 300, ..Default::default() };
/// assert_eq!(layout_to_string(&l), "{1,0:S(300)}");
/// ```
pub fn layout_to_string(layout: &LayoutProto) -> String {
    let mut out = String::new();
    let _ = write_layout(&mut out, layout);
    out
}

pub(crate) fn write_shape(out: &mut impl Write, shape: &ShapeProto, with_layout: bool) -> fmt::Result {
    write_shape_at(out, shape, with_layout, 0)
}

fn write_shape_at(out: &mut impl Write, shape: &ShapeProto, with_layout: bool, depth: usize) -> fmt::Result {
    if depth >= PRINT_DEPTH_LIMIT {
        return out.write_str("...");
    }
    let Some(element_type) = PrimitiveType::from_i32(shape.element_type) else {
        return out.write_str("primitive_type_invalid[]");
    };
    match element_type {
        PrimitiveType::TUPLE => {
            out.write_char('(')?;
            for (i, element) in shape.tuple_shapes.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                    if i % 5 == 0 {
                        write!(out, "/*index={i}*/")?;
                    }
                }
                write_shape_at(out, element, with_layout, depth.saturating_add(1))?;
            }
            out.write_char(')')
        }
        PrimitiveType::BUFFER => {
            out.write_str("b(")?;
            for (i, element) in shape.tuple_shapes.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                write_shape_at(out, element, with_layout, depth.saturating_add(1))?;
            }
            out.write_char(')')
        }
        t if !t.is_array() => {
            out.write_str(t.name())?;
            out.write_str("[]")
        }
        t => {
            out.write_str(t.name())?;
            out.write_char('[')?;
            for (i, &size) in shape.dimensions.iter().enumerate() {
                if i > 0 {
                    out.write_char(',')?;
                }
                let dynamic = shape.is_dynamic_dimension.get(i).copied().unwrap_or(false);
                match (dynamic, size) {
                    (true, i64::MIN) => out.write_char('?')?,
                    (true, bound) => {
                        out.write_str("<=")?;
                        write_int(out, bound)?;
                    }
                    (false, size) => write_int(out, size)?,
                }
            }
            out.write_char(']')?;
            if let (true, Some(layout)) = (with_layout, &shape.layout) {
                // XLA omits a scalar's layout when its text is exactly `{}`.
                let empty_text = layout.minor_to_major.is_empty() && !has_attributes(layout);
                if !(shape.dimensions.is_empty() && empty_text) {
                    write_layout_at(out, layout, depth)?;
                }
            }
            Ok(())
        }
    }
}

/// Writes an integer without going through `format_args!`: the printer's hot path is mostly
/// small integers.
// A `u64` has at most 20 decimal digits, the length of `buf`, so `at` stays in `0..20`, and
// `b'0' + digit` is an ASCII digit.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn write_int(out: &mut impl Write, value: i64) -> fmt::Result {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut rest = value.unsigned_abs();
    loop {
        at -= 1;
        // `rest % 10` is below 10, so the cast cannot truncate.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (rest % 10) as u8;
        buf[at] = b'0' + digit;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if value < 0 {
        out.write_char('-')?;
    }
    // Only ASCII digits were written.
    out.write_str(std::str::from_utf8(&buf[at..]).unwrap_or_default())
}

/// `a,b,c`.
fn write_int_list(out: &mut impl Write, values: &[i64]) -> fmt::Result {
    for (i, &value) in values.iter().enumerate() {
        if i > 0 {
            out.write_char(',')?;
        }
        write_int(out, value)?;
    }
    Ok(())
}

/// `L(n)`, `E(n)`, `S(n)`, `M(n)`.
fn write_int_attribute(out: &mut impl Write, letter: &str, value: i64) -> fmt::Result {
    out.write_str(letter)?;
    out.write_char('(')?;
    write_int(out, value)?;
    out.write_char(')')
}

pub(crate) fn write_tile(out: &mut impl Write, dimensions: &[i64]) -> fmt::Result {
    out.write_char('(')?;
    for (i, &d) in dimensions.iter().enumerate() {
        if i > 0 {
            out.write_char(',')?;
        }
        match d {
            i64::MIN => out.write_char('*')?,
            d if d >= 0 => write_int(out, d)?,
            d => write!(out, "Invalid value {d}")?,
        }
    }
    out.write_char(')')
}

/// `#(u32)` for an integer index or pointer type, `#(invalid)` for anything else.
fn write_type_attribute(out: &mut impl Write, letter: char, raw: i32) -> fmt::Result {
    match PrimitiveType::from_i32(raw) {
        Some(t) if t.is_integral() => write!(out, "{letter}({})", t.name()),
        _ => write!(out, "{letter}(invalid)"),
    }
}

pub(crate) fn write_layout(out: &mut impl Write, layout: &LayoutProto) -> fmt::Result {
    write_layout_at(out, layout, 0)
}

/// `depth` counts the shapes above this layout, so that a chain of `physical_shape`s in a raw
/// proto cannot exhaust the stack either.
fn write_layout_at(out: &mut impl Write, layout: &LayoutProto, depth: usize) -> fmt::Result {
    out.write_char('{')?;
    write_int_list(out, &layout.minor_to_major)?;
    if has_attributes(layout) {
        out.write_char(':')?;
        write_attributes(out, layout, depth)?;
    }
    out.write_char('}')
}

/// Whether [`write_attributes`] prints anything, i.e. whether `Layout::ToString` has a `:`.
fn has_attributes(layout: &LayoutProto) -> bool {
    let tail = layout.tail_padding_alignment_in_elements;
    !layout.tiles.is_empty()
        || (tail != 1 && tail != 0)
        || layout.index_primitive_type != 0
        || layout.pointer_primitive_type != 0
        || layout.element_size_in_bits != 0
        || layout.memory_space != 0
        || !layout.split_configs.is_empty()
        || layout.physical_shape.is_some()
        || layout.dynamic_shape_metadata_prefix_bytes > 0
}

/// The attributes in XLA's fixed order: T L # * E S SC P M. `D(...)` and the legacy fields are
/// never printed (XLA HEAD prints neither).
fn write_attributes(out: &mut impl Write, layout: &LayoutProto, depth: usize) -> fmt::Result {
    if !layout.tiles.is_empty() {
        out.write_char('T')?;
        for tile in &layout.tiles {
            write_tile(out, &tile.dimensions)?;
        }
    }
    let tail = layout.tail_padding_alignment_in_elements;
    if tail != 1 && tail != 0 {
        write_int_attribute(out, "L", tail)?;
    }
    if layout.index_primitive_type != 0 {
        write_type_attribute(out, '#', layout.index_primitive_type)?;
    }
    if layout.pointer_primitive_type != 0 {
        write_type_attribute(out, '*', layout.pointer_primitive_type)?;
    }
    if layout.element_size_in_bits != 0 {
        write_int_attribute(out, "E", layout.element_size_in_bits)?;
    }
    if layout.memory_space != 0 {
        write_int_attribute(out, "S", layout.memory_space)?;
    }
    if !layout.split_configs.is_empty() {
        out.write_str("SC")?;
        for split in &layout.split_configs {
            out.write_char('(')?;
            write_int(out, split.dimension)?;
            out.write_char(':')?;
            write_int_list(out, &split.split_indices)?;
            out.write_char(')')?;
        }
    }
    if let Some(physical) = &layout.physical_shape {
        out.write_str("P(")?;
        write_shape_at(out, physical, true, depth.saturating_add(1))?;
        out.write_char(')')?;
    }
    if layout.dynamic_shape_metadata_prefix_bytes > 0 {
        write_int_attribute(out, "M", layout.dynamic_shape_metadata_prefix_bytes)?;
    }
    Ok(())
}

pub(crate) fn write_program_shape(out: &mut impl Write, program: &ProgramShapeProto) -> fmt::Result {
    out.write_char('(')?;
    for (i, parameter) in program.parameters.iter().enumerate() {
        if i > 0 {
            out.write_str(", ")?;
        }
        match program.parameter_names.get(i).map(String::as_str) {
            Some(name) if !name.is_empty() => out.write_str(name)?,
            _ => out.write_str("(unknown)")?,
        }
        out.write_str(": ")?;
        write_shape(out, parameter, false)?;
    }
    out.write_str(") -> ")?;
    match &program.result {
        Some(result) => write_shape(out, result, false),
        None => write_shape(out, &ShapeProto::default(), false),
    }
}

/// Raw protos print as XLA prints them, with layouts.
impl fmt::Display for ShapeProto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_shape(f, self, true)
    }
}

/// Raw layouts print as XLA's `Layout::ToString`.
impl fmt::Display for LayoutProto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_layout(f, self)
    }
}

/// Raw program shapes print as XLA's `ProgramShape::ToString`.
impl fmt::Display for ProgramShapeProto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_program_shape(f, self)
    }
}
