//! How long the hostile and large inputs of `tests/adversarial.rs` take (`cargo bench --bench
//! hostile`). The test asserts their memory bound; their time is measured here, where a busy
//! machine makes a figure noisy instead of a test flaky. The budget the crate aims for is 100 ms
//! each in a release build.

#![allow(missing_docs, reason = "criterion_group! generates an undocumented public function")]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "../tests/common/mod.rs"]
mod common;

use common::nested_tuple_bytes;
use xla_shape::proto::ShapeProto;
use xla_shape::{Shape, codec, text};

const TEN_MB: usize = 10_000_000;

fn hostile(c: &mut Criterion) {
    let mut group = c.benchmark_group("hostile");
    group.sample_size(10);
    let identifier = "x".repeat(TEN_MB);
    group.bench_function("parse a 10 MB identifier", |b| b.iter(|| text::parse_shape(black_box(&identifier))));
    let open = "(".repeat(TEN_MB);
    group.bench_function("parse 10 MB of (", |b| b.iter(|| text::parse_shape(black_box(&open))));
    let nested = format!("{}f32[]{}", "(".repeat(2000), ")".repeat(2000));
    group.bench_function("parse 2000 nested tuples", |b| b.iter(|| text::parse_shape(black_box(&nested))));
    let nested = nested_tuple_bytes(2000);
    group.bench_function("decode 2000 nested tuples", |b| {
        b.iter(|| codec::decode::<ShapeProto>(black_box(&nested[..])));
    });
    let rank_5000 = text::parse_shape(&format!("f32[{}]", vec!["1"; 5000].join(","))).expect("valid").proto().clone();
    let bytes = codec::encode(&rank_5000);
    group.bench_function("decode and validate rank 5000", |b| {
        b.iter(|| {
            let proto: ShapeProto = codec::decode(black_box(&bytes[..])).expect("valid");
            Shape::try_new(&proto).map(|shape| shape.to_string())
        });
    });
    let tuple = text::parse_shape(&format!("({})", vec!["f32[2,3]{0,1}"; 10_000].join(","))).expect("valid");
    let bytes = codec::encode(tuple.proto());
    group.bench_function("decode and validate a 10 000-element tuple", |b| {
        b.iter(|| {
            let proto: ShapeProto = codec::decode(black_box(&bytes[..])).expect("valid");
            Shape::try_new(&proto).map(|shape| shape.to_string())
        });
    });
    group.finish();
}

criterion_group!(benches, hostile);
criterion_main!(benches);
