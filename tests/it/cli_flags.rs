//! One meaning per flag (issue 15): `--hex HEX` is a serialized proto given in hex and
//! `--file FILE` one given in a file, in every subcommand that reads one; the old bare `--hex` of
//! `decode` / `validate` still works, with a deprecation note.

use std::path::Path;

use crate::common::run_cli as run;

/// The seed's padded example (vectors.md S8) and its file.
const SEED_PADDED_HEX: &str = "100b1a0202032a0c0a0200011202030518012001";

fn seed_file() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/seed_padded.pb").display().to_string()
}

#[test]
fn hex_and_file_mean_the_same_in_every_subcommand() {
    let file = seed_file();
    for (command, extra) in
        [("decode", None), ("validate", None), ("info", None), ("map", None), ("offset", Some("1,2"))]
    {
        let mut by_hex = vec![command, "--hex", SEED_PADDED_HEX];
        let mut by_file = vec![command, "--file", &file];
        by_hex.extend(extra);
        by_file.extend(extra);
        let (hex_status, hex_out, hex_err) = run(&by_hex, b"");
        let (file_status, file_out, _) = run(&by_file, b"");
        assert_eq!((hex_status, &hex_out), (file_status, &file_out), "{command}: {hex_err}");
        assert!(!hex_out.is_empty() || command == "validate", "{command}");
        assert!(!hex_err.contains("deprecated"), "{command}: {hex_err}");
    }
    // decode and validate also take FILE alone, and the hex on stdin with `--hex -`.
    for command in ["decode", "validate"] {
        let expected = run(&[command, "--hex", SEED_PADDED_HEX], b"");
        assert_eq!(run(&[command, &file], b""), expected, "{command}");
        assert_eq!(run(&[command, "--hex", "-"], SEED_PADDED_HEX.as_bytes()), expected, "{command}");
        // `--hex` and a file are one source too many.
        assert_eq!(run(&[command, "--hex", SEED_PADDED_HEX, "--file", &file], b"").0, 2);
    }
}

#[test]
fn the_old_bare_hex_still_works_with_a_deprecation_note() {
    let expected = run(&["decode", "--hex", SEED_PADDED_HEX], b"").1;
    let (status, out, err) = run(&["decode", "--hex"], SEED_PADDED_HEX.as_bytes());
    assert_eq!((status, out.as_str()), (0, expected.as_str()));
    assert!(err.contains("warning: `--hex` without a value is deprecated"), "{err}");
    // The old `--hex FILE` (FILE holding hex text) is read as before, with the note.
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-flags-seed.hex");
    std::fs::write(&path, SEED_PADDED_HEX).unwrap();
    let (status, out, err) = run(&["validate", "--hex", path.to_str().unwrap()], b"");
    assert_eq!((status, out.as_str(), err.contains("deprecated")), (0, "ok\n", true), "{err}");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn hlo_takes_file_like_the_others() {
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hlo/tuple.pb");
    let module = module.to_str().unwrap();
    let positional = run(&["hlo", module], b"");
    assert_eq!(positional.0, 0, "{}", positional.2);
    assert_eq!(run(&["hlo", "--file", module], b""), positional);
}

#[test]
fn lines_are_capped_by_their_kind() {
    // An index line: 1 MiB (read up to the cap and two bytes more, never the whole line).
    let mut index = "0,".repeat(3 << 18).into_bytes();
    index.push(b'\n');
    let (status, _, err) = run(&["offset", "f32[2]", "--lines"], &index);
    assert_eq!(status, 1);
    assert!(err.contains(&format!("input size limit exceeded: {} is more than {}", (1 << 20) + 2, 1 << 20)), "{err}");
    // Just under it: an answer (an error about the index, not about its length).
    let mut short = "0,".repeat((1 << 19) - 1).into_bytes();
    short.extend(b"0\n");
    let (_, out, err) = run(&["offset", "f32[2]", "--lines"], &short);
    assert!(!err.contains("input size limit"), "{err}");
    assert_eq!(out.lines().count(), 1);
    // A hex line: 2 MiB.
    let mut hex = vec![b'0'; (2 << 20) + 10];
    hex.push(b'\n');
    let (status, _, err) = run(&["decode", "--lines"], &hex);
    assert_eq!(status, 1);
    assert!(err.contains(&format!("is more than {}", 2 << 20)), "{err}");
}
