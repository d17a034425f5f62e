//! HLO text (`xla_shape::hlo::text`, `literal::parse_constant`) against what real XLA printed and
//! serialized: `tests/fixtures/literals/constants.jsonl` (one constant per record, XLA's text and
//! its `LiteralProto` bytes) and the module fixtures that have both a text and a `.pb`.

use std::collections::BTreeMap;
use std::fs;

use prost::Message;
use xla_shape::hlo::text::{Item, TextReader};
use xla_shape::hlo::{self as hlo_proto, HloMessage, LiteralSite};
use xla_shape::literal::{self, Constant, Literal};
use xla_shape::text::parse_shape_raw;

const LITERALS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/literals");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// Every (text, proto) pair of the fixtures: `tests/fixtures/hlo_text/` (`X.lowered.txt` and
/// `X.compiled.txt` beside `X.lowered.pb` / `X.compiled.pb`; `X.txt`, `X.large.txt`,
/// `X.operands.txt` beside `X.pb`) and the older `*.hlo.txt` beside their `.pb` (`hlo/`, `literals/`,
/// `sharding/`).
pub fn pairs() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["hlo_text", "hlo", "literals", "sharding"] {
        let dir = format!("{FIXTURES}/{dir}");
        let mut names: Vec<String> =
            fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        for name in names
            .iter()
            .filter(|n| std::path::Path::new(n).extension().is_some_and(|e| e == "txt") && !n.ends_with(".shapes.txt"))
        {
            let proto = if let Some(stem) = name.strip_suffix(".hlo.txt") {
                format!("{stem}.pb")
            } else if name.ends_with(".lowered.txt") || name.ends_with(".compiled.txt") {
                name.replace(".txt", ".pb")
            } else {
                format!("{}.pb", name.split('.').next().unwrap())
            };
            assert!(names.contains(&proto), "{dir}/{name} has no {proto}");
            out.push((format!("{dir}/{name}"), format!("{dir}/{proto}")));
        }
    }
    assert!(out.len() >= 30, "{}", out.len());
    out
}

/// Each text constant has the bytes of the proto's literal at the same site; elided ones are
/// reported elided (and the proto has them).
#[test]
fn every_text_constant_has_the_protos_bytes() {
    let (mut compared, mut elided) = (0, 0);
    for (text, proto) in pairs() {
        let bytes = fs::read(&proto).unwrap();
        let from_proto: BTreeMap<String, Vec<u8>> = hlo_proto::literals(&bytes, HloMessage::Module)
            .unwrap()
            .into_iter()
            .map(|sited| {
                let LiteralSite::Constant { computation, instruction } = sited.site else { panic!("{proto}") };
                (format!("{computation}/{instruction}"), sited.bytes.to_vec())
            })
            .collect();
        let from_text = text_constants(&fs::read(&text).unwrap());
        assert_eq!(from_text.len(), from_proto.len(), "{text}: constants");
        for (site, literal) in from_text {
            let expected = from_proto.get(&site).unwrap_or_else(|| panic!("{text}: {site} not in the proto"));
            if let Some(literal) = literal {
                assert_eq!(hex(&literal), hex(expected), "{text}: {site}");
                compared += 1;
            } else {
                assert!(!text.ends_with(".large.txt"), "{text}: {site} elided with print_large_constants");
                elided += 1;
            }
        }
    }
    assert!(compared > 200, "{compared}");
    assert!(elided > 20, "{elided}");
}

fn hex(bytes: &[u8]) -> String {
    crate::common::to_hex(bytes)
}

