//! Named ("V3") shardings (`docs/sharding.md` §9): jaxlib 0.10.2's verdicts, text, bytes, V2
//! conversion and tile shapes from its fixtures (`tests/fixtures/shardings/named_*.jsonl`,
//! written by `tools/fixtures/named_shardings.py`), XLA's parser test, and the V3 → V2 conversion
//! held by a property test against an independent reference (device coordinates on the mesh).

use std::fmt::Write;
use std::fs;
use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;
use xla_shape::codec::{decode, decode_lenient, encode};
use xla_shape::proto::OpSharding;
use xla_shape::sharding::{self, DeviceId, HloSharding, Mesh, Placement, ShardingKind, SubgroupType};
use xla_shape::{Dim, Error};

use crate::common::{bytes_from_hex, to_hex};

fn records(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shardings").join(name);
    fs::read_to_string(path).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

fn text<'a>(record: &'a Value, key: &str) -> &'a str {
    record.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The crate's refusals of named shardings jaxlib accepts (`docs/sharding.md` §9.6): an error
/// of the crate on an input XLA took must name one of them.
const DIVERGENCES: &[(&str, &str)] = &[
    ("DS-1", "must be equal to the number of devices"),
    ("DS-3", "is negative in tile assignment"),
    ("DS-4", "is not a permutation"),
    ("DS-9", "more than the limit of"),
    ("DS-12", "field 1 (tuple_shardings) is reserved"),
    ("DS-13", "mesh axis size must be positive"),
    ("DS-14", "iota_transpose_perm has"),
    ("DS-15", "a maximal mesh has no axes"),
];

/// XLA's abort messages (a CHECK failure's text) and the phrase the crate's error carries for
/// the same rule.
const PHRASES: &[(&str, &str)] = &[
    ("Axes cannot coexist or axes overlap", "axes cannot coexist or axes overlap"),
    ("Sub-axis next_pre_size must divide the full axis size", "sub-axis next_pre_size must divide the full axis size"),
    ("Sub-axis size must be strictly less than the full axis size", "sub-axis size must be strictly less"),
    ("Axis index must be less than number of axes", "axis index must be less than number of axes"),
    ("mesh_axis_index_ >= 0", "axis index must be less than number of axes (and non-negative)"),
    ("Adjacent axes in dimension sharding can be merged", "adjacent axes in dimension sharding can be merged"),
    ("axes must be sorted by mesh axis index and sub-axis pre-size", "axes must be sorted by mesh axis index"),
    ("Mesh has duplicate axis names", "mesh has duplicate axis names"),
    ("Non-iota device assignment has iota device id list", "non-iota device assignment has iota device id list"),
    ("Device ids must be a permutation of [0,1,2,3...]", "device ids must be a permutation of [0,1,2,3...]"),
    ("Number of device ids must match the product of mesh axis sizes", "number of device ids must match"),
    ("Mesh axis size must be positive", "mesh axis size must be positive"),
    ("Maximal mesh must have exactly 1 device id", "maximal mesh must have exactly 1 device id"),
    ("Mesh must not have an iota transform and a device ID list", "must not have an iota transform and a device id"),
    ("is not a valid axis name or index in mesh", "is not a valid axis name or index in mesh"),
    ("sharding requires non-empty mesh", "sharding requires non-empty mesh"),
];

fn divergence(error: &Error) -> Option<&'static str> {
    let message = error.to_string();
    DIVERGENCES.iter().find(|(_, phrase)| message.contains(phrase)).map(|(id, _)| *id)
}

/// A refusal where XLA aborted: the crate's message has XLA's phrase for the same rule.
fn check_abort(record: &Value, error: &Error, input: &str) {
    let fatal = record.get("fatal").and_then(|f| f.get(0)).and_then(Value::as_str).unwrap_or_default();
    if let Some((_, ours)) = PHRASES.iter().find(|(xla, _)| fatal.contains(xla)) {
        let message = error.to_string().to_lowercase();
        assert!(message.contains(ours), "{input}: XLA aborted with {fatal:?}, the crate said {message:?}");
    }
}

