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

use crate::error::{ArgumentProblem, Quantity, RangeKind};
use std::fmt;

use crate::error::{Error, FieldPath, Result};
use crate::shape::ArrayShape;
use crate::tiling::{Digit, Plan};

/// A physical offset into an array's buffer, counted in slots (one element per slot; the bit
/// offset is `slot × bits_per_slot`). Kept apart from logical linear indices and sizes.
///
/// Every slot a [`PhysicalMap`] hands out is below its [`storage_slots`](PhysicalMap::storage_slots),
/// which is at most `i64::MAX`, so converting a slot to `i64` or to a buffer offset never
/// loses information on 64-bit targets.
///
/// ```
/// use xla_shape::physical::Slot;
/// assert_eq!(Slot(17).get(), 17);
/// assert_eq!(Slot(17).to_string(), "17");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(transparent)]
pub struct Slot(pub u64);

impl Slot {
    /// The offset in slots.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<Slot> for u64 {
    fn from(slot: Slot) -> u64 {
        slot.0
    }
}

/// An index entry that is known (or promised) to be non-negative, as `u64`. A negative value
/// wraps to a huge one, which every bounds check rejects and the unchecked paths tolerate.
#[allow(clippy::cast_sign_loss)]
pub(crate) const fn to_u64(value: i64) -> u64 {
    value as u64
}

/// Checks an index against the bounds: `index.len()` is the rank and `0 ≤ index[d] < bounds[d]`.
///
/// # Errors
///
/// [`Error::IndexRank`], or [`Error::IndexOutOfBounds`] for the first bad entry.
#[inline]
pub(crate) fn check_index(bounds: &[u64], index: &[i64]) -> Result<()> {
    if index.len() == bounds.len() && index.iter().zip(bounds).all(|(&i, &b)| to_u64(i) < b) {
        Ok(())
    } else {
        Err(index_error(bounds, index))
    }
}

/// The error [`check_index`] reports, kept out of the checking path.
#[cold]
fn index_error(bounds: &[u64], index: &[i64]) -> Error {
    match index.iter().zip(bounds).enumerate().find(|&(_, (&i, &b))| to_u64(i) >= b) {
        Some((dimension, (&entry, &bound))) if index.len() == bounds.len() => {
            Error::IndexOutOfBounds { dimension, index: entry, bound: to_i64(bound) }
        }
        _ => Error::IndexRank { expected: bounds.len(), actual: index.len() },
    }
}

/// A value known to be at most `i64::MAX` (every count, slot and extent after construction).
#[allow(clippy::cast_possible_wrap)]
pub(crate) const fn to_i64(value: u64) -> i64 {
    value as i64
}

/// Division by an invariant divisor without a divide instruction, exact for every dividend
/// below 2^63 — which all slots and index entries are, by the map's invariant.
///
/// A power of two `2^k` is a shift. Otherwise (Granlund–Montgomery) with `l = ceil(log2 d) ≥ 2`
/// and `m = ceil(2^(63+l) / d) < 2^64`, `q = mulhi(n, m) >> (l − 1)`: `n·m / 2^(63+l)` exceeds
/// `n/d` by less than `n / 2^(63+l) < 2^-l ≤ 1/d`, which never reaches the next integer. Both
/// cases run the same branch-free instructions (`pass` selects `n` instead of the product).
#[derive(Debug, Clone, Copy)]
struct Divisor {
    value: u64,
    magic: u64,
    pass: u64,
    shift: u32,
}

impl Divisor {
    // `d ≥ 1`, and `d ≥ 3` past the power-of-two case, so `l = 64 − leading_zeros(d − 1)` is in
    // 2..=64: `l − 1` does not underflow and the shift `63 + l ≤ 127` fits a `u128`.
    #[allow(clippy::arithmetic_side_effects)]
    fn new(divisor: u64) -> Self {
        let d = divisor.max(1);
        if d.is_power_of_two() {
            return Self { value: d, magic: 0, pass: u64::MAX, shift: d.trailing_zeros() };
        }
        let l = 64 - (d - 1).leading_zeros();
        let magic = (1u128 << (63 + l)).div_ceil(u128::from(d));
        Self { value: d, magic: u64::try_from(magic).unwrap_or(u64::MAX), pass: 0, shift: l - 1 }
    }

