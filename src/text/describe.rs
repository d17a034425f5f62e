//! A description of a shape for people: every field spelled out, including what XLA text cannot
//! express (legacy padding, the padding value) and what it leaves implicit (the dimension letters
//! of the seed documents, element widths, the default layout).

use std::fmt::{self, Write};

use crate::error::Result;
use crate::layout::Layout;
use crate::proto::PaddingValue;
use crate::shape::{ArrayShape, Dim, Shape, ShapeKind};
use crate::{size, util};

/// A multi-line description: a title line, then aligned `label: value` lines.
///
/// Built by [`describe`]; [`Description::push`] adds lines, so callers (and later sections such as
/// sizes and strides) extend it without touching the formatting.
///
/// ```
/// use xla_shape::text::{describe, parse_shape};
/// let s = parse_shape("f32[2,3]{0,1}").unwrap();
/// let mut d = describe(s.view());
/// d.push("note", "column-major");
/// assert!(d.to_string().ends_with("  note:            column-major\n"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Description {
    title: String,
    lines: Vec<(String, String)>,
}

impl Description {
    /// An empty description with a title line.
    pub fn new(title: impl Into<String>) -> Self {
        Self { title: title.into(), lines: Vec::new() }
    }

    /// Appends a `label: value` line.
    pub fn push(&mut self, label: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.lines.push((label.into(), value.into()));
        self
    }

    /// The title line (the shape's XLA text).
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The `(label, value)` lines, in order.
    pub fn lines(&self) -> &[(String, String)] {
        &self.lines
    }
}

/// The title, then one line per entry with the values aligned in one column.
impl fmt::Display for Description {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.title)?;
        let width =
            self.lines.iter().map(|(label, _)| label.chars().count().saturating_add(1)).max().unwrap_or(0).max(16);
        for (label, value) in &self.lines {
            writeln!(f, "  {:<width$} {value}", format!("{label}:"))?;
        }
        Ok(())
    }
}

/// Describes a validated shape: kind, element type and width, each dimension with its letter
/// (rank 2: y, x; rank 3: z, y, x; rank 4: p, z, y, x) and dynamic flag, the layout from major to
/// minor, tiles, legacy padding, element size, tail padding and memory space. Tuples list their
/// elements.
///
/// ```
/// use xla_shape::{make, proto::PaddingValue, text::describe, PrimitiveType};
/// let layout = make::LayoutSpec::new(&[0, 1]).padded_dimensions(&[3, 5], PaddingValue::ZeroPad);
/// let s = make::make_shape_with_layout(PrimitiveType::F32, &[2, 3], &layout).unwrap();
/// assert_eq!(
///     describe(s.view()).to_string(),
///     "f32[2,3]{0,1}
///   kind:            array
///   element type:    f32, 32 bits
///   dimension 0 (y): 2
///   dimension 1 (x): 3
///   layout:          major to minor: 1 (x), 0 (y)
///   tiles:           none
///   legacy padding:  padded to [3,5], padding value ZERO_PAD
///   element size:    32 bits (the element type's own)
///   tail padding:    1 element
///   memory space:    0 (device memory)
/// "
/// );
/// ```
pub fn describe(shape: Shape<'_>) -> Description {
    let mut d = Description::new(shape.to_string());
    match shape.kind() {
        ShapeKind::Array(array) => {
            d.push("kind", "array");
            describe_array(array, &mut d);
        }
        ShapeKind::Buffer(array) => {
            d.push("kind", "buffer of an array");
            describe_array(array, &mut d);
        }
        ShapeKind::Tuple(tuple) => {
            d.push("kind", format!("tuple of {} element{}", tuple.len(), plural(tuple.len())));
            for (i, element) in tuple.iter().enumerate() {
                d.push(format!("element {i}"), element.to_string());
            }
        }
        ShapeKind::Token => {
            d.push("kind", "token");
        }
        ShapeKind::Opaque => {
            d.push("kind", "opaque");
        }
    }
    d
}

