//! `Shape`, `Layout` and `ProgramShape`: the crate's validated owned values (`ShapeBuf`,
//! `LayoutBuf`) behind Python classes. Every way in validates; nothing re-validates after.

use std::hash::{Hash, Hasher};

use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use xla_shape::draw::label::join;
use xla_shape::proto::{LayoutProto, ProgramShapeProto, ShapeProto};
use xla_shape::util::{self, LayoutEqual};
use xla_shape::{Dim, LayoutBuf, PhysicalMap, ShapeBuf, Slot, layout::TileDim, size, text};

use crate::errors::{IntoPyResult, binding_error};

/// The module of the pure-Python helpers (dtypes through ml_dtypes).
const DTYPES: &str = "xla_shape._dtypes";

/// An XLA shape: an array (element type, dimensions, layout), a tuple of shapes, a token.
///
/// Built only by validating (``parse``, ``from_proto``, ``array``), so every value is one XLA
/// accepts; ``str()`` is XLA's text and ``to_proto()`` XLA's bytes.
///
/// >>> import xla_shape as xs
/// >>> s = xs.Shape.parse("bf16[8,256]{1,0:T(8,128)(2,1)}")
/// >>> s.dimensions, s.element_type, s.byte_size
/// ((8, 256), 'bf16', 4096)
/// >>> str(xs.Shape.parse("f32[2,3]"))
/// 'f32[2,3]{1,0}'
#[pyclass(module = "xla_shape", frozen, eq, hash, str, from_py_object)]
#[derive(Clone)]
pub struct Shape {
    pub(crate) buf: ShapeBuf,
}

/// XLA's `Shape::Equal`: a proto without `is_dynamic_dimension` equals one with every entry
/// `false`, as in XLA.
impl PartialEq for Shape {
    fn eq(&self, other: &Self) -> bool {
        util::equal(self.buf.view(), other.buf.view())
    }
}

/// Equal shapes have the same element type and dimensions, so the same text without layout.
impl Hash for Shape {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.buf.view().to_string_without_layout().hash(state);
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.buf.fmt(f)
    }
}

impl Shape {
    /// The array view, or the crate's `NotAnArray` error for a tuple or token.
    pub(crate) fn array_view(&self, operation: &'static str) -> PyResult<xla_shape::ArrayShape<'_>> {
        self.buf.as_array().ok_or_else(|| {
            binding_error("NotAnArray", format!("{operation} needs an array shape, but the shape is {}", self.buf))
        })
    }

    fn map(&self) -> PyResult<PhysicalMap> {
        PhysicalMap::new(self.array_view("an element offset")?).py()
    }
}

/// A shape given as a `Shape` or as XLA's text.
#[derive(FromPyObject)]
pub enum ShapeLike {
    /// A `Shape`.
    Shape(Py<Shape>),
    /// XLA's text, parsed and validated.
    Text(String),
}

impl ShapeLike {
    /// The validated shape.
    pub fn into_shape(self) -> PyResult<Shape> {
        match self {
            Self::Shape(shape) => Ok(shape.get().clone()),
            Self::Text(text) => Shape::parse(&text),
        }
    }
}

/// The layout object JAX reports for `x` (`x.format.layout`; `x.layout` before JAX 0.6, whose
/// `Format` held it as `device_local_layout`), or `None` where it reports none: no format, no
/// layout, or `Layout.AUTO` (no `major_to_minor`).
fn jax_layout<'py>(x: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let format = match x.getattr_opt("format")? {
        Some(format) => format,
        None => match x.getattr_opt("layout")? {
            Some(format) => format,
            None => return Ok(None),
        },
    };
    if format.is_none() {
        return Ok(None);
    }
    let layout = match format.getattr_opt("layout")? {
        Some(layout) => layout,
        None => match format.getattr_opt("device_local_layout")? {
            Some(layout) => layout,
            None => return Ok(None),
        },
    };
    if layout.is_none() || !layout.hasattr("major_to_minor")? {
        return Ok(None);
    }
    Ok(Some(layout))
}

/// A layout given as a `Layout` or as XLA's text.
#[derive(FromPyObject)]
pub enum LayoutLike {
    /// A `Layout`.
    Layout(Py<Layout>),
    /// XLA's text (`{1,0:T(8,128)}`).
    Text(String),
}

impl LayoutLike {
    fn into_layout(self) -> PyResult<LayoutBuf> {
        match self {
            Self::Layout(layout) => Ok(layout.get().buf.clone()),
            Self::Text(text) => text::parse_layout(&text).py(),
        }
    }
}

