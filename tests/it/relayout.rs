//! Relayout (issue 14, `docs/relayout.md`): every plan against a reference that moves one element
//! at a time through `PhysicalMap` (slot → bit offset) or a view's byte strides.

use proptest::prelude::*;
use xla_shape::error::{RelayoutProblem, RelayoutSide};
use xla_shape::make::{LayoutSpec, make_shape_with_layout};
use xla_shape::padding::{Fill, fill_for, padding_fill};
use xla_shape::proto::PaddingValue;
use xla_shape::relayout::{RelayoutPlan, StorePolicy, StridedView};
use xla_shape::{ArrayShape, Error, PhysicalMap, PrimitiveType, ShapeBuf, Slot, strategy};

/// One side of a test: a layout or a view.
#[derive(Debug, Clone)]
enum Side {
    Layout(ShapeBuf),
    View(StridedView, usize),
}

impl Side {
    fn array(&self) -> Option<ArrayShape<'_>> {
        match self {
            Side::Layout(s) => s.as_array(),
            Side::View(..) => None,
        }
    }

    fn plan_with(&self, other: &Side) -> Result<RelayoutPlan, Error> {
        self.plan_with_stores(other, StorePolicy::Auto)
    }

    fn plan_with_stores(&self, other: &Side, stores: StorePolicy) -> Result<RelayoutPlan, Error> {
        match (self, other) {
            (Side::Layout(a), Side::Layout(b)) => {
                RelayoutPlan::with_stores(a.as_array().unwrap(), b.as_array().unwrap(), stores)
            }
            (Side::Layout(a), Side::View(v, _)) => RelayoutPlan::with_stores(a.as_array().unwrap(), v, stores),
            (Side::View(v, _), Side::Layout(b)) => RelayoutPlan::with_stores(v, b.as_array().unwrap(), stores),
            (Side::View(v, _), Side::View(w, _)) => RelayoutPlan::with_stores(v, w, stores),
        }
    }

    fn len(&self) -> usize {
        match self {
            Side::Layout(s) => {
                usize::try_from(PhysicalMap::new(s.as_array().unwrap()).unwrap().storage_bytes()).unwrap()
            }
            Side::View(_, len) => *len,
        }
    }

    /// (slot bits, value bits) — the value is the low min(slot, 8 × byte width) bits.
    fn bits(&self, t: PrimitiveType) -> (u64, u64) {
        let container = u64::from(t.byte_width().unwrap()) * 8;
        match self {
            Side::Layout(s) => {
                let slot = PhysicalMap::new(s.as_array().unwrap()).unwrap().bits_per_slot();
                (slot, slot.min(container))
            }
            Side::View(..) => (container, container),
        }
    }

    /// The bit offset of an element, the reference way.
    fn bit_offset(&self, map: Option<&PhysicalMap>, index: &[i64]) -> u64 {
        match self {
            Side::Layout(_) => map.unwrap().bit_offset(index).unwrap(),
            Side::View(v, _) => {
                let byte = index
                    .iter()
                    .zip(v.byte_strides())
                    .fold(i128::from(v.offset()), |a, (&i, &s)| a + i128::from(i) * i128::from(s));
                u64::try_from(byte).unwrap() * 8
            }
        }
    }
}

/// The `bits` bits at bit `offset`, low bits first (also `relayout_window`, `shard_buffers`).
pub(super) fn read(buf: &[u8], offset: u64, bits: u64) -> u128 {
    (0..bits.min(128)).fold(0u128, |v, k| {
        let bit = offset + k;
        v | (u128::from((buf[usize::try_from(bit / 8).unwrap()] >> (bit % 8)) & 1) << k)
    })
}

pub(super) fn write(buf: &mut [u8], offset: u64, bits: u64, value: u128) {
    for k in 0..bits {
        let bit = offset + k;
        let byte = &mut buf[usize::try_from(bit / 8).unwrap()];
        let one = k < 128 && (value >> k) & 1 == 1;
        *byte = (*byte & !(1 << (bit % 8))) | (u8::from(one) << (bit % 8));
    }
}

fn mask(bits: u64) -> u128 {
    if bits >= 128 { u128::MAX } else { (1u128 << bits) - 1 }
}

/// Every index of `dims`, last dimension fastest.
pub(super) fn indices(dims: &[u64]) -> Vec<Vec<i64>> {
    if dims.contains(&0) {
        return Vec::new();
    }
    let mut out = vec![vec![]];
    for &d in dims {
        out = out
            .into_iter()
            .flat_map(|p| (0..i64::try_from(d).unwrap()).map(move |i| [p.clone(), vec![i]].concat()))
            .collect();
    }
    out
}

/// The reference's own encoding of a legacy padding fill, for the types it knows (integers,
/// `pred`, `f32`, `f64`); `None` for zero bits.
fn reference_pattern(fill: Fill, t: PrimitiveType) -> Option<u128> {
    let bits = u64::from(t.bit_width().unwrap());
    let v = match fill {
        Fill::Int(i) => u128::from_ne_bytes(i.to_ne_bytes()) & mask(bits),
        Fill::Bool(b) => u128::from(b),
        Fill::Unspecified | Fill::Anything | Fill::Zero | Fill::ZeroBitPattern => 0,
        f => match t {
            // Every f32 fill (±∞, 1) is exact in f32.
            #[allow(clippy::cast_possible_truncation)]
            PrimitiveType::F32 => u128::from((f.as_f64().unwrap() as f32).to_bits()),
            PrimitiveType::F64 => u128::from(f.as_f64().unwrap().to_bits()),
            _ => panic!("no reference encoding of {f:?} for {t}"),
        },
    };
    (v != 0).then_some(v)
}

/// The expected destination: `initial` (what a view's gaps keep), padding written as specified,
/// then every element moved.
fn reference(src: &Side, dst: &Side, t: PrimitiveType, dims: &[u64], input: &[u8], initial: &[u8]) -> Vec<u8> {
    let mut out = initial.to_vec();
    let src_map = src.array().map(|a| PhysicalMap::new(a).unwrap());
    let dst_map = dst.array().map(|a| PhysicalMap::new(a).unwrap());
    if let (Some(map), Some(array)) = (&dst_map, dst.array()) {
        out.fill(0);
        let padded = xla_shape::padding::is_padded(array);
        let pattern = if padded { reference_pattern(padding_fill(array).unwrap(), t) } else { None };
        if let Some(p) = pattern {
            let mut index = vec![0i64; dims.len()];
            for slot in 0..map.raw_slots() {
                if !map.index_of_slot_into(Slot(slot), &mut index).unwrap() {
                    write(&mut out, slot * map.bits_per_slot(), map.bits_per_slot(), p);
                }
            }
        }
    }
    let (_, src_value) = src.bits(t);
    let (dst_slot, dst_value) = dst.bits(t);
    let keep = src_value.min(dst_value);
    for index in indices(dims) {
        let value = read(input, src.bit_offset(src_map.as_ref(), &index), keep) & mask(keep);
        write(&mut out, dst.bit_offset(dst_map.as_ref(), &index), dst_slot, value);
    }
    out
}

/// Element types whose legacy padding the reference can encode; the others pad with zeros.
fn pattern_known(t: PrimitiveType) -> bool {
    use xla_shape::primitive::Category;
    matches!(t.category(), Category::SignedInteger | Category::UnsignedInteger | Category::Boolean)
        || matches!(t, PrimitiveType::F32 | PrimitiveType::F64)
}

/// A layout for `dims`: any `minor_to_major`; plain, tiled (nested, `*`, rank extension) or legacy
/// padded; sometimes an element size (packed sub-byte, or any width) and tail padding.
pub fn layout(t: PrimitiveType, dims: Vec<i64>) -> impl Strategy<Value = ShapeBuf> {
    let rank = dims.len();
    (
        strategy::minor_to_major(rank),
        0..3u8,
        proptest::collection::vec(strategy::tile(rank + 1), 1..=2),
        proptest::collection::vec(0i64..=2, rank),
        0..6i32,
        prop_oneof![4 => Just(0i64), 2 => Just(-1i64), 1 => 1i64..=40],
        prop_oneof![3 => Just(1i64), 1 => 1i64..=8],
    )
        .prop_filter_map("a valid layout", move |(m2m, mode, tiles, extra, pad, bits, tail)| {
            let bits = if bits == -1 { i64::from(t.bit_width().unwrap()) } else { bits };
            let mut spec = LayoutSpec::new(&m2m).element_size_in_bits(bits).tail_padding_alignment_in_elements(tail);
            let tile_refs: Vec<&[i64]> = tiles.iter().map(Vec::as_slice).collect();
            match mode {
                1 => spec = spec.tiles(&tile_refs),
                2 => {
                    let padded: Vec<i64> = dims.iter().zip(&extra).map(|(d, e)| d + e).collect();
                    let value =
                        if pattern_known(t) { PaddingValue::try_from(pad).unwrap() } else { PaddingValue::ZeroPad };
                    spec = spec.padded_dimensions(&padded, value);
                }
                _ => {}
            }
            let shape = make_shape_with_layout(t, &dims, &spec).ok()?;
            // LOWEST/HIGHEST have no meaning on complex types: not a relayout case.
            fill_for(shape.as_array()?.layout()?.padding_value(), t).ok()?;
            Some(shape)
        })
}

/// A view of `dims`: a random dimension order, gaps, signs and base offset.
fn view(t: PrimitiveType, dims: Vec<u64>) -> impl Strategy<Value = Side> {
    let rank = dims.len();
    (
        Just((0..rank).collect::<Vec<_>>()).prop_shuffle(),
        proptest::collection::vec((0u64..=2, any::<bool>()), rank),
        0u64..=3,
        0usize..=3,
    )
        .prop_map(move |(order, gaps, lead, trail)| {
            let width = u64::from(t.byte_width().unwrap());
            let mut strides = vec![0i64; rank];
            let mut span = width;
            for &d in order.iter().rev() {
                let (gap, negative) = gaps[d];
                let stride = span + gap * width;
                strides[d] = if negative { -i64::try_from(stride).unwrap() } else { i64::try_from(stride).unwrap() };
                span = stride * dims[d].max(1);
            }
            let back: u64 = dims
                .iter()
                .zip(&strides)
                .filter(|&(_, &s)| s < 0)
                .map(|(&d, &s)| d.saturating_sub(1) * s.unsigned_abs())
                .sum();
            let v = StridedView::new(t, &dims, &strides, back + lead).unwrap();
            let len = usize::try_from(v.min_buffer_len()).unwrap() + trail;
            Side::View(v, len)
        })
}

