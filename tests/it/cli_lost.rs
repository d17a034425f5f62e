//! `xla-shape decode` warns about every field XLA's text drops, for each input kind, naming the
//! field's own reason (in-process `cli::run`; `docs/text-format.md` §4).

use prost::Message;
use xla_shape::proto::{ProgramShapeProto, ShapeProto};

use crate::common::to_hex;

use crate::text_lost::{FIELDS, array_with, layout_with};
use xla_shape::text::Dropped;

/// Each field and the reason the warning must give for it.
fn cases() -> impl Iterator<Item = (Dropped, &'static str, &'static str)> {
    FIELDS.into_iter().map(|d| (d, d.field(), d.reason()))
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
    let other_reason = cases().map(|(_, _, r)| r).find(|r| *r != reason).unwrap();
    assert!(!warning.contains(other_reason), "names only its own reason: {warning}");
}

#[test]
fn a_layout_warns_for_each_field() {
    for (dropped, field, reason) in cases() {
        warns("layout", &layout_with(dropped).encode_to_vec(), field, reason);
    }
}

#[test]
fn a_shape_warns_for_each_field() {
    for (dropped, field, reason) in cases() {
        warns("shape", &array_with(dropped).encode_to_vec(), &format!("layout.{field}"), reason);
        let tuple = ShapeProto { element_type: 13, tuple_shapes: vec![array_with(dropped)], ..ShapeProto::default() };
        warns("shape", &tuple.encode_to_vec(), &format!("tuple_shapes[0].layout.{field}"), reason);
    }
}

#[test]
fn a_program_shape_warns_for_each_field() {
    for (dropped, field, reason) in cases() {
        let program = ProgramShapeProto {
            parameters: vec![array_with(dropped)],
            result: Some(array_with(dropped)),
            parameter_names: vec!["p".into()],
        };
        let bytes = program.encode_to_vec();
        warns("program-shape", &bytes, &format!("parameters[0].layout.{field}"), reason);
        warns("program-shape", &bytes, &format!("result.layout.{field}"), reason);
    }
}

#[test]
fn a_layout_names_only_the_fields_it_sets() {
    let (_, stderr) = decode("layout", &layout_with(Dropped::PaddingValue).encode_to_vec());
    assert!(!stderr.contains("padded_dimensions"), "{stderr}");
}
