//! Linearization hot paths against a naive baseline measured in the same run.
//!
//! `cargo bench --bench index -- --warm-up-time 1 --measurement-time 3`
#![allow(missing_docs)] // criterion_group! generates undocumented public functions

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ndarray::ShapeBuilder as _;
use xla_shape::index::for_each_index;
use xla_shape::make::{LayoutSpec, make_shape_with_layout};
use xla_shape::{PhysicalMap, PrimitiveType, ShapeBuf, Slot};

const BATCH: usize = 4096;

fn shape(dims: &[i64], m2m: &[i64], tiles: &[&[i64]]) -> ShapeBuf {
    make_shape_with_layout(PrimitiveType::F32, dims, &LayoutSpec::new(m2m).tiles(tiles)).unwrap()
}

/// Deterministic in-bounds indices (a small xorshift), cache-resident.
fn indices<const N: usize>(dims: &[i64]) -> Vec<[i64; N]> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    (0..BATCH)
        .map(|_| {
            std::array::from_fn(|d| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                i64::try_from(x % u64::try_from(dims[d]).unwrap()).unwrap()
            })
        })
        .collect()
}

/// The naive baseline: strides recomputed from the proto's `minor_to_major` at every call.
fn naive_slot(s: &ShapeBuf, index: &[i64]) -> i64 {
    let proto = s.proto();
    let m2m = &proto.layout.as_ref().unwrap().minor_to_major;
    let (mut linear, mut scale) = (0, 1);
    for &d in m2m {
        let d = usize::try_from(d).unwrap();
        linear += index[d] * scale;
        scale *= proto.dimensions[d];
    }
    linear
}

/// The naive inverse: `(linear / div) % D[d]` per dimension.
fn naive_index(s: &ShapeBuf, linear: i64, out: &mut [i64]) {
    let proto = s.proto();
    let mut div = 1;
    for &d in &proto.layout.as_ref().unwrap().minor_to_major {
        let d = usize::try_from(d).unwrap();
        out[d] = (linear / div) % proto.dimensions[d];
        div *= proto.dimensions[d];
    }
}

fn multi_to_slot(c: &mut Criterion) {
    let mut g = c.benchmark_group("multi_to_slot");
    g.throughput(Throughput::Elements(BATCH as u64));
    let dims4 = [16, 32, 8, 64];
    let s4 = shape(&dims4, &[0, 2, 1, 3], &[]);
    let map4 = PhysicalMap::new(s4.as_array().unwrap()).unwrap();
    let idx4 = indices::<4>(&dims4);
    let mut out = vec![Slot(0); BATCH];
    g.bench_function("rank4_untiled_batch_unchecked", |b| {
        b.iter(|| map4.slots_unchecked_bounds(black_box(&idx4), black_box(&mut out)));
    });
    g.bench_function("rank4_untiled_batch_checked", |b| {
        b.iter(|| map4.slots(black_box(&idx4), black_box(&mut out)).unwrap());
    });
    g.bench_function("rank4_untiled_single_checked", |b| {
        b.iter(|| {
            for (i, o) in idx4.iter().zip(out.iter_mut()) {
                *o = map4.slot(black_box(i)).unwrap();
            }
        });
    });
    // The peer: ndarray's checked `get_ptr` on a dynamic-rank array with the same strides
    // (minor_to_major {0,2,1,3}), indices as `usize` slices (no allocation per call).
    let strides4 = [1, 16 * 8, 16, 16 * 8 * 32];
    let nd = ndarray::ArrayD::<f32>::from_shape_vec(
        ndarray::IxDyn(&dims4.map(|d| usize::try_from(d).unwrap())).strides(ndarray::IxDyn(&strides4)),
        vec![0.0; 16 * 32 * 8 * 64],
    )
    .unwrap();
    let nd_idx: Vec<[usize; 4]> = idx4.iter().map(|i| i.map(|x| usize::try_from(x).unwrap())).collect();
    let mut ptrs = vec![std::ptr::null::<f32>(); BATCH];
    g.bench_function("rank4_ndarray_get_ptr_ixdyn", |b| {
        b.iter(|| {
            for (i, o) in nd_idx.iter().zip(ptrs.iter_mut()) {
                *o = nd.get_ptr(black_box(&i[..])).unwrap();
            }
        });
    });
    g.bench_function("rank4_naive", |b| {
        b.iter(|| {
            for (i, o) in idx4.iter().zip(out.iter_mut()) {
                *o = Slot(u64::try_from(naive_slot(black_box(&s4), i)).unwrap());
            }
        });
    });
    let dims2 = [1024, 1024];
    let untiled = PhysicalMap::new(shape(&dims2, &[1, 0], &[]).as_array().unwrap()).unwrap();
    let tiled = PhysicalMap::new(shape(&dims2, &[1, 0], &[&[8, 128]]).as_array().unwrap()).unwrap();
    let odd = PhysicalMap::new(shape(&[1000, 1000], &[1, 0], &[&[8, 128]]).as_array().unwrap()).unwrap();
    let combined =
        PhysicalMap::new(shape(&[8, 128, 1024], &[2, 1, 0], &[&[8, i64::MIN, 128]]).as_array().unwrap()).unwrap();
    let idx2 = indices::<2>(&[1000, 1000]);
    g.bench_function("rank2_untiled_batch_checked", |b| {
        b.iter(|| untiled.slots(black_box(&idx2), &mut out).unwrap());
    });
    g.bench_function("rank2_tiled_8x128_batch_checked", |b| {
        b.iter(|| tiled.slots(black_box(&idx2), &mut out).unwrap());
    });
    g.bench_function("rank2_tiled_8x128_partial_batch_checked", |b| {
        b.iter(|| odd.slots(black_box(&idx2), &mut out).unwrap());
    });
    let idx3 = indices::<3>(&[8, 128, 1024]);
    g.bench_function("rank3_tiled_combine_general_batch_checked", |b| {
        b.iter(|| combined.slots(black_box(&idx3), &mut out).unwrap());
    });
    g.finish();
}

