//! The exception hierarchy: `xla_shape.Error` (a `ValueError`) with `ParseError`,
//! `ValidationError` and `DecodeError` under it. Each exception carries the crate's message (the
//! field path and XLA's phrase) and, as `kind`, the name of the `xla_shape::Error` variant.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::{PyErr, create_exception};
use xla_shape::Error as CrateError;

create_exception!(
    _xla_shape,
    Error,
    PyValueError,
    "Every error of xla_shape: bad text, bytes, shapes, shardings or buffers. `kind` names the crate's error variant."
);
create_exception!(_xla_shape, ParseError, Error, "Text that XLA's parsers refuse (shapes, layouts, shardings, HLO).");
create_exception!(_xla_shape, ValidationError, Error, "A shape, layout or sharding that XLA would not accept.");
create_exception!(_xla_shape, DecodeError, Error, "Bytes that are not the serialized message, or not losslessly so.");

/// Which exception class an error raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// `ParseError`.
    Parse,
    /// `ValidationError`.
    Validation,
    /// `DecodeError`.
    Decode,
    /// `Error` itself.
    Other,
}

fn class(error: &CrateError) -> Class {
    match error {
        CrateError::Decode(_) | CrateError::UnknownField { .. } | CrateError::NonCanonical { .. } => Class::Decode,
        CrateError::Parse(_) | CrateError::HloText(_) => Class::Parse,
        CrateError::TooDeep { .. }
        | CrateError::InvalidElementType { .. }
        | CrateError::MalformedStructure { .. }
        | CrateError::InvalidDimension { .. }
        | CrateError::Overflow { .. }
        | CrateError::MissingLayout { .. }
        | CrateError::InvalidLayout { .. }
        | CrateError::SparseUnsupported { .. }
        | CrateError::Sharding(_) => Class::Validation,
        _ => Class::Other,
    }
}

/// The variant's name (`InvalidLayout`, `Relayout`, …), from its `Debug` form.
fn kind(error: &CrateError) -> String {
    let debug = format!("{error:?}");
    debug.chars().take_while(char::is_ascii_alphanumeric).collect()
}

/// An exception of `class` with `message` and the `kind` attribute.
pub fn raise(class: Class, kind: &str, message: String) -> PyErr {
    let err = match class {
        Class::Parse => ParseError::new_err(message),
        Class::Validation => ValidationError::new_err(message),
        Class::Decode => DecodeError::new_err(message),
        Class::Other => Error::new_err(message),
    };
    Python::attach(|py| {
        // Setting an attribute on a fresh exception instance cannot fail in practice; if it
        // did, the exception still carries its message and class.
        let _ = err.value(py).setattr("kind", kind);
    });
    err
}

/// The Python exception for an error of the crate.
pub fn to_py(error: CrateError) -> PyErr {
    raise(class(&error), &kind(&error), error.to_string())
}

/// [`to_py`], its message prefixed with where the error is (`main/constant.3: …`).
pub fn to_py_at(site: &str, error: CrateError) -> PyErr {
    raise(class(&error), &kind(&error), format!("{site}: {error}"))
}

/// An `xla_shape.Error` of the binding itself (`kind` names the problem).
pub fn binding_error(kind: &str, message: impl Into<String>) -> PyErr {
    raise(Class::Other, kind, message.into())
}

/// `?` on the crate's results inside `#[pyfunction]`s.
pub trait IntoPyResult<T> {
    /// The result with the crate's error as a Python exception.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for xla_shape::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("ValidationError", py.get_type::<ValidationError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    Ok(())
}
