//! Nested tiling and the physical map (vectors.md §7 T1–T12), checked against an independent
//! brute-force model that materializes the buffer by explicit tile expansion.
// The model follows the spec's one-letter notation (S, E, t, …).
#![allow(clippy::many_single_char_names)]

use proptest::prelude::*;
use xla_shape::error::LayoutProblem;
use xla_shape::make::{LayoutSpec, make_shape_with_layout};
use xla_shape::physical::{PhysicalMap, Slot};
use xla_shape::strategy::{ShapeConfig, array_shape};
use xla_shape::tiling::expanded_shape;
use xla_shape::{ArrayShape, Error, PrimitiveType, ShapeBuf, size};

const STAR: i64 = i64::MIN;

fn tiled(t: PrimitiveType, dims: &[i64], m2m: &[i64], tiles: &[&[i64]]) -> ShapeBuf {
    make_shape_with_layout(t, dims, &LayoutSpec::new(m2m).tiles(tiles)).unwrap()
}

fn a(s: &ShapeBuf) -> ArrayShape<'_> {
    s.as_array().unwrap()
}

fn map(s: &ShapeBuf) -> PhysicalMap {
    PhysicalMap::new(a(s)).unwrap()
}

/// Slot table of a rank-2 array, rows × columns.
fn table(m: &PhysicalMap, rows: i64, cols: i64) -> Vec<Vec<u64>> {
    (0..rows).map(|i| (0..cols).map(|j| m.slot(&[i, j]).unwrap().get()).collect()).collect()
}

fn padding_slots(m: &PhysicalMap) -> Vec<u64> {
    (0..m.storage_slots()).filter(|&s| m.index_of_slot(Slot(s)).unwrap().is_none()).collect()
}

#[test]
fn t1_t2_single_tile() {
    let s = tiled(PrimitiveType::F32, &[3, 5], &[1, 0], &[&[2, 2]]);
    let m = map(&s);
    assert_eq!(expanded_shape(a(&s)).unwrap(), [2, 3, 2, 2]);
    let expected = [[0, 1, 4, 5, 8], [2, 3, 6, 7, 10], [12, 13, 16, 17, 20]];
    assert_eq!(table(&m, 3, 5), expected);
    for (i, row) in expected.iter().enumerate() {
        for (j, &slot) in row.iter().enumerate() {
            let index = vec![i64::try_from(i).unwrap(), i64::try_from(j).unwrap()];
            assert_eq!(m.index_of_slot(Slot(slot)).unwrap(), Some(index));
        }
    }
    assert_eq!(padding_slots(&m), [9, 11, 14, 15, 18, 19, 21, 22, 23]);
    assert_eq!(m.index_of_slot(Slot(12)).unwrap(), Some(vec![2, 0]));
    assert!(matches!(m.index_of_slot(Slot(24)), Err(Error::OutOfRange { value: 24, bound: 24, .. })));
    // T2 sizes.
    assert_eq!(size::array_size(a(&s)).unwrap(), 96);
    assert_eq!(size::array_data_size(a(&s)).unwrap(), 84);
    assert_eq!(size::byte_size_of(s.view(), 8).unwrap(), 60);
    assert_eq!(size::storage_slots(a(&s)).unwrap(), 24);
    assert_eq!(size::storage_bytes(a(&s)).unwrap(), 96);
}

#[test]
fn t3_column_major_tile() {
    let s = tiled(PrimitiveType::F32, &[3, 5], &[0, 1], &[&[2, 2]]);
    let m = map(&s);
    assert_eq!(table(&m, 3, 5), [[0, 2, 8, 10, 16], [1, 3, 9, 11, 17], [4, 6, 12, 14, 20]]);
    assert_eq!(padding_slots(&m), [5, 7, 13, 15, 18, 19, 21, 22, 23]);
}

