//! Property tests of the HLO text reader: random modules, printed by a printer written here
//! (both name styles, operands with and without shapes, `/*index=N*/` comments, a soup of
//! attributes whose values nest braces, brackets, parentheses and strings with escapes, some
//! spread over several lines), read back to the instructions, shapes and attributes they were
//! made from.

use std::fmt::Write;

use proptest::prelude::*;
use xla_shape::ShapeBuf;
use xla_shape::hlo::text::{Item, TextReader};
use xla_shape::strategy::{ShapeConfig, shape};
use xla_shape::text::parse_shape_raw;

/// A shape whose text reads back to it (legacy padding is never printed).
fn printable_shape() -> impl Strategy<Value = ShapeBuf> {
    let config = ShapeConfig { max_depth: 3, max_tuple_len: 3, legacy_padding: false, ..ShapeConfig::everything() };
    shape(config)
        .prop_filter("reads back from its text", |s| parse_shape_raw(&s.to_string()).ok().as_ref() == Some(s.proto()))
}

/// An attribute value: words, numbers, strings with escapes, and nested groups.
fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        "[a-z][a-z0-9_.]{0,6}",
        "-?[0-9]{1,4}",
        // A string with escaped quotes and backslashes and the brackets and commas that must
        // not count inside it.
        "[a-z{}()\\[\\], =]{0,8}".prop_map(|s| format!("\"{s}\\\"x\\\\{s}\"")),
        "[a-z]{1,4}=[0-9]{1,3}".prop_map(String::from),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        (prop::collection::vec(inner, 0..4), 0..3usize, any::<bool>()).prop_map(|(items, bracket, newline)| {
            let (open, close) = [("{", "}"), ("[", "]"), ("(", ")")][bracket];
            let separator = if newline { ",\n      " } else { ", " };
            format!("{open}{}{close}", items.join(separator))
        })
    })
}

#[derive(Debug, Clone)]
struct Instruction {
    name: String,
    shape: ShapeBuf,
    opcode: &'static str,
    attributes: Vec<(String, String)>,
    operand_shapes: bool,
}

fn instruction(index: usize) -> impl Strategy<Value = Instruction> {
    (
        printable_shape(),
        prop::sample::select(vec!["add", "custom-call", "all-reduce-start", "negate", "get-tuple-element", "fusion"]),
        prop::collection::vec(("[a-z][a-z_]{0,7}", value()), 0..5),
        any::<bool>(),
        "[a-z][a-z0-9_]{0,5}",
    )
        .prop_map(move |(shape, opcode, attributes, operand_shapes, stem)| Instruction {
            name: format!("{stem}.{index}"),
            shape,
            opcode,
            attributes,
            operand_shapes,
        })
}

#[derive(Debug, Clone)]
struct Module {
    percent: bool,
    computations: Vec<(String, Vec<Instruction>)>,
}

fn module() -> impl Strategy<Value = Module> {
    let computation = |c: usize| {
        prop::collection::vec(any::<u8>(), 1..5).prop_flat_map(move |sizes| {
            let instructions: Vec<_> = (0..sizes.len()).map(|i| instruction(c * 10 + i)).collect();
            instructions.prop_map(move |list| (format!("comp_{c}"), list))
        })
    };
    (any::<bool>(), (1..4usize).prop_flat_map(move |n| (0..n).map(computation).collect::<Vec<_>>()))
        .prop_map(|(percent, computations)| Module { percent, computations })
}

