//! Literal values against real XLA (tests/fixtures/literals/, made by
//! tools/fixtures/literals.py with jaxlib 0.10.2): XLA's bytes decode wire-exact, validate, print
//! byte-identical to XLA's HLO text, and building the same values gives XLA's bytes back.
//! Then the properties: random element types, dimensions and layouts.

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "the property tests take the low bits of random words on purpose"
)]

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
        let mut seen = 0;
        for sited in hlo::literals(&bytes, HloMessage::Module).unwrap() {
            let hlo::LiteralSite::Constant { instruction, .. } = sited.site else { panic!("{:?}", sited.site) };
            // XLA's bytes are canonical.
            let proto: LiteralProto = codec::decode(sited.bytes).unwrap();
            let literal = Literal::try_new(&proto).unwrap();
            assert_eq!(&literal.to_text(Some(10)).unwrap(), &operands[instruction], "{name} {instruction}");
            seen += 1;
        }
        assert_eq!(seen, operands.len(), "{name}");
        assert!(seen >= 13, "{name}: {seen}");
    }
}

/// The snapshot: XLA's literals as arguments and result, wire-exact.
#[test]
fn snapshot_arguments_and_result() {
    let bytes = fs::read(format!("{DIR}/snapshot.pb")).unwrap();
    let found = hlo::literals(&bytes, HloMessage::Snapshot).unwrap();
    let sites: Vec<String> = found.iter().map(|s| s.site.to_string()).collect();
    assert_eq!(sites.len(), 16);
    assert_eq!(sites[0], "main.1/constant.13");
    assert_eq!(sites[13..], ["arguments[0]", "arguments[1]", "result"]);
    let decode = |bytes: &[u8]| -> LiteralProto { codec::decode(bytes).unwrap() };
    let first = decode(found[13].bytes);
    assert_eq!(Literal::try_new(&first).unwrap().to_string(), "{ { 1.5, 4, -9.75 }, { 1.6e-07, 2.5e+11, 36.6 } }");
    let result = decode(found[15].bytes);
    let values = Literal::try_new(&result).unwrap().as_array().unwrap().to_vec::<u8>().unwrap();
    assert_eq!(values, (0..24).collect::<Vec<u8>>());
}

// ---------------------------------------------------------------------------------------------
// Properties: random element types, dimensions and layouts.

use proptest::prelude::*;
use xla_shape::{PhysicalMap, make};

/// A literal proto of `ty` with dimensions `dims`, layout `minor_to_major`, and the field of its
/// type filled from `seed` — written here independently of the crate's field table.
fn raw_literal(ty: PrimitiveType, dims: &[i64], minor_to_major: &[i64], seed: &[u8]) -> LiteralProto {
    use PrimitiveType as T;
    let shape = make::make_shape_with_dense_layout(ty, dims, minor_to_major).unwrap().into_proto();
    let count = usize::try_from(dims.iter().product::<i64>()).unwrap();
    let byte =
        |i: usize| seed.get(i % seed.len().max(1)).copied().unwrap_or(0).wrapping_add(u8::try_from(i % 251).unwrap());
    let bytes = |n: usize| (0..n).map(byte).collect::<Vec<u8>>();
    let masked = |bits: u32| (0..count).map(|i| byte(i) & (u8::MAX >> (8 - bits))).collect::<Vec<u8>>();
    let words = |n: usize, w: usize| {
        bytes(n * w)
            .chunks(w)
            .map(|c| {
                let mut a = [0u8; 8];
                a[..w].copy_from_slice(c);
                u64::from_le_bytes(a)
            })
            .collect::<Vec<u64>>()
    };
    let mut p = LiteralProto { shape: Some(shape), ..LiteralProto::default() };
    match ty {
        T::PRED => p.preds = (0..count).map(|i| byte(i) & 1 == 1).collect(),
        T::S1 => p.s1s = masked(1),
        T::U1 => p.u1s = masked(1),
        T::S2 => p.s2s = masked(2),
        T::U2 => p.u2s = masked(2),
        T::S4 => p.s4s = masked(4),
        T::U4 => p.u4s = masked(4),
        T::F4E2M1FN => p.f4e2m1fns = masked(4),
        T::F6E3M2FN => p.f6e3m2fns = masked(6),
        T::F6E2M3FN => p.f6e2m3fns = masked(6),
        T::S8 => p.s8s = bytes(count),
        T::U8 => p.u8s = bytes(count),
        T::F8E5M2 => p.f8e5m2s = bytes(count),
        T::F8E4M3 => p.f8e4m3s = bytes(count),
        T::F8E4M3FN => p.f8e4m3fns = bytes(count),
        T::F8E4M3B11FNUZ => p.f8e4m3b11fnuzs = bytes(count),
        T::F8E3M4 => p.f8e3m4s = bytes(count),
        T::F8E5M2FNUZ => p.f8e5m2fnuzs = bytes(count),
        T::F8E4M3FNUZ => p.f8e4m3fnuzs = bytes(count),
        T::F8E8M0FNU => p.f8e8m0fnus = bytes(count),
        T::S16 => p.s16s = bytes(2 * count),
        T::U16 => p.u16s = bytes(2 * count),
        T::F16 => p.f16s = bytes(2 * count),
        T::BF16 => p.bf16s = bytes(2 * count),
        T::S32 => p.s32s = words(count, 4).into_iter().map(|w| w as u32 as i32).collect(),
        T::U32 => p.u32s = words(count, 4).into_iter().map(|w| w as u32).collect(),
        T::S64 => p.s64s = words(count, 8).into_iter().map(|w| w as i64).collect(),
        T::U64 => p.u64s = words(count, 8),
        T::F32 => p.f32s = words(count, 4).into_iter().map(|w| f32::from_bits(w as u32)).collect(),
        T::F64 => p.f64s = words(count, 8).into_iter().map(f64::from_bits).collect(),
        T::C64 => p.c64s = words(2 * count, 4).into_iter().map(|w| f32::from_bits(w as u32)).collect(),
        T::C128 => p.c128s = words(2 * count, 8).into_iter().map(f64::from_bits).collect(),
        other => panic!("{other} is not an array type"),
    }
    p
}

