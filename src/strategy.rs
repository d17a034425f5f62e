//! [`proptest`](mod@proptest) strategies that generate only valid values: shapes, layouts, tiles and in-bounds
//! indices (feature `proptest`).
//!
//! Downstream crates use them to property-test their own code against every kind of shape XLA
//! writes; this crate's own property tests use them too.
//!
//! ```
//! use proptest::prelude::*;
//! use xla_shape::strategy::{array_shape, ShapeConfig};
//!
//! proptest!(|(shape in array_shape(ShapeConfig::default()))| {
//!     let array = shape.as_array().unwrap();
//!     prop_assert!(array.rank() <= ShapeConfig::default().max_rank);
//! });
//! ```

// Test support: a strategy that cannot build a value it generated is a bug in the strategy.
#![allow(clippy::expect_used, clippy::arithmetic_side_effects)]

use proptest::prelude::*;
use proptest::sample::select;

use crate::make::{self, LayoutSpec};
use crate::primitive::PrimitiveType;
use crate::proto::PaddingValue;
use crate::shape::ShapeBuf;

/// What the generated shapes may contain.
///
/// ```
/// use proptest::prelude::*;
/// use xla_shape::strategy::{shape, ShapeConfig};
///
/// // Untiled, unpadded, static arrays of rank ≤ 2 and tuples of them: the values a simple
/// // row-major consumer must handle.
/// let plain = ShapeConfig { max_rank: 2, tiles: false, legacy_padding: false, dynamic: false, max_depth: 2, ..ShapeConfig::default() };
/// proptest!(|(s in shape(plain))| {
///     prop_assert!(!s.to_string().contains(":T("));
/// });
/// ```
// A configuration of independent switches; a state machine would not read better.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeConfig {
    /// The largest rank of an array.
    pub max_rank: usize,
    /// The largest dimension size.
    pub max_dimension: i64,
    /// The deepest tuple nesting (1 = no tuples).
    pub max_depth: usize,
    /// The most elements of a tuple.
    pub max_tuple_len: usize,
    /// Whether dimensions may be dynamic (`<=N`; unbounded `?` only when `unbounded` is set too).
    pub dynamic: bool,
    /// Whether dimensions may be unbounded dynamic (`?`).
    pub unbounded: bool,
    /// Whether layouts may have tiles (including `*` and tiles wider than the shape).
    pub tiles: bool,
    /// Whether layouts may have legacy `padded_dimensions` (never together with tiles).
    pub legacy_padding: bool,
    /// Whether layouts may set `element_size_in_bits`, tail padding and memory space.
    pub attributes: bool,
    /// Whether to generate buffers, tokens and opaque shapes inside tuples.
    pub non_arrays: bool,
}

impl Default for ShapeConfig {
    /// Rank ≤ 4, sizes ≤ 8, no tuples, tiles, padding and attributes on, dynamic bounds on,
    /// unbounded off: every generated array can be linearized.
    fn default() -> Self {
        Self {
            max_rank: 4,
            max_dimension: 8,
            max_depth: 1,
            max_tuple_len: 4,
            dynamic: true,
            unbounded: false,
            tiles: true,
            legacy_padding: true,
            attributes: true,
            non_arrays: true,
        }
    }
}

impl ShapeConfig {
    /// Everything on: tuples to depth 5, unbounded dimensions, buffers, tokens and opaque shapes.
    pub fn everything() -> Self {
        Self { max_depth: 5, unbounded: true, ..Self::default() }
    }
}

/// Any array element type.
///
/// ```
/// use proptest::prelude::*;
/// proptest!(|(t in xla_shape::strategy::array_element_type())| {
///     prop_assert!(t.is_array());
/// });
/// ```
pub fn array_element_type() -> impl Strategy<Value = PrimitiveType> {
    select(PrimitiveType::ALL.iter().copied().filter(|t| t.is_array()).collect::<Vec<_>>())
}

