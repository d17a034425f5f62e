//! `ShapeUtil` / `LayoutUtil` operations against the spec's vectors (`vectors.md` groups 43, 56–58,
//! 64–71, 74–76, S3, S4, S6, S7) and their properties.

use proptest::prelude::*;
use xla_shape::make::{self, LayoutSpec};
use xla_shape::proto::{LayoutProto, PaddingValue, ShapeProto};
use xla_shape::strategy::{ShapeConfig, array_shape, shape};
use xla_shape::{Dim, Error, Layout, PrimitiveType as T, Shape, ShapeBuf, util};

fn dense(t: T, dims: &[i64], m2m: &[i64]) -> ShapeBuf {
    make::make_shape_with_dense_layout(t, dims, m2m).unwrap()
}

fn f32_(dims: &[i64], m2m: &[i64]) -> ShapeBuf {
    dense(T::F32, dims, m2m)
}

fn layout(m2m: &[i64]) -> xla_shape::LayoutBuf {
    LayoutSpec::new(m2m).build().unwrap()
}

/// Every built shape is in XLA form and validates again from its proto.
fn assert_xla_form(s: &ShapeBuf) {
    fn walk(p: &ShapeProto) {
        if !p.dimensions.is_empty() {
            assert_eq!(p.is_dynamic_dimension.len(), p.dimensions.len());
        }
        if let Some(l) = &p.layout {
            assert!(l.tail_padding_alignment_in_elements >= 1);
        }
        p.tuple_shapes.iter().for_each(walk);
    }
    assert!(ShapeBuf::try_from_proto_optional_layout(s.proto().clone()).is_ok(), "{s}");
    walk(s.proto());
}

// ---- §6.1 construction ----

#[test]
fn descending_layout_and_same_physical_layout() {
    // vectors.md 69
    let s = f32_(&[128, 24, 4, 48, 48], &[2, 4, 3, 1, 0]);
    let d = util::make_shape_with_descending_layout_and_same_physical_layout(s.view()).unwrap();
    assert_eq!(d.to_string(), "f32[128,24,48,48,4]{4,3,2,1,0}");
    assert_xla_form(&d);

    // Tiles, element size, tail padding and memory space carry over; dynamic flags follow.
    let spec = LayoutSpec::new(&[0, 1]).tiles(&[&[2, 2]]).element_size_in_bits(4).tail_padding_alignment_in_elements(8);
    let mut proto = make::make_shape_with_layout(T::S4, &[4, 6], &spec.memory_space(1)).unwrap().into_proto();
    proto.is_dynamic_dimension = vec![true, false];
    let dynamic = ShapeBuf::try_from_proto(proto).unwrap();
    let d = util::make_shape_with_descending_layout_and_same_physical_layout(dynamic.view()).unwrap();
    assert_eq!(d.to_string(), "s4[6,<=4]{1,0:T(2,2)L(8)E(4)S(1)}");

    // A buffer stays a buffer; no layout means the default one; tuples are rejected.
    let buffer = make::make_buffer_shape(&f32_(&[2, 3], &[0, 1])).unwrap();
    let d = util::make_shape_with_descending_layout_and_same_physical_layout(buffer.view()).unwrap();
    assert_eq!(d.to_string(), "b(f32[3,2]{1,0})");
    let bare = util::clear_layout(f32_(&[2, 3], &[0, 1]).view()).unwrap();
    let d = util::make_shape_with_descending_layout_and_same_physical_layout(bare.view()).unwrap();
    assert_eq!(d.to_string(), "f32[2,3]{1,0}");
    assert!(matches!(
        util::make_shape_with_descending_layout_and_same_physical_layout(make::make_nil().view()),
        Err(Error::NotAnArray { .. })
    ));

    // Legacy padding follows its dimensions (crate rule).
    let padded = ShapeBuf::try_from_proto(ShapeProto {
        layout: Some(Box::new(make::make_padded_layout(&[0, 1], &[3, 5], PaddingValue::ZeroPad).unwrap().into_proto())),
        ..f32_(&[2, 3], &[0, 1]).into_proto()
    })
    .unwrap();
    let d = util::make_shape_with_descending_layout_and_same_physical_layout(padded.view()).unwrap();
    let l = d.as_array().unwrap().layout().unwrap();
    assert_eq!(l.padded_dimensions(), Some(&[5, 3][..]));
    assert_eq!(l.padding_value(), PaddingValue::ZeroPad as i32);
}

