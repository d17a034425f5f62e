//! Resharding (issue 39, `docs/shard-buffers.md` §9): `ReshardPlan` against the reference of
//! assembling the source buffers, relaying the global buffer out to the target layout and
//! splitting it, for random shapes and layouts (tiles, sub-byte, legacy padding), tilings with
//! replicas over any device ids, padded shards, in one piece, in parts and as byte runs; and the
//! typed errors of bad input.

use proptest::prelude::*;
use xla_shape::error::ShardBufferProblem;
use xla_shape::relayout::RelayoutPlan;
use xla_shape::sharding::buffers::{ShardBuffers, ShardForm, ShardRange};
use xla_shape::sharding::reshard::{ReshardPlan, ReshardRun};
use xla_shape::sharding::{DeviceId, HloSharding, ShardingKind};
use xla_shape::strategy::{ShapeConfig, array_shape};
use xla_shape::{Error, PrimitiveType, ShapeBuf};

use super::shard_buffers::{bounds, tiling_ranges};

type Shards = Vec<(DeviceId, Vec<u8>)>;

/// (shape, source sharding, its device count, target sharding, its device count).
type Pair = (&'static str, &'static str, Option<u64>, &'static str, Option<u64>);

fn view(shards: &Shards) -> impl Iterator<Item = (DeviceId, &[u8])> {
    shards.iter().map(|(d, b)| (*d, b.as_slice()))
}

/// The reference: the source buffers assembled, relaid out to the target's global layout and
/// split.
fn reference(from: &ShardBuffers, to: &ShardBuffers, (a, b): (&ShapeBuf, &ShapeBuf), shards: &Shards) -> Shards {
    let global = from.assemble(view(shards)).unwrap();
    let moved = RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap().run_to_vec(&global).unwrap();
    to.split(&moved).unwrap()
}

/// One side of a case: a tiling of the array (`tiles` per dimension, `replicas` per tile), its
/// device ids (`order`, a permutation, scaled and offset so that the two sides' ids differ),
/// and whether the buffers are padded to the tile.
#[derive(Debug, Clone)]
struct Side {
    tiles: Vec<u64>,
    replicas: u64,
    order: Vec<u64>,
    scale: u64,
    padded: bool,
}

fn side(rank: usize) -> impl Strategy<Value = Side> {
    (proptest::collection::vec(1u64..=4, rank), 1u64..=3, 1u64..=3, any::<bool>()).prop_flat_map(
        |(tiles, replicas, scale, padded)| {
            let devices = tiles.iter().product::<u64>() * replicas;
            (Just((0..devices).collect::<Vec<_>>()).prop_shuffle(), Just((tiles, replicas, scale, padded)))
                .prop_map(|(order, (tiles, replicas, scale, padded))| Side { tiles, replicas, order, scale, padded })
        },
    )
}

fn plan_side(shape: &ShapeBuf, s: &Side) -> ShardBuffers {
    let array = shape.as_array().unwrap();
    let order: Vec<u64> = s.order.iter().map(|&k| k * s.scale + s.scale - 1).collect();
    let (ranges, tile) = tiling_ranges(&bounds(array), &s.tiles, s.replicas, &order);
    let form = if s.padded { ShardForm::PaddedToTile(tile) } else { ShardForm::Exact };
    ShardBuffers::new(array, &ranges, &form).unwrap()
}

/// A source shape (any element type and layout), a target layout of the same element type and
/// dimensions, the two sides and the global bytes.
fn case() -> impl Strategy<Value = (ShapeBuf, ShapeBuf, Side, Side, Vec<u8>)> {
    let config = ShapeConfig { max_rank: 3, max_dimension: 9, non_arrays: false, ..ShapeConfig::default() };
    array_shape(config).prop_flat_map(|shape| {
        let array = shape.as_array().unwrap();
        let rank = array.rank();
        let dims: Vec<i64> = bounds(array).iter().map(|&d| i64::try_from(d).unwrap()).collect();
        let len = usize::try_from(xla_shape::size::storage_bytes(array).unwrap()).unwrap();
        let target = prop_oneof![1 => Just(shape.clone()), 3 => super::relayout::layout(array.element_type(), dims)];
        (Just(shape.clone()), target, side(rank), side(rank), proptest::collection::vec(any::<u8>(), len))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The reshard gives the reference's bytes for every target, whole, in parts of any size,
    /// and as byte runs where it has them; every transfer reads one of its box's replicas.
    #[test]
    fn reshard_equals_split_of_assemble((a, b, from, to, global) in case(), part in 1usize..200) {
        let (source, target) = (plan_side(&a, &from), plan_side(&b, &to));
        let shards = source.split(&global).unwrap();
        let expected = reference(&source, &target, (&a, &b), &shards);
        let plan = ReshardPlan::new(source, target).unwrap();
        let got = plan.run(view(&shards)).unwrap();
        prop_assert_eq!(&got, &expected);
        let sources = plan.sources(view(&shards)).unwrap();
        let mut buf = vec![0x5Au8; part];
        for (device, bytes) in &expected {
            let mut cut = Vec::new();
            for start in (0..bytes.len()).step_by(part) {
                let end = (start + part).min(bytes.len());
                let out = &mut buf[..end - start];
                out.fill(0x5A);
                sources.target_range(*device, out, start..end).unwrap();
                cut.extend_from_slice(out);
            }
            prop_assert_eq!(&cut, bytes);
            if let Some(runs) = plan.byte_runs(*device) {
                let min = runs.min_len();
                let mut copied = vec![0u8; bytes.len()];
                for run in runs {
                    prop_assert!(run.len >= min);
                    let source = &shards.iter().find(|(d, _)| *d == run.source).unwrap().1;
                    let [s, t, n] = [run.source_offset, run.target_offset, run.len].map(|v| usize::try_from(v).unwrap());
                    copied[t..t + n].copy_from_slice(&source[s..s + n]);
                }
                prop_assert_eq!(&copied, bytes);
            }
        }
        for t in plan.transfers() {
            prop_assert!(t.replicas.contains(&t.source));
            prop_assert!(!t.replicas.contains(&t.target) || t.source == t.target);
            prop_assert_eq!(t.elements, t.extent.iter().product::<u64>());
        }
        // Every element of every target comes from exactly one transfer.
        for device in plan.target().devices() {
            let covered: u64 = plan.transfers_to(device).unwrap().map(|t| t.elements).sum();
            let shard = plan.target().shard_shape(device).unwrap();
            let elements: u64 = if to.padded {
                let array = b.as_array().unwrap();
                let (ranges, _) = tiling_ranges(&bounds(array), &to.tiles, to.replicas, &to.order.iter().map(|&k| k * to.scale + to.scale - 1).collect::<Vec<_>>());
                ranges.iter().find(|r| r.device == device).unwrap().extent().product()
            } else {
                bounds(shard.as_array().unwrap()).iter().product()
            };
            prop_assert_eq!(covered, elements);
        }
    }
}

fn sharded(shape: &str, sharding: &str, devices: Option<u64>) -> (ShapeBuf, ShardBuffers) {
    let shape: ShapeBuf = shape.parse().unwrap();
    let array = shape.as_array().unwrap();
    let sharding: HloSharding = sharding.parse().unwrap();
    let placement = sharding.placement(&array, devices).unwrap();
    let plan = ShardBuffers::from_placement(array, &placement, &ShardForm::Exact).unwrap();
    (shape, plan)
}

/// Shardings as XLA writes them: iotas and explicit lists, partial and full replication, maximal,
/// uneven tiles, device counts that change (8 → 4 → 2 → 8), a dimension over two mesh axes.
#[test]
fn reshards_between_sharding_texts_equal_the_reference() {
    let pairs: &[Pair] = &[
        ("f32[16,8]", "{devices=[2,4]<=[8]}", None, "{devices=[8,1]<=[8]}", None),
        ("f32[16,8]", "{devices=[2,4]<=[8]}", None, "{devices=[1,4]0,1,2,3}", None),
        ("f32[16,8]", "{devices=[1,4]0,1,2,3}", None, "{devices=[2,1]5,7}", None),
        ("f32[16,8]", "{devices=[2,1]5,7}", None, "{devices=[4,2]<=[2,4]T(1,0)}", None),
        ("bf16[6,10]{0,1}", "{devices=[2,2,2]<=[8] last_tile_dim_replicate}", None, "{replicated}", Some(8)),
        ("bf16[6,10]", "{replicated}", Some(4), "{devices=[4,1]3,2,1,0}", None),
        ("s8[5,7,3]", "{devices=[2,1,3]<=[6]}", None, "{maximal device=2}", Some(8)),
        ("s8[5,7,3]", "{maximal device=2}", None, "{devices=[3,2,1]<=[2,3]T(1,0)}", None),
        ("f64[9]", "{devices=[4,2]<=[8] last_tile_dim_replicate}", None, "{devices=[8]7,6,5,4,3,2,1,0}", None),
        ("s4[6,5]{1,0:E(4)}", "{devices=[2,2]<=[4]}", None, "{devices=[1,3]0,2,4}", None),
        ("u8[0,4]", "{devices=[1,2]<=[2]}", None, "{devices=[1,4]<=[4]}", None),
        ("f32[]", "{replicated}", Some(2), "{maximal device=5}", None),
    ];
    for &(shape, from, from_n, to, to_n) in pairs {
        let (a, source) = sharded(shape, from, from_n);
        let (_, target) = sharded(shape, to, to_n);
        let len = usize::try_from(source.global_len()).unwrap();
        let global: Vec<u8> = (0..len).map(|k| u8::try_from((k * 7 + 3) % 251).unwrap()).collect();
        let shards = source.split(&global).unwrap();
        let expected = reference(&source, &target, (&a, &a), &shards);
        let plan = ReshardPlan::new(source, target).unwrap();
        assert_eq!(plan.run(view(&shards)).unwrap(), expected, "{shape} {from} → {to}");
    }
}

/// A target layout that differs (tiles → row-major, and back) in the same pass.
#[test]
fn a_target_layout_that_differs_is_done_in_the_same_pass() {
    for (a, b) in [("f32[16,256]{1,0:T(8,128)}", "f32[16,256]{1,0}"), ("bf16[8,6]{0,1}", "bf16[8,6]{1,0:T(2,2)}")] {
        let (a_shape, source) = sharded(a, "{devices=[2,2]<=[4]}", None);
        let (b_shape, target) = sharded(b, "{devices=[1,2,2]<=[4] last_tile_dim_replicate}", None);
        let len = usize::try_from(source.global_len()).unwrap();
        let global: Vec<u8> = (0..len).map(|k| u8::try_from(k % 253).unwrap()).collect();
        let shards = source.split(&global).unwrap();
        let expected = reference(&source, &target, (&a_shape, &b_shape), &shards);
        let plan = ReshardPlan::new(source, target).unwrap();
        assert!(plan.byte_runs(DeviceId(0)).is_none(), "{a} → {b}: no byte runs across layouts");
        assert_eq!(plan.run(view(&shards)).unwrap(), expected, "{a} → {b}");
    }
}

/// Reads go to the target's own replica when it holds one, else to the replicas in turn; dense
/// layouts give merged byte runs.
#[test]
fn replicas_are_read_in_turn_and_runs_merge() {
    let (_, source) = sharded("f32[8,4]", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", None);
    let (_, target) = sharded("f32[8,4]", "{devices=[8,1]4,5,6,7,8,9,10,11}", None);
    let plan = ReshardPlan::new(source, target).unwrap();
    let sources: Vec<u64> = plan.transfers().map(|t| t.source.0).collect();
    assert_eq!(sources, [0, 1, 0, 1, 2, 3, 2, 3]);
    // One whole row per target: one run of 16 bytes.
    let runs: Vec<ReshardRun> = plan.byte_runs(DeviceId(9)).unwrap().collect();
    assert_eq!(runs, [ReshardRun { source: DeviceId(3), source_offset: 16, target_offset: 0, len: 16 }]);
    let (_, source) = sharded("f32[8,4]", "{replicated}", Some(4));
    let (_, target) = sharded("f32[8,4]", "{devices=[2,1]2,7}", None);
    let plan = ReshardPlan::new(source, target).unwrap();
    let t: Vec<_> = plan.transfers().map(|t| (t.target.0, t.source.0, t.replicas.len())).collect();
    assert_eq!(t, [(2, 2, 4), (7, 0, 4)]);
    // Four rows of four from the whole array: adjacent rows merge into one run.
    let runs: Vec<ReshardRun> = plan.byte_runs(DeviceId(7)).unwrap().collect();
    assert_eq!(runs, [ReshardRun { source: DeviceId(0), source_offset: 64, target_offset: 0, len: 64 }]);
}

fn problem(e: Error) -> ShardBufferProblem {
    match e {
        Error::ShardBuffer(p) => *p,
        other => panic!("expected a shard-buffer error, got {other:?}"),
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let plan_of = |a: &str, b: &str| {
        let (_, source) = sharded(a, "{replicated}", Some(2));
        let (_, target) = sharded(b, "{maximal device=1}", None);
        ReshardPlan::new(source, target).map(|_| ()).map_err(problem)
    };
    assert_eq!(
        plan_of("f32[4]", "s32[4]"),
        Err(ShardBufferProblem::ReshardElementType { from: PrimitiveType::F32, to: PrimitiveType::S32 })
    );
    assert_eq!(plan_of("f32[4]", "f32[4,1]"), Err(ShardBufferProblem::ReshardRank { from: 1, to: 2 }));
    assert_eq!(
        plan_of("f32[4,2]", "f32[4,4]"),
        Err(ShardBufferProblem::ReshardDimension { dimension: 1, from: 2, to: 4 })
    );

    let (_, source) = sharded("u8[4,2]", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", None);
    let (_, target) = sharded("u8[4,2]", "{devices=[1,2]<=[2]}", None);
    let plan = ReshardPlan::new(source, target).unwrap();
    let global: Vec<u8> = (0..8).collect();
    let shards = plan.source().split(&global).unwrap();
    let run = |shards: &Shards| plan.run(view(shards)).map_err(problem);
    assert_eq!(run(&shards[1..].to_vec()), Err(ShardBufferProblem::Missing { device: 0 }));
    let mut extra = shards.clone();
    extra.push((DeviceId(4), vec![0; 4]));
    assert_eq!(run(&extra), Err(ShardBufferProblem::UnknownDevice { device: 4 }));
    let mut short = shards.clone();
    short[2].1.pop();
    assert_eq!(run(&short), Err(ShardBufferProblem::Length { device: 2, expected: 4, actual: 3 }));
    let mut differ = shards.clone();
    differ[3].1[1] ^= 1;
    assert_eq!(run(&differ), Err(ShardBufferProblem::ReplicaMismatch { device: 3, replica_of: 2, byte: 1 }));
    // Targets: unknown, twice, wrongly sized; nothing is written then.
    let mut a = [9u8; 4];
    let mut b = [9u8; 4];
    let mut c = [9u8; 3];
    let into = |targets: &mut [(DeviceId, &mut [u8])]| plan.run_into(view(&shards), targets).map_err(problem);
    assert_eq!(
        into(&mut [(DeviceId(0), &mut a), (DeviceId(2), &mut b)]),
        Err(ShardBufferProblem::UnknownDevice { device: 2 })
    );
    assert_eq!(
        into(&mut [(DeviceId(0), &mut a), (DeviceId(0), &mut b)]),
        Err(ShardBufferProblem::DuplicateDevice { device: 0 })
    );
    assert_eq!(
        into(&mut [(DeviceId(0), &mut a), (DeviceId(1), &mut c)]),
        Err(ShardBufferProblem::Length { device: 1, expected: 4, actual: 3 })
    );
    assert_eq!((a, b, c), ([9; 4], [9; 4], [9; 3]));
    // One target alone, as a host of a multi-host job makes its own.
    into(&mut [(DeviceId(1), &mut b)]).unwrap();
    assert_eq!(b, [1, 3, 5, 7]);
    assert_eq!(
        plan.transfers_to(DeviceId(5)).map(|_| ()).map_err(problem),
        Err(ShardBufferProblem::UnknownDevice { device: 5 })
    );
}

/// Ranges that name devices as a sharding never would (a box given to a device twice is refused
/// by `ShardBuffers`; boxes that leave a hole are the caller's business): the plan moves what the
/// boxes hold, and a target part of the hole keeps zero bits.
#[test]
fn boxes_that_do_not_cover_the_array_leave_zeros() {
    let shape: ShapeBuf = "u8[4]".parse().unwrap();
    let array = shape.as_array().unwrap();
    let source =
        ShardBuffers::new(array, &[ShardRange::new(DeviceId(3), vec![0], vec![2])], &ShardForm::Exact).unwrap();
    let target =
        ShardBuffers::new(array, &[ShardRange::new(DeviceId(0), vec![1], vec![4])], &ShardForm::Exact).unwrap();
    let plan = ReshardPlan::new(source, target).unwrap();
    assert_eq!(plan.run([(DeviceId(3), &[7u8, 8][..])]).unwrap(), [(DeviceId(0), vec![8, 0, 0])]);
    assert!(plan.byte_runs(DeviceId(0)).is_none(), "runs that do not tile the target are not given");
}

/// `sharding` (XLA's text, its devices numbered by their position in `ids`) with JAX's device
/// ids, as `xla_shape.HloSharding.from_jax` makes it; and the device count `{replicated}` needs.
fn with_device_ids(text: &str, ids: &[u64]) -> (HloSharding, Option<u64>) {
    let sharding: HloSharding = text.parse().unwrap();
    let count = Some(u64::try_from(ids.len()).unwrap());
    match sharding.kind() {
        ShardingKind::Tiled(tiled) => {
            let mut proto = sharding.to_proto();
            proto.tile_assignment_devices = tiled
                .tile_assignment()
                .devices()
                .map(|d| i64::try_from(ids[usize::try_from(d.0).unwrap()]).unwrap())
                .collect();
            proto.iota_reshape_dims.clear();
            proto.iota_transpose_perm.clear();
            (HloSharding::from_proto(&proto).unwrap(), None)
        }
        ShardingKind::Replicated => {
            assert!(ids.iter().enumerate().all(|(i, &d)| u64::try_from(i) == Ok(d)), "{text}: {ids:?}");
            (sharding, count)
        }
        other => panic!("{text}: {other:?}"),
    }
}

/// The JAX fixtures (`tests/fixtures/sharding/reshard.jsonl`, made by `tools/fixtures/reshard.py`
/// with jax/jaxlib 0.10.2 on 8 CPU devices): each array's device buffers under sharding A,
/// resharded, are byte for byte the buffers `jax.device_put(arr_a, sharding_b)` left on every
/// device — device counts that change, permuted meshes, partial and full replication, a
/// dimension over two mesh axes, 1 to 4 dimensions, bf16, s4, s8, f32, f64.
#[test]
fn every_jax_reshard_is_reproduced_byte_for_byte() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sharding/reshard.jsonl")).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        let name = case["name"].as_str().unwrap();
        let shape: ShapeBuf = case["shape"].as_str().unwrap().parse().unwrap();
        let array = shape.as_array().unwrap();
        let side = |key: &str| {
            let ids: Vec<u64> =
                case[key]["device_ids"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).collect();
            let (sharding, count) = with_device_ids(case[key]["hlo_sharding"].as_str().unwrap(), &ids);
            let plan =
                ShardBuffers::from_placement(array, &sharding.placement(&array, count).unwrap(), &ShardForm::Exact)
                    .unwrap();
            let mut shards: Shards = case[key]["shards"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(d, hex)| (DeviceId(d.parse().unwrap()), crate::common::bytes_from_hex(hex.as_str().unwrap())))
                .collect();
            shards.sort();
            (plan, shards)
        };
        let ((from, before), (to, after)) = (side("from"), side("to"));
        let plan = ReshardPlan::new(from, to).unwrap();
        assert_eq!(plan.run(view(&before)).unwrap(), after, "{name}");
        checked += 1;
    }
    assert_eq!(checked, 13);
}
