//! The codec against the byte vectors of spec `schema.md` §5 and `vectors.md` §8 (B1–B4), the
//! non-canonical and adversarial inputs, and the round-trip properties (README P4, P6).

use crate::common::bytes_from_hex;
use proptest::prelude::*;
use prost::Message;
use xla_shape::codec::{self, Decoded, NonCanonical, UnknownField, XlaMessage};
use xla_shape::error::{FieldPath, NonCanonicalKind, WireType};
use xla_shape::make::{self, LayoutSpec};
use xla_shape::proto::{LayoutProto, LiteralProto, PaddingValue, ProgramShapeProto, ShapeProto};
use xla_shape::strategy::{ShapeConfig, array_shape, shape};
use xla_shape::validate::{validate_layout, validate_layout_for_shape};
use xla_shape::{Error, Layout, PrimitiveType, ProgramShape, Shape, ShapeBuf};

/// Strict decode, an empty lenient report, and byte-identical re-encoding (README P6).
fn decode_canonical<M: XlaMessage + std::fmt::Debug + PartialEq>(bytes: &[u8]) -> M {
    let message: M = codec::decode(bytes).unwrap();
    let Decoded { message: lenient, report } = codec::decode_lenient::<M>(bytes).unwrap();
    assert_eq!(lenient, message);
    assert!(report.is_empty(), "{report}");
    assert_eq!(codec::encode(&message), bytes, "re-encoding");
    message
}

// ---------------------------------------------------------------------------------------------
// B1: decode → validate → print → encode, and the constructors give the same bytes.

/// vectors.md B1 (also schema.md §5): text, XLA's bytes, and the same shape built with `make`.
fn b1() -> Vec<(&'static str, &'static str, ShapeBuf)> {
    use PrimitiveType as T;
    let f32_2 = make::make_shape(T::F32, &[2]).unwrap();
    let s32 = make::make_scalar_shape(T::S32).unwrap();
    vec![
        (
            "f32[2,3]{1,0}",
            "10 0b 1a 02 02 03 2a 07 0a 02 01 00 80 01 01 32 02 00 00",
            make::make_shape(T::F32, &[2, 3]).unwrap(),
        ),
        ("f32[]", "10 0b 2a 03 80 01 01", make::make_scalar_shape(T::F32).unwrap()),
        ("token[]", "10 11", make::make_token_shape()),
        ("opaque[]", "10 0e", make::make_opaque_shape()),
        ("()", "10 0d", make::make_nil()),
        (
            "(f32[2]{0}, s32[])",
            "10 0d 22 10 10 0b 1a 01 02 2a 06 0a 01 00 80 01 01 32 01 00 22 07 10 04 2a 03 80 01 01",
            make::make_tuple_shape(&[f32_2, s32]).unwrap(),
        ),
        (
            "f32[3,5]{1,0:T(2,2)}",
            "10 0b 1a 02 03 05 2a 0d 0a 02 01 00 32 04 0a 02 02 02 80 01 01 32 02 00 00",
            make::make_shape_with_layout(T::F32, &[3, 5], &LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]])).unwrap(),
        ),
        (
            "f32[<=10,3]{1,0}",
            "10 0b 1a 02 0a 03 2a 07 0a 02 01 00 80 01 01 32 02 01 00",
            make::make_shape_dynamic(T::F32, &[10, 3], &[true, false]).unwrap(),
        ),
        (
            "f32[?,784]{1,0}",
            "10 0b 1a 0c 80 80 80 80 80 80 80 80 80 01 90 06 2a 07 0a 02 01 00 80 01 01 32 02 01 00",
            make::make_shape(T::F32, &[i64::MIN, 784]).unwrap(),
        ),
        (
            "s4[8]{0:E(4)}",
            "10 15 1a 01 08 2a 08 0a 01 00 38 04 80 01 01 32 01 00",
            make::make_shape_with_layout(T::S4, &[8], &LayoutSpec::new(&[0]).element_size_in_bits(4)).unwrap(),
        ),
        (
            "b(s32[3,4]{1,0})",
            "10 22 22 13 10 04 1a 02 03 04 2a 07 0a 02 01 00 80 01 01 32 02 00 00",
            make::make_buffer_shape(&make::make_shape(T::S32, &[3, 4]).unwrap()).unwrap(),
        ),
        (
            "f32[4,8]{1,0:T(2,4)(2,1)}",
            "10 0b 1a 02 04 08 2a 13 0a 02 01 00 32 04 0a 02 02 04 32 04 0a 02 02 01 80 01 01 32 02 00 00",
            make::make_shape_with_layout(T::F32, &[4, 8], &LayoutSpec::new(&[1, 0]).tiles(&[&[2, 4], &[2, 1]]))
                .unwrap(),
        ),
        (
            "f6e3m2fn[4]{0}",
            "10 23 1a 01 04 2a 06 0a 01 00 80 01 01 32 01 00",
            make::make_shape(T::F6E3M2FN, &[4]).unwrap(),
        ),
        (
            "f6e2m3fn[4]{0}",
            "10 24 1a 01 04 2a 06 0a 01 00 80 01 01 32 01 00",
            make::make_shape(T::F6E2M3FN, &[4]).unwrap(),
        ),
    ]
}

#[test]
fn b1_shapes_decode_validate_print_and_encode_byte_for_byte() {
    for (text, bytes, made) in b1() {
        let bytes = bytes_from_hex(bytes);
        let proto: ShapeProto = decode_canonical(&bytes);
        assert_eq!(&proto, made.proto(), "decoded fields of {text}");
        let shape = Shape::try_new(&proto).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(shape.to_string(), text);
        assert_eq!(proto.to_string(), text);
    }
}