#[test]
fn t4_nested_rank_1() {
    let s = tiled(PrimitiveType::BF16, &[2048], &[0], &[&[1024], &[128], &[2, 1]]);
    let m = map(&s);
    assert_eq!(expanded_shape(a(&s)).unwrap(), [2, 4, 128, 2, 1]);
    for (index, slot) in [(0, 0), (128, 1), (1, 2), (2047, 2047), (1024, 1024)] {
        assert_eq!(m.slot(&[index]).unwrap(), Slot(slot));
    }
    for (slot, index) in [(1, 128), (2, 1), (3, 129)] {
        assert_eq!(m.index_of_slot(Slot(slot)).unwrap(), Some(vec![index]));
    }
    // vectors.md T4 says "slot 256 → {2}", which contradicts its own "{1} → 2": by §4.1,
    // slot = 1024·(e/1024) + 256·((e%1024)/256) + 2·(e%128) + (e/128)%2, so {2} → 4 and
    // slot 256 → {256} (the brute-force model below agrees). Reported to the spec owner.
    assert_eq!(m.slot(&[2]).unwrap(), Slot(4));
    assert_eq!(m.index_of_slot(Slot(256)).unwrap(), Some(vec![256]));
}

#[test]
fn t5_nested_rank_3() {
    let s = tiled(PrimitiveType::BF16, &[2, 8, 128], &[2, 1, 0], &[&[8, 128], &[2, 1]]);
    let m = map(&s);
    assert_eq!(expanded_shape(a(&s)).unwrap(), [2, 1, 1, 4, 128, 2, 1]);
    for (index, slot) in [([0, 0, 0], 0), ([0, 2, 0], 256), ([0, 1, 0], 1), ([0, 0, 1], 2), ([1, 7, 127], 2047)] {
        assert_eq!(m.slot(&index).unwrap(), Slot(slot));
        assert_eq!(m.index_of_slot(Slot(slot)).unwrap(), Some(index.to_vec()));
    }
}

#[test]
fn t6_tiled_versus_index_util() {
    let s = tiled(PrimitiveType::F32, &[8, 4], &[1, 0], &[&[2, 2]]);
    assert_eq!(map(&s).slot(&[3, 1]).unwrap(), Slot(11));
    assert_eq!(xla_shape::index::multidimensional_index_to_linear_index(a(&s), &[3, 1]).unwrap(), 13);
}

#[test]
fn t7_figure_2_both_tables() {
    for t in [PrimitiveType::F32, PrimitiveType::BF16] {
        let s = tiled(t, &[4, 8], &[1, 0], &[&[2, 4], &[2, 1]]);
        assert_eq!(expanded_shape(a(&s)).unwrap(), [2, 2, 1, 4, 2, 1]);
        assert_eq!(
            table(&map(&s), 4, 8),
            [
                [0, 2, 4, 6, 8, 10, 12, 14],
                [1, 3, 5, 7, 9, 11, 13, 15],
                [16, 18, 20, 22, 24, 26, 28, 30],
                [17, 19, 21, 23, 25, 27, 29, 31]
            ]
        );
        // XLA's top-tile-only LayoutUtil::LinearIndex is the same shape with tile 0 alone.
        let top = tiled(t, &[4, 8], &[1, 0], &[&[2, 4]]);
        assert_eq!(
            table(&map(&top), 4, 8),
            [
                [0, 1, 2, 3, 8, 9, 10, 11],
                [4, 5, 6, 7, 12, 13, 14, 15],
                [16, 17, 18, 19, 24, 25, 26, 27],
                [20, 21, 22, 23, 28, 29, 30, 31]
            ]
        );
    }
}

