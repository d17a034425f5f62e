//! Shardings (`docs/sharding.md`): XLA's verdicts, text and bytes from jaxlib's fixtures
//! (`tests/fixtures/shardings/`, written by `tools/fixtures/shardings.py`), the spec's byte
//! vectors, and properties against independent references written here.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;
use xla_shape::codec::{decode, decode_lenient, encode};
use xla_shape::proto::OpSharding;
use xla_shape::sharding::{self, DeviceId, HloSharding, Placement};
use xla_shape::{Dim, Error};

use crate::common::{bytes_from_hex, to_hex};

fn records(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shardings").join(name);
    fs::read_to_string(path).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

fn text(record: &Value, key: &str) -> String {
    record.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// The crate's deliberate refusals of what XLA accepts (`docs/sharding.md` §2.3, DS-1 to
/// DS-11; DS-7 is gone: named shardings are read, §9): an error of the crate on an input XLA took must name one of them.
const DIVERGENCES: &[(&str, &str)] = &[
    ("DS-1", "must be equal to the number of devices"),
    ("DS-2", "is not unique in tile assignment"),
    ("DS-3", "is negative in tile assignment"),
    ("DS-4", "is not a permutation"),
    ("DS-5", "must be positive"),
    ("DS-6", "`replicated`, `manual` or `unreduced`"),
    ("DS-6", "is not replicated, manual or unreduced"),
    ("DS-8", "subgroup dimensions but the tile assignment has"),
    ("DS-9", "overflows int64_t"),
    ("DS-9", "more than the limit of"),
    ("DS-10", "invalid protobuf encoding"),
    ("DS-11", "nested tuple sharding"),
];

fn divergence(error: &Error) -> Option<&'static str> {
    let message = error.to_string();
    DIVERGENCES.iter().find(|(_, phrase)| message.contains(phrase)).map(|(id, _)| *id)
}

/// The spec's observed bytes (`sharding.md` §4).
#[test]
fn spec_bytes() {
    for (text, bytes) in [
        ("{replicated}", ""),
        ("{maximal device=3}", "0801220103"),
        ("{manual}", "0804"),
        ("{devices=[2,2]0,2,1,3}", "08031a020202220400020103"),
        ("{devices=[2,1,4]<=[8] last_tile_dim_replicate}", "08031a0302010430014a0108520100"),
    ] {
        let sharding: HloSharding = text.parse().unwrap();
        assert_eq!(sharding.to_string(), text);
        assert_eq!(to_hex(&encode(&sharding.to_proto())), bytes, "{text}");
        let decoded: OpSharding = decode(&bytes_from_hex(bytes)[..]).unwrap();
        assert_eq!(HloSharding::from_proto(&decoded).unwrap(), sharding);
    }
}

/// Every text of the fixtures: XLA's verdict, its printed text and its bytes; where XLA placed
/// the devices (JAX's `op_sharding_to_indices`), the crate's ranges.
#[test]
fn text_agrees_with_xla() {
    let (mut agreed, mut diverged, mut placed) = (0, 0, 0);
    for record in records("text.jsonl") {
        let input = text(&record, "input");
        let ours = sharding::parse(&input);
        match (text(&record, "status").as_str(), &ours) {
            ("ok", Ok(sharding)) => {
                assert_eq!(sharding.to_string(), text(&record, "repr"), "{input}");
                assert_eq!(to_hex(&encode(&sharding.to_proto())), text(&record, "proto_hex"), "{input}");
                agreed += 1;
                for placement in record.get("placements").and_then(Value::as_array).into_iter().flatten() {
                    check_placement(sharding, placement, &input);
                    placed += 1;
                }
            }
            ("ok", Err(error)) => {
                assert!(divergence(error).is_some(), "{input}: XLA accepts, the crate says {error}");
                diverged += 1;
            }
            (_, Ok(sharding)) => panic!("{input}: XLA says {record}, the crate accepts {sharding}"),
            (_, Err(_)) => agreed += 1,
        }
    }
    assert!(agreed > 400 && placed > 150, "{agreed} agreed, {placed} placements");
    assert!(diverged > 0);
}

fn check_placement(sharding: &HloSharding, record: &Value, input: &str) {
    let dims: Vec<i64> = serde_json::from_value(record["shape"].clone()).unwrap();
    let n = record["num_devices"].as_u64().unwrap();
    let indices: Vec<Vec<[i64; 2]>> = serde_json::from_value(record["indices"].clone()).unwrap();
    let placement = Placement::new(sharding, &dims, Some(n)).unwrap();
    assert_eq!(placement.shards().len(), indices.len(), "{input}");
    for (shard, expected) in placement.shards().zip(&indices) {
        let ranges: Vec<[i64; 2]> = shard.ranges().map(|r| [r.start, r.end]).collect();
        assert_eq!(&ranges, expected, "{input} device {}", shard.device());
    }
}

/// Every `OpSharding` of the fixtures: XLA's `FromProto` verdict, its text, and `ToProto`'s
/// bytes.
#[test]
fn bytes_agree_with_xla() {
    let (mut agreed, mut diverged) = (0, 0);
    for record in records("proto.jsonl") {
        let input = bytes_from_hex(&text(&record, "input_hex"));
        let ours = decode_lenient::<OpSharding>(&input[..]).and_then(|d| HloSharding::from_proto(&d.message));
        match (text(&record, "status").as_str(), &ours) {
            ("ok", Ok(sharding)) => {
                assert_eq!(sharding.to_string(), text(&record, "repr"), "{}", to_hex(&input));
                assert_eq!(to_hex(&encode(&sharding.to_proto())), text(&record, "proto_hex"));
                agreed += 1;
            }
            ("ok", Err(error)) => {
                assert!(divergence(error).is_some(), "{}: XLA accepts, the crate says {error}", to_hex(&input));
                diverged += 1;
            }
            (_, Ok(sharding)) => panic!("{}: XLA says {record}, the crate accepts {sharding}", to_hex(&input)),
            (_, Err(_)) => agreed += 1,
        }
    }
    assert!(agreed > 100, "{agreed} agreed, {diverged} diverged");
}

/// XLA writes canonical bytes: every encoding XLA produced decodes losslessly and re-encodes to
/// the same bytes.
#[test]
fn xla_bytes_are_canonical() {
    for record in records("text.jsonl").into_iter().filter(|r| r["status"] == "ok") {
        let bytes = bytes_from_hex(&text(&record, "proto_hex"));
        let decoded = decode_lenient::<OpSharding>(&bytes[..]).unwrap();
        assert!(decoded.report.is_lossless(), "{}", text(&record, "input"));
        assert_eq!(encode(&decoded.message), bytes);
        assert_eq!(decode::<OpSharding>(&bytes[..]).unwrap(), decoded.message);
    }
}

// ---------------------------------------------------------------------------------------------
// Properties against references written here.

/// A valid sharding as text: a random tiling of `n` devices (explicit or iota), subgroups,
/// tuples of them.
fn single() -> impl Strategy<Value = String> {
    let tiled =
        (1usize..=3, 0usize..=2, prop::sample::select(vec![2u64, 3, 4, 6, 8, 12, 16]), any::<u64>(), any::<bool>())
            .prop_map(|(data, subgroups, n, seed, iota)| tiled_text(data, subgroups, n, seed, iota));
    prop_oneof![
        4 => tiled,
        1 => prop::sample::select(vec!["{replicated}", "{manual}", "{unknown}", "{unreduced}", "{maximal device=2}"])
            .prop_map(str::to_owned),
    ]
}

/// A deterministic pseudo-random choice from `seed`.
fn pick(seed: &mut u64, n: u64) -> u64 {
    *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    (*seed >> 33) % n.max(1)
}

fn factors(mut n: u64, parts: usize, seed: &mut u64) -> Vec<u64> {
    let mut out = vec![1u64; parts];
    let mut p = 2;
    while n > 1 {
        while n % p == 0 {
            let slot = usize::try_from(pick(seed, parts as u64)).unwrap();
            out[slot] *= p;
            n /= p;
        }
        p += 1;
    }
    out
}

fn join(values: &[u64]) -> String {
    values.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

fn tiled_text(data: usize, subgroups: usize, n: u64, mut seed: u64, iota: bool) -> String {
    let seed = &mut seed;
    let dims = factors(n, data + subgroups, seed);
    let assignment = if iota {
        let parts = usize::try_from(pick(seed, 3)).unwrap() + 1;
        let reshape = factors(n, parts, seed);
        let mut perm: Vec<u64> = (0..parts as u64).collect();
        for i in (1..parts).rev() {
            perm.swap(i, usize::try_from(pick(seed, i as u64 + 1)).unwrap());
        }
        let t = if parts > 1 { format!("T({})", join(&perm)) } else { String::new() };
        format!("[{}]<=[{}]{t}", join(&dims), join(&reshape))
    } else {
        let mut devices: Vec<u64> = (0..n).collect();
        for i in (1..devices.len()).rev() {
            devices.swap(i, usize::try_from(pick(seed, i as u64 + 1)).unwrap());
        }
        format!("[{}]{}", join(&dims), join(&devices))
    };
    let tail = match subgroups {
        0 => String::new(),
        1 if pick(seed, 2) == 0 => " last_tile_dim_replicate".to_owned(),
        k => {
            let names = ["replicated", "manual", "unreduced"];
            let types: Vec<&str> = (0..k).map(|_| names[usize::try_from(pick(seed, 3)).unwrap()]).collect();
            format!(" last_tile_dims={{{}}}", types.join(", "))
        }
    };
    format!("{{devices={assignment}{tail}}}")
}

fn any_sharding() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => single(),
        1 => prop::collection::vec(single(), 0..12).prop_map(|elements| format!("{{{}}}", elements.join(", "))),
    ]
}

