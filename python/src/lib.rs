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
// Free-threaded CPython (3.14t) may run it without the GIL (pyo3's default since 0.28, stated
// here). Checked: every class is `frozen` (immutable after construction); the one static is a
// `Mutex` (`data::IDLE_POOLS`), the one thread-local is the library's calling-thread flag; arrays
// are borrowed through rust-numpy 0.30 (free-threading aware), as they already are while the
// kernels run with the GIL released. The abi3 wheels do not load there (no limited API); a build
// from the sdist does.
#[pymodule(gil_used = false)]
fn _xla_shape(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<shape::Shape>()?;
    m.add_class::<shape::Layout>()?;
    m.add_class::<shape::ProgramShape>()?;
    m.add_class::<sharding::HloSharding>()?;
    m.add_class::<data::RelayoutPlan>()?;
    m.add_class::<data::ShardBuffers>()?;
    m.add_class::<hlo::HloModule>()?;
    m.add_class::<hlo::HloEntries>()?;
    m.add_class::<reshard::ReshardPlan>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
