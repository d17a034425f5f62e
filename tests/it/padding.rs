//! Legacy padding (vectors.md §2 groups 12 and 50, §9 S2, §10 X4 and X8).

use xla_shape::index::{
    dimension_stride, linear_index_to_multidimensional_index, multidimensional_index_to_linear_index,
};
use xla_shape::make::{LayoutSpec, make_shape_with_layout};
use xla_shape::padding::{Fill, fill_for, is_padded, padded_extents, padding_fill};
use xla_shape::proto::PaddingValue;
use xla_shape::{ArrayShape, Dim, Error, PhysicalMap, PrimitiveType, ShapeBuf, Slot, size};

fn padded(t: PrimitiveType, dims: &[i64], m2m: &[i64], p: &[i64], value: PaddingValue) -> ShapeBuf {
    make_shape_with_layout(t, dims, &LayoutSpec::new(m2m).padded_dimensions(p, value)).unwrap()
}

fn a(s: &ShapeBuf) -> ArrayShape<'_> {
    s.as_array().unwrap()
}

/// The buffer of the seed's `a b c / d e f`, rendered from the slot map ('0' = padding).
fn render(s: &ShapeBuf) -> String {
    let m = PhysicalMap::new(a(s)).unwrap();
    (0..m.storage_slots())
        .map(|slot| match m.index_of_slot(Slot(slot)).unwrap() {
            Some(i) => {
                ["abc", "def"][usize::try_from(i[0]).unwrap()].as_bytes()[usize::try_from(i[1]).unwrap()] as char
            }
            None => '0',
        })
        .collect()
}

#[test]
fn s2_seed_padded_memory() {
    // vectors.md S2 and group 12: column-major, padded to [3,5].
    let s = padded(PrimitiveType::F32, &[2, 3], &[0, 1], &[3, 5], PaddingValue::ZeroPad);
    assert_eq!(render(&s), "ad0be0cf0000000");
    let m = PhysicalMap::new(a(&s)).unwrap();
    for (index, slot) in [([0, 0], 0), ([1, 0], 1), ([0, 1], 3), ([1, 1], 4), ([0, 2], 6), ([1, 2], 7)] {
        assert_eq!(m.slot(&index).unwrap(), Slot(slot));
        assert_eq!(multidimensional_index_to_linear_index(a(&s), &index).unwrap(), i64::try_from(slot).unwrap());
        assert_eq!(m.index_of_slot(Slot(slot)).unwrap(), Some(index.to_vec()));
    }
    let padding: Vec<u64> = (0..15).filter(|&s| m.index_of_slot(Slot(s)).unwrap().is_none()).collect();
    assert_eq!(padding, [2, 5, 8, 9, 10, 11, 12, 13, 14]);
    assert!(m.index_of_slot(Slot(15)).is_err());
    assert_eq!([0, 1].map(|d| dimension_stride(a(&s), Dim(d)).unwrap()), [1, 3]);
    assert_eq!(size::byte_size_of_elements(a(&s)).unwrap(), 60);
    assert!(linear_index_to_multidimensional_index(a(&s), 2).is_err());
    assert_eq!(linear_index_to_multidimensional_index(a(&s), 4).unwrap(), [1, 1]);
    // Row-major counterpart [derived].
    let r = padded(PrimitiveType::F32, &[2, 3], &[1, 0], &[3, 5], PaddingValue::ZeroPad);
    assert_eq!(render(&r), "abc00def0000000");
    assert_eq!([0, 1].map(|d| dimension_stride(a(&r), Dim(d)).unwrap()), [5, 1]);
    let m = PhysicalMap::new(a(&r)).unwrap();
    for (index, slot) in [([0, 0], 0), ([0, 1], 1), ([0, 2], 2), ([1, 0], 5), ([1, 1], 6), ([1, 2], 7)] {
        assert_eq!(m.slot(&index).unwrap(), Slot(slot));
    }
    // Unpadded counterparts (S1) and equal padding (a no-op).
    let plain = |m2m: &[i64]| make_shape_with_layout(PrimitiveType::F32, &[2, 3], &LayoutSpec::new(m2m)).unwrap();
    assert_eq!(render(&plain(&[0, 1])), "adbecf");
    assert_eq!(render(&plain(&[1, 0])), "abcdef");
    let same = padded(PrimitiveType::F32, &[2, 3], &[0, 1], &[2, 3], PaddingValue::ZeroPad);
    assert_eq!(render(&same), "adbecf");
    assert!(!is_padded(a(&same)) && is_padded(a(&s)));
}

#[test]
fn x4_and_group_12_sizes() {
    let s = padded(PrimitiveType::F32, &[2, 3], &[0, 1], &[3, 5], PaddingValue::ZeroPad);
    assert_eq!(size::elements_in(a(&s)).unwrap(), 6);
    assert_eq!(size::byte_size_of_elements(a(&s)).unwrap(), 60);
    assert_eq!(size::storage_slots(a(&s)).unwrap(), 15);
    assert_eq!(dimension_stride(a(&s), Dim(1)).unwrap(), 3);
    assert_eq!(size::unpacked_byte_strides(a(&s)).unwrap(), [4, 12]);
    assert_eq!(padded_extents(a(&s)).unwrap(), [3, 5]);
    // Legacy ByteSizeOf (2018).
    let big = padded(PrimitiveType::F32, &[10, 20], &[1, 0], &[15, 21], PaddingValue::ZeroPad);
    assert_eq!(size::byte_size_of(big.view(), 8).unwrap(), 1260);
}

