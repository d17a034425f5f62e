//! [`LineBuffer`]: bytes that start on a cache line, the destination the kernels write fastest.
//!
//! `Vec<u8>`'s large allocations come from `mmap` through `malloc` and start 16 bytes past a
//! page; the transposes shift their micro-tiles to any destination's lines (`kernel.rs`), but a
//! buffer the crate allocates for itself (the command line's parts) need not make them.

use super::stream::LINE;

/// `len` zeroed bytes starting on a 64-byte boundary: a `Vec<u8>` of `len + 63` bytes, viewed
/// from its first line boundary (safe code: no custom allocation).
///
/// ```
/// use xla_shape::relayout::LineBuffer;
/// let mut buf = LineBuffer::zeroed(1000).unwrap();
/// assert_eq!(buf.len(), 1000);
/// assert_eq!(buf.as_mut_slice().as_ptr().align_offset(64), 0);
/// ```
#[derive(Debug, Clone)]
pub struct LineBuffer {
    bytes: Vec<u8>,
    skip: usize,
    len: usize,
}

impl LineBuffer {
    /// `len` zeroed bytes on a line boundary; `None` when the allocation fails (the size is
    /// never trusted: the caller's bound decides it).
    #[must_use]
    pub fn zeroed(len: usize) -> Option<Self> {
        let total = len.checked_add(LINE.wrapping_sub(1))?;
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(total).ok()?;
        bytes.resize(total, 0);
        // `align_offset` may decline (usize::MAX): then the bytes start where they do.
        let skip = bytes.as_ptr().align_offset(LINE).min(LINE.wrapping_sub(1));
        Some(Self { bytes, skip, len })
    }

    /// The number of bytes.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bytes.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    #[must_use]
    pub fn as_slice(&self) -> &[u8] {
        self.bytes.get(self.skip..self.skip.wrapping_add(self.len)).unwrap_or_default()
    }

    /// The bytes, to write.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self.bytes.get_mut(self.skip..self.skip.wrapping_add(self.len)).unwrap_or_default()
    }
}
