//! Nested tiling (spec `linearization.md` §4): tiles in sequence, the combine dimension `*`, rank
//! extension, and the expanded shape they produce.
//!
//! The physical shape `S` (most major first, `S[p] = D[minor_to_major[n-1-p]]`) is rewritten by
//! each tile in turn. A tile of rank `r` acts on the last `r` entries; each aligned entry `s` is
//! split into an outer count `ceil(s/t)` and an inner extent `t`, and the new shape is
//! `prefix ++ outers ++ inners`:
//!
//! ```text
//!   f32[3,5]{1,0:T(2,2)}      S = [3, 5]
//!                               │  │
//!              tile (2,2)       ▼  ▼
//!   outers ++ inners        [2, 3, 2, 2]   = 24 slots (15 elements + 9 padding)
//!                            └──┘  └──┘
//!                       which tile   where in the tile
//! ```
//!
//! Before splitting, a tile wider than the current shape first prepends extent-1 entries (rank
//! extension, as `ShapeUtil::ArraySize` does), and each `*` entry merges its aligned entry into
//! the next more minor one (`s' = s_k · s_{k+1}`). A `*` in the last tile position has nothing
//! to merge into: [`Error::InvalidLayout`] with [`LayoutProblem::TrailingCombine`].
//!
//! The slot of an element is the row-major position of its expanded index in the final
//! expanded shape; [`crate::physical::PhysicalMap`] precomputes that mapping.
//!
//! Invariant of a resolved plan (what makes the hot path safe without checks): every extent of every
//! stage, and the product of the final extents, were computed with checked arithmetic. The
//! product of a stage's extents never decreases from one stage to the next (`ceil(s/t)·t ≥ s`,
//! merging keeps the product), so every intermediate value of an in-bounds index is below the
//! final slot count.

use crate::error::{Error, FieldPath, LayoutProblem, Result};
use crate::layout::{Tile, TileDim};
use crate::shape::ArrayShape;

/// One aligned group of a tile after merging: `len` consecutive aligned entries (more than one
/// when `*` merged them) tiled by `tile`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Group {
    pub len: usize,
    pub tile: u64,
    /// The product of the merged entries' extents (`C_j` of the spec's inverse).
    pub extent: u64,
}

/// One tile, resolved against the shape it applies to.
#[derive(Debug, Clone)]
pub(crate) struct Stage {
    /// Extent-1 entries prepended first (rank extension).
    pub extend: usize,
    /// Entries before the aligned region (0 when `extend > 0`).
    pub offset: usize,
    /// The aligned entries' extents after extension, before merging, most major first.
    pub aligned: Box<[u64]>,
    /// The groups, most major first.
    pub groups: Box<[Group]>,
}

impl Stage {
    /// Whether the stage merges entries (`*`).
    pub fn merges(&self) -> bool {
        self.groups.len() != self.aligned.len()
    }

    /// Forward: rewrites `values[..len]` (an index in the stage's input shape) into the stage's
    /// output shape; returns the new length. `values` and `scratch` must hold
    /// [`Plan::widest`] entries. Wrapping arithmetic keeps out-of-bounds input panic-free.
    // Positions: `len + extend` (the extended input), `offset + Σ group.len` (= that length) and
    // `offset + 2·groups` (the output) are lengths of this stage's shapes in `Plan::new`, all
    // ≤ `widest` ≤ `values.len()`, `scratch.len()` (the caller's promise, kept by
    // `physical::with_scratch`), so neither the indexing nor the position sums can fail. Tile
    // sizes are validated ≥ 1. Index values use wrapping arithmetic on purpose (see above).
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    pub fn apply(&self, values: &mut [u64], len: usize, scratch: &mut [u64]) -> usize {
        if self.extend > 0 {
            values.copy_within(0..len, self.extend);
            values[..self.extend].fill(0);
        }
        let r = self.groups.len();
        let mut pos = self.offset;
        for (g, group) in self.groups.iter().enumerate() {
            let mut v: u64 = 0;
            for _ in 0..group.len {
                v = v.wrapping_mul(self.aligned[pos - self.offset]).wrapping_add(values[pos]);
                pos += 1;
            }
            scratch[g] = v / group.tile;
            scratch[r + g] = v % group.tile;
        }
        values[self.offset..self.offset + 2 * r].copy_from_slice(&scratch[..2 * r]);
        self.offset + 2 * r
    }

