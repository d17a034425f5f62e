//! Real HLO modules from jaxlib (tests/fixtures/hlo): every shape they hold decodes, validates,
//! and prints exactly as XLA printed it in the module text. And the streaming walk against an
//! independent reference: prost-derived views of XLA's HLO messages, decoded whole.

use crate::common::length_delimited_field_1;
use std::fs;
use std::path::Path;

use proptest::prelude::*;
use prost::Message;
use xla_shape::hlo::{self, Found, HloMessage, ReportSite, ShapeSite, header, walk};
use xla_shape::proto::{ProgramShapeProto, ShapeProto};
use xla_shape::strategy::{self, ShapeConfig};
use xla_shape::{Error, Shape};

const MODULES: [&str; 5] = ["matmul", "conv2d", "reduction", "tuple", "outfeed_custom_call"];

fn fixture(name: &str) -> Vec<u8> {
    fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hlo").join(name)).unwrap()
}

/// `(site, shape)` of every shape of a module, and the printed reports.
type Listing = (Vec<(String, ShapeProto)>, Vec<String>);

fn listed(bytes: &[u8], message: HloMessage) -> Result<Listing, Error> {
    let (mut shapes, mut reports) = (Vec::new(), Vec::new());
    for found in walk(bytes, message) {
        match found? {
            Found::Shape(s) => shapes.push((s.site.to_string(), s.shape)),
            Found::Report(r) => {
                assert!(!r.report.is_empty());
                reports.push(format!("{}: {}", r.site, r.report));
            }
        }
    }
    Ok((shapes, reports))
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
        let mut ours = Vec::new();
        for found in walk(&fixture(&format!("{name}.pb")), HloMessage::Module) {
            if let Found::Shape(s) = found.unwrap() {
                if let ShapeSite::Instruction { computation, instruction, .. } = s.site {
                    let shape = Shape::try_new(&s.shape).unwrap_or_else(|e| panic!("{name}: {}: {e}", s.site));
                    ours.push((computation.to_owned(), instruction.to_owned(), shape.to_string()));
                }
            }
        }
        assert!(!ours.is_empty());
        let mut expected = xla_instruction_shapes(name);
        // The text lists computations in dependency order, the proto in its own order.
        expected.sort();
        ours.sort();
        assert_eq!(ours, expected, "{name}");
    }
}

#[test]
fn every_shape_in_every_module_validates_and_nothing_is_reported() {
    for name in MODULES {
        let (shapes, reports) = listed(&fixture(&format!("{name}.pb")), HloMessage::Module).unwrap();
        assert!(shapes.iter().any(|(site, _)| site == "host_program_shape / result"), "{name}");
        for (site, shape) in shapes {
            Shape::try_new(&shape).unwrap_or_else(|e| panic!("{name}: {site}: {e}"));
        }
        // Every shape XLA wrote is canonical and uses only known fields.
        assert!(reports.is_empty(), "{name}: {reports:?}");
    }
}

#[test]
fn outfeed_and_operand_layout_constraints_are_listed() {
    let (shapes, _) = listed(&fixture("outfeed_custom_call.pb"), HloMessage::Module).unwrap();
    let of = |suffix: &str| -> Vec<String> {
        shapes.iter().filter(|(site, _)| site.contains(suffix)).map(|(_, s)| s.to_string()).collect()
    };
    assert_eq!(of("/ outfeed_shape"), ["f32[2,3]{1,0}"]);
    assert_eq!(of("/ operand_shapes_with_layout["), ["f32[2,3]{0,1}", "s32[4]{0}"]);
}

#[test]
fn hlo_proto_and_snapshot_wrappers_walk_the_same_module() {
    let bytes = fixture("matmul.pb");
    let module = listed(&bytes, HloMessage::Module).unwrap();
    // HloProto { hlo_module = 1 }, HloSnapshot { hlo = 1 }.
    let proto = length_delimited_field_1(&bytes);
    let snapshot = length_delimited_field_1(&proto);
    assert_eq!(listed(&proto, HloMessage::Proto).unwrap(), module);
    assert_eq!(listed(&snapshot, HloMessage::Snapshot).unwrap(), module);
    assert_eq!(header(&snapshot, HloMessage::Snapshot).unwrap(), header(&bytes, HloMessage::Module).unwrap());
    assert!(listed(&[0xff], HloMessage::Module).is_err());
    assert!(header(&[0xff], HloMessage::Module).is_err());
}