#[pymethods]
impl Shape {
    /// Parses XLA's shape text and validates it (a missing layout becomes the default one).
    ///
    /// Raises ``ParseError`` for text XLA's parser refuses, ``ValidationError`` for a shape XLA
    /// would not accept.
    ///
    /// >>> import xla_shape as xs
    /// >>> str(xs.Shape.parse("s4[3,5]{0,1:E(4)}"))
    /// 's4[3,5]{0,1:E(4)}'
    #[staticmethod]
    pub fn parse(text: &str) -> PyResult<Self> {
        Ok(Self { buf: text::parse_shape(text).py()? })
    }

    /// Decodes XLA's serialized ``ShapeProto`` strictly (unknown fields and non-canonical
    /// encodings are ``DecodeError``), fills in what XLA's ``Shape(proto)`` fills in (every
    /// ``is_dynamic_dimension``, a layout's tail padding alignment of 1), and validates it (a
    /// shape without a layout is allowed, as in XLA). ``to_proto()`` then gives XLA's bytes.
    ///
    /// >>> import xla_shape as xs
    /// >>> xs.Shape.from_proto(xs.Shape.parse("f32[2]").to_proto())
    /// xs.Shape('f32[2]{0}')
    #[staticmethod]
    pub fn from_proto(data: &[u8]) -> PyResult<Self> {
        let mut proto: ShapeProto = xla_shape::decode(data).py()?;
        xla_shape::codec::to_xla_form(&mut proto).py()?;
        Ok(Self { buf: ShapeBuf::try_from_proto_optional_layout(proto).py()? })
    }

    /// An array shape from an element type (XLA's name, or a numpy / ml_dtypes dtype), its
    /// dimensions and an optional layout (``Layout`` or text; default: row-major).
    ///
    /// >>> import xla_shape as xs
    /// >>> import numpy as np
    /// >>> str(xs.Shape.array(np.float32, (2, 3), "{0,1}"))
    /// 'f32[2,3]{0,1}'
    #[staticmethod]
    #[pyo3(signature = (element_type, dimensions, layout=None))]
    pub fn array(element_type: &Bound<'_, PyAny>, dimensions: Vec<i64>, layout: Option<LayoutLike>) -> PyResult<Self> {
        let name: String = match element_type.extract::<String>() {
            Ok(name) => name,
            Err(_) => element_type.py().import(DTYPES)?.call_method1("element_type_of", (element_type,))?.extract()?,
        };
        let shape = Self::parse(&format!("{name}[{}]", join(&dimensions)))?;
        match layout {
            Some(layout) => shape.with_layout(layout),
            None => Ok(shape),
        }
    }

    /// The physical shape of a ``jax.Array`` or ``jax.ShapeDtypeStruct``: its element type
    /// (``x.dtype``), dimensions (``x.shape``) and the layout JAX reports (``x.format.layout``:
    /// major-to-minor order, tiles, element size), or the default layout where JAX reports none
    /// (a ``ShapeDtypeStruct`` without a ``format``, ``Layout.AUTO``).
    ///
    /// A sub-byte type (``int4``, ``float4_e2m1fn``, …) whose reported element size is 0 ("the
    /// default") gets its own width, ``E(4)``: XLA packs sub-byte types in device buffers, and
    /// the compiled module's parameter layouts say so where PJRT's reported layout does not.
    ///
    /// >>> import xla_shape as xs
    /// >>> import jax, jax.numpy as jnp
    /// >>> xs.Shape.from_jax(jnp.zeros((4, 6), jnp.int4))
    /// xs.Shape('s4[4,6]{1,0:E(4)}')
    /// >>> xs.Shape.from_jax(jax.ShapeDtypeStruct((4, 6), jnp.bfloat16))
    /// xs.Shape('bf16[4,6]{1,0}')
    #[staticmethod]
    pub fn from_jax(x: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = x.py();
        let dimensions: Vec<i64> = x.getattr("shape")?.extract()?;
        let dtype = x.getattr("dtype")?;
        let name: String = py.import(DTYPES)?.call_method1("element_type_of", (dtype,))?.extract()?;
        let shape = Self::parse(&format!("{name}[{}]", join(&dimensions)))?;
        let Some(layout) = jax_layout(x)? else { return Ok(shape) };
        let major_to_minor: Vec<i64> = layout.getattr("major_to_minor")?.extract()?;
        let tiling: Vec<Vec<i64>> = layout.getattr("tiling")?.extract::<Option<Vec<Vec<i64>>>>()?.unwrap_or_default();
        let mut bits: u32 = layout.getattr("sub_byte_element_size_in_bits")?.extract()?;
        let element_type = shape.array_view("Shape.from_jax")?.element_type();
        if bits == 0 && element_type.is_sub_byte() {
            bits = element_type.bit_width().unwrap_or_default();
        }
        let minor_to_major: Vec<i64> = major_to_minor.into_iter().rev().collect();
        let tiles: Vec<String> = tiling.iter().map(|tile| format!("({})", join(tile))).collect();
        let tiles = if tiles.is_empty() { String::new() } else { format!("T{}", tiles.concat()) };
        let size = if bits == 0 { String::new() } else { format!("E({bits})") };
        let separator = if tiles.is_empty() && size.is_empty() { "" } else { ":" };
        let text = format!("{{{}{separator}{tiles}{size}}}", join(&minor_to_major));
        shape.with_layout(LayoutLike::Text(text))
    }

