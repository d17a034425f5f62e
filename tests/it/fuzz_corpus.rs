//! Replays every committed fuzz input through the checks of its fuzz target, on stable Rust, so
//! CI guards every past finding without nightly or libFuzzer.
//!
//! `fuzz/corpus/<target>/` holds the seeds and the minimized corpus; `fuzz/regressions/<target>/`
//! holds one named file per crash the fuzzer found. The checks are the fuzz crate's own
//! (`fuzz/src/lib.rs`, included here), so a corpus file passes here exactly when the fuzz target
//! accepts it.

#[path = "../../fuzz/src/lib.rs"]
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
fn hlo_text_corpus() {
    replay("hlo_text", checks::hlo_text);
}

#[test]
fn stablehlo_corpus() {
    replay("stablehlo", checks::stablehlo);
}

#[test]
fn literal_corpus() {
    replay("literal", checks::literal);
}

#[test]
fn index_corpus() {
    replay("index", checks::index);
}

#[test]
fn relayout_corpus() {
    replay("relayout", checks::relayout);
}

#[test]
fn sharding_corpus() {
    replay("sharding", checks::sharding);
}

#[test]
fn named_sharding_corpus() {
    replay("named_sharding", checks::named_sharding);
}

#[cfg(feature = "cli")]
#[test]
fn cli_corpus() {
    replay("cli", checks::cli);
}

/// The command-line tool's input paths over the same corpus: every `decode` input as hex through
/// `decode` and `validate`, every `text` input through `encode` and `info`, each in `--lines`
/// mode (one process per command). The tool answers each line and never panics.
#[cfg(feature = "cli")]
#[test]
fn cli_process_corpus() {
    use std::fmt::Write as _;
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    fn run(args: &[&str], lines: &[String]) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_xla-shape"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the xla-shape binary runs");
        let mut stdin = child.stdin.take().expect("piped stdin");
        let input: String = lines.iter().flat_map(|line| [line.as_str(), "\n"]).collect();
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let out = child.wait_with_output().expect("the xla-shape binary finishes");
        writer.join().expect("the writer thread").expect("stdin accepts every line");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
        assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: {:?} {stderr}", out.status);
        let answers = String::from_utf8_lossy(&out.stdout).lines().count();
        assert_eq!(answers, lines.len(), "{args:?}: one answer per line");
    }

    let corpus = |target: &str| -> Vec<Vec<u8>> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
        ["corpus", "regressions"]
            .iter()
            .filter_map(|kind| std::fs::read_dir(root.join(kind).join(target)).ok())
            .flatten()
            .map(|entry| std::fs::read(entry.expect("readable directory entry").path()).expect("readable fuzz input"))
            .collect()
    };
    let decode = corpus("decode");
    for (selector, message) in [(0, "shape"), (1, "layout"), (2, "program-shape")] {
        let lines: Vec<String> = decode
            .iter()
            .filter_map(|data| data.split_first())
            .filter(|(first, _)| *first % 4 == selector)
            .map(|(_, bytes)| {
                bytes.iter().fold(String::new(), |mut hex, b| {
                    let _ = write!(hex, "{b:02x}");
                    hex
                })
            })
            .collect();
        for command in ["decode", "validate"] {
            run(&[command, "--lines", "--hex", "--type", message], &lines);
        }
    }
    let text: Vec<String> = corpus("text")
        .iter()
        .filter_map(|data| std::str::from_utf8(data).ok())
        .filter(|s| !s.contains(['\n', '\r']))
        .map(str::to_owned)
        .collect();
    run(&["encode", "--lines"], &text);
    run(&["encode", "--lines", "--raw", "--type", "layout"], &text);
    run(&["info", "--lines"], &text);
    run(&["info", "--lines", "--json"], &text);
}