/// The tile shape (`HloSharding::tile`) of `dims` under `sharding`: its placement's, or where
/// there is none (a V2 form of one device, or without data dimensions), XLA's `TileShape` loop
/// over the data dimensions there are.
fn tile(sharding: &HloSharding, dims: &[i64]) -> Vec<i64> {
    let v2 = sharding.to_v2().unwrap();
    match v2.kind() {
        ShardingKind::Tiled(tiled) if tiled.data_rank() == dims.len() && tiled.tile_assignment().num_elements() > 1 => {
            Placement::new(sharding, dims, None).unwrap().tile_shape().to_vec()
        }
        ShardingKind::Tiled(tiled) => {
            dims.iter().enumerate().map(|(i, &d)| tiled.tiles().get(i).map_or(d, |&t| (d + t - 1) / t)).collect()
        }
        _ => dims.to_vec(),
    }
}

fn ints(value: Option<&Value>) -> Option<Vec<i64>> {
    value?.as_array()?.iter().map(Value::as_i64).collect()
}

/// A sharding XLA accepted: the same text, bytes, V2 conversion, tile shape; for text, the same
/// verdict on the printed text.
fn check_accepted(sharding: &HloSharding, record: &Value, input: &str) {
    assert_eq!(sharding.to_string(), text(record, "repr"), "{input}");
    assert_eq!(to_hex(&encode(&sharding.to_proto())), text(record, "proto_hex"), "{input}");
    let v2 = record.get("v2").expect("v2 answer");
    if text(v2, "status") == "ok" {
        let ours = sharding.to_v2().unwrap();
        assert_eq!(ours.to_string(), text(v2, "repr"), "{input}: V2");
        assert_eq!(to_hex(&encode(&ours.to_proto())), text(v2, "proto_hex"), "{input}: V2 bytes");
    }
    if let Some(t) = record.get("tile") {
        let shape = ints(t.get("shape")).unwrap();
        for key in ["dims", "v2_dims"] {
            if let Some(expected) = ints(t.get(key)) {
                assert_eq!(tile(sharding, &shape), expected, "{input}: tile {key}");
            }
        }
    }
    if let Some(reparse) = record.get("reparse") {
        let ours = sharding::parse(text(record, "repr"));
        match text(reparse, "status") {
            "ok" => assert_eq!(ours.unwrap().to_string(), text(reparse, "repr"), "{input}: reparse"),
            _ => assert!(ours.is_err(), "{input}: XLA does not parse its own text back, the crate does"),
        }
    }
}

/// Counts of one fixture file's answers: agreed, refused as documented, refused with XLA.
#[derive(Default, Debug)]
struct Tally {
    agreed: usize,
    diverged: usize,
    refused: usize,
}

fn judge(record: &Value, input: &str, ours: Result<HloSharding, Error>, tally: &mut Tally) {
    match (text(record, "status"), ours) {
        ("ok", Ok(sharding)) => {
            check_accepted(&sharding, record, input);
            tally.agreed += 1;
        }
        ("ok", Err(error)) => {
            assert!(divergence(&error).is_some(), "{input}: XLA accepts, the crate says {error}");
            tally.diverged += 1;
        }
        ("crashed", Err(error)) => {
            check_abort(record, &error, input);
            tally.refused += 1;
        }
        (_, Err(_)) => tally.refused += 1,
        (status, Ok(sharding)) => panic!("{input}: XLA {status}, the crate accepts {sharding}"),
    }
}

/// vectors.md N1: every text of the fixtures.
#[test]
fn named_text_agrees_with_jaxlib() {
    let mut tally = Tally::default();
    for record in records("named_text.jsonl") {
        let input = text(&record, "input");
        judge(&record, input, sharding::parse(input), &mut tally);
    }
    eprintln!("named_text.jsonl: {tally:?}");
    assert!(tally.agreed >= 180 && tally.refused >= 60, "{tally:?}");
}

/// vectors.md N2: every `OpSharding` of the fixtures (XLA's own bytes and hand-made ones).
#[test]
fn named_bytes_agree_with_jaxlib() {
    let mut tally = Tally::default();
    for record in records("named_proto.jsonl") {
        let input = text(&record, "input_hex");
        let ours =
            decode_lenient::<OpSharding>(&bytes_from_hex(input)[..]).and_then(|d| HloSharding::from_proto(&d.message));
        judge(&record, input, ours, &mut tally);
    }
    eprintln!("named_proto.jsonl: {tally:?}");
    assert!(tally.agreed >= 200 && tally.refused >= 15, "{tally:?}");
}

