//! Constructors (spec `linearization.md` §6.1): results, XLA's error wording, and the XLA form of
//! every proto they build (vectors.md B1/B2 bytes, groups 25, 27, 29, 48, 71, 76).

use crate::common::bytes_from_hex;
use prost::Message;
use xla_shape::error::LayoutProblem;
use xla_shape::make::{
    LayoutSpec, make_ascending_layout, make_buffer_shape, make_buffer_shape_from_dimensions, make_descending_layout,
    make_layout, make_layout_from_major_to_minor, make_maybe_tuple_shape, make_nil, make_opaque_shape,
    make_padded_layout, make_scalar_shape, make_shape, make_shape_dynamic, make_shape_with_dense_layout,
    make_shape_with_descending_layout, make_shape_with_layout, make_token_shape, make_tuple_shape,
};
use xla_shape::proto::{PaddingValue, ShapeProto};
use xla_shape::{Error, LayoutBuf, PrimitiveType as T, ShapeBuf};

const MIN: i64 = i64::MIN;

/// XLA form (schema.md §4): every array has one dynamic flag per dimension and a layout with
/// `tail_padding_alignment_in_elements` ≥ 1; checked through tuples and buffers.
fn assert_xla_form(shape: &ShapeProto) {
    match T::from_i32(shape.element_type).expect("known element type") {
        T::TUPLE | T::BUFFER => shape.tuple_shapes.iter().for_each(assert_xla_form),
        T::TOKEN | T::OPAQUE_TYPE => assert!(shape.layout.is_none() && shape.dimensions.is_empty()),
        _ => {
            assert_eq!(shape.is_dynamic_dimension.len(), shape.dimensions.len(), "dynamic flags of {shape:?}");
            let layout = shape.layout.as_ref().expect("an array built by the crate has a layout");
            assert!(layout.tail_padding_alignment_in_elements >= 1, "tail padding of {shape:?}");
        }
    }
}

/// The shape is in XLA form, prints as `text` and encodes to `bytes`.
#[track_caller]
fn check_shape(shape: &ShapeBuf, text: &str, bytes: &str) {
    assert_xla_form(shape.proto());
    assert_eq!(shape.to_string(), text);
    assert_eq!(shape.proto().encode_to_vec(), bytes_from_hex(bytes), "bytes of {text}");
}

#[track_caller]
fn check_layout(layout: &LayoutBuf, text: &str, bytes: &str) {
    assert_eq!(layout.proto().tail_padding_alignment_in_elements, 1);
    assert_eq!(layout.to_string(), text);
    assert_eq!(layout.proto().encode_to_vec(), bytes_from_hex(bytes), "bytes of {text}");
}