#[test]
fn default_layout() {
    // vectors.md 71 / S6: the default layout is major-to-minor.
    for (dims, text) in [
        (&[2, 3][..], "f32[2,3]{1,0}"),
        (&[2, 3, 4], "f32[2,3,4]{2,1,0}"),
        (&[10, 20, 30, 15, 25], "f32[10,20,30,15,25]{4,3,2,1,0}"),
    ] {
        let bare = util::clear_layout(make::make_shape(T::F32, dims).unwrap().view()).unwrap();
        assert_eq!(util::with_default_layout(bare.view()).unwrap().to_string(), text);
    }
    // Only m2m is overwritten; recursion into tuples; token untouched.
    let spec = LayoutSpec::new(&[0, 1]).tiles(&[&[8, 128]]).memory_space(5);
    let tiled = make::make_shape_with_layout(T::F32, &[2, 3], &spec).unwrap();
    let mut t = make::make_tuple_shape(&[tiled, make::make_token_shape(), f32_(&[4], &[0])]).unwrap();
    util::set_to_default_layout(&mut t).unwrap();
    assert_eq!(t.to_string(), "(f32[2,3]{1,0:T(8,128)S(5)}, token[], f32[4]{0})");
    assert_xla_form(&t);
}

#[test]
fn clear_layout_and_tiles() {
    let spec = LayoutSpec::new(&[0, 1]).tiles(&[&[8, 128]]).element_size_in_bits(16);
    let tiled = make::make_shape_with_layout(T::F32, &[2, 3], &spec).unwrap();
    let b = make::make_buffer_shape(&tiled).unwrap();
    let t = make::make_tuple_shape(&[tiled, b, make::make_opaque_shape()]).unwrap();
    let cleared = util::clear_tiles(t.view()).unwrap();
    assert_eq!(cleared.to_string(), "(f32[2,3]{0,1:E(16)}, b(f32[2,3]{0,1:E(16)}), opaque[])");
    let none = util::clear_layout(t.view()).unwrap();
    assert_eq!(none.to_string(), "(f32[2,3], b(f32[2,3]), opaque[])");
    assert!(util::has_any_layout(none.view())); // the opaque leaf counts
    assert_xla_form(&none);
}

#[test]
fn change_element_type() {
    // vectors.md 56
    let s4 = make::make_shape_with_layout(T::S4, &[64], &LayoutSpec::new(&[0]).element_size_in_bits(4)).unwrap();
    let bits = |s: &ShapeBuf| s.as_array().unwrap().layout().unwrap().element_size_in_bits();
    assert_eq!(bits(&util::change_element_type(s4.view(), T::PRED).unwrap()), 0);
    assert_eq!(bits(&util::change_element_type(s4.view(), T::U8).unwrap()), 0);
    assert_eq!(bits(&util::change_element_type(s4.view(), T::U4).unwrap()), 4);
    let t = make::make_tuple_shape(&[s4.clone(), make::make_token_shape()]).unwrap();
    assert_eq!(util::change_element_type(t.view(), T::BF16).unwrap().to_string(), "(bf16[64]{0}, token[])");
    assert!(util::change_element_type(s4.view(), T::TUPLE).is_err());
    // A size that overflows in the new type is an error, not a wrap.
    let big = make::make_shape(T::S8, &[1 << 62]).unwrap();
    assert!(matches!(util::change_element_type(big.view(), T::F32), Err(Error::Overflow { .. })));
}

#[test]
fn device_to_host() {
    // vectors.md 57
    let s4 = make::make_shape_with_layout(T::S4, &[64], &LayoutSpec::new(&[0]).element_size_in_bits(4)).unwrap();
    assert!(!util::device_shape_is_host_shape(s4.view()));
    let host = util::device_shape_to_host_shape(s4.view()).unwrap();
    assert!(util::device_shape_is_host_shape(host.view()));
    let spec = LayoutSpec::new(&[1, 0]).tiles(&[&[8, 128]]).memory_space(1).tail_padding_alignment_in_elements(4);
    let mut p = make::make_shape_with_layout(T::F32, &[8, 128], &spec).unwrap().into_proto();
    p.layout.as_mut().unwrap().dynamic_shape_metadata_prefix_bytes = 16;
    let device = make::make_tuple_shape(&[ShapeBuf::try_from_proto(p).unwrap()]).unwrap();
    assert!(!util::device_shape_is_host_shape(device.view()));
    let host = util::device_shape_to_host_shape(device.view()).unwrap();
    assert_eq!(host.to_string(), "(f32[8,128]{1,0})");
    assert!(util::device_shape_is_host_shape(host.view()));
}

// ---- §6.2 dimensions ----

