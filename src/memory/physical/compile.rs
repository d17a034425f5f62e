//! Compile: a validated layout → the forward and inverse forms of its [`PhysicalMap`], chosen
//! once, with every size checked.

use std::sync::Arc;

use crate::error::{Error, FieldPath, Quantity, Result};
use crate::memory::divisor::Divisor;
use crate::memory::extent::element_size_in_bits;
use crate::memory::extent::{bounds, to_i64};
use crate::memory::padding;
use crate::memory::tiling::{Digit, plan_of};
use crate::shape::{ArrayShape, Dim};

use super::PhysicalMap;
use super::forward::{Forward, Step, digits_slot};
use super::general::General;
use super::inverse::{Inverse, SlotDigit};

/// The most table entries (`Σ D`, 8 bytes each) a `Table` form may hold.
const TABLE_LIMIT: u64 = 1 << 16;

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
        let bounds = bounds(shape, "linearization")?;
        let plan = plan_of(shape, "linearization")?;
        let raw_slots = plan.raw_slots()?;
        let alignment = shape.layout().map_or(1, |l| l.tail_padding_alignment_in_elements());
        let storage_slots = raw_slots
            .div_ceil(alignment)
            .checked_mul(alignment)
            .filter(|&s| i64::try_from(s).is_ok())
            .ok_or_else(|| Error::overflow(FieldPath::root().field("layout"), Quantity::StorageSlots))?;
        let bits_per_slot = element_size_in_bits(shape);
        let storage_bytes = storage_slots
            .checked_mul(bits_per_slot)
            .ok_or_else(|| Error::overflow(FieldPath::root().field("layout"), Quantity::StorageBits))?
            .div_ceil(8);
        let physical_dims: Box<[usize]> = shape.minor_to_major().iter().rev().map(Dim::index).collect();
        let final_strides = row_major_strides(&plan.extents, raw_slots);
        // Whether a decoded index can leave the bounds: legacy padding, or a top digit of a
        // tiled dimension. Without either, every digit is below its dimension already.
        let may_pad = !plan.stages.is_empty() || padding::is_padded(shape);
        let digits = if plan.stages.is_empty() {
            Some(physical_dims.iter().map(|&dim| Digit::Of { dim, weight: 1, radix: None }).collect())
        } else {
            plan.digits(&physical_dims)
        };
        let compiled = digits.and_then(|d| compile_digits(&bounds, &d, &plan.extents, &final_strides, may_pad));
        let (forward, inverse) = compiled.unwrap_or_else(|| {
            let general = Arc::new(General::new(plan, physical_dims, final_strides.into()));
            (Forward::General(Arc::clone(&general)), Inverse::General(general))
        });
        Ok(Self { bounds: bounds.into(), forward, inverse, raw_slots, storage_slots, bits_per_slot, storage_bytes })
    }
}

/// The digit forms of both directions, or `None` if the digits of some dimension do not form
/// a mixed-radix chain (the caller falls back to [`General`]).
fn compile_digits(
    bounds: &[u64],
    digits: &[Digit],
    extents: &[u64],
    strides: &[u64],
    may_pad: bool,
) -> Option<(Forward, Inverse)> {
    let rank = bounds.len();
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
    let mut top_strides = vec![0; rank];
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
        *top_strides.get_mut(d)? = top_stride;
    }

    let unwritten: Box<[usize]> = written.iter().enumerate().filter(|&(_, &w)| !w).map(|(d, _)| d).collect();
    let whole = slot_digits.iter().all(SlotDigit::is_whole);
    let digits: Box<[SlotDigit]> = slot_digits.into();
    let inverse = match (whole, may_pad) {
        (false, _) => Inverse::Mixed { digits, unwritten },
        (true, true) => Inverse::Padded { digits, unwritten },
        (true, false) if unwritten.is_empty() => Inverse::Direct { digits },
        (true, false) => Inverse::Whole { digits, unwritten },
    };

    let forward = if steps.is_empty() {
        Forward::Strided { strides: top_strides.into() }
    } else if bounds.iter().try_fold(0u64, |acc, &b| acc.checked_add(b)).is_none_or(|sum| sum > TABLE_LIMIT) {
        Forward::Digits { ranges: ranges.into(), steps: steps.into(), top_strides: top_strides.into() }
    } else {
        let mut starts = Vec::with_capacity(rank);
        let mut offsets = Vec::new();
        for (d, &bound) in bounds.iter().enumerate() {
            starts.push(offsets.len());
            let (range, top) = (ranges.get(d..=d)?, top_strides.get(d..=d)?);
            offsets.extend((0..bound).map(|x| digits_slot(range, &steps, top, &[to_i64(x)])));
        }
        Forward::Table { starts: starts.into(), offsets: offsets.into() }
    };
    Some((forward, inverse))
}