#[track_caller]
fn invalid_argument(err: &Error, phrase: &str) {
    match err {
        Error::InvalidArgument(problem) => {
            let message = problem.to_string();
            assert!(message.contains(phrase), "{message:?} lacks {phrase:?}");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[track_caller]
fn layout_problem(err: &Error, path: &str) -> LayoutProblem {
    match err {
        Error::InvalidLayout { path: p, problem } => {
            assert_eq!(p.as_str(), path);
            (**problem).clone()
        }
        other => panic!("expected InvalidLayout, got {other:?}"),
    }
}

const NON_ARRAY: [T; 4] = [T::TUPLE, T::TOKEN, T::OPAQUE_TYPE, T::BUFFER];

// ---------------------------------------------------------------------------------------------
// make_shape, make_shape_dynamic

#[test]
fn make_shape_default_layout_and_bytes() {
    // B1
    check_shape(
        &make_shape(T::F32, &[2, 3]).unwrap(),
        "f32[2,3]{1,0}",
        "10 0b 1a 02 02 03 2a 07 0a 02 01 00 80 01 01 32 02 00 00",
    );
    check_shape(&make_shape(T::F32, &[]).unwrap(), "f32[]", "10 0b 2a 03 80 01 01");
    check_shape(
        &make_shape(T::F6E3M2FN, &[4]).unwrap(),
        "f6e3m2fn[4]{0}",
        "10 23 1a 01 04 2a 06 0a 01 00 80 01 01 32 01 00",
    );
    check_shape(
        &make_shape(T::F6E2M3FN, &[4]).unwrap(),
        "f6e2m3fn[4]{0}",
        "10 24 1a 01 04 2a 06 0a 01 00 80 01 01 32 01 00",
    );
    // vectors.md 71: the default layout is descending.
    assert_eq!(make_shape(T::F32, &[10, 20, 30, 15, 25]).unwrap().to_string(), "f32[10,20,30,15,25]{4,3,2,1,0}");
    // vectors.md 27: the same as the parsed f32[123,456].
    assert_eq!(make_shape(T::F32, &[123, 456]).unwrap().to_string(), "f32[123,456]{1,0}");
    assert_eq!(make_shape_with_descending_layout(T::F32, &[2, 3]).unwrap(), make_shape(T::F32, &[2, 3]).unwrap());
    // Zero-sized dimensions are fine.
    check_shape(
        &make_shape(T::F32, &[3, 0]).unwrap(),
        "f32[3,0]{1,0}",
        "10 0b 1a 02 03 00 2a 07 0a 02 01 00 80 01 01 32 02 00 00",
    );
}

#[test]
fn make_shape_unbounded_is_dynamic() {
    // vectors.md 25, 27, B1: INT64_MIN without a flag vector becomes `?`.
    let s = make_shape(T::F32, &[MIN, 784]).unwrap();
    assert_eq!(s.proto().is_dynamic_dimension, [true, false]);
    check_shape(
        &s,
        "f32[?,784]{1,0}",
        "10 0b 1a 0c 80 80 80 80 80 80 80 80 80 01 90 06 2a 07 0a 02 01 00 80 01 01 32 02 01 00",
    );
    assert_eq!(s, make_shape_dynamic(T::F32, &[MIN, 784], &[true, false]).unwrap());
}

#[test]
fn make_shape_errors() {
    let e = make_shape(T::F32, &[2, -1]).unwrap_err();
    assert_eq!(e, Error::InvalidDimension { path: "dimensions[1]".into(), index: 1, size: -1 });
    assert!(e.to_string().contains("invalid dimension size -1"), "{e}");
    // byte width × element count must fit.
    for dimensions in [&[1i64 << 61][..], &[1 << 62, 4, 0], &[i64::MAX, 2]] {
        let e = make_shape(T::F32, dimensions).unwrap_err();
        assert!(matches!(e, Error::Overflow { .. }), "{e:?}");
        assert!(e.to_string().contains("overflow"));
    }
    for t in NON_ARRAY {
        invalid_argument(&make_shape(t, &[]).unwrap_err(), "unsupported element type");
        invalid_argument(&make_scalar_shape(t).unwrap_err(), "unsupported element type");
    }
}

#[test]
fn make_shape_dynamic_flags() {
    // vectors.md 25
    let s = make_shape_dynamic(T::F32, &[23, 44, 55], &[true, false, true]).unwrap();
    assert_xla_form(s.proto());
    assert_eq!(s.view().to_string_without_layout(), "f32[<=23,44,<=55]");
    assert_eq!(s.to_string(), "f32[<=23,44,<=55]{2,1,0}");
    // B1 f32[<=10,3]{1,0}
    check_shape(
        &make_shape_dynamic(T::F32, &[10, 3], &[true, false]).unwrap(),
        "f32[<=10,3]{1,0}",
        "10 0b 1a 02 0a 03 2a 07 0a 02 01 00 80 01 01 32 02 01 00",
    );
}

#[test]
fn make_shape_dynamic_errors() {
    let e = make_shape_dynamic(T::F32, &[2, 3], &[true]).unwrap_err();
    invalid_argument(&e, "dynamic dimensions size 1 did not match number of dimensions 2");
    invalid_argument(&make_shape_dynamic(T::F32, &[], &[false]).unwrap_err(), "dynamic dimensions size 1");
    // vectors.md 48: MakeValidatedShape(F32, {INT64_MIN, INT64_MIN}, {true, false}).
    let e = make_shape_dynamic(T::F32, &[MIN, MIN], &[true, false]).unwrap_err();
    assert_eq!(e, Error::InvalidDimension { path: "dimensions[1]".into(), index: 1, size: MIN });
    assert!(e.to_string().contains("invalid dimension size -9223372036854775808, is_dynamic=false"), "{e}");
    // A dynamic flag does not make a negative bound valid.
    let e = make_shape_dynamic(T::F32, &[-5], &[true]).unwrap_err();
    assert!(e.to_string().contains("invalid dimension size -5"), "{e}");
    // The flag count is checked before the element type.
    invalid_argument(&make_shape_dynamic(T::TUPLE, &[1], &[]).unwrap_err(), "dynamic dimensions size");
}

// ---------------------------------------------------------------------------------------------
// make_shape_with_dense_layout, make_shape_with_layout

#[test]
fn make_shape_with_dense_layout_results() {
    // vectors.md 29
    let s = make_shape_with_dense_layout(T::F32, &[123, 456], &[0, 1]).unwrap();
    assert_xla_form(s.proto());
    assert_eq!(s.to_string(), "f32[123,456]{0,1}");
    check_shape(&make_shape_with_dense_layout(T::F32, &[], &[]).unwrap(), "f32[]", "10 0b 2a 03 80 01 01");
    // INT64_MIN is unbounded dynamic here too.
    let s = make_shape_with_dense_layout(T::F32, &[MIN, 3], &[0, 1]).unwrap();
    assert_eq!(s.to_string(), "f32[?,3]{0,1}");
    assert_xla_form(s.proto());
}

#[test]
fn make_shape_with_dense_layout_errors() {
    let e = make_shape_with_dense_layout(T::F32, &[2, 3], &[0]).unwrap_err();
    invalid_argument(&e, "dimensions size is 2, but layout size is 1");
    // The length first, then the element type.
    invalid_argument(&make_shape_with_dense_layout(T::TUPLE, &[2], &[]).unwrap_err(), "dimensions size is 1");
    for t in NON_ARRAY {
        invalid_argument(&make_shape_with_dense_layout(t, &[], &[]).unwrap_err(), "unsupported element type");
    }
    // Dimensions before the layout.
    let e = make_shape_with_dense_layout(T::F32, &[-1, 2], &[0, 0]).unwrap_err();
    assert!(matches!(e, Error::InvalidDimension { index: 0, .. }), "{e:?}");
    // Then strict validation of the layout.
    let e = make_shape_with_dense_layout(T::F32, &[2, 3], &[1, 1]).unwrap_err();
    assert_eq!(layout_problem(&e, "layout.minor_to_major[1]"), LayoutProblem::MinorToMajorDuplicate { value: 1 });
    assert!(e.to_string().contains("duplicate values"));
    let e = make_shape_with_dense_layout(T::F32, &[2, 3], &[0, 2]).unwrap_err();
    assert_eq!(layout_problem(&e, "layout.minor_to_major[1]"), LayoutProblem::MinorToMajorOutOfBounds { value: 2 });
}

#[test]
fn make_shape_with_layout_fields_and_bytes() {
    // B1
    let tiled = LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]]);
    check_shape(
        &make_shape_with_layout(T::F32, &[3, 5], &tiled).unwrap(),
        "f32[3,5]{1,0:T(2,2)}",
        "10 0b 1a 02 03 05 2a 0d 0a 02 01 00 32 04 0a 02 02 02 80 01 01 32 02 00 00",
    );
    let two_tiles = LayoutSpec::new(&[1, 0]).tiles(&[&[2, 4], &[2, 1]]);
    check_shape(
        &make_shape_with_layout(T::F32, &[4, 8], &two_tiles).unwrap(),
        "f32[4,8]{1,0:T(2,4)(2,1)}",
        "10 0b 1a 02 04 08 2a 13 0a 02 01 00 32 04 0a 02 02 04 32 04 0a 02 02 01 80 01 01 32 02 00 00",
    );
    check_shape(
        &make_shape_with_layout(T::S4, &[8], &LayoutSpec::new(&[0]).element_size_in_bits(4)).unwrap(),
        "s4[8]{0:E(4)}",
        "10 15 1a 01 08 2a 08 0a 01 00 38 04 80 01 01 32 01 00",
    );
    // vectors.md 22: the combine dimension.
    let s =
        make_shape_with_layout(T::BF16, &[2, 3, 1004], &LayoutSpec::new(&[2, 1, 0]).tiles(&[&[2, MIN, 128]])).unwrap();
    assert_eq!(s.to_string(), "bf16[2,3,1004]{2,1,0:T(2,*,128)}");
    // Memory space, splits, a given tail padding (kept as given).
    let spec = LayoutSpec::new(&[0, 1]).memory_space(300).split_config(0, &[3]).tail_padding_alignment_in_elements(4);
    let s = make_shape_with_layout(T::F32, &[8, 8], &spec).unwrap();
    assert_eq!(s.to_string(), "f32[8,8]{0,1:L(4)S(300)SC(0:3)}");
    assert_eq!(s.proto().layout.as_ref().unwrap().tail_padding_alignment_in_elements, 4);
    assert_xla_form(s.proto());
    // Legacy padding.
    let spec = LayoutSpec::new(&[0, 1]).padded_dimensions(&[3, 5], PaddingValue::ZeroPad);
    let s = make_shape_with_layout(T::F32, &[2, 3], &spec).unwrap();
    assert_eq!(s.as_array().unwrap().padded_dimensions(), Some(&[3, 5][..]));
}

