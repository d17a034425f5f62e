//! The limits that protect the process from hostile input, in one place.
//!
//! A limit here bounds the stack, memory or time an input can make the crate use. None of them
//! gets in the way of anything real XLA programs contain: a rank-5000 array of size-1
//! dimensions, a tuple of 10 000 elements and a layout with 2000 tiles are accepted, and the work
//! on them is linear in their size (`tests/adversarial.rs` checks each within 64 MB of heap).
//!
//! | limit | value | where | what happens beyond it |
//! |---|---|---|---|
//! | [`MAX_DEPTH`] | 64 shape levels | validation, constructors, the text parser, [`codec::to_xla_form`](crate::codec::to_xla_form), every recursive `util` algorithm | [`Error::TooDeep`](crate::Error::TooDeep) `{ path, limit: 64 }` |
//! | [`RECURSION_LIMIT`] | 100 nested messages | decoding bytes (prost's limit; the wire scanner stops at the same depth, groups included) | [`Error::Decode`](crate::Error::Decode) "recursion limit reached" |
//! | [`hlo::MAX_SHAPE_BYTES`](crate::hlo::MAX_SHAPE_BYTES) | 1 MiB per shape | reading serialized HLO | [`Error::LimitExceeded`](crate::Error::LimitExceeded) "shape size in an HLO module" |
//! | [`hlo::text::DEFAULT_MAX_STATEMENT_BYTES`](crate::hlo::text::DEFAULT_MAX_STATEMENT_BYTES) | 256 MiB per statement (configurable) | reading HLO text | [`Error::HloText`](crate::Error::HloText) "statement longer than the limit" |
//! | [`hlo::text::MAX_CACHED_SHAPES`](crate::hlo::text::MAX_CACHED_SHAPES) | 512 shape texts of at most [`hlo::text::MAX_CACHED_SHAPE_TEXT`](crate::hlo::text::MAX_CACHED_SHAPE_TEXT) = 128 bytes | the HLO text reader's parsed shapes (and, alike, `xla-shape hlo`'s printed and validated ones) | the cache starts over; a longer text is parsed each time |
//! | [`MAX_REPORTED`] | 1024 findings per list | the report of [`codec::decode_lenient`](crate::codec::decode_lenient) | nothing is lost: later findings are counted in `omitted_unknown_fields` / `omitted_non_canonical` |
//! | printing depth | 128 shape levels | printing a raw proto (which can nest deeper than [`MAX_DEPTH`] in memory) | the printer writes `...` for the deeper levels |
//! | [`MAX_SHARDING_DEVICES`] | 2²⁰ devices | a sharding's tile assignment (text, `OpSharding`) | [`Error::Sharding`](crate::Error::Sharding) (`ShardingProblem::TooManyDevices`) |
//! | quoted input | 120 bytes, or 48 on each side of the error | [`Error::Parse`](crate::Error::Parse) `input` | the quote is cut around the error position |
//! | quoted token | 48 bytes | [`Error::Parse`](crate::Error::Parse) `found` | the token is cut and ends in `…` |
//!
//! Claimed lengths are never trusted: a length prefix of 2 GiB on a 6-byte input is a decode
//! error before anything is allocated, and validation allocates nothing sized by a value from the
//! input (a standalone layout's `minor_to_major` entry of `i64::MAX` is checked without a table of
//! that size). All arithmetic on counts, sizes, strides and offsets is checked
//! ([`Error::Overflow`](crate::Error::Overflow)).
//!
//! # Input size
//!
//! Decoding and parsing take memory linear in the input, with a constant that the input chooses.
//! The worst cases measured (release build):
//!
//! | input | heap | time |
//! |---|---|---|
//! | 1 MiB of empty tuple elements on the wire (`22 00` repeated) | 49 MB | 0.26 s |
//! | 10 MiB of the same | 463 MB | 1.7 s |
//! | 1 MiB of text `(f32[],f32[],…)` | 60 MB | 0.09 s |
//! | 10 MiB of text `f32[1,1,…]` (rank 5 000 000, valid) | 194 MB | 0.5 s |
//!
//! The library does not cap input length: the caller already holds the bytes or the string, and
//! knows where they come from. Callers that take input from untrusted sources should cap it
//! before calling in, and report [`Error::LimitExceeded`](crate::Error::LimitExceeded) with the
//! length and the cap. For shape, layout and program-shape bytes, 1 MiB is far above any real
//! value (a 10 000-element tuple of arrays is about 100 KB, as text or bytes) and keeps the worst
//! case under 80 MB (`tests/adversarial.rs` runs it under that heap cap); serialized HLO needs a
//! larger cap and so more memory.
//!
//! The `xla-shape` tool caps its input so: 1 MiB of shape, layout or program-shape bytes
//! (`cli::MAX_INPUT_BYTES`) and 2 MiB of hex text. Each `--lines` line has the cap of its kind,
//! and lines are read one at a time, so the worst case of a run is that of one line:
//!
//! | `--lines` of | commands | cap per line | worst case |
//! |---|---|---|---|
//! | hex | `decode`, `validate` | 2 MiB (1 MiB of bytes) | 1 MiB of empty tuple elements: under 80 MB of heap (`tests/adversarial.rs`) |
//! | XLA strings | `encode`, `info`, `map` | 2 MiB | `(f32[],f32[],…)`: 124 MB of resident memory, release build |
//! | indices, slots | `offset`, `index` | 1 MiB | one index of rank ≈ 500 000, refused by the shape's rank: linear, a few MB |
//! | file paths | `hlo` | 4 KiB (`PATH_MAX`) | each module as `hlo FILE`: its size plus a constant |
//!
//! Serialized HLO has no cap: [`hlo::walk`](crate::hlo::walk) reads it in place and holds one
//! shape of at most [`hlo::MAX_SHAPE_BYTES`](crate::hlo::MAX_SHAPE_BYTES) at a time, so
//! `xla-shape hlo` needs the input's size plus a constant (`docs/hlo.md`: 3 MB over the input for
//! a 250 MiB module of constants and for 16 MiB of empty instructions).
pub use crate::MAX_DEPTH;
pub use crate::codec::{MAX_REPORTED, RECURSION_LIMIT};
pub use crate::sharding::MAX_SHARDING_DEVICES;
