//! Semantic equality (spec `linearization.md` §6.4): XLA's `Shape::Equal` and `Layout::Equal`
//! functors as the builders [`ShapeEqual`] and [`LayoutEqual`] (whose docs give the exact rules),
//! and the `ShapeUtil` shorthands ([`equal`], [`compatible`], …).

use crate::depth::Depth;
use crate::layout::Layout;
use crate::primitive::PrimitiveType;
use crate::proto::{LayoutProto, ShapeProto};
use crate::shape::{ArrayShape, Shape};

/// XLA's `Layout::Equal` functor: which layout fields to compare.
///
/// By default it compares `minor_to_major`, tiles, tail padding alignment (0 ≡ 1), index and
/// pointer types, element size, memory space, split configs, physical shape, and — a crate
/// extension, as the 2018 XLA `Equal` did — the legacy `padded_dimensions` and `padding_value`
/// (raw values) and the legacy `format` (0 ≡ DENSE). It never compares
/// `dynamic_shape_metadata_prefix_bytes` (as XLA's `Layout::operator==`). The sparse-era lists
/// (`dim_level_types`, `dim_unique`, `dim_ordered`, `max_sparse_elements`) are compared only when
/// one side is sparse, as XLA did; validated layouts never are.
///
/// This differs from `==` on the protos, which compares every field as stored. Raw layouts can be
/// compared too ([`LayoutEqual::equal_protos`]), so legacy or sparse protos that do not validate
/// still compare; raw physical shapes nested deeper than [`MAX_DEPTH`](crate::MAX_DEPTH) levels compare unequal.
///
/// ```
/// use xla_shape::{make::LayoutSpec, util::LayoutEqual};
/// let tiled = LayoutSpec::new(&[0, 1, 2]).tiles(&[&[42, 44]]).build().unwrap();
/// let plain = LayoutSpec::new(&[0, 1, 2]).build().unwrap();
/// assert!(!LayoutEqual::new().equal(tiled.view(), plain.view()));
/// assert!(LayoutEqual::new().ignore_tiles().equal(tiled.view(), plain.view()));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[allow(clippy::struct_excessive_bools)]
pub struct LayoutEqual {
    ignore_tiles: bool,
    ignore_tail_padding_alignment_in_elements: bool,
    ignore_index_primitive_type: bool,
    ignore_pointer_primitive_type: bool,
    ignore_memory_space: bool,
    ignore_split_configs: bool,
    ignore_physical_shape: bool,
    ignore_element_size: bool,
    ignore_legacy_padding: bool,
}

impl LayoutEqual {
    /// Compare every field.
    pub const fn new() -> Self {
        Self {
            ignore_tiles: false,
            ignore_tail_padding_alignment_in_elements: false,
            ignore_index_primitive_type: false,
            ignore_pointer_primitive_type: false,
            ignore_memory_space: false,
            ignore_split_configs: false,
            ignore_physical_shape: false,
            ignore_element_size: false,
            ignore_legacy_padding: false,
        }
    }

    /// `IgnoreTiles`.
    #[must_use]
    pub const fn ignore_tiles(mut self) -> Self {
        self.ignore_tiles = true;
        self
    }

    /// `IgnoreTailPaddingAlignmentInElements`.
    #[must_use]
    pub const fn ignore_tail_padding_alignment_in_elements(mut self) -> Self {
        self.ignore_tail_padding_alignment_in_elements = true;
        self
    }

    /// `IgnoreIndexPrimitiveType`.
    #[must_use]
    pub const fn ignore_index_primitive_type(mut self) -> Self {
        self.ignore_index_primitive_type = true;
        self
    }

    /// `IgnorePointerPrimitiveType`.
    #[must_use]
    pub const fn ignore_pointer_primitive_type(mut self) -> Self {
        self.ignore_pointer_primitive_type = true;
        self
    }

    /// `IgnoreMemorySpace`.
    #[must_use]
    pub const fn ignore_memory_space(mut self) -> Self {
        self.ignore_memory_space = true;
        self
    }

    /// `IgnoreSplitConfigs`.
    #[must_use]
    pub const fn ignore_split_configs(mut self) -> Self {
        self.ignore_split_configs = true;
        self
    }

