//! `IndexUtil` semantics, iteration and bitcast predicates (vectors.md §1, §6 groups 61–64, §9 S1,
//! §10 X5–X7).

use std::cmp::Ordering;

use proptest::prelude::*;
use xla_shape::bitcast::{is_reshape_or_transpose_bitcast, reshape_is_bitcast, transpose_is_bitcast};
use xla_shape::error::ArgumentProblem;
use xla_shape::index::{
    Indices, bump_indices, compare_indices, dimension_stride, for_each_index, index_in_bounds,
    linear_index_to_multidimensional_index as to_multi, multidimensional_index_to_linear_index as to_linear,
    try_for_each_index,
};
use xla_shape::make::{make_shape, make_shape_with_dense_layout};
use xla_shape::proto::ShapeProto;
use xla_shape::strategy::{ShapeConfig, array_shape, array_shape_and_index};
use xla_shape::{ArrayShape, Dim, Error, PhysicalMap, PrimitiveType, ShapeBuf, Slot};

fn f32s(dims: &[i64], m2m: &[i64]) -> ShapeBuf {
    make_shape_with_dense_layout(PrimitiveType::F32, dims, m2m).unwrap()
}

fn a(s: &ShapeBuf) -> ArrayShape<'_> {
    s.as_array().unwrap()
}