#[test]
fn get_dimension_python_style() {
    // vectors.md 58 and S3
    let s = f32_(&[2, 3], &[1, 0]);
    let a = s.as_array().unwrap();
    assert_eq!(util::get_dimension(a, -1).unwrap(), 3);
    assert_eq!(util::get_dimension(a, -2).unwrap(), 2);
    assert!(matches!(util::get_dimension(a, -3), Err(Error::DimensionOutOfRange { dimension: -3, rank: 2 })));
    assert_eq!(
        util::get_dimension(make::make_shape(T::F32, &[1, 2, 3, 4]).unwrap().as_array().unwrap(), -1).unwrap(),
        4
    );
    let s = make::make_shape(T::F32, &[5, 6, 7]).unwrap();
    let a = s.as_array().unwrap();
    assert_eq!([-1, -2, -3].map(|d| util::get_dimension(a, d).unwrap()), [7, 6, 5]);
    assert!(util::get_dimension(a, -4).is_err());
    assert!(util::get_dimension(a, 3).is_err());
    assert_eq!(util::get_dimension_number(a, -3).unwrap(), Dim(0));
}

#[test]
fn dimension_letters() {
    // S4
    let letters = |n: usize| (0..n).map(|d| util::dimension_letter(n, i64::try_from(d).unwrap())).collect::<Vec<_>>();
    assert_eq!(letters(2), [Some('y'), Some('x')]);
    assert_eq!(letters(3), [Some('z'), Some('y'), Some('x')]);
    assert_eq!(letters(4), [Some('p'), Some('z'), Some('y'), Some('x')]);
    assert_eq!(letters(1), [None]);
    assert_eq!(letters(5), [None; 5]);
    assert_eq!(util::dimension_letter(4, -4), Some('p'));
    assert_eq!(util::dimension_letter(2, 2), None);
}

#[test]
fn rank_and_true_rank() {
    // S7, vectors.md 70
    let true_rank =
        |dims: &[i64]| util::true_num_dimensions(make::make_shape(T::F32, dims).unwrap().as_array().unwrap());
    assert_eq!(true_rank(&[2, 1, 1]), 1);
    // XLA counts dimensions != 1, so a zero-sized dimension counts (the seed wording would say 1).
    assert_eq!(true_rank(&[3, 0, 1]), 2);
    assert_eq!(util::rank(make::make_shape(T::F32, &[3, 0, 1]).unwrap().as_array().unwrap()), 3);
    let degenerate =
        |dims: &[i64]| util::has_degenerate_dimensions(make::make_shape(T::F32, dims).unwrap().as_array().unwrap());
    assert!(degenerate(&[3, 1, 2]));
    assert!(degenerate(&[3, 1, 1]));
    assert!(!degenerate(&[3, 3, 5]));
    assert!(!degenerate(&[3, 0, 5]));
}

#[test]
fn effectively_most_major() {
    // vectors.md 70
    let s = f32_(&[1, 1, 16, 1, 279], &[4, 0, 1, 2, 3]);
    assert!(util::is_effectively_most_major_dimension(s.as_array().unwrap(), Dim(2)));
    let s = f32_(&[1, 1, 16, 1, 279], &[0, 1, 2, 3, 4]);
    assert!(!util::is_effectively_most_major_dimension(s.as_array().unwrap(), Dim(2)));
    assert!(!util::is_effectively_most_major_dimension(s.as_array().unwrap(), Dim(9)));
}

