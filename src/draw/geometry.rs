//! The picture as geometry: every rectangle, label and arrow with its position and what it
//! stands for, computed from a validated array and its [`PhysicalMap`], before any SVG is
//! written. Tests compute positions here and look for them in the rendered pixels.
//!
//! ```text
//!   title, facts
//!   ┌ logical view ───────────────┐   one 2-D grid per slice of the other dimensions
//!   │ [i,:,:]   0 1 2 … 30 31      │   cells coloured by the tile their slot is in,
//!   │        0  a b c …            │   legacy padding hatched
//!   └──────────────────────────────┘
//!           ↓ arrows from a few cells to their slots
//!   memory: slot 0  a d 0 b e 0 …      slots in order, wrapped into rows, padding hatched,
//!                   └byte 0┘ └byte 1┘  sub-byte slots framed by their byte
//! ```

use std::fmt::{self, Write as _};

use crate::draw::Options;
use crate::draw::axis::{self, Entry};
use crate::draw::label::{MAX_LETTERS, element_label, fill_label, join};
use crate::error::{ArgumentProblem, Error, Result};
use crate::layout::TileDim;
use crate::{ArrayShape, PhysicalMap, Slot, padding, tiling};

/// Font size of every label, in pixels.
pub const FONT: f64 = 10.0;
/// The advance of one character of the monospace font, in pixels (0.6 em).
pub const CHAR: f64 = 6.0;
/// Height of a text line.
const LINE: f64 = 14.0;
/// Outer margin of the picture.
const MARGIN: f64 = 12.0;
/// Height of a cell or slot.
pub const CELL_HEIGHT: f64 = 20.0;
/// The narrowest and widest a cell or slot gets; labels that need more are left out.
const MIN_CELL: f64 = 20.0;
const MAX_CELL: f64 = 56.0;
/// Room around a label inside its cell.
const INSET: f64 = 4.0;
/// Width of an elided column, height of an elided row.
const GAP: f64 = 16.0;
/// Space between slices, and between the views (where the arrows run).
const SLICE_SPACE: f64 = 20.0;
const VIEW_SPACE: f64 = 40.0;
/// At most this many arrows from cells to slots.
const MAX_LINKS: usize = 3;

/// An axis-aligned rectangle in picture coordinates (pixels, y down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

impl Rect {
    /// The centre point.
    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.width / 2.0, self.y + self.height / 2.0)
    }

    /// The right edge.
    pub fn right(&self) -> f64 {
        self.x + self.width
    }

    /// The bottom edge.
    pub fn bottom(&self) -> f64 {
        self.y + self.height
    }

    /// Whether the interiors overlap (rectangles that only touch do not).
    ///
    /// ```
    /// use xla_shape::draw::Rect;
    /// let a = Rect { x: 0.0, y: 0.0, width: 10.0, height: 10.0 };
    /// assert!(a.overlaps(&Rect { x: 5.0, y: 5.0, width: 10.0, height: 10.0 }));
    /// assert!(!a.overlaps(&Rect { x: 10.0, y: 0.0, width: 10.0, height: 10.0 }));
    /// ```
    pub fn overlaps(&self, other: &Rect) -> bool {
        self.x < other.right() && other.x < self.right() && self.y < other.bottom() && other.y < self.bottom()
    }
}

/// An opaque colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Colour(pub u8, pub u8, pub u8);

impl fmt::Display for Colour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// The tile colours, light enough for black labels; tile `k` gets `PALETTE[k % 8]`.
pub const PALETTE: [Colour; 8] = [
    Colour(0xa6, 0xce, 0xe3),
    Colour(0xb2, 0xdf, 0x8a),
    Colour(0xfd, 0xbf, 0x6f),
    Colour(0xca, 0xb2, 0xd6),
    Colour(0xfb, 0x9a, 0x99),
    Colour(0xff, 0xff, 0x99),
    Colour(0x8d, 0xd3, 0xc7),
    Colour(0xe5, 0xc4, 0x94),
];
/// The background of padding, under its hatching.
pub const PAD: Colour = Colour(0xee, 0xee, 0xee);
/// The hatching lines of padding.
pub const HATCH: Colour = Colour(0x80, 0x80, 0x80);
/// Arrows and the frames of the cells and slots they join.
pub const ACCENT: Colour = Colour(0xd6, 0x27, 0x28);
/// The picture's background.
pub const BACKGROUND: Colour = Colour(0xff, 0xff, 0xff);