#[test]
fn t8_combine_docs_example() {
    let s = tiled(PrimitiveType::F32, &[2, 7, 8, 11, 10], &[4, 3, 2, 1, 0], &[&[STAR, STAR, 2, STAR, 3]]);
    let m = map(&s);
    assert_eq!(expanded_shape(a(&s)).unwrap(), [56, 37, 2, 3]);
    assert_eq!(m.storage_slots(), 12432);
    let merged = tiled(PrimitiveType::F32, &[112, 110], &[1, 0], &[&[2, 3]]);
    assert_eq!(map(&merged).slot(&[111, 109]).unwrap(), Slot(12430));
    for (index, slot) in [([1, 6, 7, 10, 9], 12430), ([0, 0, 1, 0, 0], 3), ([0, 0, 0, 0, 3], 6), ([0, 0, 0, 1, 0], 19)]
    {
        assert_eq!(m.slot(&index).unwrap(), Slot(slot));
        assert_eq!(m.index_of_slot(Slot(slot)).unwrap(), Some(index.to_vec()));
    }
}

#[test]
fn t9_combine_middle_dimension() {
    let s = tiled(PrimitiveType::BF16, &[2, 3, 1004], &[2, 1, 0], &[&[2, STAR, 128]]);
    let m = map(&s);
    assert_eq!(expanded_shape(a(&s)).unwrap(), [1, 24, 2, 128]);
    assert_eq!(m.storage_slots(), 6144);
    for (index, slot) in [([0, 1, 0], 1900), ([1, 0, 0], 128), ([1, 2, 1003], 6083)] {
        assert_eq!(m.slot(&index).unwrap(), Slot(slot));
        assert_eq!(m.index_of_slot(Slot(slot)).unwrap(), Some(index.to_vec()));
    }
    assert_eq!(size::array_size(a(&s)).unwrap(), 12288);
}

#[test]
fn t10_rank_extension() {
    let s = tiled(PrimitiveType::F32, &[100], &[0], &[&[8, 128]]);
    let m = map(&s);
    assert_eq!(expanded_shape(a(&s)).unwrap(), [1, 1, 8, 128]);
    assert_eq!(m.storage_slots(), 1024);
    for e in 0..100 {
        assert_eq!(m.slot(&[e]).unwrap(), Slot(u64::try_from(e).unwrap()));
    }
    assert!((100..1024).all(|s| m.index_of_slot(Slot(s)).unwrap().is_none()));
    assert_eq!(size::array_size(a(&s)).unwrap(), 4096);
}

#[test]
fn t11_tail_padding() {
    let spec = LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]]).tail_padding_alignment_in_elements(16);
    let s = make_shape_with_layout(PrimitiveType::F32, &[3, 5], &spec).unwrap();
    let m = map(&s);
    assert_eq!((m.raw_slots(), m.storage_slots()), (24, 32));
    assert_eq!(size::array_size(a(&s)).unwrap(), 128);
    assert!((24..32).all(|s| m.index_of_slot(Slot(s)).unwrap().is_none()));
    assert!(m.index_of_slot(Slot(32)).is_err());
    let untiled =
        make_shape_with_layout(PrimitiveType::F32, &[5], &LayoutSpec::new(&[0]).tail_padding_alignment_in_elements(8))
            .unwrap();
    assert_eq!(size::storage_slots(a(&untiled)).unwrap(), 8);
    assert_eq!(size::storage_bytes(a(&untiled)).unwrap(), 32);
    assert_eq!(size::array_size(a(&untiled)).unwrap(), 20);
}

