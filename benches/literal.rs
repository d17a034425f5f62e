//! Reading a 64 MiB f32 literal into a row-major buffer, against `memcpy` of the same bytes in
//! the same group and run; and the same literal in column-major order (through the relayout
//! engine), and decoding its bytes.
//!
//! `cargo bench --bench literal -- --warm-up-time 1 --measurement-time 3`
#![allow(missing_docs)] // criterion_group! generates undocumented public functions

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use xla_shape::literal::Literal;
use xla_shape::make::make_shape_with_dense_layout;
use xla_shape::proto::LiteralProto;
use xla_shape::{PrimitiveType, codec};

const SIDE: i64 = 4096; // 4096 × 4096 f32 = 64 MiB

fn literal(minor_to_major: &[i64]) -> LiteralProto {
    let shape = make_shape_with_dense_layout(PrimitiveType::F32, &[SIDE, SIDE], minor_to_major).unwrap().into_proto();
    #[allow(clippy::cast_precision_loss, reason = "any values do")]
    let f32s = (0..SIDE * SIDE).map(|i| (i % 1000) as f32).collect();
    LiteralProto { shape: Some(shape), f32s, ..LiteralProto::default() }
}

fn read(c: &mut Criterion) {
    let row_major = literal(&[1, 0]);
    let column_major = literal(&[0, 1]);
    let bytes = u64::try_from(row_major.f32s.len() * 4).unwrap();
    let mut out = vec![0f32; row_major.f32s.len()];
    let mut group = c.benchmark_group("literal 64 MiB f32");
    group.throughput(Throughput::Bytes(bytes)).sample_size(10);
    group.bench_function("memcpy (baseline)", |b| b.iter(|| out.copy_from_slice(black_box(&row_major.f32s))));
    group.bench_function("validate + copy_into, row-major", |b| {
        b.iter(|| {
            let literal = Literal::try_new(black_box(&row_major)).unwrap();
            literal.as_array().unwrap().copy_into(&mut out).unwrap();
        });
    });
    group.bench_function("validate + copy_into, column-major (relayout)", |b| {
        b.iter(|| {
            let literal = Literal::try_new(black_box(&column_major)).unwrap();
            literal.as_array().unwrap().copy_into(&mut out).unwrap();
        });
    });
    let encoded = codec::encode(&row_major);
    group.bench_function("strict decode of the bytes", |b| {
        b.iter(|| codec::decode::<LiteralProto>(black_box(&encoded[..])).unwrap());
    });
    group.finish();
}

criterion_group!(benches, read);
criterion_main!(benches);
