//! XLA shapes and layouts in pure Rust: XLA's `ShapeProto`, `LayoutProto` and
//! `ProgramShapeProto`, decoded and encoded byte for byte, validated as XLA validates them,
//! linearized (untiled, legacy padded, nested-tiled, sub-byte), sized, and printed and parsed
//! exactly as XLA's shape strings.
//!
//! No system `protoc` is needed: `build.rs` compiles the vendored `proto/xla/xla_data.proto` with
//! the pure-Rust [`protox`](https://docs.rs/protox) compiler into [prost](https://docs.rs/prost)
//! types.
//!
//! # Quick start
//!
//! Bytes (from an HLO dump, PJRT, or any tool that serializes an `xla::ShapeProto`) → a validated
//! view → facts about the array:
//!
//! ```
//! use xla_shape::{proto::ShapeProto, size, Dim, Shape};
//!
//! // `f32[2,3]{0,1}` as XLA serializes it.
//! let bytes = [
//!     0x10, 0x0b, // element_type: F32
//!     0x1a, 0x02, 0x02, 0x03, // dimensions: [2, 3]
//!     0x2a, 0x07, 0x0a, 0x02, 0x00, 0x01, 0x80, 0x01, 0x01, // layout { minor_to_major: [0, 1], tail padding 1 }
//!     0x32, 0x02, 0x00, 0x00, // is_dynamic_dimension: [false, false]
//! ];
//! let proto: ShapeProto = xla_shape::decode(&bytes[..])?; // strict: unknown fields are errors
//! let shape = Shape::try_new(&proto)?; // validates once; everything downstream trusts it
//! assert_eq!(shape.to_string(), "f32[2,3]{0,1}");
//!
//! let array = shape.as_array().expect("an array");
//! assert_eq!(array.dimension(Dim(1)), 3);
//! assert_eq!(array.minor_to_major().minor(0), Dim(0)); // dimension 0 varies fastest
//! assert_eq!(size::byte_size_of_elements(array)?, 24);
//! assert_eq!(xla_shape::encode(&proto), bytes); // decode → encode is byte-identical
//! # Ok::<(), xla_shape::Error>(())
//! ```
//!
//! # Raw and validated
//!
//! The crate has two layers, and the only door between them is a checking constructor:
//!
//! ```text
//!                  raw: any value                        validated: checked once, trusted after
//!              ┌────────────────────┐  Shape::try_new     ┌──────────────────────────┐
//!  bytes ─────▶│ proto::ShapeProto  │  Layout::try_new    │ Shape, ArrayShape,       │──▶ index, physical,
//!    decode    │ proto::LayoutProto │────────────────────▶│ TupleShape, ProgramShape,│    size, padding,
//!  ◀───────────│ ProgramShapeProto  │  ShapeBuf::         │ Layout, Tile             │    bitcast, util,
//!    encode    └────────────────────┘  try_from_proto     │ ShapeBuf, LayoutBuf      │    Display
//!  text ──parse_shape_raw──▲                              └──────────────────────────┘
//!  text ──parse_shape / str::parse; make::*, util::* ───────────────▲
//! ```
//!
//! * [`proto`] holds the prost-generated structs: plain data, whatever the bytes said. Build,
//!   inspect and encode them freely, including through prost's `extern_path` from your own
//!   protos.
//! * [`Shape`], [`ArrayShape`], [`TupleShape`], [`ProgramShape`], [`Layout`] and [`Tile`] borrow a
//!   proto (no copy) and exist only once it passed [`validate`]. [`ShapeBuf`] and [`LayoutBuf`]
//!   own a validated proto; [`make`], the text parser and [`util`] return them.
//! * Every computation — linearization, iteration, sizes, strides, the `util` operations — takes a
//!   validated view and never validates again; it still checks its arithmetic and returns
//!   [`Error::Overflow`] rather than wrapping. (Printing also works on raw protos, because XLA
//!   prints invalid shapes in its errors.)
//!
//! # The seeds' story, step by step
//!
//! XLA's "Shapes and Layout" document walks through one small array, `[2 x 3]`:
//!
//! ```text
//! a b c
//! d e f
//! ```
//!
//! ## 1. Decode bytes and validate
//!
//! [`decode`] is strict: prost silently drops unknown fields, so the crate scans the wire first
//! and refuses to lose data. [`decode_lenient`] returns the message together with a report of
//! what was dropped or encoded non-canonically. Validation then follows XLA's check order and
//! names the offending field.
//!
//! ```
//! use xla_shape::{codec, error::WireType, proto::ShapeProto, Error, Shape};
//!
//! // f32[] followed by an unknown field 99 = 1.
//! let bytes = [0x10, 0x0b, 0x98, 0x06, 0x01];
//! let err = xla_shape::decode::<ShapeProto>(&bytes[..]).unwrap_err();
//! assert!(matches!(err, Error::UnknownField { field_number: 99, wire_type: WireType::Varint, .. }));
//! let lenient = xla_shape::decode_lenient::<ShapeProto>(&bytes[..])?;
//! assert_eq!(lenient.report.unknown_fields.len(), 1);
//!
//! // f32[2,3]{0,0}: bytes that decode but describe no valid layout.
//! let proto: ShapeProto = codec::decode(&[0x10, 0x0b, 0x1a, 0x02, 0x02, 0x03, 0x2a, 0x04, 0x0a, 0x02, 0x00, 0x00][..])?;
//! let err = Shape::try_new(&proto).unwrap_err();
//! assert!(matches!(err, Error::InvalidLayout { .. }));
//! assert_eq!(err.path().map(|p| p.as_str().to_owned()), Some("layout.minor_to_major[1]".to_owned()));
//! # Ok::<(), Error>(())
//! ```
//!
//! ## 2. Dimensions: numbers, negative numbers, letters
//!
//! Dimensions are numbered `0..N` in the order of `dimensions`; [`Dim`] keeps a dimension *number*
//! apart from a *size*. Some XLA utilities count from the end like Python (`-1` is the last),
//! and XLA's documents give rank 2–4 dimensions letters.
//!
//! ```
//! use xla_shape::{make, util, Dim, PrimitiveType};
//!
//! // ShapeUtil::MakeShape(F32, {A, B, C}) with A = 2, B = 3, C = 4.
//! let s = make::make_shape(PrimitiveType::F32, &[2, 3, 4])?;
//! let array = s.as_array().expect("an array");
//! assert_eq!(array.dimension(Dim(0)), 2);
//! assert_eq!(util::get_dimension(array, -1)?, 4); // dimension -1 has size C
//! assert_eq!(util::get_dimension(array, -2)?, 3);
//! assert_eq!(util::get_dimension_number(array, -3)?, Dim(0));
//! let letters: Vec<char> = (0..3).filter_map(|d| util::dimension_letter(3, d)).collect();
//! assert_eq!(letters, ['z', 'y', 'x']);
//! // True rank counts dimensions whose size is not 1 (XLA code; the seeds say "greater than 1").
//! let degenerate = make::make_shape(PrimitiveType::F32, &[1, 5, 0])?;
//! assert_eq!(util::true_num_dimensions(degenerate.as_array().expect("an array")), 2);
//! # Ok::<(), xla_shape::Error>(())
//! ```
//!
//! ## 3. Layout: minor-to-major, default, column-major
//!
//! `minor_to_major` lists the dimensions from the one that varies fastest in memory to the one
//! that varies slowest. The default is descending (`{1,0}` at rank 2: row-major, "dim 0 is
//! major"); `{0,1}` is column-major ("dim 0 is minor"). A shape without a layout is treated as
//! having the default one by every computation.
//!
//! ```
//! use xla_shape::{make, util, ArrayShape, Dim, PrimitiveType, proto::ShapeProto};
//!
//! let row_major = make::make_shape(PrimitiveType::F32, &[2, 3])?;
//! assert_eq!(row_major.to_string(), "f32[2,3]{1,0}");
//! let column_major = make::make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[0, 1])?;
//! assert_eq!(column_major.to_string(), "f32[2,3]{0,1}");
//!
//! let order = column_major.as_array().expect("an array").minor_to_major();
//! assert_eq!((order.minor(0), order.major(0)), (Dim(0), Dim(1)));
//! let layout = column_major.as_array().and_then(|a| a.layout()).expect("a layout");
//! assert!(util::is_monotonic_with_dim0_minor(layout));
//!
//! // No layout at all: the default descending order is used.
//! let bare = ShapeProto { element_type: 11, dimensions: vec![2, 3, 4], ..ShapeProto::default() };
//! let bare = ArrayShape::try_new_optional_layout(&bare)?;
//! assert_eq!(bare.minor_to_major().iter().collect::<Vec<_>>(), [Dim(2), Dim(1), Dim(0)]);
//! assert!(ArrayShape::try_new(bare.proto()).is_err()); // strict validation wants a layout
//! # Ok::<(), xla_shape::Error>(())
//! ```
//!
//! ## 4. Linearize: `a d b e c f`, then padding, then tiles
//!
//! A [`PhysicalMap`] knows where every element of an array lives in its buffer, and which
//! element (if any) each buffer [`Slot`] holds. It honours everything a layout says about
//! memory: `minor_to_major`, the legacy `padded_dimensions`, nested tiles, tail padding and
//! sub-byte element sizes. The XLA-parity [`index`] functions (`IndexUtil`) ignore tiles, as XLA
//! does; for untiled layouts both agree.
//!
//! ```
//! use xla_shape::{make::{self, LayoutSpec}, proto::PaddingValue, PhysicalMap, PrimitiveType, ShapeBuf, Slot};
//!
//! /// The buffer of a row-major-lettered array (`a b c / d e f`), `0` for a padding slot.
//! fn memory(shape: &ShapeBuf) -> xla_shape::Result<String> {
//!     let array = shape.as_array().expect("an array");
//!     let columns = array.dimensions()[1];
//!     let map = PhysicalMap::new(array)?;
//!     let mut out = Vec::new();
//!     for slot in 0..map.storage_slots() {
//!         out.push(match map.index_of_slot(Slot(slot))? {
//!             Some(i) => char::from(b'a' + u8::try_from(i[0] * columns + i[1]).expect("small")),
//!             None => '0',
//!         });
//!     }
//!     Ok(out.iter().map(char::to_string).collect::<Vec<_>>().join(" "))
//! }
//!
//! // minor_to_major [0, 1]: dimension 0 is most minor.
//! let column_major = make::make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[0, 1])?;
//! assert_eq!(memory(&column_major)?, "a d b e c f");
//! let row_major = make::make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[1, 0])?;
//! assert_eq!(memory(&row_major)?, "a b c d e f");
//!
//! // padded_dimensions [3, 5] (the 2017–2018 legacy fields), column-major, padding value 0.
//! let padded = LayoutSpec::new(&[0, 1]).padded_dimensions(&[3, 5], PaddingValue::ZeroPad);
//! let padded = make::make_shape_with_layout(PrimitiveType::F32, &[2, 3], &padded)?;
//! assert_eq!(memory(&padded)?, "a d 0 b e 0 c f 0 0 0 0 0 0 0");
//!
//! // A tiled layout: 2×2 tiles over f32[3,5] row-major; partial tiles are padded.
//! let tiled = make::make_shape_with_layout(PrimitiveType::F32, &[3, 5], &LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]]))?;
//! assert_eq!(tiled.to_string(), "f32[3,5]{1,0:T(2,2)}");
//! assert_eq!(memory(&tiled)?, "a b f g c d h i e 0 j 0 k l 0 0 m n 0 0 o 0 0 0");
//!
//! // Forward: where does element (1, 2) — `h` — live, in slots and in bits?
//! let map = PhysicalMap::new(tiled.as_array().expect("an array"))?;
//! assert_eq!(map.slot(&[1, 2])?, Slot(6));
//! assert_eq!(map.bit_offset(&[1, 2])?, 192);
//! assert_eq!(map.storage_bytes(), 96);
//! # Ok::<(), xla_shape::Error>(())
//! ```
//!
//! [`index::Indices`] and [`index::for_each_index`] iterate in layout or logical order;
//! [`size`] has XLA's size functions (`ByteSizeOf`, `ArraySize`, byte strides) next to the crate's
//! full-model [`size::storage_bytes`].
//!
//! ## 5. Print and parse
//!
//! `Display` prints exactly what XLA prints; `FromStr` (and [`text::parse_shape`]) reads XLA's
//! grammar, fills in the default layout, validates, and builds the proto XLA would build.
//! [`text::describe`] spells out every field for people.
//!
//! ```
//! use xla_shape::{text, LayoutBuf, ShapeBuf};
//!
//! let s: ShapeBuf = "f32[2,3]{0,1}".parse()?;
//! assert_eq!(s.to_string(), "f32[2,3]{0,1}");
//! assert_eq!(text::parse_shape("f32[2,3]")?.to_string(), "f32[2,3]{1,0}"); // default layout filled in
//! assert_eq!(xla_shape::encode(s.proto()).len(), 19); // the bytes of the quick start
//!
//! let pjrt: LayoutBuf = "{1,0:T(8,128)(2,1)}".parse()?;
//! assert_eq!(pjrt.view().tiles().count(), 2);
//!
//! let d = text::describe(s.view()).to_string();
//! assert!(d.contains("dimension 0 (y): 2"));
//! assert!(d.contains("layout:          major to minor: 1 (x), 0 (y)"));
//! # Ok::<(), xla_shape::Error>(())
//! ```
//!
//! ## 6. Draw
//!
//! The document explains layouts with pictures; `draw::picture` (feature `draw`) makes them for
//! any array — the logical grid and the memory strip, coloured by tile, padding hatched — and
//! `xla-shape draw SHAPE -o FILE.svg` writes them. `f32[3,5]{1,0:T(2,2)}`:
//!
#![cfg_attr(feature = "draw", doc = include_str!("../docs/pictures/seed_tiled.svg"))]
//!
//! # Cargo features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `draw` | off | `draw`: SVG pictures of layouts with the `svg` crate (enabled by `cli`). |
//! | `cli` | off | the `xla-shape` command-line tool (`cli::run`, `cli::main` and `src/bin/`): `cargo install xla-shape --features cli`; enables `draw` and `rayon`. The library alone never compiles clap. |
//! | `serde` | off | `Serialize`/`Deserialize`: [`ShapeBuf`] and [`LayoutBuf`] as their XLA string (deserialized through the validated parser), [`PrimitiveType`] as its text name, and the raw [`proto`] types as structs. See the `serde` module docs. |
//! | `proptest` | off | `strategy`: proptest strategies that generate only valid shapes, layouts, tiles and in-bounds indices, for property tests of your own code. |
//!
//! # Differences from XLA
//!
//! Validation rejects everything XLA rejects and accepts everything XLA accepts, with thirteen
//! deliberate exceptions, DV-1 … DV-13, tabulated in [`validate`](validate#differences-from-xla).
//! In short: no silent data loss (extra fields on tuples and tokens, a buffer's own layout,
//! sparse descriptions and the int8 truncation of `memory_space` are errors or kept, never
//! dropped — DV-1, DV-2, DV-6, DV-9); the combine dimension `*` means the same in protos and
//! text (DV-4); the legacy 2017–2018 layout fields decode and mean what they meant (DV-7, DV-8);
//! nesting stops at [`MAX_DEPTH`] (DV-10); the validated text parser hands out only valid values
//! while the raw one keeps XLA's leniency (DV-11); XLA's crash paths are typed errors (DV-12);
//! negative indices are never in bounds (DV-13).
//!
//! Where real XLA (jaxlib 0.10.2, recorded in `tests/fixtures/`) contradicted the written
//! specification, the crate follows XLA:
//!
//! * **split configs are validated**: a split config whose physical dimension is out of bounds
//!   is rejected (the specification listed `split_configs` as unvalidated);
//! * **`#(type)` and `*(type)` accept any element type in raw parsing** (`#(s32)`, `#(f32)`), not
//!   only unsigned integers; `#()` sets nothing;
//! * **a bare `T`** (no parenthesized group) **is one empty tile**: `{1,0:T}` reads as
//!   `{1,0:T()}` (raw parsing; validation rejects the empty tile);
//! * **`**` ends the tiles**: `T(**)`, `T(* *)` and `T(8,**)` read as `T(*)` and `T(8,*)`, because
//!   XLA reads the second `*` as the pointer-type attribute (with no type, its parentheses being
//!   optional); so no tile, `L`, `#` or `*` may follow, and `T(**,128)` is an error.
//!
//! ```
//! use xla_shape::{proto::{LayoutProto, ShapeProto, SplitConfigProto}, text, Shape};
//!
//! let split = LayoutProto {
//!     minor_to_major: vec![1, 0],
//!     split_configs: vec![SplitConfigProto { dimension: 5, split_indices: vec![1] }],
//!     ..LayoutProto::default()
//! };
//! let proto = ShapeProto { element_type: 11, dimensions: vec![2, 3], layout: Some(Box::new(split)), ..ShapeProto::default() };
//! assert!(Shape::try_new(&proto).is_err());
//! assert_eq!(text::parse_layout_raw("{0:#(s32)}")?.index_primitive_type, 4);
//! assert_eq!(text::parse_layout_raw("{1,0:T}")?.to_string(), "{1,0:T()}");
//! assert!(text::parse_layout("{1,0:T}").is_err());
//! assert_eq!(text::parse_layout("{1,0:T(8,**)}")?.to_string(), "{1,0:T(8,*)}");
//! assert!(text::parse_layout_raw("{1,0:T(**,128)}").is_err());
//! # Ok::<(), xla_shape::Error>(())
//! ```
//!
//! Also beyond XLA: legacy padding is linearized (XLA's `IndexUtil` never implemented it), and
//! tiles wider than the shape extend its rank where XLA's nested linearizer CHECK-fails. The size
//! functions named after XLA's match XLA exactly; where XLA's model is incomplete (tail padding
//! on untiled layouts, sub-tiles that add padding) the crate's own [`size::storage_slots`] says
//! so.
//!
//! # Limits
//!
//! * [`MAX_DEPTH`] = 64 shape levels in validation, construction, parsing and every recursive
//!   algorithm, so everything accepted stays decodable under protobuf's limit of 100 nested
//!   messages, even inside an `HloModuleProto`.
//! * Decoding stops at [`codec::RECURSION_LIMIT`] = 100 nested messages (prost's limit), and a
//!   lenient decode reports at most [`codec::MAX_REPORTED`] findings.
//! * Counts, sizes, strides, offsets and bit positions are checked `i64`/`u64` arithmetic:
//!   overflow is [`Error::Overflow`], never wrap-around. The element count of a valid shape fits
//!   in `i64`.
//! * [`PhysicalMap`] handles expanded (tiled) ranks up to 32 without allocating per index;
//!   validation allocates nothing for valid shapes up to rank 64.
//! * Sparse layouts are not supported ([`Error::SparseUnsupported`]); unbounded dynamic (`?`)
//!   dimensions validate and print but cannot be linearized ([`Error::UnboundedDimension`]).
//! * Nothing panics on any input; every XLA crash path is an [`Error`].
//!
//! # Modules
//!
//! | module | what it owns |
//! |---|---|
//! | [`proto`] | the raw prost types of the vendored schema (current plus legacy fields) |
//! | [`codec`] | strict and lenient decoding, unknown-field and non-canonical reports, encoding, [`codec::to_xla_form`] |
//! | [`validate`] | XLA's check order, the two layout modes, the DV table |
//! | [`shape`], [`layout`] | validated views and owned validated values |
//! | [`primitive`] | [`PrimitiveType`]: text names, widths, categories |
//! | [`make`] | constructors in XLA's serialized form (`ShapeUtil::Make*`, `LayoutUtil::Make*`) |
//! | [`text`] | the printer, the parsers (validated and raw), [`text::describe`] |
//! | [`index`] | `IndexUtil`: multi-index ⇄ linear index, strides, bumping, iteration |
//! | [`physical`] | [`PhysicalMap`]: element ⇄ slot with padding, tiles, tail padding, sub-byte packing |
//! | [`tiling`] | nested tiling, `*`, rank extension, the expanded shape |
//! | [`size`] | XLA's size and stride functions and the crate's storage sizes |
//! | [`padding`] | legacy `padded_dimensions` and `padding_value` |
//! | [`bitcast`] | whether a transpose or reshape can be a bitcast |
//! | [`util`] | the `ShapeUtil` / `LayoutUtil` operations and XLA's equality functors |
//! | `draw` | SVG pictures of layouts: the logical array and the memory strip (feature `draw`) |
//! | [`hlo`] | the shapes inside serialized HLO modules, walked in place one shape at a time |
//! | `cli` | the `xla-shape` tool as a function over any streams (feature `cli`) |
//! | [`error`] | the one [`Error`] enum, field paths, structured problems |
//! | `strategy` | proptest strategies (feature `proptest`) |
//! | `serde` | serde support (feature `serde`) |
//!
//! The `examples/` directory has one runnable program per task: `decode_shape`, `encode_layout`,
//! `pjrt_layout`, `tiled_iteration`, `hlo_shapes` and `draw_layout` (`cargo run --example decode_shape`).
// `unsafe` is denied everywhere but `relayout/stream.rs` (non-temporal stores, measured ≥ 1.5×
// the safe kernel as issue 14 requires); `tests/it/architecture.rs` checks that no other file
// allows it.
#![deny(unsafe_code)]
// Untrusted input reaches the library: no panicking operation or unchecked arithmetic without a
// stated reason (tests are exempt). Every exception is item-level, with the invariant that makes
// it safe next to it; no module opts out as a whole.
#![cfg_attr(
    not(test),
    warn(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::arithmetic_side_effects
    )
)]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use prost;

