//! `xla-shape` used from outside: its proptest strategies drive the tests, its serde support
//! carries validated values as XLA text, and this crate's own proto embeds its types through
//! `extern_path`.

use proptest::prelude::*;
use prost::Message;
use serde::{Deserialize, Serialize};
use xla_shape::strategy::{self, ShapeConfig};
use xla_shape::{LayoutBuf, PhysicalMap, PrimitiveType, Shape, ShapeBuf, Tile, make};
use xla_shape_downstream::{Signature, TensorSpec};

/// A manifest a downstream tool might keep in JSON: validated values, human-readable.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Manifest {
    inputs: Vec<ShapeBuf>,
    device_layout: LayoutBuf,
    accumulator: PrimitiveType,
}

/// Shapes whose every field has XLA text (legacy padding has none).
fn printable() -> ShapeConfig {
    ShapeConfig { legacy_padding: false, ..ShapeConfig::everything() }
}

fn tensor(name: &str, shape: &ShapeBuf) -> TensorSpec {
    TensorSpec {
        name: name.to_owned(),
        shape: Some(shape.proto().clone()),
        device_layout: shape.as_array().and_then(|a| a.layout()).map(|l| l.proto().clone()),
        storage_type: shape.proto().element_type,
    }
}

proptest! {
    #[test]
    fn own_messages_carry_the_crates_shapes(s in strategy::shape(ShapeConfig::everything())) {
        let bytes = tensor("x", &s).encode_to_vec();
        let back = TensorSpec::decode(&bytes[..]).unwrap();
        // The embedded field is an `xla_shape::proto::ShapeProto`: validate it directly.
        let shape = Shape::try_new(back.shape.as_ref().unwrap()).unwrap();
        prop_assert_eq!(shape.to_owned_shape(), s.clone());
        // prost and the crate's strict codec agree on the embedded bytes.
        let embedded = xla_shape::encode(s.proto());
        prop_assert_eq!(xla_shape::decode::<xla_shape::proto::ShapeProto>(&embedded[..]).unwrap(), s.into_proto());
    }

    #[test]
    fn every_generated_index_has_a_slot((s, index) in strategy::array_shape_and_index(ShapeConfig::default())) {
        let map = PhysicalMap::new(s.as_array().unwrap()).unwrap();
        let slot = map.slot(&index).unwrap();
        prop_assert!(slot.0 < map.storage_slots());
        prop_assert_eq!(map.index_of_slot(slot).unwrap(), Some(index));
    }

    #[test]
    fn generated_layouts_and_tiles_are_valid(m2m in strategy::minor_to_major(4), tile in strategy::tile(3)) {
        let layout = make::make_layout(&m2m).unwrap();
        prop_assert_eq!(layout.view().minor_to_major(), &m2m[..]);
        prop_assert!(Tile::try_new(&tile).is_ok());
    }

    #[test]
    fn manifests_round_trip_through_json(
        inputs in proptest::collection::vec(strategy::shape(printable()), 0..4),
        m2m in strategy::minor_to_major(3),
        accumulator in strategy::array_element_type(),
    ) {
        let manifest = Manifest { inputs, device_layout: make::make_layout(&m2m).unwrap(), accumulator };
        let json = serde_json::to_string(&manifest).unwrap();
        prop_assert_eq!(serde_json::from_str::<Manifest>(&json).unwrap(), manifest);
    }

    #[test]
    fn signatures_round_trip_through_json(inputs in proptest::collection::vec(strategy::shape(ShapeConfig::everything()), 0..4)) {
        // Raw protos (and so the generated messages around them) serialize as structs, with
        // every field, legacy padding included.
        let signature = Signature {
            inputs: inputs.iter().map(|s| tensor("in", s)).collect(),
            outputs: Vec::new(),
            program_shape: None,
        };
        let json = serde_json::to_string(&signature).unwrap();
        prop_assert_eq!(serde_json::from_str::<Signature>(&json).unwrap(), signature);
    }
}

#[test]
fn manifest_json_is_xla_text() {
    let manifest = Manifest {
        inputs: vec!["f32[2,3]{0,1}".parse().unwrap(), "(s4[16]{0:E(4)}, token[])".parse().unwrap()],
        device_layout: "{1,0:T(8,128)(2,1)}".parse().unwrap(),
        accumulator: PrimitiveType::F32,
    };
    assert_eq!(
        serde_json::to_string(&manifest).unwrap(),
        r#"{"inputs":["f32[2,3]{0,1}","(s4[16]{0:E(4)}, token[])"],"device_layout":"{1,0:T(8,128)(2,1)}","accumulator":"f32"}"#
    );
    // An invalid shape in a manifest is refused at load time.
    let bad = r#"{"inputs":["f32[2,3]{0,0}"],"device_layout":"{0}","accumulator":"f32"}"#;
    assert!(serde_json::from_str::<Manifest>(bad).is_err());
}
