//! Sizes and strides (vectors.md §6 groups 51–55, 72, 73; X2's split config; T2/T11/T12 are in
//! tests/it/tiling.rs).

use xla_shape::make::{
    LayoutSpec, make_scalar_shape, make_shape, make_shape_with_layout, make_token_shape, make_tuple_shape,
};
use xla_shape::size::{
    array_data_size, array_size, byte_size_of, byte_size_of_elements, byte_size_of_elements_recursive,
    byte_size_of_primitive_type, byte_strides, byte_strides_is_major_to_minor, elements_in, max_elements_in_per_split,
    max_split_size, storage_bytes, unpacked_byte_strides,
};
use xla_shape::{ArrayShape, Dim, Error, PrimitiveType, ShapeBuf};

fn a(s: &ShapeBuf) -> ArrayShape<'_> {
    s.as_array().unwrap()
}

fn with(t: PrimitiveType, dims: &[i64], spec: &LayoutSpec) -> ShapeBuf {
    make_shape_with_layout(t, dims, spec).unwrap()
}

fn descending(n: usize) -> Vec<i64> {
    (0..i64::try_from(n).unwrap()).rev().collect()
}

#[test]
fn group_51_elements_in() {
    for (dims, n) in [
        (&[][..], 1),
        (&[0][..], 0),
        (&[1][..], 1),
        (&[1, 1][..], 1),
        (&[2][..], 2),
        (&[2, 1][..], 2),
        (&[3, 5][..], 15),
        (&[3, 0, 5][..], 0),
        (&[0, 3, 0][..], 0),
        (&[1, 3, 5][..], 15),
        (&[13, 17][..], 221),
    ] {
        assert_eq!(elements_in(a(&make_shape(PrimitiveType::S32, dims).unwrap())).unwrap(), n, "{dims:?}");
    }
    let dynamic = xla_shape::make::make_shape_dynamic(PrimitiveType::S32, &[4, 3], &[true, false]).unwrap();
    assert_eq!(elements_in(a(&dynamic)).unwrap(), 12);
    let unbounded = make_shape(PrimitiveType::S32, &[i64::MIN]).unwrap();
    assert!(matches!(elements_in(a(&unbounded)), Err(Error::UnboundedDimension { .. })));
}

#[test]
fn group_52_byte_sizes() {
    assert_eq!(byte_size_of_primitive_type(PrimitiveType::F32), Some(4));
    assert_eq!(byte_size_of_primitive_type(PrimitiveType::F64), Some(8));
    assert_eq!(byte_size_of_primitive_type(PrimitiveType::C64), Some(8));
    assert_eq!(byte_size_of_primitive_type(PrimitiveType::OPAQUE_TYPE), None);
    for (t, dims, bytes) in [
        (PrimitiveType::F32, &[][..], 4),
        (PrimitiveType::F32, &[10, 20][..], 800),
        (PrimitiveType::F64, &[10, 20][..], 1600),
        (PrimitiveType::C64, &[10, 20][..], 1600),
    ] {
        let s = make_shape(t, dims).unwrap();
        assert_eq!(byte_size_of(s.view(), 8).unwrap(), bytes);
        assert_eq!(byte_size_of_elements(a(&s)).unwrap(), bytes);
    }
    // Tuples, tokens, opaque; tiles and tail padding are ignored.
    let t = make_tuple_shape(&vec![make_scalar_shape(PrimitiveType::F32).unwrap(); 3]).unwrap();
    assert_eq!(byte_size_of(t.view(), 8).unwrap(), 24);
    assert!(byte_size_of(t.view(), 0).is_err());
    assert_eq!(byte_size_of(make_token_shape().view(), 8).unwrap(), 0);
    assert_eq!(byte_size_of(xla_shape::make::make_opaque_shape().view(), 8).unwrap(), 8);
    assert!(byte_size_of(xla_shape::make::make_opaque_shape().view(), -1).is_err());
    let tiled = with(
        PrimitiveType::F32,
        &[3, 5],
        &LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]]).tail_padding_alignment_in_elements(64),
    );
    assert_eq!(byte_size_of_elements(a(&tiled)).unwrap(), 60);
    let buffer = xla_shape::make::make_buffer_shape(&make_shape(PrimitiveType::S16, &[3]).unwrap()).unwrap();
    assert_eq!(byte_size_of(buffer.view(), 8).unwrap(), 6);
}

#[test]
fn group_53_recursive() {
    let scalars = make_tuple_shape(&vec![make_scalar_shape(PrimitiveType::S32).unwrap(); 2]).unwrap();
    assert_eq!(byte_size_of_elements_recursive(scalars.view()).unwrap(), 8);
    let t = make_tuple_shape(&[
        make_shape(PrimitiveType::S32, &[16, 32, 64]).unwrap(),
        make_shape(PrimitiveType::S8, &[16, 32, 64]).unwrap(),
    ])
    .unwrap();
    assert_eq!(byte_size_of_elements_recursive(t.view()).unwrap(), 163_840);
    let nested = make_tuple_shape(&[t, make_token_shape()]).unwrap();
    assert_eq!(byte_size_of_elements_recursive(nested.view()).unwrap(), 163_840);
    let opaque = make_tuple_shape(&[xla_shape::make::make_opaque_shape()]).unwrap();
    assert!(matches!(byte_size_of_elements_recursive(opaque.view()), Err(Error::NotAnArray { .. })));
}