    /// Inverse of [`apply`](Self::apply): rebuilds the stage's input from `values[..len]`, or
    /// `None` when the entries point into a partial tile's padding. Returns the new length.
    // As in `apply`: every position is below this stage's output length `offset + 2·groups`
    // ≤ `widest`, the slices' length. `end - group.len ≥ offset` and `k ≥ offset` (the groups
    // tile `offset..end`); `end ≥ extend` (extension happens only when `offset` is 0, and then
    // `end` is the tile rank ≥ `extend`). Divisors: tiles ≥ 1 (validated), extents ≥ 1 (below).
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    pub fn unapply(&self, values: &mut [u64], len: usize, scratch: &mut [u64]) -> Option<usize> {
        debug_assert_eq!(len, self.offset + 2 * self.groups.len());
        let r = self.groups.len();
        for (g, group) in self.groups.iter().enumerate() {
            let v = values[self.offset + g].wrapping_mul(group.tile).wrapping_add(values[self.offset + r + g]);
            if v >= group.extent {
                return None;
            }
            scratch[g] = v;
        }
        let mut end = self.offset;
        for (g, group) in self.groups.iter().enumerate() {
            end += group.len;
            let mut v = scratch[g];
            // Split a merged value back, most minor entry first; extents here are ≥ 1 because
            // `v < group.extent` held.
            for k in (end - group.len..end).rev() {
                let extent = self.aligned[k - self.offset];
                values[k] = v % extent;
                v /= extent;
            }
        }
        // The extended entries have extent 1, so they are 0 here; drop them.
        values.copy_within(self.extend..end, 0);
        Some(end - self.extend)
    }
}

/// The resolved tiles of a layout and the expanded shape they produce.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub stages: Box<[Stage]>,
    /// The final expanded shape, most major first.
    pub extents: Box<[u64]>,
    /// The most entries any stage holds (input, after extension, or output).
    pub widest: usize,
}

/// The one overflow of this file: an extent of the expanded shape beyond `u64`.
const TILED_OVERFLOW: fn() -> Error =
    || Error::overflow(FieldPath::root().field("layout").field("tiles"), crate::error::Quantity::TiledShape);

impl Plan {
    /// Resolves `tiles` against the physical shape `physical` (most major first).
    // After rank extension `shape.len() ≥ rank`, so `offset` does not underflow and `shape[offset..]`
    // is in range; `len` counts at most `rank` entries. Extents are multiplied with checks.
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    pub fn new<'a>(physical: &[u64], tiles: impl IntoIterator<Item = Tile<'a>>) -> Result<Self> {
        let mut shape = physical.to_vec();
        let mut widest = shape.len();
        let mut stages = Vec::new();
        for (j, tile) in tiles.into_iter().enumerate() {
            let rank = tile.rank();
            let extend = rank.saturating_sub(shape.len());
            shape.splice(0..0, std::iter::repeat_n(1, extend));
            widest = widest.max(shape.len());
            let offset = shape.len() - rank;
            let aligned: Box<[u64]> = shape[offset..].into();
            let mut groups = Vec::with_capacity(rank);
            let (mut len, mut merged) = (0usize, 1u64);
            for (entry, &s) in tile.iter().zip(aligned.iter()) {
                len += 1;
                merged = merged.checked_mul(s).ok_or_else(TILED_OVERFLOW)?;
                if let TileDim::Size(t) = entry {
                    groups.push(Group { len, tile: t, extent: merged });
                    (len, merged) = (0, 1);
                }
            }
            if len > 0 {
                return Err(Error::InvalidLayout {
                    path: FieldPath::root().field("layout").field("tiles").index(j),
                    problem: Box::new(LayoutProblem::TrailingCombine),
                });
            }
            shape.truncate(offset);
            shape.extend(groups.iter().map(|g| g.extent.div_ceil(g.tile)));
            shape.extend(groups.iter().map(|g| g.tile));
            widest = widest.max(shape.len());
            stages.push(Stage { extend, offset, aligned, groups: groups.into() });
        }
        Ok(Self { stages: stages.into(), extents: shape.into(), widest })
    }

    /// The product of the final extents (the raw slot count), checked.
    pub fn raw_slots(&self) -> Result<u64> {
        self.extents.iter().try_fold(1u64, |acc, &e| acc.checked_mul(e)).ok_or_else(TILED_OVERFLOW)
    }

    /// The final entries as digits of the logical indices, when the tiling is a pure
    /// mixed-radix refinement: no `*`, and every tile that splits a bounded digit divides it.
    /// `physical_dims[p]` is the logical dimension at physical position `p` (most major first).
    #[allow(clippy::arithmetic_side_effects)] // `%` and `/` by a tile size, validated ≥ 1
    pub fn digits(&self, physical_dims: &[usize]) -> Option<Vec<Digit>> {
        let mut cur: Vec<Digit> = physical_dims.iter().map(|&dim| Digit::Of { dim, weight: 1, radix: None }).collect();
        for stage in &self.stages {
            if stage.merges() {
                return None;
            }
            cur.splice(0..0, std::iter::repeat_n(Digit::Phantom, stage.extend));
            let aligned = cur.split_off(stage.offset);
            let mut inners = Vec::with_capacity(aligned.len());
            for (digit, group) in aligned.into_iter().zip(stage.groups.iter()) {
                let t = group.tile;
                match digit {
                    Digit::Phantom => {
                        cur.push(Digit::Phantom);
                        inners.push(Digit::Phantom);
                    }
                    Digit::Of { dim, weight, radix } => {
                        let outer_radix = match radix {
                            None => None,
                            Some(b) if b % t == 0 => Some(b / t),
                            Some(_) => return None,
                        };
                        cur.push(Digit::Of { dim, weight: weight.checked_mul(t)?, radix: outer_radix });
                        inners.push(Digit::Of { dim, weight, radix: Some(t) });
                    }
                }
            }
            cur.extend(inners);
        }
        Some(cur)
    }
}

