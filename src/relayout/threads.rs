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

#[cfg(all(test, feature = "rayon"))]
mod tests {
    use super::{on_calling_thread, parallel};

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

    #[test]
    fn the_flag_is_restored_after_a_panic() {
        let caught = std::panic::catch_unwind(|| on_calling_thread(|| panic!("inside")));
        assert!(caught.is_err());
        assert!(parallel());
    }

    #[test]
    fn the_flag_is_the_calling_threads_own() {
        on_calling_thread(|| {
            let other = std::thread::spawn(parallel).join().expect("thread");
            assert!(other, "another thread's kernels still use the pool");
        });
    }
}