/// Every constant XLA printed reads back to the bytes XLA serialized for it, and prints back
/// to XLA's text; what XLA elided is reported elided.
#[test]
fn every_fixture_constant_reads_back_to_xlas_bytes() {
    let text = fs::read_to_string(format!("{LITERALS}/constants.jsonl")).unwrap();
    let mut checked = 0;
    let mut elided = 0;
    for line in text.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        if record["status"] != "ok" {
            continue;
        }
        let name = record["name"].as_str().unwrap();
        let shape = parse_shape_raw(record["shape"].as_str().unwrap()).unwrap();
        let printed = record["printed"].as_str().unwrap();
        let Constant::Literal(proto) =
            literal::parse_constant(&shape, printed).unwrap_or_else(|e| panic!("{name}: {e}"))
        else {
            panic!("{name}: elided")
        };
        assert_eq!(hex(&proto.encode_to_vec()), record["literal_hex"].as_str().unwrap(), "{name}: {printed}");
        assert_eq!(Literal::try_new(&proto).unwrap().to_text(None).unwrap(), printed, "{name}");
        let default = record["printed_default"].as_str().unwrap();
        match literal::parse_constant(&shape, default).unwrap() {
            Constant::Elided => elided += 1,
            Constant::Literal(again) => {
                assert_eq!(again.encode_to_vec(), proto.encode_to_vec(), "{name}: default print");
            }
        }
        checked += 1;
    }
    assert!(checked > 900, "{checked}");
    assert!(elided > 50, "{elided}");
}

/// Every constant of a text module with its instruction's site and literal (or `None` when
/// elided).
pub fn text_constants(text: &[u8]) -> Vec<(String, Option<Vec<u8>>)> {
    let mut reader = TextReader::new(text);
    let mut out = Vec::new();
    while let Some(item) = reader.next_item().unwrap() {
        if let Item::Instruction(instruction) = item {
            if let Some(constant) = instruction.constant().unwrap() {
                let site = format!("{}/{}", instruction.computation, instruction.name);
                out.push((
                    site,
                    match constant {
                        Constant::Elided => None,
                        Constant::Literal(proto) => Some(proto.encode_to_vec()),
                    },
                ));
            }
        }
    }
    out
}

/// The `hlo --json` listings of a text module and of its proto, compared: the same module name
/// and computation count, per computation the same instruction entries (matched by site: a
/// scheduled module prints its instructions in schedule order, its proto keeps another), and
/// the same program-shape and host entries (which text gives at a computation's end).
#[cfg(feature = "cli")]
#[test]
fn every_text_listing_equals_the_protos() {
    use crate::common::run_cli;

    fn listing(path: &str) -> serde_json::Value {
        let (status, stdout, stderr) = run_cli(&["hlo", "--json", path], b"");
        assert_eq!(status, 0, "{path}: {stderr}");
        serde_json::from_str(&stdout).unwrap()
    }
    /// Instruction entries by computation, in order; the rest sorted.
    fn grouped(listing: &serde_json::Value) -> (BTreeMap<String, Vec<serde_json::Value>>, Vec<String>) {
        let mut instructions: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
        let mut rest = Vec::new();
        for entry in listing["shapes"].as_array().unwrap() {
            // "sharding" included: the text's attribute parsed and printed back, the proto's
            // OpSharding printed, must be the same text.
            let entry = entry.clone();
            if entry["kind"] == "computation_program_shape" || entry["kind"] == "host_program_shape" {
                rest.push(entry.to_string());
            } else {
                let site = entry["site"].as_str().unwrap();
                let computation = site.split(" / ").next().unwrap().to_owned();
                instructions.entry(computation).or_default().push(entry);
            }
        }
        rest.sort();
        for entries in instructions.values_mut() {
            entries.sort_by_key(ToString::to_string);
        }
        (instructions, rest)
    }
    let mut instructions = 0;
    for (text, proto) in pairs() {
        let (from_text, from_proto) = (listing(&text), listing(&proto));
        assert_eq!(from_text["module"], from_proto["module"], "{text}");
        assert_eq!(from_text["computations"], from_proto["computations"], "{text}");
        for key in ["counts", "total", "invalid", "shardy"] {
            assert_eq!(from_text[key], from_proto[key], "{text}: {key}");
        }
        let (text_groups, text_rest) = grouped(&from_text);
        let (proto_groups, proto_rest) = grouped(&from_proto);
        assert_eq!(text_groups.keys().collect::<Vec<_>>(), proto_groups.keys().collect::<Vec<_>>(), "{text}");
        for (computation, entries) in &text_groups {
            let expected = &proto_groups[computation];
            assert_eq!(entries.len(), expected.len(), "{text}: {computation}");
            for (a, b) in entries.iter().zip(expected) {
                assert_eq!(a, b, "{text}");
                instructions += 1;
            }
        }
        assert_eq!(text_rest, proto_rest, "{text}: program shapes");
    }
    assert!(instructions > 500, "{instructions}");
}

