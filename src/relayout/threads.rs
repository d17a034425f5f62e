//! Where the kernels run: split over rayon's pool (feature `rayon`), or on the calling thread
//! alone ([`on_calling_thread`]).

use std::cell::Cell;

thread_local! {
    /// Set while [`on_calling_thread`] runs its work on this thread.
    static ON_CALLING_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work` with every kernel of the crate it calls — [`RelayoutPlan::run`](super::RelayoutPlan::run),
/// the shard buffers' [`split`](crate::sharding::buffers::ShardBuffers::split) and
/// [`assemble`](crate::sharding::buffers::ShardBuffers::assemble) — on the calling thread: nothing
/// goes to rayon's pool (feature `rayon`), whichever pool the caller is in. Callers on threads of
/// their own then run side by side and never wait for a pool's worker. Without the feature the
/// kernels always run on the calling thread and this only calls `work`.
///
/// ```
/// use xla_shape::{relayout::{on_calling_thread, RelayoutPlan}, ShapeBuf};
/// let src: ShapeBuf = "u8[2048,1024]{0,1}".parse()?;
/// let dst: ShapeBuf = "u8[2048,1024]{1,0}".parse()?;
/// let plan = RelayoutPlan::new(src.as_array().expect("array"), dst.as_array().expect("array"))?;
/// let (input, mut output) = (vec![7u8; plan.src_len()], vec![0u8; plan.dst_len()]);
/// on_calling_thread(|| plan.run(&input, &mut output))?;
/// assert!(output.iter().all(|&b| b == 7));
/// # Ok::<(), xla_shape::Error>(())
/// ```
pub fn on_calling_thread<R>(work: impl FnOnce() -> R) -> R {
    /// Puts the flag back as it was, on return or unwind.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ON_CALLING_THREAD.with(|flag| flag.set(self.0));
        }
    }
    let _restore = Restore(ON_CALLING_THREAD.with(|flag| flag.replace(true)));
    work()
}

/// Whether the kernels may split their work over rayon's pool: not inside
/// [`on_calling_thread`].
#[cfg(feature = "rayon")]
pub(crate) fn parallel() -> bool {
    !ON_CALLING_THREAD.with(Cell::get)
}

#[cfg(test)]
mod tests {
    // `parallel` exists with feature `rayon` only.
    #[cfg(feature = "rayon")]
    use super::{on_calling_thread, parallel};

    #[cfg(feature = "rayon")]
    #[test]
    fn the_flag_holds_inside_and_is_restored_after() {
        assert!(parallel());
        on_calling_thread(|| {
            assert!(!parallel());
            on_calling_thread(|| assert!(!parallel()));
            assert!(!parallel());
        });
        assert!(parallel());
    }

    #[cfg(feature = "rayon")]
    #[test]
    fn the_flag_is_restored_after_a_panic() {
        let caught = std::panic::catch_unwind(|| on_calling_thread(|| panic!("inside")));
        assert!(caught.is_err());
        assert!(parallel());
    }

    /// The kernels' results on the calling thread equal the pool's and an independent
    /// reference: a 4 MiB transpose (large enough to split over the pool) and the shard buffers
    /// of a 2 MiB array (split boxes in parallel), both ways.
    #[cfg(feature = "rayon")]
    #[test]
    fn results_on_the_calling_thread_equal_the_pools() {
        use crate::ShapeBuf;
        use crate::relayout::RelayoutPlan;
        use crate::sharding::HloSharding;
        use crate::sharding::buffers::{ShardBuffers, ShardForm};

        let (rows, cols) = (1024usize, 1024usize);
        let src: ShapeBuf = "f32[1024,1024]{1,0}".parse().expect("shape");
        let dst: ShapeBuf = "f32[1024,1024]{0,1}".parse().expect("shape");
        let plan = RelayoutPlan::new(src.as_array().expect("array"), dst.as_array().expect("array")).expect("plan");
        let input: Vec<u8> = (0..rows * cols).flat_map(|k| u32::try_from(k).expect("small").to_le_bytes()).collect();
        let reference: Vec<u8> = (0..cols)
            .flat_map(|c| (0..rows).map(move |r| r * cols + c))
            .flat_map(|k| u32::try_from(k).expect("small").to_le_bytes())
            .collect();
        let (mut pooled, mut alone) = (vec![0u8; plan.dst_len()], vec![0u8; plan.dst_len()]);
        plan.run(&input, &mut pooled).expect("run");
        on_calling_thread(|| plan.run(&input, &mut alone)).expect("run");
        assert!(pooled == reference && alone == reference);

        let global: ShapeBuf = "u8[2048,1024]{1,0}".parse().expect("shape");
        let array = global.as_array().expect("array");
        let sharding: HloSharding = "{devices=[4,2]<=[8]}".parse().expect("sharding");
        let placement = sharding.placement(&array, None).expect("placement");
        let buffers = ShardBuffers::from_placement(array, &placement, &ShardForm::Exact).expect("buffers");
        let data: Vec<u8> = (0..2048 * 1024).map(|k: usize| u8::try_from(k % 251).expect("small")).collect();
        let pooled = buffers.split(&data).expect("split");
        let alone = on_calling_thread(|| buffers.split(&data)).expect("split");
        assert_eq!(pooled, alone);
        for (device, shard) in &alone {
            // Device d holds rows 512 * (d / 2) .. and columns 512 * (d % 2) ..
            let (r0, c0) = (
                512 * usize::try_from(device.0 / 2).expect("small"),
                512 * usize::try_from(device.0 % 2).expect("small"),
            );
            let expected: Vec<u8> =
                (0..512).flat_map(|r| data[(r0 + r) * 1024 + c0..(r0 + r) * 1024 + c0 + 512].to_vec()).collect();
            assert_eq!(shard, &expected, "device {}", device.0);
        }
        let mut views: Vec<(crate::sharding::DeviceId, &mut [u8])> = Vec::new();
        let mut owned: Vec<(crate::sharding::DeviceId, Vec<u8>)> =
            alone.iter().map(|(d, b)| (*d, vec![0u8; b.len()])).collect();
        views.extend(owned.iter_mut().map(|(d, b)| (*d, b.as_mut_slice())));
        on_calling_thread(|| buffers.split_into(&data, &mut views)).expect("split_into");
        assert_eq!(owned, alone);
        let assembled =
            on_calling_thread(|| buffers.assemble(alone.iter().map(|(d, b)| (*d, b.as_slice())))).expect("assemble");
        assert_eq!(assembled, data);
    }

    #[cfg(feature = "rayon")]
    #[test]
    fn the_flag_is_the_calling_threads_own() {
        on_calling_thread(|| {
            let other = std::thread::spawn(parallel).join().expect("thread");
            assert!(other, "another thread's kernels still use the pool");
        });
    }
}
