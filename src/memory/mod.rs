//! The memory model: where the elements of a validated array live in its buffer.
//!
//! One file per concept, arrows pointing one way (a file imports only those above it):
//!
//! ```text
//!   extent   divisor   slot        leaves: extents, checked conversions, the bounds check,
//!     ▲         ▲        ▲                 element width; fast division; the slot type
//!   tiling   padding   index       nested tiles and the expanded shape; legacy padding and
//!     ▲         ▲                  its fill values; XLA's untiled IndexUtil
//!   physical/ (compile → forward, inverse, general)   the physical map, both directions
//!     ▲
//!   size                           XLA's size and stride functions, the crate's storage sizes
//! ```
//!
//! Every entry point takes a validated [`ArrayShape`](crate::ArrayShape) and never validates
//! again; the arithmetic on counts, sizes, strides and offsets is still checked
//! ([`Error::Overflow`](crate::Error::Overflow)). The public modules are re-exported at the
//! crate root under their old names (`xla_shape::physical`, `::size`, `::padding`, `::tiling`,
//! `::index`). The rules are written out in `docs/linearization.md`.

pub(crate) mod divisor;
pub(crate) mod extent;
pub mod index;
pub mod padding;
pub mod physical;
pub mod size;
mod slot;
pub mod tiling;
