//! Validation of raw protos, in XLA's check order (spec `validation.md` §1).
//!
//! Two passes over the whole tree, as XLA runs them: pass 1 checks structure, element types and
//! dimensions (`Shape::FromProto` + `ValidateNonLayoutProperties`); pass 2 checks every array's
//! layout (`LayoutUtil::ValidateLayoutInShape`, the sparse-era and the legacy rules). The first
//! error wins. Success hands out a view that borrows the proto; nothing downstream checks again.
//!
//! Field paths are built only when an error is reported: while descending, the path is a chain of
//! borrowed segments on the stack, so a valid shape costs no allocation for them.

use crate::MAX_DEPTH;
use crate::error::{Error, FieldPath, LayoutProblem, Result, StructureProblem};
use crate::primitive::PrimitiveType;
use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto};

/// Whether an array shape without a layout is acceptable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayoutMode {
    /// Every array must have a layout (`ShapeUtil::ValidateShape`).
    Strict,
    /// Arrays may lack a layout (`ShapeUtil::ValidateShapeWithOptionalLayout`); computations then
    /// use the default descending layout.
    Optional,
}

/// A field path under construction: borrowed segments, materialized only for an error.
#[derive(Clone, Copy)]
pub(crate) enum Path<'p> {
    Root,
    Field(&'p Path<'p>, &'static str),
    Index(&'p Path<'p>, &'static str, usize),
}

impl<'p> Path<'p> {
    pub(crate) fn field(&'p self, name: &'static str) -> Path<'p> {
        Path::Field(self, name)
    }

    pub(crate) fn index(&'p self, name: &'static str, index: usize) -> Path<'p> {
        Path::Index(self, name, index)
    }

    /// The path of element `k` of the repeated field this path names.
    pub(crate) fn element(self, k: usize) -> FieldPath {
        self.to_field_path().index(k)
    }

    pub(crate) fn to_field_path(self) -> FieldPath {
        match self {
            Path::Root => FieldPath::root(),
            Path::Field(parent, name) => parent.to_field_path().field(name),
            Path::Index(parent, name, index) => parent.to_field_path().field(name).index(index),
        }
    }
}

/// Validates a shape in the given mode.
///
/// ```
/// use xla_shape::{proto::ShapeProto, validate::{validate_shape, LayoutMode}};
/// let p = ShapeProto { element_type: 11, dimensions: vec![2, 3], ..Default::default() };
/// assert!(validate_shape(&p, LayoutMode::Optional).is_ok());
/// let err = validate_shape(&p, LayoutMode::Strict).unwrap_err();
/// assert_eq!(err.to_string(), "shape f32[2,3] does not have a layout (at <root>)");
/// ```
///
/// # Errors
///
/// The first failure in the order of the specification: [`Error::TooDeep`],
/// [`Error::InvalidElementType`], [`Error::MalformedStructure`], [`Error::InvalidDimension`],
/// [`Error::Overflow`] (pass 1), then [`Error::MissingLayout`], [`Error::InvalidLayout`],
/// [`Error::SparseUnsupported`] (pass 2).
pub fn validate_shape(shape: &ShapeProto, mode: LayoutMode) -> Result<()> {
    validate_at(shape, mode, Path::Root)
}

pub(crate) fn validate_at(shape: &ShapeProto, mode: LayoutMode, path: Path<'_>) -> Result<()> {
    check_structure(shape, path, 1)?;
    check_layouts(shape, mode, path)
}

/// Validates the elements of the tuple at `path` that `select` picks, as validating the whole
/// tuple would (pass 1 over all of them, then pass 2). The text parser uses it to validate each
/// tuple once, when it closes, without visiting nested tuples again.
pub(crate) fn validate_elements(
    elements: &[ShapeProto],
    mode: LayoutMode,
    path: Path<'_>,
    select: impl Fn(&ShapeProto) -> bool,
) -> Result<()> {
    for (i, element) in elements.iter().enumerate().filter(|(_, e)| select(e)) {
        check_structure(element, path.index("tuple_shapes", i), 2)?;
    }
    for (i, element) in elements.iter().enumerate().filter(|(_, e)| select(e)) {
        check_layouts(element, mode, path.index("tuple_shapes", i))?;
    }
    Ok(())
}