fn side(t: PrimitiveType, dims: Vec<i64>, views: bool) -> BoxedStrategy<Side> {
    let udims: Vec<u64> = dims.iter().map(|&d| u64::try_from(d).unwrap()).collect();
    let layouts = layout(t, dims).prop_map(Side::Layout);
    if views { prop_oneof![3 => layouts, 1 => view(t, udims)].boxed() } else { layouts.boxed() }
}

/// A pair of endpoints with the same type and dimensions, and source bytes.
fn case(
    max_rank: usize,
    max_dim: i64,
    views: bool,
) -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>, Vec<u8>)> {
    (strategy::array_element_type(), proptest::collection::vec(0..=max_dim, 0..=max_rank))
        .prop_flat_map(move |(t, dims)| {
            (Just(t), Just(dims.clone()), side(t, dims.clone(), views), side(t, dims, views))
        })
        .prop_flat_map(|(t, dims, a, b)| {
            let (la, lb) = (a.len(), b.len());
            let udims: Vec<u64> = dims.iter().map(|&d| u64::try_from(d).unwrap()).collect();
            (
                Just(t),
                Just(udims),
                Just(a),
                Just(b),
                proptest::collection::vec(any::<u8>(), la),
                proptest::collection::vec(any::<u8>(), lb),
            )
        })
}

/// Both sides as layouts of `dims` (minor-to-major `src` and `dst`), and a source's worth of
/// random bytes: the tail of the transpose strategies.
fn layouts_and_input(
    t: PrimitiveType,
    dims: &[i64],
    src: &[i64],
    dst: &[i64],
) -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> + use<> {
    let a = Side::Layout(make_shape_with_layout(t, dims, &LayoutSpec::new(src)).unwrap());
    let b = Side::Layout(make_shape_with_layout(t, dims, &LayoutSpec::new(dst)).unwrap());
    let len = a.len();
    let udims: Vec<u64> = dims.iter().map(|&d| u64::try_from(d).unwrap()).collect();
    (Just(t), Just(udims), Just(a), Just(b), proptest::collection::vec(any::<u8>(), len))
}

/// Issue 25's small inner extents: a row-major source whose two minor dimensions are short
/// (1 to 5), one long dimension (a micro-tile of 64 bytes and more) further out, and a
/// destination with the long dimension innermost and the others in any order: the transposes
/// whose source-minor axis is fused with the next one into the micro-tile's rows
/// (docs/relayout.md rule 9). Also the destination's length, for the cuts.
fn small_extents() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![
        Just(PrimitiveType::U8),
        Just(PrimitiveType::BF16),
        Just(PrimitiveType::F32),
        Just(PrimitiveType::F64),
        Just(PrimitiveType::C128),
    ];
    (types, proptest::collection::vec(1i64..=5, 2..=4), 0i64..=20, any::<proptest::sample::Index>())
        .prop_flat_map(|(t, small, extra, at)| {
            let line = 64 / i64::from(t.byte_width().unwrap());
            let mut dims = small;
            let long = at.index(dims.len() - 1);
            dims.insert(long, line + extra);
            let rank = dims.len();
            let src_m2m: Vec<i64> = (0..rank).rev().map(|d| i64::try_from(d).unwrap()).collect();
            let others: Vec<i64> = (0..rank).filter(|&d| d != long).map(|d| i64::try_from(d).unwrap()).collect();
            (Just(t), Just(dims), Just(src_m2m), Just(i64::try_from(long).unwrap()), Just(others).prop_shuffle())
        })
        .prop_flat_map(|(t, dims, src_m2m, long, others)| {
            let dst_m2m: Vec<i64> = std::iter::once(long).chain(others).collect();
            layouts_and_input(t, &dims, &src_m2m, &dst_m2m)
        })
        // Only the cases the plan fuses (not those whose short axes coalesce in the destination).
        .prop_filter("a fused transpose", |(_, _, a, b, _)| a.plan_with(b).unwrap().explain().contains("fused"))
}

/// The most rows (outer extents) a strategy draws: `n`, or a quarter of it under Miri
/// (`tools/miri`), where one element costs microseconds; the minor extents that make whole lines
/// and tiles stay as they are.
fn outer(n: i64) -> i64 {
    if cfg!(miri) { n / 4 } else { n }
}

/// A row-major array and the same under a tiling whose sub-tile groups `span` rows
/// (`T(16,C)(span,1)`: bf16's `(2,1)`, s8's `(4,1)`), in either direction: the deinterleaving
/// (tiled → rows) and interleaving (rows → tiled) paths, whole lines and ragged ends.
fn sub_tiled() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![
        Just(PrimitiveType::U8),
        Just(PrimitiveType::BF16),
        Just(PrimitiveType::F32),
        Just(PrimitiveType::F64),
    ];
    let spans = prop_oneof![Just(2i64), Just(4), Just(8), Just(16)];
    let columns = prop_oneof![Just(32i64), Just(64), Just(128)];
    (types, spans, columns, 1i64..=outer(40), 1i64..=300, any::<bool>()).prop_flat_map(
        |(t, span, c, rows, cols, tiled_first)| {
            let dims = vec![rows, cols];
            let plain = make_shape_with_layout(t, &dims, &LayoutSpec::new(&[1, 0])).unwrap();
            let tiled = shape(&format!("{t}[{rows},{cols}]{{1,0:T(16,{c})({span},1)}}"));
            let (a, b) = if tiled_first { (tiled, plain) } else { (plain, tiled) };
            let (a, b) = (Side::Layout(a), Side::Layout(b));
            let len = a.len();
            let udims: Vec<u64> = dims.iter().map(|&d| u64::try_from(d).unwrap()).collect();
            (Just(t), Just(udims), Just(a), Just(b), proptest::collection::vec(any::<u8>(), len))
        },
    )
}

/// Transposes whose destination rows are whole cache lines (the destination-minor extent a
/// multiple of a line's elements) and follow each other: the kernel shifts its micro-tiles to
/// the destination's lines and wraps rows (`kernel.rs`, `Walk::wrap`) when the destination
/// starts off a line. Rank 2 or 3, any source order.
fn line_rows() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![
        Just(PrimitiveType::U8),
        Just(PrimitiveType::BF16),
        Just(PrimitiveType::F32),
        Just(PrimitiveType::F64),
    ];
    (types, 1i64..=3, proptest::collection::vec(1i64..=outer(40), 1..=2)).prop_flat_map(|(t, lines, outer)| {
        let line = 64 / i64::from(t.byte_width().unwrap());
        let mut dims = outer;
        dims.push(line * lines);
        let rank = dims.len();
        let dst_m2m: Vec<i64> = (0..rank).rev().map(|d| i64::try_from(d).unwrap()).collect();
        let src_m2m: Vec<i64> = (0..i64::try_from(rank).unwrap()).collect();
        (Just(t), Just(dims), Just(src_m2m).prop_shuffle(), Just(dst_m2m))
            .prop_flat_map(|(t, dims, src_m2m, dst_m2m)| layouts_and_input(t, &dims, &src_m2m, &dst_m2m))
    })
}

/// 2-D transposes whose destination rows are 4–12 lines or 32–40: with streaming stores those
/// that hold a whole band (`plan::band_width`: 512 columns, at most 2 KiB; every width at 32
/// lines, `u8` from 8) walk bands of destination rows (`plan::long_rows`), the others the source
/// in order; both through the whole-tile strip (`Walk::strip`), its wrapped seams and its ragged
/// last tile-row.
fn long_line_rows() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![
        Just(PrimitiveType::U8),
        Just(PrimitiveType::BF16),
        Just(PrimitiveType::F32),
        Just(PrimitiveType::F64),
    ];
    (types, prop_oneof![4i64..=12, 32i64..=40], 1i64..=40).prop_flat_map(|(t, lines, rows)| {
        let line = 64 / i64::from(t.byte_width().unwrap());
        layouts_and_input(t, &[rows, line * lines], &[0, 1], &[1, 0])
    })
}

/// 2-D transposes whose source rows are 16 or 32 KiB apart (read whole: the bands narrow,
/// `plan::narrowed`) and whose destination rows are 1–2 lines: from a source off a line by whole
/// elements, the source-minor rows before its first line move on their own and the strip's runs
/// start on lines (`Walk::run`'s `lead_rows`), whatever the destination's offset (its
/// micro-tiles shifted, its rows wrapped).
fn narrowed_rows() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![Just(PrimitiveType::BF16), Just(PrimitiveType::F32), Just(PrimitiveType::F64)];
    (types, 1i64..=2, 1i64..=2).prop_flat_map(|(t, lines, apart)| {
        let width = i64::from(t.byte_width().unwrap());
        layouts_and_input(t, &[(16 << 10) * apart / width, 64 / width * lines], &[0, 1], &[1, 0])
    })
}

/// Transposes whose strips stage their micro-tiles (`plan::stages`; [`STAGED`]): `u8` and `bf16`
/// with long source rows (the tiles asking for their source two tile-rows on), and with short
/// rows whose runs crowd the first-level cache's sets (staged only).
fn staged_rows() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    (0..STAGED.len()).prop_flat_map(|k| {
        let (t, dims, src, dst, _) = STAGED[k];
        layouts_and_input(t, dims, src, dst)
    })
}