#[test]
fn group_54_strides() {
    assert_eq!(unpacked_byte_strides(a(&make_shape(PrimitiveType::F32, &[3, 5, 7]).unwrap())).unwrap(), [140, 28, 4]);
    assert_eq!(unpacked_byte_strides(a(&make_shape(PrimitiveType::F16, &[5, 7, 9]).unwrap())).unwrap(), [126, 18, 2]);
    let s4 =
        |dims: &[i64]| with(PrimitiveType::S4, dims, &LayoutSpec::new(&descending(dims.len())).element_size_in_bits(4));
    assert_eq!(unpacked_byte_strides(a(&s4(&[2, 4]))).unwrap(), [4, 1]);
    assert_eq!(byte_strides(a(&s4(&[10, 20]))).unwrap(), None);
    // XLA quirk: an element size that is a multiple of 8 is ignored by the strides.
    let pred32 = with(PrimitiveType::PRED, &[2, 3], &LayoutSpec::new(&[1, 0]).element_size_in_bits(32));
    assert_eq!(byte_strides(a(&pred32)).unwrap(), Some(vec![3, 1]));
    let f32s = make_shape(PrimitiveType::F32, &[3, 5, 7]).unwrap();
    assert_eq!(byte_strides(a(&f32s)).unwrap(), Some(vec![140, 28, 4]));
}

#[test]
fn group_55_array_size_and_data_size() {
    let s4 = |dims: &[i64], tiles: &[&[i64]]| {
        with(PrimitiveType::S4, dims, &LayoutSpec::new(&descending(dims.len())).tiles(tiles).element_size_in_bits(4))
    };
    let plain = s4(&[64, 128], &[]);
    assert_eq!((array_size(a(&plain)).unwrap(), array_data_size(a(&plain)).unwrap()), (4096, 4096));
    let big = s4(&[9216, 6144], &[&[64, 128], &[8, 1]]);
    assert_eq!((array_size(a(&big)).unwrap(), array_data_size(a(&big)).unwrap()), (28_311_552, 28_311_552));
    for dims in [&[0, 64, 128][..], &[63, 127, 0], &[0, 0, 0]] {
        for tiles in [&[][..], &[&[64, 128][..], &[8, 1]]] {
            let z = s4(dims, tiles);
            assert_eq!((array_size(a(&z)).unwrap(), array_data_size(a(&z)).unwrap()), (0, 0), "{z}");
        }
    }
    // Rank 1 ignores tiles in ArrayDataSize; scalars.
    let r1 = with(PrimitiveType::F32, &[100], &LayoutSpec::new(&[0]).tiles(&[&[8, 128]]));
    assert_eq!((array_size(a(&r1)).unwrap(), array_data_size(a(&r1)).unwrap()), (4096, 400));
    let scalar = make_scalar_shape(PrimitiveType::F64).unwrap();
    assert_eq!((array_size(a(&scalar)).unwrap(), array_data_size(a(&scalar)).unwrap()), (8, 8));
    assert_eq!(storage_bytes(a(&scalar)).unwrap(), 8);
}

#[test]
fn group_72_byte_strides_is_major_to_minor() {
    let dims = [8, 9, 10, 11];
    assert!(byte_strides_is_major_to_minor(&[3960, 440, 44, 4], &dims, PrimitiveType::F32).unwrap());
    assert!(!byte_strides_is_major_to_minor(&[1880, 220, 22, 2], &dims, PrimitiveType::F32).unwrap());
    assert!(!byte_strides_is_major_to_minor(&[1880, 440, 44, 4], &dims, PrimitiveType::F32).unwrap());
    assert!(byte_strides_is_major_to_minor(&[4], &dims, PrimitiveType::F32).is_err());
}

#[test]
fn group_73_and_x2_split_configs() {
    let spec = LayoutSpec::new(&[0, 1, 2]).split_config(0, &[30]).split_config(1, &[40, 130]);
    let s = with(PrimitiveType::F32, &[150, 200, 100], &spec);
    assert_eq!([0, 1, 2].map(|d| max_split_size(a(&s), Dim(d)).unwrap()), [150, 90, 70]);
    assert_eq!(max_elements_in_per_split(a(&s)).unwrap(), 945_000);
    let plain = with(PrimitiveType::F32, &[150, 200, 100], &LayoutSpec::new(&[0, 1, 2]));
    assert_eq!(max_elements_in_per_split(a(&plain)).unwrap(), 3_000_000);
    assert!(matches!(max_split_size(a(&s), Dim(3)), Err(Error::DimensionOutOfRange { .. })));
    // X2: the spec expects a split dimension out of range to validate and max_split_size to
    // fail; real XLA rejects it in validation already (tests/fixtures/shape_protos.jsonl).
    let bad = make_shape_with_layout(PrimitiveType::F32, &[2, 3], &LayoutSpec::new(&[1, 0]).split_config(5, &[1]));
    assert!(matches!(bad, Err(Error::InvalidLayout { .. })));
    // ArraySize of a tiled layout uses the largest split: physical dimension 1 (logical 1) split
    // at 128 → roundup(128, 128) × roundup(8, 8) = 1024 elements.
    let tiled =
        with(PrimitiveType::F32, &[8, 256], &LayoutSpec::new(&[1, 0]).tiles(&[&[8, 128]]).split_config(1, &[128]));
    assert_eq!(array_size(a(&tiled)).unwrap(), 4096);
    assert_eq!(xla_shape::size::storage_bytes(a(&tiled)).unwrap(), 8192);
}