/// Validates a program shape: the name count (V-20), then each parameter, then the result.
///
/// # Errors
///
/// As [`validate_shape`], with paths under `parameters[i]` and `result`. A missing result is
/// [`Error::InvalidElementType`] at `result`.
pub fn validate_program_shape(program: &ProgramShapeProto, mode: LayoutMode) -> Result<()> {
    if program.parameter_names.len() != program.parameters.len() {
        return Err(Error::MalformedStructure {
            path: FieldPath::root().field("parameter_names"),
            problem: StructureProblem::ParameterNameCount {
                parameters: program.parameters.len(),
                names: program.parameter_names.len(),
            },
        });
    }
    for (i, parameter) in program.parameters.iter().enumerate() {
        validate_at(parameter, mode, Path::Root.index("parameters", i))?;
    }
    match &program.result {
        Some(result) => validate_at(result, mode, Path::Root.field("result")),
        None => Err(Error::InvalidElementType { path: FieldPath::root().field("result"), value: 0 }),
    }
}

/// Validates `layout` as the layout of the array `shape` (`LayoutUtil::ValidateLayoutForShape`).
///
/// # Errors
///
/// [`Error::NotAnArray`] if `shape` is not an array; otherwise the pass-2 errors of
/// [`validate_shape`] with paths under `layout`.
pub fn validate_layout_for_shape(layout: &LayoutProto, shape: &ShapeProto) -> Result<()> {
    let element_type = PrimitiveType::from_i32(shape.element_type)
        .ok_or(Error::InvalidElementType { path: FieldPath::root(), value: shape.element_type })?;
    if !element_type.is_array() {
        return Err(Error::NotAnArray { operation: "a layout", kind: kind_name(element_type) });
    }
    check_array_structure(shape, element_type, Path::Root)?;
    check_layout(layout, Some((&shape.dimensions, element_type)), Path::Root.field("layout"))
}

/// Validates a layout on its own, without a shape (spec `validation.md` §1.5): everything that
/// does not need to know the rank. The remaining checks run when the layout meets a shape.
///
/// ```
/// use xla_shape::{proto::LayoutProto, validate::validate_layout};
/// assert!(validate_layout(&LayoutProto { minor_to_major: vec![1, 0], ..Default::default() }).is_ok());
/// assert!(validate_layout(&LayoutProto { minor_to_major: vec![1, 1], ..Default::default() }).is_err());
/// ```
///
/// # Errors
///
/// [`Error::InvalidLayout`] or [`Error::SparseUnsupported`].
pub fn validate_layout(layout: &LayoutProto) -> Result<()> {
    check_layout(layout, None, Path::Root)
}

pub(crate) fn kind_name(element_type: PrimitiveType) -> &'static str {
    match element_type {
        PrimitiveType::TUPLE => "a tuple",
        PrimitiveType::TOKEN => "a token",
        PrimitiveType::OPAQUE_TYPE => "opaque",
        PrimitiveType::BUFFER => "a buffer",
        _ => "an array",
    }
}

fn malformed(path: Path<'_>, problem: StructureProblem) -> Error {
    Error::MalformedStructure { path: path.to_field_path(), problem }
}