#[test]
fn delete_dimensions() {
    // vectors.md 68
    let s = f32_(&[5, 3, 2, 7, 9], &[2, 0, 1, 4, 3]);
    for dims in [[1, 2, 3], [3, 1, 2]] {
        let r = util::delete_dimensions(&dims.map(Dim), s.as_array().unwrap()).unwrap();
        assert_eq!(r.to_string(), "f32[5,9]{0,1}");
    }
    let r = util::delete_dimension(Dim(1), f32_(&[5, 3, 2], &[2, 0, 1]).as_array().unwrap()).unwrap();
    assert_eq!(r.to_string(), "f32[5,2]{1,0}");
    let r = util::drop_degenerate_dimensions(f32_(&[1, 3, 1, 4], &[0, 1, 2, 3]).as_array().unwrap()).unwrap();
    assert_eq!(r.to_string(), "f32[3,4]{0,1}");
    assert!(matches!(
        util::delete_dimensions(&[Dim(1), Dim(1)], s.as_array().unwrap()),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(util::delete_dimension(Dim(5), s.as_array().unwrap()), Err(Error::DimensionOutOfRange { .. })));
    // Dynamic flags and other layout fields stay with the remaining dimensions.
    let d = make::make_shape_dynamic(T::F32, &[2, 3, 4], &[false, true, false]).unwrap();
    assert_eq!(util::delete_dimension(Dim(0), d.as_array().unwrap()).unwrap().to_string(), "f32[<=3,4]{1,0}");
}

#[test]
fn append_prepend_insert() {
    // vectors.md 66
    let s = f32_(&[10, 20, 30], &[0, 2, 1]);
    let a = s.as_array().unwrap();
    assert_eq!(util::prepend_major_dimension(40, a).unwrap().to_string(), "f32[40,10,20,30]{1,3,2,0}");
    assert_eq!(util::append_minor_dimension(40, a).unwrap().to_string(), "f32[10,20,30,40]{3,0,2,1}");
    assert_eq!(util::append_major_dimension(40, a).unwrap().to_string(), "f32[10,20,30,40]{0,2,1,3}");
    assert_eq!(util::insert_dimension_at_index(a, 1, 40).unwrap().to_string(), "f32[10,40,20,30]{0,3,2,1}");
    assert_eq!(
        util::insert_dimensions_at_index(a, 1, &[40, 50]).unwrap().to_string(),
        "f32[10,40,50,20,30]{0,4,3,2,1}"
    );
    let descending = f32_(&[10, 20, 30], &[2, 1, 0]);
    assert_eq!(
        util::insert_dimensions_at_index(descending.as_array().unwrap(), 3, &[40, 50]).unwrap().to_string(),
        "f32[10,20,30,40,50]{4,3,2,1,0}"
    );
    assert!(matches!(util::insert_dimension_at_index(a, 4, 1), Err(Error::DimensionOutOfRange { .. })));
    assert!(util::append_major_dimension(-1, a).is_err());

    // XLA quirk kept: insert and prepend build a fresh shape (static, only m2m in the layout);
    // append edits in place and keeps everything.
    let spec = LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]]).memory_space(1);
    let mut proto = make::make_shape_with_layout(T::F32, &[4, 6], &spec).unwrap().into_proto();
    proto.is_dynamic_dimension = vec![true, false];
    let dynamic = ShapeBuf::try_from_proto(proto).unwrap();
    let a = dynamic.as_array().unwrap();
    assert_eq!(util::insert_dimension_at_index(a, 0, 3).unwrap().to_string(), "f32[3,4,6]{2,1,0}");
    assert_eq!(util::prepend_major_dimension(3, a).unwrap().to_string(), "f32[3,4,6]{2,1,0}");
    assert_eq!(util::append_major_dimension(3, a).unwrap().to_string(), "f32[<=4,6,3]{1,0,2:T(2,2)S(1)}");
    // An unbounded dimension stays `?` in the fresh shape (XLA would crash).
    let u = make::make_shape_dynamic(T::F32, &[i64::MIN, 3], &[true, false]).unwrap();
    assert_eq!(util::insert_dimension_at_index(u.as_array().unwrap(), 1, 2).unwrap().to_string(), "f32[?,2,3]{2,1,0}");
}

#[test]
fn permute() {
    // vectors.md 64
    let s = f32_(&[10, 100, 1000], &[2, 1, 0]);
    let a = s.as_array().unwrap();
    assert_eq!(util::permute_dimensions(&[1, 2, 0], a).unwrap().to_string(), "f32[100,1000,10]{1,0,2}");
    assert_eq!(util::permute_dimensions_ignoring_layout(&[1, 2, 0], a).unwrap().to_string(), "f32[100,1000,10]{2,1,0}");
    for bad in [&[0, 1][..], &[0, 1, 1], &[0, 1, 3]] {
        assert!(matches!(util::permute_dimensions(bad, a), Err(Error::InvalidArgument(_))));
    }
    // Tiles stay; dynamic flags move with their dimensions.
    let spec = LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]]);
    let mut p = make::make_shape_with_layout(T::F32, &[4, 6], &spec).unwrap().into_proto();
    p.is_dynamic_dimension = vec![true, false];
    let s = ShapeBuf::try_from_proto(p).unwrap();
    assert_eq!(util::permute_dimensions(&[1, 0], s.as_array().unwrap()).unwrap().to_string(), "f32[6,<=4]{0,1:T(2,2)}");
}

#[test]
fn reorder() {
    // vectors.md 65
    let s = f32_(&[16, 3, 12, 17], &[1, 2, 0, 3]);
    let r = util::reorder_logical_dimensions(s.as_array().unwrap(), &[0, 2, 1, 3]).unwrap();
    assert_eq!(r.to_string(), "f32[16,12,3,17]{2,1,0,3}");
    // Each m2m entry d becomes perm[d] (the recorded XLA behaviour).
    let s = f32_(&[2, 3, 4], &[2, 1, 0]);
    let r = util::reorder_logical_dimensions(s.as_array().unwrap(), &[1, 2, 0]).unwrap();
    assert_eq!(r.to_string(), "f32[3,4,2]{0,2,1}");
}