#[test]
fn b1_constructors_give_xla_bytes() {
    for (text, bytes, made) in b1() {
        assert_eq!(codec::encode(made.proto()), bytes_from_hex(bytes), "{text}");
        assert_eq!(made.to_string(), text);
        // Already in XLA form: the conversion changes nothing.
        let mut converted = made.proto().clone();
        codec::to_xla_form(&mut converted).unwrap();
        assert_eq!(&converted, made.proto(), "{text}");
    }
}

#[test]
fn b1_decoded_fields() {
    // vectors.md B1, spelled out for the rows whose fields are least obvious.
    let dynamic: ShapeProto = decode_canonical(&bytes_from_hex(
        "10 0b 1a 0c 80 80 80 80 80 80 80 80 80 01 90 06 2a 07 0a 02 01 00 80 01 01 32 02 01 00",
    ));
    assert_eq!(dynamic.dimensions, [i64::MIN, 784]);
    assert_eq!(dynamic.is_dynamic_dimension, [true, false]);
    let layout = dynamic.layout.as_deref().unwrap();
    assert_eq!((layout.minor_to_major.as_slice(), layout.tail_padding_alignment_in_elements), (&[1, 0][..], 1));

    let s4: ShapeProto = decode_canonical(&bytes_from_hex("10 15 1a 01 08 2a 08 0a 01 00 38 04 80 01 01 32 01 00"));
    assert_eq!(s4.element_type, PrimitiveType::S4.as_i32());
    assert_eq!(s4.layout.as_deref().unwrap().element_size_in_bits, 4);

    let buffer: ShapeProto =
        decode_canonical(&bytes_from_hex("10 22 22 13 10 04 1a 02 03 04 2a 07 0a 02 01 00 80 01 01 32 02 00 00"));
    assert_eq!(buffer.element_type, PrimitiveType::BUFFER.as_i32());
    assert!(buffer.layout.is_none() && buffer.dimensions.is_empty());
    assert_eq!(buffer.tuple_shapes.len(), 1);
    assert_eq!(buffer.tuple_shapes[0].dimensions, [3, 4]);

    let scalar: ShapeProto = decode_canonical(&bytes_from_hex("10 0b 2a 03 80 01 01"));
    let layout = LayoutProto { tail_padding_alignment_in_elements: 1, ..LayoutProto::default() };
    assert_eq!(scalar, ShapeProto { element_type: 11, layout: Some(Box::new(layout)), ..ShapeProto::default() });
}

// ---------------------------------------------------------------------------------------------
// B2: layouts and program shapes.

#[test]
fn b2_layouts() {
    let rows = [
        (
            "{1,0:T(*,128)}",
            "0a 02 01 00 32 0e 0a 0c 80 80 80 80 80 80 80 80 80 01 80 01 80 01 01",
            LayoutSpec::new(&[1, 0]).tiles(&[&[i64::MIN, 128]]),
        ),
        ("{0:S(1)}", "0a 01 00 40 01 80 01 01", LayoutSpec::new(&[0]).memory_space(1)),
        (
            "{0,1:SC(0:3)(1:0,4)}",
            "0a 02 00 01 80 01 01 8a 01 03 12 01 03 8a 01 06 08 01 12 02 00 04",
            LayoutSpec::new(&[0, 1]).split_config(0, &[3]).split_config(1, &[0, 4]),
        ),
    ];
    for (text, bytes, spec) in rows {
        let bytes = bytes_from_hex(bytes);
        let proto: LayoutProto = decode_canonical(&bytes);
        let made = spec.build().unwrap();
        assert_eq!(&proto, made.proto(), "{text}");
        assert_eq!(codec::encode(made.proto()), bytes, "{text}");
        assert_eq!(Layout::try_new(&proto).unwrap().to_string(), text);
    }
    let tiled: LayoutProto =
        codec::decode(&bytes_from_hex("0a 02 01 00 32 0e 0a 0c 80 80 80 80 80 80 80 80 80 01 80 01 80 01 01")[..])
            .unwrap();
    assert_eq!(tiled.tiles[0].dimensions, [i64::MIN, 128]);
    let split: LayoutProto =
        codec::decode(&bytes_from_hex("0a 02 00 01 80 01 01 8a 01 03 12 01 03 8a 01 06 08 01 12 02 00 04")[..])
            .unwrap();
    assert_eq!(split.split_configs.len(), 2);
    assert_eq!((split.split_configs[0].dimension, split.split_configs[0].split_indices.as_slice()), (0, &[3][..]));
    assert_eq!((split.split_configs[1].dimension, split.split_configs[1].split_indices.as_slice()), (1, &[0, 4][..]));
}

#[test]
fn b2_program_shape() {
    let bytes = bytes_from_hex("0a 07 10 0b 2a 03 80 01 01 12 07 10 0b 2a 03 80 01 01 1a 01 78");
    let proto: ProgramShapeProto = decode_canonical(&bytes);
    let f32_scalar = make::make_scalar_shape(PrimitiveType::F32).unwrap().into_proto();
    let expected = ProgramShapeProto {
        parameters: vec![f32_scalar.clone()],
        result: Some(f32_scalar),
        parameter_names: vec!["x".into()],
    };
    assert_eq!(proto, expected);
    assert_eq!(codec::encode(&expected), bytes);
    assert_eq!(ProgramShape::try_new(&proto).unwrap().to_string(), "(x: f32[]) -> f32[]");
}

// ---------------------------------------------------------------------------------------------
// B3: non-canonical (at the XLA level) and legacy inputs. All are canonical protobuf, so they
// decode strictly and re-encode identically; nothing is added on decode.