/// The devices of a tile assignment, materialized the way numpy would: `iota(n)` reshaped,
/// transposed, flattened (the reference for the crate's lazy iota).
fn reference_devices(sharding: &HloSharding) -> Vec<u64> {
    let assignment = sharding.as_tiled().unwrap().tile_assignment();
    let Some(iota) = assignment.iota() else {
        return assignment.devices().map(|d| d.0).collect();
    };
    let reshape: Vec<u64> = iota.reshape_dims().iter().map(|&d| d.unsigned_abs()).collect();
    let perm = iota.transpose_perm();
    let transposed: Vec<u64> = perm.iter().map(|&p| reshape[p]).collect();
    let n: u64 = reshape.iter().product();
    (0..n)
        .map(|linear| {
            // The index in the transposed array, then the source index, then iota's value there.
            let mut rest = linear;
            let mut index = vec![0u64; transposed.len()];
            for (i, &size) in transposed.iter().enumerate().rev() {
                index[i] = rest % size;
                rest /= size;
            }
            let mut source = vec![0u64; reshape.len()];
            for (i, &p) in perm.iter().enumerate() {
                source[p] = index[i];
            }
            source.iter().zip(&reshape).fold(0, |acc, (&s, &d)| acc * d + s)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Text: print → parse → print is the identity from the second round on. (XLA's `Subgroup`
    /// does not re-canonicalize after merging, so its first print may parse to a simpler form:
    /// `docs/sharding.md` §3.3.)
    #[test]
    fn print_parse_print(text in any_sharding()) {
        let first: HloSharding = text.parse().unwrap();
        let second: HloSharding = first.to_string().parse().unwrap();
        let printed = second.to_string();
        let third: HloSharding = printed.parse().unwrap();
        prop_assert_eq!(third.to_string(), printed);
        prop_assert_eq!(third, second);
    }

    /// Bytes: encode → decode → encode is byte-identical, and `FromProto(ToProto(s)) == s` for a
    /// sharding in its settled form (see `print_parse_print`).
    #[test]
    fn decode_encode_bytes(text in any_sharding()) {
        let first: HloSharding = text.parse().unwrap();
        let sharding = HloSharding::from_proto(&first.to_proto()).unwrap();
        let bytes = encode(&sharding.to_proto());
        let decoded = decode_lenient::<OpSharding>(&bytes[..]).unwrap();
        prop_assert!(decoded.report.is_lossless());
        prop_assert_eq!(encode(&decoded.message), bytes.clone());
        let again = HloSharding::from_proto(&decoded.message).unwrap();
        prop_assert_eq!(encode(&again.to_proto()), bytes);
        prop_assert_eq!(again, sharding);
    }

    /// Every element is held by exactly the devices the inverse map names, and each device's
    /// ranges hold exactly the elements whose holders include it; the reference is a brute-force
    /// walk over the materialized tile assignment (ranges `min(i·⌈d/t⌉, d)`).
    #[test]
    fn inverse_map_matches_reference(text in single(), extra in prop::collection::vec(0i64..4, 3)) {
        let sharding: HloSharding = text.parse().unwrap();
        let Some(tiled) = sharding.as_tiled() else { return Ok(()) };
        let tiles: Vec<i64> = tiled.tiles().to_vec();
        let count = tiled.tile_assignment().num_elements();
        prop_assume!(count > 1);
        // Uneven sizes: some tiles short, some past the end.
        let dims: Vec<i64> = tiles.iter().zip(extra.iter().cycle()).map(|(&t, &e)| (t + e - 1).max(0)).collect();
        let placement = Placement::new(&sharding, &dims, Some(count)).unwrap();
        let devices = reference_devices(&sharding);
        let dims_all = tiled.tile_assignment().dimensions().to_vec();
        let replication = usize::try_from(count / tiles.iter().map(|&t| t.unsigned_abs()).product::<u64>()).unwrap();
        let elements: i64 = dims.iter().product();
        for linear in 0..elements {
            let mut rest = linear;
            let mut index = vec![0i64; dims.len()];
            for (i, &d) in dims.iter().enumerate().rev() {
                index[i] = rest % d;
                rest /= d;
            }
            // Reference: the tile along each dimension, then every subgroup position.
            let tile: Vec<usize> = index.iter().zip(&dims).zip(&tiles).map(|((&i, &d), &t)| {
                let size = (d + t - 1) / t;
                usize::try_from(i / size).unwrap()
            }).collect();
            let mut base = 0usize;
            for (k, &t) in tile.iter().enumerate() {
                base = base * usize::try_from(dims_all[k]).unwrap() + t;
            }
            let expected: BTreeSet<u64> = devices[base * replication..(base + 1) * replication].iter().copied().collect();
            let got: BTreeSet<u64> = placement.devices_holding(&index).unwrap().map(|d| d.0).collect();
            prop_assert_eq!(&got, &expected, "{} at {:?}", text, index);
            for shard in placement.shards() {
                let inside = shard.ranges().zip(&index).all(|(r, &i)| r.contains(&i));
                prop_assert_eq!(inside, expected.contains(&shard.device().0), "{} device {}", text, shard.device());
            }
        }
    }
}

/// A 4096-device iota places every device without materializing the list, and each device's
/// shard round-trips through the inverse map.
#[test]
fn large_iota_is_lazy_and_exact() {
    let sharding: HloSharding = "{devices=[16,16,16]<=[16,256]T(1,0) last_tile_dim_replicate}".parse().unwrap();
    let placement = Placement::new(&sharding, &[1000, 17], Some(4096)).unwrap();
    let mut seen = 0u64;
    for shard in placement.shards() {
        assert_eq!(shard.device(), DeviceId(seen));
        let start: Vec<i64> = shard.ranges().map(|r| r.start).collect();
        if shard.ranges().all(|r| !r.is_empty()) {
            assert!(placement.devices_holding(&start).unwrap().any(|d| d == shard.device()));
        }
        assert_eq!(shard.replica_group().count(), 16);
        seen += 1;
    }
    assert_eq!(seen, 4096);
    // 17 rows in 16 tiles of 2: tiles 9..16 are past the end.
    let last = placement.shard(DeviceId(4095)).unwrap();
    assert_eq!((last.start(Dim(1)), last.limit(Dim(1))), (17, 17));
}

#[test]
fn a_replicated_placement_needs_the_device_count() {
    use xla_shape::error::ShardingProblem;
    let replicated: HloSharding = "{replicated}".parse().unwrap();
    let Err(Error::Sharding(e)) = Placement::new(&replicated, &[4, 2], None) else { panic!("placed without devices") };
    assert_eq!(e.problem, ShardingProblem::DeviceCountRequired);
    assert!(e.problem.to_string().contains("needs the program's device count"), "{}", e.problem);
    let Err(Error::Sharding(e)) = Placement::new(&replicated, &[4, 2], Some(0)) else { panic!("placed on no devices") };
    assert_eq!(e.problem, ShardingProblem::NoDevices);
    assert_eq!(Placement::new(&replicated, &[4, 2], Some(3)).unwrap().shards().count(), 3);
}
