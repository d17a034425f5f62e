//! Column blocks (`docs/relayout.md`, rule 15): how `relayout -o FILE` produces a transpose whose
//! destination rows are long, box by box instead of in whole destination rows.
//!
//! A part of whole destination rows reads a few bytes of every source row: 16 MiB of
//! `f32[8192,32768]{0,1}` → `{1,0}` is 128 destination rows, 512 bytes of each of 32 768 source
//! rows. A block is 512 destination rows (2 KiB of each source row it reads, for `f32`) by as
//! many columns as fill the part. It is computed by a window relayout (rule 20) into a buffer
//! laid out as the destination restricted to the block, and its rows — byte runs of the dense
//! destination (`sharding::runs`, as a shard's) — are written at their offsets in the output
//! file.
//!
//! ```text
//!   the destination, 8192 rows of 32768 f32       parts of whole rows    column blocks
//!   ┌────────────────────────────────────┐        ┌──────────────┐       ┌───┬───┬───┬───┐
//!   │                                    │        ├──────────────┤ 128   │ 0 │ 1 │ 2 │ 3 │ 512
//!   │                                    │        ├──────────────┤ rows  ├───┼───┼───┼───┤ rows
//!   │                                    │        ├──────────────┤ each  │ 4 │ 5 │ 6 │ 7 │ each
//!   └────────────────────────────────────┘        └──────────────┘       └───┴───┴───┴───┘
//!                                                  (16 MiB each)          8192 columns each
//! ```

use crate::cli::fail::Failure;
use crate::make::{LayoutSpec, make_shape_with_layout};
use crate::memory::extent::{bounds, len_u64, to_usize};
use crate::relayout::{Endpoint, RelayoutPlan, StorePolicy, Window};
use crate::shape::ArrayShape;
use crate::sharding::runs::{ByteRuns, Dense};

/// Destination rows per block: each source row read gives the block 512 elements, as many as
/// a band of the transpose (`docs/relayout.md` rule 10) takes from its 512 source rows.
pub const BLOCK_ROWS: u64 = 512;

/// A block's rows are cut on whole pages of the output when they hold one.
const PAGE: u64 = 4096;

/// A dense destination cut into blocks of `rows` × `cols` elements along its two minor
/// dimensions, one index of each other dimension.
#[derive(Debug)]
pub struct Blocks<'a> {
    to: ArrayShape<'a>,
    dense: Dense,
    /// Each dimension's extent.
    bounds: Vec<u64>,
    /// The minor and second-minor dimensions (the blocks' columns and rows), and the others
    /// from minor to major.
    minor: usize,
    second: usize,
    outer: Vec<usize>,
    rows: u64,
    cols: u64,
    /// Blocks along the minor and the second-minor dimension.
    across: u64,
    down: u64,
    count: usize,
    width: u64,
}

/// The source's minor dimension: the one whose elements are adjacent (the first, in a dense
/// layout's order or a strided view's strides); `None` for other sources.
fn source_minor(src: Endpoint<'_>) -> Result<Option<usize>, Failure> {
    Ok(match src {
        Endpoint::Layout(array) => {
            let bounds = bounds(array, "relayout")?;
            Dense::of(array, &bounds)?.and_then(|_| array.minor_to_major().iter().next().map(crate::Dim::index))
        }
        Endpoint::Strided(view) => {
            let width = i64::from(view.element_type().byte_width().unwrap_or(0));
            view.byte_strides().iter().position(|&s| s.unsigned_abs() == width.unsigned_abs() && width > 0)
        }
    })
}

