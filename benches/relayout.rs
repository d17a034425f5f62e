//! Relayout speed (issue 14): every case with its baselines in the same group — memcpy of the
//! same bytes, a naive odometer loop, ndarray's `assign` of a permuted view, and for tiled and
//! sub-byte cases the per-element `PhysicalMap` loop.
//!
//! Every plan runs on the calling thread (`on_calling_thread`; the `RELAYOUT_CASES=threads`
//! groups compare one thread and two), and with feature `rayon` once more on the global pool
//! (`plan_all_threads`). `RELAYOUT_CASES=users` runs issue 36's cases on users' buffers, and
//! `RELAYOUT_CASES=cache` the same layouts small enough to stay in the caches.
//! `benches/peers/run_relayout.sh` runs this bench, then numpy on the same cases, and prints one
//! table. `plan` is the default plan (streaming stores for these 64 MiB destinations on x86-64);
//! `plan_cached` is the same plan with ordinary stores, the safe kernel the streaming one must
//! beat by 1.5× to keep its `unsafe`.
//!
//! Buffers are anonymous maps advised `NoHugePage` (4 KiB pages) or `HugePage` (transparent
//! huge pages; the `/huge` groups). The cases move 64 MiB (s4: 32 MiB packed, 64 MiB unpacked):
//! run with short times, e.g.
//! `cargo bench --bench relayout -- --warm-up-time 1 --measurement-time 3`.
#![allow(missing_docs)]
// criterion_group! generates undocumented public functions
// Bench code: buffers are far below 4 GiB, offsets are small, and the loops read best short.
#![allow(clippy::cast_possible_truncation, clippy::many_single_char_names, clippy::single_match_else)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use memmap2::{Advice, MmapMut};
use ndarray::ShapeBuilder;
use std::hint::black_box;
use xla_shape::relayout::{RelayoutPlan, StorePolicy, on_calling_thread};
use xla_shape::{PhysicalMap, ShapeBuf};

/// A relayout case: the shapes, and the same move written as a strided copy for the baselines
/// (`dims` in destination order, the destination dense, `src_strides` in elements).
struct Case {
    name: &'static str,
    src: &'static str,
    dst: &'static str,
    dims: Vec<usize>,
    src_strides: Vec<usize>,
    /// Whether the per-element `PhysicalMap` loop is a baseline.
    physical: bool,
    /// Whether the case also runs on huge pages.
    huge: bool,
}

/// Row-major strides of `dims`.
fn dense(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1];
    }
    s
}

/// The strides of a row-major array of `dims`, read in the order `perm` (destination dimension
/// `k` is source dimension `perm[k]`).
fn permuted(dims: &[usize], perm: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let s = dense(dims);
    (perm.iter().map(|&p| dims[p]).collect(), perm.iter().map(|&p| s[p]).collect())
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut add = |name, src, dst, (dims, src_strides): (Vec<usize>, Vec<usize>), physical, huge| {
        out.push(Case { name, src, dst, dims, src_strides, physical, huge });
    };
    // dst {1,0} of a {0,1} source: the source is row-major [4096 (dim 1), 4096 (dim 0)].
    add("t2d", "f32[4096,4096]{0,1}", "f32[4096,4096]{1,0}", permuted(&[4096, 4096], &[1, 0]), false, true);
    // Destination major-to-minor (2,0,1) of a row-major source.
    add(
        "r3",
        "f32[256,256,256]{2,1,0}",
        "f32[256,256,256]{1,0,2}",
        permuted(&[256, 256, 256], &[2, 0, 1]),
        false,
        true,
    );
    add(
        "nchw_nhwc",
        "f32[16,64,128,128]{3,2,1,0}",
        "f32[16,64,128,128]{1,3,2,0}",
        permuted(&[16, 64, 128, 128], &[0, 2, 3, 1]),
        false,
        true,
    );
    // The same move with channel planes of 65 472 bytes instead of 64 KiB (16 368 positions): the
    // cost of a power-of-two source stride (docs/relayout.md, "Speed").
    add(
        "nchw_nhwc_odd",
        "f32[16,64,124,132]{3,2,1,0}",
        "f32[16,64,124,132]{1,3,2,0}",
        permuted(&[16, 64, 124, 132], &[0, 2, 3, 1]),
        false,
        true,
    );
    add(
        "r4",
        "f32[64,64,64,64]{3,2,1,0}",
        "f32[64,64,64,64]{3,1,2,0}",
        permuted(&[64, 64, 64, 64], &[0, 2, 1, 3]),
        false,
        true,
    );
    add(
        "r5",
        "f32[128,128,64,4,4]{4,3,2,1,0}",
        "f32[128,128,64,4,4]{2,4,1,3,0}",
        permuted(&[128, 128, 64, 4, 4], &[0, 3, 1, 4, 2]),
        false,
        true,
    );
    add("identical", "f32[4096,4096]{1,0}", "f32[4096,4096]{1,0}", permuted(&[4096, 4096], &[0, 1]), false, false);
    // Tiled source [R/8, C/128, 8, 128] read in row-major order [R/8, 8, C/128, 128].
    add(
        "f32_t8x128_to_rm",
        "f32[4096,4096]{1,0:T(8,128)}",
        "f32[4096,4096]{1,0}",
        permuted(&[512, 32, 8, 128], &[0, 2, 1, 3]),
        true,
        false,
    );
    // Row-major source [R/8, 8, C/128, 128] written in tiled order [R/8, C/128, 8, 128].
    add(
        "f32_rm_to_t8x128",
        "f32[4096,4096]{1,0}",
        "f32[4096,4096]{1,0:T(8,128)}",
        permuted(&[512, 8, 32, 128], &[0, 2, 1, 3]),
        true,
        false,
    );
    // bf16 T(8,128)(2,1): physical [R/8, C/128, 4, 128, 2] read as [R/8, 4, 2, C/128, 128].
    add(
        "bf16_t8x128x2_to_rm",
        "bf16[4096,8192]{1,0:T(8,128)(2,1)}",
        "bf16[4096,8192]{1,0}",
        permuted(&[512, 64, 4, 128, 2], &[0, 2, 4, 1, 3]),
        true,
        false,
    );
    add(
        "bf16_rm_to_t8x128x2",
        "bf16[4096,8192]{1,0}",
        "bf16[4096,8192]{1,0:T(8,128)(2,1)}",
        permuted(&[512, 4, 2, 64, 128], &[0, 3, 1, 4, 2]),
        true,
        false,
    );
    out
}

