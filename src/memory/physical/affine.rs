//! The affine form of the forward map: any tiling the digit forms cannot express (`*` combine
//! dimensions, sub-tiles that add padding, rank extension mixed with either) compiled once into
//! a weighted sum of the index entries and a few quotients, so that a query is a handful of
//! multiply-adds and multiply-shift divisions ([`Divisor`]), with no allocation and no replay
//! of the tiles.
//!
//! Every entry of every stage's shape (spec `linearization.md` §4.1) is an integer-affine
//! expression in *atoms*: the logical index entries, and quotients `⌊B / t⌋` of earlier
//! expressions. Merging entries (`*`) is affine; a tile splits a merged entry `v` into `⌊v/t⌋`
//! and `v − t·⌊v/t⌋`, so only `⌊v/t⌋` can need a new atom, and usually does not: writing each
//! coefficient `c = t·a + r` with `0 ≤ r < t` gives `⌊v/t⌋ = A + ⌊B/t⌋` with `A = Σ a·x` and
//! `B = Σ r·x ≥ 0` (every atom is ≥ 0). When `B`'s largest value (from the atoms' largest
//! values) is below `t` the quotient is just `A`; otherwise `⌊B/t⌋` becomes an atom. The slot,
//! the row-major position over the final shape, is affine in the final entries, hence in the
//! atoms.
//!
//! ```text
//!   f32[8,128,1024]{2,1,0:T(8,*,128)}   final shape [1, 1024, 8, 128]
//!   q = ⌊I2 / 128⌋                       (the only quotient)
//!   slot = 128·I0 + 8192·I1 + I2 + 896·q
//! ```
//!
//! Exactness: the compile-time arithmetic is checked `i128` (an overflow gives no affine form:
//! the caller keeps the general replay); every `B` of an in-bounds index is at most its
//! compile-time maximum, kept ≤ `i64::MAX`, so the run-time sum (non-negative coefficients) and
//! the division are exact; the slot's coefficients may be negative and are stored modulo 2^64,
//! and since the true slot is below 2^63 (invariant 1 of
//! [`PhysicalMap`](super::PhysicalMap)) the wrapping sum is exact.

use std::collections::BTreeMap;

use crate::memory::divisor::Divisor;
use crate::memory::extent::to_u64;
use crate::memory::tiling::Plan;

/// The most quotients an affine form may hold: they live in a stack array at run time.
const MAX_QUOTIENTS: usize = 16;

/// One term of a nested quotient's dividend: `coefficient × q_at` (an earlier quotient).
#[derive(Debug, Clone, Copy)]
struct Term {
    at: usize,
    coefficient: u64,
}

/// One quotient: `q = ⌊(row · I + Σ earlier terms) / divisor⌋`, contributing `weight · q` to the
/// slot. `earlier` indexes [`Affine::terms`].
#[derive(Debug, Clone, Copy)]
struct Quotient {
    divisor: Divisor,
    weight: u64,
    earlier: (usize, usize),
}

/// `slot = Σ I[d] · strides[d] + Σ weight_j · q_j` (wrapping; exact for in-bounds indices).
#[derive(Debug, Clone)]
pub(super) struct Affine {
    strides: Box<[u64]>,
    /// Each quotient's coefficients on the index entries, `rank` per quotient: dense, so the
    /// batch loop unrolls each dividend as it does the strides.
    rows: Box<[u64]>,
    quotients: Box<[Quotient]>,
    /// The dividends' terms on earlier quotients (nested tiles only).
    terms: Box<[Term]>,
    /// Whether some quotient reads an earlier one: only then are the quotients kept in a
    /// scratch array.
    nested: bool,
}

/// `Σ index[d] · coefficients[d]`, wrapping.
#[inline]
fn dot(index: &[i64], coefficients: &[u64]) -> u64 {
    index.iter().zip(coefficients).fold(0u64, |acc, (&i, &c)| acc.wrapping_add(to_u64(i).wrapping_mul(c)))
}