#[test]
fn t12_sub_byte_and_counter_examples() {
    let packed = |t, dims: &[i64], bits, tiles: &[&[i64]]| {
        let m2m: Vec<i64> = (0..i64::try_from(dims.len()).unwrap()).rev().collect();
        make_shape_with_layout(t, dims, &LayoutSpec::new(&m2m).tiles(tiles).element_size_in_bits(bits)).unwrap()
    };
    let s4 = packed(PrimitiveType::S4, &[8], 4, &[]);
    let m = map(&s4);
    for i in 0..8 {
        let bit = m.bit_offset(&[i]).unwrap();
        assert_eq!((bit / 8, bit % 8), (u64::try_from(i / 2).unwrap(), 4 * u64::try_from(i % 2).unwrap()));
    }
    assert_eq!(m.storage_bytes(), 4);
    let u2 = map(&packed(PrimitiveType::U2, &[5], 2, &[]));
    assert_eq!(u2.bit_offset(&[4]).unwrap(), 8);
    assert_eq!(u2.storage_bytes(), 2);
    let tiled_s4 = packed(PrimitiveType::S4, &[3, 5], 4, &[&[2, 2]]);
    let m = map(&tiled_s4);
    assert_eq!(m.slot(&[2, 3]).unwrap(), Slot(17));
    let bit = m.bit_offset(&[2, 3]).unwrap();
    assert_eq!((bit, bit / 8, bit % 8), (68, 8, 4));
    assert_eq!(size::array_size(a(&tiled_s4)).unwrap(), 12);
    // Flagged: f6 elements straddle bytes in the dense bit stream.
    let f6 = map(&packed(PrimitiveType::F6E2M3FN, &[4], 6, &[]));
    assert_eq!(f6.bit_offset(&[1]).unwrap(), 6); // bits 6–11: bytes 0 and 1
    assert_eq!(f6.storage_bytes(), 3);
    // Sub-tiles that add padding: storage counts them, XLA's ArraySize does not.
    let sub = tiled(PrimitiveType::F32, &[8, 256], &[1, 0], &[&[8, 128], &[3, 1]]);
    assert_eq!(size::storage_slots(a(&sub)).unwrap(), 2304);
    assert_eq!(size::storage_bytes(a(&sub)).unwrap(), 9216);
    assert_eq!(size::array_size(a(&sub)).unwrap(), 8192);
    // A trailing '*' validates but cannot be computed.
    let trailing = tiled(PrimitiveType::F32, &[4, 6], &[1, 0], &[&[2, STAR]]);
    let trailing_combine =
        |e: Error| matches!(e, Error::InvalidLayout { ref problem, .. } if **problem == LayoutProblem::TrailingCombine);
    assert!(trailing_combine(PhysicalMap::new(a(&trailing)).unwrap_err()));
    assert!(trailing_combine(xla_shape::physical::physical_slot(a(&trailing), &[0, 0]).unwrap_err()));
    assert!(trailing_combine(size::array_size(a(&trailing)).unwrap_err()));
}

#[test]
fn large_dimensions_use_the_digit_path() {
    // Σ D beyond the crate's table limit: the mixed-radix digits are computed per index.
    let (rows, cols) = (70_000u64, 300u64);
    let s = tiled(PrimitiveType::F32, &[70_000, 300], &[1, 0], &[&[8, 128]]);
    let m = map(&s);
    let tiles_per_row = cols.div_ceil(128);
    assert_eq!(m.storage_slots(), rows.div_ceil(8) * 8 * tiles_per_row * 128);
    let mut x = 88_172_645_463_325_252u64;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (i, j) = (x % rows, (x >> 32) % cols);
        let expected = (i / 8) * tiles_per_row * 1024 + (j / 128) * 1024 + (i % 8) * 128 + j % 128;
        let index = [i64::try_from(i).unwrap(), i64::try_from(j).unwrap()];
        assert_eq!(m.slot(&index).unwrap(), Slot(expected));
        let mut batch = [Slot(0)];
        m.slots(&[index], &mut batch).unwrap();
        assert_eq!(batch[0], Slot(expected));
        assert_eq!(m.index_of_slot(Slot(expected)).unwrap(), Some(index.to_vec()));
    }
    // Column 300..384 of the last tile column is padding.
    assert_eq!(m.index_of_slot(Slot(2 * 1024 + 300 - 256)).unwrap(), None);
}

