//! Byte runs (`docs/shard-buffers.md` §5): in a dense layout (no tiles, no legacy or tail
//! padding, whole-byte elements), a box of the array is a sequence of contiguous runs of its
//! buffer, all of one length, in the layout's order. A leaf: `buffers` keeps the global layout's
//! [`Dense`] form, `stream` hands out each exact shard's [`ByteRuns`], and the command line's
//! column blocks (`cli/blocks.rs`) are written as the runs of their boxes.

use crate::Result;
use crate::shape::ArrayShape;

/// A dense global layout: each logical dimension's byte stride, the dimensions from minor to
/// major, their bounds and the element's width in bytes.
#[derive(Debug, Clone)]
pub(crate) struct Dense {
    strides: Vec<u64>,
    order: Vec<usize>,
    bounds: Vec<u64>,
    width: u64,
}

impl Dense {
    /// The dense form of `global` (`bounds`: its dimensions' bounds), or `None` when its layout
    /// has tiles, legacy padding, sub-byte or otherwise sized elements or tail padding: its byte
    /// size must be exactly elements × the type's byte width.
    pub(crate) fn of(global: ArrayShape<'_>, bounds: &[u64]) -> Result<Option<Self>> {
        if let Some(layout) = global.layout() {
            if layout.tiles().len() != 0 || layout.padded_dimensions().is_some() {
                return Ok(None);
            }
        }
        let Some(width) = global.element_type().byte_width().map(u64::from).filter(|&w| w > 0) else {
            return Ok(None);
        };
        // An element size other than the type's (`s32` in 24 bits) is no byte copy, even where
        // tail padding makes the byte size come out equal (`s32[3]{0:L(2)E(24)}`: 12 bytes).
        if crate::memory::extent::element_size_in_bits(global) != width.saturating_mul(8) {
            return Ok(None);
        }
        let Some(strides) = crate::memory::size::byte_strides(global)? else { return Ok(None) };
        let storage = crate::memory::size::storage_bytes(global)?;
        let elements = bounds.iter().try_fold(1u64, |acc, &b| acc.checked_mul(b));
        if elements.and_then(|e| e.checked_mul(width)) != Some(storage) {
            return Ok(None);
        }
        let Ok(strides) = strides.into_iter().map(u64::try_from).collect::<std::result::Result<Vec<u64>, _>>() else {
            return Ok(None);
        };
        let order = global.minor_to_major().iter().map(crate::Dim::index).collect();
        Ok(Some(Self { strides, order, bounds: bounds.to_vec(), width }))
    }
}

/// One contiguous piece of a shard: `len` bytes at byte `global` of the global buffer and at
/// byte `shard` of the shard buffer.
///
/// ```
/// use xla_shape::sharding::stream::ByteRun;
/// let run = ByteRun { global: 64, shard: 0, len: 32 };
/// assert_eq!(run.global + run.len, 96);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ByteRun {
    /// Where the run starts in the global buffer.
    pub global: u64,
    /// Where it starts in the shard buffer.
    pub shard: u64,
    /// Its length in bytes (the same for every run of a shard).
    pub len: u64,
}

/// The byte runs of one device's shard
/// ([`ShardBuffers::byte_runs`](super::buffers::ShardBuffers::byte_runs)), in the shard's order
/// (the `shard` offsets are `0, len, 2·len, …`), which is also ascending in the global buffer.
///
/// ```
/// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, stream::ByteRun, DeviceId, HloSharding};
/// use xla_shape::ShapeBuf;
/// let global: ShapeBuf = "u8[4,6]{1,0}".parse()?;
/// let array = global.as_array().expect("array");
/// let sharding: HloSharding = "{devices=[1,2]<=[2]}".parse()?; // column halves
/// let plan = ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)?;
/// let runs: Vec<ByteRun> = plan.byte_runs(DeviceId(1)).expect("dense").collect();
/// assert_eq!(runs[..2], [ByteRun { global: 3, shard: 0, len: 3 }, ByteRun { global: 9, shard: 3, len: 3 }]);
/// assert_eq!(runs.len(), 4);
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ByteRuns {
    /// Each run's length.
    len: u64,
    /// Where the box's first run starts in the global buffer.
    base: u64,
    /// The dimensions outside a run, minor first: (extent, global byte stride).
    outer: Vec<(u64, u64)>,
    /// The position in `outer`.
    index: Vec<u64>,
    /// The next run's shard offset.
    shard: u64,
    /// Runs left.
    left: u64,
}

impl ByteRuns {
    /// The runs of the box `start + [0, extent)` of a dense layout.
    pub(crate) fn new(dense: &Dense, start: &[u64], extent: &[u64]) -> Option<Self> {
        let mut len = dense.width;
        let mut k = 0;
        // The run covers the minor dimensions while each is whole, and the first one that is not.
        while let Some(&d) = dense.order.get(k) {
            len = len.checked_mul(*extent.get(d)?)?;
            k = k.checked_add(1)?;
            if extent.get(d) != dense.bounds.get(d) {
                break;
            }
        }
        let outer: Vec<(u64, u64)> = dense
            .order
            .get(k..)?
            .iter()
            .map(|&d| Some((*extent.get(d)?, *dense.strides.get(d)?)))
            .collect::<Option<_>>()?;
        let base = start
            .iter()
            .zip(&dense.strides)
            .try_fold(0u64, |acc, (&s, &stride)| acc.checked_add(s.checked_mul(stride)?))?;
        let count = outer.iter().try_fold(1u64, |acc, &(e, _)| acc.checked_mul(e))?;
        let left = if len == 0 { 0 } else { count };
        Some(Self { len, base, index: vec![0; outer.len()], outer, shard: 0, left })
    }

    /// Each run's length in bytes.
    ///
    /// ```
    /// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, DeviceId, HloSharding};
    /// use xla_shape::ShapeBuf;
    /// let global: ShapeBuf = "f32[8,4]{1,0}".parse()?;
    /// let array = global.as_array().expect("array");
    /// let sharding: HloSharding = "{devices=[4,1]<=[4]}".parse()?; // two whole rows each
    /// let plan = ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)?;
    /// let runs = plan.byte_runs(DeviceId(2)).expect("dense");
    /// assert_eq!((runs.run_len(), runs.count()), (32, 1));
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn run_len(&self) -> u64 {
        self.len
    }
}

impl Iterator for ByteRuns {
    type Item = ByteRun;

    fn next(&mut self) -> Option<ByteRun> {
        if self.left == 0 {
            return None;
        }
        let global = self
            .index
            .iter()
            .zip(&self.outer)
            .try_fold(self.base, |acc, (&i, &(_, stride))| acc.checked_add(i.checked_mul(stride)?))?;
        let run = ByteRun { global, shard: self.shard, len: self.len };
        self.left = self.left.saturating_sub(1);
        self.shard = self.shard.saturating_add(self.len);
        for (i, &(extent, _)) in self.index.iter_mut().zip(&self.outer) {
            *i = i.saturating_add(1);
            if *i < extent {
                break;
            }
            *i = 0;
        }
        Some(run)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.left).ok();
        (left.unwrap_or(usize::MAX), left)
    }
}