/// An [`Affine`] form with exactly `Q` quotients, none nested, copied into fixed arrays for a
/// batch of rank `N`: the per-index work is then straight-line code over registers, every loop
/// unrolled.
#[derive(Debug, Clone, Copy)]
pub(super) struct FixedAffine<const N: usize, const Q: usize> {
    strides: [u64; N],
    rows: [[u64; N]; Q],
    quotients: [(Divisor, u64); Q],
}

impl<const N: usize, const Q: usize> FixedAffine<N, Q> {
    /// The shifts of the quotients' divisors, when every one is a power of two (tiles of 8,
    /// 128, … usually are): the division is then a plain shift.
    pub(super) fn shifts(&self) -> Option<[u32; Q]> {
        let mut shifts = [0; Q];
        for (s, (d, _)) in shifts.iter_mut().zip(&self.quotients) {
            *s = d.power_of_two_shift()?;
        }
        Some(shifts)
    }

    /// [`slot`](Self::slot) with the divisions as `shifts` (from [`shifts`](Self::shifts)).
    #[inline]
    pub(super) fn slot_shifted(&self, index: &[i64; N], shifts: &[u32; Q]) -> u64 {
        self.rows
            .iter()
            .zip(&self.quotients)
            .zip(shifts)
            .fold(dot(index, &self.strides), |acc, ((row, &(_, w)), &s)| {
                acc.wrapping_add(dot(index, row).wrapping_shr(s).wrapping_mul(w))
            })
    }

    /// The slot of an index; wrapping arithmetic, exact for in-bounds indices.
    #[inline]
    pub(super) fn slot(&self, index: &[i64; N]) -> u64 {
        self.rows.iter().zip(&self.quotients).fold(dot(index, &self.strides), |acc, (row, &(d, w))| {
            acc.wrapping_add(d.div(dot(index, row)).wrapping_mul(w))
        })
    }
}

impl Affine {
    /// The number of quotients (0: the form is a plain strided sum) and whether one reads
    /// another.
    #[cfg(test)]
    pub(super) fn form(&self) -> (usize, bool) {
        (self.quotients.len(), self.nested)
    }

    /// Whether the slot is a sum of one function per dimension: every quotient depends on one
    /// index entry at most (directly, or through the earlier quotients it reads). Then
    /// `slot(I) = Σ_d slot(I[d]·e_d)` (every quotient of a zero dividend is 0), which a table
    /// per dimension holds.
    pub(super) fn separable(&self) -> bool {
        // Per quotient: `None` for no entry, `Some(Some(d))` for entry d only, `Some(None)`
        // for several.
        let mut depends: Vec<Option<Option<usize>>> = Vec::with_capacity(self.quotients.len());
        let join = |a: Option<Option<usize>>, b: Option<Option<usize>>| match (a, b) {
            (None, x) | (x, None) => x,
            (Some(Some(x)), Some(Some(y))) if x == y => a,
            _ => Some(None),
        };
        for (q, row) in self.quotients.iter().zip(self.rows()) {
            let direct =
                row.iter().enumerate().filter(|&(_, &c)| c != 0).fold(None, |acc, (d, _)| join(acc, Some(Some(d))));
            let terms = self.terms.get(q.earlier.0..q.earlier.1).unwrap_or_default();
            let all = terms.iter().fold(direct, |acc, t| join(acc, depends.get(t.at).copied().flatten()));
            if all == Some(None) {
                return false;
            }
            depends.push(all);
        }
        true
    }

