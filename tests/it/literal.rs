//! Literal values against real XLA (tests/fixtures/literals/, made by
//! tools/fixtures/literals.py with jaxlib 0.10.2): XLA's bytes decode wire-exact, validate, print
//! byte-identical to XLA's HLO text, and building the same values gives XLA's bytes back.

use std::collections::BTreeMap;
use std::fs;

use crate::common::{bytes_from_hex, to_hex};
use xla_shape::hlo::{self, HloMessage};
use xla_shape::literal::{self, Literal, Values};
use xla_shape::proto::LiteralProto;
use xla_shape::{ArrayShape, PrimitiveType, codec};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/literals");

fn records() -> Vec<serde_json::Value> {
    let text = fs::read_to_string(format!("{DIR}/constants.jsonl")).unwrap();
    text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// Builds the literal of `shape` from `values` (the inverse of reading).
fn rebuild(shape: ArrayShape<'_>, values: &Values) -> LiteralProto {
    match values {
        Values::Pred(v) => literal::make_array_literal(shape, v),
        Values::S8(v) => literal::make_array_literal(shape, v),
        Values::S16(v) => literal::make_array_literal(shape, v),
        Values::S32(v) => literal::make_array_literal(shape, v),
        Values::S64(v) => literal::make_array_literal(shape, v),
        Values::U8(v) => literal::make_array_literal(shape, v),
        Values::U16(v) => literal::make_array_literal(shape, v),
        Values::U32(v) => literal::make_array_literal(shape, v),
        Values::U64(v) => literal::make_array_literal(shape, v),
        Values::F16(v) => literal::make_array_literal(shape, v),
        Values::BF16(v) => literal::make_array_literal(shape, v),
        Values::F32(v) => literal::make_array_literal(shape, v),
        Values::F64(v) => literal::make_array_literal(shape, v),
        Values::C64(v) => literal::make_array_literal(shape, v),
        Values::C128(v) => literal::make_array_literal(shape, v),
        Values::Small(v) => literal::make_array_literal(shape, v),
        other => panic!("unexpected {other:?}"),
    }
    .unwrap()
}

/// Every constant XLA printed: our text equals XLA's, with and without `print_large_constants`.
#[test]
fn every_fixture_constant_prints_as_xla() {
    let mut by_type: BTreeMap<String, usize> = BTreeMap::new();
    for record in records() {
        if record["status"] != "ok" {
            continue;
        }
        let name = record["name"].as_str().unwrap();
        let bytes = bytes_from_hex(record["literal_hex"].as_str().unwrap());
        // XLA's bytes are canonical: strict decoding accepts them and re-encoding gives them back.
        let proto: LiteralProto = codec::decode(&bytes[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(codec::encode(&proto), bytes, "{name}");
        let literal = Literal::try_new(&proto).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(literal.to_text(None).unwrap(), record["printed"].as_str().unwrap(), "{name}");
        assert_eq!(literal.to_string(), record["printed"].as_str().unwrap(), "{name}");
        assert_eq!(literal.to_text(Some(10)).unwrap(), record["printed_default"].as_str().unwrap(), "{name}");
        *by_type.entry(record["type"].as_str().unwrap().to_owned()).or_default() += 1;
    }
    // Every element type XLA can serialize is covered (jaxlib 0.10.2 aborts on f6 literals:
    // "Unhandled primitive type F6E3M2FN", recorded as `crashed`), and tuples.
    for ty in PrimitiveType::ALL.iter().filter(|t| t.is_array()) {
        let expected = !matches!(ty, PrimitiveType::F6E2M3FN | PrimitiveType::F6E3M2FN);
        assert_eq!(by_type.get(ty.name()).is_some_and(|&n| n > 10), expected, "{ty}: {by_type:?}");
    }
    assert!(by_type["tuple"] >= 4);
}

/// Values read back and written again give XLA's bytes (layouts included).
#[test]
fn building_from_values_gives_xla_bytes() {
    let mut checked = 0;
    for record in records() {
        if record["status"] != "ok" || record["type"] == "tuple" {
            continue;
        }
        let bytes = bytes_from_hex(record["literal_hex"].as_str().unwrap());
        let proto: LiteralProto = codec::decode(&bytes[..]).unwrap();
        let literal = Literal::try_new(&proto).unwrap();
        let array = literal.as_array().unwrap();
        let rebuilt = rebuild(array.shape(), &array.values().unwrap());
        assert_eq!(to_hex(&codec::encode(&rebuilt)), to_hex(&bytes), "{}", record["name"]);
        checked += 1;
    }
    assert!(checked > 900, "{checked}");
}

/// The text of `constant(...)` on each instruction line of an HLO module's text.
fn constant_operands(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim().trim_start_matches("ROOT ").trim_start_matches('%');
        let (Some((name, _)), Some(at)) = (line.split_once(" = "), line.find(" constant(")) else { continue };
        let rest = &line[at + " constant(".len()..];
        let mut depth = 1;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .unwrap()
            .0;
        out.insert(name.to_owned(), rest[..end].to_owned());
    }
    out
}

/// jax's modules (lowered and compiled): every constant's literal, printed with XLA's limit of
/// 10 elements, is the operand in XLA's text.
#[test]
fn jax_module_constants_print_as_xla() {
    for name in ["jax_lowered", "jax_compiled"] {
        let bytes = fs::read(format!("{DIR}/{name}.pb")).unwrap();
        let text = fs::read_to_string(format!("{DIR}/{name}.hlo.txt")).unwrap();
        let operands = constant_operands(&text);
        let module = hlo::decode_module(&bytes, HloMessage::Module).unwrap();
        let mut seen = 0;
        for instruction in module.computations.iter().flat_map(|c| &c.instructions) {
            let Some(proto) = &instruction.literal else { continue };
            let literal = Literal::try_new(proto).unwrap();
            assert_eq!(
                &literal.to_text(Some(10)).unwrap(),
                &operands[&instruction.name],
                "{name} {}",
                instruction.name
            );
            seen += 1;
        }
        assert_eq!(seen, operands.len(), "{name}");
        assert!(seen >= 13, "{name}: {seen}");
        assert!(hlo::wire_reports(&bytes, HloMessage::Module).unwrap().is_empty());
    }
}

/// The snapshot: XLA's literals as arguments and result, wire-exact.
#[test]
fn snapshot_arguments_and_result() {
    let bytes = fs::read(format!("{DIR}/snapshot.pb")).unwrap();
    assert!(hlo::wire_reports(&bytes, HloMessage::Snapshot).unwrap().is_empty());
    let snapshot = <xla_shape::hlo::view::HloSnapshot as prost::Message>::decode(&bytes[..]).unwrap();
    assert_eq!(snapshot.arguments.len(), 2);
    let first = Literal::try_new(&snapshot.arguments[0]).unwrap();
    assert_eq!(first.to_string(), "{ { 1.5, 4, -9.75 }, { 1.6e-07, 2.5e+11, 36.6 } }");
    let result = Literal::try_new(snapshot.result.as_ref().unwrap()).unwrap();
    let values = result.as_array().unwrap().to_vec::<u8>().unwrap();
    assert_eq!(values, (0..24).collect::<Vec<u8>>());
}