/// An anonymous map of `len` bytes, advised for huge or 4 KiB pages, touched once.
fn buffer(len: usize, huge: bool) -> MmapMut {
    let mut map = MmapMut::map_anon(len).expect("anonymous map");
    map.advise(if huge { Advice::HugePage } else { Advice::NoHugePage }).expect("madvise");
    for (k, b) in map.iter_mut().enumerate() {
        *b = (k % 251) as u8;
    }
    map
}

/// The naive loop: an odometer over the destination order, one element at a time.
fn naive<const N: usize>(src: &[u8], dst: &mut [u8], dims: &[usize], src_strides: &[usize]) {
    let mut index = vec![0usize; dims.len()];
    let mut src_offset = 0usize;
    for out in dst.chunks_exact_mut(N) {
        out.copy_from_slice(&src[src_offset * N..src_offset * N + N]);
        for k in (0..dims.len()).rev() {
            index[k] += 1;
            src_offset += src_strides[k];
            if index[k] < dims[k] {
                break;
            }
            src_offset -= src_strides[k] * dims[k];
            index[k] = 0;
        }
    }
}

/// ndarray: `assign` of the source viewed with the permuted strides.
fn ndarray_assign<T: bytemuck::Pod>(src: &[u8], dst: &mut [u8], dims: &[usize], src_strides: &[usize]) {
    let src: &[T] = bytemuck::cast_slice(src);
    let dst: &mut [T] = bytemuck::cast_slice_mut(dst);
    let view =
        ndarray::ArrayView::from_shape(ndarray::IxDyn(dims).strides(ndarray::IxDyn(src_strides)), src).expect("view");
    let mut out = ndarray::ArrayViewMut::from_shape(ndarray::IxDyn(dims), dst).expect("dense");
    out.assign(&view);
}

/// The per-element loop through both `PhysicalMap`s, whole bytes.
fn physical_loop<const N: usize>(src: &[u8], dst: &mut [u8], a: &PhysicalMap, b: &PhysicalMap, dims: &[i64]) {
    let mut index = vec![0i64; dims.len()];
    loop {
        let s = (a.slot_unchecked_bounds(&index).get() as usize) * N;
        let d = (b.slot_unchecked_bounds(&index).get() as usize) * N;
        dst[d..d + N].copy_from_slice(&src[s..s + N]);
        let mut k = dims.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            index[k] += 1;
            if index[k] < dims[k] {
                break;
            }
            index[k] = 0;
        }
    }
}

/// Every byte of `src` read once, 64 at a time, folded into a line of `u64`s (eight independent
/// `xor`s, which the compiler keeps in vector registers): the memory traffic of reading `src`,
/// with no stores.
fn read_all(src: &[u8]) -> [u64; 8] {
    src.chunks_exact(64).fold([0u64; 8], |mut acc, line| {
        for (a, word) in acc.iter_mut().zip(line.chunks_exact(8)) {
            *a ^= u64::from_le_bytes(word.try_into().unwrap());
        }
        acc
    })
}

/// Runs a plan on the calling thread (`on_calling_thread`): no plan splits its boxes over
/// rayon's pool, and the plan runs on the core, and from the caches, that memcpy just used. (A
/// one-thread pool's `install` did the same for the 64 MiB cases, but its hand-off to the pool's
/// thread cost about 50 µs a run, most of the time of the 128 KiB `cache` cases.)
fn run_alone(plan: &RelayoutPlan, src: &[u8], dst: &mut [u8]) {
    on_calling_thread(|| plan.run(src, dst)).unwrap();
}

fn shape(text: &str) -> ShapeBuf {
    text.parse().expect("bench shape")
}