/// A staged transpose: type, dimensions, source and destination `minor_to_major`, and whether
/// the staged tiles ask for their source two tile-rows on.
type StagedCase = (PrimitiveType, &'static [i64], &'static [i64], &'static [i64], bool);

/// [`staged_rows`]' cases ([`StagedCase`]). Long rows of 1100 and 1024 elements (the second
/// crowded too: `bf16` rows 2 KiB apart), ragged tile-rows and columns; short rows (256
/// elements) whose runs lie 1 KiB (`u8`) and 4 KiB (`bf16`) apart.
const STAGED: [StagedCase; 4] = [
    (PrimitiveType::U8, &[1100, 600], &[0, 1], &[1, 0], true),
    (PrimitiveType::BF16, &[1024, 300], &[0, 1], &[1, 0], true),
    (PrimitiveType::U8, &[256, 4, 600, 2], &[0, 1, 2, 3], &[2, 0, 3, 1], false),
    (PrimitiveType::BF16, &[256, 8, 300, 2], &[0, 1, 2, 3], &[2, 0, 3, 1], false),
];

/// The staged transposes Miri checks (`tools/miri`): long rows just past the 512 elements a
/// walk asks ahead for, a whole micro-tile of columns and a ragged one, the staged tiles asking
/// two tile-rows on (the short crowded rows stage through the same copy).
const STAGED_MIRI: [StagedCase; 2] = [
    (PrimitiveType::U8, &[576, 70], &[0, 1], &[1, 0], true),
    (PrimitiveType::BF16, &[576, 40], &[0, 1], &[1, 0], true),
];

/// Fused transposes (rule 9, the bench's r5) whose destination rows are whole lines: source
/// row-major `[q, r, s, t]` with `t` short (the source-minor axis) and `s` continuing it, written
/// with `r` (whole lines) innermost, then `t`, `q`, `s`: rows that follow each other `t` at a
/// time in the destination.
fn fused_line_rows() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![Just(PrimitiveType::U8), Just(PrimitiveType::BF16), Just(PrimitiveType::F32)];
    (types, 1i64..=3, 1i64..=2, 1i64..=4, 2i64..=5)
        .prop_flat_map(|(t, q, lines, s, short)| {
            let line = 64 / i64::from(t.byte_width().unwrap());
            let dims = vec![q, line * lines, s, short];
            layouts_and_input(t, &dims, &[3, 2, 1, 0], &[1, 3, 0, 2])
        })
        .prop_filter("a fused transpose", |(_, _, a, b, _)| a.plan_with(b).unwrap().explain().contains("fused"))
}

/// Transposes whose columns are fused (the inverse of the bench's r5): row-major `[a, b, m, s,
/// t]` from `{2,4,1,3,0}`, `m` the source-minor axis (a micro-tile of rows or more, ragged or
/// not), `t` shorter than a micro-tile and `s` continuing it in the destination, the two one or
/// two micro-tiles of columns (one destination run per tile, or a slot per line).
fn fused_column_rows() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![Just(PrimitiveType::U8), Just(PrimitiveType::BF16), Just(PrimitiveType::F32)];
    let two = if cfg!(miri) { 1 } else { 2 };
    (types, 1i64..=outer(4).max(1), 1i64..=2, 1i64..=two, 0i64..=1, 0u32..=2, 1i64..=two, 0usize..6)
        .prop_flat_map(|(t, a, b, lines, ragged, short, tiles, order)| {
            let m = 64 / i64::from(t.byte_width().unwrap());
            let inner = [2, 4, 8][short as usize];
            let dims = vec![a, b, m * lines + ragged * (m / 2 + 1), m * tiles / inner, inner];
            // The source's other three dimensions in any order (the plan visits them in source
            // order when it streams).
            let from = ["{2,4,1,3,0}", "{2,4,3,1,0}", "{2,0,1,3,4}", "{2,1,0,3,4}", "{2,3,4,0,1}", "{2,3,0,4,1}"];
            texts(t, &dims, (from[order], "{4,3,2,1,0}")).unwrap()
        })
        .prop_filter("fused columns", |(_, _, a, b, _)| a.plan_with(b).unwrap().explain().contains("fused with axis"))
}

/// Fused transposes whose source-minor axis is major in the destination (the plan moves the
/// fused pair innermost among the outer axes): row-major `[q, r, s, t]`, `t` short or long and
/// `s` continuing it in the source, `r` (whole lines or a ragged end) innermost in the
/// destination and the other three in any order.
fn fused_rows_in_any_order() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![Just(PrimitiveType::U8), Just(PrimitiveType::BF16), Just(PrimitiveType::F32)];
    (types, 1i64..=outer(8).max(2), 1i64..=if cfg!(miri) { 1 } else { 2 }, 0i64..=1, 1i64..=4, 0usize..6, 0usize..6)
        .prop_flat_map(|(t, q, lines, ragged, s, minor, order)| {
            let line = 64 / i64::from(t.byte_width().unwrap());
            // Short source-minor axes, and long ones (a micro-tile of rows or more, ragged or not).
            let minor = [2, 3, 5, line, line + 3, 2 * line + 1][minor];
            let dims = vec![q, line * lines + ragged * 3, s, minor];
            let to = ["{1,3,2,0}", "{1,3,0,2}", "{1,2,3,0}", "{1,2,0,3}", "{1,0,3,2}", "{1,0,2,3}"];
            texts(t, &dims, ("{3,2,1,0}", to[order])).unwrap()
        })
        // Streamed: long source-minor axes are fused only then (`at_offset_whole_and_in_parts`
        // runs both stores).
        .prop_filter("a fused transpose", |(_, _, a, b, _)| {
            a.plan_with_stores(b, StorePolicy::Streaming).unwrap().explain().contains("(fused")
        })
}

/// A case from two layout texts of `t[dims]` (`None` when either does not parse), with a
/// source's worth of random bytes.
/// A relayout case: type, dimensions, the two sides and a source's bytes.
type Case = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>);

fn texts(t: PrimitiveType, dims: &[i64], (a, b): (&str, &str)) -> Option<BoxedStrategy<Case>> {
    let list = dims.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let a: ShapeBuf = format!("{t}[{list}]{a}").parse().ok()?;
    let b: ShapeBuf = format!("{t}[{list}]{b}").parse().ok()?;
    a.as_array()?;
    b.as_array()?;
    let (a, b) = (Side::Layout(a), Side::Layout(b));
    let len = a.len();
    let udims: Vec<u64> = dims.iter().map(|&d| u64::try_from(d).unwrap()).collect();
    Some((Just(t), Just(udims), Just(a), Just(b), proptest::collection::vec(any::<u8>(), len)).boxed())
}

/// Tiled 2-D layouts against row-major and against each other: `T(8,128)` and `(2,1)`, `(4,1)`
/// sub-tiles of 8 and 16 rows, whole and partial tiles, and the tiled transpose `{0,1:T…}` of a
/// row-major array.
fn tiled_pairs() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![
        Just(PrimitiveType::U8),
        Just(PrimitiveType::BF16),
        Just(PrimitiveType::F32),
        Just(PrimitiveType::F64),
    ];
    let tilings = prop_oneof![
        Just("T(8,128)"),
        Just("T(8,128)(2,1)"),
        Just("T(16,128)(2,1)"),
        Just("T(32,128)(4,1)"),
        Just("T(8,64)(2,1)"),
    ];
    (types, tilings.clone(), tilings, 1i64..=outer(40), 1i64..=300, 0u8..5)
        .prop_filter_map("layouts that parse", |(t, one, two, rows, cols, pair)| {
            let (a, b) = match pair {
                0 => ("{1,0}".to_owned(), format!("{{1,0:{one}}}")),
                1 => (format!("{{1,0:{one}}}"), "{1,0}".to_owned()),
                2 => (format!("{{1,0:{one}}}"), format!("{{1,0:{two}}}")),
                3 => ("{1,0}".to_owned(), format!("{{0,1:{one}}}")),
                _ => (format!("{{0,1:{one}}}"), "{1,0}".to_owned()),
            };
            Some((t, vec![rows, cols], a, b))
        })
        .prop_flat_map(|(t, dims, a, b)| {
            texts(t, &dims, (&a, &b)).unwrap_or_else(|| texts(t, &dims, ("{1,0}", "{0,1}")).unwrap())
        })
}

/// Tiled transposes whose fused walk is long enough that the pieces of its groups' seams are
/// streamed (128 KiB of output or more, `kernel::FAR_SEAMS`): row-major `[r, c]` into
/// `{0,1:T(…)}`: the walk's rows are `c` (its fused rows of 4 bytes: 256 or more of 512 bytes),
/// `r` whole tiles of 128 or ragged.
fn far_seam_rows() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let cases = prop_oneof![
        Just((PrimitiveType::BF16, "T(8,128)(2,1)", 512)),
        Just((PrimitiveType::F32, "T(8,128)", 256)),
        Just((PrimitiveType::S8, "T(8,128)(4,1)", 1024)),
    ];
    (cases, 1i64..=260, 0i64..=40)
        .prop_flat_map(|((t, tiling, far), rows, more)| {
            texts(t, &[rows, far + more], ("{1,0}", &format!("{{0,1:{tiling}}}"))).unwrap()
        })
        .prop_filter("a fused transpose", |(_, _, a, b, _)| a.plan_with(b).unwrap().explain().contains("Fused"))
}

/// Tiles whose sub-tiles interleave rows (`s8` `(4,1)`, bf16 `(2,1)`) read out into row-major
/// rows a whole number of cache lines long, one to three tiles along each row: the rows of a
/// destination off a line start the same number of bytes past one, and the deinterleaves'
/// carries (`RowLines`) stream them across tiles.
fn deinterleaved_line_rows() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let cases = prop_oneof![
        Just((PrimitiveType::S8, "T(8,128)(4,1)")),
        Just((PrimitiveType::U8, "T(16,128)(4,1)")),
        Just((PrimitiveType::S8, "T(32,128)(4,1)")),
        Just((PrimitiveType::BF16, "T(8,128)(2,1)")),
        Just((PrimitiveType::BF16, "T(16,128)(2,1)")),
    ];
    (cases, 1i64..=outer(70), 1i64..=6).prop_flat_map(|((t, tiling), rows, lines)| {
        let cols = lines * 64 / i64::from(t.byte_width().unwrap());
        texts(t, &[rows, cols], (&format!("{{1,0:{tiling}}}"), "{1,0}")).unwrap()
    })
}

