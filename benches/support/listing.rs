//! What the listing benches share (`hlo_text`, `stablehlo`): `xla-shape hlo FILE` in process,
//! and the peak anonymous memory of one listing.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// `RssAnon` of this process in KiB (0 where `/proc` has none).
fn rss_anon_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("RssAnon:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// `xla-shape hlo FILE`, the output to a sink.
pub fn listing(path: &Path) {
    let path = path.to_str().unwrap();
    let status = xla_shape::cli::run(["xla-shape", "hlo", path], &mut io::empty(), &mut io::sink(), &mut io::sink());
    assert_eq!(status, 0);
}

/// `RssAnon` before one listing of `path` and its peak during it (KiB), sampled every
/// millisecond by a second thread.
pub fn peak_of_one_listing(path: &Path) -> (u64, u64) {
    let before = rss_anon_kib();
    let peak = AtomicU64::new(before);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss_anon_kib(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        listing(path);
        done.store(true, Ordering::Relaxed);
    });
    (before, peak.load(Ordering::Relaxed))
}