/// The naive odometer and ndarray baselines for `N`-byte elements held as `T`, each checked
/// against the plan's bytes.
fn baselines<const N: usize, T: bytemuck::Pod + Send + Sync>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    case: &Case,
    src: &[u8],
    dst: &mut [u8],
    check: &[u8],
) {
    group
        .bench_function("naive", |bench| bench.iter(|| naive::<N>(black_box(src), dst, &case.dims, &case.src_strides)));
    agrees("naive", dst, check, |dst| naive::<N>(src, dst, &case.dims, &case.src_strides));
    group.bench_function("ndarray", |bench| {
        bench.iter(|| ndarray_assign::<T>(black_box(src), dst, &case.dims, &case.src_strides));
    });
    agrees("ndarray", dst, check, |dst| ndarray_assign::<T>(src, dst, &case.dims, &case.src_strides));
    let serial = threadteam::Exec::serial;
    group.bench_function("strided_perm", |bench| {
        bench.iter(|| strided_perm::<T>(black_box(src), dst, &case.dims, &case.src_strides, serial()));
    });
    agrees("strided-perm", dst, check, |dst| strided_perm::<T>(src, dst, &case.dims, &case.src_strides, serial()));
}

/// strided-perm (crates.io; an HPTT-style engine, Springer, Su and Bientinesi 2017): the
/// destination dense in `dims`' order, the source read through `src_strides`, on the calling
/// thread (`Exec::serial`) or on `exec`'s pool.
fn strided_perm<T: bytemuck::Pod + Send + Sync>(
    src: &[u8],
    dst: &mut [u8],
    dims: &[usize],
    src_strides: &[usize],
    exec: threadteam::Exec<'_>,
) {
    let src: &[T] = bytemuck::cast_slice(src);
    let dst: &mut [T] = bytemuck::cast_slice_mut(dst);
    let signed = |s: &[usize]| s.iter().map(|&x| isize::try_from(x).expect("a stride")).collect::<Vec<_>>();
    let from = strided_view::StridedView::new(src, dims, &signed(src_strides), 0).expect("source view");
    let mut to = strided_view::StridedViewMut::new(dst, dims, &signed(&dense(dims)), 0).expect("destination view");
    strided_perm::copy_into(&mut to, &from, exec).expect("strided-perm copy");
}

/// Runs a baseline once into a cleared `dst` and checks its bytes: on its own, because a
/// filtered run (`cargo bench --bench relayout -- r3`) skips the benches and leaves `dst` as
/// it was.
fn agrees(name: &str, dst: &mut [u8], check: &[u8], run: impl FnOnce(&mut [u8])) {
    dst.fill(0);
    run(dst);
    assert!(dst == check, "{name} disagrees");
}

fn bench_case(c: &mut Criterion, case: &Case, huge: bool) {
    let (src_shape, dst_shape) = (shape(case.src), shape(case.dst));
    let (a, b) = (src_shape.as_array().unwrap(), dst_shape.as_array().unwrap());
    let plan = RelayoutPlan::new(a, b).unwrap();
    let cached = RelayoutPlan::with_stores(a, b, StorePolicy::Cached).unwrap();
    let width = a.element_type().byte_width().unwrap() as usize;
    let src = buffer(plan.src_len(), huge);
    let mut dst = buffer(plan.dst_len(), huge);
    let copy_src = buffer(plan.dst_len(), huge);
    let name = if huge { format!("relayout/{}/huge", case.name) } else { format!("relayout/{}", case.name) };
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(plan.dst_len() as u64));
    group.sample_size(10);
    group.bench_function("memcpy", |bench| bench.iter(|| dst.copy_from_slice(black_box(&copy_src))));
    group.bench_function("plan", |bench| bench.iter(|| run_alone(&plan, black_box(&src), &mut dst)));
    group.bench_function("plan_cached", |bench| bench.iter(|| run_alone(&cached, black_box(&src), &mut dst)));
    // The same plan on rayon's global pool: every core (benches/peers/run_relayout.sh's table).
    #[cfg(feature = "rayon")]
    group.bench_function("plan_all_threads", |bench| bench.iter(|| plan.run(black_box(&src), &mut dst).unwrap()));
    // Correctness of the baselines: they agree with the plan, and so does the cached plan.
    let mut check = vec![0u8; plan.dst_len()];
    plan.run(&src, &mut check).unwrap();
    cached.run(&src, &mut dst).unwrap();
    assert!(dst[..] == check[..], "the cached plan disagrees");
    match width {
        4 => baselines::<4, u32>(&mut group, case, &src, &mut dst, &check),
        _ => baselines::<2, u16>(&mut group, case, &src, &mut dst, &check),
    }
    if case.physical {
        let (ma, mb) = (PhysicalMap::new(a).unwrap(), PhysicalMap::new(b).unwrap());
        let dims = a.dimensions().to_vec();
        match width {
            4 => {
                group.bench_function("physical_map", |bench| {
                    bench.iter(|| physical_loop::<4>(black_box(&src), &mut dst, &ma, &mb, &dims));
                });
                agrees("physical map loop", &mut dst, &check, |dst| physical_loop::<4>(&src, dst, &ma, &mb, &dims));
            }
            _ => {
                group.bench_function("physical_map", |bench| {
                    bench.iter(|| physical_loop::<2>(black_box(&src), &mut dst, &ma, &mb, &dims));
                });
                agrees("physical map loop", &mut dst, &check, |dst| physical_loop::<2>(&src, dst, &ma, &mb, &dims));
            }
        }
    }
    group.finish();
}