/// A permutation of `0..rank`, as a `minor_to_major` list.
///
/// ```
/// use proptest::prelude::*;
/// use xla_shape::{make, strategy};
/// proptest!(|(m2m in strategy::minor_to_major(3))| {
///     let layout = make::make_layout(&m2m).unwrap();
///     prop_assert_eq!(layout.view().order().len(), 3);
/// });
/// ```
pub fn minor_to_major(rank: usize) -> impl Strategy<Value = Vec<i64>> {
    Just((0..rank).map(|d| i64::try_from(d).unwrap_or(0)).collect::<Vec<_>>()).prop_shuffle()
}

/// One tile of rank 1..=`max_rank`: sizes 1..=4 (so tiles really split small dimensions), with
/// an occasional combine dimension `*` anywhere but the last position.
///
/// ```
/// use proptest::prelude::*;
/// use xla_shape::{layout::TileDim, strategy, Tile};
/// proptest!(|(entries in strategy::tile(3))| {
///     let tile = Tile::try_new(&entries).unwrap();
///     prop_assert!(matches!(tile.iter().last(), Some(TileDim::Size(1..=4))));
/// });
/// ```
pub fn tile(max_rank: usize) -> impl Strategy<Value = Vec<i64>> {
    (1..=max_rank.max(1)).prop_flat_map(|rank| {
        proptest::collection::vec(prop_oneof![6 => 1i64..=4, 1 => Just(i64::MIN)], rank).prop_map(|mut t| {
            if let Some(last) = t.last_mut() {
                if *last == i64::MIN {
                    *last = 2;
                }
            }
            t
        })
    })
}

/// The parts of a valid layout for `dimensions`.
fn layout_spec(dimensions: Vec<i64>, config: &ShapeConfig) -> impl Strategy<Value = LayoutSpec> + use<> {
    let rank = dimensions.len();
    let tiles =
        if config.tiles { proptest::collection::vec(tile(rank + 1), 0..=2).boxed() } else { Just(vec![]).boxed() };
    let padding = if config.legacy_padding && !dimensions.contains(&i64::MIN) {
        proptest::option::of(proptest::collection::vec(0i64..=2, rank)).boxed()
    } else {
        Just(None).boxed()
    };
    let attributes = if config.attributes {
        (
            prop_oneof![3 => Just(1i64), 1 => 1i64..=8],
            prop_oneof![3 => Just(0i64), 1 => 1i64..=64],
            prop_oneof![3 => Just(0i64), 1 => 1i64..=6],
        )
            .boxed()
    } else {
        Just((1i64, 0i64, 0i64)).boxed()
    };
    (minor_to_major(rank), tiles, padding, attributes).prop_map(
        move |(m2m, tiles, padding, (tail, bits, memory_space))| {
            let tile_refs: Vec<&[i64]> = tiles.iter().map(Vec::as_slice).collect();
            let mut spec = LayoutSpec::new(&m2m)
                .tail_padding_alignment_in_elements(tail)
                .element_size_in_bits(bits)
                .memory_space(memory_space);
            match padding {
                // Padding and tiles never meet (no XLA era had both).
                Some(extra) if tiles.is_empty() => {
                    let padded: Vec<i64> = dimensions.iter().zip(&extra).map(|(d, e)| d + e).collect();
                    spec = spec.padded_dimensions(&padded, PaddingValue::ZeroPad);
                }
                _ => spec = spec.tiles(&tile_refs),
            }
            spec
        },
    )
}

/// Dimension sizes with dynamic flags.
fn dimensions(config: &ShapeConfig) -> impl Strategy<Value = (Vec<i64>, Vec<bool>)> + use<> {
    let (max_dimension, dynamic, unbounded) = (config.max_dimension, config.dynamic, config.unbounded);
    proptest::collection::vec(
        (0..=max_dimension, prop_oneof![4 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)]).prop_map(
            move |(size, kind)| match kind {
                1 if dynamic => (size, true),
                2 if unbounded => (i64::MIN, true),
                _ => (size, false),
            },
        ),
        0..=config.max_rank,
    )
    .prop_map(|dims| dims.into_iter().unzip())
}