impl<'a> Blocks<'a> {
    /// The blocks of `to` for parts of at most `part` bytes. `None` (whole destination rows are
    /// as good) unless `to` is dense (no tiles, padding or sub-byte elements), the source's
    /// elements are adjacent along the destination's second-minor dimension (a transpose of the
    /// two), and a part of whole rows would hold fewer than [`BLOCK_ROWS`] rows.
    ///
    /// # Errors
    ///
    /// The library's, for sizes that overflow (a plan of these shapes was made before).
    pub fn new(src: Endpoint<'_>, to: ArrayShape<'a>, part: usize) -> Result<Option<Self>, Failure> {
        let bounds = bounds(to, "relayout")?;
        let Some(dense) = Dense::of(to, &bounds)? else { return Ok(None) };
        let m2m = to.minor_to_major();
        let mut order = m2m.iter().map(crate::Dim::index);
        let (Some(minor), Some(second)) = (order.next(), order.next()) else { return Ok(None) };
        let outer: Vec<usize> = order.collect();
        if source_minor(src)? != Some(second) {
            return Ok(None);
        }
        let width = u64::from(to.element_type().byte_width().unwrap_or(0));
        let (Some(&extent), Some(&height)) = (bounds.get(minor), bounds.get(second)) else { return Ok(None) };
        let rows = BLOCK_ROWS.min(height);
        let Some(mut cols) = u64::try_from(part).ok().and_then(|p| p.checked_div(rows.checked_mul(width)?)) else {
            return Ok(None);
        };
        // Rows of whole pages when a part holds one per row.
        let whole = PAGE.checked_rem(width) == Some(0);
        if let Some(per_page) = PAGE.checked_div(width).filter(|&e| whole && e > 0 && cols >= e) {
            cols = cols.saturating_sub(cols.checked_rem(per_page).unwrap_or(0));
        }
        if cols == 0 || cols >= extent {
            return Ok(None);
        }
        let (across, down) = (extent.div_ceil(cols), height.div_ceil(rows));
        let count = outer
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(*bounds.get(d)?))
            .and_then(|o| o.checked_mul(across)?.checked_mul(down))
            .and_then(|c| usize::try_from(c).ok())
            .ok_or_else(|| Failure::invalid("too many blocks"))?;
        Ok(Some(Self { to, dense, bounds, minor, second, outer, rows, cols, across, down, count, width }))
    }

    /// The number of blocks.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The largest block's bytes (at most the part's).
    pub fn max_len(&self) -> usize {
        to_usize(self.rows.saturating_mul(self.cols).saturating_mul(self.width))
    }

    /// Where block `k` starts in the destination and its extent, per dimension. Blocks go
    /// column block fastest, then row block, then the other dimensions from minor to major: in
    /// the destination's order, a band of rows at a time.
    fn corner(&self, k: usize) -> (Vec<u64>, Vec<u64>) {
        let mut k = len_u64(k);
        let (mut start, mut extent) = (vec![0u64; self.bounds.len()], vec![1u64; self.bounds.len()]);
        let mut place = |d: usize, step: u64, blocks: u64| {
            let i = k.checked_rem(blocks).unwrap_or(0);
            k = k.checked_div(blocks).unwrap_or(0);
            let first = i.saturating_mul(step);
            let bound = self.bounds.get(d).copied().unwrap_or(0);
            if let (Some(s), Some(e)) = (start.get_mut(d), extent.get_mut(d)) {
                (*s, *e) = (first, step.min(bound.saturating_sub(first)));
            }
        };
        place(self.minor, self.cols, self.across);
        place(self.second, self.rows, self.down);
        for &d in &self.outer {
            place(d, 1, self.bounds.get(d).copied().unwrap_or(1));
        }
        (start, extent)
    }

    /// Block `k`'s bytes.
    pub fn len(&self, k: usize) -> usize {
        let (_, extent) = self.corner(k);
        let elements = extent.iter().fold(self.width, |acc, &e| acc.saturating_mul(e));
        to_usize(elements)
    }

    /// The relayout of block `k` from the source `src` into a buffer of [`len(k)`](Self::len)
    /// bytes: the destination's layout restricted to the block.
    ///
    /// # Errors
    ///
    /// The library's (none for blocks of a plan made before).
    pub fn plan(&self, src: Endpoint<'_>, k: usize) -> Result<RelayoutPlan, Failure> {
        let (start, extent) = self.corner(k);
        let dims: Vec<i64> = extent.iter().map(|&e| i64::try_from(e).unwrap_or(i64::MAX)).collect();
        let order = [self.minor, self.second].into_iter().chain(self.outer.iter().copied());
        let m2m: Vec<i64> = order.map(|d| i64::try_from(d).unwrap_or(i64::MAX)).collect();
        let block = make_shape_with_layout(self.to.element_type(), &dims, &LayoutSpec::new(&m2m))?;
        let array = block.as_array().ok_or_else(|| Failure::invalid("a block is an array"))?;
        let zeros = vec![0u64; dims.len()];
        let window = Window { src_start: &start, dst_start: &zeros, extent: &extent };
        Ok(RelayoutPlan::window(src, array, window, StorePolicy::Auto)?)
    }

    /// A whole block's rows and columns (`--explain` prints them).
    pub fn shape(&self) -> (u64, u64) {
        (self.rows, self.cols)
    }

    /// Block `k`'s rows: where each is in the destination and in the block's buffer.
    pub fn runs(&self, k: usize) -> Option<ByteRuns> {
        let (start, extent) = self.corner(k);
        ByteRuns::new(&self.dense, &start, &extent)
    }
}

