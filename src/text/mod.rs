//! XLA shape strings: printing exactly as XLA HEAD prints, and parsing what its parser reads.
//!
//! Printing works on raw protos too (XLA prints invalid shapes in its errors); the `Display`
//! impls of the views and of the raw proto types all go through here.
//!
//! ```
//! use xla_shape::{make, PrimitiveType};
//! let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[0, 1]).unwrap();
//! assert_eq!(s.to_string(), "f32[2,3]{0,1}");
//! assert_eq!(s.view().to_string_without_layout(), "f32[2,3]");
//! ```

mod print;

pub use print::{layout_to_string, shape_to_string};
pub(crate) use print::{write_layout, write_program_shape, write_shape, write_tile};