/// The sharded module's instructions carry their sharding parsed and printed back as XLA prints
/// it, which is the dump's own text.
#[cfg(feature = "cli")]
#[test]
fn sharding_is_listed_as_xla_prints_it() {
    let path = format!("{FIXTURES}/hlo_text/sharded.compiled.txt");
    let (status, stdout, _) = crate::common::run_cli(&["hlo", "--json", &path], b"");
    assert_eq!(status, 0);
    let listing: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    let mut found = 0;
    for entry in listing["shapes"].as_array().unwrap() {
        if let Some(sharding) = entry["sharding"].as_str() {
            // An independent reading: the attribute on the instruction's line.
            let instruction = entry["site"].as_str().unwrap().rsplit(" / ").next().unwrap();
            let line = text
                .lines()
                .find(|l| l.trim_start().trim_start_matches("ROOT ").starts_with(&format!("%{instruction} =")))
                .unwrap();
            assert!(line.contains(&format!("sharding={sharding}")), "{line}");
            assert!(sharding.starts_with('{') && sharding.ends_with('}'), "{sharding}");
            found += 1;
        }
    }
    assert!(found >= 2, "{found}");
}

/// Malformed text: `path:line:col: message`, the line and a caret under the column, exit 1 and
/// nothing on stdout (the first pass finds the error before anything is printed).
#[cfg(feature = "cli")]
#[test]
fn malformed_text_is_an_error_with_its_position() {
    use crate::common::run_cli;

    let tmp = tempfile::TempDir::new().unwrap();
    let dir = tmp.path();
    let cases: [(&str, &str, &str); 7] = [
        (
            "HloModule m\nENTRY e {\n  x = f32[2]{0} parameter(0)\n  y = f32[2]{0} add(x, x), foo={a=[1,2}\n}\n",
            "4:39: expects `]`, found `}`",
            "  y = f32[2]{0} add(x, x), foo={a=[1,2}",
        ),
        (
            "HloModule m\nENTRY e {\n  x = f32[2]{0 parameter(0)\n}\n",
            "3:16: invalid shape: expected `}` to end the layout",
            "  x = f32[2]{0 parameter(0)",
        ),
        (
            "HloModule m\nENTRY e {\n  x = f32[2]{0} parameter(0)\n",
            "4:1: unexpected end of input inside a computation",
            "",
        ),
        (
            "HloModule m\nENTRY e {\n  x = f32[2]{0} constant({1, 2, 3})\n}\n",
            "3:32: invalid constant:",
            "  x = f32[2]{0} constant({1, 2, 3})",
        ),
        (
            "HloModule m\nENTRY e {\n  x f32[2]{0} parameter(0)\n}\n",
            "3:5: expects `=` after the instruction name, found `f32`",
            "  x f32[2]{0} parameter(0)",
        ),
        (
            "HloModule m\nENTRY e {\n  x = f32[2]{0} parameter(0), a=\"open\n}\n",
            "3:33: expects a closing `\"`",
            "  x = f32[2]{0} parameter(0), a=\"open",
        ),
        (
            "HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}\n",
            "2:1: unexpected end of input inside an open bracket",
            "",
        ),
    ];
    for (i, (text, message, line)) in cases.iter().enumerate() {
        let path = dir.join(format!("bad{i}.txt"));
        fs::write(&path, text).unwrap();
        let path = path.to_str().unwrap();
        // `hlo` lists shapes only (as for a proto, literals are not read): a bad constant is an
        // error of `values` alone.
        let constant = message.contains("invalid constant");
        for json in [false, true] {
            if constant {
                break;
            }
            let args: Vec<&str> = if json { vec!["hlo", "--json", path] } else { vec!["hlo", path] };
            let (status, stdout, stderr) = run_cli(&args, b"");
            assert_eq!((status, stdout.as_str()), (1, ""), "{text}");
            assert!(stderr.starts_with(&format!("error: {path}:{message}")), "{stderr}");
            let mut lines = stderr.lines().skip(1);
            if !line.is_empty() {
                assert_eq!(lines.next(), Some(*line), "{stderr}");
                // The caret sits under the column the message names.
                let column: usize = message.split(':').nth(1).unwrap().parse().unwrap();
                assert_eq!(lines.next().unwrap(), format!("{}^", " ".repeat(column - 1)), "{stderr}");
            }
        }
        let (status, stdout, stderr) = run_cli(&["values", path], b"");
        assert_eq!((status, stdout.as_str()), (1, ""), "{stderr}");
        assert!(stderr.starts_with(&format!("error: {path}:{message}")), "{stderr}");
    }
    // From stdin, the path is `<stdin>`.
    let (status, _, stderr) = run_cli(&["hlo"], cases[0].0.as_bytes());
    assert_eq!(status, 1);
    assert!(stderr.starts_with("error: <stdin>:4:39: "), "{stderr}");
}