#[test]
fn unchecked_bounds_never_panics() {
    for s in [
        tiled(PrimitiveType::F32, &[3, 5], &[1, 0], &[&[2, 2]]),
        tiled(PrimitiveType::F32, &[2, 7, 8], &[2, 1, 0], &[&[STAR, 2, 3]]),
        tiled(PrimitiveType::F32, &[8, 256], &[1, 0], &[&[8, 128], &[3, 1]]),
        tiled(PrimitiveType::F32, &[70_000, 3, 2], &[2, 1, 0], &[&[8, 2]]),
    ] {
        let m = map(&s);
        for index in [&[-1, 5, 7][..], &[i64::MAX, i64::MIN, -3], &[], &[1]] {
            let _ = m.slot_unchecked_bounds(index);
            assert!(m.slot(index).is_err());
        }
        let mut out = [Slot(0); 1];
        m.slots_unchecked_bounds(&[[i64::MAX, -1, 3]], &mut out);
        assert!(m.slots(&[[i64::MAX, -1, 3]], &mut out).is_err());
    }
}

// ---------------------------------------------------------------------------------------------
// The brute-force model: built only from the spec's definitions (linearization.md §3, §4.1),
// sharing no code with the crate.

fn row_major(shape: &[usize], index: &[usize]) -> usize {
    shape.iter().zip(index).fold(0, |acc, (&s, &i)| acc * s + i)
}

fn unravel(shape: &[usize], mut linear: usize) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (i, &s) in index.iter_mut().zip(shape).rev() {
        *i = linear % s;
        linear /= s;
    }
    index
}

/// One tile by definition: rank extension, merge every `*` into its more minor neighbour, then
/// split each aligned entry into outer and inner parts.
fn expand(shape: &[usize], index: &[usize], tile: &[i64]) -> (Vec<usize>, Vec<usize>) {
    let (mut s, mut e) = (shape.to_vec(), index.to_vec());
    while s.len() < tile.len() {
        s.insert(0, 1);
        e.insert(0, 0);
    }
    let mut t = tile.to_vec();
    let off = s.len() - t.len();
    let mut k = 0;
    while k < t.len() {
        if t[k] == STAR {
            let (p, q) = (off + k, off + k + 1);
            e[q] += e[p] * s[q];
            s[q] *= s[p];
            s.remove(p);
            e.remove(p);
            t.remove(k);
        } else {
            k += 1;
        }
    }
    let t: Vec<usize> = t.iter().map(|&x| usize::try_from(x).unwrap()).collect();
    let (mut s2, mut e2) = (s[..off].to_vec(), e[..off].to_vec());
    for (j, &tj) in t.iter().enumerate() {
        s2.push(s[off + j].div_ceil(tj));
        e2.push(e[off + j] / tj);
    }
    for (j, &tj) in t.iter().enumerate() {
        s2.push(tj);
        e2.push(e[off + j] % tj);
    }
    (s2, e2)
}

/// The buffer, slot by slot: which logical index each slot holds.
pub(crate) fn materialize(shape: ArrayShape<'_>) -> Vec<Option<Vec<i64>>> {
    let p = shape.proto();
    let layout = p.layout.as_ref().unwrap();
    let dims: Vec<usize> = p.dimensions.iter().map(|&d| usize::try_from(d).unwrap()).collect();
    let n = dims.len();
    let padded: Vec<usize> = if layout.padded_dimensions.is_empty() {
        dims.clone()
    } else {
        layout.padded_dimensions.iter().map(|&d| usize::try_from(d).unwrap()).collect()
    };
    let m2m: Vec<usize> = layout.minor_to_major.iter().map(|&d| usize::try_from(d).unwrap()).collect();
    let physical: Vec<usize> = (0..n).map(|q| m2m[n - 1 - q]).collect();
    let mut s: Vec<usize> = physical.iter().map(|&d| padded[d]).collect();
    let mut buffer: Vec<Option<Vec<i64>>> = vec![None; s.iter().product()];
    let count: usize = dims.iter().product();
    for linear in 0..count {
        let index = unravel(&dims, linear);
        let e: Vec<usize> = physical.iter().map(|&d| index[d]).collect();
        buffer[row_major(&s, &e)] = Some(index.iter().map(|&i| i64::try_from(i).unwrap()).collect());
    }
    for tile in &layout.tiles {
        let new_shape = expand(&s, &vec![0; s.len()], &tile.dimensions).0;
        let mut next = vec![None; new_shape.iter().product()];
        for (slot, element) in buffer.into_iter().enumerate() {
            if element.is_some() {
                let (s2, e2) = expand(&s, &unravel(&s, slot), &tile.dimensions);
                assert_eq!(s2, new_shape);
                next[row_major(&s2, &e2)] = element;
            }
        }
        (s, buffer) = (new_shape, next);
    }
    let alignment = usize::try_from(layout.tail_padding_alignment_in_elements.max(1)).unwrap();
    buffer.resize(buffer.len().div_ceil(alignment) * alignment, None);
    buffer
}