/// NCHW → NHWC and back with 2 to 16 channels of one- to eight-byte elements: the interleave of
/// `C` planes through the registers (`tile::interleave_runs`, whatever `C` times the width: 8 or
/// 16 `f32` channels fill more than a lane), its ragged end element by element, 3 and 5 channels
/// element by element throughout, and the deinterleave back.
fn channels() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![
        Just(PrimitiveType::U8),
        Just(PrimitiveType::BF16),
        Just(PrimitiveType::F32),
        Just(PrimitiveType::F64),
    ];
    let channels = prop_oneof![Just(2i64), Just(3), Just(4), Just(5), Just(8), Just(16)];
    (types, channels, 1i64..=3, 1i64..=outer(24), 1i64..=40, any::<bool>()).prop_flat_map(|(t, c, n, h, w, back)| {
        let (from, to) = if back { ("{1,3,2,0}", "{3,2,1,0}") } else { ("{3,2,1,0}", "{1,3,2,0}") };
        texts(t, &[n, c, h, w], (from, to)).unwrap()
    })
}

/// Sub-byte elements packed across rows (`s2`/`u2` `(4|8|16,1)`, `u1` `(8|16|32,1)` sub-tiles)
/// read out into rows packed along themselves (`{1,0:E(bits)}`) that are 1 to 20 whole lines
/// long (5 under Miri): a row's runs are whole lines, one to four per block (`pack::SHORT_RUN`).
fn unpacked_line_rows() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![Just(PrimitiveType::S2), Just(PrimitiveType::U2), Just(PrimitiveType::U1)];
    (types, 1i64..=outer(40), 1i64..=outer(20), 0u32..3).prop_flat_map(|(t, rows, lines, word)| {
        let bits = t.bit_width().unwrap();
        let m = (8u32 << word) / bits;
        let across = format!("{{1,0:T({},128)({m},1)E({bits})}}", m.max(8));
        let cols = lines * 64 * 8 / i64::from(bits);
        texts(t, &[rows, cols], (&across, &format!("{{1,0:E({bits})}}"))).unwrap()
    })
}

/// Rows of whole cache lines (64 to 256 bytes) under a permutation of the outer axes: r4's kind,
/// whose rows walk in source order.
fn line_row_permutations() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![Just(PrimitiveType::U8), Just(PrimitiveType::BF16), Just(PrimitiveType::F32)];
    (types, 1i64..=12, 1i64..=12, 1i64..=4, 1i64..=4, any::<bool>()).prop_flat_map(|(t, a, b, c, lines, three)| {
        let minor = 64 / i64::from(t.byte_width().unwrap()) * lines;
        let (dims, from, to) = if three {
            (vec![a, b, c, minor], "{3,2,1,0}", "{3,1,0,2}")
        } else {
            (vec![a, b, minor], "{2,1,0}", "{2,0,1}")
        };
        texts(t, &dims, (from, to)).unwrap()
    })
}

/// Sub-byte elements packed (`E(bits)`) against one per byte, 1-D and 2-D, dense and under
/// tiles with sub-tiles packed across rows (`s4` `T(8,128)(8,1)E(4)`, the int4 TPU layouts), and
/// `T(8,128)` tiles, in either direction; and packed along rows (`{1,0:E(4)}`, XLA's CPU and GPU
/// int4) against packed across them.
fn packed_pairs() -> impl Strategy<Value = (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>)> {
    let types = prop_oneof![
        Just(PrimitiveType::S4),
        Just(PrimitiveType::U4),
        Just(PrimitiveType::S2),
        Just(PrimitiveType::U2),
        Just(PrimitiveType::U1),
    ];
    (types, 1i64..=outer(20), 1i64..=3000, 0u8..10, 0u32..3).prop_flat_map(|(t, rows, n, form, word)| {
        let bits = t.bit_width().unwrap();
        // A sub-tile of `m` rows packed into 1, 2 or 4 bytes per column (`s4` `(8,1)`: a 32-bit
        // word), in a tile of at least as many rows.
        let m = (8u32 << word) / bits;
        let across = format!("T({},128)({m},1)E({bits})", m.max(8));
        let (dims, a, b) = match form {
            8 => (vec![rows, n % 300 + 1], format!("{{1,0:E({bits})}}"), format!("{{1,0:{across}}}")),
            9 => (vec![rows, n % 300 + 1], format!("{{1,0:{across}}}"), format!("{{1,0:E({bits})}}")),
            6 => (vec![rows, n % 300 + 1], "{1,0}".to_owned(), format!("{{1,0:{across}}}")),
            7 => (vec![rows, n % 300 + 1], format!("{{1,0:{across}}}"), "{1,0}".to_owned()),
            // Up to 21 000 elements: a dense pack's run spans several of its blocks
            // (`pack::PACK_BLOCK`, 2 KiB packed).
            0 => (vec![n * outer(7)], "{0}".to_owned(), format!("{{0:E({bits})}}")),
            1 => (vec![n * outer(7)], format!("{{0:E({bits})}}"), "{0}".to_owned()),
            2 => (vec![rows, n % 300 + 1], "{1,0}".to_owned(), format!("{{1,0:E({bits})}}")),
            3 => (vec![rows, n % 300 + 1], format!("{{1,0:E({bits})}}"), "{1,0}".to_owned()),
            4 => (vec![rows, n % 300 + 1], "{1,0}".to_owned(), format!("{{1,0:T(8,128)E({bits})}}")),
            _ => (vec![rows, n % 300 + 1], format!("{{1,0:T(8,128)(2,1)E({bits})}}"), "{1,0}".to_owned()),
        };
        texts(t, &dims, (&a, &b)).unwrap_or_else(|| panic!("{t}{dims:?} {a} -> {b} does not parse"))
    })
}

/// The plan with ordinary and streaming stores writes the reference's bytes into a destination
/// `offset` bytes past a cache line, from a source `src_offset` bytes past one, whole and in
/// parts cut at `cuts` thousandths, each part at the same offset.
fn at_offset_whole_and_in_parts(
    (t, dims, a, b, input): (PrimitiveType, Vec<u64>, Side, Side, Vec<u8>),
    (src_offset, offset): (usize, usize),
    cuts: &[usize],
) -> Result<(), TestCaseError> {
    let len = b.len();
    let initial = vec![0u8; len];
    let expected = reference(&a, &b, t, &dims, &input, &initial);
    let mut placed = vec![0u8; input.len() + 128];
    let source = at_offset(&mut placed, src_offset, input.len());
    source.copy_from_slice(&input);
    let input: &[u8] = source;
    for stores in [StorePolicy::Cached, StorePolicy::Streaming] {
        let plan = a.plan_with_stores(&b, stores).unwrap();
        let mut buf = vec![0u8; len + 128];
        let out = at_offset(&mut buf, offset, len);
        plan.run(input, out).unwrap();
        prop_assert_eq!(&*out, &expected[..], "{:?} -> {:?} {:?} at +{} from +{}", a, b, stores, offset, src_offset);
        let mut points: Vec<usize> = cuts.iter().map(|c| c * len / 1000).collect();
        points.extend([0, len]);
        points.sort_unstable();
        for pair in points.windows(2) {
            let mut buf = vec![0u8; pair[1] - pair[0] + 128];
            let part = at_offset(&mut buf, offset, pair[1] - pair[0]);
            plan.run_range(input, part, pair[0]..pair[1]).unwrap();
            prop_assert_eq!(
                &*part,
                &expected[pair[0]..pair[1]],
                "{:?} -> {:?} {:?} part {:?} at +{} from +{}",
                a,
                b,
                stores,
                pair,
                offset,
                src_offset
            );
        }
    }
    Ok(())
}

/// `len` bytes of `buf` starting `offset` bytes past a cache line (64-byte boundary).
fn at_offset(buf: &mut [u8], offset: usize, len: usize) -> &mut [u8] {
    let start = buf.as_ptr().align_offset(64) + offset;
    &mut buf[start..start + len]
}

/// The destination `0..dst_len()` produced part by part (`run_range`), cut at `cuts` thousandths
/// of it, each part starting from `initial`'s bytes there; and the cut points.
fn in_parts(plan: &RelayoutPlan, input: &[u8], initial: &[u8], cuts: &[usize]) -> (Vec<u8>, Vec<usize>) {
    let len = plan.dst_len();
    let mut points: Vec<usize> = cuts.iter().map(|c| c * len / 1000).collect();
    points.extend([0, len]);
    points.sort_unstable();
    let mut out = Vec::with_capacity(len);
    for pair in points.windows(2) {
        let mut part = initial[pair[0]..pair[1]].to_vec();
        plan.run_range(input, &mut part, pair[0]..pair[1]).unwrap();
        out.extend_from_slice(&part);
    }
    (out, points)
}

/// The plan with ordinary and with streaming stores writes the reference's bytes, whole and in
/// parts cut at `cuts` thousandths.
fn both_stores_whole_and_in_parts(
    t: PrimitiveType,
    dims: &[u64],
    a: &Side,
    b: &Side,
    input: &[u8],
    cuts: &[usize],
) -> Result<(), TestCaseError> {
    let initial = vec![0u8; b.len()];
    let expected = reference(a, b, t, dims, input, &initial);
    for stores in [StorePolicy::Cached, StorePolicy::Streaming] {
        let plan = a.plan_with_stores(b, stores).unwrap();
        let mut out = initial.clone();
        plan.run(input, &mut out).unwrap();
        prop_assert_eq!(&out, &expected, "{:?} -> {:?} {:?}", a, b, stores);
        let (parts, points) = in_parts(&plan, input, &initial, cuts);
        prop_assert_eq!(&parts, &expected, "{:?} -> {:?} {:?} cut at {:?}", a, b, stores, points);
    }
    Ok(())
}