    /// `IgnorePhysicalShape`.
    #[must_use]
    pub const fn ignore_physical_shape(mut self) -> Self {
        self.ignore_physical_shape = true;
        self
    }

    /// `IgnoreElementSize`.
    #[must_use]
    pub const fn ignore_element_size(mut self) -> Self {
        self.ignore_element_size = true;
        self
    }

    /// Ignore the legacy `padded_dimensions` and `padding_value` (a crate extension; XLA HEAD has
    /// no such fields).
    #[must_use]
    pub const fn ignore_legacy_padding(mut self) -> Self {
        self.ignore_legacy_padding = true;
        self
    }

    /// `MinorToMajorOnly`: ignore everything but `minor_to_major` (and the legacy `format`).
    #[must_use]
    pub const fn minor_to_major_only(self) -> Self {
        self.ignore_tiles()
            .ignore_tail_padding_alignment_in_elements()
            .ignore_index_primitive_type()
            .ignore_pointer_primitive_type()
            .ignore_memory_space()
            .ignore_split_configs()
            .ignore_physical_shape()
            .ignore_element_size()
            .ignore_legacy_padding()
    }

    /// Whether two validated layouts are equal under these options.
    pub fn equal(&self, lhs: Layout<'_>, rhs: Layout<'_>) -> bool {
        self.equal_protos(lhs.proto(), rhs.proto())
    }

    /// Whether two raw layouts are equal under these options (no validation needed).
    ///
    /// ```
    /// use xla_shape::{proto::LayoutProto, util::LayoutEqual};
    /// // vectors.md group 50: legacy layouts differing only in padding are not equal.
    /// let a = LayoutProto { minor_to_major: vec![1, 0], padded_dimensions: vec![10], ..Default::default() };
    /// let b = LayoutProto { padded_dimensions: vec![11], ..a.clone() };
    /// assert!(!LayoutEqual::new().equal_protos(&a, &b));
    /// assert!(LayoutEqual::new().ignore_legacy_padding().equal_protos(&a, &b));
    /// ```
    pub fn equal_protos(&self, lhs: &LayoutProto, rhs: &LayoutProto) -> bool {
        self.layouts_at(lhs, rhs, Depth::ROOT)
    }

    /// `depth` is the nesting level of the shape that holds these layouts.
    fn layouts_at(&self, l: &LayoutProto, r: &LayoutProto, depth: Depth) -> bool {
        let normalized = |alignment: i64| if alignment == 0 { 1 } else { alignment };
        let format = |f: i32| if f == 0 { crate::proto::Format::Dense as i32 } else { f };
        l.minor_to_major == r.minor_to_major
            && (self.ignore_tiles || l.tiles == r.tiles)
            && (self.ignore_tail_padding_alignment_in_elements
                || normalized(l.tail_padding_alignment_in_elements) == normalized(r.tail_padding_alignment_in_elements))
            && (self.ignore_index_primitive_type || l.index_primitive_type == r.index_primitive_type)
            && (self.ignore_pointer_primitive_type || l.pointer_primitive_type == r.pointer_primitive_type)
            && (self.ignore_element_size || l.element_size_in_bits == r.element_size_in_bits)
            && (self.ignore_memory_space || l.memory_space == r.memory_space)
            && (self.ignore_split_configs || l.split_configs == r.split_configs)
            && (self.ignore_physical_shape
                || match (&l.physical_shape, &r.physical_shape) {
                    (None, None) => true,
                    (Some(a), Some(b)) => ShapeEqual::new().shapes_at(a, b, depth.enter()),
                    _ => false,
                })
            && (self.ignore_legacy_padding
                || (l.padded_dimensions == r.padded_dimensions && l.padding_value == r.padding_value))
            && format(l.format) == format(r.format)
            && (!(is_sparse(l) || is_sparse(r))
                || (l.dim_level_types == r.dim_level_types
                    && l.dim_unique == r.dim_unique
                    && l.dim_ordered == r.dim_ordered
                    && l.max_sparse_elements == r.max_sparse_elements))
    }
}

fn is_sparse(layout: &LayoutProto) -> bool {
    layout.dim_level_types.iter().any(|&t| t != 0)
        || layout.dim_unique.iter().any(|&u| !u)
        || layout.dim_ordered.iter().any(|&o| !o)
        || layout.max_sparse_elements != 0
        || layout.format == crate::proto::Format::Sparse as i32
}

