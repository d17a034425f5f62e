//! XLA shapes and layouts in pure Rust.
#![forbid(unsafe_code)]

pub use prost;

pub mod bitcast;
pub mod codec;
pub mod error;
pub mod hlo;
pub mod index;
pub mod layout;
pub mod limits;
pub mod make;
pub mod padding;
pub mod physical;
pub mod primitive;
pub mod proto;
pub mod shape;
pub mod size;
#[cfg(feature = "proptest")]
pub mod strategy;
pub mod text;
pub mod tiling;
pub mod util;
pub mod validate;

pub use codec::{decode, decode_lenient, encode};
pub use error::{Error, Result};
pub use layout::{Layout, LayoutBuf, Tile};
pub use physical::{PhysicalMap, Slot};
pub use primitive::PrimitiveType;
pub use shape::{ArrayShape, Dim, ProgramShape, Shape, ShapeBuf, ShapeKind, TupleShape};

/// The deepest nesting of shapes the crate accepts, builds or parses (a tuple element or a
/// buffer's array is one level below its parent; the root is level 1).
///
/// XLA's text parser allows 32768 levels and protobuf decoders stop at 100 nested messages; 64
/// keeps everything the crate accepts decodable by prost and C++ protobuf, even when embedded a
/// few levels deep in an `HloModuleProto`.
pub const MAX_DEPTH: usize = 64;