    /// `n / divisor` for `n < 2^63`; a wrong quotient (never a panic) above.
    #[inline]
    #[allow(clippy::cast_possible_truncation)] // the high half of a 128-bit product
    #[allow(clippy::arithmetic_side_effects)] // a product of two u64 values fits in u128
    fn div(self, n: u64) -> u64 {
        let high = ((u128::from(n) * u128::from(self.magic)) >> 64) as u64;
        (high | (n & self.pass)) >> self.shift
    }
}

/// One non-top digit of a logical index: `q = x / radix`, contributes `(x − q·radix)·stride`.
#[derive(Debug, Clone, Copy)]
struct Step {
    radix: Divisor,
    stride: u64,
}

/// One digit of a slot, most minor first, and where it goes in the multi-index.
///
/// Digit `k` is `q_k − extent_k · q_{k+1}` with `q_k = slot / Π_{j<k} extent_j`: every quotient
/// comes straight from the slot (`above` divides by `Π_{j≤k} extent_j`), so the digits do not
/// wait on one another as a chain of divisions would. Exact because
/// `⌊⌊s/a⌋/b⌋ = ⌊s/(a·b)⌋` and [`Divisor`] is exact below 2^63, which every slot is
/// (invariant 1). The digit lands branch-free:
/// `index[dim] = (index[dim] & keep) + digit × weight`.
#[derive(Debug, Clone, Copy)]
struct SlotDigit {
    above: Divisor,
    extent: u64,
    dim: usize,
    weight: u64,
    /// 0 for the first digit of a dimension (it sets the entry, so nothing clears the index
    /// beforehand), all ones for the later ones (they add).
    keep: i64,
    /// All ones for a rank-extension digit (an element has 0 there; `weight` is 0), else 0.
    phantom: u64,
}

#[derive(Debug, Clone)]
enum Forward {
    /// No tiles (plain or legacy padded): `slot = Σ I[d] · strides[d]`.
    Strided,
    /// Tiles that only refine each logical index into mixed-radix digits (no `*`, every
    /// sub-tile divides what it splits; this covers XLA's `(8,128)`, `(8,128)(2,1)`, …):
    /// `steps[ranges[d]]` are dimension d's lower digits, `strides[d]` its top digit's stride.
    Digits { ranges: Box<[(usize, usize)]>, steps: Box<[Step]> },
    /// The `Digits` case with small dimensions (`Σ D ≤ TABLE_LIMIT`): each dimension's
    /// contribution precomputed, `slot = Σ offsets[starts[d] + I[d]]` — as cheap as `Strided`.
    Table { starts: Box<[usize]>, offsets: Box<[u64]> },
    /// Anything else (`*`, sub-tiles that add padding): replays the tiles on a scratch buffer.
    General(Box<General>),
}

#[derive(Debug, Clone)]
struct General {
    plan: Plan,
    /// The logical dimension at each physical position, most major first.
    physical_dims: Box<[usize]>,
    /// Row-major strides of the final expanded shape.
    final_strides: Box<[u64]>,
    /// The final extents as divisors, most major first.
    final_extents: Box<[Divisor]>,
}

/// The most table entries (`Σ D`, 8 bytes each) a `Table` map may hold.
const TABLE_LIMIT: u64 = 1 << 16;

/// Scratch entries kept on the stack by the general path; wider expansions use the heap.
const SCRATCH: usize = 32;

#[allow(clippy::indexing_slicing)] // widest ≤ SCRATCH on that branch
fn with_scratch<R>(widest: usize, f: impl FnOnce(&mut [u64], &mut [u64]) -> R) -> R {
    if widest <= SCRATCH {
        let (mut a, mut b) = ([0u64; SCRATCH], [0u64; SCRATCH]);
        f(&mut a[..widest], &mut b[..widest])
    } else {
        f(&mut vec![0; widest], &mut vec![0; widest])
    }
}

// Both methods get scratch buffers of `plan.widest` entries (`with_scratch`), which is what
// `Stage::apply`/`unapply` require, and every length they return or start from (the physical
// rank, a stage's output length, the final expanded rank) is at most `widest`.
impl General {
    // Kept out of line so the scratch buffers never weigh on the fast paths' loops.
    #[inline(never)]
    #[allow(clippy::indexing_slicing)] // len ≤ widest == values.len(): see above
    fn slot(&self, index: &[i64]) -> u64 {
        with_scratch(self.plan.widest, |values, scratch| {
            for (v, &d) in values.iter_mut().zip(self.physical_dims.iter()) {
                *v = to_u64(index.get(d).copied().unwrap_or(0));
            }
            let mut len = self.physical_dims.len();
            for stage in &self.plan.stages {
                len = stage.apply(values, len, scratch);
            }
            values[..len]
                .iter()
                .zip(self.final_strides.iter())
                .fold(0u64, |acc, (&v, &s)| acc.wrapping_add(v.wrapping_mul(s)))
        })
    }