    /// XLA's bytes of the shape (``ShapeProto``).
    pub fn to_proto<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &xla_shape::encode(self.buf.proto()))
    }

    /// The same array with another layout (validated).
    ///
    /// >>> import xla_shape as xs
    /// >>> str(xs.Shape.parse("f32[2,3]").with_layout("{0,1}"))
    /// 'f32[2,3]{0,1}'
    pub fn with_layout(&self, layout: LayoutLike) -> PyResult<Self> {
        self.array_view("with_layout")?;
        let mut proto = self.buf.proto().clone();
        proto.layout = Some(Box::new(layout.into_layout()?.into_proto()));
        Ok(Self { buf: ShapeBuf::try_from_proto(proto).py()? })
    }

    fn __repr__(&self) -> String {
        format!("xs.Shape('{}')", self.buf)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let py = slf.py();
        let from_proto = py.get_type::<Self>().getattr("from_proto")?;
        Ok((from_proto, (slf.get().to_proto(py),)))
    }

    /// XLA's text without the layout (``f32[2,3]``).
    pub fn to_string_without_layout(&self) -> String {
        self.buf.view().to_string_without_layout()
    }

    /// XLA's element type name (``"f32"``, ``"bf16"``, ``"s4"``, ``"tuple"``, ``"token"``).
    #[getter]
    pub fn element_type(&self) -> &'static str {
        self.buf.view().element_type().name()
    }

    /// The numpy dtype of the logical values (ml_dtypes for bf16, the small floats and the
    /// sub-byte integers, which numpy holds one per byte).
    ///
    /// >>> import xla_shape as xs
    /// >>> xs.Shape.parse("bf16[2]").dtype
    /// dtype(bfloat16)
    #[getter]
    pub fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import(DTYPES)?.call_method1("dtype_of", (self.element_type(),))
    }

    /// The dimensions (bounds, for dynamic dimensions).
    #[getter]
    pub fn dimensions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.array_view("dimensions")?.dimensions())
    }

    /// Which dimensions are dynamic (``<=N``).
    #[getter]
    pub fn dynamic_dimensions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let array = self.array_view("dynamic_dimensions")?;
        PyTuple::new(py, (0..array.rank()).map(|d| array.is_dynamic_dimension(Dim(d))))
    }

    /// The number of dimensions.
    #[getter]
    pub fn rank(&self) -> PyResult<usize> {
        Ok(self.array_view("rank")?.rank())
    }

    /// Whether this is an array shape.
    #[getter]
    pub fn is_array(&self) -> bool {
        self.buf.view().is_array()
    }

    /// Whether this is a tuple shape.
    #[getter]
    pub fn is_tuple(&self) -> bool {
        self.buf.view().is_tuple()
    }

    /// The element shapes of a tuple (raises for other shapes).
    #[getter]
    pub fn tuple_shapes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let view = self.buf.view();
        let tuple = view.as_tuple().ok_or_else(|| {
            binding_error("NotATuple", format!("tuple_shapes needs a tuple shape, but the shape is {}", self.buf))
        })?;
        let shapes = tuple.iter().map(|s| Self { buf: s.to_owned_shape() });
        PyTuple::new(py, shapes)
    }

    /// The layout, or ``None`` for a shape without one (possible only from ``from_proto``).
    #[getter]
    pub fn layout(&self) -> PyResult<Option<Layout>> {
        self.buf
            .proto()
            .layout
            .as_deref()
            .filter(|_| self.buf.view().is_array())
            .map(|layout| Ok(Layout { buf: LayoutBuf::try_from_proto(layout.clone()).py()? }))
            .transpose()
    }

    /// XLA's ``ShapeUtil::ByteSizeOf`` (pointers of 8 bytes for tuples).
    #[getter]
    pub fn byte_size(&self) -> PyResult<i64> {
        size::byte_size_of(self.buf.view(), 8).py()
    }

    /// The bytes a buffer in this layout occupies, with every padding and tile (what
    /// ``relayout`` and ``to_numpy`` take); equal to ``byte_size`` except where XLA's size model
    /// leaves padding out.
    #[getter]
    pub fn storage_bytes(&self) -> PyResult<u64> {
        size::storage_bytes(self.array_view("storage_bytes")?).py()
    }

    /// Where element ``index`` sits: its slot (the element's position in memory, padding slots
    /// counted).
    ///
    /// >>> import xla_shape as xs
    /// >>> xs.Shape.parse("f32[2,3]{0,1}").slot((1, 0))
    /// 1
    pub fn slot(&self, index: Vec<i64>) -> PyResult<u64> {
        Ok(self.map()?.slot(&index).py()?.get())
    }

    /// The bit offset of element ``index`` in the buffer.
    pub fn bit_offset(&self, index: Vec<i64>) -> PyResult<u64> {
        self.map()?.bit_offset(&index).py()
    }

    /// The byte offset of element ``index`` in the buffer (sub-byte elements: the byte holding
    /// its first bit).
    ///
    /// >>> import xla_shape as xs
    /// >>> xs.Shape.parse("f32[2,3]{0,1}").byte_offset((0, 1))
    /// 8
    pub fn byte_offset(&self, index: Vec<i64>) -> PyResult<u64> {
        Ok(self.bit_offset(index)? / 8)
    }

    /// The index of the element in ``slot``, or ``None`` for a padding slot.
    pub fn index_of_slot<'py>(&self, py: Python<'py>, slot: u64) -> PyResult<Option<Bound<'py, PyTuple>>> {
        self.map()?.index_of_slot(Slot(slot)).py()?.map(|index| PyTuple::new(py, index)).transpose()
    }

    /// Every field of the shape spelled out for people.
    pub fn describe(&self) -> String {
        text::describe_sizes(self.buf.view()).to_string()
    }
}

