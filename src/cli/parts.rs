//! A destination produced in parts of bounded size, one computed while the one before is
//! written: the pipeline of `relayout` (`docs/relayout.md`, "The command line") and of
//! `shards --split` and `--assemble` (`docs/shard-buffers.md` §5), the computing and the
//! writing given as closures.

use std::ops::Range;
use std::sync::mpsc;

use crate::cli::fail::Failure;
use crate::relayout::LineBuffer;

/// What computes the bytes `range` of the destination into a buffer of `range.len()` bytes.
pub type Compute<'a> = dyn Fn(&mut [u8], Range<usize>) -> Result<(), Failure> + Sync + 'a;

/// What computes part `k` into a buffer of that part's length.
pub type ComputePart<'a> = dyn Fn(&mut [u8], usize) -> Result<(), Failure> + Sync + 'a;

/// What writes part `k`'s bytes.
pub type WritePart<'a> = dyn FnMut(&[u8], usize) -> Result<(), Failure> + 'a;

/// Produces the `total` bytes of a destination in parts of at most `part` bytes, in order (see
/// [`produce_parts`]).
pub fn produce(
    total: usize,
    part: usize,
    compute: &Compute<'_>,
    write: &mut dyn FnMut(&[u8]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    if total == 0 {
        return Ok(());
    }
    let part = part.min(total).max(1);
    let range = |k: usize| {
        let start = k.saturating_mul(part);
        start..total.min(start.saturating_add(part))
    };
    produce_parts(total.div_ceil(part), part, &|k| range(k).len(), &|buf, k| compute(buf, range(k)), &mut |bytes, _| {
        write(bytes)
    })
}

/// Produces `count` parts, part `k` of `len(k)` bytes (at most `max`), in two buffers: a second
/// thread computes the next part into one while this thread writes the other (`write` gets the
/// parts in order, with their numbers). Memory: two buffers of `max` bytes (one when there is
/// one part). The first failure on either side stops both.
pub fn produce_parts(
    count: usize,
    max: usize,
    len: &(dyn Fn(usize) -> usize + Sync),
    compute: &ComputePart<'_>,
    write: &mut WritePart<'_>,
) -> Result<(), Failure> {
    if count == 0 {
        return Ok(());
    }
    let (free, free_parts) = mpsc::channel::<LineBuffer>();
    // A second buffer only when there is a second part; both start on a cache line, where the
    // kernels store whole lines.
    for _ in 0..count.min(2) {
        let buf = LineBuffer::zeroed(max)
            .ok_or_else(|| Failure::invalid(format!("cannot allocate a part buffer of {max} bytes")))?;
        free.send(buf).map_err(|_| Failure::invalid("the part buffers were lost"))?;
    }
    let (done, done_parts) = mpsc::sync_channel::<Result<(LineBuffer, usize, usize), Failure>>(2);
    std::thread::scope(move |scope| {
        scope.spawn(move || {
            for k in 0..count {
                // The writer hung up: it failed, and has said so.
                let Ok(mut buf) = free_parts.recv() else { return };
                let n = len(k).min(max);
                let result = compute(buf.as_mut_slice().get_mut(..n).unwrap_or_default(), k);
                let failed = result.is_err();
                if done.send(result.map(|()| (buf, n, k))).is_err() || failed {
                    return;
                }
            }
        });
        // Ends when the computing thread is done (it hangs up); returning early hangs up on it.
        for computed in done_parts {
            let (buf, n, k) = computed?;
            write(buf.as_slice().get(..n).unwrap_or_default(), k)?;
            // The computing thread may be done with buffers already.
            let _ = free.send(buf);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn parts_arrive_in_order_and_a_failure_stops_the_run() {
        let mut seen = Vec::new();
        let fill = |buf: &mut [u8], range: std::ops::Range<usize>| {
            for (b, k) in buf.iter_mut().zip(range) {
                *b = u8::try_from(k % 251).unwrap();
            }
            Ok(())
        };
        super::produce(1000, 64, &fill, &mut |bytes| {
            seen.extend_from_slice(bytes);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, (0..1000).map(|k| u8::try_from(k % 251).unwrap()).collect::<Vec<_>>());
        let failing = |_: &mut [u8], range: std::ops::Range<usize>| {
            if range.start >= 128 { Err(super::Failure::invalid("stop")) } else { Ok(()) }
        };
        let mut parts = 0;
        let result = super::produce(1000, 64, &failing, &mut |_| {
            parts += 1;
            Ok(())
        });
        assert!(result.is_err());
        assert_eq!(parts, 2);
    }
}