/// XLA's `Shape::Equal` functor: which parts of two shapes to compare. The default is
/// `ShapeUtil::Equal`: tuples element by element; buffers only with buffers; tokens and opaque
/// shapes by type; arrays by element type, dimensions, dynamic flags and (if either has one)
/// layouts.
///
/// An empty `is_dynamic_dimension` list equals all false. Layouts compare with [`LayoutEqual`].
///
/// **XLA parity:** a buffer's array is always compared with the default (exact) options, whatever
/// this functor ignores, because XLA compares them with `operator==`.
///
/// [`ShapeEqual::equal_protos`] compares raw protos (malformed ones compare without panicking;
/// nesting deeper than [`MAX_DEPTH`](crate::MAX_DEPTH) levels compares unequal).
///
/// ```
/// use xla_shape::{make, util::ShapeEqual, PrimitiveType};
/// let a = make::make_shape_with_dense_layout(PrimitiveType::F32, &[3, 2], &[0, 1]).unwrap();
/// let b = make::make_shape_with_dense_layout(PrimitiveType::F32, &[3, 2], &[1, 0]).unwrap();
/// assert!(!ShapeEqual::new().equal(a.view(), b.view()));
/// assert!(ShapeEqual::new().ignore_layout().equal(a.view(), b.view()));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[allow(clippy::struct_excessive_bools)]
pub struct ShapeEqual {
    ignore_layout: bool,
    ignore_dynamic_dimension: bool,
    ignore_element_type: bool,
    ignore_fp_precision: bool,
    ignore_dimensions: bool,
    ignore_buffer: bool,
    layout: LayoutEqual,
}

impl ShapeEqual {
    /// Exact: `ShapeUtil::Equal`.
    pub const fn new() -> Self {
        Self {
            ignore_layout: false,
            ignore_dynamic_dimension: false,
            ignore_element_type: false,
            ignore_fp_precision: false,
            ignore_dimensions: false,
            ignore_buffer: false,
            layout: LayoutEqual::new(),
        }
    }

    /// `IgnoreLayout`.
    #[must_use]
    pub const fn ignore_layout(mut self) -> Self {
        self.ignore_layout = true;
        self
    }

    /// `IgnoreDynamicDimension`: the dynamic flags are not compared, and an unbounded (`?`)
    /// dimension on either side matches any size.
    #[must_use]
    pub const fn ignore_dynamic_dimension(mut self) -> Self {
        self.ignore_dynamic_dimension = true;
        self
    }

    /// `IgnoreElementType`.
    #[must_use]
    pub const fn ignore_element_type(mut self) -> Self {
        self.ignore_element_type = true;
        self
    }

    /// `IgnoreFpPrecision`: any two floating-point types match.
    #[must_use]
    pub const fn ignore_fp_precision(mut self) -> Self {
        self.ignore_fp_precision = true;
        self
    }

    /// `IgnoreDimensions`: only the ranks are compared.
    #[must_use]
    pub const fn ignore_dimensions(mut self) -> Self {
        self.ignore_dimensions = true;
        self
    }

    /// `IgnoreBuffer`: a buffer matches its array (compared exactly).
    #[must_use]
    pub const fn ignore_buffer(mut self) -> Self {
        self.ignore_buffer = true;
        self
    }

    /// `IgnoreTilesInLayout`.
    #[must_use]
    pub const fn ignore_tiles_in_layout(mut self) -> Self {
        self.layout = self.layout.ignore_tiles();
        self
    }

    /// `IgnoreElementSizeInLayout`.
    #[must_use]
    pub const fn ignore_element_size_in_layout(mut self) -> Self {
        self.layout = self.layout.ignore_element_size();
        self
    }

    /// `IgnoreMemorySpaceInLayout`.
    #[must_use]
    pub const fn ignore_memory_space_in_layout(mut self) -> Self {
        self.layout = self.layout.ignore_memory_space();
        self
    }

    /// `IgnoreTailPaddingAlignmentInElementsInLayout`.
    #[must_use]
    pub const fn ignore_tail_padding_alignment_in_elements_in_layout(mut self) -> Self {
        self.layout = self.layout.ignore_tail_padding_alignment_in_elements();
        self
    }