/// Which padding a slot (or a cell of the logical view) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PaddingKind {
    /// Legacy `padded_dimensions`: the array stored as if it had the padded extents.
    Legacy,
    /// The unused part of a partial tile.
    Tile,
    /// `tail_padding_alignment_in_elements`: slots after the last tile rounding the buffer up.
    Tail,
}

/// What a cell or slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An element, in the colour of the tile its slot belongs to.
    Element(Colour),
    /// Padding (drawn hatched).
    Padding(PaddingKind),
}

/// One cell of the logical view.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Where it is drawn.
    pub rect: Rect,
    /// Its index (over the legacy padded extents for a padding cell).
    pub index: Box<[i64]>,
    /// The slot of its element (`None` for legacy padding).
    pub slot: Option<Slot>,
    /// An element or legacy padding.
    pub kind: Kind,
}

/// One slot of the memory strip.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotBox {
    /// Where it is drawn.
    pub rect: Rect,
    /// Its offset in the buffer, in slots.
    pub slot: Slot,
    /// The element it holds, if any.
    pub element: Option<Box<[i64]>>,
    /// An element or which padding.
    pub kind: Kind,
}

/// The frame of one byte around the sub-byte slots it packs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByteBox {
    /// Where it is drawn (one row of the strip; a byte split across rows has a box in each).
    pub rect: Rect,
    /// The byte's offset in the buffer.
    pub byte: u64,
}

/// A text label and the box it takes (estimated from the monospace advance).
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// The text.
    pub text: String,
    /// Its box; the text is drawn centred in it.
    pub rect: Rect,
    /// Font size in pixels.
    pub size: f64,
}

/// An arrow from a cell of the logical view to the slot of the same element.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// The element.
    pub index: Box<[i64]>,
    /// Its slot.
    pub slot: Slot,
    /// The cell (framed in the accent colour).
    pub cell: Rect,
    /// The slot (framed in the accent colour).
    pub target: Rect,
    /// Start (the bottom centre of the cell).
    pub from: (f64, f64),
    /// End (the top centre of the slot).
    pub to: (f64, f64),
}

/// A run of rows, columns, slices or slots left out of a large array's picture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Elision {
    /// The band drawn in its place.
    pub rect: Rect,
    /// How many positions it stands for.
    pub count: u64,
}

/// Everything a picture shows, with positions. [`Picture::to_svg`] writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// Width in pixels (an integer).
    pub width: f64,
    /// Height in pixels (an integer).
    pub height: f64,
    /// The shape's XLA string.
    pub shape: String,
    /// The logical view's cells.
    pub cells: Vec<Cell>,
    /// The memory strip's slots, in slot order.
    pub slots: Vec<SlotBox>,
    /// Byte frames (sub-byte element sizes only).
    pub bytes: Vec<ByteBox>,
    /// Frames of the innermost tiles in the strip, for nested tiles (e.g. the `(2,1)` pairs of
    /// `T(8,128)(2,1)`).
    pub sub_tiles: Vec<Rect>,
    /// Every piece of text.
    pub labels: Vec<Label>,
    /// Arrows from cells to their slots.
    pub links: Vec<Link>,
    /// Elided rows, columns, slices and slots.
    pub elisions: Vec<Elision>,
}

/// A count or position as a coordinate: every count drawn is bounded by [`Options`]' limits,
/// far below 2^52.
#[allow(clippy::cast_precision_loss, reason = "invariant: counts drawn are below the options' limits, < 2^52")]
fn px(n: u64) -> f64 {
    n as f64
}

/// The box of a text of `text.chars().count()` characters centred at `(cx, cy)`.
fn text_box(text: &str, size: f64, cx: f64, cy: f64) -> Rect {
    let width = px(u64::try_from(text.chars().count()).unwrap_or(u64::MAX)) * CHAR * size / FONT;
    Rect { x: cx - width / 2.0, y: cy - size / 2.0, width, height: size }
}

/// The width a label of `text` needs inside a cell.
fn needed(text: &str) -> f64 {
    text_box(text, FONT, 0.0, 0.0).width + 2.0 * INSET
}

/// Collects labels, dropping any that would not fit the box it names.
struct Labels(Vec<Label>);

impl Labels {
    /// A label centred at `(cx, cy)`.
    fn at(&mut self, text: String, size: f64, cx: f64, cy: f64) {
        let rect = text_box(&text, size, cx, cy);
        self.0.push(Label { text, rect, size });
    }