/// Pass 1: structure, element types, dimensions; pre-order over the whole tree.
fn check_structure(shape: &ShapeProto, path: Path<'_>, level: usize) -> Result<()> {
    if level > MAX_DEPTH {
        return Err(Error::TooDeep { path: path.to_field_path(), limit: MAX_DEPTH });
    }
    let element_type = PrimitiveType::from_i32(shape.element_type)
        .ok_or_else(|| Error::InvalidElementType { path: path.to_field_path(), value: shape.element_type })?;
    let has_dimensions = !shape.dimensions.is_empty() || !shape.is_dynamic_dimension.is_empty();
    match element_type {
        PrimitiveType::TUPLE => {
            if has_dimensions {
                return Err(malformed(
                    path.field("dimensions"),
                    StructureProblem::CannotHaveDimensions { kind: "tuple" },
                ));
            }
            if shape.layout.is_some() {
                return Err(malformed(path.field("layout"), StructureProblem::CannotHaveLayout { kind: "tuple" }));
            }
            for (i, element) in shape.tuple_shapes.iter().enumerate() {
                check_structure(element, path.index("tuple_shapes", i), level + 1)?;
            }
            Ok(())
        }
        PrimitiveType::BUFFER => {
            if has_dimensions || shape.layout.is_some() {
                return Err(malformed(path, StructureProblem::BufferHasOwnFields));
            }
            let [inner] = shape.tuple_shapes.as_slice() else {
                return Err(malformed(
                    path.field("tuple_shapes"),
                    StructureProblem::BufferArity { count: shape.tuple_shapes.len() },
                ));
            };
            let inner_path = path.index("tuple_shapes", 0);
            if level + 1 > MAX_DEPTH {
                return Err(Error::TooDeep { path: inner_path.to_field_path(), limit: MAX_DEPTH });
            }
            match PrimitiveType::from_i32(inner.element_type) {
                Some(t) if t.is_array() => check_array_structure(inner, t, inner_path),
                _ => Err(malformed(inner_path, StructureProblem::BufferNotArray { element_type: inner.element_type })),
            }
        }
        PrimitiveType::TOKEN | PrimitiveType::OPAQUE_TYPE => {
            let kind = if element_type == PrimitiveType::TOKEN { "token" } else { "opaque" };
            if has_dimensions {
                return Err(malformed(path.field("dimensions"), StructureProblem::CannotHaveDimensions { kind }));
            }
            if !shape.tuple_shapes.is_empty() {
                return Err(malformed(path.field("tuple_shapes"), StructureProblem::NonTupleHasTupleShapes));
            }
            if shape.layout.is_some() {
                return Err(malformed(path.field("layout"), StructureProblem::CannotHaveLayout { kind }));
            }
            Ok(())
        }
        _ => check_array_structure(shape, element_type, path),
    }
}

/// V-6: an array's own fields, dimensions, element count and byte size.
fn check_array_structure(shape: &ShapeProto, element_type: PrimitiveType, path: Path<'_>) -> Result<()> {
    if !shape.tuple_shapes.is_empty() {
        return Err(malformed(path.field("tuple_shapes"), StructureProblem::NonTupleHasTupleShapes));
    }
    let dynamic = &shape.is_dynamic_dimension;
    if !dynamic.is_empty() && dynamic.len() != shape.dimensions.len() {
        return Err(malformed(
            path.field("is_dynamic_dimension"),
            StructureProblem::DynamicCountMismatch { dynamic: dynamic.len(), dimensions: shape.dimensions.len() },
        ));
    }
    let mut count: i64 = 1;
    let mut overflow = false;
    for (i, &size) in shape.dimensions.iter().enumerate() {
        let is_dynamic = dynamic.get(i).copied().unwrap_or(false);
        if size == i64::MIN && is_dynamic {
            continue;
        }
        if size < 0 {
            return Err(Error::InvalidDimension { path: path.index("dimensions", i).to_field_path(), index: i, size });
        }
        // Sticky, as in XLA: a later zero does not undo an overflow.
        match count.checked_mul(size) {
            Some(c) if !overflow => count = c,
            _ => overflow = true,
        }
    }
    if overflow {
        return Err(Error::Overflow { path: path.field("dimensions").to_field_path(), what: "dimensions" });
    }
    byte_size(count, element_type, path)?;
    Ok(())
}

/// Element count × byte width, checked (sub-byte types count as one byte here, as in XLA).
fn byte_size(count: i64, element_type: PrimitiveType, path: Path<'_>) -> Result<i64> {
    let width = i64::from(element_type.byte_width().unwrap_or(0));
    count.checked_mul(width).ok_or_else(|| Error::Overflow { path: path.to_field_path(), what: "shape size" })
}

