//! Every permutation of one shape, both ways (issue 36): each layout `{p}` of `T[DIMS]` to
//! row-major and back, timed on the calling thread beside memcpy of the same output bytes into
//! the same destination, both buffers `Vec`s 16 bytes past a cache line (where glibc and numpy
//! put large arrays; `PLACE=page` for page-aligned ones), alternated, medians of `ROUNDS` rounds
//! (default 5). Prints the `WORST` (default 12) cases with the plan's kernel, then the median
//! and quartiles of memcpy / xla-shape over every case:
//!
//! ```text
//! cargo bench --bench permutations                              # f32[128,64,32,16,4]
//! TYPE=bf16 DIMS=64,64,32,16,8 ROUNDS=7 PLACE=page cargo bench --bench permutations
//! ```
//!
//! A survey, not a criterion bench: 238 cases of 64 MiB take about a minute.
#![allow(missing_docs, clippy::cast_precision_loss)]

use std::time::Instant;
use xla_shape::ShapeBuf;
use xla_shape::relayout::{RelayoutPlan, on_calling_thread};

/// Every permutation of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut all = Vec::new();
    for shorter in permutations(n - 1) {
        for at in 0..n {
            let mut p = shorter.clone();
            p.insert(at, n - 1);
            all.push(p);
        }
    }
    all
}

fn layout(order: &[usize]) -> String {
    let list: Vec<String> = order.iter().map(ToString::to_string).collect();
    format!("{{{}}}", list.join(","))
}

/// `len` bytes of `buf`, `offset` bytes past a cache line or a page.
fn placed(buf: &mut [u8], align: usize, offset: usize, len: usize) -> &mut [u8] {
    let start = buf.as_ptr().align_offset(align) + offset;
    &mut buf[start..start + len]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let var = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.to_owned());
    let element = var("TYPE", "f32");
    let dims = var("DIMS", "128,64,32,16,4");
    let rounds: usize = var("ROUNDS", "5").parse().expect("ROUNDS: a number");
    let worst: usize = var("WORST", "12").parse().expect("WORST: a number");
    let (align, offset) = if var("PLACE", "vec") == "page" { (4096, 0) } else { (64, 16) };
    let rank = dims.split(',').count();
    let row_major: Vec<usize> = (0..rank).rev().collect();
    let mut results = Vec::new();
    for order in permutations(rank) {
        if order == row_major {
            continue;
        }
        for (from, to) in [(layout(&order), layout(&row_major)), (layout(&row_major), layout(&order))] {
            let a: ShapeBuf = format!("{element}[{dims}]{from}").parse().expect("a shape");
            let b: ShapeBuf = format!("{element}[{dims}]{to}").parse().expect("a shape");
            let plan = RelayoutPlan::new(a.as_array().expect("array"), b.as_array().expect("array")).expect("a plan");
            let (src_len, dst_len) = (plan.src_len(), plan.dst_len());
            let mut src_buf: Vec<u8> = (0..src_len + align).map(|k| u8::try_from(k % 251).unwrap_or(0)).collect();
            let mut dst_buf = vec![0u8; dst_len + align];
            let copy_src = vec![1u8; dst_len];
            let src = &*placed(&mut src_buf, align, offset, src_len);
            let dst = placed(&mut dst_buf, align, offset, dst_len);
            let (mut memcpy, mut ours) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                let start = Instant::now();
                dst.copy_from_slice(std::hint::black_box(&copy_src));
                memcpy.push(start.elapsed().as_secs_f64());
                let start = Instant::now();
                on_calling_thread(|| plan.run(src, dst)).expect("a run");
                ours.push(start.elapsed().as_secs_f64());
            }
            let ratio = median(memcpy) / median(ours);
            let explained = plan.explain();
            let kernel = explained.lines().last().and_then(|l| l.split("); ").last()).unwrap_or("").to_owned();
            results.push((ratio, format!("{element}[{dims}]{from} -> {to}"), kernel));
        }
    }
    results.sort_by(|x, y| x.0.total_cmp(&y.0));
    for (ratio, case, kernel) in results.iter().take(worst) {
        println!("{ratio:.2}  {case}  | {}", kernel.chars().take(110).collect::<String>());
    }
    let ratios: Vec<f64> = results.iter().map(|r| r.0).collect();
    let at = |q: usize| ratios[(ratios.len() - 1) * q / 4];
    println!(
        "{} cases, memcpy / xla-shape: median {:.2}, quartiles {:.2} / {:.2}, min {:.2}, max {:.2} ({} {offset} bytes past {align})",
        ratios.len(),
        at(2),
        at(1),
        at(3),
        at(0),
        at(4),
        if align == 64 { "Vecs" } else { "buffers" }
    );
}