/// An XLA layout: minor-to-major order, tiles, element size in bits, memory space, tail padding.
///
/// >>> import xla_shape as xs
/// >>> l = xs.Layout.parse("{1,0:T(8,128)(2,1)}")
/// >>> l.minor_to_major, l.tiles
/// ((1, 0), ((8, 128), (2, 1)))
#[pyclass(module = "xla_shape", frozen, eq, hash, str, from_py_object)]
#[derive(Clone)]
pub struct Layout {
    pub(crate) buf: LayoutBuf,
}

/// XLA's `Layout::Equal`.
impl PartialEq for Layout {
    fn eq(&self, other: &Self) -> bool {
        LayoutEqual::new().equal(self.buf.view(), other.buf.view())
    }
}

/// Equal layouts have the same `minor_to_major`.
impl Hash for Layout {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.buf.view().minor_to_major().hash(state);
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.buf.fmt(f)
    }
}

#[pymethods]
impl Layout {
    /// Parses XLA's layout text (``{1,0:T(8,128)(2,1)}``) and validates it.
    #[staticmethod]
    pub fn parse(text: &str) -> PyResult<Self> {
        Ok(Self { buf: text::parse_layout(text).py()? })
    }

    /// Decodes XLA's serialized ``LayoutProto`` strictly, fills in what XLA fills in, and
    /// validates it.
    #[staticmethod]
    pub fn from_proto(data: &[u8]) -> PyResult<Self> {
        let mut proto: LayoutProto = xla_shape::decode(data).py()?;
        xla_shape::codec::to_xla_form(&mut proto).py()?;
        Ok(Self { buf: LayoutBuf::try_from_proto(proto).py()? })
    }

