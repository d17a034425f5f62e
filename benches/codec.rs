//! Decoding cost: raw prost (the baseline), the strict codec (wire scan + prost), the codec plus
//! strict validation, and encoding, for one tiled rank-4 array and a 100-element tuple of them.
//!
//! ```sh
//! cargo bench --bench codec -- --warm-up-time 1 --measurement-time 3
//! ```

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use prost::Message;
use xla_shape::make::{self, LayoutSpec};
use xla_shape::proto::ShapeProto;
use xla_shape::{PrimitiveType, Shape, ShapeBuf, codec};

fn array() -> ShapeBuf {
    let layout = LayoutSpec::new(&[3, 2, 1, 0]).tiles(&[&[8, 128], &[2, 1]]);
    make::make_shape_with_layout(PrimitiveType::BF16, &[8, 128, 32, 64], &layout).expect("valid layout")
}

fn bench(c: &mut Criterion) {
    let array = array();
    assert_eq!(array.to_string(), "bf16[8,128,32,64]{3,2,1,0:T(8,128)(2,1)}");
    let tuple = make::make_tuple_shape(&vec![array.clone(); 100]).expect("shallow tuple");
    for (name, shape) in [("array", &array), ("tuple100", &tuple)] {
        let bytes = codec::encode(shape.proto());
        let mut group = c.benchmark_group(name);
        group.bench_function("prost_decode", |b| b.iter(|| ShapeProto::decode(black_box(&bytes[..])).unwrap()));
        group.bench_function("codec_decode", |b| {
            b.iter(|| codec::decode::<ShapeProto>(black_box(&bytes[..])).unwrap());
        });
        group.bench_function("codec_decode_lenient", |b| {
            b.iter(|| codec::decode_lenient::<ShapeProto>(black_box(&bytes[..])).unwrap());
        });
        group.bench_function("codec_decode_validate", |b| {
            b.iter(|| {
                let proto = codec::decode::<ShapeProto>(black_box(&bytes[..])).unwrap();
                Shape::try_new(&proto).unwrap();
                proto
            });
        });
        let proto = shape.proto();
        group.bench_function("validate_only", |b| b.iter(|| Shape::try_new(black_box(proto)).is_ok()));
        group.bench_function("encode", |b| b.iter(|| codec::encode(black_box(proto))));
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
