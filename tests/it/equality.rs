//! Semantic equality against the spec's vectors (`vectors.md` groups 18, 50, 59, 60) and its
//! properties.

use proptest::prelude::*;
use xla_shape::make::{self, LayoutSpec};
use xla_shape::proto::{LayoutProto, PaddingValue, ShapeProto};
use xla_shape::strategy::{ShapeConfig, shape};
use xla_shape::util::{self, LayoutEqual, ShapeEqual};
use xla_shape::{PrimitiveType as T, ShapeBuf};

fn f32_(dims: &[i64], m2m: &[i64]) -> ShapeBuf {
    make::make_shape_with_dense_layout(T::F32, dims, m2m).unwrap()
}

fn with_layout(t: T, dims: &[i64], spec: &LayoutSpec) -> ShapeBuf {
    make::make_shape_with_layout(t, dims, spec).unwrap()
}

#[test]
fn layout_equality() {
    // vectors.md 18
    let eq = |a: &LayoutSpec, b: &LayoutSpec, e: LayoutEqual| {
        e.equal(a.clone().build().unwrap().view(), b.clone().build().unwrap().view())
    };
    let base = || LayoutSpec::new(&[0, 1, 2]);
    let all = LayoutEqual::new();
    assert!(!eq(&base().tiles(&[&[42, 44]]), &base().tiles(&[&[42, 45]]), all));
    assert!(!eq(&base().element_size_in_bits(33), &base().element_size_in_bits(7), all));
    assert!(!eq(&base().memory_space(1), &base().memory_space(3), all));
    assert!(!eq(&base().split_config(0, &[2]), &base().split_config(0, &[3]), all));
    assert!(!eq(&base().split_config(0, &[2]), &base(), all));
    assert!(eq(&base().split_config(0, &[2]), &base(), all.minor_to_major_only()));
    assert!(eq(&base().tiles(&[&[42, 44]]), &base(), all.ignore_tiles()));
    assert!(eq(&base().memory_space(1), &base(), all.ignore_memory_space()));
    assert!(eq(&base().element_size_in_bits(4), &base(), all.ignore_element_size()));
    assert!(eq(&base().split_config(1, &[4]), &base(), all.ignore_split_configs()));
    assert!(!eq(&base().tail_padding_alignment_in_elements(8), &base(), all));
    assert!(eq(
        &base().tail_padding_alignment_in_elements(8),
        &base(),
        all.ignore_tail_padding_alignment_in_elements()
    ));
    assert!(!eq(&LayoutSpec::new(&[1, 0]), &LayoutSpec::new(&[0, 1]), all.minor_to_major_only()));

    // The dynamic-shape metadata prefix is not compared; tail padding 0 means 1; format 0 means DENSE.
    let plain = LayoutProto { minor_to_major: vec![0, 1], tail_padding_alignment_in_elements: 1, ..Default::default() };
    let prefixed = LayoutProto { dynamic_shape_metadata_prefix_bytes: 123, ..plain.clone() };
    let zero_tail = LayoutProto { tail_padding_alignment_in_elements: 0, ..plain.clone() };
    let dense = LayoutProto { format: xla_shape::proto::Format::Dense as i32, ..plain.clone() };
    for other in [&prefixed, &zero_tail, &dense] {
        assert!(all.equal_protos(&plain, other));
        assert!(util::layout_equal(
            xla_shape::Layout::try_new(&plain).unwrap(),
            xla_shape::Layout::try_new(other).unwrap()
        ));
    }
    assert_ne!(plain, prefixed, "raw proto equality does compare the prefix");
}

#[test]
fn layout_equality_of_sparse_only_fields() {
    // Raw layouts (they fail validation as sparse): index/pointer types, physical shape, level types.
    let plain = LayoutProto { minor_to_major: vec![0], ..Default::default() };
    let index = LayoutProto { index_primitive_type: T::U32.as_i32(), ..plain.clone() };
    let pointer = LayoutProto { pointer_primitive_type: T::U16.as_i32(), ..plain.clone() };
    let physical =
        LayoutProto { physical_shape: Some(Box::new(f32_(&[10, 20], &[1, 0]).into_proto())), ..plain.clone() };
    let compressed = LayoutProto { dim_level_types: vec![1], ..plain.clone() };
    let all = LayoutEqual::new();
    assert!(!all.equal_protos(&plain, &index) && all.ignore_index_primitive_type().equal_protos(&plain, &index));
    assert!(!all.equal_protos(&plain, &pointer) && all.ignore_pointer_primitive_type().equal_protos(&plain, &pointer));
    assert!(!all.equal_protos(&plain, &physical) && all.ignore_physical_shape().equal_protos(&plain, &physical));
    assert!(all.equal_protos(&physical, &physical.clone()));
    assert!(!all.equal_protos(&plain, &compressed));
    // All-dense lists equal their absence.
    let all_dense = LayoutProto { dim_level_types: vec![0], dim_unique: vec![true], ..plain.clone() };
    assert!(all.equal_protos(&plain, &all_dense));
}

