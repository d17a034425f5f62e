//! Feature `serde`: validated values as XLA text, raw protos as structs.

use proptest::prelude::*;
use xla_shape::proto::{LayoutProto, PaddingValue, ShapeProto, TileProto};
use xla_shape::strategy::{self, ShapeConfig};
use xla_shape::{Dim, LayoutBuf, PrimitiveType, Shape, ShapeBuf, Slot};

/// Whether any layout in the tree carries a legacy padding field, which XLA text cannot hold
/// (the strategies give a padded scalar an empty `padded_dimensions` and a padding value).
fn has_legacy_padding(shape: &ShapeProto) -> bool {
    shape.layout.as_ref().is_some_and(|l| !l.padded_dimensions.is_empty() || l.padding_value != 0)
        || shape.tuple_shapes.iter().any(has_legacy_padding)
}

proptest! {
    #[test]
    fn shapes_round_trip_as_text_unless_the_text_would_drop_a_field(s in strategy::shape(ShapeConfig::everything())) {
        match serde_json::to_string(&s) {
            Ok(json) => {
                prop_assert!(!has_legacy_padding(s.proto()), "{} serialized as {}", s, json);
                prop_assert_eq!(&json, &serde_json::to_string(&s.to_string()).unwrap());
                let back: ShapeBuf = serde_json::from_str(&json).unwrap();
                prop_assert_eq!(back, s);
            }
            Err(e) => {
                prop_assert!(has_legacy_padding(s.proto()), "{}: {}", s, e);
                prop_assert!(e.to_string().contains("legacy padd"), "{}", e);
            }
        }
    }

    #[test]
    fn raw_protos_round_trip_as_structs(s in strategy::shape(ShapeConfig::everything())) {
        let json = serde_json::to_string(s.proto()).unwrap();
        let back: ShapeProto = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&back, s.proto());
    }

    #[test]
    fn layouts_round_trip_as_text(s in strategy::array_shape(ShapeConfig { legacy_padding: false, ..ShapeConfig::default() })) {
        let layout = s.as_array().unwrap().layout().unwrap();
        let json = serde_json::to_string(&layout).unwrap();
        prop_assert_eq!(&json, &format!("\"{layout}\""));
        let back: LayoutBuf = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back.proto(), layout.proto());
    }
}