#[test]
fn legacy_padding_follows_dimensions() {
    // linearization.md §6 crate rule: permute/insert/delete apply to padded_dimensions.
    let layout = make::make_padded_layout(&[0, 1, 2], &[3, 5, 7], PaddingValue::OnePad).unwrap();
    let p = ShapeProto { layout: Some(Box::new(layout.into_proto())), ..f32_(&[2, 3, 4], &[0, 1, 2]).into_proto() };
    let s = ShapeBuf::try_from_proto(p).unwrap();
    let a = s.as_array().unwrap();
    let padded = |r: ShapeBuf| {
        assert_xla_form(&r);
        let l = r.as_array().unwrap().layout().unwrap();
        assert_eq!(l.padding_value(), PaddingValue::OnePad as i32);
        l.padded_dimensions().unwrap().to_vec()
    };
    assert_eq!(padded(util::permute_dimensions(&[2, 0, 1], a).unwrap()), [7, 3, 5]);
    assert_eq!(padded(util::permute_dimensions_ignoring_layout(&[2, 0, 1], a).unwrap()), [7, 3, 5]);
    assert_eq!(padded(util::reorder_logical_dimensions(a, &[2, 0, 1]).unwrap()), [7, 3, 5]);
    assert_eq!(padded(util::delete_dimension(Dim(1), a).unwrap()), [3, 7]);
    assert_eq!(padded(util::insert_dimensions_at_index(a, 1, &[8, 9]).unwrap()), [3, 8, 9, 5, 7]);
    assert_eq!(padded(util::prepend_major_dimension(6, a).unwrap()), [6, 3, 5, 7]);
    assert_eq!(padded(util::append_minor_dimension(6, a).unwrap()), [3, 5, 7, 6]);
    assert_eq!(padded(util::make_shape_with_descending_layout_and_same_physical_layout(s.view()).unwrap()), [7, 5, 3]);
}

// ---- §6.3 layout queries and edits ----

#[test]
fn minor_major_and_monotonic() {
    // vectors.md 76
    let l = layout(&[2, 0, 1]);
    let v = l.view();
    assert_eq!(util::minor(v, 0).unwrap(), Dim(2));
    assert_eq!(util::major(v, 0).unwrap(), Dim(1));
    assert_eq!(util::major(v, 2).unwrap(), Dim(2));
    assert!(util::major(v, 3).is_err());
    assert!(util::minor(v, 3).is_err());
    assert!(util::major(layout(&[]).view(), 0).is_err());
    assert_eq!(util::make_logical_to_physical(v), [1, 0, 2]);
    for (m2m, expected) in [(&[1, 0][..], true), (&[0, 1], false), (&[], true), (&[0], true), (&[2, 0, 1], false)] {
        assert_eq!(util::is_monotonic_with_dim0_major(layout(m2m).view()), expected, "{m2m:?}");
    }
    // S6: {0,1} is "dim 0 is minor", {1,0} is "dim 0 is major".
    assert!(util::is_monotonic_with_dim0_minor(layout(&[0, 1]).view()));
    assert!(!util::is_monotonic_with_dim0_minor(layout(&[1, 0]).view()));
    assert!(util::is_monotonic_with_dim0_major(layout(&[1, 0]).view()));
    let bare = util::clear_layout(make::make_shape(T::F32, &[2, 3]).unwrap().view()).unwrap();
    assert!(util::has_descending_layout(bare.as_array().unwrap()));
    assert!(!util::has_ascending_layout(bare.as_array().unwrap()));
    assert!(util::has_ascending_layout(f32_(&[2, 3], &[0, 1]).as_array().unwrap()));
}