#[test]
fn a_shape_beyond_the_cap_is_refused_by_name() {
    // host_program_shape { result: a tuple of empty elements, 2 bytes over and exactly at the cap }.
    let tuple = |len: usize| [vec![0x10, 0x0d], [0x22, 0x00].repeat((len - 2) / 2)].concat();
    let over = field(4, &field(2, &tuple(hlo::MAX_SHAPE_BYTES + 2)));
    match listed(&over, HloMessage::Module) {
        Err(Error::LimitExceeded { limit: xla_shape::error::Limit::HloShapeSize, value, .. }) => {
            assert_eq!(value, hlo::MAX_SHAPE_BYTES as u64 + 2);
        }
        other => panic!("{:?}", other.map(|(shapes, _)| shapes.len())),
    }
    let at = field(4, &field(2, &tuple(hlo::MAX_SHAPE_BYTES)));
    assert_eq!(listed(&at, HloMessage::Module).unwrap().0.len(), 1);
}

#[test]
fn literals_and_other_fields_are_skipped_and_wire_errors_are_named() {
    // An instruction whose literal (field 8) is 1 MiB of junk, and a group, fixed32 and fixed64.
    let mut instruction = field(1, b"c");
    instruction.extend(field(2, b"constant"));
    instruction.extend(field(8, &vec![0xff; 1 << 20]));
    instruction.extend([0x9b, 0x01, 0x08, 0x01, 0x9c, 0x01]); // group 19 { field 1 = 1 }
    instruction.extend([0xa5, 0x01, 1, 2, 3, 4, 0xa9, 0x01, 1, 2, 3, 4, 5, 6, 7, 8]);
    instruction.extend(field(3, &[0x10, 0x0b]));
    let computation = [field(1, b"main"), field(2, &instruction)].concat();
    let module = field(3, &computation);
    let (shapes, reports) = listed(&module, HloMessage::Module).unwrap();
    assert_eq!(shapes, [("main / c".to_owned(), ShapeProto { element_type: 11, ..Default::default() })]);
    assert!(reports.is_empty());
    // Broken: a length past the end inside the instruction; an end-group with no group.
    let mut broken = module.clone();
    broken.truncate(broken.len() - 1);
    let error = listed(&broken, HloMessage::Module).unwrap_err();
    assert!(matches!(error, Error::Decode { .. }), "{error}");
    let error = listed(&[0x0c], HloMessage::Module).unwrap_err();
    assert!(error.to_string().contains("HloModuleProto"), "{error}");
    // A name that is not UTF-8.
    let bad_name = field(3, &field(1, &[0xff]));
    assert!(listed(&bad_name, HloMessage::Module).is_err());
    // A shape field written as a varint.
    let bad_type = field(3, &field(2, &[0x18, 0x01]));
    assert!(listed(&bad_type, HloMessage::Module).is_err());
}

// ---------------------------------------------------------------------------------------------
// The reference: prost views of `xla/service/hlo.proto`, decoded whole.

#[derive(Clone, PartialEq, Message)]
struct RefInstruction {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    opcode: String,
    #[prost(message, optional, tag = "3")]
    shape: Option<ShapeProto>,
    #[prost(bytes = "vec", tag = "8")]
    literal: Vec<u8>,
    #[prost(message, optional, tag = "29")]
    outfeed_shape: Option<ShapeProto>,
    #[prost(message, repeated, tag = "57")]
    operand_shapes_with_layout: Vec<ShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct RefComputation {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, repeated, tag = "2")]
    instructions: Vec<RefInstruction>,
    #[prost(message, optional, tag = "4")]
    program_shape: Option<ProgramShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct RefModule {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, repeated, tag = "3")]
    computations: Vec<RefComputation>,
    #[prost(message, optional, tag = "4")]
    host_program_shape: Option<ProgramShapeProto>,
}

fn reference_program(out: &mut Vec<(String, ShapeProto)>, program: &ProgramShapeProto, prefix: &str) {
    for (i, shape) in program.parameters.iter().enumerate() {
        let name = program.parameter_names.get(i).map_or("", String::as_str);
        out.push((format!("{prefix} / parameter {i} ({name})"), shape.clone()));
    }
    if let Some(result) = &program.result {
        out.push((format!("{prefix} / result"), result.clone()));
    }
}

fn reference(module: &RefModule) -> Vec<(String, ShapeProto)> {
    let mut out = Vec::new();
    if let Some(program) = &module.host_program_shape {
        reference_program(&mut out, program, "host_program_shape");
    }
    for c in &module.computations {
        if let Some(program) = &c.program_shape {
            reference_program(&mut out, program, &c.name);
        }
        for i in &c.instructions {
            if let Some(shape) = &i.shape {
                out.push((format!("{} / {}", c.name, i.name), shape.clone()));
            }
            if let Some(shape) = &i.outfeed_shape {
                out.push((format!("{} / {} / outfeed_shape", c.name, i.name), shape.clone()));
            }
            for (k, shape) in i.operand_shapes_with_layout.iter().enumerate() {
                out.push((format!("{} / {} / operand_shapes_with_layout[{k}]", c.name, i.name), shape.clone()));
            }
        }
    }
    out
}

