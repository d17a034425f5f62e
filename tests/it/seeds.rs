//! The seed documents' statements about construction and validation (spec `vectors.md` §9 S5,
//! S6, S8, S9, S10; `shared/seeds/001_*.txt`).

use prost::Message;
use xla_shape::error::LayoutProblem;
use xla_shape::make::{make_ascending_layout, make_descending_layout, make_shape, make_shape_with_dense_layout};
use xla_shape::proto::{LayoutProto, ShapeProto};
use xla_shape::validate::{LayoutMode, validate_layout, validate_layout_for_shape, validate_shape};
use xla_shape::{ArrayShape, Dim, Error, PrimitiveType};

const F32: i32 = 11;

/// `f32[dims]` with the given layout.
fn f32_with(dimensions: &[i64], layout: LayoutProto) -> ShapeProto {
    ShapeProto {
        element_type: F32,
        dimensions: dimensions.to_vec(),
        layout: Some(Box::new(layout)),
        ..ShapeProto::default()
    }
}

#[test]
fn s5_make_shape_keeps_the_dimension_order() {
    // "ShapeUtil::MakeShape(F32, {A, B, C, D}) will create a shape whose dimension size array
    // consists of the sequence [A, B, C, D]."
    let abcd = [2, 3, 4, 5];
    let s = make_shape(PrimitiveType::F32, &abcd).unwrap();
    assert_eq!(s.as_array().unwrap().dimensions(), &abcd);
    assert_eq!(s.proto().dimensions, abcd);
    assert_eq!(s.to_string(), "f32[2,3,4,5]{3,2,1,0}");
    // "dimension 0 has size A, dimension 1 has size B and dimension 2 has size C"
    let array = s.as_array().unwrap();
    for (i, size) in abcd.into_iter().enumerate() {
        assert_eq!(array.dimension(Dim(i)), size);
    }
}

#[test]
fn s6_default_layout_is_major_to_minor() {
    // "The default layout for newly created Shapes is 'dimension order is major-to-minor' (akin
    // to row-major at rank 2)."
    let s = make_shape(PrimitiveType::F32, &[2, 3]).unwrap();
    assert_eq!(s.to_string(), "f32[2,3]{1,0}");
    for rank in 0..=6_i64 {
        let s = make_shape(PrimitiveType::F32, &vec![2; rank.try_into().unwrap()]).unwrap();
        let expected: Vec<i64> = (0..rank).rev().collect();
        assert_eq!(s.proto().layout.as_ref().unwrap().minor_to_major, expected, "rank {rank}");
        assert_eq!(make_descending_layout(rank.try_into().unwrap()).proto().minor_to_major, expected);
    }
    // "dim 0 is major": {1,0}. "dim 0 is minor": {0,1} (column-major at rank 2).
    let row_major = s.as_array().unwrap().minor_to_major();
    assert_eq!((row_major.major(0), row_major.minor(0)), (Dim(0), Dim(1)));
    let column_major = make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[0, 1]).unwrap();
    let column_major = column_major.as_array().unwrap().minor_to_major();
    assert_eq!((column_major.major(0), column_major.minor(0)), (Dim(1), Dim(0)));
    assert_eq!(make_ascending_layout(2).proto().minor_to_major, [0, 1]);
    // A shape without a layout is treated as having the default one.
    let bare = ShapeProto { element_type: F32, dimensions: vec![2, 3, 4], ..ShapeProto::default() };
    let order = ArrayShape::try_new_optional_layout(&bare).unwrap().minor_to_major();
    assert_eq!(order.iter().collect::<Vec<_>>(), [Dim(2), Dim(1), Dim(0)]);
}