#[test]
fn make_shape_with_layout_normalizes_the_element_size() {
    // An element size of 8 × ByteWidth becomes 0; any other value is kept.
    let cases = [
        (T::F32, 32, 0),
        (T::F32, 16, 16),
        (T::F32, 64, 64),
        (T::S4, 8, 0),
        (T::S4, 4, 4),
        (T::PRED, 8, 0),
        (T::PRED, 1, 1),
        (T::C128, 128, 0),
        (T::F6E2M3FN, 8, 0),
        (T::F6E2M3FN, 6, 6),
        (T::F32, 0, 0),
    ];
    for (t, given, kept) in cases {
        let s = make_shape_with_layout(t, &[4], &LayoutSpec::new(&[0]).element_size_in_bits(given)).unwrap();
        assert_eq!(s.proto().layout.as_ref().unwrap().element_size_in_bits, kept, "{t} E({given})");
    }
}

#[test]
fn make_shape_with_layout_errors() {
    // MakeLayout's aborts become errors.
    let e =
        make_shape_with_layout(T::F32, &[2], &LayoutSpec::new(&[0]).tail_padding_alignment_in_elements(0)).unwrap_err();
    assert_eq!(
        layout_problem(&e, "layout.tail_padding_alignment_in_elements"),
        LayoutProblem::TailPadding { value: 0 }
    );
    let e = make_shape_with_layout(T::F32, &[2], &LayoutSpec::new(&[0]).tiles(&[&[-2]])).unwrap_err();
    assert_eq!(layout_problem(&e, "layout.tiles[0].dimensions[0]"), LayoutProblem::TileDimension { value: -2 });
    let s = make_shape_with_layout(T::F32, &[2], &LayoutSpec::new(&[0]).tiles(&[&[MIN]])).unwrap();
    assert_eq!(s.to_string(), "f32[2]{0:T(*)}");
    // Strict validation against the dimensions.
    let spec = LayoutSpec::new(&[1, 0]).padded_dimensions(&[1, 3], PaddingValue::ZeroPad);
    let e = make_shape_with_layout(T::F32, &[2, 3], &spec).unwrap_err();
    assert!(matches!(layout_problem(&e, "layout.padded_dimensions[0]"), LayoutProblem::PaddingTooSmall { .. }));
    let e = make_shape_with_layout(T::F32, &[2], &LayoutSpec::new(&[0]).element_size_in_bits(-1)).unwrap_err();
    assert!(matches!(e, Error::InvalidLayout { .. }));
    invalid_argument(
        &make_shape_with_layout(T::F32, &[2, 3], &LayoutSpec::new(&[0])).unwrap_err(),
        "dimensions size is 2, but layout size is 1",
    );
}