#[test]
fn move_dims() {
    // vectors.md 67
    assert_eq!(util::move_dim_to_major(layout(&[2, 1, 0]).view(), Dim(1)).unwrap().to_string(), "{2,0,1}");
    assert_eq!(util::move_dim_to_major(layout(&[0, 2, 1]).view(), Dim(0)).unwrap().to_string(), "{2,1,0}");
    assert_eq!(util::move_dim_to_minor(layout(&[2, 0, 3, 1]).view(), Dim(3)).unwrap().to_string(), "{3,2,0,1}");
    assert!(util::move_dim_to_major(layout(&[1, 0]).view(), Dim(2)).is_err());
    // The layout versions keep the other fields.
    let tiled = LayoutSpec::new(&[1, 0]).tiles(&[&[8]]).build().unwrap();
    assert_eq!(util::move_dim_to_minor(tiled.view(), Dim(0)).unwrap().to_string(), "{0,1:T(8)}");

    let s = f32_(&[10, 10, 10], &[2, 1, 0]);
    assert_eq!(util::move_dim_to_major_in_shape(s.view(), Dim(1)).unwrap().to_string(), "f32[10,10,10]{2,0,1}");
    let s = f32_(&[10, 10, 10], &[0, 2, 1]);
    assert_eq!(util::move_dim_to_major_in_shape(s.view(), Dim(0)).unwrap().to_string(), "f32[10,10,10]{2,1,0}");
    // Shape version: default layout when there is none, tuple leaves, fresh layout (XLA).
    let bare = util::clear_layout(make::make_shape(T::F32, &[2, 3]).unwrap().view()).unwrap();
    let spec = LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]]);
    let tiled = make::make_shape_with_layout(T::F32, &[4, 6], &spec).unwrap();
    let t = make::make_tuple_shape(&[bare, tiled, make::make_token_shape()]).unwrap();
    let moved = util::move_dim_to_minor_in_shape(t.view(), Dim(0)).unwrap();
    assert_eq!(moved.to_string(), "(f32[2,3]{0,1}, f32[4,6]{0,1}, token[])");
    assert!(util::move_dim_to_major_in_shape(t.view(), Dim(2)).is_err());
}

#[test]
fn consecutive_dimensions() {
    let l = layout(&[3, 1, 0, 2]);
    assert!(util::are_dimensions_consecutive(l.view(), &[Dim(1), Dim(0)]).unwrap());
    assert!(util::are_dimensions_consecutive(l.view(), &[Dim(2), Dim(1), Dim(0)]).unwrap());
    assert!(!util::are_dimensions_consecutive(l.view(), &[Dim(3), Dim(0)]).unwrap());
    assert!(util::are_dimensions_consecutive(l.view(), &[]).unwrap());
    assert!(util::are_dimensions_consecutive(l.view(), &[Dim(4)]).is_err());
}

#[test]
fn layout_presence() {
    let with = f32_(&[2], &[0]);
    let without = util::clear_layout(with.view()).unwrap();
    let nil = make::make_nil();
    let token = make::make_token_shape();
    let mixed = make::make_tuple_shape(&[with.clone(), without.clone()]).unwrap();
    assert!(util::has_layout(with.view()) && util::has_any_layout(with.view()));
    assert!(!util::has_layout(without.view()) && !util::has_any_layout(without.view()));
    assert!(util::has_layout(nil.view()) && !util::has_any_layout(nil.view()));
    assert!(util::has_layout(token.view()) && util::has_any_layout(token.view()));
    assert!(!util::has_layout(mixed.view()) && util::has_any_layout(mixed.view()));
    let buffer = make::make_buffer_shape(&without).unwrap();
    assert!(!util::has_layout(buffer.view()));
}

#[test]
fn custom_element_size() {
    // vectors.md 74 (E(32) on f32 is built from a raw proto: make normalizes it to 0, as XLA's
    // MakeShapeWithDenseLayout does).
    let with_bits = |bits: i64| {
        let mut p = f32_(&[1, 2], &[1, 0]).into_proto();
        p.layout.as_mut().unwrap().element_size_in_bits = bits;
        ShapeBuf::try_from_proto(p).unwrap()
    };
    assert!(!util::has_custom_element_size_in_bits(make::make_shape(T::F32, &[1, 2]).unwrap().view()));
    assert!(!util::has_custom_element_size_in_bits(with_bits(0).view()));
    assert!(util::has_custom_element_size_in_bits(with_bits(32).view()));
    let inner = make::make_tuple_shape(&[with_bits(0), with_bits(32)]).unwrap();
    let nested = make::make_tuple_shape(&[inner, with_bits(0)]).unwrap();
    assert!(util::has_custom_element_size_in_bits(nested.view()));
}

#[test]
fn memory_spaces() {
    let s = make::make_shape_with_layout(T::F32, &[2], &LayoutSpec::new(&[0]).memory_space(5)).unwrap();
    assert_eq!(util::memory_space(s.view()), 5);
    assert_eq!(util::memory_space(make::make_buffer_shape(&s).unwrap().view()), 5);
    assert_eq!(util::memory_space(util::clear_layout(s.view()).unwrap().view()), 0);
    assert_eq!(util::memory_space(make::make_nil().view()), 0);
}

