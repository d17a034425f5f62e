//! Printing and parsing XLA shape strings: a small array, a tiled bf16 array and a 100-element
//! tuple (`cargo bench --bench text`).

#![allow(missing_docs, reason = "criterion_group! generates an undocumented public function")]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use xla_shape::ShapeBuf;
use xla_shape::text::{parse_shape, parse_shape_raw};

fn inputs() -> Vec<(&'static str, String)> {
    let tuple = format!("({})", vec!["f32[2,3]{0,1}"; 100].join(", "));
    let tuple = parse_shape(&tuple).expect("valid").to_string();
    vec![
        ("f32[2,3]{0,1}", "f32[2,3]{0,1}".to_owned()),
        ("bf16 tiled", "bf16[2,3,4]{1,2,0:T(16,256)(2,1)}".to_owned()),
        ("tuple of 100", tuple),
    ]
}

fn print(c: &mut Criterion) {
    let mut group = c.benchmark_group("print");
    for (name, text) in inputs() {
        let shape: ShapeBuf = text.parse().expect("valid");
        group.bench_function(name, |b| b.iter(|| black_box(&shape).to_string()));
    }
    group.finish();
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    for (name, text) in inputs() {
        group.bench_function(name, |b| b.iter(|| parse_shape(black_box(&text))));
    }
    group.finish();
    let mut group = c.benchmark_group("parse_raw");
    for (name, text) in inputs() {
        group.bench_function(name, |b| b.iter(|| parse_shape_raw(black_box(&text))));
    }
    group.finish();
}

criterion_group!(benches, print, parse);
criterion_main!(benches);