    /// A label starting at `x`, centred on `cy`.
    fn left(&mut self, text: String, size: f64, x: f64, cy: f64) {
        let rect = text_box(&text, size, 0.0, cy);
        self.at(text, size, x + rect.width / 2.0, cy);
    }

    /// A label inside `rect` if it fits there with room to spare.
    fn inside(&mut self, text: String, rect: &Rect) {
        if needed(&text) <= rect.width {
            let (cx, cy) = rect.centre();
            self.at(text, FONT, cx, cy);
        }
    }
}

/// The slots of one colour group and of one innermost tile.
///
/// The colour group is the first tiling level's tile when its slots are contiguous (later
/// levels only refine inside it), else the deepest level whose tile still is; untiled, one run
/// of the most minor dimension. The innermost tile is the last level's (the group itself with
/// fewer than two levels). Each is the product of the trailing entries of the expanded shape
/// that the tile's inner entries became.
fn tile_slots(array: ArrayShape<'_>, expanded: &[u64]) -> (u64, u64) {
    let tiles: Vec<_> = array.layout().map(|l| l.tiles().collect()).unwrap_or_default();
    let mut inner = 1usize;
    let mut last = 1usize;
    for (level, tile) in tiles.iter().enumerate() {
        let groups = tile.iter().filter(|d| matches!(d, TileDim::Size(_))).count();
        inner = match inner.checked_sub(tile.rank()) {
            Some(rest) if level > 0 => rest.saturating_add(groups.saturating_mul(2)),
            _ => groups,
        };
        last = groups;
    }
    let product = |count: usize| {
        let start = expanded.len().saturating_sub(count);
        expanded
            .get(start..)
            .unwrap_or_default()
            .iter()
            .try_fold(1u64, |acc, &e| acc.checked_mul(e))
            .unwrap_or(1)
            .max(1)
    };
    let group = product(inner);
    (group, if tiles.len() > 1 { product(last).min(group) } else { group })
}

/// The first tile's size along each logical dimension (1 where it does not split the
/// dimension alone: untiled, outside the tile, or merged by `*`).
fn periods(array: ArrayShape<'_>) -> Vec<u64> {
    let rank = array.rank();
    let mut out = vec![1u64; rank];
    let Some(tile) = array.layout().and_then(|l| l.tiles().next()) else { return out };
    let entries: Vec<TileDim> = tile.iter().collect();
    let order = array.minor_to_major();
    // Tile entry j (most major first) meets physical position rank − r + j, the dimension
    // `order.major(..)` there; a `*` before it means it is merged.
    for (j, entry) in entries.iter().enumerate() {
        let merged = j.checked_sub(1).and_then(|p| entries.get(p)).is_some_and(|e| *e == TileDim::Combine);
        let position = (rank.checked_add(j)).and_then(|s| s.checked_sub(entries.len()));
        if let (TileDim::Size(t), false, Some(p)) = (entry, merged, position) {
            if let Some(slot) = out.get_mut(order.major(p).index()) {
                *slot = *t;
            }
        }
    }
    out
}

/// Which dimensions form the rows and columns of the grid (`None`: an axis of one position).
fn grid_dims(rank: usize, options: &Options) -> Result<(Option<usize>, Option<usize>)> {
    match options.grid {
        Some((rows, columns)) => {
            for d in [rows, columns] {
                if d.index() >= rank {
                    return Err(Error::DimensionOutOfRange {
                        dimension: i64::try_from(d.index()).unwrap_or(i64::MAX),
                        rank,
                    });
                }
            }
            if rows == columns {
                return Err(Error::invalid_argument(ArgumentProblem::GridDimensionTwice { dimension: rows.index() }));
            }
            Ok((Some(rows.index()), Some(columns.index())))
        }
        None => Ok(match rank.checked_sub(2) {
            Some(r) => (Some(r), Some(r.saturating_add(1))),
            None if rank == 1 => (None, Some(0)),
            None => (None, None),
        }),
    }
}

/// The positions along an optional grid axis.
fn grid_axis(dim: Option<usize>, extents: &[u64], periods: &[u64], limit: u64) -> Vec<Entry> {
    match dim {
        Some(d) => axis::entries(extents.get(d).copied().unwrap_or(1), periods.get(d).copied().unwrap_or(1), limit),
        None => vec![Entry::At(0)],
    }
}