    /// The rows of the quotients, one per quotient (`rank` entries each; none at rank 0, where
    /// there are no quotients either).
    fn rows(&self) -> std::slice::ChunksExact<'_, u64> {
        self.rows.chunks_exact(self.strides.len().max(1))
    }

    /// The slot of an index; wrapping arithmetic, exact for in-bounds indices.
    #[inline]
    pub(super) fn slot(&self, index: &[i64]) -> u64 {
        let base = dot(index, &self.strides);
        if !self.nested {
            return self
                .quotients
                .iter()
                .zip(self.rows())
                .fold(base, |acc, (q, row)| acc.wrapping_add(q.divisor.div(dot(index, row)).wrapping_mul(q.weight)));
        }
        let mut values = [0u64; MAX_QUOTIENTS];
        let mut sum = base;
        for ((j, q), row) in self.quotients.iter().enumerate().zip(self.rows()) {
            let earlier = self.terms.get(q.earlier.0..q.earlier.1).unwrap_or_default().iter().fold(0u64, |acc, t| {
                acc.wrapping_add(values.get(t.at).copied().unwrap_or(0).wrapping_mul(t.coefficient))
            });
            let value = q.divisor.div(dot(index, row).wrapping_add(earlier));
            if let Some(v) = values.get_mut(j) {
                *v = value;
            }
            sum = sum.wrapping_add(value.wrapping_mul(q.weight));
        }
        sum
    }

    /// The fixed-array copy for a batch of rank `N`, when the form has exactly `Q` quotients,
    /// none nested, and `N` is the rank (the caller checked it; a mismatch gives `None`, and the
    /// caller's slower path).
    pub(super) fn fixed<const N: usize, const Q: usize>(&self) -> Option<FixedAffine<N, Q>> {
        if self.nested || self.strides.len() != N || self.quotients.len() != Q {
            return None;
        }
        let mut fixed = FixedAffine {
            strides: <[u64; N]>::try_from(&*self.strides).ok()?,
            rows: [[0; N]; Q],
            quotients: [(Divisor::new(1), 0); Q],
        };
        for (j, (q, row)) in self.quotients.iter().zip(self.rows()).enumerate() {
            *fixed.rows.get_mut(j)? = <[u64; N]>::try_from(row).ok()?;
            *fixed.quotients.get_mut(j)? = (q.divisor, q.weight);
        }
        Some(fixed)
    }

    /// Compiles the plan, or `None` when some bound of the construction does not hold (more
    /// than [`MAX_QUOTIENTS`] quotients, a dividend whose largest value exceeds `i64::MAX`, a
    /// coefficient beyond `i128`): the caller keeps the general replay.
    ///
    /// `physical_dims[p]` is the logical dimension at physical position `p`, `bounds` the
    /// logical extents, `final_strides` the row-major strides of the plan's final shape.
    pub(super) fn compile(plan: &Plan, physical_dims: &[usize], bounds: &[u64], final_strides: &[u64]) -> Option<Self> {
        let rank = bounds.len();
        let mut builder =
            Builder { rank, maxima: bounds.iter().map(|b| b.saturating_sub(1)).collect(), quotients: vec![] };
        let mut entries: Vec<Expr> = physical_dims.iter().map(|&d| Expr::from([(d, 1)])).collect();
        for stage in &plan.stages {
            entries.splice(0..0, std::iter::repeat_n(Expr::new(), stage.extend));
            let aligned = entries.split_off(stage.offset);
            let mut aligned = aligned.into_iter().zip(stage.aligned.iter());
            let mut inners = Vec::with_capacity(stage.groups.len());
            for group in &stage.groups {
                // The merged entry, most major first: v = v·s + e.
                let mut merged = Expr::new();
                for (entry, &extent) in aligned.by_ref().take(group.len) {
                    merged = scaled(&merged, i128::from(extent))?;
                    add_scaled(&mut merged, &entry, 1)?;
                }
                let outer = builder.floor_div(&merged, group.tile, group.extent)?;
                add_scaled(&mut merged, &outer, i128::from(group.tile).checked_neg()?)?;
                entries.push(outer);
                inners.push(merged);
            }
            entries.extend(inners);
        }
        let mut slot = Expr::new();
        for (entry, &stride) in entries.iter().zip(final_strides) {
            add_scaled(&mut slot, entry, i128::from(stride))?;
        }
        builder.finish(&slot)
    }
}

