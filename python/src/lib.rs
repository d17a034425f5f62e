//! The compiled module of the `xla_shape` Python package (`xla_shape._xla_shape`): thin pyo3
//! classes over the library's validated values and kernels. The pure-Python layer
//! (`python/xla_shape/`) adds the dtypes (ml_dtypes), the buffer views and the numpy-style
//! functions.

// The doc comments of the classes and functions are their Python docstrings (pyo3 exports
// them, and pytest runs their `>>>` examples): they follow Python's conventions, which
// rustdoc's and clippy's Markdown lints misread (`[s["shape"] for s in …]` is no link).
#![allow(clippy::doc_markdown, clippy::doc_link_with_quotes, rustdoc::broken_intra_doc_links)]

mod data;
mod errors;
mod hlo;
mod reshard;
mod shape;
mod sharding;

use pyo3::prelude::*;

/// The compiled core of `xla_shape`.
#[pymodule]
fn _xla_shape(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<shape::Shape>()?;
    m.add_class::<shape::Layout>()?;
    m.add_class::<shape::ProgramShape>()?;
    m.add_class::<sharding::HloSharding>()?;
    m.add_class::<data::RelayoutPlan>()?;
    m.add_class::<data::ShardBuffers>()?;
    m.add_class::<hlo::HloModule>()?;
    m.add_class::<reshard::ReshardPlan>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
