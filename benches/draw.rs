//! Pictures: the geometry (`draw::picture`) and the SVG (`Picture::to_svg`) of a small array, a
//! TPU layout and a 16 M-element array, against the `PhysicalMap::new` every picture starts with
//! (the baseline, same group, same run). The large array costs what the elided picture shows,
//! not what the array holds.
//!
//! `cargo bench --features draw --bench draw -- --warm-up-time 1 --measurement-time 3`
#![allow(missing_docs)] // criterion_group! generates undocumented public functions

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use xla_shape::draw::{self, Options};
use xla_shape::{PhysicalMap, text};

fn pictures(c: &mut Criterion) {
    let mut group = c.benchmark_group("draw");
    for (name, s) in [
        ("f32[3,5]T(2,2)", "f32[3,5]{1,0:T(2,2)}"),
        ("bf16[8,256]T(8,128)(2,1)", "bf16[8,256]{1,0:T(8,128)(2,1)}"),
        ("f32[4096,4096]T(8,128)", "f32[4096,4096]{1,0:T(8,128)}"),
    ] {
        let shape = text::parse_shape(s).unwrap();
        let array = shape.as_array().unwrap();
        let options = Options::default();
        group.bench_function(format!("{name}/physical_map_baseline"), |b| {
            b.iter(|| PhysicalMap::new(black_box(array)).unwrap());
        });
        group.bench_function(format!("{name}/geometry"), |b| {
            b.iter(|| draw::picture(black_box(array), &options).unwrap());
        });
        let picture = draw::picture(array, &options).unwrap();
        group.bench_function(format!("{name}/svg"), |b| b.iter(|| black_box(&picture).to_svg()));
    }
    group.finish();
}

criterion_group!(benches, pictures);
criterion_main!(benches);