#[test]
fn s6_minor_to_major_is_an_ordering_of_the_dimensions() {
    // "Values in minor_to_major are an ordering of the dimensions of the array (0 to N-1)."
    let valid = [vec![0, 1, 2], vec![2, 1, 0], vec![1, 2, 0], vec![0, 2, 1]];
    for m2m in valid {
        let layout = LayoutProto { minor_to_major: m2m, ..LayoutProto::default() };
        assert_eq!(validate_shape(&f32_with(&[2, 3, 4], layout), LayoutMode::Strict), Ok(()));
    }
    for m2m in [vec![0, 1, 1], vec![0, 1, 3], vec![-1, 0, 1], vec![0, 1]] {
        let layout = LayoutProto { minor_to_major: m2m.clone(), ..LayoutProto::default() };
        let e = validate_shape(&f32_with(&[2, 3, 4], layout), LayoutMode::Strict).unwrap_err();
        assert!(matches!(e, Error::InvalidLayout { .. }), "{m2m:?}: {e:?}");
    }
}

fn padded(padded_dimensions: &[i64]) -> ShapeProto {
    f32_with(
        &[2, 3],
        LayoutProto {
            minor_to_major: vec![0, 1],
            padded_dimensions: padded_dimensions.to_vec(),
            ..LayoutProto::default()
        },
    )
}

#[test]
fn s8_padded_dimensions_count_equals_the_rank() {
    // "If present, the number of elements in padded_dimensions must equal the rank of the shape."
    let e = validate_shape(&padded(&[3]), LayoutMode::Strict).unwrap_err();
    assert_eq!(
        e,
        Error::invalid_layout("layout.padded_dimensions".into(), LayoutProblem::PaddedCount { count: 1, rank: 2 })
    );
    assert!(e.to_string().contains("layout has 1 padded dimensions, but shape is rank 2"));
    let e = validate_shape(&padded(&[3, 5, 7]), LayoutMode::Strict).unwrap_err();
    assert!(
        matches!(e, Error::InvalidLayout { ref problem, .. } if **problem == LayoutProblem::PaddedCount { count: 3, rank: 2 })
    );
    // The seed's example: [2 x 3] padded to [3, 5].
    assert_eq!(validate_shape(&padded(&[3, 5]), LayoutMode::Strict), Ok(()));
    // "If present": absent padding is fine.
    assert_eq!(validate_shape(&padded(&[]), LayoutMode::Strict), Ok(()));
}

#[test]
fn s9_layout_field_numbers() {
    // The seeds' Layout message: minor_to_major = 1, padded_dimensions = 2, padding_value = 3.
    let layout = LayoutProto {
        minor_to_major: vec![0, 1],
        padded_dimensions: vec![3, 5],
        padding_value: 1,
        ..LayoutProto::default()
    };
    let bytes = layout.encode_to_vec();
    // Keys: field 1 and 2 length-delimited (packed), field 3 varint.
    assert_eq!(bytes, [0x0a, 2, 0, 1, 0x12, 2, 3, 5, 0x18, 1]);
    assert_eq!(LayoutProto::decode(bytes.as_slice()).unwrap(), layout);
}

#[test]
fn s9_only_minor_to_major_is_required() {
    // "The only required field is minor_to_major."
    let layout = LayoutProto { minor_to_major: vec![1, 0], ..LayoutProto::default() };
    assert_eq!(layout.encode_to_vec(), [0x0a, 2, 1, 0]);
    assert_eq!(validate_layout(&layout), Ok(()));
    let shape = ShapeProto { element_type: F32, dimensions: vec![2, 3], ..ShapeProto::default() };
    assert_eq!(validate_layout_for_shape(&layout, &shape), Ok(()));
    assert_eq!(validate_shape(&f32_with(&[2, 3], layout), LayoutMode::Strict), Ok(()));
}

#[test]
fn s10_indices_and_sizes_are_i64() {
    // "Multidimensional indices include a int64 index for each dimension. Linear indices are a
    // single int64 value." Dimension sizes and minor_to_major entries are i64 in every API.
    let s = make_shape(PrimitiveType::PRED, &[i64::MAX]).unwrap();
    let array = s.as_array().unwrap();
    let dimensions: &[i64] = array.dimensions();
    assert_eq!(dimensions, [i64::MAX]);
    let m2m: &[i64] = array.layout().unwrap().minor_to_major();
    assert_eq!(m2m, [0]);
    // The element count is bounded by i64 with checked arithmetic: one more element overflows.
    let e = make_shape(PrimitiveType::PRED, &[i64::MAX, 2]).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }));
}