#[test]
fn views_serialize_like_owned_values() {
    let s: ShapeBuf = "(f32[2,3]{0,1}, s4[8]{0:E(4)}, token[])".parse().unwrap();
    let json = serde_json::to_string(&s.view()).unwrap();
    assert_eq!(json, r#""(f32[2,3]{0,1}, s4[8]{0:E(4)}, token[])""#);
    let array = s.view().as_tuple().unwrap().get(0).unwrap().as_array().unwrap();
    assert_eq!(serde_json::to_string(&array).unwrap(), r#""f32[2,3]{0,1}""#);
}

#[test]
fn deserializing_validates() {
    // vectors.md 1: a repeated minor_to_major entry.
    let err = serde_json::from_str::<ShapeBuf>(r#""f32[2,3]{0,0}""#).unwrap_err();
    assert!(err.to_string().contains("minor_to_major"), "{err}");
    // The raw parser would accept `T(0,2)`; the validated one does not (DV-11).
    assert!(serde_json::from_str::<LayoutBuf>(r#""{1,0:T(0,2)}""#).is_err());
    // Not a string at all.
    let err = serde_json::from_str::<ShapeBuf>("42").unwrap_err();
    assert!(err.to_string().contains("an XLA shape string"), "{err}");
    // A missing layout is filled in, as the parser does.
    let back: ShapeBuf = serde_json::from_str(r#""f32[2,3]""#).unwrap();
    assert_eq!(back.to_string(), "f32[2,3]{1,0}");
}

#[test]
fn a_shape_without_a_layout_comes_back_with_the_default_one() {
    let bare = ShapeProto { element_type: 11, dimensions: vec![2, 3], ..ShapeProto::default() };
    let bare = ShapeBuf::try_from_proto_optional_layout(bare).unwrap();
    let json = serde_json::to_string(&bare).unwrap();
    assert_eq!(json, r#""f32[2,3]""#);
    let back: ShapeBuf = serde_json::from_str(&json).unwrap();
    assert_eq!(back, xla_shape::make::make_shape(PrimitiveType::F32, &[2, 3]).unwrap());
}

#[test]
fn fields_without_text_are_errors_not_losses() {
    let layout = |edit: fn(&mut LayoutProto)| {
        let mut l = LayoutProto { minor_to_major: vec![1, 0], ..LayoutProto::default() };
        edit(&mut l);
        l
    };
    for (proto, field) in [
        (layout(|l| l.padded_dimensions = vec![3, 5]), "legacy padded_dimensions"),
        (layout(|l| l.padding_value = PaddingValue::HighestPad as i32), "legacy padding_value"),
        (layout(|l| l.dynamic_shape_metadata_prefix_bytes = -5), "negative dynamic_shape_metadata_prefix_bytes"),
    ] {
        let shape = ShapeProto {
            element_type: 11,
            dimensions: vec![2, 3],
            layout: Some(Box::new(proto.clone())),
            ..ShapeProto::default()
        };
        let shape = ShapeBuf::try_from_proto(shape).unwrap();
        let tuple = xla_shape::make::make_tuple_shape(std::slice::from_ref(&shape)).unwrap();
        for err in [
            serde_json::to_string(&LayoutBuf::try_from_proto(proto).unwrap()).unwrap_err(),
            serde_json::to_string(&shape).unwrap_err(),
            serde_json::to_string(&Shape::try_new(tuple.proto()).unwrap()).unwrap_err(),
        ] {
            assert!(err.to_string().contains(field), "{field}: {err}");
            assert!(err.to_string().contains("serialize its proto instead"), "{err}");
        }
    }
    // A positive M prints, so it survives.
    let s: ShapeBuf = "f32[2]{0:M(64)}".parse().unwrap();
    assert_eq!(serde_json::from_str::<ShapeBuf>(&serde_json::to_string(&s).unwrap()).unwrap(), s);
}

#[test]
fn element_types_are_text_names() {
    for &t in PrimitiveType::ALL {
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, format!("\"{}\"", t.name()));
        assert_eq!(serde_json::from_str::<PrimitiveType>(&json).unwrap(), t);
    }
    assert!(serde_json::from_str::<PrimitiveType>(r#""F32""#).is_err());
}

#[test]
fn numbers_stay_numbers() {
    assert_eq!(serde_json::to_string(&Dim(2)).unwrap(), "2");
    assert_eq!(serde_json::from_str::<Dim>("2").unwrap(), Dim(2));
    assert_eq!(serde_json::to_string(&Slot(17)).unwrap(), "17");
    assert_eq!(serde_json::from_str::<Slot>("17").unwrap(), Slot(17));
    assert!(serde_json::from_str::<Dim>("-1").is_err());
}

#[test]
fn raw_protos_keep_what_text_cannot() {
    // The legacy fields, a `*` tile and an out-of-range enum value all survive as structs.
    let layout = LayoutProto {
        minor_to_major: vec![0, 1],
        padded_dimensions: vec![3, 5],
        padding_value: 1,
        tiles: vec![TileProto { dimensions: vec![i64::MIN, 2] }],
        index_primitive_type: 999,
        ..LayoutProto::default()
    };
    let json = serde_json::to_string(&layout).unwrap();
    assert_eq!(serde_json::from_str::<LayoutProto>(&json).unwrap(), layout);
    // Missing fields take their protobuf defaults.
    let partial: ShapeProto = serde_json::from_str(r#"{"element_type": 11, "dimensions": [2, 3]}"#).unwrap();
    assert_eq!(partial, ShapeProto { element_type: 11, dimensions: vec![2, 3], ..ShapeProto::default() });
    assert!(Shape::try_new_optional_layout(&partial).is_ok());
}