/// Memory rows: slots per row, a multiple of the tile when it is small, a divisor of it when
/// it is large, so tiles line up in columns.
fn row_length(tile: u64, storage: u64) -> u64 {
    const ROW: u64 = 32;
    if storage <= ROW {
        return storage.max(1);
    }
    if tile <= ROW {
        return ROW.checked_div(tile).unwrap_or(1).max(1).saturating_mul(tile.max(1));
    }
    (8..=ROW).rev().find(|d| tile.checked_rem(*d) == Some(0)).unwrap_or(ROW)
}

/// The rows of the memory strip: each row's first slot, `None` for an elision.
fn memory_rows(storage: u64, row: u64, max_slots: u64) -> Vec<Option<u64>> {
    let rows = storage.div_ceil(row);
    let budget = max_slots.checked_div(row).unwrap_or(0).max(2);
    if rows <= budget {
        return (0..rows).map(|r| Some(r.saturating_mul(row))).collect();
    }
    let tail = (budget / 4).max(1);
    let head = budget.saturating_sub(tail);
    let mut out: Vec<Option<u64>> = (0..head).map(|r| Some(r.saturating_mul(row))).collect();
    out.push(None);
    out.extend((rows.saturating_sub(tail)..rows).map(|r| Some(r.saturating_mul(row))));
    out
}

/// The grid every slice shares: which dimensions, which positions.
struct Grid {
    rank: usize,
    row_dim: Option<usize>,
    col_dim: Option<usize>,
    rows: Vec<Entry>,
    columns: Vec<Entry>,
    outer: Vec<usize>,
    outer_extents: Vec<u64>,
    /// The slices shown, by their row-major number over the outer dimensions (as an axis, so
    /// the same head-and-tail rule applies).
    slices: Vec<Entry>,
}

impl Grid {
    fn new(array: ArrayShape<'_>, options: &Options) -> Result<Self> {
        let extents: Vec<u64> =
            padding::padded_extents(array)?.iter().map(|&e| u64::try_from(e).unwrap_or(0)).collect();
        let rank = array.rank();
        let (row_dim, col_dim) = grid_dims(rank, options)?;
        let periods = periods(array);
        let outer: Vec<usize> = (0..rank).filter(|d| Some(*d) != row_dim && Some(*d) != col_dim).collect();
        let outer_extents: Vec<u64> = outer.iter().map(|&d| extents.get(d).copied().unwrap_or(1)).collect();
        // The product of extents PhysicalMap::new accepted: it fits.
        let count = outer_extents.iter().try_fold(1u64, |acc, &e| acc.checked_mul(e)).unwrap_or(0);
        Ok(Self {
            rank,
            row_dim,
            col_dim,
            rows: grid_axis(row_dim, &extents, &periods, options.max_extent),
            columns: grid_axis(col_dim, &extents, &periods, options.max_extent),
            slices: axis::entries(count, 1, options.max_slices),
            outer,
            outer_extents,
        })
    }

    /// The outer indices of slice number `n` (row-major).
    fn slice(&self, mut n: u64) -> Vec<u64> {
        let mut index = vec![0u64; self.outer_extents.len()];
        for (i, &e) in index.iter_mut().zip(&self.outer_extents).rev() {
            *i = n.checked_rem(e).unwrap_or(0);
            n = n.checked_div(e).unwrap_or(0);
        }
        index
    }

    /// The index of the cell at row `r` and column `c` of a slice.
    fn index(&self, slice: &[u64], r: u64, c: u64) -> Vec<i64> {
        let mut index = vec![0i64; self.rank];
        let pairs = self.outer.iter().copied().zip(slice.iter().copied());
        for (d, i) in pairs.chain(self.row_dim.map(|d| (d, r))).chain(self.col_dim.map(|d| (d, c))) {
            if let Some(e) = index.get_mut(d) {
                *e = i64::try_from(i).unwrap_or(i64::MAX);
            }
        }
        index
    }

    /// Every index the slices show.
    fn shown(&self) -> impl Iterator<Item = Vec<i64>> + '_ {
        self.slices.iter().filter_map(at).flat_map(move |n| {
            let slice = self.slice(n);
            self.rows.iter().filter_map(at).flat_map(move |r| {
                let slice = slice.clone();
                self.columns.iter().filter_map(at).map(move |c| self.index(&slice, r, c))
            })
        })
    }

    /// The name of a slice: its outer indices, `:` for the grid dimensions.
    fn slice_name(&self, slice: &[u64]) -> String {
        let entries: Vec<String> = (0..self.rank)
            .map(|d| match self.outer.iter().position(|&o| o == d).and_then(|k| slice.get(k)) {
                Some(i) => i.to_string(),
                None => ":".to_owned(),
            })
            .collect();
        format!("[{}]", entries.join(","))
    }
}

