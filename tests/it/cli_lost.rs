//! `xla-shape decode` warns about every field XLA's text drops, for each input kind, naming the
//! field's own reason (in-process `cli::run`; `docs/text-format.md` §4).

use prost::Message;
use xla_shape::proto::{LayoutProto, ProgramShapeProto, ShapeProto};

use crate::common::to_hex;

const CASES: [(&str, &str); 3] = [
    ("padded_dimensions", "legacy padding is never printed"),
    ("padding_value", "legacy padding is never printed"),
    ("dynamic_shape_metadata_prefix_bytes", "a negative dynamic_shape_metadata_prefix_bytes is never printed"),
];

fn layout_with(field: &str) -> LayoutProto {
    let mut layout =
        LayoutProto { minor_to_major: vec![1, 0], tail_padding_alignment_in_elements: 1, ..LayoutProto::default() };
    match field {
        "padded_dimensions" => layout.padded_dimensions = vec![3, 5],
        "padding_value" => layout.padding_value = 1,
        _ => layout.dynamic_shape_metadata_prefix_bytes = -8,
    }
    layout
}

fn array_with(field: &str) -> ShapeProto {
    ShapeProto {
        element_type: 11,
        dimensions: vec![2, 3],
        is_dynamic_dimension: vec![false, false],
        layout: Some(Box::new(layout_with(field))),
        ..ShapeProto::default()
    }
}

/// Runs `decode --type TYPE --hex` on `bytes`; returns the status and stderr.
fn decode(kind: &str, bytes: &[u8]) -> (u8, String) {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut stdin = to_hex(bytes).into_bytes();
    stdin.push(b'\n');
    let status = xla_shape::cli::run(
        ["xla-shape", "decode", "--type", kind, "--hex"],
        &mut &stdin[..],
        &mut stdout,
        &mut stderr,
    );
    (status, String::from_utf8(stderr).unwrap())
}

#[track_caller]
fn warns(kind: &str, bytes: &[u8], path: &str, reason: &str) {
    let (status, stderr) = decode(kind, bytes);
    assert_eq!(status, 0, "{stderr}");
    let warning =
        stderr.lines().find(|l| l.contains("does not hold")).unwrap_or_else(|| panic!("no warning: {stderr}"));
    assert!(warning.contains(path), "{warning}");
    assert!(warning.contains(reason), "{warning}");
    let other_reason = CASES.iter().map(|(_, r)| *r).find(|r| *r != reason).unwrap();
    assert!(!warning.contains(other_reason), "names only its own reason: {warning}");
}

#[test]
fn a_layout_warns_for_each_field() {
    for (field, reason) in CASES {
        warns("layout", &layout_with(field).encode_to_vec(), field, reason);
    }
}

#[test]
fn a_shape_warns_for_each_field() {
    for (field, reason) in CASES {
        warns("shape", &array_with(field).encode_to_vec(), &format!("layout.{field}"), reason);
        let tuple = ShapeProto { element_type: 13, tuple_shapes: vec![array_with(field)], ..ShapeProto::default() };
        warns("shape", &tuple.encode_to_vec(), &format!("tuple_shapes[0].layout.{field}"), reason);
    }
}

#[test]
fn a_program_shape_warns_for_each_field() {
    for (field, reason) in CASES {
        let program = ProgramShapeProto {
            parameters: vec![array_with(field)],
            result: Some(array_with(field)),
            parameter_names: vec!["p".into()],
        };
        let bytes = program.encode_to_vec();
        warns("program-shape", &bytes, &format!("parameters[0].layout.{field}"), reason);
        warns("program-shape", &bytes, &format!("result.layout.{field}"), reason);
    }
}

#[test]
fn a_layout_names_only_the_fields_it_sets() {
    let (_, stderr) = decode("layout", &layout_with("padding_value").encode_to_vec());
    assert!(!stderr.contains("padded_dimensions"), "{stderr}");
}
