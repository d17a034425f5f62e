//! The nesting guard of every recursion over shapes, in one place (modelled on prost's
//! `DecodeContext` recursion limit): a [`Depth`] is passed down, [`Depth::enter`] makes the
//! child's, and [`Depth::check`] is the only comparison with [`MAX_DEPTH`].

use crate::MAX_DEPTH;
use crate::error::{Error, FieldPath, Result};

/// The nesting level of a shape during a recursive walk: the root is level 1, a tuple element
/// or a buffer's array one level below its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Depth(usize);

impl Depth {
    /// The level of a root shape.
    pub(crate) const ROOT: Self = Self(1);

    /// A level counted as the text parser counts (its root is 1).
    pub(crate) const fn at(level: usize) -> Self {
        Self(level)
    }

    /// The level of a shape nested directly in this one.
    #[must_use]
    pub(crate) const fn enter(self) -> Self {
        Self(self.0.saturating_add(1))
    }

    /// Whether a shape at this level is beyond [`MAX_DEPTH`].
    pub(crate) const fn exceeded(self) -> bool {
        self.0 > MAX_DEPTH
    }

    /// [`Error::TooDeep`] at `path` (built only then) when this level is beyond [`MAX_DEPTH`].
    pub(crate) fn check(self, path: impl FnOnce() -> FieldPath) -> Result<()> {
        if self.exceeded() { Err(too_deep(path())) } else { Ok(()) }
    }
}

/// The error of a walk that went beyond [`MAX_DEPTH`].
#[cold]
pub(crate) fn too_deep(path: FieldPath) -> Error {
    Error::TooDeep { path, limit: MAX_DEPTH }
}