/// [`describe`] followed by the memory sections of an array (or a buffer's array): true rank,
/// element count, byte strides, XLA's byte sizes (`ByteSizeOf`, `ArraySize`, `ArrayDataSize`)
/// and the crate's full physical storage (every slot, including tile, legacy and tail padding).
/// Where XLA's `array_size` and the storage differ, both are shown. A tuple adds the size of its
/// index table with 8-byte pointers. A value that cannot be computed (an unbounded `?`
/// dimension, an overflow) is shown as `n/a` with the reason.
///
/// ```
/// use xla_shape::text::{describe_sizes, parse_shape};
/// let s = parse_shape("f32[3,5]{1,0:T(2,2)}").unwrap();
/// let text = describe_sizes(s.view()).to_string();
/// assert!(text.contains("  elements:        15\n"), "{text}");
/// assert!(text.contains("  byte strides:    [20,4] (tiles ignored, as in XLA)\n"), "{text}");
/// assert!(text.contains("  array size:      96 bytes (XLA ArraySize)\n"), "{text}");
/// assert!(text.contains("  storage:         24 slots of 32 bits = 96 bytes\n"), "{text}");
/// ```
pub fn describe_sizes(shape: Shape<'_>) -> Description {
    let mut d = describe(shape);
    match shape.kind() {
        ShapeKind::Array(array) | ShapeKind::Buffer(array) => sizes(array, &mut d),
        ShapeKind::Tuple(_) | ShapeKind::Opaque => {
            d.push("byte size", or_na(size::byte_size_of(shape, 8).map(|b| format!("{b} bytes (8-byte pointers)"))));
        }
        ShapeKind::Token => {
            d.push("byte size", "0 bytes");
        }
    }
    d
}

/// A computed value, or `n/a (why not)`.
fn or_na(value: Result<String>) -> String {
    value.unwrap_or_else(|e| format!("n/a ({e})"))
}