/// The picture being built: the array's facts and everything placed so far.
struct Builder<'a> {
    array: ArrayShape<'a>,
    map: PhysicalMap,
    tile: u64,
    /// Slots of the innermost tile, framed in the strip when smaller than `tile`.
    sub_tile: u64,
    letters: bool,
    fill: String,
    cell: f64,
    labels: Labels,
    cells: Vec<Cell>,
    slots: Vec<SlotBox>,
    bytes: Vec<ByteBox>,
    sub_tiles: Vec<Rect>,
    elisions: Vec<Elision>,
}

impl Builder<'_> {
    fn colour(&self, slot: Slot) -> Colour {
        let k = slot.get().checked_div(self.tile).unwrap_or(0).checked_rem(8).unwrap_or(0);
        PALETTE.get(usize::try_from(k).unwrap_or(0)).copied().unwrap_or(PALETTE[0])
    }

    /// The text naming an element: its letter, or its bare index `i,j`.
    fn label(&self, index: &[i64]) -> String {
        if self.letters { element_label(index, self.array.dimensions(), true) } else { join(index) }
    }

    fn padding_kind(&self, slot: Slot) -> PaddingKind {
        if slot.get() >= self.map.raw_slots() {
            PaddingKind::Tail
        } else if padding::is_padded(self.array) {
            PaddingKind::Legacy
        } else {
            PaddingKind::Tile
        }
    }

    /// The title and the facts line; returns where the views start.
    fn header(&mut self, grid: &Grid) -> f64 {
        let name = self.array.as_shape().to_string();
        self.labels.left(name, 12.0, MARGIN, MARGIN + 6.0);
        let axes = match (grid.row_dim, grid.col_dim) {
            (Some(r), Some(c)) => format!("rows: dimension {r}, columns: dimension {c}"),
            (None, Some(c)) => format!("columns: dimension {c}"),
            _ => "a scalar".to_owned(),
        };
        let colour = if self.array.layout().is_some_and(|l| l.is_tiled()) {
            match self.sub_tile {
                sub if sub > 1 && sub < self.tile => {
                    format!("colour: tiles of {} slots; dashed frames: inner tiles of {sub}", self.tile)
                }
                _ => format!("colour: tiles of {} slots", self.tile),
            }
        } else {
            format!("colour: runs of {} slots along the most minor dimension", self.tile)
        };
        let facts = format!(
            "{axes}; {} slots of {} bits ({} bytes); {colour}",
            self.map.storage_slots(),
            self.map.bits_per_slot(),
            self.map.storage_bytes(),
        );
        self.labels.left(facts, FONT, MARGIN, MARGIN + 6.0 + LINE);
        MARGIN + 2.0 * LINE + 8.0
    }

    /// The logical view from `top`, slices left to right; returns its bottom.
    fn logical(&mut self, grid: &Grid, top: f64) -> Result<f64> {
        let row_header = grid.rows.iter().filter_map(at).map(|r| needed(&r.to_string())).fold(0.0, f64::max);
        let mut x = MARGIN;
        let mut bottom = top;
        for entry in &grid.slices {
            let slice = match entry {
                Entry::At(n) => grid.slice(*n),
                Entry::Elided(count) => {
                    self.labels.at("…".to_owned(), FONT, x + GAP / 2.0, top + LINE / 2.0);
                    self.elisions.push(Elision { rect: Rect { x, y: top, width: GAP, height: LINE }, count: *count });
                    x += GAP + SLICE_SPACE;
                    continue;
                }
            };
            let slice = &slice;
            let mut y = top;
            let mut right = x;
            if !grid.outer.is_empty() {
                let name = grid.slice_name(slice);
                right = text_box(&name, FONT, 0.0, 0.0).width + x;
                self.labels.left(name, FONT, x, y + LINE / 2.0);
                y += LINE;
            }
            let left = x + row_header;
            let right = self.column_headers(grid, left, y).max(right);
            y += LINE;
            for r in &grid.rows {
                match r {
                    Entry::Elided(count) => {
                        let rect = Rect { x: left, y, width: right - left, height: GAP };
                        self.labels.at("⋮".to_owned(), FONT, left + self.cell / 2.0, y + GAP / 2.0);
                        self.elisions.push(Elision { rect, count: *count });
                        y += GAP;
                    }
                    Entry::At(r) => {
                        if grid.row_dim.is_some() {
                            self.labels.inside(r.to_string(), &Rect { x, y, width: row_header, height: CELL_HEIGHT });
                        }
                        self.cell_row(grid, slice, *r, left, y)?;
                        y += CELL_HEIGHT;
                    }
                }
            }
            bottom = bottom.max(y);
            x = right + SLICE_SPACE;
        }
        Ok(bottom)
    }

    /// The column numbers above a slice; returns the slice's right edge.
    fn column_headers(&mut self, grid: &Grid, left: f64, y: f64) -> f64 {
        let mut x = left;
        for c in &grid.columns {
            match c {
                Entry::At(i) => {
                    if grid.col_dim.is_some() {
                        self.labels.inside(i.to_string(), &Rect { x, y, width: self.cell, height: LINE });
                    }
                    x += self.cell;
                }
                Entry::Elided(_) => x += GAP,
            }
        }
        x
    }

    /// One row of cells of a slice.
    fn cell_row(&mut self, grid: &Grid, slice: &[u64], r: u64, left: f64, y: f64) -> Result<()> {
        let mut x = left;
        for c in &grid.columns {
            match c {
                Entry::Elided(count) => {
                    self.labels.at("…".to_owned(), FONT, x + GAP / 2.0, y + CELL_HEIGHT / 2.0);
                    let rect = Rect { x, y, width: GAP, height: CELL_HEIGHT };
                    self.elisions.push(Elision { rect, count: *count });
                    x += GAP;
                }
                Entry::At(c) => {
                    let index = grid.index(slice, r, *c);
                    let rect = Rect { x, y, width: self.cell, height: CELL_HEIGHT };
                    let (kind, slot) = if index.iter().zip(self.array.dimensions()).all(|(&i, &d)| i < d) {
                        let slot = self.map.slot(&index)?;
                        self.labels.inside(self.label(&index), &rect);
                        (Kind::Element(self.colour(slot)), Some(slot))
                    } else {
                        self.labels.inside(self.fill.clone(), &rect);
                        (Kind::Padding(PaddingKind::Legacy), None)
                    };
                    self.cells.push(Cell { rect, index: index.into(), slot, kind });
                    x += self.cell;
                }
            }
        }
        Ok(())
    }

    /// The memory strip from `top`; returns its bottom.
    fn memory(&mut self, options: &Options, top: f64) -> Result<f64> {
        let storage = self.map.storage_slots();
        let row = row_length(self.tile, storage);
        let rows = memory_rows(storage, row, options.max_slots);
        let last_start = rows.iter().flatten().max().copied().unwrap_or(0);
        let left = MARGIN + needed(&format!("slot {last_start}"));
        let mut y = top;
        for (k, start) in rows.iter().enumerate() {
            let Some(start) = *start else {
                // From the end of the row before to the start of the row after.
                let before = k.checked_sub(1).and_then(|p| rows.get(p)).copied().flatten();
                let after = k.checked_add(1).and_then(|n| rows.get(n)).copied().flatten();
                let from = before.map_or(0, |s| s.saturating_add(row));
                let count = after.unwrap_or(from).saturating_sub(from);
                let rect = Rect { x: left, y, width: px(row) * self.cell, height: GAP };
                self.labels.left(format!("… {count} slots …"), FONT, left, y + GAP / 2.0);
                self.elisions.push(Elision { rect, count });
                y += GAP;
                continue;
            };
            self.labels.left(format!("slot {start}"), FONT, MARGIN, y + CELL_HEIGHT / 2.0);
            let end = start.saturating_add(row).min(storage);
            self.slot_row(start, end, left, y)?;
            self.sub_tile_row(start, end, left, y);
            y += CELL_HEIGHT;
            if self.map.bits_per_slot() < 8 {
                self.byte_row(start, end, left, y);
                y += LINE;
            }
            y += 4.0;
        }
        let mut heading = format!("memory, in order: {storage} slots");
        let raw = self.map.raw_slots();
        let elements = crate::size::elements_in(self.array).ok().and_then(|n| u64::try_from(n).ok()).unwrap_or(raw);
        let inner = match self.padding_kind(Slot(0)) {
            PaddingKind::Legacy => "legacy padded_dimensions",
            _ => "partial tiles",
        };
        let parts: Vec<String> =
            [(raw.saturating_sub(elements), inner), (storage.saturating_sub(raw), "tail alignment")]
                .into_iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, what)| format!("{n} for {what}"))
                .collect();
        if !parts.is_empty() {
            let _ = write!(heading, "; hatched padding: {}", parts.join(", "));
        }
        if self.map.bits_per_slot() < 8 {
            let _ = write!(heading, "; {}-bit slots packed into bytes, low bits first", self.map.bits_per_slot());
        }
        self.labels.left(heading, FONT, MARGIN, y + LINE / 2.0);
        Ok(y + LINE)
    }

    /// The slots `start..end`, one row from `left`.
    fn slot_row(&mut self, start: u64, end: u64, left: f64, y: f64) -> Result<()> {
        let mut element = vec![0i64; self.array.rank()];
        for s in start..end {
            let rect =
                Rect { x: left + px(s.saturating_sub(start)) * self.cell, y, width: self.cell, height: CELL_HEIGHT };
            let slot = Slot(s);
            let (kind, held) = if self.map.index_of_slot_into(slot, &mut element)? {
                self.labels.inside(self.label(&element), &rect);
                (Kind::Element(self.colour(slot)), Some(element.clone().into_boxed_slice()))
            } else {
                let kind = self.padding_kind(slot);
                if kind == PaddingKind::Legacy {
                    self.labels.inside(self.fill.clone(), &rect);
                }
                (Kind::Padding(kind), None)
            };
            self.slots.push(SlotBox { rect, slot, element: held, kind });
        }
        Ok(())
    }

    /// The frames of the innermost tiles among the slots `start..end` of a row, when the
    /// layout nests tiles.
    fn sub_tile_row(&mut self, start: u64, end: u64, left: f64, y: f64) {
        let sub = self.sub_tile;
        if sub <= 1 || sub >= self.tile {
            return;
        }
        let mut first = start.checked_div(sub).unwrap_or(0).saturating_mul(sub);
        while first < end {
            let (from, to) = (first.max(start), first.saturating_add(sub).min(end));
            let x = left + px(from.saturating_sub(start)) * self.cell;
            self.sub_tiles.push(Rect { x, y, width: px(to.saturating_sub(from)) * self.cell, height: CELL_HEIGHT });
            first = first.saturating_add(sub);
        }
    }

    /// The frames of the bytes holding the sub-byte slots `start..end` (drawn on the row above
    /// `y`), with their numbers below.
    fn byte_row(&mut self, start: u64, end: u64, left: f64, y: f64) {
        let bits = self.map.bits_per_slot();
        let (first_bit, end_bit) = (start.saturating_mul(bits), end.saturating_mul(bits));
        let x_of = |bit: u64| left + px(bit.saturating_sub(first_bit)) * self.cell / px(bits);
        let mut byte = first_bit / 8;
        while byte.saturating_mul(8) < end_bit {
            let (x0, x1) = (
                x_of(byte.saturating_mul(8).max(first_bit)),
                x_of(byte.saturating_add(1).saturating_mul(8).min(end_bit)),
            );
            // "byte N" where it fits, else the bare number.
            let tag = Rect { x: x0, y, width: x1 - x0, height: LINE };
            let name = format!("byte {byte}");
            self.labels.inside(if needed(&name) <= tag.width { name } else { byte.to_string() }, &tag);
            self.bytes
                .push(ByteBox { rect: Rect { x: x0, y: y - CELL_HEIGHT, width: x1 - x0, height: CELL_HEIGHT }, byte });
            byte = byte.saturating_add(1);
        }
    }

    /// Arrows from the origin and its neighbours along the grid dimensions to their slots,
    /// where both ends are drawn.
    fn links(&self, grid: &Grid) -> Result<Vec<Link>> {
        let origin = vec![0i64; grid.rank];
        let steps = [grid.row_dim, grid.col_dim].into_iter().flatten().map(|d| {
            let mut step = origin.clone();
            if let Some(e) = step.get_mut(d) {
                *e = 1;
            }
            step
        });
        let mut links = Vec::new();
        for index in std::iter::once(origin.clone()).chain(steps).take(MAX_LINKS) {
            let Some(cell) = self.cells.iter().find(|c| *c.index == *index && matches!(c.kind, Kind::Element(_)))
            else {
                continue;
            };
            let slot = self.map.slot(&index)?;
            if let Some(target) = self.slots.iter().find(|s| s.slot == slot) {
                let from = (cell.rect.centre().0, cell.rect.bottom());
                let to = (target.rect.centre().0, target.rect.y);
                links.push(Link { index: index.into(), slot, cell: cell.rect, target: target.rect, from, to });
            }
        }
        Ok(links)
    }
}