    /// `IgnoreSplitConfigInLayout`.
    #[must_use]
    pub const fn ignore_split_config_in_layout(mut self) -> Self {
        self.layout = self.layout.ignore_split_configs();
        self
    }

    /// `MinorToMajorOnlyInLayout`.
    #[must_use]
    pub const fn minor_to_major_only_in_layout(mut self) -> Self {
        self.layout = self.layout.minor_to_major_only();
        self
    }

    /// Compare layouts with these options (replaces every layout-level option set so far).
    #[must_use]
    pub const fn layout_equal(mut self, layout: LayoutEqual) -> Self {
        self.layout = layout;
        self
    }

    /// Whether two validated shapes are equal under these options.
    pub fn equal(&self, lhs: Shape<'_>, rhs: Shape<'_>) -> bool {
        self.shapes_at(lhs.proto(), rhs.proto(), Depth::ROOT)
    }

    /// Whether two raw shapes are equal under these options (no validation needed; malformed
    /// protos compare without panicking).
    pub fn equal_protos(&self, lhs: &ShapeProto, rhs: &ShapeProto) -> bool {
        self.shapes_at(lhs, rhs, Depth::ROOT)
    }

    fn shapes_at(&self, l: &ShapeProto, r: &ShapeProto, depth: Depth) -> bool {
        const TUPLE: i32 = PrimitiveType::TUPLE.as_i32();
        const BUFFER: i32 = PrimitiveType::BUFFER.as_i32();
        if depth.exceeded() {
            return false;
        }
        if l.element_type == TUPLE {
            return r.element_type == TUPLE
                && l.tuple_shapes.len() == r.tuple_shapes.len()
                && l.tuple_shapes.iter().zip(&r.tuple_shapes).all(|(a, b)| self.shapes_at(a, b, depth.enter()));
        }
        if l.element_type == BUFFER || r.element_type == BUFFER {
            if !self.ignore_buffer && l.element_type != r.element_type {
                return false;
            }
            return match (buffer_array(l), buffer_array(r)) {
                (Some(a), Some(b)) => Self::new().shapes_at(a, b, depth.enter()),
                _ => false,
            };
        }
        if !is_array(l.element_type) {
            return l.element_type == r.element_type;
        }
        if !is_array(r.element_type) {
            return false;
        }
        self.arrays_equal(l, r, depth)
    }

    fn arrays_equal(&self, l: &ShapeProto, r: &ShapeProto, depth: Depth) -> bool {
        let same_type = self.ignore_element_type
            || l.element_type == r.element_type
            || (self.ignore_fp_precision && is_floating(l.element_type) && is_floating(r.element_type));
        let rank = l.dimensions.len();
        let same_dimensions = rank == r.dimensions.len()
            && (self.ignore_dimensions
                || l.dimensions
                    .iter()
                    .zip(&r.dimensions)
                    .all(|(&a, &b)| a == b || (self.ignore_dynamic_dimension && (a == i64::MIN || b == i64::MIN))));
        let same_layout = self.ignore_layout
            || match (&l.layout, &r.layout) {
                (None, None) => true,
                (Some(a), Some(b)) => self.layout.layouts_at(a, b, depth),
                _ => false,
            };
        let flag = |s: &ShapeProto, i: usize| s.is_dynamic_dimension.get(i).copied().unwrap_or(false);
        let same_flags = self.ignore_dynamic_dimension || (0..rank).all(|i| flag(l, i) == flag(r, i));
        same_type && same_dimensions && same_layout && same_flags
    }
}

/// The array of a buffer (`None` for a malformed one), or the shape itself.
fn buffer_array(shape: &ShapeProto) -> Option<&ShapeProto> {
    if shape.element_type == PrimitiveType::BUFFER.as_i32() { shape.tuple_shapes.first() } else { Some(shape) }
}

fn is_array(element_type: i32) -> bool {
    PrimitiveType::from_i32(element_type).is_some_and(PrimitiveType::is_array)
}

fn is_floating(element_type: i32) -> bool {
    PrimitiveType::from_i32(element_type).is_some_and(PrimitiveType::is_floating_point)
}