/// The format is detected from the content (`HloModule` after whitespace) and `--format`
/// overrides it.
#[cfg(feature = "cli")]
#[test]
fn format_is_detected_and_can_be_forced() {
    use crate::common::run_cli;

    let text = format!("\n \t{}", fs::read_to_string(format!("{FIXTURES}/hlo_text/tuples.lowered.txt")).unwrap());
    let proto = fs::read(format!("{FIXTURES}/hlo_text/tuples.lowered.pb")).unwrap();
    let (status, from_text, _) = run_cli(&["hlo"], text.as_bytes());
    assert_eq!(status, 0);
    let (status, from_proto, _) = run_cli(&["hlo"], &proto);
    assert_eq!(status, 0);
    assert_eq!(from_text.lines().next(), from_proto.lines().next());
    assert_eq!(from_text.lines().last(), from_proto.lines().last());
    // Forced the wrong way, each is an error of the forced format.
    let (status, _, stderr) = run_cli(&["hlo", "--format", "proto"], text.as_bytes());
    assert_eq!(status, 1);
    assert!(stderr.contains("HloModuleProto"), "{stderr}");
    let (status, _, stderr) = run_cli(&["hlo", "--format", "text"], &proto);
    assert_eq!(status, 1);
    assert!(stderr.starts_with("error: <stdin>:"), "{stderr}");
    // A statement past the limit is refused with the limit named.
    let (status, _, stderr) = run_cli(&["hlo", "--max-statement-bytes", "64"], text.as_bytes());
    assert_eq!(status, 1);
    assert!(stderr.contains("longer than the limit of 64 bytes"), "{stderr}");
}

