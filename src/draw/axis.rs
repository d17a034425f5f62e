//! Which positions of one axis a picture shows: all of them when they fit the limit, else a head
//! and a tail around one elision, cut at tile boundaries so the tile structure stays visible.

/// One position along an axis of the picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// The position with this index.
    At(u64),
    /// Positions left out: this many.
    Elided(u64),
}

/// The positions of an axis of `extent` entries, at most `limit` of them shown (`limit ≥ 2`).
///
/// `period` is the tile size along the axis (1 when untiled): the head is a whole number of
/// tiles where one fits in two thirds of the limit, and the tail is the last (possibly partial)
/// tile when it fits in the rest, so both a full tile and the partial tile at the edge show.
///
/// ```
/// use xla_shape::draw::axis::{entries, Entry::{At, Elided}};
/// assert_eq!(entries(3, 1, 32), [At(0), At(1), At(2)]);
/// // 100 entries, tiles of 8, at most 32 shown: two tiles, then the last partial tile (4).
/// let e = entries(100, 8, 32);
/// assert_eq!(e[..2], [At(0), At(1)]);
/// assert_eq!(e[16..], [Elided(80), At(96), At(97), At(98), At(99)]);
/// ```
pub fn entries(extent: u64, period: u64, limit: u64) -> Vec<Entry> {
    let limit = limit.max(2);
    if extent <= limit {
        return (0..extent).map(Entry::At).collect();
    }
    let budget = limit.saturating_mul(2) / 3;
    let period = period.max(1);
    let head = if period <= budget { budget.checked_div(period).unwrap_or(0).saturating_mul(period) } else { budget }
        .clamp(1, limit.saturating_sub(1));
    let partial = match extent.checked_rem(period) {
        Some(0) | None => period,
        Some(rest) => rest,
    };
    let room = limit.saturating_sub(head).max(1);
    let tail = if period > 1 && partial <= room { partial } else { room };
    let start = extent.saturating_sub(tail);
    let mut out: Vec<Entry> = (0..head).map(Entry::At).collect();
    out.push(Entry::Elided(start.saturating_sub(head)));
    out.extend((start..extent).map(Entry::At));
    out
}

#[cfg(test)]
mod tests {
    use super::{Entry, entries};

    #[test]
    fn every_position_once_and_at_most_the_limit() {
        for extent in 0..300u64 {
            for period in [1u64, 2, 3, 8, 128] {
                for limit in [2u64, 3, 5, 32] {
                    let e = entries(extent, period, limit);
                    let shown: Vec<u64> =
                        e.iter().filter_map(|x| if let Entry::At(i) = x { Some(*i) } else { None }).collect();
                    let elided: u64 = e.iter().map(|x| if let Entry::Elided(n) = x { *n } else { 0 }).sum();
                    assert!(shown.windows(2).all(|w| w[0] < w[1]));
                    assert!(shown.len() as u64 <= limit.max(2));
                    assert_eq!(shown.len() as u64 + elided, extent, "{extent} {period} {limit}");
                    if extent > limit {
                        assert_eq!(shown.last(), Some(&(extent - 1)));
                        assert_eq!(shown.first(), Some(&0));
                    }
                }
            }
        }
    }
}