#[test]
fn b3_minimal_shape_is_kept_minimal() {
    let bytes = bytes_from_hex("10 0b 1a 02 02 03 2a 04 0a 02 01 00");
    let mut proto: ShapeProto = decode_canonical(&bytes);
    assert!(proto.is_dynamic_dimension.is_empty());
    assert_eq!(proto.layout.as_deref().unwrap().tail_padding_alignment_in_elements, 0);
    assert_eq!(Shape::try_new(&proto).unwrap().to_string(), "f32[2,3]{1,0}");
    // Conversion to the XLA form only on request.
    codec::to_xla_form(&mut proto).unwrap();
    assert_eq!(codec::encode(&proto), bytes_from_hex("10 0b 1a 02 02 03 2a 07 0a 02 01 00 80 01 01 32 02 00 00"));
}

#[test]
fn b3_legacy_dense_shapes() {
    let rows = [
        (
            "10 0b 1a 02 02 03 2a 06 0a 02 01 00 20 01",
            "f32[2,3]{1,0}",
            "10 0b 1a 02 02 03 2a 07 0a 02 01 00 80 01 01 32 02 00 00",
        ),
        ("10 0b 2a 02 20 01", "f32[]", "10 0b 2a 03 80 01 01"),
    ];
    for (bytes, text, xla_form) in rows {
        let mut proto: ShapeProto = decode_canonical(&bytes_from_hex(bytes));
        assert_eq!(proto.layout.as_deref().unwrap().format, xla_shape::proto::Format::Dense as i32);
        assert_eq!(Shape::try_new(&proto).unwrap().to_string(), text);
        codec::to_xla_form(&mut proto).unwrap();
        assert_eq!(codec::encode(&proto), bytes_from_hex(xla_form), "{text} in XLA form");
    }
}

#[test]
fn b3_legacy_padded_shapes() {
    // The seed example: f32[2,3]{0,1}, padded [3,5], ZERO_PAD, DENSE.
    let seed: ShapeProto =
        decode_canonical(&bytes_from_hex("10 0b 1a 02 02 03 2a 0c 0a 02 00 01 12 02 03 05 18 01 20 01"));
    let layout = seed.layout.as_deref().unwrap();
    assert_eq!(layout.minor_to_major, [0, 1]);
    assert_eq!(layout.padded_dimensions, [3, 5]);
    assert_eq!(layout.padding_value, PaddingValue::ZeroPad as i32);
    let shape = Shape::try_new(&seed).unwrap();
    assert_eq!(shape.to_string(), "f32[2,3]{0,1}"); // padding is never printed
    assert_eq!(shape.as_array().unwrap().padded_dimensions(), Some(&[3, 5][..]));

    let wide: ShapeProto = decode_canonical(&bytes_from_hex("10 0b 1a 02 0a 14 2a 0a 0a 02 01 00 12 02 0f 15 20 01"));
    assert_eq!(wide.dimensions, [10, 20]);
    assert_eq!(wide.layout.as_deref().unwrap().padded_dimensions, [15, 21]);
    assert_eq!(Shape::try_new(&wide).unwrap().to_string(), "f32[10,20]{1,0}");
}

#[test]
fn b3_legacy_layouts() {
    let f32_2x3 = ShapeProto { element_type: 11, dimensions: vec![2, 3], ..ShapeProto::default() };
    let padded: LayoutProto = decode_canonical(&bytes_from_hex("0a 02 00 01 12 02 03 05 18 01 20 01"));
    assert_eq!(
        padded,
        LayoutProto {
            minor_to_major: vec![0, 1],
            padded_dimensions: vec![3, 5],
            padding_value: PaddingValue::ZeroPad as i32,
            format: 1,
            ..LayoutProto::default()
        }
    );
    validate_layout_for_shape(&padded, &f32_2x3).unwrap();

    // LEGACY sparse: format SPARSE, max_sparse_elements 10.
    let sparse: LayoutProto = decode_canonical(&bytes_from_hex("0a 01 00 20 02 28 0a"));
    assert_eq!((sparse.format, sparse.max_sparse_elements), (2, 10));
    let f32_10 = ShapeProto { element_type: 11, dimensions: vec![10], ..ShapeProto::default() };
    assert!(matches!(validate_layout_for_shape(&sparse, &f32_10), Err(Error::SparseUnsupported { .. })));
    assert!(matches!(validate_layout(&sparse), Err(Error::SparseUnsupported { .. })));

    // `{1,0:D(D,C)}` (2022–2025 era).
    let compressed: LayoutProto = decode_canonical(&bytes_from_hex("0a 02 01 00 4a 02 00 01 80 01 01"));
    assert_eq!(compressed.dim_level_types, [0, 1]);
    let f32_10x10 = ShapeProto { element_type: 11, dimensions: vec![10, 10], ..ShapeProto::default() };
    assert!(matches!(validate_layout_for_shape(&compressed, &f32_10x10), Err(Error::SparseUnsupported { .. })));

    // All-dense sparse-era lists: valid, kept on decode, dropped by the XLA form.
    let mut dense_lists: LayoutProto =
        decode_canonical(&bytes_from_hex("0a 02 01 00 6a 02 01 01 72 02 01 01 80 01 01"));
    assert_eq!(
        (dense_lists.dim_unique.as_slice(), dense_lists.dim_ordered.as_slice()),
        (&[true, true][..], &[true, true][..])
    );
    validate_layout_for_shape(&dense_lists, &f32_10x10).unwrap();
    codec::to_xla_form(&mut dense_lists).unwrap();
    assert_eq!(codec::encode(&dense_lists), bytes_from_hex("0a 02 01 00 80 01 01"));
}