fn sizes(array: ArrayShape<'_>, d: &mut Description) {
    let list = |values: &[i64]| values.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    d.push("true rank", format!("{} (dimensions whose size is not 1)", util::true_num_dimensions(array)));
    d.push("elements", or_na(size::elements_in(array).map(|n| n.to_string())));
    d.push(
        "byte strides",
        or_na(size::byte_strides(array).map(|strides| match strides {
            Some(strides) => format!("[{}] (tiles ignored, as in XLA)", list(&strides)),
            None => "none (elements are not whole bytes)".to_owned(),
        })),
    );
    d.push("byte size", or_na(size::byte_size_of_elements(array).map(|b| format!("{b} bytes (XLA ByteSizeOf)"))));
    d.push("array size", or_na(size::array_size(array).map(|b| format!("{b} bytes (XLA ArraySize)"))));
    d.push("array data size", or_na(size::array_data_size(array).map(|b| format!("{b} bytes (XLA ArrayDataSize)"))));
    d.push(
        "storage",
        or_na(crate::physical::PhysicalMap::new(array).map(|map| {
            format!("{} slots of {} bits = {} bytes", map.storage_slots(), map.bits_per_slot(), map.storage_bytes())
        })),
    );
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The array sections, in a fixed order; each is one small function so sections can be added.
fn describe_array(array: ArrayShape<'_>, d: &mut Description) {
    element_type(array, d);
    dimensions(array, d);
    layout_order(array, d);
    let layout = array.layout();
    tiles(layout, d);
    legacy_padding(layout, d);
    element_size(array, layout, d);
    let tail = layout.map_or(1, |l| l.tail_padding_alignment_in_elements());
    d.push("tail padding", format!("{tail} element{}", plural(usize::try_from(tail).unwrap_or(0))));
    memory_space(layout, d);
    extras(layout, d);
}

fn element_type(array: ArrayShape<'_>, d: &mut Description) {
    let t = array.element_type();
    let bits = t.bit_width().unwrap_or(0);
    d.push("element type", format!("{t}, {bits} bit{}", plural(bits as usize)));
}

/// `1 (x)`: a dimension number with its letter, if the rank has letters.
fn dimension_name(dim: Dim, rank: usize) -> String {
    match i64::try_from(dim.index()).ok().and_then(|d| crate::util::dimension_letter(rank, d)) {
        Some(letter) => format!("{dim} ({letter})"),
        None => dim.to_string(),
    }
}

fn dimensions(array: ArrayShape<'_>, d: &mut Description) {
    let rank = array.rank();
    if rank == 0 {
        d.push("dimensions", "none (a scalar)");
    }
    for (i, &size) in array.dimensions().iter().enumerate() {
        let dim = Dim(i);
        let value = match (array.is_dynamic_dimension(dim), size) {
            (true, i64::MIN) => "? (unbounded dynamic)".to_owned(),
            (true, bound) => format!("<={bound} (dynamic, at most {bound})"),
            (false, size) => size.to_string(),
        };
        d.push(format!("dimension {}", dimension_name(dim, rank)), value);
    }
}

fn layout_order(array: ArrayShape<'_>, d: &mut Description) {
    let order = array.minor_to_major();
    let mut text = String::from("major to minor: ");
    for (k, dim) in order.iter().rev().enumerate() {
        if k > 0 {
            text.push_str(", ");
        }
        text.push_str(&dimension_name(dim, array.rank()));
    }
    if order.is_empty() {
        text.push_str("(no dimensions)");
    }
    if array.layout().is_none() && order.is_default() {
        text.push_str(" (no layout: the default)");
    }
    d.push("layout", text);
}

fn tiles(layout: Option<Layout<'_>>, d: &mut Description) {
    let mut text = String::new();
    for (j, tile) in layout.iter().flat_map(Layout::tiles).enumerate() {
        if j > 0 {
            text.push_str(" then ");
        }
        // Writing to a String cannot fail.
        let _ = write!(text, "{tile}");
    }
    d.push("tiles", if text.is_empty() { "none".to_owned() } else { text });
}

fn legacy_padding(layout: Option<Layout<'_>>, d: &mut Description) {
    let Some(layout) = layout else { return };
    let Some(padded) = layout.padded_dimensions() else { return };
    let extents = padded.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let raw = layout.padding_value();
    let value = PaddingValue::try_from(raw).map_or_else(|_| format!("unknown ({raw})"), |v| v.as_str_name().to_owned());
    d.push("legacy padding", format!("padded to [{extents}], padding value {value}"));
}

fn element_size(array: ArrayShape<'_>, layout: Option<Layout<'_>>, d: &mut Description) {
    let own = array.element_type().bit_width().unwrap_or(0);
    let text = match layout.map_or(0, |l| l.element_size_in_bits()) {
        0 => format!("{own} bits (the element type's own)"),
        bits => format!("{bits} bits (from the layout)"),
    };
    d.push("element size", text);
}

fn memory_space(layout: Option<Layout<'_>>, d: &mut Description) {
    let space = layout.map_or(0, |l| l.memory_space());
    // The conventions of XLA's "Shapes and layout" document (https://openxla.org/xla/shapes).
    let meaning = match space {
        0 => "device memory",
        1 => "VMEM on TPU",
        5 => "host memory",
        _ => "device-specific",
    };
    d.push("memory space", format!("{space} ({meaning})"));
}

/// Split configs and the dynamic-shape metadata prefix, only when set.
fn extras(layout: Option<Layout<'_>>, d: &mut Description) {
    let Some(layout) = layout else { return };
    for split in layout.split_configs() {
        let indices = split.split_indices.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        d.push("split config", format!("physical dimension {} split at [{indices}]", split.dimension));
    }
    let prefix = layout.dynamic_shape_metadata_prefix_bytes();
    if prefix != 0 {
        d.push("metadata prefix", format!("{prefix} bytes of dynamic-shape metadata"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_shape;

    #[test]
    fn letters_follow_the_seeds() {
        // vectors.md S4.
        let names = |rank: usize| (0..rank).map(|d| dimension_name(Dim(d), rank)).collect::<Vec<_>>();
        assert_eq!(names(1), ["0"]);
        assert_eq!(names(2), ["0 (y)", "1 (x)"]);
        assert_eq!(names(3), ["0 (z)", "1 (y)", "2 (x)"]);
        assert_eq!(names(4), ["0 (p)", "1 (z)", "2 (y)", "3 (x)"]);
        assert_eq!(names(5), ["0", "1", "2", "3", "4"]);
    }

    #[test]
    fn tiled_dynamic_shape() {
        let s = parse_shape("bf16[?,3,<=4]{1,2,0:T(16,256)(2,1)E(16)S(1)SC(2:2)M(8)}").unwrap();
        let text = describe(s.view()).to_string();
        for line in [
            "element type:    bf16, 16 bits",
            "dimension 0 (z): ? (unbounded dynamic)",
            "dimension 2 (x): <=4 (dynamic, at most 4)",
            "layout:          major to minor: 0 (z), 2 (x), 1 (y)",
            "tiles:           (16,256) then (2,1)",
            "element size:    16 bits (from the layout)",
            "memory space:    1 (VMEM on TPU)",
            "split config:    physical dimension 2 split at [2]",
            "metadata prefix: 8 bytes of dynamic-shape metadata",
        ] {
            assert!(text.contains(line), "{line:?} missing in\n{text}");
        }
    }

    #[test]
    fn other_kinds() {
        let tuple = parse_shape("(f32[], b(s32[3]), token[])").unwrap();
        let text = describe(tuple.view()).to_string();
        assert!(text.contains("kind:            tuple of 3 elements"), "{text}");
        assert!(text.contains("element 1:       b(s32[3]{0})"), "{text}");
        let buffer = parse_shape("b(s4[8]{0:E(4)})").unwrap();
        let text = describe(buffer.view()).to_string();
        assert!(text.contains("buffer of an array") && text.contains("4 bits (from the layout)"), "{text}");
        let scalar = parse_shape("f32[]").unwrap();
        assert!(describe(scalar.view()).to_string().contains("none (a scalar)"));
    }
}