    /// Needs `slot < raw_slots` and `out.len() == rank` (checked by
    /// [`PhysicalMap::index_of_slot_into`]).
    // Every length is ≤ widest == values.len() (see above), and every `d` of `physical_dims` is
    // a logical dimension < rank == out.len(). `n < raw_slots ≤ i64::MAX` (invariant 1), so
    // `Divisor::div` is exact and `q · extent ≤ n`.
    #[inline(never)]
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    fn index_of(&self, slot: u64, out: &mut [i64]) -> bool {
        with_scratch(self.plan.widest, |values, scratch| {
            let mut n = slot;
            let len = self.final_extents.len();
            for (v, extent) in values[..len].iter_mut().zip(self.final_extents.iter()).rev() {
                let q = extent.div(n);
                *v = n - q * extent.value;
                n = q;
            }
            let mut len = len;
            for stage in self.plan.stages.iter().rev() {
                match stage.unapply(values, len, scratch) {
                    Some(l) => len = l,
                    None => return false,
                }
            }
            for (&v, &d) in values[..len].iter().zip(self.physical_dims.iter()) {
                out[d] = to_i64(v);
            }
            true
        })
    }
}

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
    strides: Box<[u64]>,
    forward: Forward,
    /// The slot's digits, most minor first, for every form but `General` (extent-1 digits left
    /// out: they are always 0).
    slot_digits: Box<[SlotDigit]>,
    /// Dimensions no slot digit writes (every digit has extent 1): always 0 in an element.
    unwritten: Box<[usize]>,
    /// Every slot digit is a whole index entry (weight 1, one digit per dimension, no rank
    /// extension): untiled layouts, padded or not.
    plain: bool,
    /// `plain`, every dimension written and nothing to check: every raw slot decodes straight
    /// into an element (untiled, unpadded layouts without extent-1 dimensions).
    direct: bool,
    /// Whether a decoded index can leave the bounds (legacy padding, or a top digit of a tiled
    /// dimension); for a plain layout every digit is below its dimension already.
    check_decoded: bool,
    raw_slots: u64,
    storage_slots: u64,
    bits_per_slot: u64,
    storage_bytes: u64,
}

fn overflow(what: Quantity) -> Error {
    Error::Overflow { path: FieldPath::root().field("layout"), what }
}

/// Row-major strides of `extents` (most major first); all 0 when the product is 0.
// When raw_slots > 0 every extent is ≥ 1, so each suffix product is at most raw_slots, the full
// product, which `Plan::raw_slots` computed with checks (invariant 2).
#[allow(clippy::arithmetic_side_effects)]
fn row_major_strides(extents: &[u64], raw_slots: u64) -> Vec<u64> {
    let mut strides = vec![0; extents.len()];
    if raw_slots > 0 {
        let mut s = 1u64;
        for (stride, &e) in strides.iter_mut().zip(extents).rev() {
            *stride = s;
            s *= e;
        }
    }
    strides
}