fn array_type() -> impl Strategy<Value = PrimitiveType> {
    proptest::sample::select(PrimitiveType::ALL.iter().copied().filter(|t| t.is_array()).collect::<Vec<_>>())
}

/// Dimensions (rank 0-5, each 0-4) and a random `minor_to_major` permutation.
fn dims_and_layout() -> impl Strategy<Value = (Vec<i64>, Vec<i64>)> {
    proptest::collection::vec(0i64..5, 0..6).prop_flat_map(|dims| {
        let rank = dims.len();
        (Just(dims), Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle())
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// values → LiteralProto → bytes → decode → values is the identity (compared through the
    /// encodings: NaN payloads must survive too), for every element type and layout.
    #[test]
    fn values_round_trip_through_bytes(ty in array_type(), (dims, m2m) in dims_and_layout(), seed in proptest::collection::vec(any::<u8>(), 1..64)) {
        let original = raw_literal(ty, &dims, &m2m, &seed);
        let literal = Literal::try_new(&original).unwrap();
        let array = literal.as_array().unwrap();
        let values = array.values().unwrap();
        let built = rebuild(array.shape(), &values);
        let bytes = codec::encode(&built);
        prop_assert_eq!(&bytes, &codec::encode(&original));
        let decoded: LiteralProto = codec::decode(&bytes[..]).unwrap();
        let again = Literal::try_new(&decoded).unwrap().as_array().unwrap().values().unwrap();
        prop_assert_eq!(codec::encode(&rebuild(array.shape(), &again)), bytes);
        prop_assert_eq!(again.len(), values.len());
    }

    /// A non-default layout reads back in logical order: element k of `to_vec` is the physical
    /// element at the slot `PhysicalMap` gives the k-th row-major index (an untiled literal's
    /// slot is its position in the field).
    #[test]
    fn logical_order_matches_physical_map((dims, m2m) in dims_and_layout(), seed in proptest::collection::vec(any::<u8>(), 1..64)) {
        for ty in [PrimitiveType::U32, PrimitiveType::S4, PrimitiveType::PRED, PrimitiveType::C128] {
            let proto = raw_literal(ty, &dims, &m2m, &seed);
            let shape = xla_shape::Shape::try_new(proto.shape.as_ref().unwrap()).unwrap();
            let map = PhysicalMap::new(shape.as_array().unwrap()).unwrap();
            let literal = Literal::try_new(&proto).unwrap();
            let array = literal.as_array().unwrap();
            let mut index = vec![0i64; dims.len()];
            let count = usize::try_from(dims.iter().product::<i64>()).unwrap();
            let slots: Vec<usize> = (0..count).map(|k| {
                // The k-th row-major index.
                let mut rest = k as i64;
                for d in (0..dims.len()).rev() {
                    index[d] = rest % dims[d];
                    rest /= dims[d];
                }
                usize::try_from(map.slot(&index).unwrap().get()).unwrap()
            }).collect();
            match ty {
                PrimitiveType::U32 => {
                    let logical = array.to_vec::<u32>().unwrap();
                    for (k, &slot) in slots.iter().enumerate() { prop_assert_eq!(logical[k], proto.u32s[slot]); }
                }
                PrimitiveType::S4 => {
                    let logical = array.to_vec::<i8>().unwrap();
                    for (k, &slot) in slots.iter().enumerate() {
                        let raw = proto.s4s[slot];
                        prop_assert_eq!(logical[k], if raw >= 8 { raw as i8 - 16 } else { raw as i8 });
                    }
                }
                PrimitiveType::PRED => {
                    let logical = array.to_vec::<bool>().unwrap();
                    for (k, &slot) in slots.iter().enumerate() { prop_assert_eq!(logical[k], proto.preds[slot]); }
                }
                _ => {
                    let logical = array.to_vec::<num_complex::Complex<f64>>().unwrap();
                    for (k, &slot) in slots.iter().enumerate() {
                        prop_assert_eq!(logical[k].re.to_bits(), proto.c128s[2 * slot].to_bits());
                        prop_assert_eq!(logical[k].im.to_bits(), proto.c128s[2 * slot + 1].to_bits());
                    }
                }
            }
        }
    }
}

/// Every problem is a typed error naming the offending field.
#[test]
#[allow(clippy::too_many_lines, reason = "one table of cases")]
fn typed_errors_with_field_paths() {
    use xla_shape::Error;
    use xla_shape::error::LiteralProblem as P;
    let shape = |s: &str| Some(xla_shape::text::parse_shape(s).unwrap().into_proto());
    let check = |proto: LiteralProto, path: &str, problem: P| match Literal::try_new(&proto) {
        Err(Error::Literal(error)) => {
            assert_eq!((error.path.as_str(), &error.problem), (path, &problem));
        }
        other => panic!("{path}: {other:?}"),
    };
    check(LiteralProto::default(), "", P::MissingShape);
    check(
        LiteralProto { shape: shape("opaque[]"), ..LiteralProto::default() },
        "shape",
        P::NoValues { kind: "opaque" },
    );
    let tuple = shape("(f32[2]{0}, s32[])");
    check(
        LiteralProto { shape: tuple.clone(), ..LiteralProto::default() },
        "tuple_literals",
        P::TupleCount { expected: 2, actual: 0 },
    );
    let f32s = LiteralProto { shape: shape("f32[2]{0}"), f32s: vec![1.0, 2.0], ..LiteralProto::default() };
    let wrong_shape = LiteralProto { shape: shape("s32[3]{0}"), s32s: vec![1, 2, 3], ..LiteralProto::default() };
    check(
        LiteralProto {
            shape: tuple.clone(),
            tuple_literals: vec![f32s.clone(), wrong_shape],
            ..LiteralProto::default()
        },
        "tuple_literals[1].shape",
        P::ShapeMismatch { found: "s32[3]{0}".into(), expected: "s32[]".into() },
    );
    let no_shape = LiteralProto { s32s: vec![1], ..LiteralProto::default() };
    check(
        LiteralProto { shape: tuple.clone(), tuple_literals: vec![f32s.clone(), no_shape], ..LiteralProto::default() },
        "tuple_literals[1]",
        P::MissingShape,
    );
    let seven = LiteralProto { shape: shape("s32[]"), s32s: vec![7], ..LiteralProto::default() };
    check(
        LiteralProto {
            shape: tuple.clone(),
            tuple_literals: vec![f32s.clone(), seven.clone()],
            f32s: vec![1.0],
            ..LiteralProto::default()
        },
        "f32s",
        P::UnexpectedField { field: "f32s", element_type: "tuple" },
    );
    let ok = LiteralProto { shape: tuple, tuple_literals: vec![f32s.clone(), seven], ..LiteralProto::default() };
    assert_eq!(Literal::try_new(&ok).unwrap().to_string(), "( {1, 2}, 7 )");
    check(
        LiteralProto {
            shape: shape("f32[2]{0}"),
            f32s: vec![1.0, 2.0],
            sparse_indices: vec![0],
            ..LiteralProto::default()
        },
        "sparse_indices",
        P::Sparse,
    );
    check(
        LiteralProto {
            shape: shape("f32[2]{0}"),
            f32s: vec![1.0, 2.0],
            tuple_literals: vec![f32s],
            ..LiteralProto::default()
        },
        "tuple_literals",
        P::UnexpectedField { field: "tuple_literals", element_type: "f32" },
    );
    check(
        LiteralProto { shape: shape("c64[2]{0}"), c64s: vec![1.0, 2.0], ..LiteralProto::default() },
        "c64s",
        P::ValueCount { field: "c64s", expected: 4, actual: 2 },
    );
    check(
        LiteralProto { shape: shape("f16[2]{0}"), f16s: vec![0; 3], ..LiteralProto::default() },
        "f16s",
        P::ValueCount { field: "f16s", expected: 4, actual: 3 },
    );
    check(
        LiteralProto { shape: shape("u4[2]{0}"), u4s: vec![3, 0x10], ..LiteralProto::default() },
        "u4s",
        P::ValueOutOfRange { element_type: "u4", index: 1, byte: 0x10 },
    );
    check(
        LiteralProto { shape: shape("f4e2m1fn[1]{0}"), f4e2m1fns: vec![0x1f], ..LiteralProto::default() },
        "f4e2m1fns",
        P::ValueOutOfRange { element_type: "f4e2m1fn", index: 0, byte: 0x1f },
    );
    // A sign-extended s4 (as an int8_t) is accepted and reads the same as its low bits.
    let s4 = LiteralProto { shape: shape("s4[2]{0}"), s4s: vec![0xf8, 0x08], ..LiteralProto::default() };
    assert_eq!(Literal::try_new(&s4).unwrap().as_array().unwrap().to_vec::<i8>().unwrap(), [-8, -8]);
    check(
        LiteralProto { shape: shape("s4[1]{0}"), s4s: vec![0x78], ..LiteralProto::default() },
        "s4s",
        P::ValueOutOfRange { element_type: "s4", index: 0, byte: 0x78 },
    );
    // Dynamic sizes: one per dimension, within the bound; none on a static array.
    let dynamic = shape("f32[<=3,2]{1,0}");
    let values = vec![0.0f32; 6];
    check(
        LiteralProto { shape: dynamic.clone(), f32s: values.clone(), ..LiteralProto::default() },
        "dynamic_sizes",
        P::DynamicSizesCount { expected: 2, actual: 0 },
    );
    check(
        LiteralProto {
            shape: dynamic.clone(),
            f32s: values.clone(),
            dynamic_sizes: vec![4, 2],
            ..LiteralProto::default()
        },
        "dynamic_sizes[0]",
        P::DynamicSize { dimension: 0, size: 4, bound: 3 },
    );
    check(
        LiteralProto {
            shape: dynamic.clone(),
            f32s: values.clone(),
            dynamic_sizes: vec![1, 1],
            ..LiteralProto::default()
        },
        "dynamic_sizes[1]",
        P::DynamicSize { dimension: 1, size: 1, bound: 2 },
    );
    check(
        LiteralProto { shape: shape("f32[1]{0}"), f32s: vec![1.0], dynamic_sizes: vec![1], ..LiteralProto::default() },
        "dynamic_sizes",
        P::DynamicSizesCount { expected: 0, actual: 1 },
    );
    // A valid dynamic literal prints only its elements within the dynamic sizes (as XLA does).
    let valid = LiteralProto {
        shape: dynamic,
        f32s: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        dynamic_sizes: vec![2, 2],
        ..LiteralProto::default()
    };
    assert_eq!(Literal::try_new(&valid).unwrap().to_string(), "{ { 1, 2 }, { 3, 4 } }");
    check(
        LiteralProto { shape: shape("token[]"), preds: vec![true], ..LiteralProto::default() },
        "preds",
        P::UnexpectedField { field: "preds", element_type: "token" },
    );
    assert_eq!(
        Literal::try_new(&LiteralProto { shape: shape("token[]"), ..LiteralProto::default() }).unwrap().to_string(),
        "token"
    );
    // Values that do not fit the shape's type.
    let array = LiteralProto { shape: shape("f32[2]{0}"), f32s: vec![1.0, 2.0], ..LiteralProto::default() };
    let literal = Literal::try_new(&array).unwrap();
    assert!(matches!(literal.as_array().unwrap().to_vec::<f64>(), Err(Error::Literal(_))));
    assert!(matches!(literal.as_array().unwrap().copy_into(&mut [0f32; 3]), Err(Error::Literal(_))));
}