// ---------------------------------------------------------------------------------------------
// Scalars, tuples, tokens, buffers

#[test]
fn make_scalar_shape_has_an_empty_layout() {
    let s = make_scalar_shape(T::S32).unwrap();
    check_shape(&s, "s32[]", "10 04 2a 03 80 01 01");
    assert!(s.proto().layout.as_ref().unwrap().minor_to_major.is_empty());
}

#[test]
fn make_tuple_shapes() {
    // B1
    let t = make_tuple_shape(&[make_shape(T::F32, &[2]).unwrap(), make_scalar_shape(T::S32).unwrap()]).unwrap();
    check_shape(
        &t,
        "(f32[2]{0}, s32[])",
        "10 0d 22 10 10 0b 1a 01 02 2a 06 0a 01 00 80 01 01 32 01 00 22 07 10 04 2a 03 80 01 01",
    );
    check_shape(&make_tuple_shape(&[]).unwrap(), "()", "10 0d");
    // Optional-layout validation: elements may lack a layout.
    let bare = ShapeBuf::try_from_proto_optional_layout(ShapeProto {
        element_type: T::F32.as_i32(),
        dimensions: vec![2],
        ..ShapeProto::default()
    })
    .unwrap();
    let t = make_tuple_shape(std::slice::from_ref(&bare)).unwrap();
    assert_eq!(t.to_string(), "(f32[2])");
    assert!(ShapeBuf::try_from_proto(t.into_proto()).is_err());
}