/// A valid array shape with a layout, in XLA form.
///
/// ```
/// use proptest::prelude::*;
/// use xla_shape::{codec, strategy::{array_shape, ShapeConfig}, ShapeBuf};
/// // A property of the crate's own: decode → encode is byte-identical.
/// proptest!(|(s in array_shape(ShapeConfig::default()))| {
///     let bytes = codec::encode(s.proto());
///     let back: ShapeBuf = codec::decode::<xla_shape::proto::ShapeProto>(&bytes[..]).unwrap().try_into().unwrap();
///     prop_assert_eq!(back, s);
/// });
/// ```
///
/// # Panics
///
/// Never: it only builds valid values, so a panic would be a bug in the strategy.
pub fn array_shape(config: ShapeConfig) -> impl Strategy<Value = ShapeBuf> {
    (array_element_type(), dimensions(&config)).prop_flat_map(move |(element_type, (dims, dynamic))| {
        layout_spec(dims.clone(), &config).prop_map(move |spec| {
            let shape =
                make::make_shape_with_layout(element_type, &dims, &spec).expect("strategy generates valid layouts");
            let mut proto = shape.into_proto();
            proto.is_dynamic_dimension.clone_from(&dynamic);
            ShapeBuf::try_from_proto(proto).expect("strategy generates valid dynamic flags")
        })
    })
}

/// A valid shape of any kind: arrays, and (as `config` allows) nested tuples, buffers, tokens and
/// opaque shapes.
///
/// ```
/// use proptest::prelude::*;
/// use xla_shape::{strategy::{shape, ShapeConfig}, text, MAX_DEPTH};
/// proptest!(|(s in shape(ShapeConfig::everything()))| {
///     // Everything generated validates; whatever has no legacy padding prints and parses back.
///     let text = s.to_string();
///     prop_assert!(text::parse_shape_raw(&text).is_ok(), "{}", text);
///     prop_assert!(ShapeConfig::everything().max_depth <= MAX_DEPTH);
/// });
/// ```
///
/// # Panics
///
/// Never: it only builds valid values, so a panic would be a bug in the strategy.
pub fn shape(config: ShapeConfig) -> impl Strategy<Value = ShapeBuf> {
    let leaf = {
        let arrays = array_shape(config);
        if config.non_arrays {
            let buffers = array_shape(config).prop_map(|a| make::make_buffer_shape(&a).expect("array"));
            prop_oneof![
                6 => arrays,
                1 => buffers,
                1 => Just(make::make_token_shape()),
                1 => Just(make::make_opaque_shape()),
            ]
            .boxed()
        } else {
            arrays.boxed()
        }
    };
    let depth = u32::try_from(config.max_depth.saturating_sub(1)).unwrap_or(0);
    let width = u32::try_from(config.max_tuple_len).unwrap_or(4);
    let max_len = config.max_tuple_len;
    leaf.prop_recursive(depth, 64, width, move |inner| {
        proptest::collection::vec(inner, 0..=max_len)
            .prop_map(|elements| make::make_tuple_shape(&elements).expect("depth is bounded"))
    })
}

/// A valid array shape together with an in-bounds multi-index. Shapes with zero elements or
/// unbounded dimensions have no valid index and are not generated.
///
/// ```
/// use proptest::prelude::*;
/// use xla_shape::{strategy::{array_shape_and_index, ShapeConfig}, PhysicalMap};
/// proptest!(|((s, index) in array_shape_and_index(ShapeConfig::default()))| {
///     let map = PhysicalMap::new(s.as_array().unwrap()).unwrap();
///     let slot = map.slot(&index).unwrap();
///     prop_assert_eq!(map.index_of_slot(slot).unwrap(), Some(index));
/// });
/// ```
pub fn array_shape_and_index(config: ShapeConfig) -> impl Strategy<Value = (ShapeBuf, Vec<i64>)> {
    let config = ShapeConfig { max_dimension: config.max_dimension.max(1), unbounded: false, ..config };
    array_shape(config)
        .prop_filter("needs at least one element", |s| s.proto().dimensions.iter().all(|&d| d > 0))
        .prop_flat_map(|shape| {
            let index = shape.proto().dimensions.iter().map(|&d| 0..d).collect::<Vec<_>>();
            (Just(shape), index)
        })
}
