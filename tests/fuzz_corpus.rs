//! Replays every committed fuzz input through the checks of its fuzz target, on stable Rust, so
//! CI guards every past finding without nightly or libFuzzer.
//!
//! `fuzz/corpus/<target>/` holds the seeds and the minimized corpus; `fuzz/regressions/<target>/`
//! holds one named file per crash the fuzzer found. The checks are the fuzz crate's own
//! (`fuzz/src/lib.rs`, included here), so a corpus file passes here exactly when the fuzz target
//! accepts it.

#[path = "../fuzz/src/lib.rs"]
mod checks;

use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

/// Runs `check` on every file of the target's corpus and regressions, and reports every file that
/// panicked (not only the first).
fn replay(target: &str, check: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = Vec::new();
    for kind in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(kind).join(target)) else { continue };
        for entry in entries {
            let path = entry.expect("readable directory entry").path();
            let data = std::fs::read(&path).expect("readable fuzz input");
            files.push((path, data));
        }
    }
    assert!(!files.is_empty(), "no fuzz inputs for target {target}");
    files.sort();
    // The failures are collected and listed below; the default hook would print each backtrace.
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let failures: Vec<String> = files
        .iter()
        .filter_map(|(file, data)| {
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| check(data)));
            outcome.err().map(|payload| {
                let message = payload
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| payload.downcast_ref::<&str>().copied())
                    .unwrap_or("(non-string panic)");
                format!("{}: {message}", file.display())
            })
        })
        .collect();
    panic::set_hook(hook);
    assert!(failures.is_empty(), "{} of {} inputs fail:\n{}", failures.len(), files.len(), failures.join("\n"));
}

#[test]
fn decode_corpus() {
    replay("decode", checks::decode);
}

#[test]
fn text_corpus() {
    replay("text", checks::text);
}

#[test]
fn index_corpus() {
    replay("index", checks::index);
}