#[test]
fn make_tuple_shape_depth() {
    // 64 levels are fine; the 65th fails with TooDeep at the first node beyond the limit.
    let mut shape = make_scalar_shape(T::F32).unwrap();
    for _ in 1..64 {
        shape = make_tuple_shape(&[shape]).unwrap();
    }
    let e = make_tuple_shape(&[shape.clone()]).unwrap_err();
    assert!(matches!(e, Error::TooDeep { limit: 64, .. }), "{e:?}");
    assert_eq!(e.path().unwrap().as_str(), vec!["tuple_shapes[0]"; 64].join("."));
    // A buffer and its array are two levels.
    let mut shape = make_buffer_shape(&make_scalar_shape(T::F32).unwrap()).unwrap();
    for _ in 2..64 {
        shape = make_tuple_shape(&[shape]).unwrap();
    }
    assert!(matches!(make_tuple_shape(&[shape]).unwrap_err(), Error::TooDeep { .. }));
}

#[test]
fn make_maybe_tuple_shapes() {
    let a = make_shape(T::F32, &[2]).unwrap();
    assert_eq!(make_maybe_tuple_shape(std::slice::from_ref(&a)).unwrap(), a);
    assert_eq!(make_maybe_tuple_shape(&[]).unwrap(), make_nil());
    assert_eq!(make_maybe_tuple_shape(&[a.clone(), a.clone()]).unwrap().to_string(), "(f32[2]{0}, f32[2]{0})");
    let t = make_tuple_shape(std::slice::from_ref(&a)).unwrap();
    assert_eq!(make_maybe_tuple_shape(std::slice::from_ref(&t)).unwrap(), t);
}