#[test]
fn b3_negative_dimension_decodes_and_fails_validation() {
    // -1 is a 10-byte varint, which is canonical for a negative int64.
    let proto: ShapeProto = decode_canonical(&bytes_from_hex("10 0b 1a 0a ff ff ff ff ff ff ff ff ff 01"));
    assert_eq!(proto.dimensions, [-1]);
    assert!(matches!(Shape::try_new_optional_layout(&proto), Err(Error::InvalidDimension { index: 0, size: -1, .. })));
}

// ---------------------------------------------------------------------------------------------
// B4: unknown fields.

#[test]
fn b4_unknown_field_at_root() {
    let bytes = bytes_from_hex("10 0b 98 06 01");
    let err = codec::decode::<ShapeProto>(&bytes[..]).unwrap_err();
    assert_eq!(err, Error::UnknownField { path: FieldPath::root(), field_number: 99, wire_type: WireType::Varint });
    assert_eq!(err.path().unwrap().as_str(), "");

    let Decoded { message, report } = codec::decode_lenient::<ShapeProto>(&bytes[..]).unwrap();
    assert_eq!(message, ShapeProto { element_type: 11, ..ShapeProto::default() }); // no layout
    assert_eq!(Shape::try_new_optional_layout(&message).unwrap().to_string(), "f32[]");
    assert_eq!(
        report.unknown_fields,
        [UnknownField { path: FieldPath::root(), field_number: 99, wire_type: WireType::Varint }]
    );
    assert!(report.non_canonical.is_empty());
    assert!(!report.is_lossless() && report.is_canonical());
    assert_eq!(codec::encode(&message), bytes_from_hex("10 0b"));
}

#[test]
fn b4_reserved_rank_is_unknown() {
    let err = codec::decode::<ShapeProto>(&bytes_from_hex("08 02 10 0b")[..]).unwrap_err();
    assert_eq!(err, Error::UnknownField { path: FieldPath::root(), field_number: 1, wire_type: WireType::Varint });
}

#[test]
fn b4_nested_unknown_field() {
    let bytes = bytes_from_hex("10 0b 2a 03 98 06 01");
    let err = codec::decode::<ShapeProto>(&bytes[..]).unwrap_err();
    assert_eq!(err, Error::UnknownField { path: "layout".into(), field_number: 99, wire_type: WireType::Varint });
    let report = codec::decode_lenient::<ShapeProto>(&bytes[..]).unwrap().report;
    assert_eq!(report.unknown_fields[0].path.as_str(), "layout");

    // Deeper: in the layout of the second tuple element, and in a tile.
    let deep = bytes_from_hex("10 0d 22 02 10 0b 22 07 10 0b 2a 03 98 06 01 22 06 2a 04 32 02 10 01");
    let report = codec::decode_lenient::<ShapeProto>(&deep[..]).unwrap().report;
    let found: Vec<(&str, u32)> = report.unknown_fields.iter().map(|f| (f.path.as_str(), f.field_number)).collect();
    assert_eq!(found, [("tuple_shapes[1].layout", 99), ("tuple_shapes[2].layout.tiles[0]", 2)]);
    // A program shape's parameter and result.
    let program = bytes_from_hex("0a 02 08 01 12 03 98 06 01");
    let report = codec::decode_lenient::<ProgramShapeProto>(&program[..]).unwrap().report;
    let found: Vec<&str> = report.unknown_fields.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(found, ["parameters[0]", "result"]);
}