#[test]
fn legacy_equality() {
    // vectors.md 50 (legacy 2018): these shapes fail validation (10 < 20), so they are compared raw.
    let legacy = |padded: Vec<i64>, value: PaddingValue| ShapeProto {
        element_type: T::F32.as_i32(),
        dimensions: vec![20, 30],
        layout: Some(Box::new(LayoutProto {
            minor_to_major: vec![1, 0],
            padded_dimensions: padded,
            padding_value: value as i32,
            format: xla_shape::proto::Format::Dense as i32,
            ..Default::default()
        })),
        ..Default::default()
    };
    let e = ShapeEqual::new();
    let a = legacy(vec![10], PaddingValue::ZeroPad);
    assert!(e.equal_protos(&a, &a.clone()));
    assert!(!e.equal_protos(&a, &legacy(vec![11], PaddingValue::ZeroPad)));
    assert!(!e.equal_protos(&a, &legacy(vec![10], PaddingValue::LowestPad)));
    let (la, lb) = (a.layout.as_deref().unwrap(), legacy(vec![11], PaddingValue::LowestPad).layout.unwrap());
    assert!(!LayoutEqual::new().equal_protos(la, &lb));
    assert!(LayoutEqual::new().ignore_legacy_padding().equal_protos(la, &lb));
    assert!(e.ignore_layout().equal_protos(&a, &legacy(vec![11], PaddingValue::LowestPad)));

    // The same comparison on valid padded shapes.
    let padded = |p: &[i64], v: PaddingValue| {
        let layout = make::make_padded_layout(&[1, 0], p, v).unwrap().into_proto();
        ShapeBuf::try_from_proto(ShapeProto { layout: Some(Box::new(layout)), ..f32_(&[20, 30], &[1, 0]).into_proto() })
            .unwrap()
    };
    let x = padded(&[20, 30], PaddingValue::ZeroPad);
    assert!(!util::equal(x.view(), padded(&[21, 30], PaddingValue::ZeroPad).view()));
    assert!(!util::equal(x.view(), padded(&[20, 30], PaddingValue::LowestPad).view()));
    assert!(!util::equal(x.view(), f32_(&[20, 30], &[1, 0]).view()));
}

#[test]
fn compatible_and_equal() {
    // vectors.md 59
    let a = f32_(&[3, 2], &[0, 1]);
    let b = f32_(&[3, 2], &[1, 0]);
    assert!(util::compatible(a.view(), b.view()));
    assert!(!util::equal(a.view(), b.view()));
    let token = make::make_token_shape();
    let scalar = make::make_scalar_shape(T::F32).unwrap();
    assert!(util::compatible(token.view(), token.view()));
    assert!(!util::compatible(token.view(), scalar.view()));
    assert!(!util::compatible(scalar.view(), token.view()));
    assert!(!util::compatible(a.view(), make::make_shape(T::PRED, &[3, 2]).unwrap().view()));
    let dynamic_first = make::make_shape_dynamic(T::F32, &[4, 3], &[true, false]).unwrap();
    let all_static = make::make_shape_dynamic(T::F32, &[4, 3], &[false, false]).unwrap();
    assert!(util::equal(dynamic_first.view(), dynamic_first.view()));
    assert!(!util::equal(dynamic_first.view(), all_static.view()));
    assert!(util::compatible(dynamic_first.view(), all_static.view()));
    let unbounded = make::make_shape(T::F32, &[i64::MIN]).unwrap();
    let bounded = make::make_shape_dynamic(T::F32, &[2], &[true]).unwrap();
    assert!(!util::equal(unbounded.view(), bounded.view()));
    assert!(util::compatible(unbounded.view(), bounded.view()));
    // An empty dynamic-flag list equals all false.
    let mut p = all_static.clone().into_proto();
    p.is_dynamic_dimension.clear();
    assert!(util::equal(ShapeBuf::try_from_proto(p).unwrap().view(), all_static.view()));
    // A shape with a layout never equals one without; compatible ignores it.
    let bare = util::clear_layout(b.view()).unwrap();
    assert!(!util::equal(b.view(), bare.view()) && !util::equal(bare.view(), b.view()));
    assert!(util::compatible(b.view(), bare.view()));
}