fn model_config() -> ShapeConfig {
    ShapeConfig { max_rank: 6, max_dimension: 3, ..ShapeConfig::default() }
}

macro_rules! batch_agrees {
    ($m:expr, $indices:expr, $($n:literal)*) => {
        match $indices.first().map_or(0, Vec::len) {
            $($n => {
                let fixed: Vec<[i64; $n]> = $indices.iter().map(|i| <[i64; $n]>::try_from(i.as_slice()).unwrap()).collect();
                let mut out = vec![Slot(0); fixed.len()];
                $m.slots(&fixed, &mut out).unwrap();
                let mut fast = vec![Slot(0); fixed.len()];
                $m.slots_unchecked_bounds(&fixed, &mut fast);
                prop_assert_eq!(&out, &fast);
                out
            })*
            _ => unreachable!(),
        }
    };
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn physical_map_agrees_with_brute_force(s in array_shape(model_config())) {
        let shape = a(&s);
        let m = PhysicalMap::new(shape).unwrap();
        prop_assume!(m.storage_slots() <= 20_000);
        let model = materialize(shape);
        prop_assert_eq!(u64::try_from(model.len()).unwrap(), m.storage_slots());
        prop_assert_eq!(m.storage_bytes(), (m.storage_slots() * size::element_size_in_bits(shape)).div_ceil(8));
        let mut indices = vec![];
        let mut scratch = vec![0i64; shape.rank()];
        for (slot, element) in model.iter().enumerate() {
            let slot = Slot(u64::try_from(slot).unwrap());
            // Padding slots are exactly the unmapped ones; the rest hold one element each.
            prop_assert_eq!(&m.index_of_slot(slot).unwrap(), element);
            prop_assert_eq!(m.index_of_slot_into(slot, &mut scratch).unwrap(), element.is_some());
            if let Some(index) = element {
                // Linearization agrees with the model, checked and fast alike; slot → index → slot.
                prop_assert_eq!(m.slot(index).unwrap(), slot);
                prop_assert_eq!(m.slot_unchecked_bounds(index), slot);
                prop_assert_eq!(m.bit_offset(index).unwrap(), slot.get() * m.bits_per_slot());
                indices.push(index.clone());
            }
        }
        // Every element appears exactly once.
        prop_assert_eq!(i64::try_from(indices.len()).unwrap(), size::elements_in(shape).unwrap());
        prop_assert!(m.index_of_slot(Slot(m.storage_slots())).is_err());
        if !indices.is_empty() {
            let batch = batch_agrees!(m, indices, 0 1 2 3 4 5 6);
            let single: Vec<Slot> = indices.iter().map(|i| m.slot(i).unwrap()).collect();
            prop_assert_eq!(batch, single);
        }
    }

    #[test]
    fn untiled_index_util_agrees_with_brute_force(s in array_shape(ShapeConfig { tiles: false, ..model_config() })) {
        let shape = a(&s);
        for (slot, element) in materialize(shape).iter().enumerate() {
            if let Some(index) = element {
                let linear = xla_shape::index::multidimensional_index_to_linear_index(shape, index).unwrap();
                prop_assert_eq!(usize::try_from(linear).unwrap(), slot);
            }
        }
    }
}