/// `values` of text: the printed constants as XLA printed them, the elided ones marked elided
/// (never zeros), and `--npy` of an elided one an error.
#[cfg(feature = "cli")]
#[test]
fn values_of_text_report_elided_constants() {
    use crate::common::run_cli;

    let path = format!("{FIXTURES}/hlo_text/all_types.txt");
    let (status, stdout, stderr) = run_cli(&["values", "--all", "--json", &path], b"");
    assert_eq!(status, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let entries = json["literals"].as_array().unwrap();
    let elided: Vec<&serde_json::Value> = entries.iter().filter(|e| e["elided_in_dump"] == true).collect();
    assert!(elided.len() >= 20, "{}", elided.len());
    for entry in &elided {
        let site = entry["site"].as_str().unwrap();
        assert!(site.starts_with("main/big.") || site == "main/tup", "{entry}");
        assert_eq!((entry["text"].as_str(), &entry["value"]), (Some("{...}"), &serde_json::Value::Null));
    }
    // Every printed constant's text is XLA's, from the line in the file.
    let text = fs::read_to_string(&path).unwrap();
    for entry in entries.iter().filter(|e| e["elided_in_dump"] != true) {
        let instruction = entry["site"].as_str().unwrap().rsplit('/').next().unwrap();
        let line = text.lines().find(|l| l.contains(&format!("%{instruction} = "))).unwrap();
        assert!(line.contains(&format!("constant({})", entry["text"].as_str().unwrap())), "{line}");
    }
    let (status, stdout, _) = run_cli(&["values", &path], b"");
    assert_eq!(status, 0);
    assert!(stdout.contains("main/big.0: pred[3,4]{1,0} {...}  [elided in the dump]"), "{stdout}");
    let tmp = tempfile::TempDir::new().unwrap();
    let dir = tmp.path().join("npy");
    let (status, _, stderr) = run_cli(&["values", "--npy", dir.to_str().unwrap(), &path], b"");
    assert_eq!(status, 1);
    assert!(stderr.contains("main/big.0: the constant is elided in the text dump"), "{stderr}");
    // With print_large_constants, nothing is elided and --npy writes.
    let large = format!("{FIXTURES}/hlo_text/all_types.large.txt");
    let (status, stdout, stderr) = run_cli(&["values", "--npy", dir.to_str().unwrap(), &large], b"");
    assert_eq!(status, 0, "{stderr}");
    assert!(!stdout.contains("elided in the dump"));
    assert!(dir.join("main.big.4.npy").exists()); // s16
}

/// A listing larger than the spool's memory (4 MiB) moves to a temporary file and comes out
/// whole and in order; a syntax error at the very end still prints nothing.
#[cfg(feature = "cli")]
#[test]
fn large_listings_spool_to_a_file() {
    use std::fmt::Write as _;

    use crate::common::run_cli;

    let count = 220_000;
    let mut text =
        String::from("HloModule big\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n");
    for i in 0..count {
        let _ = writeln!(text, "  %n.{i} = f32[2]{{0}} negate(%p)");
    }
    let (status, stdout, stderr) = run_cli(&["hlo"], format!("{text}}}\n").as_bytes());
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.len() > 4 << 20, "{}", stdout.len());
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "module big (1 computation)");
    assert_eq!(lines[1], "main / p / f32[2]{0}");
    for (i, line) in lines[2..2 + count].iter().enumerate() {
        assert_eq!(*line, format!("main / n.{i} / f32[2]{{0}}"));
    }
    assert!(lines.last().unwrap().starts_with(&format!("summary: {} shapes", count + 5)), "{}", lines.last().unwrap());
    let (status, stdout, _) = run_cli(&["hlo", "--json"], format!("{text}}}\n").as_bytes());
    assert_eq!(status, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["shapes"].as_array().unwrap().len(), count + 5);
    let (status, stdout, stderr) =
        run_cli(&["hlo"], format!("{text}  %bad = f32[2]{{0}} negate(%p), x=(]\n}}\n").as_bytes());
    assert_eq!((status, stdout.as_str()), (1, ""));
    assert!(stderr.starts_with(&format!("error: <stdin>:{}:", count + 5)), "{stderr}");
}

/// Comment lines anywhere between statements are skipped, and a module may end right after
/// its last computation.
#[test]
fn comment_lines_are_skipped() {
    let text = "// dumped by hand\n/* a\n block */\nHloModule m\n// between\nENTRY %e {\n  // inside\n  ROOT %x = f32[] parameter(0)\n}";
    let mut reader = TextReader::new(text.as_bytes());
    let mut kinds = Vec::new();
    while let Some(item) = reader.next_item().unwrap() {
        kinds.push(match item {
            Item::Module(m) => format!("module {}", m.name),
            Item::Computation(c) => format!("computation {}", c.name),
            Item::Instruction(i) => format!("instruction {} {}", i.name, i.shape),
            Item::ComputationEnd(e) => format!("end {} {:?}", e.name, e.program_shape.parameter_names),
        });
    }
    assert_eq!(kinds, ["module m", "computation e", "instruction x f32[]", "end e [\"x\"]"]);
}