/// 512 cases; a few under Miri (`tools/miri`), where one case takes seconds.
fn config() -> ProptestConfig {
    ProptestConfig { cases: if cfg!(miri) { 4 } else { 512 }, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    /// Identical bytes to the reference: elements moved, padding filled as specified, a view's
    /// gaps untouched.
    #[test]
    fn matches_the_per_element_reference((t, dims, a, b, input, initial) in case(6, 4, true)) {
        let plan = a.plan_with(&b).unwrap();
        let mut out = initial.clone();
        plan.run(&input, &mut out).unwrap();
        let expected = reference(&a, &b, t, &dims, &input, &initial);
        prop_assert_eq!(out, expected, "{:?} -> {:?}", a, b);
    }

    /// Small ranks with larger extents: partial tiles, blocked transposes, long rows.
    #[test]
    fn matches_the_reference_on_wide_arrays((t, dims, a, b, input, initial) in case(3, 70, true)) {
        let plan = a.plan_with(&b).unwrap();
        let mut out = initial.clone();
        plan.run(&input, &mut out).unwrap();
        prop_assert_eq!(out, reference(&a, &b, t, &dims, &input, &initial), "{:?} -> {:?}", a, b);
    }

    /// Streaming stores (forced on small arrays; `Auto` streams only from 16 MiB) write the
    /// reference's bytes too: the transposes' source-order walk, the line splits of rows.
    #[test]
    fn streaming_stores_match_the_reference((t, dims, a, b, input, initial) in case(3, 70, true)) {
        let plan = a.plan_with_stores(&b, StorePolicy::Streaming).unwrap();
        let mut out = initial.clone();
        plan.run(&input, &mut out).unwrap();
        prop_assert_eq!(out, reference(&a, &b, t, &dims, &input, &initial), "{:?} -> {:?}", a, b);
    }

    /// Parts cut anywhere (`run_range`), each into a buffer holding the destination's initial
    /// bytes there, put together give `run`'s bytes: elements astride a cut, tile and legacy
    /// padding, sub-byte slots sharing a byte, a view's gaps left as they were.
    #[test]
    fn parts_put_together_give_the_whole(
        (t, dims, a, b, input, initial) in case(3, 40, true),
        cuts in proptest::collection::vec(0usize..=1000, 0..6),
        streaming in any::<bool>(),
    ) {
        let stores = if streaming { StorePolicy::Streaming } else { StorePolicy::Auto };
        let plan = a.plan_with_stores(&b, stores).unwrap();
        // A view's buffer may be longer than the destination (`dst_len`); `run` leaves the rest.
        let (mut out, points) = in_parts(&plan, &input, &initial, &cuts);
        out.extend_from_slice(&initial[plan.dst_len()..]);
        prop_assert_eq!(out, reference(&a, &b, t, &dims, &input, &initial), "{:?} -> {:?} cut at {:?}", a, b, points);
    }

    /// Fused transposes (small inner extents) write the reference's bytes with ordinary and
    /// streaming stores, whole and in parts cut anywhere (some cut the fused axes short).
    #[test]
    fn fused_transposes_match_the_reference(
        (t, dims, a, b, input) in small_extents(),
        cuts in proptest::collection::vec(0usize..=1000, 0..6),
    ) {
        both_stores_whole_and_in_parts(t, &dims, &a, &b, &input, &cuts)?;
    }

    /// A destination at any offset from a cache line (where `malloc` and numpy put buffers: 16
    /// bytes past one) gets the reference's bytes, with ordinary and streaming stores, whole and
    /// in parts each at the same offset: the micro-tiles shifted to the destination's lines,
    /// rows wrapped into the next, the first row's head and the last row's cut tail.
    #[test]
    fn destinations_at_any_offset_match_the_reference(
        case in line_rows(),
        offsets in (0usize..64, 0usize..64),
        cuts in proptest::collection::vec(0usize..=1000, 0..4),
    ) {
        at_offset_whole_and_in_parts(case, offsets, &cuts)?;
    }

    /// The same for destination rows of 4–12 lines or 32–40: the bands' walk (issue 36) and the
    /// source order on either side of a band's width.
    #[test]
    fn long_destination_rows_at_any_offset_match_the_reference(
        case in long_line_rows(),
        offsets in (0usize..64, 0usize..64),
        cuts in proptest::collection::vec(0usize..=1000, 0..4),
    ) {
        at_offset_whole_and_in_parts(case, offsets, &cuts)?;
    }

    /// The same for fused transposes, whose rows follow each other a few at a time: each
    /// group's first row started on its own, its last row's line cut at the seam.
    #[test]
    fn fused_destinations_at_any_offset_match_the_reference(
        case in fused_line_rows(),
        offsets in (0usize..64, 0usize..64),
        cuts in proptest::collection::vec(0usize..=1000, 0..4),
    ) {
        at_offset_whole_and_in_parts(case, offsets, &cuts)?;
    }

    /// The same for transposes whose short innermost axis is fused with the one outside it into
    /// the micro-tiles' columns: whole destination lines, streamed whole through the carries
    /// where the destination is off a line, and the parts that cut the fused axis.
    #[test]
    fn fused_columns_at_any_offset_match_the_reference(
        case in fused_column_rows(),
        offsets in (0usize..64, 0usize..64),
        cuts in proptest::collection::vec(0usize..=1000, 0..4),
    ) {
        at_offset_whole_and_in_parts(case, offsets, &cuts)?;
    }

    /// The same for fused rows whose pair the plan moved innermost, the other axes in source
    /// order.
    #[test]
    fn fused_rows_in_any_order_match_the_reference(
        case in fused_rows_in_any_order(),
        offsets in (0usize..64, 0usize..64),
        cuts in proptest::collection::vec(0usize..=1000, 0..4),
    ) {
        at_offset_whole_and_in_parts(case, offsets, &cuts)?;
    }

    /// Tiled layouts (`T(8,128)`, bf16-style `(2,1)` sub-tiles and kin, between two tilings, a
    /// tiled transpose) and packed sub-byte elements (`E(4)`, `E(2)`, `E(1)`, dense and tiled), to
    /// and from row-major, from a source and into a destination at any offset from a cache line:
    /// the reference's bytes with ordinary and streaming stores, whole and in parts (issue 36;
    /// the streamed runs' carries of `lines.rs`, the SSE2 pack and unpack).
    #[test]
    fn tiled_and_packed_at_any_offsets_match_the_reference(
        case in prop_oneof![tiled_pairs(), packed_pairs()],
        offsets in (0usize..64, 0usize..64),
        cuts in proptest::collection::vec(0usize..=1000, 0..4),
    ) {
        at_offset_whole_and_in_parts(case, offsets, &cuts)?;
    }

    /// Tiles read out into row-major rows of whole lines, into a destination 16, 32 or 48 bytes
    /// past a line (where `malloc` and numpy put large buffers) or at any offset, from a source at
    /// any offset: the reference's bytes with either stores, whole and in parts (issue 36: the
    /// deinterleaves' lines streamed through carries kept across tiles).
    #[test]
    fn deinterleaves_into_rows_off_a_line_match_the_reference(
        case in deinterleaved_line_rows(),
        src_offset in 0usize..64,
        dst_offset in prop_oneof![Just(16usize), Just(32), Just(48), 0usize..64],
        cuts in proptest::collection::vec(0usize..=1000, 0..4),
    ) {
        at_offset_whole_and_in_parts(case, (src_offset, dst_offset), &cuts)?;
    }

    /// Images' channels interleaved and deinterleaved (NCHW ↔ NHWC, 2 to 16 channels), from a
    /// source and into a destination at any offset: the reference's bytes with either stores,
    /// whole and in parts (issue 36: interleaves of more rows than a lane holds go through the
    /// registers).
    #[test]
    fn channels_at_any_offset_match_the_reference(
        case in channels(),
        src_offset in 0usize..64,
        dst_offset in prop_oneof![Just(16usize), 0usize..64],
        cuts in proptest::collection::vec(0usize..=1000, 0..4),
    ) {
        at_offset_whole_and_in_parts(case, (src_offset, dst_offset), &cuts)?;
    }

    /// Sub-byte elements packed across rows read out into packed rows of whole lines, into a
    /// destination 16, 32 or 48 bytes past a line or at any offset, from a source at any offset:
    /// the reference's bytes with either stores, whole and in parts (issue 36: each row's short
    /// runs streamed through `RowLines`' lane shifts).
    #[test]
    fn unpacks_into_packed_rows_off_a_line_match_the_reference(
        case in unpacked_line_rows(),
        src_offset in 0usize..64,
        dst_offset in prop_oneof![Just(16usize), Just(32), Just(48), 0usize..64],
        cuts in proptest::collection::vec(0usize..=1000, 0..4),
    ) {
        at_offset_whole_and_in_parts(case, (src_offset, dst_offset), &cuts)?;
    }

    /// Rows whose length and destination strides are whole lines walk in source order and
    /// stream (rule 10, "Rows in source order"), the lines astride two rows made from both
    /// rows' source bytes: the reference's bytes from a source at any offset into a destination
    /// on a line (half the cases) or at any offset, whole and in parts (a part's cut may leave
    /// its rows whole lines or not).
    #[test]
    fn line_rows_in_source_order_match_the_reference(
        case in prop_oneof![tiled_pairs(), line_row_permutations()],
        src_offset in 0usize..64,
        dst_offset in prop_oneof![Just(0usize), 0usize..64],
        cuts in proptest::collection::vec(0usize..=1000, 0..4),
    ) {
        at_offset_whole_and_in_parts(case, (src_offset, dst_offset), &cuts)?;
    }

    /// Sub-tiles of paired rows to and from row-major (bf16 `(2,1)` and kin, the interleaving
    /// kernels of `tile.rs`) write the reference's bytes with ordinary and streaming stores, whole
    /// and in parts.
    #[test]
    fn sub_tiles_match_the_reference(
        (t, dims, a, b, input) in sub_tiled(),
        cuts in proptest::collection::vec(0usize..=1000, 0..4),
    ) {
        both_stores_whole_and_in_parts(t, &dims, &a, &b, &input, &cuts)?;
    }

    /// A → B → A is the identity on the elements (their value bits that B keeps).
    #[test]
    fn there_and_back_is_the_identity((t, dims, a, b, input, _initial) in case(5, 5, true)) {
        let there = a.plan_with(&b).unwrap();
        let back = b.plan_with(&a).unwrap();
        let mut middle = vec![0u8; b.len()];
        there.run(&input, &mut middle).unwrap();
        let mut out = vec![0u8; a.len()];
        back.run(&middle, &mut out).unwrap();
        let (_, va) = a.bits(t);
        let (_, vb) = b.bits(t);
        let keep = va.min(vb);
        let am = a.array().map(|s| PhysicalMap::new(s).unwrap());
        for index in indices(&dims) {
            let at = a.bit_offset(am.as_ref(), &index);
            prop_assert_eq!(read(&out, at, keep) & mask(keep), read(&input, at, keep) & mask(keep), "{:?}", index);
        }
    }
}

fn shape(text: &str) -> ShapeBuf {
    text.parse().unwrap()
}

fn f32_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

#[test]
fn transposes_a_matrix() {
    let (src, dst) = (shape("f32[2,3]{0,1}"), shape("f32[2,3]{1,0}"));
    let plan = RelayoutPlan::new(src.as_array().unwrap(), dst.as_array().unwrap()).unwrap();
    let out = plan.run_to_vec(&f32_bytes([1., 4., 2., 5., 3., 6.])).unwrap();
    assert_eq!(out, f32_bytes([1., 2., 3., 4., 5., 6.]));
}

#[test]
fn tiles_and_unpacks_sub_byte_elements() {
    // s4[5]{0:E(4)}: five nibbles, low first; unpacked, one per byte with the high bits zero.
    let (src, dst) = (shape("s4[5]{0:E(4)}"), shape("s4[5]{0}"));
    let plan = RelayoutPlan::new(src.as_array().unwrap(), dst.as_array().unwrap()).unwrap();
    assert_eq!(plan.run_to_vec(&[0x21, 0x43, 0xF5]).unwrap(), [1, 2, 3, 4, 5]);
    let back = RelayoutPlan::new(dst.as_array().unwrap(), src.as_array().unwrap()).unwrap();
    assert_eq!(back.run_to_vec(&[0xF1, 2, 3, 4, 5]).unwrap(), [0x21, 0x43, 0x05]);
    // f32[3,5]{1,0:T(2,2)}: the docs' element (2,3) is slot 17; partial-tile slots are zero.
    let (rm, tiled) = (shape("f32[3,5]{1,0}"), shape("f32[3,5]{1,0:T(2,2)}"));
    let plan = RelayoutPlan::new(rm.as_array().unwrap(), tiled.as_array().unwrap()).unwrap();
    let out = plan.run_to_vec(&f32_bytes((0..15u8).map(f32::from))).unwrap();
    assert_eq!(out.len(), 96);
    assert_eq!(&out[17 * 4..18 * 4], 13f32.to_le_bytes());
    assert_eq!(&out[9 * 4..10 * 4], [0; 4]);
}

/// int4 under TPU tiles, written out by hand: `s4[8,128]{1,0:T(8,128)(8,1)E(4)}` is one tile whose
/// column `c` is a 32-bit word of its 8 rows' nibbles, row 0 in the lowest bits (the
/// `Kernel::PackRows` and `UnpackRows` kernels; Miri runs this one, `tools/miri`).
#[test]
fn int4_packs_across_a_tiles_rows() {
    let (rm, tiled) = (shape("s4[8,128]{1,0}"), shape("s4[8,128]{1,0:T(8,128)(8,1)E(4)}"));
    // Element (r, c) is (r + c) mod 16, one per byte.
    let input: Vec<u8> = (0..8u8).flat_map(|r| (0..128u8).map(move |c| r.wrapping_add(c) % 16)).collect();
    let expected: Vec<u8> = (0..128u8)
        .flat_map(|c| (0..4u8).map(move |p| ((2 * p).wrapping_add(c) % 16) | (((2 * p + 1).wrapping_add(c) % 16) << 4)))
        .collect();
    let there = RelayoutPlan::with_stores(rm.as_array().unwrap(), tiled.as_array().unwrap(), StorePolicy::Streaming);
    let packed = there.unwrap().run_to_vec(&input).unwrap();
    assert_eq!(packed, expected);
    let back = RelayoutPlan::with_stores(tiled.as_array().unwrap(), rm.as_array().unwrap(), StorePolicy::Streaming);
    assert_eq!(back.unwrap().run_to_vec(&packed).unwrap(), input);
}

/// JAX's CPU `int4` (packed along the rows, `{1,0:E(4)}`) into TPU tiles and back, written out
/// by hand as above: byte `b` of row `r` holds columns `2b` and `2b + 1`, the first in the low
/// nibble. `--explain` names the repacking, and the bytes are the hand-made ones on a line and
/// 16 bytes past one, with both stores (Miri runs this one, `tools/miri`).
#[test]
fn int4_packed_along_rows_repacks_across_a_tiles_rows() {
    let (along, tiled) = (shape("s4[8,128]{1,0:E(4)}"), shape("s4[8,128]{1,0:T(8,128)(8,1)E(4)}"));
    let input: Vec<u8> = (0..8u8)
        .flat_map(|r| (0..64u8).map(move |b| (r.wrapping_add(2 * b) % 16) | ((r.wrapping_add(2 * b + 1) % 16) << 4)))
        .collect();
    let expected: Vec<u8> = (0..128u8)
        .flat_map(|c| (0..4u8).map(move |p| ((2 * p).wrapping_add(c) % 16) | (((2 * p + 1).wrapping_add(c) % 16) << 4)))
        .collect();
    for stores in [StorePolicy::Cached, StorePolicy::Streaming] {
        let there = RelayoutPlan::with_stores(along.as_array().unwrap(), tiled.as_array().unwrap(), stores).unwrap();
        assert!(
            there.explain().contains("repack 4-bit elements packed along rows across the innermost axis's rows"),
            "{}",
            there.explain()
        );
        let back = RelayoutPlan::with_stores(tiled.as_array().unwrap(), along.as_array().unwrap(), stores).unwrap();
        assert!(
            back.explain().contains("repack 4-bit elements packed across the innermost axis's rows along rows"),
            "{}",
            back.explain()
        );
        for offset in [0, 16] {
            let (mut a, mut b) = (vec![0u8; input.len() + 128], vec![0u8; expected.len() + 128]);
            let (source, out) = (at_offset(&mut a, offset, input.len()), at_offset(&mut b, offset, expected.len()));
            source.copy_from_slice(&input);
            there.run(source, out).unwrap();
            assert_eq!(&*out, &expected[..], "there, {stores:?} at +{offset}");
            let (mut c, mut e) = (vec![0u8; expected.len() + 128], vec![0u8; input.len() + 128]);
            let (packed, out) = (at_offset(&mut c, offset, expected.len()), at_offset(&mut e, offset, input.len()));
            packed.copy_from_slice(&expected);
            back.run(packed, out).unwrap();
            assert_eq!(&*out, &input[..], "back, {stores:?} at +{offset}");
        }
    }
}

/// Every group packed across rows that `Kernel::PackRows` and `UnpackRows` take — `s4`, `s2` and
/// `u1` in groups of 1, 2 and 4 bytes per column (`(2,1)` to `(32,1)` sub-tiles: 2 to 32 rows) —
/// both ways, from and to one element per byte and packed along rows (`{1,0:E(4)}`), whole lanes
/// of 16 columns in several blocks and the columns after them, on a line and 16 bytes past one, with streaming and
/// ordinary stores: the reference's bytes. Deterministic, so that Miri
/// (`tools/miri`) runs each register path the random properties may miss. Under Miri it is cut
/// to one tile-row of one lane of packed bytes (16 bytes per row: 32 to 128 columns) and 8
/// columns after it, and one pair of offsets per group, the source or the destination off a line
/// in turn.
#[test]
fn every_group_packed_across_rows_matches_the_reference() {
    for t in [PrimitiveType::S4, PrimitiveType::S2, PrimitiveType::U1] {
        let bits = t.bit_width().unwrap();
        // Two or more blocks of every kind (`pack::PACK_COLS` bytes of each row: 256 to 2048
        // columns), whole bytes of `u1` rows packed along themselves, and 8 columns after the lanes.
        let cols = if cfg!(miri) { u64::from(16 * 8 / bits + 8) } else { 2104 };
        for word in 0..3u32 {
            let m = (8 << word) / bits;
            let across = format!("{{1,0:T({},128)({m},1)E({bits})}}", m.max(8));
            let tile_rows = if cfg!(miri) { 1 } else { 2 };
            let dims = [tile_rows * u64::from(m.max(8)), cols];
            let offsets: &[(usize, usize)] = match (cfg!(miri), word % 2) {
                (false, _) => &[(0, 0), (16, 16)],
                (true, 0) => &[(0, 16)],
                (true, _) => &[(16, 0)],
            };
            let packed = format!("{{1,0:E({bits})}}");
            for (a, b) in [
                ("{1,0}".to_owned(), across.clone()),
                (across.clone(), "{1,0}".to_owned()),
                (packed.clone(), across.clone()),
                (across, packed),
            ] {
                let list = format!("{},{}", dims[0], dims[1]);
                let (a, b): (ShapeBuf, ShapeBuf) =
                    (format!("{t}[{list}]{a}").parse().unwrap(), format!("{t}[{list}]{b}").parse().unwrap());
                let (a, b) = (Side::Layout(a), Side::Layout(b));
                let input: Vec<u8> = (0..a.len()).map(|k| u8::try_from(k * 7 % 251).unwrap()).collect();
                for &offsets in offsets {
                    at_offset_whole_and_in_parts(
                        (t, dims.to_vec(), a.clone(), b.clone(), input.clone()),
                        offsets,
                        &[500],
                    )
                    .unwrap();
                }
            }
        }
    }
}

/// Transposes whose source rows lie 16 KiB apart (`f32`), 32 KiB (`f32` and `u64`) or 64 KiB
/// (`bf16`) and are read 4 KiB or more at a time walk narrowed bands, 128 bytes of destination
/// row from a source off a line and 256 from one on a line (`plan::band_columns`; `--explain`
/// says so; `u64` 64 bytes from either, `plan::WIDE_BAND_ROWS`): whole bands and a ragged one,
/// rows that wrap on a destination 16 bytes past a line (192-byte rows) and rows that do not
/// (160 bytes), whole and in parts (one part too short to narrow its bands), both stores: the
/// reference's bytes.
#[test]
fn narrowed_bands_match_the_reference() {
    let cases = [("f32", 4096u64, 48u64), ("f32", 8192, 48), ("f32", 8192, 40), ("u64", 4096, 20), ("bf16", 32768, 96)];
    for (t, rows, cols) in cases {
        let list = format!("{rows},{cols}");
        let (a, b) = (shape(&format!("{t}[{list}]{{0,1}}")), shape(&format!("{t}[{list}]{{1,0}}")));
        let plan = RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap();
        // `u64` reads 8 source rows per band however its rows lie (`plan::WIDE_BAND_ROWS`).
        let band = if t == "u64" {
            "in bands of 64 bytes of destination row\n"
        } else {
            "in bands of 256 bytes of destination row (128 where the source runs straddle cache lines: the source rows \
             are a multiple of 16 KiB apart)"
        };
        assert!(plan.explain().contains(band), "{t}[{list}]: {}", plan.explain());
        let element_type = a.as_array().unwrap().element_type();
        let (a, b) = (Side::Layout(a), Side::Layout(b));
        let input: Vec<u8> = (0..a.len()).map(|k| u8::try_from(k * 7 % 251).unwrap()).collect();
        for offsets in [(0, 0), (16, 16), (48, 16)] {
            at_offset_whole_and_in_parts(
                (element_type, vec![rows, cols], a.clone(), b.clone(), input.clone()),
                offsets,
                &[1, 500, 733],
            )
            .unwrap();
        }
    }
}

/// The tiled transpose `{1,0}` → `{0,1:T(8,128)(2,1)}` of `bf16` rows of 16 KiB (a fused
/// transpose whose bands narrow, `plan::narrowed`): from a source off a line by whole pairs, the
/// fused rows before its first line move on their own and the fused strip starts after them
/// (`Walk::run`'s `lead_rows`); off a line by part of a pair, its runs straddle. The reference's
/// bytes at each pair of offsets, whole and in parts, both stores.
#[test]
fn narrowed_fused_transposes_match_the_reference() {
    let (a, b) = (shape("bf16[256,8192]{1,0}"), shape("bf16[256,8192]{0,1:T(8,128)(2,1)}"));
    let plan = RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap();
    assert!(plan.explain().contains("(Fused)"), "{}", plan.explain());
    let (a, b) = (Side::Layout(a), Side::Layout(b));
    let input: Vec<u8> = (0..a.len()).map(|k| u8::try_from(k * 7 % 251).unwrap()).collect();
    for offsets in [(16, 0), (16, 16), (52, 16), (2, 48)] {
        at_offset_whole_and_in_parts(
            (PrimitiveType::BF16, vec![256, 8192], a.clone(), b.clone(), input.clone()),
            offsets,
            &[1, 500, 733],
        )
        .unwrap();
    }
}

/// Transposes in bands whose source rows are short (at most 512 elements: r3's `{2,1,0}` →
/// `{1,0,2}`) ask for the source of the micro-tile 32 lines on in each tile-row
/// (`plan::AHEAD_LINES`; `--explain` says so), and longer rows do not: a hint that reads
/// nothing, so every case moves the reference's bytes, with ragged bands and tile-rows, on and
/// off a line, whole and in parts. A (de)interleave in bands does not ask.
#[test]
fn short_rows_ask_ahead_and_match_the_reference() {
    let ahead = ", each micro-tile's source asked for 32 lines ahead";
    for (t, dims, asks) in [
        ("f32", [4u64, 200, 72], true),
        ("bf16", [3, 260, 100], true),
        ("u8", [2, 300, 130], true),
        ("u64", [5, 120, 36], true),
        ("f32", [2, 300, 520], false),
    ] {
        let list = dims.map(|d| d.to_string()).join(",");
        let (a, b) = (shape(&format!("{t}[{list}]{{2,1,0}}")), shape(&format!("{t}[{list}]{{1,0,2}}")));
        let plan = RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap();
        let explained = plan.explain();
        assert!(explained.contains("in bands of"), "{t}[{list}]: {explained}");
        assert_eq!(explained.contains(ahead), asks, "{t}[{list}]: {explained}");
        let element_type = a.as_array().unwrap().element_type();
        let (a, b) = (Side::Layout(a), Side::Layout(b));
        let input: Vec<u8> = (0..a.len()).map(|k| u8::try_from(k * 7 % 251).unwrap()).collect();
        for offsets in [(0, 0), (16, 16), (48, 16)] {
            at_offset_whole_and_in_parts(
                (element_type, dims.to_vec(), a.clone(), b.clone(), input.clone()),
                offsets,
                &[1, 500, 733],
            )
            .unwrap();
        }
    }
    // A (de)interleave in bands walks whole rows of `(2,1)` sub-tiles: it does not ask ahead.
    for (a, b) in [("{1,0}", "{1,0:T(8,128)(2,1)}"), ("{1,0:T(8,128)(2,1)}", "{1,0}")] {
        let (a, b) = (shape(&format!("bf16[64,512]{a}")), shape(&format!("bf16[64,512]{b}")));
        let explained = RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap().explain();
        assert!(explained.contains("in bands of") && !explained.contains(ahead), "{explained}");
    }
}

/// The strips of `u8` and `bf16` transposes stage their micro-tiles when their rows are long or
/// their runs crowd the cache's sets (`plan::stages`; `--explain` says so, and whether the tiles
/// ask for their source two tile-rows on): the reference's bytes on and off a line, whole and in
/// parts, both stores. `f32`, and `u8` and `bf16` with short uncrowded rows, do not stage.
#[test]
fn staged_tiles_match_the_reference() {
    let staged = "; each micro-tile staged (its source runs copied whole first)";
    let far = ", asking for its source 2 tile-rows on";
    // Under Miri a smaller case of each width, one pair of offsets, whole (each takes minutes).
    let (cases, offsets, cuts): (&[StagedCase], &[(usize, usize)], &[usize]) = if cfg!(miri) {
        (&STAGED_MIRI, &[(16, 16)], &[])
    } else {
        (&STAGED, &[(0, 0), (16, 16), (48, 16), (0, 36), (20, 0), (63, 1)], &[1, 500, 733])
    };
    for &(t, dims, src, dst, asks_far) in cases {
        let a = make_shape_with_layout(t, dims, &LayoutSpec::new(src)).unwrap();
        let b = make_shape_with_layout(t, dims, &LayoutSpec::new(dst)).unwrap();
        let explained = RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap().explain();
        assert!(explained.contains(staged), "{t:?}{dims:?}: {explained}");
        assert_eq!(explained.contains(far), asks_far, "{t:?}{dims:?}: {explained}");
        let (a, b) = (Side::Layout(a), Side::Layout(b));
        let input: Vec<u8> = (0..a.len()).map(|k| u8::try_from(k * 7 % 251).unwrap()).collect();
        let udims: Vec<u64> = dims.iter().map(|&d| u64::try_from(d).unwrap()).collect();
        for &offsets in offsets {
            at_offset_whole_and_in_parts((t, udims.clone(), a.clone(), b.clone(), input.clone()), offsets, cuts)
                .unwrap();
        }
    }
    for text in ["f32[4096,300]", "bf16[128,512]", "u8[128,512]"] {
        let (a, b) = (shape(&format!("{text}{{0,1}}")), shape(&format!("{text}{{1,0}}")));
        let explained = RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap().explain();
        assert!(explained.contains("in bands of") && !explained.contains(staged), "{text}: {explained}");
    }
}

/// Tiled transposes of row-major arrays (`{0,1:T(8,128)}` and `{0,1:T(8,128)(2,1)}`,
/// `{0,1:T(16,128)(2,1)}`: fused rows, `kernel::Walk::fused_strip`) with whole tile-rows and a
/// partial one, from sources and into destinations on and off a line (rows that wrap, each
/// group's first row started on its own), whole and in parts: the reference's bytes.
#[test]
fn tiled_transposes_match_the_reference() {
    // Under Miri (`tools/miri`) one whole tile-row of fused rows and a partial tile.
    let (rows, cols) = if cfg!(miri) { (136, 32) } else { (264, 272) };
    let offsets: &[(usize, usize)] =
        if cfg!(miri) { &[(0, 0), (16, 16)] } else { &[(0, 0), (16, 16), (48, 16), (0, 36), (20, 0)] };
    for (t, tiles) in [("f32", "T(8,128)"), ("bf16", "T(8,128)(2,1)"), ("bf16", "T(16,128)(2,1)")] {
        let (a, b) =
            (shape(&format!("{t}[{rows},{cols}]{{1,0}}")), shape(&format!("{t}[{rows},{cols}]{{0,1:{tiles}}}")));
        let element_type = a.as_array().unwrap().element_type();
        let (a, b) = (Side::Layout(a), Side::Layout(b));
        let input: Vec<u8> = (0..a.len()).map(|k| u8::try_from(k * 7 % 251).unwrap()).collect();
        for &offsets in offsets {
            at_offset_whole_and_in_parts(
                (element_type, vec![rows, cols], a.clone(), b.clone(), input.clone()),
                offsets,
                &[3, 500, 733],
            )
            .unwrap();
        }
    }
}

#[test]
fn legacy_padding_gets_its_padding_value() {
    let dst = make_shape_with_layout(
        PrimitiveType::S32,
        &[2],
        &LayoutSpec::new(&[0]).padded_dimensions(&[4], PaddingValue::LowestPad),
    )
    .unwrap();
    let src = shape("s32[2]{0}");
    let plan = RelayoutPlan::new(src.as_array().unwrap(), dst.as_array().unwrap()).unwrap();
    let out = plan.run_to_vec(&[7, 0, 0, 0, 8, 0, 0, 0]).unwrap();
    let values: Vec<i32> = out.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(values, [7, 8, i32::MIN, i32::MIN]);
}

#[test]
fn wrong_buffer_lengths_are_typed_errors() {
    let (src, dst) = (shape("f32[2,3]{0,1}"), shape("f32[2,3]{1,0}"));
    let plan = RelayoutPlan::new(src.as_array().unwrap(), dst.as_array().unwrap()).unwrap();
    let mut out = vec![0u8; 24];
    let err = plan.run(&[0; 23], &mut out).unwrap_err();
    assert_eq!(
        err,
        Error::Relayout(Box::new(RelayoutProblem::BufferLength {
            side: RelayoutSide::Source,
            expected: 24,
            actual: 23
        }))
    );
    assert!(err.to_string().contains("source buffer has 23 bytes, expected 24"), "{err}");
    let err = plan.run(&[0; 24], &mut [0; 25]).unwrap_err();
    assert!(matches!(
        *match err {
            Error::Relayout(p) => p,
            e => panic!("{e}"),
        },
        RelayoutProblem::BufferLength { side: RelayoutSide::Destination, expected: 24, actual: 25 }
    ));
    // A part outside the destination, a part buffer of the wrong length.
    let err = plan.run_range(&[0; 24], &mut [0; 8], 20..28).unwrap_err();
    assert_eq!(err, Error::Relayout(Box::new(RelayoutProblem::Range { start: 20, end: 28, len: 24 })));
    assert!(err.to_string().contains("destination range 20..28 is not inside the destination's 24 bytes"), "{err}");
    let err = plan.run_range(&[0; 24], &mut [0; 5], 0..4).unwrap_err();
    assert!(err.to_string().contains("destination buffer has 5 bytes, expected 4"), "{err}");
}

#[test]
fn mismatched_endpoints_are_typed_errors() {
    let problem = |a: &str, b: &str| match RelayoutPlan::new(shape(a).as_array().unwrap(), shape(b).as_array().unwrap())
    {
        Err(Error::Relayout(p)) => *p,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        problem("f32[2,3]", "s32[2,3]"),
        RelayoutProblem::ElementType { source: PrimitiveType::F32, destination: PrimitiveType::S32 }
    );
    assert_eq!(problem("f32[2,3]", "f32[6]"), RelayoutProblem::Rank { source: 2, destination: 1 });
    assert_eq!(problem("f32[2,3]", "f32[2,4]"), RelayoutProblem::Dimension { dimension: 1, source: 3, destination: 4 });
    // A dynamic dimension relayouts by its bound.
    assert!(RelayoutPlan::new(shape("f32[<=4]").as_array().unwrap(), shape("f32[4]").as_array().unwrap()).is_ok());
}

#[test]
fn strided_views_are_checked() {
    let view = |dims: &[u64], strides: &[i64], offset| StridedView::new(PrimitiveType::F32, dims, strides, offset);
    assert!(
        matches!(view(&[2, 3], &[4], 0), Err(Error::Relayout(p)) if *p == RelayoutProblem::StrideCount { dimensions: 2, strides: 1 })
    );
    assert!(
        matches!(view(&[2, 3], &[-12, 4], 8), Err(Error::Relayout(p)) if *p == RelayoutProblem::BeforeBuffer { first: -4 })
    );
    // Overlap is an error only where it would be written.
    let overlapping = view(&[2, 3], &[4, 4], 0).unwrap();
    let dense = shape("f32[2,3]");
    assert!(RelayoutPlan::new(&overlapping, dense.as_array().unwrap()).is_ok());
    assert!(
        matches!(RelayoutPlan::new(dense.as_array().unwrap(), &overlapping), Err(Error::Relayout(p)) if *p == RelayoutProblem::Overlap { dimension: 1, stride: 4 })
    );
    // A view's buffer may be longer than it needs, never shorter.
    let upside_down = view(&[2, 3], &[-12, 4], 12).unwrap();
    let plan = RelayoutPlan::new(&upside_down, dense.as_array().unwrap()).unwrap();
    let out = plan.run_to_vec(&f32_bytes([4., 5., 6., 1., 2., 3., 9.])).unwrap();
    assert_eq!(out, f32_bytes([1., 2., 3., 4., 5., 6.]));
    assert!(plan.run_to_vec(&[0; 23]).is_err());
}

/// Feature `rayon`: boxes over 1 MiB split over the pool; the pieces give the sequential bytes.
#[cfg(feature = "rayon")]
#[test]
fn parallel_runs_match_the_sequential_ones() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let single = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    for (a, b) in [
        ("f32[1000,700]{0,1}", "f32[1000,700]{1,0}"),
        ("f32[7,300,200]{2,1,0}", "f32[7,300,200]{1,0,2}"),
        ("bf16[1000,1000]{1,0:T(8,128)(2,1)}", "bf16[1000,1000]{1,0}"),
        ("u8[3000,700]{1,0}", "u8[3000,700]{0,1}"),
    ] {
        let (a, b) = (shape(a), shape(b));
        let plan = RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap();
        let input: Vec<u8> = (0..plan.src_len()).map(|k| u8::try_from(k % 253).unwrap()).collect();
        let two = pool.install(|| plan.run_to_vec(&input)).unwrap();
        let one = single.install(|| plan.run_to_vec(&input)).unwrap();
        assert!(two == one, "{a} -> {b}");
    }
}