/// s4 packed (`E(4)`) ↔ unpacked (one per byte): the plan against the per-element bit loop.
fn bench_s4(c: &mut Criterion) {
    const N: i64 = 1 << 25;
    for (name, src_text, dst_text) in [
        ("s4_unpack", "s4[33554432]{0:E(4)}", "s4[33554432]{0}"),
        ("s4_pack", "s4[33554432]{0}", "s4[33554432]{0:E(4)}"),
    ] {
        let (src_shape, dst_shape) = (shape(src_text), shape(dst_text));
        let (a, b) = (src_shape.as_array().unwrap(), dst_shape.as_array().unwrap());
        let plan = RelayoutPlan::new(a, b).unwrap();
        let (ma, mb) = (PhysicalMap::new(a).unwrap(), PhysicalMap::new(b).unwrap());
        let src = buffer(plan.src_len(), false);
        let mut dst = buffer(plan.dst_len(), false);
        let copy_src = buffer(plan.dst_len(), false);
        let mut group = c.benchmark_group(format!("relayout/{name}"));
        group.throughput(Throughput::Bytes(plan.dst_len() as u64));
        group.sample_size(10);
        group.bench_function("memcpy", |bench| bench.iter(|| dst.copy_from_slice(black_box(&copy_src))));
        group.bench_function("plan", |bench| bench.iter(|| run_alone(&plan, black_box(&src), &mut dst)));
        let mut check = vec![0u8; plan.dst_len()];
        plan.run(&src, &mut check).unwrap();
        let (sb, db) = (ma.bits_per_slot(), mb.bits_per_slot());
        let bit_loop = |dst: &mut [u8]| {
            dst.fill(0);
            for i in 0..N {
                let s = ma.slot_unchecked_bounds(&[i]).get() * sb;
                let d = mb.slot_unchecked_bounds(&[i]).get() * db;
                let v = (src[(s / 8) as usize] >> (s % 8)) & 0xF;
                let byte = &mut dst[(d / 8) as usize];
                *byte = (*byte & !(0xF << (d % 8))) | (v << (d % 8));
            }
        };
        group.bench_function(BenchmarkId::new("physical_map", "bits"), |bench| bench.iter(|| bit_loop(&mut dst)));
        agrees("bit loop", &mut dst, &check, bit_loop);
        group.finish();
    }
}

/// Feature `rayon`: t2d (f32[8192,16384]) and r3 (f32[512,512,512], (2,0,1)) at 512 MiB on one
/// thread and on two, huge pages (`memcpy`, `plan`) and `Vec`s in 4 KiB pages 16 bytes past a
/// line (`memcpy_vec`, `plan_vec`), and issue 36's TPU tile cases at 512 MiB (`f32` row-major →
/// `T(8,128)`, bf16 row-major ↔ `T(8,128)(2,1)`); each group its own
/// (`relayout/t2d_512MiB_threads`, …). `THREADS_CASES=t2d,r3` runs only those.
#[cfg(feature = "rayon")]
fn bench_threads(c: &mut Criterion) {
    let filter: Option<String> = std::env::var("THREADS_CASES").ok();
    for (name, src_text, dst_text) in [
        ("t2d", "f32[8192,16384]{0,1}", "f32[8192,16384]{1,0}"),
        ("r3", "f32[512,512,512]{2,1,0}", "f32[512,512,512]{1,0,2}"),
        ("f32_rm_to_t8x128", "f32[8192,16384]{1,0}", "f32[8192,16384]{1,0:T(8,128)}"),
        ("bf16_rm_to_t8x128x2", "bf16[16384,16384]{1,0}", "bf16[16384,16384]{1,0:T(8,128)(2,1)}"),
        ("bf16_t8x128x2_to_rm", "bf16[16384,16384]{1,0:T(8,128)(2,1)}", "bf16[16384,16384]{1,0}"),
    ] {
        if filter.as_ref().is_some_and(|f| !f.split(',').any(|n| n == name)) {
            continue;
        }
        let (a, b) = (shape(src_text), shape(dst_text));
        let plan = RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap();
        let src = buffer(plan.src_len(), true);
        let mut dst = buffer(plan.dst_len(), true);
        let mut group = c.benchmark_group(format!("relayout/{name}_512MiB_threads"));
        group.throughput(Throughput::Bytes(plan.dst_len() as u64));
        group.sample_size(10);
        let pools: Vec<(usize, rayon::ThreadPool)> =
            [1, 2].into_iter().map(|n| (n, rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap())).collect();
        // The baselines: memcpy of the same bytes on one thread and split over two (the
        // bandwidth two threads can reach), and strided-perm on each.
        let copy_src = buffer(plan.dst_len(), true);
        let digests = on_pools(&mut group, &pools, &plan, (&src, &mut dst, &copy_src), "");
        // The same on users' buffers: `Vec<u8>`s 16 bytes past a cache line, in 4 KiB pages
        // (glibc maps large blocks without huge pages; mapped files are in 4 KiB pages too).
        let mut on_vecs =
            (Placed::new(plan.src_len(), Placement::Line(16)), Placed::new(plan.dst_len(), Placement::Line(16)));
        let vec_copy_src = buffer(plan.dst_len(), false);
        let vec_digests =
            on_pools(&mut group, &pools, &plan, (on_vecs.0.bytes(), on_vecs.1.bytes(), &vec_copy_src), "_vec");
        drop((on_vecs, vec_copy_src));
        // strided-perm permutes; the tiles are not its work.
        let perm = match name {
            "t2d" => Some(permuted(&[16384, 8192], &[1, 0])),
            "r3" => Some(permuted(&[512, 512, 512], &[2, 0, 1])),
            _ => None,
        };
        let team = threadteam::Pool::builder().threads(2).build().expect("a threadteam pool");
        if let Some((dims, src_strides)) = &perm {
            for threads in [1, 2] {
                group.bench_function(BenchmarkId::new("strided_perm", threads), |bench| {
                    bench.iter(|| {
                        let exec = threadteam::Exec::new(&team, threads).expect("a budget");
                        strided_perm::<u32>(black_box(&src), &mut dst, dims, src_strides, exec);
                    });
                });
            }
        }
        assert!(digests.windows(2).all(|w| w[0] == w[1]), "{name}: one and two threads disagree");
        assert!(vec_digests.iter().all(|&v| v == digests[0]), "{name}: the plan on `Vec`s disagrees");
        if let Some((dims, src_strides)) = &perm {
            dst.fill(0);
            strided_perm::<u32>(&src, &mut dst, dims, src_strides, threadteam::Exec::new(&team, 2).expect("a budget"));
            assert!(digest(&dst) == digests[0], "{name}: strided-perm disagrees");
        } else {
            dst.fill(0);
            plan.run(&src, &mut dst).unwrap();
        }
        // And the last of them moved the elements: a sample of indices through both maps (the
        // shapes are whole tiles: a slot is an element).
        let (ma, mb) =
            (PhysicalMap::new(a.as_array().unwrap()).unwrap(), PhysicalMap::new(b.as_array().unwrap()).unwrap());
        let dims = a.as_array().unwrap().dimensions().to_vec();
        let width = plan.src_len() / dims.iter().map(|&n| usize::try_from(n).unwrap()).product::<usize>();
        for k in 0..1000_i64 {
            let index: Vec<i64> = dims.iter().zip(0_i64..).map(|(&n, d)| (k * 7919 + d * 104_729) % n).collect();
            let s = ma.slot_unchecked_bounds(&index).get() as usize * width;
            let d = mb.slot_unchecked_bounds(&index).get() as usize * width;
            assert!(dst[d..d + width] == src[s..s + width], "{name}: element {index:?} misplaced");
        }
        group.finish();
    }
}

