//! Building `LiteralProto`s from values: the inverse of reading.

use super::element::Element;
use super::field::{Owned, Storage, store, value_field};
use super::order;
use crate::MAX_DEPTH;
use crate::error::{Error, LiteralError, LiteralProblem, Result};
use crate::primitive::PrimitiveType;
use crate::proto::{LiteralProto, ShapeProto};
use crate::shape::ArrayShape;
use crate::validate::{LayoutMode, validate_shape};

fn mismatch(ty: PrimitiveType, values: String) -> Error {
    let problem = LiteralProblem::ValuesMismatch { element_type: ty.name(), values };
    Error::Literal(Box::new(LiteralError { path: crate::error::FieldPath::root(), problem }))
}

/// The `LiteralProto` of an array: `shape` (which must have a layout, as XLA requires of a
/// literal) and `values` in logical (row-major) order, stored in the element type's field in the
/// layout's physical order — the bytes XLA writes for the same literal. A dynamic array gets
/// `dynamic_sizes` equal to its bounds (every element valid).
///
/// ```
/// use xla_shape::{literal::make_array_literal, make, PrimitiveType};
/// let shape = make::make_shape(PrimitiveType::BF16, &[2])?;
/// let proto = make_array_literal(shape.as_array().expect("array"), &[half::bf16::from_f32(1.0), half::bf16::from_f32(-2.0)])?;
/// assert_eq!(proto.bf16s, [0x80, 0x3f, 0x00, 0xc0]);
/// # Ok::<(), xla_shape::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::MissingLayout`] if the shape has no layout; [`Error::Literal`]
/// ([`LiteralProblem::ValuesMismatch`]) if `T` does not hold the element type or the number of
/// values is not the element count; [`LiteralProblem::Unbounded`] for a `?` dimension.
pub fn make_array_literal<T: Element>(shape: ArrayShape<'_>, values: &[T]) -> Result<LiteralProto> {
    let ty = shape.element_type();
    validate_shape(shape.proto(), LayoutMode::Strict)?;
    let Some(field) = value_field(ty) else {
        return Err(mismatch(ty, "values".to_owned()));
    };
    if !T::holds(ty) {
        return Err(mismatch(ty, format!("values of {}", std::any::type_name::<T>())));
    }
    let mut dims = Vec::with_capacity(shape.rank());
    let mut count: usize = 1;
    for (dimension, &size) in shape.dimensions().iter().enumerate() {
        let Ok(size) = usize::try_from(size) else {
            let problem = LiteralProblem::Unbounded { dimension };
            return Err(Error::Literal(Box::new(LiteralError { path: "shape".into(), problem })));
        };
        dims.push(size);
        count = count.saturating_mul(size);
    }
    if count != values.len() {
        return Err(mismatch(ty, format!("{} values", values.len())));
    }
    let minor_to_major: Vec<usize> = shape.minor_to_major().iter().map(|d| d.0).collect();
    let mut logical = Vec::with_capacity(values.len().saturating_mul(T::width()));
    T::encode(values, ty, &mut logical);
    let mut physical = vec![0u8; logical.len()];
    order::to_physical(&dims, &minor_to_major, T::width(), &logical, &mut physical)?;
    let mut proto = LiteralProto { shape: Some(shape.proto().clone()), ..LiteralProto::default() };
    if values.is_empty() {
        // proto3 writes no empty field.
    } else {
        store(&mut proto, field, owned(field.storage, physical));
    }
    if shape.is_dynamic() {
        proto.dynamic_sizes = shape.dimensions().iter().map(|&d| i32::try_from(d).unwrap_or(i32::MAX)).collect();
    }
    Ok(proto)
}

/// A field's content from its little-endian bytes.
fn owned(storage: Storage, bytes: Vec<u8>) -> Owned {
    fn chunks<const N: usize, T>(bytes: &[u8], from: fn([u8; N]) -> T) -> Vec<T> {
        bytes
            .chunks_exact(N)
            .map(|c| {
                let mut a = [0u8; N];
                a.copy_from_slice(c);
                from(a)
            })
            .collect()
    }
    match storage {
        Storage::Bool => Owned::Bool(bytes.iter().map(|&b| b != 0).collect()),
        Storage::Bytes(_) => Owned::Bytes(bytes),
        Storage::I32 => Owned::I32(chunks(&bytes, i32::from_le_bytes)),
        Storage::I64 => Owned::I64(chunks(&bytes, i64::from_le_bytes)),
        Storage::U32 => Owned::U32(chunks(&bytes, u32::from_le_bytes)),
        Storage::U64 => Owned::U64(chunks(&bytes, u64::from_le_bytes)),
        Storage::F32 { .. } => Owned::F32(chunks(&bytes, f32::from_le_bytes)),
        Storage::F64 { .. } => Owned::F64(chunks(&bytes, f64::from_le_bytes)),
    }
}

/// The `LiteralProto` of a tuple of `elements` (each a literal with its shape), with the tuple
/// shape built from theirs.
///
/// ```
/// use xla_shape::{literal::{make_array_literal, make_tuple_literal, Literal}, make, PrimitiveType};
/// let a = make_array_literal(make::make_shape(PrimitiveType::S32, &[])?.as_array().expect("array"), &[7i32])?;
/// let b = make_array_literal(make::make_shape(PrimitiveType::F32, &[2])?.as_array().expect("array"), &[1.5f32, -2.0])?;
/// let tuple = make_tuple_literal(vec![a, b])?;
/// assert_eq!(Literal::try_new(&tuple)?.to_string(), "( 7, {1.5, -2} )");
/// # Ok::<(), xla_shape::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Literal`] ([`LiteralProblem::MissingShape`]) if an element has no shape;
/// [`Error::TooDeep`] if the tuple would nest deeper than [`MAX_DEPTH`].
pub fn make_tuple_literal(elements: Vec<LiteralProto>) -> Result<LiteralProto> {
    let mut shapes = Vec::with_capacity(elements.len());
    for (i, element) in elements.iter().enumerate() {
        let Some(shape) = &element.shape else {
            let path = crate::error::FieldPath::root().field("tuple_literals").index(i);
            return Err(Error::Literal(Box::new(LiteralError { path, problem: LiteralProblem::MissingShape })));
        };
        shapes.push(shape.clone());
    }
    let shape =
        ShapeProto { element_type: PrimitiveType::TUPLE.as_i32(), tuple_shapes: shapes, ..ShapeProto::default() };
    validate_shape(&shape, LayoutMode::Optional).map_err(|e| match e {
        Error::TooDeep { path, .. } => Error::TooDeep { path, limit: MAX_DEPTH },
        other => other,
    })?;
    Ok(LiteralProto { shape: Some(shape), tuple_literals: elements, ..LiteralProto::default() })
}
