//! The physical mapping (spec `linearization.md` §0.5 "physical family", §3, §4): where each
//! element of an array lives in its buffer, and which element (if any) a buffer slot holds.
//!
//! It honours everything a layout says about memory: `minor_to_major`, legacy
//! `padded_dimensions`, every tile (nested, with `*` and rank extension),
//! `tail_padding_alignment_in_elements` and `element_size_in_bits`. It ignores `memory_space`,
//! `split_configs` and `dynamic_shape_metadata_prefix_bytes`, as every XLA linearizer does.
//!
//! [`PhysicalMap`] precomputes the mapping once from a validated [`ArrayShape`]; the free
//! functions here are one-shot conveniences that build a map per call.
//!
//! ```text
//!   multi-index ──slot──▶ Slot ──× bits_per_slot──▶ bit offset ──/8, %8──▶ (byte, shift)
//!        ▲                  │
//!        └─index_of_slot────┘   (None for a padding slot)
//! ```

mod compile;
mod forward;
mod general;
mod inverse;

pub use super::slot::Slot;

use crate::error::{ArgumentProblem, Error, RangeKind, Result};
use crate::memory::extent::{check_index, to_i64};
use crate::shape::ArrayShape;

use forward::Forward;
use inverse::Inverse;

/// The physical mapping of one array, precomputed: logical multi-index ⇄ [`Slot`].
///
/// The name says what it is — a map from the logical index space to the physical buffer — as
/// opposed to XLA's `IndexUtil` linear index, which ignores tiles ([`crate::index`]).
///
/// # Invariants
///
/// Established by [`PhysicalMap::new`] with checked arithmetic, and relied on by every query:
/// 1. `raw_slots` (the product of the expanded extents: `Π D`, `Π P` or `Π S_final`) and
///    `storage_slots = roundup(raw_slots, tail alignment)` are at most `i64::MAX`;
///    `storage_slots × bits_per_slot` fits in `u64`.
/// 2. For an in-bounds index, every intermediate value (a digit, a merged entry, a partial sum
///    of `digit × stride`) is below `raw_slots`, because strides are suffix products of the
///    expanded extents and every stage keeps or grows the product of its extents.
///
/// Hence, once an index has been bounds-checked, plain `u64` arithmetic cannot overflow and
/// per-index work needs no checks, no allocation (expanded rank ≤ 32) and no look at the proto.
/// The `*_unchecked_bounds` methods skip the bounds check and use wrapping arithmetic: an index
/// that breaks the promise gives an unspecified slot, never a panic or undefined behaviour.
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, physical::{PhysicalMap, Slot}, PrimitiveType};
/// // f32[3,5]{1,0:T(2,2)}: the docs' element (2,3) is slot 17; slot 9 is partial-tile padding.
/// let s = make_shape_with_layout(PrimitiveType::F32, &[3, 5], &LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]])).unwrap();
/// let map = PhysicalMap::new(s.as_array().unwrap()).unwrap();
/// assert_eq!(map.slot(&[2, 3]).unwrap(), Slot(17));
/// assert_eq!(map.index_of_slot(Slot(17)).unwrap(), Some(vec![2, 3]));
/// assert_eq!(map.index_of_slot(Slot(9)).unwrap(), None);
/// assert_eq!(map.storage_slots(), 24);
/// assert!(map.slot(&[3, 0]).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct PhysicalMap {
    bounds: Box<[u64]>,
    forward: Forward,
    inverse: Inverse,
    raw_slots: u64,
    storage_slots: u64,
    bits_per_slot: u64,
    storage_bytes: u64,
}