/// memcpy of the plan's output bytes from `copy_src` and the plan from `src`, into `dst`, on each
/// of `pools` (functions `memcpy{suffix}/THREADS` and `plan{suffix}/THREADS`). Returns what each
/// pool's plan wrote, as digests: each run once into a cleared buffer, so that a filtered run
/// (which skipped the benches) checks what it wrote, never a stale buffer; a digest instead of a
/// second 512 MiB buffer.
#[cfg(feature = "rayon")]
fn on_pools(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    pools: &[(usize, rayon::ThreadPool)],
    plan: &RelayoutPlan,
    (src, dst, copy_src): (&[u8], &mut [u8], &[u8]),
    suffix: &str,
) -> Vec<u64> {
    for (threads, pool) in pools {
        group.bench_function(BenchmarkId::new(format!("memcpy{suffix}"), threads), |bench| {
            bench.iter(|| {
                pool.install(|| {
                    use rayon::prelude::*;
                    let chunk = dst.len().div_ceil(*threads);
                    dst.par_chunks_mut(chunk)
                        .zip(black_box(copy_src).par_chunks(chunk))
                        .for_each(|(to, from)| to.copy_from_slice(from));
                });
            });
        });
        group.bench_function(BenchmarkId::new(format!("plan{suffix}"), threads), |bench| {
            bench.iter(|| pool.install(|| plan.run(black_box(src), dst).unwrap()));
        });
    }
    pools
        .iter()
        .map(|(_, pool)| {
            dst.fill(0);
            pool.install(|| plan.run(src, dst).unwrap());
            digest(dst)
        })
        .collect()
}

/// Where a destination starts: `Page(k)`, `k` bytes past a page of an anonymous map (4 KiB
/// pages); `Vec`, a `Vec<u8>` from the global allocator (glibc's `malloc` maps large blocks and
/// hands them out 16 bytes past a page, where numpy's arrays are too).
#[derive(Clone, Copy)]
enum Placement {
    Page(usize),
    Vec,
    /// `k` bytes past a cache line of a `Vec<u8>` (16: where `malloc` puts large blocks).
    Line(usize),
}

impl Placement {
    fn name(self) -> String {
        match self {
            Self::Page(0) => "page".into(),
            Self::Page(k) => format!("page+{k}"),
            Self::Vec => "vec".into(),
            Self::Line(k) => format!("line+{k}"),
        }
    }
}

/// A buffer of `len` bytes at `placement`, filled with a pattern: the map is kept alive beside
/// the slice's range.
enum Placed {
    Map(MmapMut, usize, usize),
    Vec(Vec<u8>),
    Line(Vec<u8>, usize, usize),
}

