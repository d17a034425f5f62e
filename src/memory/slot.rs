//! [`Slot`]: an offset into an array's buffer, in elements.

use std::fmt;

/// A physical offset into an array's buffer, counted in slots (one element per slot; the bit
/// offset is `slot × bits_per_slot`). Kept apart from logical linear indices and sizes.
///
/// Every slot a [`PhysicalMap`](crate::PhysicalMap) hands out is below its [`storage_slots`](crate::PhysicalMap::storage_slots),
/// which is at most `i64::MAX`, so converting a slot to `i64` or to a buffer offset never
/// loses information on 64-bit targets.
///
/// ```
/// use xla_shape::physical::Slot;
/// assert_eq!(Slot(17).get(), 17);
/// assert_eq!(Slot(17).to_string(), "17");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(transparent)]
pub struct Slot(pub u64);

impl Slot {
    /// The offset in slots.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<Slot> for u64 {
    fn from(slot: Slot) -> u64 {
        slot.0
    }
}