/// What one entry of the expanded shape holds, in the mixed-radix case (see [`Plan::digits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Digit {
    /// An entry created by rank extension: always 0 for an element.
    Phantom,
    /// `(I[dim] / weight) % radix` (no `%` when `radix` is `None`: the top digit).
    Of { dim: usize, weight: u64, radix: Option<u64> },
}

/// The expanded shape of an array (spec §4.1): the physical shape after every tile, most major
/// first. Untiled layouts give the physical shape itself (legacy padding: the padded extents).
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, PrimitiveType, tiling};
/// let s = make_shape_with_layout(PrimitiveType::F32, &[3, 5], &LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]])).unwrap();
/// assert_eq!(tiling::expanded_shape(s.as_array().unwrap()).unwrap(), [2, 3, 2, 2]);
/// // Combine: F32[2,7,8,11,10] with T(*,*,2,*,3) acts like F32[112,110] with T(2,3).
/// let c = make_shape_with_layout(
///     PrimitiveType::F32, &[2, 7, 8, 11, 10],
///     &LayoutSpec::new(&[4, 3, 2, 1, 0]).tiles(&[&[i64::MIN, i64::MIN, 2, i64::MIN, 3]])).unwrap();
/// assert_eq!(tiling::expanded_shape(c.as_array().unwrap()).unwrap(), [56, 37, 2, 3]);
/// ```
///
/// # Errors
///
/// [`Error::UnboundedDimension`], [`Error::InvalidLayout`] for a trailing `*`, and
/// [`Error::Overflow`] when an extent does not fit in 64 bits.
pub fn expanded_shape(shape: ArrayShape<'_>) -> Result<Vec<u64>> {
    Ok(plan_of(shape, "the expanded shape")?.extents.into_vec())
}

/// The physical shape (padded extents when padded), most major first, and the plan of its
/// tiles.
#[allow(clippy::indexing_slicing)] // d < rank == extents.len(): validated minor_to_major
pub(crate) fn plan_of(shape: ArrayShape<'_>, operation: &'static str) -> Result<Plan> {
    let extents = crate::memory::extent::extents(shape, operation)?;
    let physical: Vec<u64> = shape.minor_to_major().iter().rev().map(|d| extents[d.index()]).collect();
    let tiles: Vec<Tile<'_>> = shape.layout().map(|l| l.tiles().collect()).unwrap_or_default();
    Plan::new(&physical, tiles)
}