impl PhysicalMap {
    /// Precomputes the mapping of a validated array.
    ///
    /// # Errors
    ///
    /// * [`Error::UnboundedDimension`] for a `?` dimension;
    /// * [`Error::InvalidLayout`] with [`crate::error::LayoutProblem::TrailingCombine`] for a `*`
    ///   in a tile's last position;
    /// * [`Error::Overflow`] when the expanded shape, the slot count or the bit count does not fit
    ///   (invariant 1).
    pub fn new(shape: ArrayShape<'_>) -> Result<Self> {
        let bounds = crate::padding::bounds(shape, "linearization")?;
        let plan = crate::tiling::plan_of(shape, "linearization")?;
        let raw_slots = plan.raw_slots()?;
        let alignment = shape.layout().map_or(1, |l| l.tail_padding_alignment_in_elements());
        let storage_slots = raw_slots
            .div_ceil(alignment)
            .checked_mul(alignment)
            .filter(|&s| i64::try_from(s).is_ok())
            .ok_or_else(|| overflow(Quantity::StorageSlots))?;
        let bits_per_slot = crate::size::element_size_in_bits(shape);
        let storage_bytes =
            storage_slots.checked_mul(bits_per_slot).ok_or_else(|| overflow(Quantity::StorageBits))?.div_ceil(8);
        let physical_dims: Box<[usize]> = shape.minor_to_major().iter().rev().map(crate::shape::Dim::index).collect();
        let final_strides = row_major_strides(&plan.extents, raw_slots);
        let rank = bounds.len();
        let mut map = Self {
            bounds: bounds.into(),
            strides: vec![0; rank].into(),
            forward: Forward::Strided,
            slot_digits: Box::default(),
            unwritten: Box::default(),
            plain: false,
            direct: false,
            check_decoded: !plan.stages.is_empty() || crate::padding::is_padded(shape),
            raw_slots,
            storage_slots,
            bits_per_slot,
            storage_bytes,
        };
        let digits = if plan.stages.is_empty() {
            Some(physical_dims.iter().map(|&dim| Digit::Of { dim, weight: 1, radix: None }).collect())
        } else {
            plan.digits(&physical_dims)
        };
        match digits.and_then(|d| map.compile_digits(&d, &plan.extents, &final_strides)) {
            Some(forward) => map.forward = forward,
            None => {
                map.forward = Forward::General(Box::new(General {
                    final_extents: plan.extents.iter().map(|&e| Divisor::new(e)).collect(),
                    final_strides: final_strides.into(),
                    physical_dims,
                    plan,
                }));
            }
        }
        Ok(map)
    }

    /// Sets `strides`/`slot_digits` for the mixed-radix case and returns its forward form, or
    /// `None` if the digits of some dimension do not form a mixed-radix chain.
    fn compile_digits(&mut self, digits: &[Digit], extents: &[u64], strides: &[u64]) -> Option<Forward> {
        let rank = self.bounds.len();
        let mut per_dim: Vec<Vec<(u64, Option<u64>, u64)>> = vec![Vec::new(); rank];
        let mut slot_digits = Vec::new();
        let mut written = vec![false; rank];
        // Π of the extents so far. Bounded by raw_slots (invariant 2) only when no extent is 0:
        // f32[0,4324,1299999994,…] has raw_slots 0 while the minor extents overflow, so the
        // product is checked and an overflow falls back to the general form.
        let mut above = 1u64;
        for ((digit, &extent), &stride) in digits.iter().zip(extents).zip(strides).rev() {
            let (dim, weight, phantom) = match *digit {
                Digit::Phantom => (0, 0, u64::MAX),
                Digit::Of { dim, weight, radix } => {
                    if radix != Some(1) {
                        per_dim.get_mut(dim)?.push((weight, radix, stride));
                    }
                    (dim, weight, 0)
                }
            };
            if extent != 1 {
                above = above.checked_mul(extent)?;
                let seen = phantom != 0 || std::mem::replace(written.get_mut(dim)?, true);
                let keep = if seen { -1 } else { 0 };
                slot_digits.push(SlotDigit { above: Divisor::new(above), extent, dim, weight, keep, phantom });
            }
        }
        self.unwritten = written.iter().enumerate().filter(|&(_, &w)| !w).map(|(d, _)| d).collect();
        self.plain = slot_digits.iter().all(|d| d.weight == 1 && d.keep == 0 && d.phantom == 0);
        self.direct = self.plain && self.unwritten.is_empty() && !self.check_decoded;
        let mut ranges = Vec::with_capacity(rank);
        let mut steps = Vec::new();
        for (d, mut chain) in per_dim.into_iter().enumerate() {
            chain.sort_by_key(|&(weight, _, _)| weight);
            let start = steps.len();
            let mut expected = 1u64;
            let (&(top_weight, top_radix, top_stride), lower) = chain.split_last()?;
            for &(weight, radix, stride) in lower {
                let radix = radix?;
                if weight != expected {
                    return None;
                }
                expected = expected.checked_mul(radix)?;
                steps.push(Step { radix: Divisor::new(radix), stride });
            }
            if top_weight != expected || top_radix.is_some() {
                return None;
            }
            ranges.push((start, steps.len()));
            *self.strides.get_mut(d)? = top_stride;
        }
        self.slot_digits = slot_digits.into();
        if steps.is_empty() {
            return Some(Forward::Strided);
        }
        if self.bounds.iter().sum::<u64>() > TABLE_LIMIT {
            return Some(Forward::Digits { ranges: ranges.into(), steps: steps.into() });
        }
        let mut starts = Vec::with_capacity(rank);
        let mut offsets = Vec::new();
        for (d, &bound) in self.bounds.iter().enumerate() {
            starts.push(offsets.len());
            let (range, top) = (ranges.get(d..=d)?, self.strides.get(d..=d)?);
            offsets.extend((0..bound).map(|x| digits_slot(range, &steps, top, &[to_i64(x)])));
        }
        Some(Forward::Table { starts: starts.into(), offsets: offsets.into() })
    }

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
        Slot(match &self.forward {
            Forward::Strided => index
                .iter()
                .zip(self.strides.iter())
                .fold(0u64, |acc, (&i, &s)| acc.wrapping_add(to_u64(i).wrapping_mul(s))),
            Forward::Digits { ranges, steps } => digits_slot(ranges, steps, &self.strides, index),
            Forward::Table { starts, offsets } => table_slot(starts, offsets, index),
            Forward::General(general) => general.slot(index),
        })
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
        if !self.batch::<N, true>(indices, out) {
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
        self.batch::<N, false>(indices, out);
    }

