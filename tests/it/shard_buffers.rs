//! Shard buffers (issue 24 item 5, `docs/shard-buffers.md`): the buffers real JAX placed on 8 CPU
//! devices (`tests/fixtures/sharding/shard_buffers.jsonl`, made by
//! `tools/fixtures/shard_buffers.py` with jax/jaxlib 0.10.2), and split / assemble against a
//! per-element reference through `PhysicalMap` for random shapes, layouts (tiled, sub-byte,
//! legacy padding) and tile-assignment shardings.

use std::fs;

use proptest::prelude::*;
use serde_json::Value;
use xla_shape::error::ShardBufferProblem;
use xla_shape::relayout::RelayoutPlan;
use xla_shape::sharding::buffers::{ShardBuffers, ShardForm, ShardRange};
use xla_shape::sharding::{DeviceId, HloSharding};
use xla_shape::strategy::{ShapeConfig, array_shape};
use xla_shape::{ArrayShape, Error, PhysicalMap, ShapeBuf};

use super::relayout::{indices, read};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sharding/shard_buffers.jsonl");

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|k| u8::from_str_radix(&s[k..k + 2], 16).unwrap()).collect()
}

fn pairs(v: &Value) -> (Vec<u64>, Vec<u64>) {
    v.as_array().unwrap().iter().map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap())).unzip()
}

