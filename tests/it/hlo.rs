//! Real HLO modules from jaxlib (tests/fixtures/hlo): every shape they hold decodes, validates,
//! and prints exactly as XLA printed it in the module text.

use crate::common::length_delimited_field_1;
use std::fs;
use std::path::Path;

use xla_shape::Shape;
use xla_shape::hlo::{HloMessage, ShapeSite, decode_module, shapes};

const MODULES: [&str; 5] = ["matmul", "conv2d", "reduction", "tuple", "outfeed_custom_call"];

fn fixture(name: &str) -> Vec<u8> {
    fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hlo").join(name)).unwrap()
}

/// `computation / instruction / shape` lines as XLA printed them.
fn xla_instruction_shapes(name: &str) -> Vec<(String, String, String)> {
    String::from_utf8(fixture(&format!("{name}.shapes.txt")))
        .unwrap()
        .lines()
        .map(|line| {
            let mut parts = line.splitn(3, " / ");
            let mut next = || parts.next().unwrap().to_owned();
            (next(), next(), next())
        })
        .collect()
}

#[test]
fn instruction_shapes_print_as_xla_prints_them() {
    for name in MODULES {
        let module = decode_module(&fixture(&format!("{name}.pb")), HloMessage::Module).unwrap();
        let found = shapes(&module);
        let ours: Vec<(String, String, String)> = found
            .iter()
            .filter_map(|s| match s.site {
                ShapeSite::Instruction { computation, instruction, .. } => {
                    let shape = Shape::try_new(s.shape).unwrap_or_else(|e| panic!("{name}: {}: {e}", s.site));
                    Some((computation.to_owned(), instruction.to_owned(), shape.to_string()))
                }
                _ => None,
            })
            .collect();
        let mut expected = xla_instruction_shapes(name);
        let mut ours_sorted = ours.clone();
        // The text lists computations in dependency order, the proto in its own order.
        expected.sort();
        ours_sorted.sort();
        assert_eq!(ours_sorted, expected, "{name}");
        assert!(!ours.is_empty());
    }
}

#[test]
fn every_shape_in_every_module_validates() {
    for name in MODULES {
        let module = decode_module(&fixture(&format!("{name}.pb")), HloMessage::Module).unwrap();
        let found = shapes(&module);
        assert!(found.iter().any(|s| matches!(s.site, ShapeSite::HostResult)), "{name}");
        for s in found {
            Shape::try_new(s.shape).unwrap_or_else(|e| panic!("{name}: {}: {e}", s.site));
        }
    }
}

#[test]
fn outfeed_and_operand_layout_constraints_are_listed() {
    let module = decode_module(&fixture("outfeed_custom_call.pb"), HloMessage::Module).unwrap();
    let found = shapes(&module);
    let outfeed: Vec<String> = found
        .iter()
        .filter(|s| matches!(s.site, ShapeSite::OutfeedShape { .. }))
        .map(|s| s.shape.to_string())
        .collect();
    assert_eq!(outfeed, ["f32[2,3]{1,0}"]);
    let operands: Vec<String> = found
        .iter()
        .filter(|s| matches!(s.site, ShapeSite::OperandShape { .. }))
        .map(|s| s.shape.to_string())
        .collect();
    assert_eq!(operands, ["f32[2,3]{0,1}", "s32[4]{0}"]);
}

#[test]
fn hlo_proto_and_snapshot_wrappers_decode_to_the_same_module() {
    let bytes = fixture("matmul.pb");
    let module = decode_module(&bytes, HloMessage::Module).unwrap();
    // HloProto { hlo_module = 1 }, HloSnapshot { hlo = 1 }.
    let wrap = length_delimited_field_1;
    let proto = wrap(&bytes);
    let snapshot = wrap(&proto);
    assert_eq!(decode_module(&proto, HloMessage::Proto).unwrap(), module);
    assert_eq!(decode_module(&snapshot, HloMessage::Snapshot).unwrap(), module);
    assert!(decode_module(&[0xff], HloMessage::Module).is_err());
}

#[test]
fn real_modules_hold_nothing_the_view_drops() {
    // Every shape XLA wrote is canonical and uses only known fields.
    for name in MODULES {
        let found = xla_shape::hlo::wire_reports(&fixture(&format!("{name}.pb")), HloMessage::Module).unwrap();
        assert!(found.is_empty(), "{name}: {found:?}");
    }
    assert!(xla_shape::hlo::wire_reports(&[0xff], HloMessage::Module).is_err());
}