/// vectors.md N2: what the codec decodes strictly it encodes byte for byte, the reserved
/// field 1 too.
#[test]
fn named_bytes_are_wire_exact() {
    let mut exact = 0;
    for record in records("named_proto.jsonl") {
        let bytes = bytes_from_hex(text(&record, "input_hex"));
        if let Ok(proto) = decode::<OpSharding>(&bytes[..]) {
            assert_eq!(encode(&proto), bytes, "{}", text(&record, "input_hex"));
            exact += 1;
        }
    }
    assert!(exact >= 200, "{exact}");
}

/// XLA's `HloParserTest.ParseNamedShardingMaximal` (`xla/hlo/parser/hlo_parser_test.cc`): the
/// text parses to the maximal named sharding of device 5 and prints back unchanged.
#[test]
fn parse_named_sharding_maximal() {
    let original = "{maximal_mesh[device_id=5]}";
    let sharding = sharding::parse(original).unwrap();
    assert_eq!(sharding.to_string(), original);
    let ShardingKind::Named(named) = sharding.kind() else { panic!("{sharding:?}") };
    assert_eq!(*named.mesh(), Mesh::Maximal(DeviceId(5)));
    assert_eq!(to_hex(&encode(&sharding.to_proto())), "72051203120105");
    assert_eq!(sharding.to_v2().unwrap().to_string(), "{maximal device=5}");
}

/// vectors.md N3: the named-sharding texts of XLA's parser tests, each printed back as jaxlib
/// 0.10.2 prints it.
#[test]
fn xla_parser_test_texts() {
    for (input, printed) in [
        (r"{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}, {'b':(2)2}]}", None),
        (r"{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'b':(2)2}, {'d':(4)2, 'c', ?}]}", None),
        (r"{mesh['a'=2,'b'=4,'c'=4,'d'=2], device_ids=([4,16]T(1,0)), [{'a'}]}", None),
        (r"{mesh['x'=2,'y'=2], device_ids=(0,2,1,3), [{'x'}]}", None),
        ("{mesh[], replicated}", None),
        (r"{mesh['a'=2,'b'=4], replicated}", None),
        (r"{mesh['a'=2,'b'=4], [{'a'}], replicated={'b'}}", None),
        (r"{mesh['a.b'=2,'<axis> def'=4,'z/w'=2], [{'a.b'}, {'<axis> def':(2)2, 'z/w'}]}", None),
        (r"{mesh['a'=2,'b'=4], unreduced}", None),
        (r"{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{}, {'b'}], unreduced={'d':(4)2}}", None),
        (r"{mesh['a'=2,'b'=4], manual}", None),
        (r"{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}], manual={'d':(4)2}}", None),
        (
            r#"{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}], replicated={'c'}, unreduced={'d':(4)2}, manual={'b':(2)2}, metadata={{op_name="foo"}, {op_name="bar"}}}"#,
            Some("{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}], replicated={'c'}, unreduced={'d':(4)2}, manual={'b':(2)2}}"),
        ),
    ] {
        let sharding = sharding::parse(input).unwrap();
        assert_eq!(sharding.to_string(), printed.unwrap_or(input));
    }
}