#[test]
fn untiled_layout() {
    // vectors.md 75
    let tile = |t: &'static [i64]| xla_shape::Tile::try_new(t).unwrap();
    assert!(util::is_untiled_layout([tile(&[8, 128])], &[24, 128]).unwrap());
    assert!(util::is_untiled_layout([tile(&[1, 128])], &[4, 256]).unwrap());
    assert!(!util::is_untiled_layout([tile(&[8, 128])], &[2, 3, 4]).unwrap());
    assert!(util::is_untiled_layout([], &[2, 3]).unwrap());
    // Rank extension, nested tiles, combine.
    assert!(util::is_untiled_layout([tile(&[1, 2, 4])], &[2, 4]).unwrap());
    // The (2,1) sub-tile interleaves pairs of rows: not a no-op.
    assert!(!util::is_untiled_layout([tile(&[8, 128]), tile(&[2, 1])], &[8, 128]).unwrap());
    assert!(util::is_untiled_layout([tile(&[8, 128]), tile(&[1, 128])], &[16, 128]).unwrap());
    assert!(util::is_untiled_layout([tile(&[i64::MIN, 6])], &[2, 3]).unwrap());
    assert!(util::is_untiled_layout([tile(&[2, 2])], &[4, 4]).is_ok_and(|u| !u));
    assert!(util::is_untiled_layout([tile(&[2])], &[-1]).is_err());
}

#[test]
fn copy_layouts() {
    // vectors.md 43
    let dst = make::make_shape(T::F32, &[2, 3]).unwrap();
    let bogus = layout(&[1, 2, 3, 4]);
    // A validated shape cannot carry {1,2,3,4} on f32[2,3]; the layout check of the copy is
    // `with_layout`.
    let err = util::with_layout(dst.as_array().unwrap(), bogus.view()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("layout minor_to_major field contains") && text.contains("elements, but shape has"),
        "{text}"
    );
    let src = f32_(&[123, 42, 7], &[2, 0, 1]);
    let err = util::copy_layout_between_shapes(src.view(), dst.view()).unwrap_err();
    assert!(err.to_string().contains("cannot copy layout from shape"), "{err}");
    let ok =
        util::copy_layout_between_shapes(src.view(), make::make_shape(T::F32, &[2, 3, 5]).unwrap().view()).unwrap();
    assert_eq!(ok.to_string(), "f32[2,3,5]{2,0,1}");
    // Structure, tuple counts; a missing source layout clears the destination's.
    let t1 = make::make_tuple_shape(std::slice::from_ref(&src)).unwrap();
    let t2 = make::make_tuple_shape(&[src.clone(), src.clone()]).unwrap();
    assert!(util::copy_layout_between_shapes(t1.view(), src.view()).unwrap_err().to_string().contains("structure"));
    assert!(util::copy_layout_between_shapes(t1.view(), t2.view()).unwrap_err().to_string().contains("count"));
    let bare = util::clear_layout(src.view()).unwrap();
    assert_eq!(util::copy_layout_between_shapes(bare.view(), src.view()).unwrap().to_string(), "f32[123,42,7]");
    let tok = make::make_token_shape();
    assert!(util::copy_layout_between_shapes(src.view(), tok.view()).is_err());
    assert!(util::copy_layout_between_shapes(tok.view(), tok.view()).is_ok());
}

#[test]
fn layouts_in_shapes() {
    let a = f32_(&[2, 3], &[1, 0]);
    let b = dense(T::S8, &[5, 7], &[1, 0]);
    let c = f32_(&[2, 3], &[0, 1]);
    let bare = util::clear_layout(a.view()).unwrap();
    assert!(util::layouts_in_shapes_equal(a.view(), b.view()));
    assert!(!util::layouts_in_shapes_equal(a.view(), c.view()));
    assert!(!util::layouts_in_shapes_equal(a.view(), bare.view()));
    assert!(util::layouts_in_shapes_equal(bare.view(), bare.view()));
    assert!(!util::layouts_in_shapes_equal(a.view(), f32_(&[2], &[0]).view()));
    let t1 = make::make_tuple_shape(&[a.clone(), make::make_token_shape()]).unwrap();
    let t2 = make::make_tuple_shape(&[b, make::make_opaque_shape()]).unwrap();
    assert!(util::layouts_in_shapes_equal(t1.view(), t2.view()));
    assert!(!util::layouts_in_shapes_equal(t1.view(), a.view()));
}

#[test]
fn views_of_built_layouts() {
    let proto = LayoutProto { minor_to_major: vec![5], ..Default::default() };
    let l: Layout<'_> = Layout::try_new(&proto).unwrap();
    // A standalone layout can skip dimension numbers; nothing panics.
    assert_eq!(util::make_logical_to_physical(l), [0]);
    assert!(util::move_dim_to_major(l, Dim(5)).is_ok());
}

// ---- properties ----