/// The printer: XLA's layout of a module, with the variations XLA's printer options allow.
fn print(module: &Module) -> String {
    let p = if module.percent { "%" } else { "" };
    let mut out = String::from("HloModule random_module, is_scheduled=true, frontend_attributes={a=\"{\"}\n\n");
    out.push_str("FileNames\n1 \"programs.py\"\n\nFileLocations\n1 {file_name_id=1 line=3}\n\n");
    for (c, (name, instructions)) in module.computations.iter().enumerate() {
        let entry = if c + 1 == module.computations.len() { "ENTRY " } else { "" };
        let signature = if c % 2 == 0 { "" } else { " (a: f32[2], b: (s32[], /*index=1*/f32[])) -> f32[2]" };
        let _ = writeln!(out, "{entry}{p}{name}{signature} {{");
        for (i, instruction) in instructions.iter().enumerate() {
            let root = if i + 1 == instructions.len() { "ROOT " } else { "" };
            let operands: Vec<String> = instructions[..i]
                .iter()
                .enumerate()
                .map(|(k, o)| {
                    let comment = if k == 5 { "/*index=5*/" } else { "" };
                    if instruction.operand_shapes {
                        format!("{comment}{} {p}{}", o.shape, o.name)
                    } else {
                        format!("{comment}{p}{}", o.name)
                    }
                })
                .collect();
            let _ = write!(
                out,
                "  {root}{p}{} = {} {}({})",
                instruction.name,
                instruction.shape,
                instruction.opcode,
                operands.join(", ")
            );
            for (attribute, value) in &instruction.attributes {
                let _ = write!(out, ", {attribute}={value}");
            }
            out.push('\n');
        }
        out.push_str("}\n\n");
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn printed_modules_read_back(module in module()) {
        let text = print(&module);
        let mut reader = TextReader::new(text.as_bytes());
        let mut computations = module.computations.iter();
        let mut expected: Option<(&String, std::slice::Iter<'_, Instruction>)> = None;
        let mut seen_module = false;
        while let Some(item) = reader.next_item().map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))? {
            match item {
                Item::Module(header) => {
                    prop_assert_eq!(header.name, "random_module");
                    seen_module = true;
                }
                Item::Computation(computation) => {
                    let (name, instructions) = computations.next().unwrap();
                    prop_assert_eq!(computation.name, name.as_str());
                    prop_assert_eq!(computation.entry, computations.len() == 0);
                    expected = Some((name, instructions.iter()));
                }
                Item::Instruction(got) => {
                    let (computation, instructions) = expected.as_mut().unwrap();
                    let want = instructions.next().unwrap();
                    prop_assert_eq!(got.computation, computation.as_str());
                    prop_assert_eq!(got.name, want.name.as_str());
                    prop_assert_eq!(got.opcode, want.opcode);
                    prop_assert_eq!(got.shape, want.shape.proto(), "{}", want.shape);
                    prop_assert_eq!(got.root, instructions.len() == 0);
                    let attributes: Vec<(String, String)> =
                        got.attributes().map(|(n, v)| (n.to_owned(), v.to_owned())).collect();
                    prop_assert_eq!(&attributes, &want.attributes);
                }
                Item::ComputationEnd(end) => {
                    let (computation, instructions) = expected.take().unwrap();
                    prop_assert_eq!(end.name, computation.as_str());
                    prop_assert_eq!(instructions.len(), 0);
                }
            }
        }
        prop_assert!(seen_module);
        prop_assert_eq!(computations.len(), 0);
    }

    /// Cutting a module anywhere never panics and is either an error or a shorter module.
    #[test]
    fn truncated_modules_fail_cleanly(module in module(), cut in any::<prop::sample::Index>()) {
        let text = print(&module);
        let cut = cut.index(text.len());
        let cut = (0..=cut).rev().find(|&i| text.is_char_boundary(i)).unwrap();
        let mut reader = TextReader::new(&text.as_bytes()[..cut]);
        while let Ok(Some(_)) = reader.next_item() {}
        prop_assert!(reader.next_item().unwrap().is_none());
    }
}

/// Shape texts for modules that repeat their shapes, as XLA's do: printed valid shapes, and
/// texts the parser takes whose shapes are invalid or written without layouts.
#[cfg(feature = "cli")]
fn shape_pool() -> impl Strategy<Value = Vec<String>> {
    let written = prop_oneof![
        printable_shape().prop_map(|s| s.to_string()),
        prop::sample::select(vec![
            "f32[2]{1}",
            "f32[2,3]",
            "s4[8]{0:E(4)}",
            "(f32[], s32[], pred[], u8[], f16[], /*index=5*/bf16[])",
            "f32[<=4,?]",
            "(f32[2,3], s32[])",
        ])
        .prop_map(String::from),
    ];
    prop::collection::vec(written, 1..8)
}

#[cfg(feature = "cli")]
proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The listing, whose reader parses each distinct shape text once and whose printer prints
    /// and validates each once, equals the entries computed for each instruction on its own
    /// (parsed, printed and validated without a cache); the spacing after the shape varies, so
    /// both cached and uncached texts are read.
    #[test]
    fn cached_listings_equal_uncached_entries(
        pool in shape_pool(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), 0..4usize), 1..120),
    ) {
        use crate::common::run_cli;
        use xla_shape::Shape;

        let mut text = String::from("HloModule m\n\nENTRY %main {\n");
        let mut expected = Vec::new();
        for (i, (pick, spacing)) in picks.iter().enumerate() {
            let written = &pool[pick.index(pool.len())];
            let space = [" ", "  ", " /*c*/ ", "\t"][*spacing];
            let _ = writeln!(text, "  %n.{i} = {written}{space}negate(%n.0)");
            let shape = parse_shape_raw(written).unwrap();
            let mut entry = format!("main / n.{i} / {shape}");
            if let Err(e) = Shape::try_new_optional_layout(&shape) {
                let _ = write!(entry, "  [invalid: {e}]");
            }
            expected.push(entry);
        }
        text.push_str("}\n");
        let (_, stdout, stderr) = run_cli(&["hlo"], text.as_bytes());
        let listed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("main / n.")).collect();
        prop_assert_eq!(listed, expected, "{}{}", text, stderr);
    }
}