impl Placed {
    fn new(len: usize, placement: Placement) -> Self {
        match placement {
            Placement::Page(k) => {
                let mut map = buffer(len + k, false);
                map[k..].iter_mut().enumerate().for_each(|(i, b)| *b = (i % 251) as u8);
                Self::Map(map, k, len)
            }
            Placement::Vec => Self::Vec((0..len).map(|i| (i % 251) as u8).collect()),
            Placement::Line(k) => {
                let mut v = vec![0u8; len + 128];
                let start = v.as_ptr().align_offset(64) + k;
                v[start..start + len].iter_mut().enumerate().for_each(|(i, b)| *b = (i % 251) as u8);
                Self::Line(v, start, len)
            }
        }
    }

    fn bytes(&mut self) -> &mut [u8] {
        match self {
            Self::Map(map, k, len) => &mut map[*k..*k + *len],
            Self::Vec(v) => v,
            Self::Line(v, start, len) => &mut v[*start..*start + *len],
        }
    }
}

/// Issue 31's alignment table (`RELAYOUT_CASES=align`): the transposes with the destination at
/// a page, 4, 16 and 64 bytes past one, and in `Vec`s (source and destination), one thread
/// each, against memcpy into the same destination and strided-perm; a one-byte transpose also
/// at odd offsets.
fn bench_alignment(c: &mut Criterion) {
    let mut all = cases();
    all.retain(|case| ["t2d", "r3", "nchw_nhwc", "r5"].contains(&case.name));
    all.push(Case {
        name: "t2d_u8",
        src: "u8[8192,8192]{0,1}",
        dst: "u8[8192,8192]{1,0}",
        dims: permuted(&[8192, 8192], &[1, 0]).0,
        src_strides: permuted(&[8192, 8192], &[1, 0]).1,
        physical: false,
        huge: false,
    });
    for case in &all {
        let (src_shape, dst_shape) = (shape(case.src), shape(case.dst));
        let plan = RelayoutPlan::new(src_shape.as_array().unwrap(), dst_shape.as_array().unwrap()).unwrap();
        let width = src_shape.as_array().unwrap().element_type().byte_width().unwrap() as usize;
        let mut placements = vec![Placement::Page(0), Placement::Page(4), Placement::Page(16), Placement::Page(64)];
        if width == 1 {
            placements.extend([Placement::Page(1), Placement::Page(17)]);
        }
        placements.push(Placement::Vec);
        let mut check = vec![0u8; plan.dst_len()];
        for placement in placements {
            let mut src = Placed::new(
                plan.src_len(),
                if matches!(placement, Placement::Vec) { placement } else { Placement::Page(0) },
            );
            let copy_src = buffer(plan.dst_len(), false);
            let mut dst = Placed::new(plan.dst_len(), placement);
            let (src, dst) = (src.bytes(), dst.bytes());
            plan.run(src, &mut check).unwrap();
            let mut group = c.benchmark_group(format!("relayout/align/{}/{}", case.name, placement.name()));
            group.throughput(Throughput::Bytes(plan.dst_len() as u64));
            group.sample_size(10);
            group.bench_function("memcpy", |bench| bench.iter(|| dst.copy_from_slice(black_box(&copy_src))));
            group.bench_function("plan", |bench| bench.iter(|| run_alone(&plan, black_box(src), dst)));
            agrees("plan", dst, &check, |dst| run_alone(&plan, src, dst));
            let serial = threadteam::Exec::serial;
            match width {
                4 => {
                    group.bench_function("strided_perm", |bench| {
                        bench
                            .iter(|| strided_perm::<u32>(black_box(src), dst, &case.dims, &case.src_strides, serial()));
                    });
                    agrees("strided-perm", dst, &check, |dst| {
                        strided_perm::<u32>(src, dst, &case.dims, &case.src_strides, serial());
                    });
                }
                _ => {
                    group.bench_function("strided_perm", |bench| {
                        bench.iter(|| strided_perm::<u8>(black_box(src), dst, &case.dims, &case.src_strides, serial()));
                    });
                    agrees("strided-perm", dst, &check, |dst| {
                        strided_perm::<u8>(src, dst, &case.dims, &case.src_strides, serial());
                    });
                }
            }
            group.finish();
        }
    }
}