/// A packed transpose whose inner source stride is 8 bits is not an unpacked source (found by
/// the round-trip property).
#[test]
fn a_packed_transpose_is_not_a_pack() {
    let (a, b) = (shape("s4[4,2]{0,1:E(4)}"), shape("s4[4,2]{1,0:E(4)}"));
    let back = RelayoutPlan::new(b.as_array().unwrap(), a.as_array().unwrap()).unwrap();
    // Row-major nibbles 0..8 → column-major: (0,0) (1,0) (2,0) (3,0) (0,1) …
    assert_eq!(back.run_to_vec(&[0x10, 0x32, 0x54, 0x76]).unwrap(), [0x20, 0x64, 0x31, 0x75]);
}

/// A narrowed band on a line is 512 bytes of destination row when the destination rows are 64
/// KiB apart or more and the source rows are closer (`plan::band_columns`, `plan::FAR_ROWS`),
/// 256 otherwise; 128 from a source whose runs straddle lines either way. Plans only: the
/// arrays are 256 MiB to 1 GiB (the bands' bytes at smaller widths are checked against the
/// reference above).
#[test]
fn far_destination_rows_take_wider_narrowed_bands() {
    let narrowed = |bytes: u64| {
        format!(
            "in bands of {bytes} bytes of destination row (128 where the source runs straddle cache lines: the \
             source rows are a multiple of 16 KiB apart)"
        )
    };
    for (dims, bytes) in
        [("4096,32768", 512), ("8192,16384", 512), ("16384,16384", 256), ("16384,8192", 256), ("8192,8192", 256)]
    {
        let (a, b) = (shape(&format!("f32[{dims}]{{0,1}}")), shape(&format!("f32[{dims}]{{1,0}}")));
        let explained = RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap().explain();
        assert!(explained.contains(&narrowed(bytes)), "f32[{dims}]: {explained}");
    }
}