fn field(number: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_key(number, prost::encoding::WireType::LengthDelimited, &mut out);
    prost::encoding::encode_varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

fn any_shape() -> impl Strategy<Value = ShapeProto> {
    strategy::shape(ShapeConfig { max_depth: 2, ..ShapeConfig::default() }).prop_map(xla_shape::ShapeBuf::into_proto)
}

fn any_program() -> impl Strategy<Value = ProgramShapeProto> {
    (prop::collection::vec(any_shape(), 0..3), prop::option::of(any_shape()), prop::collection::vec("[a-z]{0,3}", 0..4))
        .prop_map(|(parameters, result, parameter_names)| ProgramShapeProto { parameters, result, parameter_names })
}

fn any_instruction() -> impl Strategy<Value = RefInstruction> {
    (
        "[a-z.0-9]{0,6}",
        "[a-z]{0,6}",
        prop::option::of(any_shape()),
        prop::collection::vec(any::<u8>(), 0..40),
        prop::option::weighted(0.2, any_shape()),
        prop::collection::vec(any_shape(), 0..3),
    )
        .prop_map(|(name, opcode, shape, literal, outfeed_shape, operand_shapes_with_layout)| RefInstruction {
            name,
            opcode,
            shape,
            literal,
            outfeed_shape,
            operand_shapes_with_layout,
        })
}

fn any_module() -> impl Strategy<Value = RefModule> {
    let computation = ("[a-z]{0,5}", prop::collection::vec(any_instruction(), 0..5), prop::option::of(any_program()))
        .prop_map(|(name, instructions, program_shape)| RefComputation { name, instructions, program_shape });
    ("[a-z]{0,5}", prop::collection::vec(computation, 0..4), prop::option::of(any_program()))
        .prop_map(|(name, computations, host_program_shape)| RefModule { name, computations, host_program_shape })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The walk lists what the whole-message reference lists, in the same order, for the three
    /// wrappers; the header agrees; valid shapes from the crate's encoder have nothing to report.
    #[test]
    fn walk_agrees_with_the_whole_message_reference(module in any_module()) {
        let bytes = module.encode_to_vec();
        let expected = reference(&module);
        let proto = length_delimited_field_1(&bytes);
        let snapshot = length_delimited_field_1(&proto);
        for (input, message) in [(&bytes, HloMessage::Module), (&proto, HloMessage::Proto), (&snapshot, HloMessage::Snapshot)] {
            let (shapes, reports) = listed(input, message).unwrap();
            prop_assert_eq!(&shapes, &expected);
            prop_assert!(reports.is_empty(), "{:?}", reports);
            let h = header(input, message).unwrap();
            prop_assert_eq!((h.name, h.computations), (module.name.as_str(), module.computations.len()));
        }
    }

    /// Any byte flipped: the walk and prost's whole-message decode agree on success, and on the
    /// listing when both succeed; the walk never panics.
    #[test]
    fn mutated_modules_agree_with_prost(module in any_module(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = module.encode_to_vec();
        if !bytes.is_empty() {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        let ours = listed(&bytes, HloMessage::Module);
        // The reference reads every field the walk reads, with the same rules; it also reads
        // field 8 (a `bytes` literal) and counts the module's levels towards the recursion
        // limit, so it may fail where the walk succeeds.
        if let Ok(reference_module) = RefModule::decode(bytes.as_slice()) {
            let (shapes, _) = ours.unwrap();
            prop_assert_eq!(shapes, reference(&reference_module));
        }
    }
}

#[test]
fn findings_are_reported_per_site() {
    // host_program_shape { result: f32[] + field 99 } and an instruction shape with an unpacked
    // dimension.
    let program = [0x12, 0x05, 0x10, 0x0b, 0x98, 0x06, 0x01];
    let instruction = [field(1, b"i"), field(3, &[0x10, 0x0b, 0x18, 0x02])].concat();
    let module = [field(3, &[field(1, b"c"), field(2, &instruction)].concat()), field(4, &program)].concat();
    let mut reports = Vec::new();
    for found in walk(&module, HloMessage::Module) {
        if let Found::Report(r) = found.unwrap() {
            reports.push((r.site, r.report.to_string()));
        }
    }
    assert_eq!(reports[0], (ReportSite::HostProgramShape, "unknown field 99 (varint) at result\n".to_owned()));
    assert_eq!(reports[1].0.to_string(), "c / i");
    assert!(reports[1].1.contains("not packed"), "{}", reports[1].1);
}