#[test]
fn fp_precision_and_element_type() {
    // vectors.md 60
    let bf16 = make::make_shape(T::BF16, &[3, 2]).unwrap();
    assert!(util::compatible_ignoring_fp_precision(bf16.view(), make::make_shape(T::F32, &[3, 2]).unwrap().view()));
    assert!(!util::compatible_ignoring_fp_precision(bf16.view(), make::make_shape(T::F32, &[2, 2]).unwrap().view()));
    assert!(!util::compatible_ignoring_fp_precision(bf16.view(), make::make_shape(T::S16, &[3, 2]).unwrap().view()));
    let f32 = f32_(&[4, 3], &[0, 1]);
    let f16 = make::make_shape_with_dense_layout(T::F16, &[4, 3], &[0, 1]).unwrap();
    let pred = make::make_shape_with_dense_layout(T::PRED, &[4, 3], &[0, 1]).unwrap();
    assert!(util::equal_ignoring_fp_precision(f32.view(), f16.view()));
    assert!(!util::equal_ignoring_fp_precision(f32.view(), pred.view()));
    assert!(util::equal_ignoring_element_type(f32.view(), pred.view()));
    assert!(util::compatible_ignoring_element_type(f32.view(), make::make_shape(T::S8, &[4, 3]).unwrap().view()));
    assert!(!util::same_element_type(f32.view(), f16.view()));
    assert!(util::same_element_type_ignoring_fp_precision(f32.view(), f16.view()));
    assert!(!util::same_element_type_ignoring_fp_precision(f32.view(), pred.view()));
}

fn arr(s: &ShapeBuf) -> xla_shape::ArrayShape<'_> {
    s.as_array().unwrap()
}

#[test]
fn dimensions_and_rank() {
    let a = make::make_shape(T::F32, &[2, 3]).unwrap();
    let b = make::make_shape(T::S8, &[2, i64::MIN]).unwrap();
    let c = make::make_shape(T::F32, &[2, 4]).unwrap();
    assert!(util::same_dimensions(arr(&a), arr(&b)));
    assert!(!util::same_dimensions(arr(&a), arr(&c)));
    assert!(util::same_rank(arr(&a), arr(&c)));
    assert!(!util::same_rank(arr(&a), arr(&make::make_shape(T::F32, &[2]).unwrap())));
    // IgnoreDimensions compares ranks only.
    assert!(ShapeEqual::new().ignore_dimensions().equal(a.view(), c.view()));
    assert!(!ShapeEqual::new().ignore_dimensions().equal(a.view(), make::make_shape(T::F32, &[6]).unwrap().view()));
}

#[test]
fn shape_level_layout_options() {
    let spec = LayoutSpec::new(&[1, 0])
        .tiles(&[&[8, 128]])
        .element_size_in_bits(4)
        .memory_space(1)
        .tail_padding_alignment_in_elements(4)
        .split_config(0, &[2]);
    let rich = with_layout(T::S4, &[8, 128], &spec);
    let plain = with_layout(T::S4, &[8, 128], &LayoutSpec::new(&[1, 0]));
    assert!(!util::equal(rich.view(), plain.view()));
    let e = ShapeEqual::new()
        .ignore_tiles_in_layout()
        .ignore_element_size_in_layout()
        .ignore_memory_space_in_layout()
        .ignore_tail_padding_alignment_in_elements_in_layout();
    assert!(!e.equal(rich.view(), plain.view()));
    assert!(e.ignore_split_config_in_layout().equal(rich.view(), plain.view()));
    assert!(ShapeEqual::new().minor_to_major_only_in_layout().equal(rich.view(), plain.view()));
    assert!(ShapeEqual::new().layout_equal(LayoutEqual::new().minor_to_major_only()).equal(rich.view(), plain.view()));
    let transposed = with_layout(T::S4, &[8, 128], &LayoutSpec::new(&[0, 1]));
    assert!(!ShapeEqual::new().minor_to_major_only_in_layout().equal(rich.view(), transposed.view()));
}