impl PhysicalMap {
    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.bounds.len()
    }

    /// Slots of the expanded shape before tail padding (`Π D`, `Π P` or `Π S_final`).
    pub fn raw_slots(&self) -> u64 {
        self.raw_slots
    }

    /// Slots of the whole buffer: [`raw_slots`](Self::raw_slots) rounded up to the tail
    /// alignment. Every slot the map hands out is below it.
    pub fn storage_slots(&self) -> u64 {
        self.storage_slots
    }

    /// Bits per slot: `element_size_in_bits`, or the element type's byte width × 8.
    pub fn bits_per_slot(&self) -> u64 {
        self.bits_per_slot
    }

    /// Bytes of the whole buffer: `ceil(storage_slots × bits_per_slot / 8)`.
    pub fn storage_bytes(&self) -> u64 {
        self.storage_bytes
    }

    /// The slot of an element.
    ///
    /// # Errors
    ///
    /// [`Error::IndexRank`] for a wrong length, [`Error::IndexOutOfBounds`] for an entry that is
    /// negative or not below its dimension (so every index of a zero-element array).
    #[inline]
    pub fn slot(&self, index: &[i64]) -> Result<Slot> {
        check_index(&self.bounds, index)?;
        Ok(self.slot_unchecked_bounds(index))
    }

    /// The slot of an element whose index the caller has already checked: `index.len()` equals
    /// the rank and `0 ≤ index[d] < dimensions[d]`.
    ///
    /// If the promise is broken the slot is unspecified (possibly beyond
    /// [`storage_slots`](Self::storage_slots)); the call still never panics, in any build.
    ///
    /// ```
    /// use xla_shape::{make::make_shape, physical::{PhysicalMap, Slot}, PrimitiveType};
    /// let s = make_shape(PrimitiveType::F32, &[10, 20]).unwrap();
    /// let map = PhysicalMap::new(s.as_array().unwrap()).unwrap();
    /// assert_eq!(map.slot_unchecked_bounds(&[3, 5]), Slot(65));
    /// let _garbage = map.slot_unchecked_bounds(&[-7]); // no panic
    /// ```
    #[inline]
    pub fn slot_unchecked_bounds(&self, index: &[i64]) -> Slot {
        Slot(self.forward.slot(index))
    }

    /// Slots of many elements: `out[k]` receives the slot of `indices[k]`. The rank is a
    /// compile-time constant `N`, so the per-index loop is fully unrolled.
    ///
    /// ```
    /// use xla_shape::{make::make_shape_with_dense_layout, physical::{PhysicalMap, Slot}, PrimitiveType};
    /// let s = make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[0, 1]).unwrap();
    /// let map = PhysicalMap::new(s.as_array().unwrap()).unwrap();
    /// let mut out = [Slot(0); 3];
    /// map.slots(&[[0, 0], [1, 0], [0, 1]], &mut out).unwrap();
    /// assert_eq!(out, [Slot(0), Slot(1), Slot(2)]);
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::IndexRank`] when `N` is not the rank, [`Error::InvalidArgument`] when `out` is
    /// not as long as `indices`, and [`Error::IndexOutOfBounds`] for the first bad index
    /// (`out` is then left unspecified).
    pub fn slots<const N: usize>(&self, indices: &[[i64; N]], out: &mut [Slot]) -> Result<()> {
        if N != self.bounds.len() {
            return Err(Error::IndexRank { expected: self.bounds.len(), actual: N });
        }
        if out.len() != indices.len() {
            return Err(Error::invalid_argument(ArgumentProblem::OutputLength {
                indices: indices.len(),
                slots: out.len(),
            }));
        }
        // The check rides along with the arithmetic, branch-free; the culprit is located only on
        // failure.
        if !self.forward.batch::<N, true>(self.raw_slots, &self.bounds, indices, out) {
            for index in indices {
                check_index(&self.bounds, index)?;
            }
        }
        Ok(())
    }

    /// [`slots`](Self::slots) without any check: indices must be in bounds, `N` must be the
    /// rank, and only `min(indices.len(), out.len())` slots are written. Broken promises give
    /// unspecified slots, never a panic.
    #[inline]
    pub fn slots_unchecked_bounds<const N: usize>(&self, indices: &[[i64; N]], out: &mut [Slot]) {
        self.forward.batch::<N, false>(self.raw_slots, &self.bounds, indices, out);
    }

    /// The bit offset of an element: `slot × bits_per_slot`. Its byte is `bit / 8` and its
    /// position in the byte `bit % 8`, counted from the least significant bit (elements are
    /// packed low bits first, as XLA's `PackIntN`). For widths that do not divide 8 (e.g. the
    /// F6 types with `E(6)`) the stream is dense and an element may straddle two bytes.
    ///
    /// ```
    /// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, physical::PhysicalMap, PrimitiveType};
    /// let s = make_shape_with_layout(PrimitiveType::S4, &[8], &LayoutSpec::new(&[0]).element_size_in_bits(4)).unwrap();
    /// let map = PhysicalMap::new(s.as_array().unwrap()).unwrap();
    /// assert_eq!(map.bit_offset(&[7]).unwrap(), 28); // byte 3, bits 4–7
    /// assert_eq!(map.storage_bytes(), 4);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`slot`](Self::slot).
    #[allow(clippy::arithmetic_side_effects)] // invariant 1: slot < storage_slots, whose bit count fits
    pub fn bit_offset(&self, index: &[i64]) -> Result<u64> {
        Ok(self.slot(index)?.0 * self.bits_per_slot)
    }

    /// The element a slot holds: `Some(index)`, or `None` for a padding slot (legacy padding,
    /// a partial tile, or the tail-padding region).
    ///
    /// # Errors
    ///
    /// [`Error::OutOfRange`] when `slot` is not below [`storage_slots`](Self::storage_slots).
    pub fn index_of_slot(&self, slot: Slot) -> Result<Option<Vec<i64>>> {
        let mut index = vec![0; self.bounds.len()];
        Ok(self.index_of_slot_into(slot, &mut index)?.then_some(index))
    }

    /// [`index_of_slot`](Self::index_of_slot) into a caller buffer, without allocating (expanded
    /// rank ≤ 32): returns `true` and fills `out` when the slot holds an element, `false` (with
    /// `out` unspecified) for a padding slot.
    ///
    /// ```
    /// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, physical::{PhysicalMap, Slot}, proto::PaddingValue, PrimitiveType};
    /// // The seed's padded example: f32[2,3]{0,1} padded to [3,5].
    /// let s = make_shape_with_layout(PrimitiveType::F32, &[2, 3],
    ///     &LayoutSpec::new(&[0, 1]).padded_dimensions(&[3, 5], PaddingValue::ZeroPad)).unwrap();
    /// let map = PhysicalMap::new(s.as_array().unwrap()).unwrap();
    /// let mut index = [0i64; 2];
    /// assert!(map.index_of_slot_into(Slot(4), &mut index).unwrap());
    /// assert_eq!(index, [1, 1]);
    /// assert!(!map.index_of_slot_into(Slot(2), &mut index).unwrap());
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::IndexRank`] when `out` is not as long as the rank, [`Error::OutOfRange`] when
    /// `slot` is not below [`storage_slots`](Self::storage_slots).
    #[inline]
    pub fn index_of_slot_into(&self, slot: Slot, out: &mut [i64]) -> Result<bool> {
        if out.len() != self.bounds.len() || slot.0 >= self.storage_slots {
            return Err(self.slot_query_error(slot, out.len()));
        }
        if slot.0 >= self.raw_slots {
            return Ok(false);
        }
        Ok(self.inverse.index_of(slot.0, out, &self.bounds))
    }

    #[cold]
    fn slot_query_error(&self, slot: Slot, len: usize) -> Error {
        if len == self.bounds.len() {
            Error::OutOfRange {
                what: RangeKind::Slot,
                value: i64::try_from(slot.0).unwrap_or(i64::MAX),
                bound: to_i64(self.storage_slots),
            }
        } else {
            Error::IndexRank { expected: self.bounds.len(), actual: len }
        }
    }
}

/// The slot of one element (builds a [`PhysicalMap`]; keep the map for many queries).
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, physical, PrimitiveType};
/// let s = make_shape_with_layout(PrimitiveType::F32, &[8, 4], &LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]])).unwrap();
/// assert_eq!(physical::physical_slot(s.as_array().unwrap(), &[3, 1]).unwrap().get(), 11);
/// ```
///
/// # Errors
///
/// As [`PhysicalMap::new`] and [`PhysicalMap::slot`].
pub fn physical_slot(shape: ArrayShape<'_>, index: &[i64]) -> Result<Slot> {
    PhysicalMap::new(shape)?.slot(index)
}