/// Computes the picture of a validated array.
///
/// # Errors
///
/// As [`crate::draw::picture`].
pub fn build(array: ArrayShape<'_>, options: &Options) -> Result<Picture> {
    options.check()?;
    let map = PhysicalMap::new(array)?;
    let (tile, sub_tile) = tile_slots(array, &tiling::expanded_shape(array)?);
    let grid = Grid::new(array, options)?;
    let mut b = Builder {
        array,
        map,
        tile,
        sub_tile,
        letters: crate::size::elements_in(array)? <= MAX_LETTERS,
        fill: fill_label(array),
        cell: MIN_CELL,
        labels: Labels(Vec::new()),
        cells: Vec::new(),
        slots: Vec::new(),
        bytes: Vec::new(),
        sub_tiles: Vec::new(),
        elisions: Vec::new(),
    };
    // One width for every cell and slot: the widest label among the cells shown (the slots
    // show the same elements, or legacy padding's fill), within MIN_CELL..=MAX_CELL.
    let widest = grid
        .shown()
        .map(|i| needed(&b.label(&i)))
        .chain(padding::is_padded(array).then(|| needed(&b.fill)))
        .fold(MIN_CELL, f64::max);
    b.cell = widest.ceil().min(MAX_CELL);
    let top = b.header(&grid);
    let bottom = b.logical(&grid, top)?;
    let bottom = b.memory(options, bottom + VIEW_SPACE)?;
    let links = b.links(&grid)?;
    let right = b
        .labels
        .0
        .iter()
        .map(|l| l.rect.right())
        .chain(b.cells.iter().map(|c| c.rect.right()))
        .chain(b.slots.iter().map(|s| s.rect.right()))
        .fold(0.0, f64::max);
    Ok(Picture {
        width: (right + MARGIN).ceil(),
        height: (bottom + MARGIN).ceil(),
        shape: array.as_shape().to_string(),
        cells: b.cells,
        slots: b.slots,
        bytes: b.bytes,
        sub_tiles: b.sub_tiles,
        labels: b.labels.0,
        links,
        elisions: b.elisions,
    })
}