#[test]
fn unknown_fields_of_every_wire_type() {
    // Field 99 as fixed64, length-delimited, a group (with a nested field) and fixed32.
    let bytes =
        bytes_from_hex("10 0b 99 06 01 02 03 04 05 06 07 08 9a 06 02 aa bb 9b 06 08 01 9c 06 9d 06 01 02 03 04");
    let Decoded { message, report } = codec::decode_lenient::<ShapeProto>(&bytes[..]).unwrap();
    assert_eq!(message.element_type, 11);
    let types: Vec<WireType> = report.unknown_fields.iter().map(|f| f.wire_type).collect();
    assert_eq!(types, [WireType::Fixed64, WireType::Len, WireType::StartGroup, WireType::Fixed32]);
    assert!(matches!(
        codec::decode::<ShapeProto>(&bytes[..]),
        Err(Error::UnknownField { wire_type: WireType::Fixed64, .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// Non-canonical encodings: each kind, strict error and lenient report.

/// (bytes, path, field number, kind) for `ShapeProto`.
const NON_CANONICAL: &[(&str, &str, u32, NonCanonicalKind)] = &[
    ("10 0b 18 02 18 03", "dimensions", 3, NonCanonicalKind::Unpacked),
    ("10 00", "element_type", 2, NonCanonicalKind::ExplicitDefault),
    ("10 0b 2a 02 38 00", "layout.element_size_in_bits", 7, NonCanonicalKind::ExplicitDefault),
    ("90 00 0b", "element_type", 2, NonCanonicalKind::OverlongVarint),
    ("10 8b 00", "element_type", 2, NonCanonicalKind::OverlongVarint),
    ("10 0b 1a 82 00 02 03", "dimensions", 3, NonCanonicalKind::OverlongVarint),
    ("10 0b 1a 03 02 83 00", "dimensions[1]", 3, NonCanonicalKind::OverlongVarint),
    ("10 0b 1a 0a 80 80 80 80 80 80 80 80 80 00", "dimensions[0]", 3, NonCanonicalKind::OverlongVarint),
    ("10 0d 22 82 00 10 0b", "tuple_shapes[0]", 4, NonCanonicalKind::OverlongVarint),
    ("1a 01 02 10 0b", "element_type", 2, NonCanonicalKind::OutOfOrder),
    ("10 0b 10 0b", "element_type", 2, NonCanonicalKind::Repeated),
    ("10 0b 2a 00 2a 00", "layout", 5, NonCanonicalKind::Repeated),
    ("10 0b 1a 00", "dimensions", 3, NonCanonicalKind::EmptyPacked),
    ("10 0b 1a 01 02 1a 01 03", "dimensions", 3, NonCanonicalKind::Split),
    ("10 0d 22 02 10 0b 2a 00 22 02 10 0b", "tuple_shapes", 4, NonCanonicalKind::Split),
    ("10 ff ff ff ff 0f", "element_type", 2, NonCanonicalKind::ValueOutOfRange),
    ("10 0b 1a 01 02 32 01 02", "is_dynamic_dimension[0]", 6, NonCanonicalKind::ValueOutOfRange),
    ("10 0b 2a 03 4a 01 00 2a 00", "layout", 5, NonCanonicalKind::Repeated),
];

#[test]
fn non_canonical_encodings_are_reported() {
    for &(bytes, path, field_number, kind) in NON_CANONICAL {
        let input = bytes_from_hex(bytes);
        let expected = NonCanonical { path: path.into(), field_number, kind };
        assert_eq!(codec::decode::<ShapeProto>(&input[..]).unwrap_err(), Error::from(expected.clone()), "{bytes}");
        let Decoded { message, report } = codec::decode_lenient::<ShapeProto>(&input[..]).unwrap();
        assert!(report.non_canonical.contains(&expected), "{bytes}: {report}");
        assert!(report.is_lossless(), "{bytes}");
        assert_ne!(codec::encode(&message), input, "{bytes}");
        assert_eq!(message, ShapeProto::decode(&input[..]).unwrap(), "{bytes}: same message as prost");
    }
}

#[test]
fn negative_values_are_canonical_at_ten_bytes() {
    // int64 -1 and an enum -1 (sign-extended to 64 bits) are minimal at 10 bytes.
    let bytes = bytes_from_hex("10 ff ff ff ff ff ff ff ff ff 01 1a 0a ff ff ff ff ff ff ff ff ff 01");
    let proto: ShapeProto = decode_canonical(&bytes);
    assert_eq!((proto.element_type, proto.dimensions.as_slice()), (-1, &[-1][..]));
}

#[test]
fn non_canonical_findings_are_listed_once_per_field() {
    // Three unpacked dimensions, each with an over-long varint: one entry per kind.
    let report = codec::decode_lenient::<ShapeProto>(&bytes_from_hex("18 82 00 18 83 00 18 84 00")[..]).unwrap().report;
    let kinds: Vec<(&str, NonCanonicalKind)> = report.non_canonical.iter().map(|f| (f.path.as_str(), f.kind)).collect();
    assert_eq!(
        kinds,
        [("dimensions", NonCanonicalKind::Unpacked), ("dimensions[0]", NonCanonicalKind::OverlongVarint)]
    );
}

#[test]
fn report_is_capped_but_counts_everything() {
    let mut bytes = vec![0x10, 0x0b];
    for _ in 0..3000 {
        bytes.extend_from_slice(&[0x98, 0x06, 0x01]);
    }
    let report = codec::decode_lenient::<ShapeProto>(&bytes[..]).unwrap().report;
    assert_eq!(report.unknown_fields.len(), codec::MAX_REPORTED);
    assert_eq!(report.omitted_unknown_fields, 3000 - codec::MAX_REPORTED);
    assert!(report.to_string().ends_with(&format!("... and {} more unknown fields\n", 3000 - codec::MAX_REPORTED)));
}

#[test]
fn decode_accepts_slices_bytes_and_chained_bufs() {
    use bytes::Buf;
    let bytes = bytes_from_hex("10 0b 2a 03 80 01 01");
    let from_slice: ShapeProto = codec::decode(&bytes[..]).unwrap();
    let from_bytes: ShapeProto = codec::decode(bytes::Bytes::from(bytes.clone())).unwrap();
    let chained: ShapeProto = codec::decode((&bytes[..3]).chain(&bytes[3..])).unwrap();
    assert_eq!(from_slice, from_bytes);
    assert_eq!(from_slice, chained);
    let lenient = codec::decode_lenient::<ShapeProto>((&bytes[..1]).chain(&bytes[1..])).unwrap();
    assert_eq!(lenient.message, from_slice);

    let mut out = bytes::BytesMut::new();
    codec::encode_to(&from_slice, &mut out).unwrap();
    assert_eq!(out.as_ref(), bytes);
    assert_eq!(xla_shape::encode(&from_slice), bytes);
}

// ---------------------------------------------------------------------------------------------
// Adversarial inputs: typed errors, never a panic.

fn decode_error(bytes: &[u8]) -> String {
    let strict = codec::decode::<ShapeProto>(bytes).unwrap_err();
    let lenient = codec::decode_lenient::<ShapeProto>(bytes).unwrap_err();
    assert_eq!(strict, lenient);
    assert!(ShapeProto::decode(bytes).is_err(), "prost rejects it too");
    match strict {
        Error::Decode(e) if e.message == "ShapeProto" => e.reason,
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[test]
fn malformed_bytes_are_decode_errors() {
    let cases = [
        ("10", "truncated varint"),
        ("10 80", "truncated varint"),
        ("10 0b 1a 80", "truncated varint"),
        ("1a 03 02 03", "length 3 exceeds the 2 remaining bytes at dimensions"),
        ("1a 01 80", "packed field ends inside a varint at dimensions"),
        ("10 80 80 80 80 80 80 80 80 80 80 00", "exceeds 64 bits"),
        ("10 ff ff ff ff ff ff ff ff ff 02", "exceeds 64 bits"),
        ("80 80 80 80 10", "field key 4294967296 exceeds 32 bits"),
        ("0e", "invalid wire type 6"),
        ("0f", "invalid wire type 7"),
        ("16", "invalid wire type 6"),
        ("00", "invalid field number 0"),
        ("02 00", "invalid field number 0"),
        ("13 14", "wire type is start-group, expected varint (field 2) at element_type"),
        ("1c", "wire type is end-group, expected varint (field 3) at dimensions"),
        ("12 01 0b", "wire type is length-delimited, expected varint (field 2) at element_type"),
        ("25 00 00 00 00", "wire type is fixed32, expected length-delimited (field 4) at tuple_shapes"),
        ("9c 06", "unexpected end-group tag (field 99)"),
        ("9b 06 08 01", "truncated varint in a field key"),
        ("9b 06 a4 06", "group 99 ends with an end-group tag 100"),
        ("99 06 01 02", "field 99 needs 8 bytes"),
        ("9d 06 01", "field 99 needs 4 bytes"),
        ("22 80 80 80 80 08", "length 2147483648 exceeds the 0 remaining bytes at tuple_shapes[0]"),
        ("1a 80 80 80 80 08 01", "length 2147483648 exceeds the 1 remaining bytes at dimensions"),
        ("9a 06 ff ff ff ff 07", "length 2147483647 exceeds"),
        ("22 03 10 0b 1a", "truncated varint in a length at tuple_shapes[0]"),
        ("10 0b 2a 04 0a 05 01 00", "length 5 exceeds the 2 remaining bytes at layout.minor_to_major"),
    ];
    for (bytes, expected) in cases {
        let reason = decode_error(&bytes_from_hex(bytes));
        assert!(reason.contains(expected), "{bytes}: {reason:?} lacks {expected:?}");
    }
}

#[test]
fn invalid_utf8_parameter_name_is_a_decode_error() {
    let bytes = bytes_from_hex("12 00 1a 01 ff");
    let err = codec::decode::<ProgramShapeProto>(&bytes[..]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid protobuf encoding of ProgramShapeProto: string is not valid UTF-8 at parameter_names[0]"
    );
    assert!(ProgramShapeProto::decode(&bytes[..]).is_err());
}

/// `levels` tuples nested inside one another (the innermost is `()`).
fn nested_tuples(levels: usize) -> Vec<u8> {
    let mut bytes = vec![0x10, 0x0d];
    for _ in 0..levels {
        let mut outer = vec![0x10, 0x0d, 0x22];
        prost::encoding::encode_varint(bytes.len() as u64, &mut outer);
        outer.extend_from_slice(&bytes);
        bytes = outer;
    }
    bytes
}

#[test]
fn nesting_stops_at_prosts_recursion_limit() {
    // 100 nested messages below the root decode (as in prost); 101 do not.
    let at_limit = nested_tuples(codec::RECURSION_LIMIT as usize);
    let proto: ShapeProto = codec::decode(&at_limit[..]).unwrap();
    assert!(ShapeProto::decode(&at_limit[..]).is_ok());
    assert_eq!(codec::encode(&proto), at_limit);
    // Deeper than the crate's own depth limit, so validation rejects it.
    assert!(matches!(Shape::try_new(&proto), Err(Error::TooDeep { limit: 64, .. })));
    assert!(matches!(codec::to_xla_form(&mut proto.clone()), Err(Error::TooDeep { limit: 64, .. })));

    let reason = decode_error(&nested_tuples(codec::RECURSION_LIMIT as usize + 1));
    assert_eq!(reason, "recursion limit reached: more than 100 nested messages");
    let reason = decode_error(&nested_tuples(2000));
    assert_eq!(reason, "recursion limit reached: more than 100 nested messages");

    // prost also refuses any unknown field (even a varint) in a message at the limit.
    let mut innermost_unknown = vec![0x10, 0x0d, 0x98, 0x06, 0x01];
    for _ in 0..codec::RECURSION_LIMIT {
        let mut outer = vec![0x22];
        prost::encoding::encode_varint(innermost_unknown.len() as u64, &mut outer);
        outer.extend_from_slice(&innermost_unknown);
        innermost_unknown = outer;
    }
    decode_error(&innermost_unknown);
}

#[test]
fn deeply_nested_unknown_groups_are_bounded() {
    // 2000 nested start-group tags of field 99: prost's limit applies to groups too.
    let bytes: Vec<u8> = std::iter::repeat_n([0x9b, 0x06], 2000).flatten().collect();
    assert_eq!(decode_error(&bytes), "recursion limit reached: more than 100 nested messages");
}

// ---------------------------------------------------------------------------------------------
// Large valid inputs.

#[test]
fn rank_5000_shape() {
    let made = make::make_shape(PrimitiveType::F32, &vec![1; 5000]).unwrap();
    let bytes = codec::encode(made.proto());
    let proto: ShapeProto = decode_canonical(&bytes);
    assert_eq!(&proto, made.proto());
    assert_eq!(Shape::try_new(&proto).unwrap().as_array().unwrap().rank(), 5000);
}

#[test]
fn tuple_of_10000_elements() {
    let scalar = make::make_scalar_shape(PrimitiveType::S32).unwrap();
    let made = make::make_tuple_shape(&vec![scalar; 10_000]).unwrap();
    let bytes = codec::encode(made.proto());
    let proto: ShapeProto = decode_canonical(&bytes);
    assert_eq!(proto.tuple_shapes.len(), 10_000);
    assert!(Shape::try_new(&proto).is_ok());
}

#[test]
fn layout_with_2000_tiles() {
    let tiles = vec![&[1i64, 1][..]; 2000];
    let made =
        make::make_shape_with_layout(PrimitiveType::F32, &[4, 4], &LayoutSpec::new(&[1, 0]).tiles(&tiles)).unwrap();
    let bytes = codec::encode(made.proto());
    let proto: ShapeProto = decode_canonical(&bytes);
    assert_eq!(proto.layout.as_deref().unwrap().tiles.len(), 2000);
    assert!(Shape::try_new(&proto).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Properties.

/// A varint of `value`, padded with `extra` redundant continuation bytes (over-long, and past 10
/// bytes invalid).
fn varint(value: u64, extra: usize) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_varint(value, &mut out);
    for _ in 0..extra {
        if let Some(last) = out.last_mut() {
            *last |= 0x80;
        }
        out.push(0);
    }
    out
}

/// Field records that are mostly valid protobuf over the field numbers of all five messages,
/// with nested messages, unknown fields and the usual non-canonical spellings.
fn records(depth: u32) -> BoxedStrategy<Vec<u8>> {
    let value =
        prop_oneof![4 => 0u64..20, 1 => any::<u64>(), 1 => Just(u64::MAX), 1 => (0u64..4).prop_map(|v| v << 31)];
    let extra = prop_oneof![6 => Just(0usize), 1 => 1usize..3];
    let field = prop_oneof![8 => 1u64..=17, 1 => 18u64..=100];
    let scalar = (field.clone(), value.clone(), extra.clone()).prop_map(|(f, v, e)| {
        let mut out = varint(f << 3, 0);
        out.extend(varint(v, e));
        out
    });
    let packed = (field.clone(), proptest::collection::vec((value, extra.clone()), 0..4)).prop_map(|(f, values)| {
        let payload: Vec<u8> = values.into_iter().flat_map(|(v, e)| varint(v, e)).collect();
        let mut out = varint(f << 3 | 2, 0);
        out.extend(varint(payload.len() as u64, 0));
        out.extend(payload);
        out
    });
    let leaf = prop_oneof![4 => scalar, 3 => packed].boxed();
    let record = if depth == 0 {
        leaf
    } else {
        let nested = (field, records(depth - 1), extra).prop_map(|(f, body, e)| {
            let mut out = varint(f << 3 | 2, 0);
            out.extend(varint(body.len() as u64, e));
            out.extend(body);
            out
        });
        prop_oneof![3 => leaf, 1 => nested].boxed()
    };
    proptest::collection::vec(record, 0..6).prop_map(|parts| parts.concat()).boxed()
}

/// Byte-level mutations of a valid encoding: flip, insert, delete, truncate, duplicate.
fn mutated(encoding: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = encoding.len();
    proptest::collection::vec((0u8..5, 0..=len, any::<u8>()), 1..4).prop_map(move |ops| {
        let mut bytes = encoding.clone();
        for (op, at, byte) in ops {
            let at = at.min(bytes.len());
            match op {
                0 if at < bytes.len() => bytes[at] ^= byte | 1,
                1 => bytes.insert(at, byte),
                2 if at < bytes.len() => {
                    bytes.remove(at);
                }
                3 => bytes.truncate(at),
                _ => {
                    let end = (at + usize::from(byte % 8)).min(bytes.len());
                    let copy = bytes[at..end].to_vec();
                    bytes.splice(at..at, copy);
                }
            }
        }
        bytes
    })
}

/// What must hold for any bytes and any of the three messages.
fn check_any_bytes<M: XlaMessage + std::fmt::Debug + PartialEq>(bytes: &[u8]) -> Result<(), TestCaseError> {
    let lenient = codec::decode_lenient::<M>(bytes);
    let strict = codec::decode::<M>(bytes);
    let prost = M::decode(bytes);
    match (&lenient, &prost) {
        (Ok(decoded), Ok(raw)) => {
            // Compared through their encodings: a literal's float values may be NaN.
            prop_assert_eq!(codec::encode(&decoded.message), codec::encode(raw));
            // Nothing lost: an empty report exactly when re-encoding gives the input back.
            let reencoded = codec::encode(&decoded.message);
            prop_assert_eq!(decoded.report.is_empty(), reencoded == bytes, "{}", decoded.report);
            prop_assert_eq!(strict.is_ok(), decoded.report.is_empty());
            if let Err(err) = &strict {
                prop_assert!(matches!(err, Error::UnknownField { .. } | Error::NonCanonical { .. }), "{err:?}");
            }
            // Re-encoded bytes are canonical.
            let again = codec::decode_lenient::<M>(&reencoded[..]).unwrap();
            prop_assert!(again.report.is_empty());
        }
        (Err(err), Err(_)) => {
            prop_assert!(matches!(err, Error::Decode { .. }), "{err:?}");
            prop_assert_eq!(strict.as_ref().err(), Some(err));
        }
        _ => prop_assert!(false, "scanner and prost disagree: {:?} vs {:?}", lenient.as_ref().err(), prost.err()),
    }
    Ok(())
}

/// Validation, printing and the XLA-form conversion never panic on decoded garbage.
fn exercise(bytes: &[u8]) {
    if let Ok(Decoded { mut message, .. }) = codec::decode_lenient::<ShapeProto>(bytes) {
        if let Ok(shape) = Shape::try_new_optional_layout(&message) {
            let _ = shape.to_string();
        }
        let _ = Shape::try_new(&message);
        let _ = codec::to_xla_form(&mut message);
    }
    if let Ok(Decoded { mut message, .. }) = codec::decode_lenient::<LayoutProto>(bytes) {
        if validate_layout(&message).is_ok() {
            let _ = message.to_string();
        }
        let _ = codec::to_xla_form(&mut message);
    }
    if let Ok(Decoded { mut message, .. }) = codec::decode_lenient::<ProgramShapeProto>(bytes) {
        if let Ok(program) = ProgramShape::try_new_optional_layout(&message) {
            let _ = program.to_string();
        }
        let _ = codec::to_xla_form(&mut message);
    }
}

fn check_all(bytes: &[u8]) -> Result<(), TestCaseError> {
    check_any_bytes::<ShapeProto>(bytes)?;
    check_any_bytes::<LayoutProto>(bytes)?;
    check_any_bytes::<ProgramShapeProto>(bytes)?;
    check_any_bytes::<LiteralProto>(bytes)?;
    exercise(bytes);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn valid_shapes_round_trip(s in shape(ShapeConfig::everything())) {
        let bytes = codec::encode(s.proto());
        let decoded: ShapeProto = codec::decode(&bytes[..]).unwrap();
        prop_assert_eq!(&decoded, s.proto());
        prop_assert_eq!(&codec::encode(&decoded), &bytes);
        let report = codec::decode_lenient::<ShapeProto>(&bytes[..]).unwrap().report;
        prop_assert!(report.is_empty());
        prop_assert!(Shape::try_new(&decoded).is_ok());
        // Constructors already build the XLA form.
        let mut converted = decoded.clone();
        codec::to_xla_form(&mut converted).unwrap();
        prop_assert_eq!(&converted, s.proto());
    }

    #[test]
    fn minimal_arrays_gain_only_the_xla_form(s in array_shape(ShapeConfig::default())) {
        // Strip what the XLA form adds; decoding keeps it stripped, conversion restores it.
        let mut minimal = s.proto().clone();
        if !minimal.is_dynamic_dimension.iter().any(|&d| d) {
            minimal.is_dynamic_dimension.clear();
        }
        if let Some(layout) = minimal.layout.as_deref_mut() {
            if layout.tail_padding_alignment_in_elements == 1 {
                layout.tail_padding_alignment_in_elements = 0;
            }
        }
        let bytes = codec::encode(&minimal);
        let mut decoded: ShapeProto = codec::decode(&bytes[..]).unwrap();
        prop_assert_eq!(&decoded, &minimal);
        prop_assert!(Shape::try_new(&decoded).is_ok());
        codec::to_xla_form(&mut decoded).unwrap();
        prop_assert_eq!(&decoded, s.proto());
    }

    #[test]
    fn any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        check_all(&bytes)?;
    }

    #[test]
    fn generated_records(bytes in records(2)) {
        check_all(&bytes)?;
    }

    #[test]
    fn mutated_valid_encodings(bytes in shape(ShapeConfig::everything()).prop_flat_map(|s| mutated(codec::encode(s.proto())))) {
        check_all(&bytes)?;
    }
}

// ---------------------------------------------------------------------------------------------
// LiteralProto: the scanner knows its fields (ints, floats, bytes, nested literals).

#[test]
fn literal_decodes_wire_exact() {
    // LiteralProto { shape: f32[2]{0}, f32s: [1.5, -2] }, as XLA writes it.
    let shape = codec::encode(make::make_shape(PrimitiveType::F32, &[2]).unwrap().proto());
    let mut bytes = vec![0x0a, u8::try_from(shape.len()).unwrap()];
    bytes.extend_from_slice(&shape);
    bytes.extend_from_slice(&[0x42, 0x08, 0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0xc0]);
    let literal: LiteralProto = decode_canonical(&bytes);
    assert_eq!(literal.f32s, [1.5, -2.0]);

    // Unpacked floats (wire type 5), then an unknown field 99 inside a tuple element.
    let unpacked = [0x45, 0x00, 0x00, 0xc0, 0x3f, 0x45, 0x00, 0x00, 0x00, 0xc0];
    let decoded = codec::decode_lenient::<LiteralProto>(&unpacked[..]).unwrap();
    assert_eq!(decoded.message.f32s, [1.5, -2.0]);
    assert_eq!(decoded.report.non_canonical[0].kind, NonCanonicalKind::Unpacked);
    assert_eq!(decoded.report.non_canonical[0].path.as_str(), "f32s");
    let nested = [0x52, 0x03, 0x98, 0x06, 0x01];
    let err = codec::decode::<LiteralProto>(&nested[..]).unwrap_err();
    assert_eq!(err.to_string(), "unknown field 99 (varint) at tuple_literals[0]");

    // Fields 32-36 still take part in the order check: f6e2m3fns (36), then f4e2m1fns (32).
    let out_of_order = [0xa2, 0x02, 0x01, 0x00, 0x82, 0x02, 0x01, 0x00];
    let report = codec::decode_lenient::<LiteralProto>(&out_of_order[..]).unwrap().report;
    assert_eq!(report.non_canonical[0].kind, NonCanonicalKind::OutOfOrder);
    assert_eq!(report.non_canonical[0].path.as_str(), "f4e2m1fns"); // 36 then 32

    // A packed float field that ends inside a value: prost rejects it, and so does the scanner.
    let broken = [0x42, 0x03, 0x00, 0x00, 0x00];
    assert!(LiteralProto::decode(&broken[..]).is_err());
    assert!(matches!(codec::decode::<LiteralProto>(&broken[..]), Err(Error::Decode { .. })));
    // An out-of-range int32 (prost truncates it) and a uint32 above 2^32.
    let wide = [0x22, 0x05, 0xff, 0xff, 0xff, 0xff, 0x1f];
    let report = codec::decode_lenient::<LiteralProto>(&wide[..]).unwrap().report;
    assert_eq!(report.non_canonical[0].kind, NonCanonicalKind::ValueOutOfRange);
    let wide_u32 = [0x32, 0x05, 0x80, 0x80, 0x80, 0x80, 0x10];
    let report = codec::decode_lenient::<LiteralProto>(&wide_u32[..]).unwrap().report;
    assert_eq!(report.non_canonical[0].kind, NonCanonicalKind::ValueOutOfRange);
}