#[test]
fn make_nil_token_opaque() {
    // B1
    check_shape(&make_nil(), "()", "10 0d");
    check_shape(&make_token_shape(), "token[]", "10 11");
    check_shape(&make_opaque_shape(), "opaque[]", "10 0e");
    for s in [make_nil(), make_token_shape(), make_opaque_shape()] {
        assert_eq!(ShapeBuf::try_from_proto(s.clone().into_proto()).unwrap(), s);
    }
}

#[test]
fn make_buffer_shapes() {
    // B1
    let b = make_buffer_shape(&make_shape(T::S32, &[3, 4]).unwrap()).unwrap();
    check_shape(&b, "b(s32[3,4]{1,0})", "10 22 22 13 10 04 1a 02 03 04 2a 07 0a 02 01 00 80 01 01 32 02 00 00");
    assert_eq!(make_buffer_shape_from_dimensions(T::S32, &[3, 4]).unwrap(), b);
    assert_eq!(make_buffer_shape_from_dimensions(T::F32, &[8, 16]).unwrap().to_string(), "b(f32[8,16]{1,0})");
    // vectors.md 35: b(s32[]) is a valid buffer.
    assert_eq!(make_buffer_shape_from_dimensions(T::S32, &[]).unwrap().to_string(), "b(s32[])");
    // Only arrays can be wrapped.
    for s in [make_nil(), make_token_shape(), make_opaque_shape(), b.clone()] {
        invalid_argument(
            &make_buffer_shape(&s).unwrap_err(),
            "element_shape must be an array shape to create a buffer shape",
        );
    }
    assert!(matches!(make_buffer_shape_from_dimensions(T::F32, &[-1]).unwrap_err(), Error::InvalidDimension { .. }));
    invalid_argument(&make_buffer_shape_from_dimensions(T::TOKEN, &[]).unwrap_err(), "unsupported element type");
}

// ---------------------------------------------------------------------------------------------
// Layouts

#[test]
fn make_layout_results_and_bytes() {
    check_layout(&make_layout(&[1, 0]).unwrap(), "{1,0}", "0a 02 01 00 80 01 01");
    check_layout(&make_layout(&[]).unwrap(), "{}", "80 01 01");
    // B2
    check_layout(&LayoutSpec::new(&[0]).memory_space(1).build().unwrap(), "{0:S(1)}", "0a 01 00 40 01 80 01 01");
    check_layout(
        &LayoutSpec::new(&[1, 0]).tiles(&[&[MIN, 128]]).build().unwrap(),
        "{1,0:T(*,128)}",
        "0a 02 01 00 32 0e 0a 0c 80 80 80 80 80 80 80 80 80 01 80 01 80 01 01",
    );
    check_layout(
        &LayoutSpec::new(&[0, 1]).split_config(0, &[3]).split_config(1, &[0, 4]).build().unwrap(),
        "{0,1:SC(0:3)(1:0,4)}",
        "0a 02 00 01 80 01 01 8a 01 03 12 01 03 8a 01 06 08 01 12 02 00 04",
    );
    // vectors.md 17
    let l = LayoutSpec::new(&[3, 2, 1, 0])
        .tiles(&[&[42, 123], &[4, 5]])
        .tail_padding_alignment_in_elements(100)
        .element_size_in_bits(42)
        .build()
        .unwrap();
    assert_eq!(l.to_string(), "{3,2,1,0:T(42,123)(4,5)L(100)E(42)}");
}