/// `info` of a module: the same summary from the text and the `.pb` of every fixture pair, its
/// name, counts and entry computation layout those of the `hlo` listing, each layout shape
/// described as `info SHAPE` describes it, every sharded instruction's sharding listed.
#[cfg(feature = "cli")]
#[test]
fn info_of_a_module_is_the_same_for_text_and_proto() {
    use crate::common::run_cli;
    let json = |args: &[&str]| -> serde_json::Value {
        let (status, stdout, stderr) = run_cli(args, b"");
        assert_eq!(status, 0, "{args:?}: {stderr}");
        serde_json::from_str(&stdout).unwrap()
    };
    let mut parameters = 0;
    for (text, proto) in pairs() {
        let (status, from_text, stderr) = run_cli(&["info", &text], b"");
        assert_eq!(status, 0, "{text}: {stderr}");
        let (status, from_proto, stderr) = run_cli(&["info", &proto], b"");
        assert_eq!(status, 0, "{proto}: {stderr}");
        assert_eq!(from_text, from_proto, "{text}");
        let info = json(&["info", "--json", &text]);
        assert_eq!(info, json(&["info", "--json", &proto]), "{text}");
        let listing = json(&["hlo", "--json", &proto]);
        assert_eq!(info["module"], listing["module"], "{text}");
        assert!(from_text.starts_with(&format!("module {}: ", listing["module"].as_str().unwrap())), "{from_text}");
        assert_eq!(info["computations"], listing["computations"], "{text}");
        assert_eq!(info["instructions"], listing["counts"]["instruction"], "{text}");
        let shapes = listing["shapes"].as_array().unwrap();
        let host: Vec<&serde_json::Value> = shapes.iter().filter(|e| e["kind"] == "host_program_shape").collect();
        let entry = info["entry_computation_layout"].as_array().unwrap();
        assert_eq!(entry.len(), host.len(), "{text}");
        for (got, want) in entry.iter().zip(&host) {
            assert_eq!(
                format!("host_program_shape / {}", got["site"].as_str().unwrap()),
                want["site"].as_str().unwrap()
            );
            assert_eq!(got["shape"], want["shape"], "{text}");
            let described = json(&["info", "--json", want["shape"].as_str().unwrap()]);
            let size_free: Vec<&serde_json::Value> = described["description"]
                .as_array()
                .unwrap()
                .iter()
                .take(got["description"].as_array().unwrap().len())
                .collect();
            assert_eq!(got["description"].as_array().unwrap().iter().collect::<Vec<_>>(), size_free, "{text}");
            parameters += 1;
        }
        let sharded = shapes.iter().filter(|e| e.get("sharding").is_some()).count();
        assert_eq!(info["sharded_instructions"], sharded, "{text}");
        assert_eq!(info["shardings"].as_array().unwrap().len(), sharded, "{text}");
    }
    assert!(parameters > 50, "{parameters}");
    // The forms without a path argument: stdin with --format text, --file with --type.
    let (text, proto) =
        (format!("{FIXTURES}/hlo_text/tuples.lowered.txt"), format!("{FIXTURES}/hlo_text/tuples.lowered.pb"));
    let by_path = run_cli(&["info", &text], b"");
    assert_eq!(run_cli(&["info", "--format", "text"], &fs::read(&text).unwrap()), by_path);
    assert_eq!(run_cli(&["info", "--type", "module", "--file", &proto], b""), by_path);
    // Without them, --file is a ShapeProto still: the module's bytes are refused as one.
    assert_ne!(run_cli(&["info", "--file", &proto], b"").0, 0);
}