#[test]
fn tuples_buffers_tokens() {
    let a = f32_(&[2], &[0]);
    let t1 = make::make_tuple_shape(&[a.clone(), make::make_token_shape()]).unwrap();
    let t2 = make::make_tuple_shape(&[a.clone(), make::make_opaque_shape()]).unwrap();
    assert!(util::equal(t1.view(), t1.view()));
    assert!(!util::equal(t1.view(), t2.view()));
    assert!(!util::equal(t1.view(), make::make_nil().view()));
    assert!(!util::equal(a.view(), t1.view()) && !util::equal(t1.view(), a.view()));
    assert!(util::equal(make::make_nil().view(), make::make_nil().view()));

    let b = make::make_buffer_shape(&a).unwrap();
    assert!(util::equal(b.view(), b.view()));
    assert!(!util::equal(b.view(), a.view()) && !util::equal(a.view(), b.view()));
    assert!(ShapeEqual::new().ignore_buffer().equal(b.view(), a.view()));
    // XLA compares a buffer's array exactly, whatever else is ignored.
    let b2 = make::make_buffer_shape(&f32_(&[2], &[0])).unwrap();
    let bare = make::make_buffer_shape(&util::clear_layout(a.view()).unwrap()).unwrap();
    assert!(util::equal(b.view(), b2.view()));
    assert!(!util::compatible(b.view(), bare.view()));
    // Malformed raw protos compare without panicking.
    let broken = ShapeProto { element_type: T::BUFFER.as_i32(), ..Default::default() };
    assert!(!ShapeEqual::new().equal_protos(&broken, &broken.clone()));
    let unknown = ShapeProto { element_type: 999, ..Default::default() };
    assert!(ShapeEqual::new().equal_protos(&unknown, &unknown.clone()));
}

#[test]
fn raw_depth_limit() {
    let mut deep = f32_(&[1], &[0]).into_proto();
    for _ in 0..xla_shape::MAX_DEPTH {
        deep = ShapeProto { element_type: T::TUPLE.as_i32(), tuple_shapes: vec![deep], ..Default::default() };
    }
    // One level beyond the limit compares unequal instead of recursing without bound.
    assert!(!ShapeEqual::new().equal_protos(&deep, &deep.clone()));
    let shallow = deep.tuple_shapes[0].clone();
    assert!(ShapeEqual::new().equal_protos(&shallow, &shallow.clone()));
}

proptest! {
    #[test]
    fn equality_laws(a in shape(ShapeConfig::everything()), b in shape(ShapeConfig::everything())) {
        let options = [
            ShapeEqual::new(),
            ShapeEqual::new().ignore_layout(),
            ShapeEqual::new().ignore_dynamic_dimension(),
            ShapeEqual::new().ignore_element_type().ignore_buffer(),
            ShapeEqual::new().ignore_fp_precision().minor_to_major_only_in_layout(),
            ShapeEqual::new().ignore_dimensions(),
        ];
        for e in options {
            prop_assert!(e.equal(a.view(), a.view()), "{:?} not reflexive on {}", e, a);
            prop_assert_eq!(e.equal(a.view(), b.view()), e.equal(b.view(), a.view()));
        }
        if util::equal(a.view(), b.view()) {
            prop_assert!(util::compatible(a.view(), b.view()));
            prop_assert!(util::equal_ignoring_element_type(a.view(), b.view()));
            prop_assert!(util::equal_ignoring_fp_precision(a.view(), b.view()));
            prop_assert!(util::layouts_in_shapes_equal(a.view(), b.view()));
        }
        if util::compatible(a.view(), b.view()) {
            prop_assert!(util::compatible_ignoring_element_type(a.view(), b.view()));
            prop_assert!(util::compatible_ignoring_fp_precision(a.view(), b.view()));
        }
        // Equality agrees with proto equality on shapes in XLA form, up to the uncompared prefix.
        prop_assert_eq!(util::equal(a.view(), b.view()), a == b);
    }

    #[test]
    // No buffers here: XLA compares a buffer's array exactly even under `compatible`.
    fn compatible_after_layout_edits(a in shape(ShapeConfig { non_arrays: false, ..ShapeConfig::everything() })) {
        let v = a.view();
        for edited in [util::clear_layout(v), util::with_default_layout(v), util::device_shape_to_host_shape(v)] {
            let edited = edited.unwrap();
            prop_assert!(util::compatible(v, edited.view()), "{} vs {}", a, edited);
        }
    }
}