/// An integer-affine expression: atom → coefficient, no zero coefficients. Atoms below the rank
/// are index entries; `rank + j` is quotient `j`.
type Expr = BTreeMap<usize, i128>;

/// `into += k · from`, checked.
fn add_scaled(into: &mut Expr, from: &Expr, k: i128) -> Option<()> {
    for (&atom, &c) in from {
        let sum = into.get(&atom).copied().unwrap_or(0).checked_add(c.checked_mul(k)?)?;
        if sum == 0 {
            into.remove(&atom);
        } else {
            into.insert(atom, sum);
        }
    }
    Some(())
}

/// `k · e`, checked.
fn scaled(e: &Expr, k: i128) -> Option<Expr> {
    let mut out = Expr::new();
    add_scaled(&mut out, e, k)?;
    Some(out)
}

/// A coefficient modulo 2^64, as the run-time wrapping arithmetic uses it.
fn wrapped(c: i128) -> Option<u64> {
    u64::try_from(c.rem_euclid(1 << 64)).ok()
}

struct Builder {
    rank: usize,
    /// The largest value of each atom for an in-bounds index.
    maxima: Vec<u64>,
    /// Each quotient's dividend (non-negative coefficients) and divisor.
    quotients: Vec<(Expr, u64)>,
}

impl Builder {
    /// `⌊v / t⌋` as an expression, for a `v` in `0..extent`.
    fn floor_div(&mut self, v: &Expr, t: u64, extent: u64) -> Option<Expr> {
        if t == 1 {
            return Some(v.clone());
        }
        if extent <= t {
            return Some(Expr::new());
        }
        let ti = i128::from(t);
        let (mut whole, mut rest) = (Expr::new(), Expr::new());
        let mut largest: i128 = 0;
        for (&atom, &c) in v {
            let (a, r) = (c.checked_div_euclid(ti)?, c.checked_rem_euclid(ti)?);
            if a != 0 {
                whole.insert(atom, a);
            }
            if r != 0 {
                rest.insert(atom, r);
                largest = largest.checked_add(r.checked_mul(i128::from(*self.maxima.get(atom)?))?)?;
            }
        }
        if largest < ti {
            return Some(whole);
        }
        let largest = u64::try_from(i64::try_from(largest).ok()?).ok()?;
        let found = self.quotients.iter().position(|(e, d)| *d == t && *e == rest);
        let j = match found {
            Some(j) => j,
            None if self.quotients.len() < MAX_QUOTIENTS => {
                self.quotients.push((rest, t));
                self.maxima.push(largest.checked_div(t)?);
                self.quotients.len().checked_sub(1)?
            }
            None => return None,
        };
        add_scaled(&mut whole, &Expr::from([(self.rank.checked_add(j)?, 1)]), 1)?;
        Some(whole)
    }

    /// The run-time form of `slot`.
    fn finish(self, slot: &Expr) -> Option<Affine> {
        let rank = self.rank;
        let coefficient = |atom: usize| wrapped(slot.get(&atom).copied().unwrap_or(0));
        let strides = (0..rank).map(coefficient).collect::<Option<Box<[u64]>>>()?;
        let (mut rows, mut quotients, mut terms) = (Vec::new(), Vec::new(), Vec::new());
        for (j, (dividend, t)) in self.quotients.iter().enumerate() {
            for d in 0..rank {
                rows.push(wrapped(dividend.get(&d).copied().unwrap_or(0))?);
            }
            let start = terms.len();
            for (&atom, &c) in dividend.range(rank..) {
                terms.push(Term { at: atom.checked_sub(rank)?, coefficient: wrapped(c)? });
            }
            quotients.push(Quotient {
                divisor: Divisor::new(*t),
                weight: coefficient(rank.checked_add(j)?)?,
                earlier: (start, terms.len()),
            });
        }
        let nested = !terms.is_empty();
        Some(Affine { strides, rows: rows.into(), quotients: quotients.into(), terms: terms.into(), nested })
    }
}