/// The position of an axis entry, if it is one.
fn at(entry: &Entry) -> Option<u64> {
    match entry {
        Entry::At(i) => Some(*i),
        Entry::Elided(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{row_length, tile_slots};
    use crate::{text, tiling};

    fn groups(s: &str) -> (u64, u64) {
        let shape = text::parse_shape(s).unwrap();
        let array = shape.as_array().unwrap();
        tile_slots(array, &tiling::expanded_shape(array).unwrap())
    }

    #[test]
    fn colour_groups_and_inner_tiles() {
        // Untiled: a run of the most minor dimension.
        assert_eq!(groups("f32[3,5]{1,0}"), (5, 5));
        assert_eq!(groups("f32[3,5]{0,1}"), (3, 3));
        // One level: the tile.
        assert_eq!(groups("f32[3,5]{1,0:T(2,2)}"), (4, 4));
        assert_eq!(groups("f32[6]{0:T(2,4)}"), (8, 8));
        assert_eq!(groups("f32[2,3,5]{2,1,0:T(*,4,2)}"), (8, 8));
        // Nested: the first tile, and the last level inside it.
        assert_eq!(groups("bf16[8,256]{1,0:T(8,128)(2,1)}"), (1024, 2));
        assert_eq!(groups("f32[5,6]{1,0:T(4,4)(2,2)}"), (16, 4));
        // A later tile wider than the first one's inside: its own tile is the group.
        assert_eq!(groups("f32[8,8]{1,0:T(2)(2,2)}"), (4, 4));
    }

    #[test]
    fn memory_rows_line_tiles_up() {
        assert_eq!(row_length(4, 24), 24);
        assert_eq!(row_length(4, 100), 32);
        assert_eq!(row_length(3, 100), 30);
        assert_eq!(row_length(1024, 2048), 32);
        assert_eq!(row_length(40, 2048), 20);
        assert_eq!(row_length(37, 2048), 32);
    }
}