/// Issue 36's cases on users' buffers ([`USER_CASES`]; `RELAYOUT_CASES=users`, or, with
/// `RELAYOUT_CASES=cache`, the same layouts at about 128 KiB, so that the buffers stay in the
/// caches and the kernel's own instructions, not memory, set its speed): source and destination
/// `Vec<u8>`s 16 bytes past a cache line (where glibc's `malloc` and numpy put large arrays),
/// beside the same case on page-aligned maps, each with memcpy of the same output bytes into the
/// same destination, one thread. Groups `relayout/users/CASE` (`relayout/cache/CASE`), functions
/// `memcpy/page`, `plan/page`, `memcpy/vec`, `plan/vec` (and, for the packs, whose source is
/// larger than their output, `read/page` and `read/vec`: the source read alone, [`read_all`]);
/// both placements are checked to write the same bytes. The `cache` group's source,
/// destination and memcpy's source (384–640 KiB) stay in the caches (the project's VM reports
/// 512 KiB of second-level cache per core and 32 MiB of third-level), where the plan stores
/// normally (below [`StorePolicy::Auto`]'s streaming size).
fn bench_users(c: &mut Criterion, set: &str) {
    let size = usize::from(set == "cache");
    let filter: Option<String> = std::env::var("USERS_CASES").ok();
    for (name, element, dims, src_layout, dst_layout) in USER_CASES {
        if filter.as_ref().is_some_and(|f| !f.split(',').any(|n| n == *name)) {
            continue;
        }
        let dims = dims[size];
        let (src_shape, dst_shape) =
            (shape(&format!("{element}{dims}{src_layout}")), shape(&format!("{element}{dims}{dst_layout}")));
        let plan = RelayoutPlan::new(src_shape.as_array().unwrap(), dst_shape.as_array().unwrap()).unwrap();
        let mut group = c.benchmark_group(format!("relayout/{set}/{name}"));
        group.throughput(Throughput::Bytes(plan.dst_len() as u64));
        group.sample_size(10);
        let mut check = vec![0u8; plan.dst_len()];
        for placement in [Placement::Page(0), Placement::Line(16)] {
            let label = match placement {
                Placement::Line(_) => "vec",
                _ => "page",
            };
            let mut src = Placed::new(plan.src_len(), placement);
            let mut dst = Placed::new(plan.dst_len(), placement);
            let copy_src = buffer(plan.dst_len(), false);
            let (src, dst) = (src.bytes(), dst.bytes());
            if label == "page" {
                plan.run(src, &mut check).unwrap();
            }
            group.bench_function(BenchmarkId::new("memcpy", label), |bench| {
                bench.iter(|| dst.copy_from_slice(black_box(&copy_src)));
            });
            // A pack reads more bytes than it writes: reading its source alone, with nothing
            // written, is a floor its time cannot go below (`read/page`, `read/vec`).
            if plan.src_len() > plan.dst_len() {
                group.bench_function(BenchmarkId::new("read", label), |bench| {
                    bench.iter(|| black_box(read_all(black_box(src))));
                });
            }
            group.bench_function(BenchmarkId::new("plan", label), |bench| {
                bench.iter(|| run_alone(&plan, black_box(src), dst));
            });
            agrees(name, dst, &check, |dst| run_alone(&plan, src, dst));
        }
        group.finish();
    }
}

