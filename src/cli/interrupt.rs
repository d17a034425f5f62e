//! SIGINT, SIGTERM and SIGHUP: the binary's handlers, installed by [`crate::cli::main`] only
//! (never by [`crate::cli::run`], which leaves the process's signals alone).
//!
//! A thread of `signal-hook`'s (`Signals`, no `unsafe` here) waits for the signals; when one
//! arrives it removes every temporary file of the run (`temp::remove_all`, which keeps the
//! registry locked so that no file is created or renamed after it) and ends the process by the
//! same signal with its default action, so the parent sees a process killed by SIGINT (the
//! shell's status 130), SIGTERM (143) or SIGHUP (129), and a shell loop or `make` stops as it
//! would for any program killed by Ctrl-C. Outputs already renamed into place stay; a file being
//! written is a temporary one, so nothing half-written is left under a final name.
//!
//! A signal that was ignored when the process started (`nohup` ignores SIGHUP, a
//! non-interactive shell's `&` SIGINT) stays ignored: it is read from `/proc/self/status`
//! (`SigIgn`) where there is one.

#[cfg(unix)]
mod imp {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;

    use crate::cli::temp;

    /// The signals ignored at start, as the bit mask of `/proc/self/status` (bit `n - 1` for
    /// signal `n`); none where it cannot be read.
    fn ignored_at_start() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("SigIgn:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .unwrap_or(0)
    }

    /// Whether `signal` is in `mask`.
    fn in_mask(mask: u64, signal: i32) -> bool {
        u32::try_from(signal)
            .ok()
            .and_then(|s| s.checked_sub(1))
            .and_then(|bit| mask.checked_shr(bit))
            .is_some_and(|m| m & 1 == 1)
    }

    pub fn install() {
        let ignored = ignored_at_start();
        let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP].into_iter().filter(|&s| !in_mask(ignored, s)).collect();
        // Without the handlers the signals keep their default action: the run is still
        // correct, it may only leave a temporary file when interrupted.
        let Ok(mut signals) = Signals::new(&wanted) else { return };
        let spawned = std::thread::Builder::new().name("xla-shape-signals".into()).spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let _held = temp::remove_all();
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                // Only if the signal did not end the process.
                std::process::exit(128_i32.saturating_add(signal));
            }
        });
        drop(spawned);
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn the_mask_has_one_bit_per_signal() {
            assert!(super::in_mask(1 << 1, 2));
            assert!(!super::in_mask(1 << 1, 1));
            assert!(!super::in_mask(u64::MAX, 0));
            assert!(super::in_mask(u64::MAX, 64));
            assert!(!super::in_mask(u64::MAX, 65));
        }
    }
}

/// Installs the handlers (once; later calls do nothing).
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    #[cfg(unix)]
    ONCE.call_once(imp::install);
    #[cfg(not(unix))]
    ONCE.call_once(|| {});
}