fn arrays() -> impl Strategy<Value = ShapeBuf> {
    array_shape(ShapeConfig { unbounded: true, ..ShapeConfig::default() })
}

fn permutation(rank: usize) -> impl Strategy<Value = Vec<usize>> {
    Just((0..rank).collect::<Vec<_>>()).prop_shuffle()
}

proptest! {
    #[test]
    fn permute_then_inverse_is_identity((s, perm) in arrays().prop_flat_map(|s| {
        let rank = s.as_array().unwrap().rank();
        (Just(s), permutation(rank))
    })) {
        let a = s.as_array().unwrap();
        let p = util::permute_dimensions(&perm, a).unwrap();
        assert_xla_form(&p);
        let mut inverse = vec![0; perm.len()];
        for (i, &d) in perm.iter().enumerate() {
            inverse[d] = i;
        }
        let back = util::permute_dimensions(&inverse, p.as_array().unwrap()).unwrap();
        prop_assert!(util::equal(back.view(), s.view()), "{} -> {} -> {}", s, p, back);
        // The permutation keeps the physical order: same descending physical shape.
        let d1 = util::make_shape_with_descending_layout_and_same_physical_layout(s.view()).unwrap();
        let d2 = util::make_shape_with_descending_layout_and_same_physical_layout(p.view()).unwrap();
        prop_assert!(util::equal(d1.view(), d2.view()), "{} vs {}", d1, d2);
    }

    #[test]
    fn append_then_delete_is_identity(s in arrays(), bound in 0i64..4) {
        let a = s.as_array().unwrap();
        for appended in [util::append_major_dimension(bound, a).unwrap(), util::append_minor_dimension(bound, a).unwrap()] {
            assert_xla_form(&appended);
            let back = util::delete_dimension(Dim(a.rank()), appended.as_array().unwrap()).unwrap();
            prop_assert!(util::equal(back.view(), s.view()), "{} -> {} -> {}", s, appended, back);
        }
    }

    #[test]
    fn insert_then_delete_restores_dimensions(s in arrays(), bounds in proptest::collection::vec(0i64..4, 0..3), at in 0usize..5) {
        let a = s.as_array().unwrap();
        let index = at.min(a.rank());
        let inserted = util::insert_dimensions_at_index(a, index, &bounds).unwrap();
        assert_xla_form(&inserted);
        let added: Vec<Dim> = (index..index + bounds.len()).map(Dim).collect();
        let back = util::delete_dimensions(&added, inserted.as_array().unwrap()).unwrap();
        let back = back.as_array().unwrap();
        prop_assert_eq!(back.dimensions(), a.dimensions());
        prop_assert_eq!(back.minor_to_major(), a.minor_to_major());
        prop_assert_eq!(back.padded_dimensions(), a.padded_dimensions());
    }

    #[test]
    fn rewrites_validate(s in shape(ShapeConfig::everything()), t in xla_shape::strategy::array_element_type()) {
        let view: Shape<'_> = s.view();
        for built in [
            util::with_default_layout(view),
            util::clear_layout(view),
            util::clear_tiles(view),
            util::device_shape_to_host_shape(view),
            util::move_dim_to_major_in_shape(view, Dim(0)),
        ]
        .into_iter()
        .flatten()
        {
            assert_xla_form(&built);
        }
        if let Ok(changed) = util::change_element_type(view, t) {
            assert_xla_form(&changed);
        }
        prop_assert!(util::device_shape_is_host_shape(util::device_shape_to_host_shape(view).unwrap().view()));
        prop_assert!(!util::has_any_layout(util::clear_layout(view).unwrap().view()) || util::has_any_layout(view));
        prop_assert!(util::layouts_in_shapes_equal(view, util::copy_layout_between_shapes(view, view).unwrap().view()));
    }

    #[test]
    fn dimension_edits_validate(s in arrays(), bound in 0i64..4) {
        let a = s.as_array().unwrap();
        assert_xla_form(&util::drop_degenerate_dimensions(a).unwrap());
        assert_xla_form(&util::prepend_major_dimension(bound, a).unwrap());
        assert_xla_form(&util::make_shape_with_descending_layout_and_same_physical_layout(s.view()).unwrap());
        let reversed: Vec<usize> = (0..a.rank()).rev().collect();
        assert_xla_form(&util::reorder_logical_dimensions(a, &reversed).unwrap());
        assert_xla_form(&util::permute_dimensions_ignoring_layout(&reversed, a).unwrap());
        prop_assert_eq!(util::true_num_dimensions(util::drop_degenerate_dimensions(a).unwrap().as_array().unwrap()), util::true_num_dimensions(a));
    }
}