#[test]
fn make_layout_errors() {
    // Tail padding below 1 (XLA: CHECK failure).
    for tail in [0, -1, MIN] {
        let e = LayoutSpec::new(&[0]).tail_padding_alignment_in_elements(tail).build().unwrap_err();
        assert_eq!(
            layout_problem(&e, "tail_padding_alignment_in_elements"),
            LayoutProblem::TailPadding { value: tail }
        );
        assert!(e.to_string().contains("tail_padding_alignment_in_elements field is <= 0"));
    }
    // Negative tile entries other than INT64_MIN (XLA: fatal), and 0.
    for value in [-1, -128, MIN + 1, 0] {
        let e = LayoutSpec::new(&[1, 0]).tiles(&[&[8, 128], &[2, value]]).build().unwrap_err();
        assert_eq!(layout_problem(&e, "tiles[1].dimensions[1]"), LayoutProblem::TileDimension { value });
        assert!(e.to_string().contains("invalid tiles"));
    }
    let e = LayoutSpec::new(&[0]).tiles(&[&[]]).build().unwrap_err();
    assert_eq!(layout_problem(&e, "tiles[0]"), LayoutProblem::EmptyTile);
    // minor_to_major: duplicates and negative entries.
    let e = make_layout(&[1, 1]).unwrap_err();
    assert_eq!(layout_problem(&e, "minor_to_major[1]"), LayoutProblem::MinorToMajorDuplicate { value: 1 });
    let e = make_layout(&[0, -1]).unwrap_err();
    assert_eq!(layout_problem(&e, "minor_to_major[1]"), LayoutProblem::MinorToMajorOutOfBounds { value: -1 });
    let e = LayoutSpec::new(&[0]).element_size_in_bits(-4).build().unwrap_err();
    assert_eq!(layout_problem(&e, "element_size_in_bits"), LayoutProblem::NegativeElementSize { value: -4 });
    // Legacy padding cannot be combined with tiles.
    let e = LayoutSpec::new(&[0]).tiles(&[&[2]]).padded_dimensions(&[4], PaddingValue::ZeroPad).build().unwrap_err();
    assert_eq!(layout_problem(&e, "padded_dimensions"), LayoutProblem::PaddingWithTiles);
}

#[test]
fn descending_and_ascending_layouts() {
    // vectors.md 71
    check_layout(&make_descending_layout(2), "{1,0}", "0a 02 01 00 80 01 01");
    assert_eq!(make_descending_layout(3).to_string(), "{2,1,0}");
    assert_eq!(make_descending_layout(4).to_string(), "{3,2,1,0}");
    assert_eq!(make_descending_layout(5).to_string(), "{4,3,2,1,0}");
    assert_eq!(make_descending_layout(1).to_string(), "{0}");
    check_layout(&make_descending_layout(0), "{}", "80 01 01");
    check_layout(&make_ascending_layout(5), "{0,1,2,3,4}", "0a 05 00 01 02 03 04 80 01 01");
    assert_eq!(make_ascending_layout(0).to_string(), "{}");
    // The default layout of make_shape is the descending one.
    for rank in 0..8 {
        let s = make_shape(T::F32, &vec![2; rank]).unwrap();
        assert_eq!(s.proto().layout.as_deref(), Some(make_descending_layout(rank).proto()));
    }
}

#[test]
fn layout_from_major_to_minor() {
    // vectors.md 76
    check_layout(&make_layout_from_major_to_minor(&[0, 1, 2]).unwrap(), "{2,1,0}", "0a 03 02 01 00 80 01 01");
    assert_eq!(make_layout_from_major_to_minor(&[1, 0]).unwrap().to_string(), "{0,1}");
    assert_eq!(make_layout_from_major_to_minor(&[]).unwrap().to_string(), "{}");
    // Errors point at the minor-to-major position of the bad entry.
    let e = make_layout_from_major_to_minor(&[0, 1, 1]).unwrap_err();
    assert_eq!(layout_problem(&e, "minor_to_major[1]"), LayoutProblem::MinorToMajorDuplicate { value: 1 });
    assert!(matches!(make_layout_from_major_to_minor(&[-1]).unwrap_err(), Error::InvalidLayout { .. }));
}