/// vectors.md N4: the typed errors, with XLA's phrases.
#[test]
fn refusals_carry_xla_phrases() {
    for (input, phrase) in [
        (r#"{mesh["x"=2,"y"=4], [{"x"}, {"x"}]}"#, "axes cannot coexist or axes overlap"),
        (r#"{mesh["x"=2,"y"=4], [{"z"}]}"#, "is not a valid axis name or index in mesh"),
        (r#"{mesh["x"=2,"y"=4], [{"y":(1)3}]}"#, "sub-axis next_pre_size must divide the full axis size"),
        (r#"{mesh["x"=2,"y"=2], device_ids=(0,2,1), [{"x"}]}"#, "number of device ids must match"),
        (r#"{mesh["x"=2,"x"=4], [{"x"}]}"#, "mesh has duplicate axis names"),
    ] {
        let error = sharding::parse(input).unwrap_err();
        assert!(error.to_string().contains(phrase), "{input}: {error}");
    }
    let proto: OpSharding =
        decode(&bytes_from_hex("7218120e0a050a017810020a050a017910041a060a0208051001")[..]).unwrap();
    let Err(Error::Sharding(error)) = HloSharding::from_proto(&proto) else { panic!() };
    assert_eq!(error.path.to_string(), "named_sharding.dim_shardings");
}

/// Placement, split and assemble see a named sharding as its V2 form.
#[test]
fn placement_of_a_named_sharding() {
    let named: HloSharding = r#"{mesh["x"=2,"y"=2], device_ids=(1,0,3,2), [{"y"}, {"x"}]}"#.parse().unwrap();
    let placement = Placement::new(&named, &[5, 4], None).unwrap();
    let v2 = Placement::new(&named.to_v2().unwrap(), &[5, 4], None).unwrap();
    let ranges = |p: &Placement| {
        p.shards().map(|s| (s.device(), s.start(Dim(0)), s.limit(Dim(0)), s.start(Dim(1)))).collect::<Vec<_>>()
    };
    assert_eq!(ranges(&placement), ranges(&v2));
    assert_eq!(placement.tile_shape(), [3, 2]);
}

// ---------------------------------------------------------------------------------------------
// V3 → V2 against a reference: each device's coordinates on the mesh.
// ---------------------------------------------------------------------------------------------

/// A generated named sharding: mesh sizes, device order, and where each axis piece goes
/// (`(axis, pre_size, size)` pieces; 0..rank a dimension, rank = replicated, rank + 1 =
/// unreduced, rank + 2 = manual, rank + 3 = unused).
#[derive(Debug, Clone)]
struct Case {
    sizes: Vec<i64>,
    order: Vec<u64>,
    rank: usize,
    pieces: Vec<((usize, i64, i64), usize)>,
}

fn case() -> impl Strategy<Value = Case> {
    (prop::collection::vec(prop::sample::select(vec![1i64, 2, 3, 4, 8]), 1..4), 1usize..4, any::<u64>()).prop_map(
        |(sizes, rank, seed)| {
            let mut state = seed | 1;
            let mut next = |n: u64| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state % n.max(1)
            };
            let n: i64 = sizes.iter().product();
            let mut order: Vec<u64> = (0..n.unsigned_abs()).collect();
            if next(2) == 0 {
                for i in (1..order.len()).rev() {
                    order.swap(i, usize::try_from(next(u64::try_from(i).unwrap() + 1)).unwrap());
                }
            }
            let mut pieces = Vec::new();
            let places = u64::try_from(rank).unwrap() + 4;
            for (axis, &size) in sizes.iter().enumerate() {
                let first = usize::try_from(next(places)).unwrap();
                let second = usize::try_from(next(places)).unwrap();
                // Two halves in one place would be mergeable neighbours (XLA refuses those).
                if size >= 4 && first != second {
                    pieces.push(((axis, 1, 2), first));
                    pieces.push(((axis, 2, size / 2), second));
                } else {
                    pieces.push(((axis, 1, size), first));
                }
            }
            Case { sizes, order, rank, pieces }
        },
    )
}

fn axis_text(case: &Case, (axis, pre, size): (usize, i64, i64)) -> String {
    if pre == 1 && size == case.sizes[axis] { format!("\"a{axis}\"") } else { format!("\"a{axis}\":({pre}){size}") }
}

fn case_text(case: &Case) -> String {
    let mesh: Vec<String> = case.sizes.iter().enumerate().map(|(i, s)| format!("\"a{i}\"={s}")).collect();
    let iota = case.order.iter().zip(0u64..).all(|(&d, i)| d == i);
    let ids = if iota {
        String::new()
    } else {
        format!(", device_ids=({})", case.order.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
    };
    let list = |place: usize| -> Vec<String> {
        case.pieces.iter().filter(|(_, p)| *p == place).map(|(piece, _)| axis_text(case, *piece)).collect()
    };
    let dims: Vec<String> = (0..case.rank).map(|d| format!("{{{}}}", list(d).join(", "))).collect();
    let mut out = format!("{{mesh[{}]{ids}, [{}]", mesh.join(","), dims.join(", "));
    for (k, name) in ["replicated", "unreduced", "manual"].iter().enumerate() {
        let axes = list(case.rank + k);
        if !axes.is_empty() {
            write!(out, ", {name}={{{}}}", axes.join(", ")).unwrap();
        }
    }
    out + "}"
}

/// The digit of piece `(axis, pre, size)` in a device's mesh coordinates (major factors first).
fn digit(case: &Case, coords: &[i64], (axis, pre, size): (usize, i64, i64)) -> i64 {
    (coords[axis] / (case.sizes[axis] / (pre * size))) % size
}

/// The reference: for each device, its tile index per dimension and its manual and unreduced
/// group indices, from its coordinates on the mesh.
fn reference(case: &Case) -> Vec<(u64, Vec<i64>, i64, i64)> {
    let n: i64 = case.sizes.iter().product();
    (0..n)
        .map(|position| {
            let mut coords = vec![0; case.sizes.len()];
            let mut rest = position;
            for (c, &s) in coords.iter_mut().zip(&case.sizes).rev() {
                *c = rest % s;
                rest /= s;
            }
            let number = |place: usize| {
                case.pieces
                    .iter()
                    .filter(|(_, p)| *p == place)
                    .fold(0, |acc, (piece, _)| acc * piece.2 + digit(case, &coords, *piece))
            };
            let tiles = (0..case.rank).map(number).collect();
            (case.order[usize::try_from(position).unwrap()], tiles, number(case.rank + 2), number(case.rank + 1))
        })
        .collect()
}

fn count(case: &Case, place: usize) -> i64 {
    case.pieces.iter().filter(|(_, p)| *p == place).map(|(piece, _)| piece.2).product()
}

proptest! {
    /// vectors.md N5: the V2 sharding puts every device where its mesh coordinates say.
    #[test]
    fn v3_to_v2_matches_mesh_coordinates(case in case()) {
        let text = case_text(&case);
        let sharding = sharding::parse(&text).unwrap();
        let v2 = sharding.to_v2().unwrap();
        let reference = reference(&case);
        let data: Vec<i64> = (0..case.rank).map(|d| count(&case, d)).collect();
        let (manual, unreduced) = (count(&case, case.rank + 2), count(&case, case.rank + 1));
        match v2.kind() {
            ShardingKind::Replicated => {
                prop_assert!(data.iter().all(|&t| t == 1) && manual == 1 && unreduced == 1, "{text} → {v2}");
            }
            ShardingKind::Manual => prop_assert!(data.iter().all(|&t| t == 1) && unreduced == 1, "{text}"),
            ShardingKind::Unreduced => prop_assert!(data.iter().all(|&t| t == 1) && manual == 1, "{text}"),
            ShardingKind::Tiled(tiled) => {
                let dims = tiled.tile_assignment().dimensions();
                prop_assert_eq!(tiled.tiles(), &data[..], "{} → {}", text, v2);
                for (position, device) in tiled.tile_assignment().devices().enumerate() {
                    let mut digits = vec![0i64; dims.len()];
                    let mut rest = i64::try_from(position).unwrap();
                    for (d, &s) in digits.iter_mut().zip(dims).rev() {
                        *d = rest % s;
                        rest /= s;
                    }
                    let (_, tiles, m, u) = reference.iter().find(|r| r.0 == device.0).unwrap();
                    prop_assert_eq!(&digits[..case.rank], &tiles[..], "{} → {}: device {}", text, v2, device);
                    for k in 0..tiled.subgroup_rank() {
                        let want = match tiled.subgroup_type(k) {
                            Some(SubgroupType::Manual) => *m,
                            Some(SubgroupType::Unreduced) => *u,
                            _ => continue,
                        };
                        prop_assert_eq!(digits[case.rank + k], want, "{} → {}: device {}", text, v2, device);
                    }
                }
            }
            other => prop_assert!(false, "{text} → {other:?}"),
        }
        // Printing, parsing and the bytes go round.
        let printed = sharding.to_string();
        prop_assert_eq!(sharding::parse(&printed).unwrap().to_string(), printed.clone());
        let proto: OpSharding = decode(&encode(&sharding.to_proto())[..]).unwrap();
        prop_assert_eq!(HloSharding::from_proto(&proto).unwrap(), sharding);
    }
}