    /// The batch work: the map's per-dimension data copied into fixed `N` arrays, then
    /// [`batch_loop`] with the slot arithmetic of the forward form. With `CHECK`, returns
    /// whether every index was in bounds (`out` is then valid); without, `true`.
    #[inline]
    fn batch<const N: usize, const CHECK: bool>(&self, indices: &[[i64; N]], out: &mut [Slot]) -> bool {
        let last = fixed::<u64, N>(&self.bounds).map(|b| b.wrapping_sub(1));
        match &self.forward {
            // Every stride and every in-bounds entry is below 2^32 when the slots are: then
            // 32×32→64-bit products, which vectorize (`pmuludq`). An entry that loses bits is
            // out of bounds (flagged, or promised away). The sum wraps: out-of-bounds entries
            // (computed before the check reports them) can push it past 2^64.
            Forward::Strided if u32::try_from(self.raw_slots).is_ok() => {
                let strides = fixed::<u64, N>(&self.strides);
                batch_loop::<N, CHECK>(indices, out, last, move |index| {
                    index.iter().zip(&strides).fold(0u64, |acc, (&i, &s)| acc.wrapping_add(mul_low_u32(to_u64(i), s)))
                })
            }
            Forward::Strided => {
                let strides = fixed::<u64, N>(&self.strides);
                batch_loop::<N, CHECK>(indices, out, last, move |index| {
                    index.iter().zip(&strides).fold(0u64, |acc, (&i, &s)| acc.wrapping_add(to_u64(i).wrapping_mul(s)))
                })
            }
            Forward::Table { starts, offsets } => {
                // Dimension d's own entries: a look-up past them reads nothing and adds 0.
                let tables: [&[u64]; N] = std::array::from_fn(|d| {
                    let start = starts.get(d).copied().unwrap_or(0);
                    let len = last.get(d).map_or(0, |&l| to_usize(l.wrapping_add(1)));
                    offsets.get(start..start.saturating_add(len)).unwrap_or_default()
                });
                batch_loop::<N, CHECK>(indices, out, last, move |index| {
                    index.iter().zip(&tables).fold(0u64, |acc, (&i, table)| {
                        acc.wrapping_add(table.get(to_usize(to_u64(i))).copied().unwrap_or(0))
                    })
                })
            }
            Forward::Digits { .. } | Forward::General(_) => {
                batch_loop::<N, CHECK>(indices, out, last, |index| self.slot_unchecked_bounds(index).0)
            }
        }
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
        Ok(match &self.forward {
            Forward::General(general) => general.index_of(slot.0, out),
            _ if self.direct => {
                self.decode::<true>(slot.0, out);
                true
            }
            _ => self.index_of_raw_slot(slot.0, out),
        })
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

    /// [`index_of_slot_into`](Self::index_of_slot_into) for `n < raw_slots` and a form with
    /// slot digits, beyond the plain case it handles inline.
    #[inline(never)]
    #[allow(clippy::indexing_slicing)] // unwritten holds dimensions < rank == out.len() (checked by the caller)
    fn index_of_raw_slot(&self, n: u64, out: &mut [i64]) -> bool {
        for &d in &self.unwritten {
            out[d] = 0;
        }
        let stray = if self.plain { self.decode::<true>(n, out) } else { self.decode::<false>(n, out) };
        stray == 0 && (!self.check_decoded || out.iter().zip(self.bounds.iter()).all(|(&i, &b)| to_u64(i) < b))
    }

    /// Writes the slot digits of `n < raw_slots` into the index; returns the non-zero bits of
    /// rank-extension digits (0 for an element). `PLAIN` ([`PhysicalMap::plain`]): every digit
    /// is a whole entry of its own dimension.
    #[inline]
    // `n < raw_slots ≤ i64::MAX` (invariant 1): `Divisor::div` is exact, so `above` is
    // `below / extent` and `below − above · extent` is the remainder, no overflow, no underflow.
    #[allow(clippy::arithmetic_side_effects)]
    fn decode<const PLAIN: bool>(&self, n: u64, out: &mut [i64]) -> u64 {
        let put = |out: &mut [i64], digit: &SlotDigit, value: u64| {
            if PLAIN {
                if let Some(entry) = out.get_mut(digit.dim) {
                    *entry = to_i64(value);
                }
                return 0;
            }
            if let Some(entry) = out.get_mut(digit.dim) {
                // A sum beyond i64::MAX wraps negative and fails the caller's bounds check.
                *entry = (*entry & digit.keep).wrapping_add(to_i64(value.wrapping_mul(digit.weight)));
            }
            value & digit.phantom
        };
        let Some((top, lower)) = self.slot_digits.split_last() else { return 0 };
        let (mut below, mut stray) = (n, 0);
        for digit in lower {
            let above = digit.above.div(n);
            stray |= put(out, digit, below - above * digit.extent);
            below = above;
        }
        // n < raw_slots: what is left is below the top extent.
        stray | put(out, top, below)
    }
}

/// The mixed-radix forward map: each index entry split into its digits, each digit scaled by its
/// stride. Wrapping arithmetic: exact for in-bounds input (invariant 2), panic-free otherwise.
#[inline]
fn digits_slot(ranges: &[(usize, usize)], steps: &[Step], top_strides: &[u64], index: &[i64]) -> u64 {
    let mut slot = 0u64;
    for ((&i, &(start, end)), &top) in index.iter().zip(ranges).zip(top_strides) {
        let mut x = to_u64(i);
        for step in steps.get(start..end).unwrap_or_default() {
            let q = step.radix.div(x);
            let digit = x.wrapping_sub(q.wrapping_mul(step.radix.value));
            slot = slot.wrapping_add(digit.wrapping_mul(step.stride));
            x = q;
        }
        slot = slot.wrapping_add(x.wrapping_mul(top));
    }
    slot
}

/// The batch loop: `out[k] = slot(indices[k])`, and with `CHECK` the bounds check of every
/// entry riding along branch-free (`last[d] = bound[d] − 1`, wrapping). Out of line, so the
/// per-dimension arrays arrive as plain values the vectorizer keeps in registers. Returns
/// whether no entry was out of bounds (always `true` without `CHECK`).
#[inline(never)]
fn batch_loop<const N: usize, const CHECK: bool>(
    indices: &[[i64; N]],
    out: &mut [Slot],
    last: [u64; N],
    slot: impl Fn(&[i64; N]) -> u64,
) -> bool {
    let mut flags = [0u64; N];
    for (index, o) in indices.iter().zip(out.iter_mut()) {
        if CHECK {
            flag_out_of_bounds(&mut flags, index, &last);
        }
        *o = Slot(slot(index));
    }
    none_flagged(&flags)
}

/// Flags, lane by lane, the entries of `index` outside `0 ≤ i < last + 1`: the top bit of
/// `i | (last − i)` (wrapping) is set exactly for those. A negative `i` sets it itself; for
/// `0 ≤ i < 2^63`, `last − i` wraps to at least `2^63` exactly when `i > last`, and a bound of 0
/// makes `last = 2^64 − 1`, which flags every `i`. Lane-wise ORs keep the check branch-free and
/// let it vectorize.
#[inline]
fn flag_out_of_bounds<const N: usize>(flags: &mut [u64; N], index: &[i64; N], last: &[u64; N]) {
    for ((flag, &i), &l) in flags.iter_mut().zip(index).zip(last) {
        *flag |= to_u64(i) | l.wrapping_sub(to_u64(i));
    }
}

/// Whether no lane of [`flag_out_of_bounds`] flagged an entry.
#[inline]
fn none_flagged<const N: usize>(flags: &[u64; N]) -> bool {
    flags.iter().fold(0, |acc, &f| acc | f) >> 63 == 0
}

/// A count or index as `usize` (`usize::MAX` if it does not fit, which no table reaches).
#[inline]
fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// The low 32 bits of a value, widened back.
#[inline]
const fn low_u32(value: u64) -> u64 {
    value & 0xFFFF_FFFF
}

/// The product of the low 32 bits of two values.
#[inline]
#[allow(clippy::arithmetic_side_effects)] // both factors are below 2^32, so the product fits in u64
const fn mul_low_u32(a: u64, b: u64) -> u64 {
    low_u32(a) * low_u32(b)
}

/// A per-dimension slice as a fixed array (zeros if it is shorter; callers check the length).
fn fixed<T: Copy + Default, const N: usize>(values: &[T]) -> [T; N] {
    values.get(..N).and_then(|v| <[T; N]>::try_from(v).ok()).unwrap_or([T::default(); N])
}

/// The table forward map. An out-of-range entry reads no table entry and adds 0.
#[inline]
fn table_slot(starts: &[usize], offsets: &[u64], index: &[i64]) -> u64 {
    index.iter().zip(starts).fold(0u64, |acc, (&i, &start)| {
        let k = start.wrapping_add(usize::try_from(i).unwrap_or(usize::MAX));
        acc.wrapping_add(offsets.get(k).copied().unwrap_or(0))
    })
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
    use super::{Divisor, Forward, PhysicalMap, Slot, flag_out_of_bounds, none_flagged};
    use crate::error::Error;
    use crate::make::{LayoutSpec, make_shape_with_layout};
    use crate::primitive::PrimitiveType;

    fn map(dims: &[i64], m2m: &[i64], tiles: &[&[i64]]) -> PhysicalMap {
        let s = make_shape_with_layout(PrimitiveType::F32, dims, &LayoutSpec::new(m2m).tiles(tiles)).unwrap();
        PhysicalMap::new(s.as_array().unwrap()).unwrap()
    }

    #[test]
    fn branch_free_bounds_flags_match_the_comparison() {
        let edges =
            [i64::MIN, i64::MIN + 1, -2, -1, 0, 1, 2, 3, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, i64::MAX - 1, i64::MAX];
        for &bound in &[0i64, 1, 2, 3, 1 << 32, i64::MAX - 1, i64::MAX] {
            let last = [u64::try_from(bound).unwrap().wrapping_sub(1)];
            for &i in &edges {
                let mut flags = [0u64];
                flag_out_of_bounds(&mut flags, &[i], &last);
                assert_eq!(none_flagged(&flags), (0..bound).contains(&i), "{i} in 0..{bound}");
            }
        }
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
                Forward::Strided if u32::try_from(m.raw_slots).is_ok() => "narrow",
                Forward::Strided => "wide",
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
            (map(&[3, 4, 5], &[0, 2, 1], &[]), 3, (true, true)),
            (map(&[3, 1, 5], &[0, 2, 1], &[]), 3, (true, false)),
            (map(&[10, 12], &[1, 0], &[&[4, 4], &[2, 1]]), 2, (false, false)),
            (map(&[6], &[0], &[&[2, 2]]), 1, (false, false)),
        ] {
            assert_eq!((m.plain, m.direct), form);
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

    #[test]
    fn divisor_is_exact_below_2_pow_63() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let divisors = (1..=300u64).chain([1 << 20, (1 << 31) + 1, 3 << 40, i64::MAX as u64, 1 << 62, 6_700_417]);
        for d in divisors {
            let div = Divisor::new(d);
            for n in [0, 1, d - 1, d, d + 1, (i64::MAX as u64) - 1, i64::MAX as u64] {
                assert_eq!(div.div(n), n / d, "{n} / {d}");
            }
            for _ in 0..2000 {
                let n = next() >> 1;
                assert_eq!(div.div(n), n / d, "{n} / {d}");
                let small = next() >> 40;
                assert_eq!(div.div(small), small / d, "{small} / {d}");
            }
        }
    }
}