#[test]
fn padded_layouts() {
    // B3: m2m {0,1}, padded [3,5], ZERO_PAD (the seed example, current-era form).
    let l = make_padded_layout(&[0, 1], &[3, 5], PaddingValue::ZeroPad).unwrap();
    assert_eq!(l.to_string(), "{0,1}");
    assert_eq!(l.view().padded_dimensions(), Some(&[3, 5][..]));
    assert_eq!(l.view().padding_value(), PaddingValue::ZeroPad as i32);
    assert_eq!(l.proto().encode_to_vec(), bytes_from_hex("0a 02 00 01 12 02 03 05 18 01 80 01 01"));
}

#[test]
fn constructed_layouts_validate_against_their_shapes() {
    let shape = make_shape(T::F32, &[2, 3]).unwrap();
    for layout in
        [make_descending_layout(2), make_ascending_layout(2), make_layout_from_major_to_minor(&[1, 0]).unwrap()]
    {
        assert_eq!(xla_shape::validate::validate_layout_for_shape(layout.proto(), shape.proto()), Ok(()));
    }
}

#[test]
fn descending_layout_and_same_physical_layout() {
    // vectors.md 69
    let s = make_shape_with_dense_layout(T::F32, &[128, 24, 4, 48, 48], &[2, 4, 3, 1, 0]).unwrap();
    let d = xla_shape::util::make_shape_with_descending_layout_and_same_physical_layout(s.view()).unwrap();
    assert_eq!(d.to_string(), "f32[128,24,48,48,4]{4,3,2,1,0}");
    assert_xla_form(d.proto());
    assert!(ShapeBuf::try_from_proto(d.clone().into_proto()).is_ok());
    // Dynamic flags move with their dimensions; tiles, element size, tail padding and memory
    // space are kept; legacy padding moves with its dimensions.
    let s = make_shape_dynamic(T::S4, &[2, 3, MIN], &[true, false, true]).unwrap();
    let mut p = s.into_proto();
    let l = p.layout.as_mut().unwrap();
    l.minor_to_major = vec![0, 2, 1];
    l.tiles = vec![xla_shape::proto::TileProto { dimensions: vec![8, 128] }];
    l.element_size_in_bits = 4;
    l.tail_padding_alignment_in_elements = 0;
    l.memory_space = 5;
    let s = ShapeBuf::try_from_proto(p).unwrap();
    let d = xla_shape::util::make_shape_with_descending_layout_and_same_physical_layout(s.view()).unwrap();
    assert_eq!(d.to_string(), "s4[3,?,<=2]{2,1,0:T(8,128)E(4)S(5)}");
    assert_eq!(d.proto().layout.as_ref().unwrap().tail_padding_alignment_in_elements, 1);
    assert_xla_form(d.proto());
    let s = make_shape_with_layout(
        T::F32,
        &[2, 3],
        &LayoutSpec::new(&[0, 1]).padded_dimensions(&[3, 5], PaddingValue::OnePad),
    )
    .unwrap();
    let d = xla_shape::util::make_shape_with_descending_layout_and_same_physical_layout(s.view()).unwrap();
    assert_eq!(d.to_string(), "f32[3,2]{1,0}");
    let l = d.proto().layout.as_ref().unwrap();
    assert_eq!((l.padded_dimensions.as_slice(), l.padding_value), (&[5, 3][..], PaddingValue::OnePad as i32));
    assert!(ShapeBuf::try_from_proto(d.into_proto()).is_ok());
    // Without a layout nothing moves.
    let bare = ShapeProto { element_type: T::F32.as_i32(), dimensions: vec![2, 3], ..ShapeProto::default() };
    let view = xla_shape::Shape::try_new_optional_layout(&bare).unwrap();
    let d = xla_shape::util::make_shape_with_descending_layout_and_same_physical_layout(view).unwrap();
    assert_eq!(d.to_string(), "f32[2,3]{1,0}");
    assert_xla_form(d.proto());
}
