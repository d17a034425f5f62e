//! Window relayouts (`docs/relayout.md` rule 20, `RelayoutPlan::window`): a box of one array
//! moved into a box of another, for any two layouts (tiles cut anywhere by the box's starts,
//! sub-byte and wide element sizes), against a reference that moves one element at a time
//! through `PhysicalMap`; their parts (`run_range`) against the same reference.

use proptest::prelude::*;
use xla_shape::error::{RelayoutProblem, RelayoutSide};
use xla_shape::make::{LayoutSpec, make_shape_with_layout};
use xla_shape::relayout::{RelayoutPlan, StorePolicy, Window};
use xla_shape::{Error, PhysicalMap, PrimitiveType, ShapeBuf, strategy};

use super::relayout::{indices, read, write};

/// A layout for `dims`: any order, 0–2 tiles (with `*` and rank extension), sometimes an element
/// size.
fn layout(t: PrimitiveType, dims: Vec<i64>) -> impl Strategy<Value = ShapeBuf> {
    let rank = dims.len();
    (
        strategy::minor_to_major(rank),
        proptest::collection::vec(strategy::tile(rank + 1), 0..=2),
        prop_oneof![4 => Just(0i64), 2 => Just(-1i64), 1 => 1i64..=40],
    )
        .prop_filter_map("a valid layout", move |(m2m, tiles, bits)| {
            let bits = if bits == -1 { i64::from(t.bit_width().unwrap()) } else { bits };
            let tile_refs: Vec<&[i64]> = tiles.iter().map(Vec::as_slice).collect();
            let spec = LayoutSpec::new(&m2m).element_size_in_bits(bits).tiles(&tile_refs);
            make_shape_with_layout(t, &dims, &spec).ok()
        })
}

type Case = (ShapeBuf, ShapeBuf, Vec<u64>, Vec<u64>, Vec<u64>, Vec<u8>, Vec<u8>);

/// Two layouts of two arrays of one element type and rank, a box that fits both, the source
/// bytes and the destination's bytes before the run.
fn case() -> impl Strategy<Value = Case> {
    (strategy::array_element_type(), proptest::collection::vec((0u64..=7, 0u64..=4, 0u64..=4), 0..=3))
        .prop_flat_map(|(t, per_dim)| {
            let extent: Vec<u64> = per_dim.iter().map(|p| p.0).collect();
            let src_dims: Vec<i64> = per_dim.iter().map(|p| i64::try_from(p.0 + p.1).unwrap()).collect();
            let dst_dims: Vec<i64> = per_dim.iter().map(|p| i64::try_from(p.0 + p.2).unwrap()).collect();
            let starts = |extra: Vec<u64>| extra.into_iter().map(|e| 0..=e).collect::<Vec<_>>();
            (
                layout(t, src_dims),
                layout(t, dst_dims),
                Just(extent),
                starts(per_dim.iter().map(|p| p.1).collect()),
                starts(per_dim.iter().map(|p| p.2).collect()),
            )
        })
        .prop_flat_map(|(a, b, extent, src_start, dst_start)| {
            let len =
                |s: &ShapeBuf| usize::try_from(xla_shape::size::storage_bytes(s.as_array().unwrap()).unwrap()).unwrap();
            let (la, lb) = (len(&a), len(&b));
            (
                Just(a),
                Just(b),
                Just(extent),
                Just(src_start),
                Just(dst_start),
                proptest::collection::vec(any::<u8>(), la),
                proptest::collection::vec(any::<u8>(), lb),
            )
        })
}