pub mod bitcast;
#[cfg(feature = "cli")]
pub mod cli;
pub mod codec;
mod depth;
mod dim;
#[cfg(feature = "draw")]
pub mod draw;
pub mod error;
pub mod hlo;
pub mod layout;
pub mod limits;
pub mod literal;
pub mod make;
mod memory;
pub mod primitive;
pub mod proto;
pub mod relayout;
#[cfg(feature = "serde")]
pub mod serde;
pub mod shape;
pub mod sharding;
#[cfg(feature = "proptest")]
pub mod strategy;
pub mod text;
pub mod util;
pub mod validate;

pub use codec::{decode, decode_lenient, encode};
pub use error::{Error, Result};
pub use layout::{Layout, LayoutBuf, Tile};
pub use memory::physical::{PhysicalMap, Slot};
pub use memory::{index, padding, physical, size, tiling};
pub use primitive::PrimitiveType;
pub use shape::{ArrayShape, Dim, ProgramShape, Shape, ShapeBuf, ShapeKind, TupleShape};

/// The deepest nesting of shapes the crate accepts, builds or parses (a tuple element or a
/// buffer's array is one level below its parent; the root is level 1).
///
/// XLA's text parser allows 32768 levels and protobuf decoders stop at 100 nested messages; 64
/// keeps everything the crate accepts decodable by prost and C++ protobuf, even when embedded a
/// few levels deep in an `HloModuleProto`.
///
/// ```
/// use xla_shape::{make, Error, MAX_DEPTH};
/// let mut shape = make::make_token_shape();
/// for _ in 1..MAX_DEPTH {
///     shape = make::make_tuple_shape(&[shape])?;
/// }
/// assert!(matches!(make::make_tuple_shape(&[shape]), Err(Error::TooDeep { limit: 64, .. })));
/// # Ok::<(), Error>(())
/// ```
pub const MAX_DEPTH: usize = 64;

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// `docs/rust.md`'s examples (the README's former first screen), run as doctests.
#[doc = include_str!("../docs/rust.md")]
#[cfg(doctest)]
pub struct RustDocDoctests;