/// A transpose's band is 512 destination-minor columns, at most 2 KiB of destination row
/// (`plan::band_width`, docs/relayout.md rule 10): 512 bytes of `u8`, 1 KiB of `bf16`, 2 KiB of
/// `f32`; elements of 8 bytes or more read 8 source rows per band (`plan::WIDE_BAND_ROWS`): 64
/// bytes of `u64`, 128 of `c128`. And a streamed `u8` transpose whose destination rows hold a
/// band walks bands, where one whose rows are shorter walks its source.
#[test]
fn bands_are_512_columns_at_most_2_kib() {
    for (t, bytes) in [("u8", 512), ("bf16", 1024), ("f32", 2048), ("u64", 64), ("c128", 128)] {
        let (a, b) = (shape(&format!("{t}[640,640]{{0,1}}")), shape(&format!("{t}[640,640]{{1,0}}")));
        let plan = RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap();
        let explained = plan.explain();
        assert!(explained.contains(&format!("in bands of {bytes} bytes of destination row")), "{t}: {explained}");
    }
    let streamed = |dims: &str| {
        let (a, b) = (shape(&format!("u8[{dims}]{{0,1}}")), shape(&format!("u8[{dims}]{{1,0}}")));
        RelayoutPlan::with_stores(a.as_array().unwrap(), b.as_array().unwrap(), StorePolicy::Streaming)
            .unwrap()
            .explain()
    };
    assert!(streamed("64,512").contains("in bands of 512 bytes"), "{}", streamed("64,512"));
    assert!(streamed("64,448").contains("in source order"), "{}", streamed("64,448"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 1 } else { 32 }, ..ProptestConfig::default() })]

    /// Transposes whose strips stage their micro-tiles ([`staged_rows`]), from a source and into
    /// a destination at any offset from a cache line, get the reference's bytes with ordinary and
    /// streaming stores, whole and in parts: each tile's runs copied whole (across a wrapped
    /// row's seam too), the source asked for two tile-rows on.
    #[test]
    fn staged_tiles_at_any_offset_match_the_reference(
        case in staged_rows(),
        offsets in (0usize..64, 0usize..64),
        cuts in proptest::collection::vec(0usize..=1000, 0..3),
    ) {
        at_offset_whole_and_in_parts(case, offsets, &cuts)?;
    }

    /// Tiled transposes whose groups' seams are streamed ([`far_seam_rows`]), from a source and
    /// into a destination at any offset from a cache line, get the reference's bytes with
    /// ordinary and streaming stores, whole and in parts: each group's last line cut at the
    /// seam, its columns past the seam the next group's first row's first columns.
    #[test]
    fn far_fused_seams_at_any_offset_match_the_reference(
        case in far_seam_rows(),
        offsets in (0usize..64, 0usize..64),
        cuts in proptest::collection::vec(0usize..=1000, 0..3),
    ) {
        at_offset_whole_and_in_parts(case, offsets, &cuts)?;
    }

    /// Transposes whose bands narrow ([`narrowed_rows`]), from a source and into a destination
    /// at any offset from a cache line, get the reference's bytes with ordinary and streaming
    /// stores, whole and in parts: the rows before the source's first line on their own, the
    /// strip's runs on lines. Fewer cases than [`config`]'s: each moves 0.5–2 MiB against the
    /// per-element reference.
    #[test]
    fn narrowed_sources_at_any_offset_match_the_reference(
        case in narrowed_rows(),
        offsets in (0usize..64, 0usize..64),
        cuts in proptest::collection::vec(0usize..=1000, 0..3),
    ) {
        at_offset_whole_and_in_parts(case, offsets, &cuts)?;
    }
}