/// The element a slot holds, or `None` for padding (builds a [`PhysicalMap`]).
///
/// # Errors
///
/// As [`PhysicalMap::new`] and [`PhysicalMap::index_of_slot`].
pub fn index_of_slot(shape: ArrayShape<'_>, slot: Slot) -> Result<Option<Vec<i64>>> {
    PhysicalMap::new(shape)?.index_of_slot(slot)
}

/// The bit offset of one element (builds a [`PhysicalMap`]).
///
/// # Errors
///
/// As [`PhysicalMap::new`] and [`PhysicalMap::slot`].
pub fn bit_offset(shape: ArrayShape<'_>, index: &[i64]) -> Result<u64> {
    PhysicalMap::new(shape)?.bit_offset(index)
}

#[cfg(test)]
mod tests {
    use super::{Forward, Inverse, PhysicalMap, Slot};
    use crate::error::Error;
    use crate::make::{LayoutSpec, make_shape_with_layout};
    use crate::primitive::PrimitiveType;

    fn map(dims: &[i64], m2m: &[i64], tiles: &[&[i64]]) -> PhysicalMap {
        let s = make_shape_with_layout(PrimitiveType::F32, dims, &LayoutSpec::new(m2m).tiles(tiles)).unwrap();
        PhysicalMap::new(s.as_array().unwrap()).unwrap()
    }

