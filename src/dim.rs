//! [`Dim`], a logical dimension number, and the default dimension order of a shape without a
//! layout. The lowest module of the views: it imports nothing from the crate.

use std::fmt;

/// A logical dimension number (0 = the first entry of `dimensions`), kept apart from sizes and
/// offsets.
///
/// ```
/// use xla_shape::Dim;
/// assert_eq!(Dim(2).index(), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Dim(pub usize);

impl Dim {
    /// The dimension number as a `usize`, for indexing.
    pub const fn index(self) -> usize {
        self.0
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The default layout order, minor to major, of a shape without a layout: descending,
/// `{n-1,…,0}` (row-major, dimension 0 most major; XLA's `LayoutUtil::GetDefaultLayoutForRank`).
/// Every default layout the crate fills in or reads comes from here.
pub(crate) fn descending(rank: usize) -> impl DoubleEndedIterator<Item = Dim> + ExactSizeIterator {
    (0..rank).rev().map(Dim)
}

/// [`descending`] as a proto's `minor_to_major` list.
pub(crate) fn descending_minor_to_major(rank: usize) -> Vec<i64> {
    descending(rank).map(|d| i64::try_from(d.0).unwrap_or(i64::MAX)).collect()
}
