//! The generated `downstream` package, whose XLA fields are `xla_shape::proto` types.

/// Messages of `proto/downstream/model.proto`.
#[allow(missing_docs, clippy::pedantic)]
pub mod model {
    include!(concat!(env!("OUT_DIR"), "/downstream.rs"));
}

pub use model::{Signature, TensorSpec};