proptest! {
    // A few cases under Miri (`tools/miri`), where one case takes seconds.
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 4 } else { 768 }, ..ProptestConfig::default() })]

    /// Every element of the box gets the source's value bits (the rest of its slot zero); every
    /// other destination bit is left as it was, unless the box is the whole destination (then
    /// `run` fills its padding first, as for whole arrays).
    #[test]
    fn a_window_moves_its_elements_and_nothing_else((a, b, extent, src_start, dst_start, input, initial) in case()) {
        let (sa, sb) = (a.as_array().unwrap(), b.as_array().unwrap());
        let window = Window { src_start: &src_start, dst_start: &dst_start, extent: &extent };
        let plan = RelayoutPlan::window(sa, sb, window, StorePolicy::Auto).unwrap();
        let streamed = RelayoutPlan::window(sa, sb, window, StorePolicy::Streaming).unwrap();
        let (ma, mb) = (PhysicalMap::new(sa).unwrap(), PhysicalMap::new(sb).unwrap());
        let container = u64::from(sa.element_type().byte_width().unwrap()) * 8;
        let (va, vb) = (ma.bits_per_slot().min(container), mb.bits_per_slot().min(container));
        let whole = dst_start.iter().all(|&s| s == 0)
            && extent.iter().zip(sb.dimensions()).all(|(&e, &d)| i64::try_from(e).unwrap() == d);
        let mut expected = if whole {
            let mut buf = initial.clone();
            plan.fill_padding(&mut buf).unwrap();
            buf
        } else {
            initial.clone()
        };
        for at in indices(&extent) {
            let si: Vec<i64> = at.iter().zip(&src_start).map(|(&i, &s)| i + i64::try_from(s).unwrap()).collect();
            let di: Vec<i64> = at.iter().zip(&dst_start).map(|(&i, &s)| i + i64::try_from(s).unwrap()).collect();
            let value = read(&input, ma.bit_offset(&si).unwrap(), va.min(vb));
            write(&mut expected, mb.bit_offset(&di).unwrap(), mb.bits_per_slot(), value);
        }
        for p in [&plan, &streamed] {
            let mut out = initial.clone();
            p.run(&input, &mut out).unwrap();
            prop_assert_eq!(&out, &expected);
        }
        // Parts (`run_range`, rule 13) of a window plan: each part starts from the destination's
        // bytes there, and parts cut at every third byte give `run`'s bytes.
        let mut parts = initial.clone();
        let cuts: Vec<usize> = (0..parts.len()).step_by(3).chain([parts.len()]).collect();
        for pair in cuts.windows(2) {
            plan.run_range(&input, &mut parts[pair[0]..pair[1]], pair[0]..pair[1]).unwrap();
        }
        prop_assert_eq!(&parts, &expected);
    }
}

#[test]
fn windows_that_do_not_fit_are_typed_errors() {
    let (a, b): (ShapeBuf, ShapeBuf) = ("f32[4,4]".parse().unwrap(), "f32[2,2]".parse().unwrap());
    let (sa, sb) = (a.as_array().unwrap(), b.as_array().unwrap());
    let plan = |w: Window<'_>| RelayoutPlan::window(sa, sb, w, StorePolicy::Auto).unwrap_err();
    let relayout = |e: Error| match e {
        Error::Relayout(p) => *p,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        relayout(plan(Window { src_start: &[3, 0], dst_start: &[0, 0], extent: &[2, 2] })),
        RelayoutProblem::Window { side: RelayoutSide::Source, dimension: 0, start: 3, extent: 2, bound: 4 }
    );
    let err = plan(Window { src_start: &[0, 0], dst_start: &[0, 1], extent: &[2, 2] });
    assert_eq!(err.to_string(), "relayout: window [1, 1 + 2) out of bounds in destination dimensions[1] of size 2");
    assert_eq!(
        relayout(plan(Window { src_start: &[0], dst_start: &[0, 0], extent: &[2, 2] })),
        RelayoutProblem::WindowRank { rank: 2, actual: 1 }
    );
}

#[test]
fn tile_aligned_windows_move_whole_tiles() {
    // Rows 8..16 of a T(8,128) array: one tile row, the same bytes as the whole tile row.
    let (global, shard): (ShapeBuf, ShapeBuf) =
        ("f32[32,256]{1,0:T(8,128)}".parse().unwrap(), "f32[8,256]{1,0:T(8,128)}".parse().unwrap());
    let plan = RelayoutPlan::window(
        global.as_array().unwrap(),
        shard.as_array().unwrap(),
        Window { src_start: &[8, 0], dst_start: &[0, 0], extent: &[8, 256] },
        StorePolicy::Auto,
    )
    .unwrap();
    let input: Vec<u8> = (0..32 * 256 * 4u32).map(|k| u8::try_from(k % 253).unwrap()).collect();
    assert_eq!(plan.run_to_vec(&input).unwrap(), input[8 * 256 * 4..16 * 256 * 4]);
}