#[test]
fn group_50_is_padded() {
    let p = |pd: &[i64]| padded(PrimitiveType::F32, &[2, 3, 4], &[2, 1, 0], pd, PaddingValue::ZeroPad);
    assert!(!is_padded(a(&p(&[2, 3, 4]))));
    assert!(is_padded(a(&p(&[2, 14, 42]))));
}

#[test]
fn padding_composes_with_element_size_and_tail() {
    // linearization.md §3.1: E → bit offsets of the padded slot; tail padding rounds Π P up.
    let spec = LayoutSpec::new(&[0, 1])
        .padded_dimensions(&[3, 5], PaddingValue::ZeroPad)
        .element_size_in_bits(4)
        .tail_padding_alignment_in_elements(4);
    let s = make_shape_with_layout(PrimitiveType::S4, &[2, 3], &spec).unwrap();
    let m = PhysicalMap::new(a(&s)).unwrap();
    assert_eq!((m.raw_slots(), m.storage_slots(), m.storage_bytes()), (15, 16, 8));
    assert_eq!(m.bit_offset(&[1, 2]).unwrap(), 28);
    assert_eq!(m.index_of_slot(Slot(15)).unwrap(), None);
}

#[test]
fn x8_fill_values() {
    use PrimitiveType as T;
    let lowest = |t| fill_for(PaddingValue::LowestPad as i32, t);
    let highest = |t| fill_for(PaddingValue::HighestPad as i32, t);
    assert_eq!(lowest(T::S8).unwrap(), Fill::Int(-128));
    assert_eq!(lowest(T::S1).unwrap(), Fill::Int(-1));
    assert_eq!(lowest(T::U8).unwrap(), Fill::Int(0));
    assert_eq!(lowest(T::PRED).unwrap(), Fill::Bool(false));
    assert_eq!(lowest(T::F32).unwrap(), Fill::NegInfinity);
    assert_eq!(lowest(T::F8E4M3FN).unwrap(), Fill::MinFinite(-448.0));
    assert_eq!(lowest(T::F4E2M1FN).unwrap(), Fill::MinFinite(-6.0));
    assert_eq!(lowest(T::F8E4M3FNUZ).unwrap(), Fill::MinFinite(-240.0));
    assert_eq!(lowest(T::F8E5M2FNUZ).unwrap(), Fill::MinFinite(-57344.0));
    assert_eq!(lowest(T::F8E4M3B11FNUZ).unwrap(), Fill::MinFinite(-30.0));
    assert_eq!(lowest(T::F6E3M2FN).unwrap(), Fill::MinFinite(-28.0));
    assert_eq!(lowest(T::F8E8M0FNU).unwrap(), Fill::MinFinite(2f64.powi(-127)));
    assert!(matches!(lowest(T::C64), Err(Error::InvalidArgument(_))));
    assert!(highest(T::C128).is_err());
    assert_eq!(highest(T::S8).unwrap(), Fill::Int(127));
    assert_eq!(highest(T::U16).unwrap(), Fill::Int(65535));
    assert_eq!(highest(T::U64).unwrap(), Fill::Int(i128::from(u64::MAX)));
    assert_eq!(highest(T::BF16).unwrap(), Fill::Infinity);
    assert_eq!(highest(T::F6E2M3FN).unwrap(), Fill::MaxFinite(7.5));
    assert_eq!(highest(T::F8E8M0FNU).unwrap(), Fill::MaxFinite(2f64.powi(127)));
    assert_eq!(fill_for(PaddingValue::OnePad as i32, T::PRED).unwrap(), Fill::Bool(true));
    assert_eq!(fill_for(PaddingValue::OnePad as i32, T::C64).unwrap(), Fill::One);
    assert_eq!(fill_for(PaddingValue::ZeroPad as i32, T::F8E8M0FNU).unwrap(), Fill::ZeroBitPattern);
    assert_eq!(Fill::ZeroBitPattern.as_f64(), Some(2f64.powi(-127)));
    assert_eq!(fill_for(PaddingValue::ZeroPad as i32, T::F32).unwrap(), Fill::Zero);
    assert_eq!(fill_for(PaddingValue::InvalidPad as i32, T::F32).unwrap(), Fill::Unspecified);
    assert_eq!(fill_for(PaddingValue::UnknownPad as i32, T::S4).unwrap(), Fill::Anything);
    assert!(fill_for(9, T::F32).is_err());
    assert!(fill_for(1, T::TUPLE).is_err());
    let s = padded(T::U8, &[2], &[0], &[4], PaddingValue::HighestPad);
    assert_eq!(padding_fill(a(&s)).unwrap(), Fill::Int(255));
    let unpadded = xla_shape::make::make_shape(T::F32, &[2]).unwrap();
    assert_eq!(padding_fill(a(&unpadded)).unwrap(), Fill::Unspecified);
}