    /// The layout JAX's ``Layout(major_to_minor, tiling)`` describes.
    ///
    /// >>> import xla_shape as xs
    /// >>> str(xs.Layout.from_major_to_minor((1, 0), tiling=((8, 128),)))
    /// '{0,1:T(8,128)}'
    #[staticmethod]
    #[pyo3(signature = (major_to_minor, tiling=None))]
    pub fn from_major_to_minor(major_to_minor: Vec<i64>, tiling: Option<Vec<Vec<i64>>>) -> PyResult<Self> {
        let minor_to_major: Vec<i64> = major_to_minor.into_iter().rev().collect();
        let tiles: Vec<String> = tiling.unwrap_or_default().iter().map(|tile| format!("({})", join(tile))).collect();
        let tiles = if tiles.is_empty() { String::new() } else { format!(":T{}", tiles.concat()) };
        let order = join(&minor_to_major);
        Self::parse(&format!("{{{order}{tiles}}}"))
    }

    /// XLA's bytes of the layout (``LayoutProto``).
    pub fn to_proto<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &xla_shape::encode(self.buf.proto()))
    }

    fn __repr__(&self) -> String {
        format!("xs.Layout('{}')", self.buf)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let py = slf.py();
        let from_proto = py.get_type::<Self>().getattr("from_proto")?;
        Ok((from_proto, (slf.get().to_proto(py),)))
    }

    /// Dimension numbers from the most minor (fastest varying) to the most major.
    #[getter]
    pub fn minor_to_major<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.buf.view().minor_to_major())
    }

    /// Dimension numbers from the most major to the most minor (JAX's ``major_to_minor``).
    #[getter]
    pub fn major_to_minor<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.buf.view().minor_to_major().iter().rev())
    }

    /// The tiles, outermost first; each a tuple of sizes, ``"*"`` for XLA's combine dimension.
    #[getter]
    pub fn tiles<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let tiles = self
            .buf
            .view()
            .tiles()
            .map(|tile| {
                let entries = tile.iter().map(|entry| match entry {
                    TileDim::Size(size) => size.into_bound_py_any(py),
                    TileDim::Combine => "*".into_bound_py_any(py),
                });
                PyTuple::new(py, entries.collect::<PyResult<Vec<_>>>()?)
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, tiles)
    }

    /// Bits per element in memory (0: the element type's own width).
    #[getter]
    pub fn element_size_in_bits(&self) -> u64 {
        self.buf.view().element_size_in_bits()
    }

    /// The memory space (``S(n)``; 0 is the default, 5 pinned host memory on some platforms).
    #[getter]
    pub fn memory_space(&self) -> i64 {
        self.buf.view().memory_space()
    }

    /// ``L(n)``: the element count of the buffer is padded to a multiple of this.
    #[getter]
    pub fn tail_padding_alignment_in_elements(&self) -> u64 {
        self.buf.view().tail_padding_alignment_in_elements()
    }

    /// Whether the layout has tiles.
    #[getter]
    pub fn is_tiled(&self) -> bool {
        self.buf.view().is_tiled()
    }
}

/// A computation's signature: parameter shapes (and names) and the result shape, as XLA's
/// ``ProgramShape`` (``(f32[8]{0}, s32[]) -> f32[8]{0}``).
#[pyclass(module = "xla_shape", frozen, eq, str)]
#[derive(Clone, PartialEq)]
pub struct ProgramShape {
    pub(crate) proto: ProgramShapeProto,
}

impl std::fmt::Display for ProgramShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match xla_shape::ProgramShape::try_new_optional_layout(&self.proto) {
            Ok(view) => view.fmt(f),
            Err(e) => write!(f, "<invalid program shape: {e}>"),
        }
    }
}

impl ProgramShape {
    /// A validated program shape from its proto.
    pub(crate) fn try_new(proto: ProgramShapeProto) -> PyResult<Self> {
        xla_shape::ProgramShape::try_new_optional_layout(&proto).py()?;
        Ok(Self { proto })
    }
}

fn owned(shape: &ShapeProto) -> PyResult<Shape> {
    Ok(Shape { buf: ShapeBuf::try_from_proto_optional_layout(shape.clone()).py()? })
}

#[pymethods]
impl ProgramShape {
    /// The parameters' shapes.
    #[getter]
    pub fn parameters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.proto.parameters.iter().map(owned).collect::<PyResult<Vec<_>>>()?)
    }

    /// The parameters' names (empty strings where XLA recorded none).
    #[getter]
    pub fn parameter_names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.proto.parameter_names)
    }

    /// The result's shape.
    #[getter]
    pub fn result(&self) -> PyResult<Shape> {
        owned(&self.proto.result.clone().unwrap_or_default())
    }

    fn __repr__(&self) -> String {
        format!("xs.ProgramShape('{self}')")
    }
}