    #[test]
    fn batches_agree_with_single_slots_on_every_form() {
        // Narrow strided (slots just below 2^32), wide strided, table, digits, general.
        let maps = [
            (map(&[65_536, 65_535], &[0, 1], &[]), [65_536, 65_535]),
            (map(&[100_000, 70_000], &[0, 1], &[]), [100_000, 70_000]),
            (map(&[1000, 1000], &[1, 0], &[&[8, 128]]), [1000, 1000]),
            (map(&[70_000, 300], &[1, 0], &[&[8, 128]]), [70_000, 300]),
            (map(&[7, 300], &[1, 0], &[&[i64::MIN, 128]]), [7, 300]),
        ];
        let forms: Vec<&str> = maps
            .iter()
            .map(|(m, _)| match m.forward {
                Forward::Strided { .. } if u32::try_from(m.raw_slots).is_ok() => "narrow",
                Forward::Strided { .. } => "wide",
                Forward::Table { .. } => "table",
                Forward::Digits { .. } => "digits",
                Forward::General(_) => "general",
            })
            .collect();
        assert_eq!(forms, ["narrow", "wide", "table", "digits", "general"]);
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for (m, dims) in &maps {
            let indices: Vec<[i64; 2]> = (0..500)
                .map(|_| {
                    std::array::from_fn(|d| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        i64::try_from(x % u64::try_from(dims[d]).unwrap()).unwrap()
                    })
                })
                .chain([[0, 0], [dims[0] - 1, dims[1] - 1]])
                .collect();
            let single: Vec<Slot> = indices.iter().map(|i| m.slot(i).unwrap()).collect();
            let (mut checked, mut fast) = (vec![Slot(0); indices.len()], vec![Slot(0); indices.len()]);
            m.slots(&indices, &mut checked).unwrap();
            m.slots_unchecked_bounds(&indices, &mut fast);
            assert_eq!(checked, single);
            assert_eq!(fast, single);
            // One bad entry anywhere fails the batch with the single check's error; 2^32 would
            // alias an in-bounds entry if only its low half were looked at.
            for bad in [-1, dims[1], 1 << 32, (1 << 32) + 1, i64::MIN, i64::MAX] {
                let mut batch = indices.clone();
                batch[250][1] = bad;
                let err = m.slots(&batch, &mut checked).unwrap_err();
                assert!(matches!(err, Error::IndexOutOfBounds { dimension: 1, index, .. } if index == bad), "{err}");
            }
        }
    }

    #[test]
    fn zero_element_batches_are_out_of_bounds() {
        let m = map(&[0, 5], &[1, 0], &[]);
        let mut out = [Slot(0)];
        assert!(matches!(m.slots(&[[0, 0]], &mut out), Err(Error::IndexOutOfBounds { dimension: 0, .. })));
        m.slots_unchecked_bounds(&[[0, 0]], &mut out); // no panic
    }

    #[test]
    fn slot_digits_decode_every_form() {
        // Direct (untiled), plain (untiled, with an extent-1 dimension no digit writes), tiled
        // digits with weights, and a rank extension (T(2,2) on a rank-1 array).
        for (m, rank, form) in [
            (map(&[3, 4, 5], &[0, 2, 1], &[]), 3, "direct"),
            (map(&[3, 1, 5], &[0, 2, 1], &[]), 3, "whole"),
            (map(&[10, 12], &[1, 0], &[&[4, 4], &[2, 1]]), 2, "mixed"),
            (map(&[6], &[0], &[&[2, 2]]), 1, "mixed"),
            (map(&[3, 5], &[1, 0], &[&[4, 8]]), 2, "padded"),
        ] {
            let found = match m.inverse {
                Inverse::Direct { .. } => "direct",
                Inverse::Whole { .. } => "whole",
                Inverse::Padded { .. } => "padded",
                Inverse::Mixed { .. } => "mixed",
                Inverse::General(_) => "general",
            };
            assert_eq!(found, form);
            let mut seen = 0;
            let mut out = vec![7i64; rank];
            for slot in 0..m.storage_slots() {
                if m.index_of_slot_into(Slot(slot), &mut out).unwrap() {
                    assert_eq!(m.slot(&out).unwrap(), Slot(slot));
                    seen += 1;
                }
            }
            assert_eq!(seen, m.bounds.iter().product::<u64>());
        }
    }
}
