//! What the listing benches share (`hlo_text`, `stablehlo`): `xla-shape hlo FILE` in process,
//! the library reader's pass over the same file without printing, and the peak anonymous memory
//! of one run of either.

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

/// The library's reader over `path` (`Module::open`, then every entry), nothing printed: the
/// number of entries.
pub fn entries(path: &Path) -> usize {
    let module = xla_shape::hlo::module::Module::open(path).unwrap();
    let mut reader = module.entries().unwrap();
    let mut count = 0usize;
    while let Some(entry) = reader.next_entry().unwrap() {
        count += usize::from(entry.shape.is_valid());
    }
    count
}

/// The measurement time of each bench function: `LISTING_BENCH_SECONDS`, else 20 s.
pub fn measurement_time() -> Duration {
    Duration::from_secs(std::env::var("LISTING_BENCH_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(20))
}

/// `RssAnon` before one listing of `path` and its peak during it (KiB), sampled every
/// millisecond by a second thread.
pub fn peak_of_one_listing(path: &Path) -> (u64, u64) {
    peak_of(|| listing(path))
}

/// `RssAnon` before `run` and its peak during it (KiB), sampled every millisecond by a second
/// thread.
pub fn peak_of(run: impl FnOnce()) -> (u64, u64) {
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
        run();
        done.store(true, Ordering::Relaxed);
    });
    (before, peak.load(Ordering::Relaxed))
}