/// `ShapeUtil::Equal`: exact semantic equality ([`ShapeEqual::new`]).
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let a = make::make_shape_dynamic(PrimitiveType::F32, &[4, 3], &[true, false]).unwrap();
/// let b = make::make_shape(PrimitiveType::F32, &[4, 3]).unwrap();
/// assert!(util::equal(a.view(), a.view()));
/// assert!(!util::equal(a.view(), b.view()));
/// assert!(util::compatible(a.view(), b.view()));
/// ```
#[doc(alias = "Equal")]
pub fn equal(lhs: Shape<'_>, rhs: Shape<'_>) -> bool {
    ShapeEqual::new().equal(lhs, rhs)
}

/// `ShapeUtil::EqualIgnoringElementType`.
#[doc(alias = "EqualIgnoringElementType")]
pub fn equal_ignoring_element_type(lhs: Shape<'_>, rhs: Shape<'_>) -> bool {
    ShapeEqual::new().ignore_element_type().equal(lhs, rhs)
}

/// `ShapeUtil::EqualIgnoringFpPrecision`.
#[doc(alias = "EqualIgnoringFpPrecision")]
pub fn equal_ignoring_fp_precision(lhs: Shape<'_>, rhs: Shape<'_>) -> bool {
    ShapeEqual::new().ignore_fp_precision().equal(lhs, rhs)
}

/// `ShapeUtil::Compatible`: equal while ignoring layouts and dynamic dimensions.
#[doc(alias = "Compatible")]
pub fn compatible(lhs: Shape<'_>, rhs: Shape<'_>) -> bool {
    ShapeEqual::new().ignore_dynamic_dimension().ignore_layout().equal(lhs, rhs)
}

/// `ShapeUtil::CompatibleIgnoringElementType`.
#[doc(alias = "CompatibleIgnoringElementType")]
pub fn compatible_ignoring_element_type(lhs: Shape<'_>, rhs: Shape<'_>) -> bool {
    ShapeEqual::new().ignore_dynamic_dimension().ignore_element_type().ignore_layout().equal(lhs, rhs)
}

/// `ShapeUtil::CompatibleIgnoringFpPrecision`.
#[doc(alias = "CompatibleIgnoringFpPrecision")]
pub fn compatible_ignoring_fp_precision(lhs: Shape<'_>, rhs: Shape<'_>) -> bool {
    ShapeEqual::new().ignore_dynamic_dimension().ignore_fp_precision().ignore_layout().equal(lhs, rhs)
}

/// `LayoutUtil::Equal`: [`LayoutEqual::new`] on two validated layouts.
#[doc(alias = "LayoutUtil::Equal")]
pub fn layout_equal(lhs: Layout<'_>, rhs: Layout<'_>) -> bool {
    LayoutEqual::new().equal(lhs, rhs)
}

/// `ShapeUtil::SameDimensions`: the same rank and the same sizes, where an unbounded (`?`)
/// dimension on either side matches any size. Dynamic flags are not compared.
#[doc(alias = "SameDimensions")]
pub fn same_dimensions(lhs: ArrayShape<'_>, rhs: ArrayShape<'_>) -> bool {
    same_rank(lhs, rhs)
        && lhs.dimensions().iter().zip(rhs.dimensions()).all(|(&a, &b)| a == b || a == i64::MIN || b == i64::MIN)
}

/// `ShapeUtil::SameRank`.
#[doc(alias = "SameRank")]
pub fn same_rank(lhs: ArrayShape<'_>, rhs: ArrayShape<'_>) -> bool {
    lhs.rank() == rhs.rank()
}

/// `ShapeUtil::SameElementType`: the same element type (of any kinds of shape).
#[doc(alias = "SameElementType")]
pub fn same_element_type(lhs: Shape<'_>, rhs: Shape<'_>) -> bool {
    lhs.element_type() == rhs.element_type()
}

/// `ShapeUtil::SameElementTypeIgnoringFpPrecision`: the same element type, or two floating-point
/// types.
#[doc(alias = "SameElementTypeIgnoringFpPrecision")]
pub fn same_element_type_ignoring_fp_precision(lhs: Shape<'_>, rhs: Shape<'_>) -> bool {
    same_element_type(lhs, rhs) || (lhs.element_type().is_floating_point() && rhs.element_type().is_floating_point())
}