#[test]
fn groups_1_to_6_linear_indices() {
    // vectors.md groups 1–6.
    type Case<'a> = (&'a [i64], &'a [i64], &'a [(&'a [i64], i64)]);
    let cases: &[Case<'_>] = &[
        (&[100], &[0], &[(&[42], 42)]),
        (&[10, 20], &[0, 1], &[(&[0, 0], 0), (&[9, 19], 199), (&[3, 5], 53)]),
        (&[10, 20], &[1, 0], &[(&[0, 0], 0), (&[9, 19], 199), (&[3, 5], 65)]),
        (&[10, 20, 30], &[2, 1, 0], &[(&[3, 5, 7], 1957), (&[8, 15, 27], 5277)]),
        (&[10, 20, 30], &[1, 2, 0], &[(&[3, 5, 7], 1945), (&[8, 15, 27], 5355)]),
        (&[10, 20, 30, 40], &[3, 2, 1, 0], &[(&[3, 5, 7, 9], 78289), (&[8, 15, 27, 33], 211_113)]),
    ];
    for (dims, m2m, pairs) in cases {
        let s = f32s(dims, m2m);
        let map = PhysicalMap::new(a(&s)).unwrap();
        for (index, linear) in *pairs {
            assert_eq!(to_linear(a(&s), index).unwrap(), *linear, "{s} {index:?}");
            assert_eq!(to_multi(a(&s), *linear).unwrap(), *index, "{s} {linear}");
            // Untiled, unpadded: the physical slot is the linear index.
            assert_eq!(map.slot(index).unwrap(), Slot(u64::try_from(*linear).unwrap()));
        }
    }
}

#[test]
fn group_7_big_shape_round_trips() {
    // vectors.md group 7: 1,440,000,000 elements.
    let dims = [10, 20, 30, 40, 30, 20, 10];
    let table: [(&[i64], [[i64; 7]; 4]); 3] = [
        (
            &[6, 5, 4, 3, 2, 1, 0],
            [[7, 19, 3, 7, 26, 13, 6], [0, 6, 2, 33, 27, 0, 4], [4, 5, 22, 2, 16, 1, 4], [7, 15, 6, 28, 28, 5, 4]],
        ),
        (
            &[0, 1, 2, 3, 4, 5, 6],
            [[6, 13, 26, 7, 3, 19, 7], [4, 0, 27, 33, 2, 6, 0], [4, 1, 16, 2, 22, 5, 4], [4, 5, 28, 28, 6, 15, 7]],
        ),
        (
            &[4, 5, 1, 2, 6, 0, 3],
            [[8, 18, 3, 31, 26, 17, 2], [2, 19, 26, 1, 4, 0, 1], [1, 5, 21, 17, 4, 7, 4], [0, 9, 14, 31, 14, 8, 4]],
        ),
    ];
    for (m2m, expected) in table {
        let s = f32s(&dims, m2m);
        for (linear, index) in [1_145_567_336, 43_883_404, 617_295_214, 1_117_613_654].into_iter().zip(expected) {
            assert_eq!(to_multi(a(&s), linear).unwrap(), index);
            assert_eq!(to_linear(a(&s), &index).unwrap(), linear);
        }
        assert_eq!(to_multi(a(&s), 0).unwrap(), [0; 7]);
        assert_eq!(to_multi(a(&s), 1_439_999_999).unwrap(), [9, 19, 29, 39, 29, 19, 9]);
        assert_eq!(to_linear(a(&s), &[9, 19, 29, 39, 29, 19, 9]).unwrap(), 1_439_999_999);
        assert!(matches!(to_multi(a(&s), 1_440_000_000), Err(Error::OutOfRange { .. })));
    }
}

#[test]
fn group_8_and_x6_bump_indices() {
    // vectors.md group 8.
    let s = make_shape(PrimitiveType::S32, &[2, 2]).unwrap();
    let mut i = [0, 0];
    for next in [[0, 1], [1, 0], [1, 1]] {
        assert!(bump_indices(a(&s), &mut i).unwrap());
        assert_eq!(i, next);
    }
    assert!(!bump_indices(a(&s), &mut i).unwrap());
    assert_eq!(i, [1, 1]);
    // X6: logical order whatever the layout.
    for m2m in [[1, 0], [0, 1]] {
        let s = make_shape_with_dense_layout(PrimitiveType::S32, &[2, 3], &m2m).unwrap();
        let mut i = [0, 0];
        let mut seen = vec![];
        while bump_indices(a(&s), &mut i).unwrap() {
            seen.push(i);
        }
        assert_eq!(seen, [[0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
    }
    assert!(bump_indices(a(&s), &mut [0]).is_err());
    assert!(bump_indices(a(&s), &mut [0, 2]).is_err());
}

#[test]
fn group_9_dimension_stride() {
    // vectors.md group 9.
    for (m2m, expected) in [([3, 2, 1, 0], [320, 40, 4, 1]), ([0, 1, 2, 3], [1, 5, 40, 400])] {
        let s = f32s(&[5, 8, 10, 4], &m2m);
        let strides: Vec<i64> = (0..4).map(|d| dimension_stride(a(&s), Dim(d)).unwrap()).collect();
        assert_eq!(strides, expected);
    }
    let s = f32s(&[5, 8], &[1, 0]);
    assert!(matches!(dimension_stride(a(&s), Dim(2)), Err(Error::DimensionOutOfRange { .. })));
}

#[test]
fn group_10_compare_and_bounds() {
    // vectors.md group 10 (DV-13: negative indices are out of bounds).
    assert_eq!(compare_indices(&[1, 2], &[1, 3]).unwrap(), Ordering::Less);
    assert_eq!(compare_indices(&[2, 0], &[1, 9]).unwrap(), Ordering::Greater);
    assert_eq!(compare_indices(&[4, 4], &[4, 4]).unwrap(), Ordering::Equal);
    assert!(matches!(compare_indices(&[1], &[1, 2]), Err(Error::IndexRank { .. })));
    let s = f32s(&[2, 3], &[1, 0]);
    assert!(index_in_bounds(a(&s), &[1, 2]));
    assert!(!index_in_bounds(a(&s), &[2, 0]));
    assert!(!index_in_bounds(a(&s), &[1]));
    assert!(!index_in_bounds(a(&s), &[-1, 0]));
    assert!(matches!(to_linear(a(&s), &[-1, 0]), Err(Error::IndexOutOfBounds { dimension: 0, index: -1, bound: 2 })));
    assert!(matches!(to_linear(a(&s), &[0, 0, 0]), Err(Error::IndexRank { expected: 2, actual: 3 })));
}

#[test]
fn group_11_rank_0_and_zero_elements() {
    // vectors.md group 11, linearization.md §1.8.
    let s = make_shape(PrimitiveType::F32, &[]).unwrap();
    assert_eq!(to_linear(a(&s), &[]).unwrap(), 0);
    assert_eq!(to_multi(a(&s), 0).unwrap(), Vec::<i64>::new());
    assert!(!bump_indices(a(&s), &mut []).unwrap());
    assert!(matches!(to_multi(a(&s), 1), Err(Error::OutOfRange { .. })));
    assert!(to_multi(a(&s), -1).is_err());
    let empty = f32s(&[3, 0], &[1, 0]);
    assert!(to_multi(a(&empty), 0).is_err());
    assert!(to_linear(a(&empty), &[0, 0]).is_err());
    assert_eq!(Indices::in_layout_order(a(&empty)).unwrap().count(), 0);
    assert_eq!(Indices::in_logical_order(a(&s)).unwrap().collect::<Vec<_>>(), [Vec::<i64>::new()]);
}

#[test]
fn unbounded_dimensions_are_errors() {
    let s = make_shape(PrimitiveType::F32, &[i64::MIN, 3]).unwrap();
    assert!(matches!(to_linear(a(&s), &[0, 0]), Err(Error::UnboundedDimension { dimension: 0, .. })));
    assert!(matches!(PhysicalMap::new(a(&s)), Err(Error::UnboundedDimension { .. })));
    assert!(for_each_index(a(&s), &[0, 0], &[1, 1], &[1, 1], |_| true).is_err());
    assert!(!index_in_bounds(a(&s), &[0, 0]));
}

fn visits(s: &ShapeBuf, base: &[i64], count: &[i64], incr: &[i64]) -> Vec<Vec<i64>> {
    let mut seen = vec![];
    for_each_index(a(s), base, count, incr, |i| {
        seen.push(i.to_vec());
        true
    })
    .unwrap();
    seen
}

#[test]
fn group_61_for_each_index_counts() {
    // vectors.md group 61.
    for (dims, expected) in [
        (&[][..], 1),
        (&[0][..], 0),
        (&[16][..], 16),
        (&[3, 0][..], 0),
        (&[0, 2][..], 0),
        (&[4, 16][..], 64),
        (&[6, 11, 17][..], 1122),
        (&[6, 11, 5, 17][..], 5610),
    ] {
        let s = make_shape(PrimitiveType::F32, dims).unwrap();
        let mut calls = 0;
        for_each_index(a(&s), &vec![0; dims.len()], dims, &vec![1; dims.len()], |_| {
            calls += 1;
            true
        })
        .unwrap();
        assert_eq!(calls, expected, "{s}");
    }
    // A visitor error on the 5th call stops the walk after 5 calls.
    let s = make_shape(PrimitiveType::F32, &[6, 11, 17]).unwrap();
    let mut calls = 0;
    let result = try_for_each_index(a(&s), &[0, 0, 0], &[6, 11, 17], &[1, 1, 1], |_| {
        calls += 1;
        if calls == 5 { Err(Error::invalid_argument(ArgumentProblem::BufferOfNonArray)) } else { Ok(true) }
    });
    assert!(matches!(result, Err(Error::InvalidArgument(_))));
    assert_eq!(calls, 5);
    // Returning false stops early too.
    let mut calls = 0;
    for_each_index(a(&s), &[0, 0, 0], &[6, 11, 17], &[1, 1, 1], |_| {
        calls += 1;
        calls < 3
    })
    .unwrap();
    assert_eq!(calls, 3);
}

#[test]
fn x5_for_each_index_order_and_windows() {
    // vectors.md X5.
    assert_eq!(
        visits(&f32s(&[2, 3], &[0, 1]), &[0, 0], &[2, 3], &[1, 1]),
        [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2]]
    );
    assert_eq!(
        visits(&f32s(&[2, 3], &[1, 0]), &[0, 0], &[2, 3], &[1, 1]),
        [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    );
    let s = f32s(&[4, 6], &[1, 0]);
    assert_eq!(visits(&s, &[1, 0], &[2, 6], &[1, 2]), [[1, 0], [1, 2], [1, 4], [2, 0], [2, 2], [2, 4]]);
    // count 0 pins the dimension.
    assert_eq!(visits(&s, &[1, 2], &[0, 3], &[1, 1]), [[1, 2], [1, 3], [1, 4]]);
    // A step past the window visits its first position only, in any dimension.
    assert_eq!(visits(&s, &[1, 1], &[2, 5], &[1, i64::MAX]), [[1, 1], [2, 1]]);
    assert_eq!(visits(&s, &[1, 1], &[2, 5], &[i64::MAX, 3]), [[1, 1], [1, 4]]);
    // incr 0 → error (XLA loops forever); windows that leave the array → errors.
    assert!(for_each_index(a(&s), &[0, 0], &[4, 6], &[1, 0], |_| true).is_err());
    assert!(for_each_index(a(&s), &[0, 0], &[5, 6], &[1, 1], |_| true).is_err());
    assert!(for_each_index(a(&s), &[-1, 0], &[1, 6], &[1, 1], |_| true).is_err());
    assert!(for_each_index(a(&s), &[4, 0], &[0, 6], &[1, 1], |_| true).is_err());
    assert!(for_each_index(a(&s), &[0, 0], &[4, -1], &[1, 1], |_| true).is_err());
    assert!(matches!(for_each_index(a(&s), &[0], &[4, 6], &[1, 1], |_| true), Err(Error::IndexRank { .. })));
}

#[test]
fn s1_seed_memory_orders() {
    // vectors.md S1: a b c / d e f.
    let names =
        |i: &[i64]| ["abc", "def"][usize::try_from(i[0]).unwrap()].as_bytes()[usize::try_from(i[1]).unwrap()] as char;
    for (m2m, memory) in [([0, 1], "adbecf"), ([1, 0], "abcdef")] {
        let s = f32s(&[2, 3], &m2m);
        // Through the linear index and through the physical map.
        let map = PhysicalMap::new(a(&s)).unwrap();
        let mut buffer = ['?'; 6];
        for index in Indices::in_logical_order(a(&s)).unwrap() {
            let linear = usize::try_from(to_linear(a(&s), &index).unwrap()).unwrap();
            assert_eq!(map.slot(&index).unwrap().get(), u64::try_from(linear).unwrap());
            buffer[linear] = names(&index);
        }
        assert_eq!(buffer.iter().collect::<String>(), memory);
        // for_each_index and the layout-order iterator visit in memory order.
        let mut order = String::new();
        for_each_index(a(&s), &[0, 0], &[2, 3], &[1, 1], |i| {
            order.push(names(i));
            true
        })
        .unwrap();
        assert_eq!(order, memory);
        let iterated: String = Indices::in_layout_order(a(&s)).unwrap().map(|i| names(&i)).collect();
        assert_eq!(iterated, memory);
    }
}

#[test]
fn x7_absent_layout_is_the_default() {
    // vectors.md X7.
    let proto = ShapeProto {
        element_type: PrimitiveType::F32.as_i32(),
        dimensions: vec![2, 3],
        is_dynamic_dimension: vec![false, false],
        ..ShapeProto::default()
    };
    assert!(matches!(ArrayShape::try_new(&proto), Err(Error::MissingLayout { .. })));
    let bare = ArrayShape::try_new_optional_layout(&proto).unwrap();
    let explicit = f32s(&[2, 3], &[1, 0]);
    assert_eq!(to_linear(bare, &[1, 2]).unwrap(), 5);
    assert_eq!(PhysicalMap::new(bare).unwrap().slot(&[1, 2]).unwrap(), Slot(5));
    let all = |s: ArrayShape<'_>| Indices::in_layout_order(s).unwrap().collect::<Vec<_>>();
    assert_eq!(all(bare), all(a(&explicit)));
    for linear in 0..6 {
        assert_eq!(to_multi(bare, linear).unwrap(), to_multi(a(&explicit), linear).unwrap());
    }
}

#[test]
fn group_62_reshape_is_bitcast() {
    // vectors.md group 62.
    let shape = |t, dims: &[i64], m2m: &[i64]| make_shape_with_dense_layout(t, dims, m2m).unwrap();
    for (in_m2m, out_m2m) in [([1, 0], [1, 0]), ([0, 1], [1, 0]), ([1, 0], [0, 1]), ([0, 1], [0, 1])] {
        let x = shape(PrimitiveType::F32, &[3, 4], &in_m2m);
        let y = shape(PrimitiveType::F32, &[6, 2], &out_m2m);
        let expected = in_m2m == [1, 0] && out_m2m == [1, 0];
        assert_eq!(reshape_is_bitcast(a(&x), a(&y), false).unwrap(), expected, "{x} → {y}");
        let y16 = shape(PrimitiveType::F16, &[6, 2], &out_m2m);
        assert!(!reshape_is_bitcast(a(&x), a(&y16), false).unwrap());
        assert_eq!(reshape_is_bitcast(a(&x), a(&y16), true).unwrap(), expected);
    }
    let out = shape(PrimitiveType::F32, &[6, 2], &[0, 1]);
    assert!(reshape_is_bitcast(a(&shape(PrimitiveType::F32, &[3, 2, 2], &[1, 0, 2])), a(&out), false).unwrap());
    assert!(!reshape_is_bitcast(a(&shape(PrimitiveType::F32, &[3, 2, 2], &[0, 1, 2])), a(&out), false).unwrap());
    let out16 = shape(PrimitiveType::F16, &[6, 2], &[0, 1]);
    assert!(!reshape_is_bitcast(a(&shape(PrimitiveType::F32, &[3, 2, 2], &[1, 0, 2])), a(&out16), false).unwrap());
    assert!(reshape_is_bitcast(a(&shape(PrimitiveType::F32, &[3, 2, 2], &[1, 0, 2])), a(&out16), true).unwrap());
    // Different counts → false; zero elements → true.
    assert!(!reshape_is_bitcast(a(&f32s(&[3, 4], &[1, 0])), a(&f32s(&[13], &[0])), false).unwrap());
    assert!(reshape_is_bitcast(a(&f32s(&[3, 0], &[1, 0])), a(&f32s(&[0], &[0])), false).unwrap());
}

#[test]
fn group_63_transpose_is_bitcast() {
    // vectors.md group 63.
    let x = f32s(&[10, 5], &[1, 0]);
    let y = make_shape_with_dense_layout(PrimitiveType::F16, &[5, 10], &[0, 1]).unwrap();
    assert!(transpose_is_bitcast(a(&x), a(&y), &[1, 0], true).unwrap());
    assert!(!transpose_is_bitcast(a(&x), a(&y), &[1, 0], false).unwrap());
    assert!(is_reshape_or_transpose_bitcast(a(&x), a(&f32s(&[5, 10], &[0, 1])), false).unwrap());
    assert!(!is_reshape_or_transpose_bitcast(a(&x), a(&y), false).unwrap());
    assert!(is_reshape_or_transpose_bitcast(a(&x), a(&y), true).unwrap());
    // A row-major reshape is a bitcast; the same dimensions in another order are neither.
    assert!(is_reshape_or_transpose_bitcast(a(&x), a(&f32s(&[5, 10], &[1, 0])), false).unwrap());
    assert!(!is_reshape_or_transpose_bitcast(a(&x), a(&f32s(&[10, 5], &[0, 1])), false).unwrap());
    assert!(is_reshape_or_transpose_bitcast(a(&x), a(&x), false).unwrap());
    assert!(transpose_is_bitcast(a(&x), a(&y), &[1, 1], true).is_err());
    assert!(transpose_is_bitcast(a(&x), a(&f32s(&[50], &[0])), &[0], true).is_err());
}

/// vectors.md group 64's `PermuteDimensions`: dims[i] = dims[perm[i]], m2m[i] = inverse(perm)[m2m[i]].
fn permute(perm: &[usize], s: &ShapeBuf) -> ShapeBuf {
    let dims: Vec<i64> = perm.iter().map(|&p| s.proto().dimensions[p]).collect();
    let mut inverse = vec![0i64; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i64::try_from(i).unwrap();
    }
    let old = &s.proto().layout.as_ref().unwrap().minor_to_major;
    let m2m: Vec<i64> = old.iter().map(|&d| inverse[usize::try_from(d).unwrap()]).collect();
    f32s(&dims, &m2m)
}

#[test]
fn group_64_permute_example() {
    let s = f32s(&[10, 100, 1000], &[2, 1, 0]);
    assert_eq!(permute(&[1, 2, 0], &s).to_string(), "f32[100,1000,10]{1,0,2}");
}

proptest! {
    #[test]
    fn group_64_transpose_of_permute_is_bitcast(
        m2m in Just(vec![0i64, 1, 2]).prop_shuffle(),
        perm in Just(vec![0usize, 1, 2]).prop_shuffle(),
    ) {
        let s = f32s(&[10, 100, 1000], &m2m);
        let p = permute(&perm, &s);
        let mapping: Vec<i64> = perm.iter().map(|&d| i64::try_from(d).unwrap()).collect();
        prop_assert!(transpose_is_bitcast(a(&s), a(&p), &mapping, false).unwrap());
    }

    #[test]
    fn linear_multi_linear_is_identity(s in array_shape(ShapeConfig { max_rank: 6, max_dimension: 4, ..ShapeConfig::default() })) {
        let array = a(&s);
        let total: i64 = xla_shape::padding::padded_extents(array).unwrap().iter().product();
        for linear in 0..total.min(512) {
            match to_multi(array, linear) {
                Ok(index) => prop_assert_eq!(to_linear(array, &index).unwrap(), linear),
                // Only a legacy padding slot has no index.
                Err(e) => prop_assert!(xla_shape::padding::is_padded(array), "{e}"),
            }
        }
    }

    #[test]
    fn multi_linear_multi_is_identity((s, index) in array_shape_and_index(ShapeConfig { max_rank: 6, ..ShapeConfig::default() })) {
        let array = a(&s);
        let linear = to_linear(array, &index).unwrap();
        prop_assert_eq!(to_multi(array, linear).unwrap(), index.clone());
        // Strides agree with the linear index.
        let by_strides: i64 = (0..index.len()).map(|d| index[d] * dimension_stride(array, Dim(d)).unwrap()).sum();
        prop_assert_eq!(by_strides, linear);
    }

    #[test]
    fn iterators_visit_every_index_once(s in array_shape(ShapeConfig { max_rank: 4, max_dimension: 4, ..ShapeConfig::default() })) {
        let array = a(&s);
        let n = usize::try_from(xla_shape::size::elements_in(array).unwrap()).unwrap();
        let layout: Vec<_> = Indices::in_layout_order(array).unwrap().collect();
        let mut logical: Vec<_> = Indices::in_logical_order(array).unwrap().collect();
        prop_assert_eq!(layout.len(), n);
        prop_assert!(logical.windows(2).all(|w| compare_indices(&w[0], &w[1]).unwrap() == Ordering::Less));
        let dims = array.dimensions().to_vec();
        let mut walked = vec![];
        for_each_index(array, &vec![0; dims.len()], &dims, &vec![1; dims.len()], |i| { walked.push(i.to_vec()); true }).unwrap();
        prop_assert_eq!(&walked, &layout);
        // Bumping walks the logical order.
        if let Some(first) = logical.first().cloned() {
            let mut i = first;
            let mut bumped = vec![i.clone()];
            while bump_indices(array, &mut i).unwrap() { bumped.push(i.clone()); }
            prop_assert_eq!(&bumped, &logical);
        }
        logical.sort();
        let mut sorted_layout = layout;
        sorted_layout.sort();
        prop_assert_eq!(sorted_layout, logical);
    }
}

#[test]
fn narrow_batch_with_out_of_bounds_entries_does_not_overflow() {
    // Audit (issue #6): f32[1,1,4294967295] takes the narrow (32-bit) batch path; its strides
    // are [2^32-1, 2^32-1, 1], so two entries of -1 make products near 2^64 whose sum used to
    // overflow (a panic in builds with overflow checks) before the bounds check reported it.
    let s = f32s(&[1, 1, 4_294_967_295], &[2, 1, 0]);
    let map = PhysicalMap::new(a(&s)).unwrap();
    let mut out = [Slot(0); 2];
    let err = map.slots(&[[0, 0, 5], [-1, -1, 0]], &mut out).unwrap_err();
    assert!(matches!(err, Error::IndexOutOfBounds { dimension: 0, index: -1, .. }), "{err}");
    map.slots_unchecked_bounds(&[[-1, -1, -1], [i64::MAX, i64::MIN, -1]], &mut out); // no panic
    map.slots(&[[0, 0, 4_294_967_294]], &mut out[..1]).unwrap();
    assert_eq!(out[0], Slot(4_294_967_294));
}