fn slot_to_multi(c: &mut Criterion) {
    let mut g = c.benchmark_group("slot_to_multi");
    g.throughput(Throughput::Elements(BATCH as u64));
    let slots: Vec<u64> = indices::<1>(&[16 * 32 * 8 * 64]).iter().map(|i| u64::try_from(i[0]).unwrap()).collect();
    // Power-of-two extents, then extents where the multiply-shift reciprocals do real work.
    for (name, dims) in [("rank4", [16, 32, 8, 64]), ("rank4_odd", [10, 20, 30, 40])] {
        let s4 = shape(&dims, &[0, 2, 1, 3], &[]);
        let map4 = PhysicalMap::new(s4.as_array().unwrap()).unwrap();
        let count = u64::try_from(dims.iter().product::<i64>()).unwrap();
        let slots: Vec<u64> = slots.iter().map(|&s| s % count).collect();
        let mut out = [0i64; 4];
        g.bench_function(format!("{name}_untiled_into"), |b| {
            b.iter(|| {
                for &s in &slots {
                    black_box(map4.index_of_slot_into(Slot(s), &mut out).unwrap());
                    black_box(&out);
                }
            });
        });
        g.bench_function(format!("{name}_naive_div_mod"), |b| {
            b.iter(|| {
                for &s in &slots {
                    naive_index(black_box(&s4), i64::try_from(s).unwrap(), &mut out);
                    black_box(&out);
                }
            });
        });
    }
    let tiled = PhysicalMap::new(shape(&[1024, 1024], &[1, 0], &[&[8, 128]]).as_array().unwrap()).unwrap();
    let mut out2 = [0i64; 2];
    g.bench_function("rank2_tiled_8x128_into", |b| {
        b.iter(|| {
            for &s in &slots {
                black_box(tiled.index_of_slot_into(Slot(s), &mut out2).unwrap());
            }
        });
    });
    g.finish();
}

fn iterate(c: &mut Criterion) {
    let mut g = c.benchmark_group("iterate");
    let dims = [64, 64, 64, 64];
    g.throughput(Throughput::Elements(1 << 24));
    g.sample_size(10);
    let s = shape(&dims, &[0, 2, 1, 3], &[]);
    g.bench_function("for_each_index_layout_order_2^24", |b| {
        b.iter(|| {
            let mut sum = 0i64;
            for_each_index(s.as_array().unwrap(), &[0; 4], &dims, &[1; 4], |i| {
                sum += i[0];
                true
            })
            .unwrap();
            black_box(sum)
        });
    });
    g.finish();
}

criterion_group!(benches, multi_to_slot, slot_to_multi, iterate);
criterion_main!(benches);