/// The cases of [`bench_users`]: name, element type, dimensions (64 MiB out unless said; then
/// about 128 KiB out for the `cache` group, whose three buffers then stay in the caches), source
/// layout, destination layout. One row for both sizes, so that the two groups keep the same
/// layouts.
const USER_CASES: &[(&str, &str, [&str; 2], &str, &str)] = &[
    ("t2d", "f32", ["[4096,4096]", "[128,256]"], "{0,1}", "{1,0}"),
    ("r3", "f32", ["[256,256,256]", "[32,32,32]"], "{2,1,0}", "{1,0,2}"),
    ("nchw_nhwc", "f32", ["[16,64,128,128]", "[1,64,16,32]"], "{3,2,1,0}", "{1,3,2,0}"),
    // 8 channels: the interleave of 8 `f32` rows, more than a lane holds (`tile::interleave_runs`).
    ("nchw_nhwc_c8", "f32", ["[32,8,256,256]", "[1,8,64,64]"], "{3,2,1,0}", "{1,3,2,0}"),
    // And back: the deinterleave of 16 `u8` rows.
    ("nhwc_nchw_u8_c16", "u8", ["[64,16,256,256]", "[2,16,64,64]"], "{1,3,2,0}", "{3,2,1,0}"),
    ("r4", "f32", ["[64,64,64,64]", "[2,16,16,64]"], "{3,2,1,0}", "{3,1,2,0}"),
    ("r5", "f32", ["[128,128,64,4,4]", "[4,16,32,4,4]"], "{4,3,2,1,0}", "{2,4,1,3,0}"),
    // r5's way back to row-major: a short innermost axis (4) continued in the destination by the
    // next (4), fused into the micro-tiles' columns.
    ("r5_back", "f32", ["[128,128,64,4,4]", "[4,16,32,4,4]"], "{2,4,1,3,0}", "{4,3,2,1,0}"),
    // Source rows 32 KiB apart: bands narrowed to 32 columns on `Vec`s, 64 on pages
    // (`plan::band_columns`; t2d's rows, 16 KiB apart, narrow too).
    ("t2d_tall", "f32", ["[8192,2048]", "[256,128]"], "{0,1}", "{1,0}"),
    ("t2d_u8", "u8", ["[8192,8192]", "[256,512]"], "{0,1}", "{1,0}"),
    ("t2d_bf16", "bf16", ["[4096,8192]", "[128,512]"], "{0,1}", "{1,0}"),
    ("t2d_u64", "u64", ["[2048,4096]", "[64,256]"], "{0,1}", "{1,0}"),
    ("f32_rm_to_t8x128", "f32", ["[4096,4096]", "[32,1024]"], "{1,0}", "{1,0:T(8,128)}"),
    ("f32_t8x128_to_rm", "f32", ["[4096,4096]", "[32,1024]"], "{1,0:T(8,128)}", "{1,0}"),
    ("bf16_rm_to_t8x128x2", "bf16", ["[4096,8192]", "[16,4096]"], "{1,0}", "{1,0:T(8,128)(2,1)}"),
    ("bf16_t8x128x2_to_rm", "bf16", ["[4096,8192]", "[16,4096]"], "{1,0:T(8,128)(2,1)}", "{1,0}"),
    ("bf16_t8_to_t16", "bf16", ["[4096,8192]", "[32,2048]"], "{1,0:T(8,128)(2,1)}", "{1,0:T(16,128)(2,1)}"),
    ("bf16_rm_to_t8x128x2_T", "bf16", ["[4096,8192]", "[128,512]"], "{1,0}", "{0,1:T(8,128)(2,1)}"),
    // int8 under TPU tiles: each column's 4 bytes are 4 rows' elements.
    ("s8_rm_to_t8x128x4", "s8", ["[8192,8192]", "[32,4096]"], "{1,0}", "{1,0:T(8,128)(4,1)}"),
    ("s8_t8x128x4_to_rm", "s8", ["[8192,8192]", "[32,4096]"], "{1,0:T(8,128)(4,1)}", "{1,0}"),
    // The large tiles XLA gives 8-bit types on newer TPUs (Mosaic's `use_x8_large_second_minor`):
    // 32 rows of each tile written side by side.
    ("s8_rm_to_t32x128x4", "s8", ["[8192,8192]", "[32,4096]"], "{1,0}", "{1,0:T(32,128)(4,1)}"),
    ("s8_t32x128x4_to_rm", "s8", ["[8192,8192]", "[32,4096]"], "{1,0:T(32,128)(4,1)}", "{1,0}"),
    // 32 MiB out (pack), 64 MiB out (unpack).
    ("s4_pack", "s4", ["[67108864]", "[262144]"], "{0}", "{0:E(4)}"),
    ("s4_unpack", "s4", ["[67108864]", "[262144]"], "{0:E(4)}", "{0}"),
    // 16 MiB out (pack), 64 MiB out (unpack).
    ("s2_pack", "s2", ["[67108864]", "[262144]"], "{0}", "{0:E(2)}"),
    ("s2_unpack", "s2", ["[67108864]", "[262144]"], "{0:E(2)}", "{0}"),
    // int4 under TPU tiles: each column's 32-bit word holds 8 rows' nibbles.
    ("s4_pack_t8x128x8", "s4", ["[8192,8192]", "[64,4096]"], "{1,0}", "{1,0:T(8,128)(8,1)E(4)}"),
    ("s4_unpack_t8x128x8", "s4", ["[8192,8192]", "[64,4096]"], "{1,0:T(8,128)(8,1)E(4)}", "{1,0}"),
    // The CPU and GPU runtimes' int4 and int2 (packed along the rows) ↔ the same under TPU tiles:
    // 32 and 16 MiB each way.
    ("s4_e4_to_t8x128x8", "s4", ["[8192,8192]", "[64,4096]"], "{1,0:E(4)}", "{1,0:T(8,128)(8,1)E(4)}"),
    ("s4_t8x128x8_to_e4", "s4", ["[8192,8192]", "[64,4096]"], "{1,0:T(8,128)(8,1)E(4)}", "{1,0:E(4)}"),
    ("s2_e2_to_t16x128x16", "s2", ["[8192,8192]", "[128,4096]"], "{1,0:E(2)}", "{1,0:T(16,128)(16,1)E(2)}"),
    ("s2_t16x128x16_to_e2", "s2", ["[8192,8192]", "[128,4096]"], "{1,0:T(16,128)(16,1)E(2)}", "{1,0:E(2)}"),
];

/// An order-sensitive digest of `bytes` (FNV-1a over 8-byte words).
#[cfg(feature = "rayon")]
fn digest(bytes: &[u8]) -> u64 {
    bytes.chunks(8).fold(0xcbf2_9ce4_8422_2325, |h, w| {
        let mut word = [0u8; 8];
        word[..w.len()].copy_from_slice(w);
        (h ^ u64::from_le_bytes(word)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(not(feature = "rayon"))]
fn bench_threads(_: &mut Criterion) {}

fn relayout(c: &mut Criterion) {
    if std::env::var("RELAYOUT_CASES").is_ok_and(|f| f == "threads") {
        bench_threads(c);
        return;
    }
    if std::env::var("RELAYOUT_CASES").is_ok_and(|f| f == "users") {
        bench_users(c, "users");
        return;
    }
    if std::env::var("RELAYOUT_CASES").is_ok_and(|f| f == "cache") {
        bench_users(c, "cache");
        return;
    }
    if std::env::var("RELAYOUT_CASES").is_ok_and(|f| f == "align") {
        bench_alignment(c);
        return;
    }
    let filter: Option<String> = std::env::var("RELAYOUT_CASES").ok();
    for case in cases() {
        if filter.as_ref().is_some_and(|f| !f.split(',').any(|n| n == case.name)) {
            continue;
        }
        bench_case(c, &case, false);
        if case.huge {
            bench_case(c, &case, true);
        }
    }
    if filter.as_ref().is_none_or(|f| f.split(',').any(|n| n == "s4")) {
        bench_s4(c);
    }
}

criterion_group!(benches, relayout);
criterion_main!(benches);