fn cases() -> Vec<Value> {
    fs::read_to_string(FIXTURES).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn every_jax_shard_is_split_and_assembled_byte_for_byte() {
    let mut checked = 0;
    for case in cases() {
        let name = case["name"].as_str().unwrap();
        if case["status"] != "ok" {
            // JAX refuses shardings that do not divide a dimension (the README's finding).
            assert!(case["error"].as_str().unwrap().contains("IndivisibleError"), "{name}");
            continue;
        }
        let shape: ShapeBuf = case["shape"].as_str().unwrap().parse().unwrap();
        let array = shape.as_array().unwrap();
        let shards = case["shards"].as_array().unwrap();
        let ranges: Vec<ShardRange> = shards
            .iter()
            .map(|s| {
                let (start, limit) = pairs(&s["index"]);
                ShardRange::new(DeviceId(s["device"].as_u64().unwrap()), start, limit)
            })
            .collect();
        // JAX's devices_indices_map names the same boxes as the shards.
        for (entry, range) in case["devices_indices_map"].as_array().unwrap().iter().zip(&ranges) {
            assert_eq!(DeviceId(entry["device"].as_u64().unwrap()), range.device, "{name}");
            assert_eq!(pairs(&entry["index"]), (range.start.clone(), range.limit.clone()), "{name}");
        }
        let plan = ShardBuffers::new(array, &ranges, &ShardForm::Exact).unwrap();
        // The same boxes from XLA's sharding text through the crate's device ranges.
        let sharding: HloSharding = case["hlo_sharding"].as_str().unwrap().parse().unwrap();
        let placement = sharding.placement(&array, Some(8)).unwrap();
        let from_sharding = ShardBuffers::from_placement(array, &placement, &ShardForm::Exact).unwrap();
        let global = hex(case["global_hex"].as_str().unwrap());
        assert_eq!(from_sharding.split(&global).unwrap(), plan.split(&global).unwrap(), "{name}");
        let split = plan.split(&global).unwrap();
        assert_eq!(split.len(), shards.len(), "{name}");
        for ((device, bytes), shard) in split.iter().zip(shards) {
            assert_eq!(*device, DeviceId(shard["device"].as_u64().unwrap()), "{name}");
            assert_eq!(*bytes, hex(shard["hex"].as_str().unwrap()), "{name}: device {device}");
        }
        let jax: Vec<(DeviceId, Vec<u8>)> =
            shards.iter().map(|s| (DeviceId(s["device"].as_u64().unwrap()), hex(s["hex"].as_str().unwrap()))).collect();
        let back = plan.assemble(jax.iter().map(|(d, b)| (*d, b.as_slice()))).unwrap();
        assert_eq!(back, global, "{name}");
        checked += 1;
    }
    assert_eq!(checked, 18);
}

#[test]
fn the_global_fixture_bytes_are_the_logical_values_in_the_layout() {
    // The fixture's global buffer is the row-major values relaid out into the shape's layout: an
    // independent check of `shape` (`s4` values are one signed byte each in `logical_hex`).
    for case in cases().into_iter().filter(|c| c["status"] == "ok") {
        let shape: ShapeBuf = case["shape"].as_str().unwrap().parse().unwrap();
        let array = shape.as_array().unwrap();
        let dims: Vec<String> = array.dimensions().iter().map(ToString::to_string).collect();
        let unpacked = if array.element_type() == xla_shape::PrimitiveType::S4 { "s4" } else { "" };
        let text = if unpacked.is_empty() {
            format!("{}[{}]", array.element_type(), dims.join(","))
        } else {
            format!("s4[{}]", dims.join(","))
        };
        let row_major: ShapeBuf = text.parse().unwrap();
        let plan = RelayoutPlan::new(row_major.as_array().unwrap(), array).unwrap();
        let got = plan.run_to_vec(&hex(case["logical_hex"].as_str().unwrap())).unwrap();
        assert_eq!(got, hex(case["global_hex"].as_str().unwrap()), "{}", case["name"]);
    }
}

/// The boxes of a tiling with `tiles[d]` pieces per dimension, as XLA cuts them (each dimension
/// in `ceil(size / tiles)` pieces, the tail short or empty), each held by `replicas` devices;
/// device ids are `order` (a permutation) over tile-major, replica-minor positions.
pub fn tiling_ranges(dims: &[u64], tiles: &[u64], replicas: u64, order: &[u64]) -> (Vec<ShardRange>, Vec<u64>) {
    let tile: Vec<u64> = dims.iter().zip(tiles).map(|(&d, &t)| d.div_ceil(t)).collect();
    let count: u64 = tiles.iter().product();
    let mut ranges = Vec::new();
    for position in 0..count {
        let mut rest = position;
        let mut index = vec![0u64; dims.len()];
        for (i, &t) in index.iter_mut().zip(tiles).rev() {
            *i = rest % t;
            rest /= t;
        }
        let start: Vec<u64> = index.iter().zip(&tile).zip(dims).map(|((&i, &w), &d)| (i * w).min(d)).collect();
        let limit: Vec<u64> = index.iter().zip(&tile).zip(dims).map(|((&i, &w), &d)| ((i + 1) * w).min(d)).collect();
        for r in 0..replicas {
            let device = order[usize::try_from(position * replicas + r).unwrap()];
            ranges.push(ShardRange::new(DeviceId(device), start.clone(), limit.clone()));
        }
    }
    (ranges, tile)
}

/// The value bits of every element of `array` in `buf`, in row-major order of `extent`, offset by
/// `start`.
fn elements(array: ArrayShape<'_>, buf: &[u8], start: &[u64], extent: &[u64]) -> Vec<u128> {
    let map = PhysicalMap::new(array).unwrap();
    let value = map.bits_per_slot().min(u64::from(array.element_type().byte_width().unwrap()) * 8);
    indices(extent)
        .iter()
        .map(|at| {
            let index: Vec<i64> = at.iter().zip(start).map(|(&i, &s)| i + i64::try_from(s).unwrap()).collect();
            read(buf, map.bit_offset(&index).unwrap(), value)
        })
        .collect()
}

pub fn bounds(array: ArrayShape<'_>) -> Vec<u64> {
    array.dimensions().iter().map(|&d| u64::try_from(d).unwrap()).collect()
}

/// A shape (any element type, layouts with tiles, sub-byte element sizes, legacy padding,
/// dynamic dimensions), a tiling of it with replicas, a device order and the global bytes.
fn case() -> impl Strategy<Value = (ShapeBuf, Vec<u64>, u64, Vec<u64>, Vec<u8>)> {
    let config = ShapeConfig { max_rank: 3, max_dimension: 9, non_arrays: false, ..ShapeConfig::default() };
    array_shape(config)
        .prop_flat_map(|shape| {
            let rank = shape.as_array().unwrap().rank();
            (Just(shape), proptest::collection::vec(1u64..=4, rank), 1u64..=3)
        })
        .prop_flat_map(|(shape, tiles, replicas)| {
            let devices = tiles.iter().product::<u64>() * replicas;
            let len = usize::try_from(xla_shape::size::storage_bytes(shape.as_array().unwrap()).unwrap()).unwrap();
            (
                Just(shape),
                Just(tiles),
                Just(replicas),
                Just((0..devices).collect::<Vec<_>>()).prop_shuffle(),
                proptest::collection::vec(any::<u8>(), len),
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every shard holds exactly its box's elements; assembling the shards gives the global
    /// buffer back (its padding filled as the relayout engine fills it).
    #[test]
    fn split_then_assemble_is_the_identity((shape, tiles, replicas, order, global) in case()) {
        let array = shape.as_array().unwrap();
        let dims = bounds(array);
        let (ranges, _) = tiling_ranges(&dims, &tiles, replicas, &order);
        let plan = ShardBuffers::new(array, &ranges, &ShardForm::Exact).unwrap();
        let shards = plan.split(&global).unwrap();
        for (range, (device, bytes)) in sorted(&ranges).iter().zip(&shards) {
            prop_assert_eq!(range.device, *device);
            let extent: Vec<u64> = range.extent().collect();
            let shard = plan.shard_shape(*device).unwrap().as_array().unwrap();
            prop_assert_eq!(bounds(shard), extent.clone());
            prop_assert_eq!(
                elements(shard, bytes, &vec![0; extent.len()], &extent),
                elements(array, &global, &range.start, &extent)
            );
        }
        let back = plan.assemble(shards.iter().map(|(d, b)| (*d, b.as_slice()))).unwrap();
        prop_assert_eq!(elements(array, &back, &vec![0; dims.len()], &dims), elements(array, &global, &vec![0; dims.len()], &dims));
        // The padding too: the same bytes as a relayout of the global buffer onto itself.
        prop_assert_eq!(&back, &RelayoutPlan::new(array, array).unwrap().run_to_vec(&global).unwrap());
        let again = plan.split(&back).unwrap();
        prop_assert_eq!(again, shards);
    }

    /// Padded to the tile shape: the box at the origin, zero bits in the rest; assembling the
    /// padded buffers gives the same global buffer.
    #[test]
    fn padded_shards_hold_the_box_then_zeros((shape, tiles, replicas, order, global) in case()) {
        let array = shape.as_array().unwrap();
        let dims = bounds(array);
        let (ranges, tile) = tiling_ranges(&dims, &tiles, replicas, &order);
        let plan = ShardBuffers::new(array, &ranges, &ShardForm::PaddedToTile(tile.clone())).unwrap();
        let shards = plan.split(&global).unwrap();
        for (range, (device, bytes)) in sorted(&ranges).iter().zip(&shards) {
            let shard = plan.shard_shape(*device).unwrap().as_array().unwrap();
            prop_assert_eq!(bounds(shard), tile.clone());
            let extent: Vec<u64> = range.extent().collect();
            let inside = elements(array, &global, &range.start, &extent);
            let all = elements(shard, bytes, &vec![0; tile.len()], &tile);
            let mut expected = Vec::new();
            let total: u64 = tile.iter().product();
            let mut k_inside = 0;
            for k in 0..total {
                let mut rest = k;
                let mut within = true;
                for (&t, &e) in tile.iter().zip(&extent).rev() {
                    within &= rest % t < e;
                    rest /= t;
                }
                if within { expected.push(inside[k_inside]); k_inside += 1 } else { expected.push(0) }
            }
            prop_assert_eq!(all, expected);
        }
        let back = plan.assemble(shards.iter().map(|(d, b)| (*d, b.as_slice()))).unwrap();
        prop_assert_eq!(&back, &RelayoutPlan::new(array, array).unwrap().run_to_vec(&global).unwrap());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The streaming form (`sharding::stream`, issue 31 item 5): every shard cut in parts of a
    /// random size, and the global buffer assembled in parts, give the in-memory bytes, exact
    /// and padded; where a shard has byte runs, copying them gives the shard too, and they lie
    /// in the global buffer in ascending order.
    #[test]
    fn parts_and_byte_runs_give_the_in_memory_bytes(
        (shape, tiles, replicas, order, global) in case(),
        part in 1usize..300,
        padded in any::<bool>(),
    ) {
        let array = shape.as_array().unwrap();
        let dims = bounds(array);
        let (ranges, tile) = tiling_ranges(&dims, &tiles, replicas, &order);
        let form = if padded { ShardForm::PaddedToTile(tile) } else { ShardForm::Exact };
        let plan = ShardBuffers::new(array, &ranges, &form).unwrap();
        let shards = plan.split(&global).unwrap();
        let mut buf = vec![0xA5u8; part];
        for (device, bytes) in &shards {
            let mut cut = Vec::new();
            for start in (0..bytes.len()).step_by(part) {
                let end = (start + part).min(bytes.len());
                let out = &mut buf[..end - start];
                out.fill(0xA5);
                plan.split_range(*device, &global, out, start..end).unwrap();
                cut.extend_from_slice(out);
            }
            prop_assert_eq!(&cut, bytes);
            if let Some(runs) = plan.byte_runs(*device) {
                let mut copied = vec![0u8; bytes.len()];
                let mut last = None;
                for run in runs {
                    let [g, s, n] = [run.global, run.shard, run.len].map(|v| usize::try_from(v).unwrap());
                    copied[s..s + n].copy_from_slice(&global[g..g + n]);
                    prop_assert!(last.is_none_or(|l| l < g));
                    last = Some(g);
                }
                prop_assert_eq!(&copied, bytes);
            }
        }
        let whole = plan.assemble(shards.iter().map(|(d, b)| (*d, b.as_slice()))).unwrap();
        let sources = plan.sources(shards.iter().map(|(d, b)| (*d, b.as_slice()))).unwrap();
        let mut back = Vec::new();
        for start in (0..whole.len()).step_by(part) {
            let end = (start + part).min(whole.len());
            let out = &mut buf[..end - start];
            out.fill(0xA5);
            sources.assemble_range(out, start..end).unwrap();
            back.extend_from_slice(out);
        }
        prop_assert_eq!(back, whole);
    }
}

/// Byte runs exist exactly for dense layouts and exact shards: not for tiles, sub-byte packing,
/// tail padding or shards padded to a larger tile.
#[test]
fn byte_runs_only_for_dense_layouts() {
    let runs_of = |shape: &str, sharding: &str, padded: bool, device: u64| {
        let shape: ShapeBuf = shape.parse().unwrap();
        let array = shape.as_array().unwrap();
        let sharding: HloSharding = sharding.parse().unwrap();
        let placement = sharding.placement(&array, None).unwrap();
        let form = if padded { ShardForm::padded_to_tile(&placement) } else { ShardForm::Exact };
        let plan = ShardBuffers::from_placement(array, &placement, &form).unwrap();
        plan.byte_runs(DeviceId(device)).map(|r| (r.run_len(), r.count()))
    };
    let runs = |shape: &str, sharding: &str, padded: bool| runs_of(shape, sharding, padded, 0);
    assert_eq!(runs("f32[8,4]{1,0}", "{devices=[2,1]<=[2]}", false), Some((64, 1)));
    assert_eq!(runs("f32[8,4]{1,0}", "{devices=[1,2]<=[2]}", false), Some((8, 8)));
    assert_eq!(runs("f32[8,4]{0,1}", "{devices=[1,2]<=[2]}", false), Some((64, 1)));
    assert_eq!(runs("f32[8,4,6]{2,0,1}", "{devices=[2,1,1]<=[2]}", false), Some((96, 4)));
    assert_eq!(runs("f32[8,4]{1,0:T(2,2)}", "{devices=[2,1]<=[2]}", false), None);
    assert_eq!(runs("s4[8,4]{1,0:E(4)}", "{devices=[2,1]<=[2]}", false), None);
    assert_eq!(runs("f32[7,4]{1,0}", "{devices=[2,1]<=[2]}", true), Some((64, 1)));
    assert_eq!(runs("f32[7,4]{1,0}", "{devices=[4,1]<=[4]}", true), Some((32, 1)));
    // Device 3 holds row 6 alone in a tile of two rows: padded, not a run of the global buffer.
    assert_eq!(runs_of("f32[7,4]{1,0}", "{devices=[4,1]<=[4]}", true, 3), None);
    assert_eq!(runs_of("f32[7,4]{1,0}", "{devices=[4,1]<=[4]}", false, 3), Some((16, 1)));
    assert_eq!(runs("f32[7,4]{1,0}", "{devices=[2,1]<=[2]}", false), Some((64, 1)));
    // s32 in 24 bits, whose tail padding makes the byte size that of 4-byte elements: no runs.
    assert_eq!(runs("s32[3,1]{1,0:L(2)E(24)}", "{devices=[3,1]<=[3]}", false), None);
}

fn sorted(ranges: &[ShardRange]) -> Vec<ShardRange> {
    let mut out = ranges.to_vec();
    out.sort_by_key(|r| r.device);
    out
}

fn shard_error(e: Error) -> ShardBufferProblem {
    match e {
        Error::ShardBuffer(p) => *p,
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_shard_buffers_are_typed_errors_naming_the_device() {
    let shape: ShapeBuf = "f32[4,2]{1,0}".parse().unwrap();
    let array = shape.as_array().unwrap();
    // Rows 0..2 on devices 0 and 2 (replicas), rows 2..4 on devices 1 and 3.
    let (ranges, _) = tiling_ranges(&[4, 2], &[2, 1], 2, &[0, 2, 1, 3]);
    let plan = ShardBuffers::new(array, &ranges, &ShardForm::Exact).unwrap();
    let global: Vec<u8> = (0..32).collect();
    let shards = plan.split(&global).unwrap();
    let view =
        |skip: Option<u64>| shards.iter().filter(move |(d, _)| Some(d.0) != skip).map(|(d, b)| (*d, b.as_slice()));

    assert_eq!(shard_error(plan.assemble(view(Some(3))).unwrap_err()), ShardBufferProblem::Missing { device: 3 });
    let extra = view(None).chain([(DeviceId(9), &shards[0].1[..])]);
    assert_eq!(shard_error(plan.assemble(extra).unwrap_err()), ShardBufferProblem::UnknownDevice { device: 9 });
    let twice = view(None).chain([(DeviceId(1), &shards[1].1[..])]);
    assert_eq!(shard_error(plan.assemble(twice).unwrap_err()), ShardBufferProblem::DuplicateDevice { device: 1 });
    let short = view(Some(2)).chain([(DeviceId(2), &shards[2].1[..12])]);
    assert_eq!(
        shard_error(plan.assemble(short).unwrap_err()),
        ShardBufferProblem::Length { device: 2, expected: 16, actual: 12 }
    );
    let mut changed = shards[2].1.clone();
    changed[5] ^= 1;
    let differing = view(Some(2)).chain([(DeviceId(2), changed.as_slice())]);
    let err = plan.assemble(differing).unwrap_err();
    assert_eq!(shard_error(err.clone()), ShardBufferProblem::ReplicaMismatch { device: 2, replica_of: 0, byte: 5 });
    assert_eq!(err.to_string(), "shard buffers: buffer of device 2 differs from its replica on device 0 at byte 5");
    assert_eq!(
        shard_error(plan.split(&global[1..]).unwrap_err()),
        ShardBufferProblem::GlobalLength { expected: 32, actual: 31 }
    );
    // Ranges that do not fit the array.
    let out = [ShardRange::new(DeviceId(4), vec![0, 0], vec![5, 2])];
    assert_eq!(
        shard_error(ShardBuffers::new(array, &out, &ShardForm::Exact).unwrap_err()),
        ShardBufferProblem::RangeOutOfBounds { device: 4, dimension: 0, start: 0, limit: 5, size: 4 }
    );
    let rank = [ShardRange::new(DeviceId(4), vec![0], vec![1])];
    assert_eq!(
        shard_error(ShardBuffers::new(array, &rank, &ShardForm::Exact).unwrap_err()),
        ShardBufferProblem::RangeRank { device: 4, rank: 2, actual: 1 }
    );
    assert_eq!(
        shard_error(ShardBuffers::new(array, &ranges, &ShardForm::PaddedToTile(vec![1, 2])).unwrap_err()),
        ShardBufferProblem::TileTooSmall { device: 0, dimension: 0, tile: 1, extent: 2 }
    );
}

#[test]
fn replicas_that_differ_only_in_padding_bits_are_equal() {
    // s4[3] packed: two bytes, the high nibble of the second is padding. JAX's CPU client leaves
    // it undefined, so replicas of the same elements may differ there.
    let shape: ShapeBuf = "s4[3]{0:E(4)}".parse().unwrap();
    let array = shape.as_array().unwrap();
    let ranges = [ShardRange::new(DeviceId(0), vec![0], vec![3]), ShardRange::new(DeviceId(1), vec![0], vec![3])];
    let plan = ShardBuffers::new(array, &ranges, &ShardForm::Exact).unwrap();
    let (a, b) = ([0x21u8, 0x03], [0x21u8, 0x53]);
    assert_eq!(plan.assemble([(DeviceId(0), &a[..]), (DeviceId(1), &b[..])]).unwrap(), [0x21, 0x03]);
    // A differing element is still refused, at the byte that holds it.
    let c = [0x21u8, 0x54];
    assert_eq!(
        shard_error(plan.assemble([(DeviceId(0), &a[..]), (DeviceId(1), &c[..])]).unwrap_err()),
        ShardBufferProblem::ReplicaMismatch { device: 1, replica_of: 0, byte: 1 }
    );
}

#[test]
fn split_into_and_assemble_into_fill_given_buffers() {
    // A tiled bf16 array cut at odd offsets: windows across partial tiles.
    let shape: ShapeBuf = "bf16[10,6]{1,0:T(4,2)(2,1)}".parse().unwrap();
    let array = shape.as_array().unwrap();
    let (ranges, _) = tiling_ranges(&[10, 6], &[3, 2], 1, &[5, 4, 3, 2, 1, 0]);
    let plan = ShardBuffers::new(array, &ranges, &ShardForm::Exact).unwrap();
    let global = RelayoutPlan::new(array, array)
        .unwrap()
        .run_to_vec(&(0..plan.global_len()).map(|k| (k * 7 % 251) as u8).collect::<Vec<_>>())
        .unwrap();
    let expected = plan.split(&global).unwrap();
    let mut owned: Vec<(DeviceId, Vec<u8>)> =
        plan.devices().map(|d| (d, vec![0xAB; usize::try_from(plan.shard_len(d).unwrap()).unwrap()])).collect();
    let mut views: Vec<(DeviceId, &mut [u8])> = owned.iter_mut().map(|(d, b)| (*d, b.as_mut_slice())).collect();
    plan.split_into(&global, &mut views).unwrap();
    assert_eq!(owned, expected);
    let mut back = vec![0xCD; global.len()];
    plan.assemble_into(owned.iter().map(|(d, b)| (*d, b.as_slice())), &mut back).unwrap();
    assert_eq!(back, global);
}