#[cfg(test)]
mod tests {
    use super::{Blocks, Endpoint};
    use crate::ShapeBuf;

    fn blocks_of<'a>(from: &'a ShapeBuf, to: &'a ShapeBuf, part: usize) -> Option<Blocks<'a>> {
        Blocks::new(Endpoint::Layout(from.as_array().unwrap()), to.as_array().unwrap(), part).unwrap()
    }

    /// The blocks' rows tile the destination: every byte once, each block's bytes its rows',
    /// blocks of at most 512 rows and of the part's bytes, rows of whole pages when a part holds
    /// 512 of them.
    #[test]
    fn the_blocks_rows_tile_the_destination_once() {
        let cases = [
            ("f32[8192,32768]{0,1}", "f32[8192,32768]{1,0}", 16usize << 20, (512, 8192)),
            ("f32[1000,700]{0,1}", "f32[1000,700]{1,0}", 256 << 10, (512, 128)),
            ("u8[3,700,5000]{1,2,0}", "u8[3,700,5000]{2,1,0}", 256 << 10, (512, 512)),
            ("c128[100,300]{0,1}", "c128[100,300]{1,0}", 256 << 10, (100, 163)),
            ("bf16[40,9000,2]{0,1,2}", "bf16[40,9000,2]{1,0,2}", 256 << 10, (40, 2048)),
        ];
        for (from, to, part, (rows, cols)) in cases {
            let (a, b): (ShapeBuf, ShapeBuf) = (from.parse().unwrap(), to.parse().unwrap());
            let blocks = blocks_of(&a, &b, part).unwrap_or_else(|| panic!("{from} -> {to}: no blocks"));
            assert_eq!((blocks.rows, blocks.cols), (rows, cols), "{to}");
            let len = usize::try_from(crate::size::storage_bytes(b.as_array().unwrap()).unwrap()).unwrap();
            let mut seen = vec![0u8; len];
            for k in 0..blocks.count() {
                assert!(blocks.len(k) <= blocks.max_len() && blocks.max_len() <= part);
                let mut in_block = 0;
                for run in blocks.runs(k).unwrap() {
                    assert_eq!(run.shard, in_block);
                    in_block += run.len;
                    let at = usize::try_from(run.global).unwrap();
                    for byte in &mut seen[at..at + usize::try_from(run.len).unwrap()] {
                        *byte += 1;
                    }
                }
                assert_eq!(in_block, u64::try_from(blocks.len(k)).unwrap());
            }
            assert!(seen.iter().all(|&n| n == 1), "{to}: a byte written {:?} times", seen.iter().find(|&&n| n != 1));
        }
    }

    /// Whole destination rows stay the parts when they are as good: a part holding 512 rows, a
    /// source read in the destination's order or along another dimension, tiles, sub-byte
    /// elements.
    #[test]
    fn blocks_only_for_transposes_of_long_rows() {
        let cases = [
            ("f32[8192,8192]{0,1}", "f32[8192,8192]{1,0}"),
            ("f32[8192,32768]{1,0}", "f32[8192,32768]{1,0}"),
            ("f32[64,8192,32768]{0,2,1}", "f32[64,8192,32768]{2,1,0}"),
            ("f32[8192,32768]{0,1}", "f32[8192,32768]{1,0:T(8,128)}"),
            ("s4[8192,65536]{0,1}", "s4[8192,65536]{1,0:E(4)}"),
        ];
        for (from, to) in cases {
            let (a, b): (ShapeBuf, ShapeBuf) = (from.parse().unwrap(), to.parse().unwrap());
            assert!(blocks_of(&a, &b, 16 << 20).is_none(), "{from} -> {to}");
        }
    }
}