/// Pass 2: the layout of every array node, pre-order.
fn check_layouts(shape: &ShapeProto, mode: LayoutMode, path: Path<'_>) -> Result<()> {
    // Pass 1 succeeded, so the element type is known and the structure is sound.
    let Some(element_type) = PrimitiveType::from_i32(shape.element_type) else { return Ok(()) };
    match element_type {
        PrimitiveType::TUPLE => {
            for (i, element) in shape.tuple_shapes.iter().enumerate() {
                check_layouts(element, mode, path.index("tuple_shapes", i))?;
            }
            Ok(())
        }
        PrimitiveType::BUFFER => match shape.tuple_shapes.first() {
            Some(inner) => check_layouts(inner, mode, path.index("tuple_shapes", 0)),
            None => Ok(()),
        },
        t if t.is_array() => match &shape.layout {
            Some(layout) => check_layout(layout, Some((&shape.dimensions, t)), path.field("layout")),
            None if mode == LayoutMode::Strict => Err(Error::MissingLayout {
                path: path.to_field_path(),
                shape: crate::text::shape_to_string(shape, false),
            }),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

fn invalid(path: impl Into<FieldPath>, problem: LayoutProblem) -> Error {
    Error::InvalidLayout { path: path.into(), problem }
}

fn sparse(path: impl Into<FieldPath>, field: &'static str, value: i64) -> Error {
    Error::SparseUnsupported { path: path.into(), field, value }
}

/// V-8 … V-18 for one layout. `shape` is `None` for a standalone layout (§1.5), which skips the
/// checks that need the rank.
fn check_layout(layout: &LayoutProto, shape: Option<(&[i64], PrimitiveType)>, path: Path<'_>) -> Result<()> {
    let rank = shape.map(|(dimensions, _)| dimensions.len());
    check_minor_to_major(&layout.minor_to_major, rank, path.field("minor_to_major"))?;
    check_sparse_lists(layout, rank, path)?;

    // V-11: the legacy format and sparse element count.
    if layout.format == crate::proto::Format::Sparse as i32 {
        return Err(sparse(path.field("format"), "format", i64::from(layout.format)));
    }
    if !(0..=2).contains(&layout.format) {
        return Err(invalid(path.field("format"), LayoutProblem::InvalidFormat { value: layout.format }));
    }
    if layout.max_sparse_elements != 0 {
        return Err(sparse(path.field("max_sparse_elements"), "max_sparse_elements", layout.max_sparse_elements));
    }
    // V-12: 0 means 1, as in HEAD's Layout::FromProto.
    if layout.tail_padding_alignment_in_elements < 0 {
        return Err(invalid(
            path.field("tail_padding_alignment_in_elements"),
            LayoutProblem::TailPadding { value: layout.tail_padding_alignment_in_elements },
        ));
    }
    // V-13 … V-15: sparse-only fields. The physical shape is not descended into.
    if layout.index_primitive_type != 0 {
        return Err(sparse(
            path.field("index_primitive_type"),
            "index_primitive_type",
            layout.index_primitive_type.into(),
        ));
    }
    if layout.pointer_primitive_type != 0 {
        return Err(sparse(
            path.field("pointer_primitive_type"),
            "pointer_primitive_type",
            layout.pointer_primitive_type.into(),
        ));
    }
    if layout.physical_shape.is_some() {
        return Err(sparse(path.field("physical_shape"), "physical_shape", 1));
    }
    // V-16: tile entries are positive or the combine dimension.
    for (j, tile) in layout.tiles.iter().enumerate() {
        let tile_path = path.index("tiles", j);
        if tile.dimensions.is_empty() {
            return Err(invalid(tile_path, LayoutProblem::EmptyTile));
        }
        for (k, &value) in tile.dimensions.iter().enumerate() {
            if value <= 0 && value != i64::MIN {
                return Err(invalid(tile_path.index("dimensions", k), LayoutProblem::TileDimension { value }));
            }
        }
    }
    // V-17.
    if layout.element_size_in_bits < 0 {
        return Err(invalid(
            path.field("element_size_in_bits"),
            LayoutProblem::NegativeElementSize { value: layout.element_size_in_bits },
        ));
    }
    check_padding(layout, shape, path)
}

/// V-8, V-9: `minor_to_major` is a permutation of the dimension numbers. Standalone layouts are
/// checked for negative entries and duplicates only.
fn check_minor_to_major(minor_to_major: &[i64], rank: Option<usize>, path: Path<'_>) -> Result<()> {
    if let Some(rank) = rank {
        if minor_to_major.len() != rank {
            return Err(invalid(path, LayoutProblem::MinorToMajorLength { len: minor_to_major.len(), rank }));
        }
    }
    let mut seen = DimensionSet::with_capacity(rank.unwrap_or(minor_to_major.len()));
    for (k, &value) in minor_to_major.iter().enumerate() {
        let in_bounds = value >= 0 && rank.is_none_or(|rank| usize::try_from(value).is_ok_and(|v| v < rank));
        let Some(dimension) = usize::try_from(value).ok().filter(|_| in_bounds) else {
            return Err(invalid(path.element(k), LayoutProblem::MinorToMajorOutOfBounds { value }));
        };
        if !seen.insert(dimension) {
            return Err(invalid(path.element(k), LayoutProblem::MinorToMajorDuplicate { value }));
        }
    }
    Ok(())
}

/// A set of dimension numbers: a bit mask for the common small ranks, a vector beyond.
enum DimensionSet {
    Small(u64),
    Large(Vec<bool>),
}

impl DimensionSet {
    fn with_capacity(n: usize) -> Self {
        if n <= 64 { Self::Small(0) } else { Self::Large(vec![false; n]) }
    }

    /// Inserts `d`; false if it was already present.
    fn insert(&mut self, d: usize) -> bool {
        match self {
            Self::Small(mask) if d < 64 => {
                let bit = 1u64 << d;
                let fresh = *mask & bit == 0;
                *mask |= bit;
                fresh
            }
            Self::Small(mask) => {
                // A standalone layout can name dimensions beyond 63 without a rank; switch form.
                let mut all = vec![false; d + 1];
                for (i, slot) in all.iter_mut().enumerate().take(64) {
                    *slot = *mask & (1u64 << i) != 0;
                }
                all[d] = true;
                *self = Self::Large(all);
                true
            }
            Self::Large(seen) => {
                if d >= seen.len() {
                    seen.resize(d + 1, false);
                }
                !std::mem::replace(&mut seen[d], true)
            }
        }
    }
}

/// V-10: the sparse-era per-dimension lists; all-dense lists of the right length are accepted.
fn check_sparse_lists(layout: &LayoutProto, rank: Option<usize>, path: Path<'_>) -> Result<()> {
    let lists: [(&'static str, usize); 3] = [
        ("dim_level_types", layout.dim_level_types.len()),
        ("dim_unique", layout.dim_unique.len()),
        ("dim_ordered", layout.dim_ordered.len()),
    ];
    if let Some(rank) = rank {
        for (field, len) in lists {
            if len != 0 && len != rank {
                return Err(invalid(path.field(field), LayoutProblem::ListLength { field, len, rank }));
            }
        }
    }
    // Read the raw i32s: prost's getter drops unknown values.
    let levels = path.field("dim_level_types");
    for (i, &value) in layout.dim_level_types.iter().enumerate() {
        if !(0..=3).contains(&value) {
            return Err(invalid(levels.element(i), LayoutProblem::InvalidLevelType { value }));
        }
    }
    for (i, &value) in layout.dim_level_types.iter().enumerate() {
        if value != 0 {
            return Err(sparse(levels.element(i), "dim_level_types", value.into()));
        }
    }
    for (field, flags) in [("dim_unique", &layout.dim_unique), ("dim_ordered", &layout.dim_ordered)] {
        if let Some(i) = flags.iter().position(|&flag| !flag) {
            return Err(sparse(path.field(field).element(i), field, 0));
        }
    }
    Ok(())
}

/// V-18: legacy `padded_dimensions`.
fn check_padding(layout: &LayoutProto, shape: Option<(&[i64], PrimitiveType)>, path: Path<'_>) -> Result<()> {
    let padded = &layout.padded_dimensions;
    if padded.is_empty() {
        return Ok(());
    }
    let padded_path = path.field("padded_dimensions");
    if !layout.tiles.is_empty() {
        return Err(invalid(padded_path, LayoutProblem::PaddingWithTiles));
    }
    let Some((dimensions, element_type)) = shape else { return Ok(()) };
    if padded.len() != dimensions.len() {
        return Err(invalid(padded_path, LayoutProblem::PaddedCount { count: padded.len(), rank: dimensions.len() }));
    }
    let mut count: i64 = 1;
    for (i, (&p, &d)) in padded.iter().zip(dimensions).enumerate() {
        if d == i64::MIN {
            return Err(invalid(padded_path.element(i), LayoutProblem::PaddedUnbounded { dimension: i }));
        }
        if p < d {
            return Err(invalid(
                padded_path.element(i),
                LayoutProblem::PaddingTooSmall { dimension: i, padded: p, size: d },
            ));
        }
        count = count
            .checked_mul(p)
            .ok_or_else(|| Error::Overflow { path: padded_path.to_field_path(), what: "padded size" })?;
    }
    let width = i64::from(element_type.byte_width().unwrap_or(0));
    count
        .checked_mul(width)
        .ok_or_else(|| Error::Overflow { path: padded_path.to_field_path(), what: "padded size" })?;
    Ok(())
}

impl From<Path<'_>> for FieldPath {
    fn from(path: Path<'_>) -> Self {
        path.to_field_path()
    }
}
