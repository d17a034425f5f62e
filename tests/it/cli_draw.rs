//! `xla-shape draw`, run as a process: SVG on stdout or in a file (the committed seed picture
//! byte for byte), the JSON summary, the shape from `--hex`/`--file`, options, and the usual
//! typed errors with exit status 1 (invalid shape, tuple, token) or 2 (usage).

use std::path::{Path, PathBuf};
use std::process::Command;

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_xla-shape"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    Output { code: out.status.code().unwrap(), stdout: String::from_utf8_lossy(&out.stdout).into_owned(), stderr }
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli_draw");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn writes_the_committed_seed_picture() {
    let out = scratch("seed_padded.svg");
    let r = run(&["draw", "--file", "examples/data/seed_padded.pb", "-o", out.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.is_empty());
    // The string form loses the legacy padding: the usual warning.
    assert!(r.stderr.contains("padded_dimensions"), "{}", r.stderr);
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/pictures/seed_padded.svg");
    assert_eq!(std::fs::read_to_string(out).unwrap(), std::fs::read_to_string(committed).unwrap());
}

#[test]
fn svg_on_stdout_and_the_same_from_hex() {
    let text = run(&["draw", "f32[2,3]{0,1}"]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.starts_with("<svg"), "{}", text.stdout);
    assert!(text.stdout.trim_end().ends_with("</svg>"));
    // f32[2,3]{0,1} as bytes (README).
    let hex = run(&["draw", "--hex", "100b1a0202032a070a02000180010132020000"]);
    assert_eq!(hex.code, 0, "{}", hex.stderr);
    assert_eq!(hex.stdout, text.stdout);
}

#[test]
fn json_summary_and_options() {
    let r = run(&["draw", "f32[3,5]{1,0:T(2,2)}", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["shape"], "f32[3,5]{1,0:T(2,2)}");
    assert_eq!((v["cells"].as_u64(), v["slots"].as_u64(), v["padding_slots"].as_u64()), (Some(15), Some(24), Some(9)));
    assert!(v["file"].is_null());

    let big = run(&["draw", "f32[500,700]{1,0:T(8,128)}", "--json", "--max-extent", "8", "--max-slots", "64"]);
    assert_eq!(big.code, 0, "{}", big.stderr);
    let v: serde_json::Value = serde_json::from_str(&big.stdout).unwrap();
    assert!(v["cells"].as_u64().unwrap() <= 64);
    assert!(v["slots"].as_u64().unwrap() <= 64);
    assert!(v["elisions"].as_u64().unwrap() > 0);

    let grid = run(&["draw", "f32[2,3,4]", "--grid", "2,0", "--json"]);
    assert_eq!(grid.code, 0, "{}", grid.stderr);
}

#[test]
fn bad_input_is_a_typed_error() {
    for (args, message) in [
        (vec!["draw", "f32[2]{1}"], "invalid layout at layout.minor_to_major[0]"),
        (vec!["draw", "(f32[2], s32[])"], "draw needs an array shape, but the shape is a tuple"),
        (vec!["draw", "token[]"], "draw needs an array shape, but the shape is a token"),
        (vec!["draw", "f32[?]"], "unbounded dynamic"),
        (vec!["draw", "f32[2,3]", "--grid", "0,5"], "dimension 5 is out of range for a shape of rank 2"),
        (vec!["draw", "f32[2,3]", "--max-extent", "100000"], "draw max_extent limit exceeded"),
        (vec!["draw", "--hex", "zz"], "invalid hex"),
        (vec!["draw", "f32[2]", "-o", "/nonexistent-dir/x.svg"], "cannot write /nonexistent-dir/x.svg"),
    ] {
        let r = run(&args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.starts_with("error: ") && r.stderr.contains(message), "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}");
    }
    for args in [
        vec!["draw"],
        vec!["draw", "f32[2]", "--grid", "x"],
        vec!["draw", "f32[2]", "--hex", "100b1a0202032a070a02000180010132020000"],
    ] {
        assert_eq!(run(&args).code, 2, "{args:?}");
    }
}
