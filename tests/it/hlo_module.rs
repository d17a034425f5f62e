//! The library's module reader (`xla_shape::hlo::module`): generated modules against the list
//! their generator wrote, the committed text / proto twins against each other, StableHLO
//! fixtures, file errors, and (with the command line) the `hlo --json` listing as a client of it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use xla_shape::Shape;
use xla_shape::hlo::HloMessage;
use xla_shape::hlo::module::{EntryKind, Module, ModuleForm, Site};
use xla_shape::text::parse_shape_raw;

fn fixtures(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir)
}

/// Shape texts as XLA prints them, some invalid (a repeated layout entry).
const SHAPES: [&str; 6] =
    ["f32[2,3]{1,0}", "s8[16]{0}", "f32[2,3]{0,1}", "pred[]", "bf16[4,4]{0,0}", "(f32[2]{0}, s32[])"];
/// Instruction shardings as XLA prints them.
const SHARDINGS: [&str; 3] = ["{replicated}", "{maximal device=1}", "{devices=[2,1]0,1}"];

/// The instructions' `(site, shape, sharding)` and the error of each invalid shape, as the
/// generator wrote them.
type Written = Vec<(String, String, Option<String>, Option<String>)>;

fn module_text(computations: &[Vec<(usize, Option<usize>)>]) -> (String, Written) {
    let mut text = String::from("HloModule generated\n\n");
    let mut written = Vec::new();
    for (c, instructions) in computations.iter().enumerate() {
        let entry = c + 1 == computations.len();
        let name = format!("comp.{c}");
        let _ = writeln!(text, "{}%{name} (p: f32[2]) -> f32[2] {{", if entry { "ENTRY " } else { "" });
        let _ = writeln!(text, "  %p = f32[2]{{0}} parameter(0)");
        written.push((format!("{name} / p"), "f32[2]{0}".to_owned(), None, None));
        for (i, (shape, sharding)) in instructions.iter().enumerate() {
            let shape = SHAPES[*shape];
            let attribute = sharding.map(|s| format!(", sharding={}", SHARDINGS[s])).unwrap_or_default();
            let _ = writeln!(text, "  %i.{i} = {shape} custom-call(%p), custom_call_target=\"t\"{attribute}");
            let error = Shape::try_new_optional_layout(&parse_shape_raw(shape).unwrap()).err().map(|e| e.to_string());
            written.push((
                format!("{name} / i.{i}"),
                shape.to_owned(),
                sharding.map(|s| SHARDINGS[s].to_owned()),
                error,
            ));
        }
        let _ = writeln!(text, "  ROOT %r = f32[2]{{0}} negate(%p)\n}}\n");
        written.push((format!("{name} / r"), "f32[2]{0}".to_owned(), None, None));
    }
    (text, written)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every instruction is one entry, in order, with its site, XLA's text of its shape, why it
    /// is invalid and its sharding; each computation's signature and the entry layout follow;
    /// the summary counts them.
    #[test]
    fn generated_modules_list_as_written(
        computations in prop::collection::vec(
            prop::collection::vec((0..SHAPES.len(), prop::option::of(0..SHARDINGS.len())), 0..12),
            1..4,
        ),
    ) {
        let (text, written) = module_text(&computations);
        let module = Module::from_bytes(text.clone().into_bytes());
        prop_assert_eq!(module.form(), ModuleForm::Text);
        let entries = module.entries().unwrap().collect::<Result<Vec<_>, _>>().unwrap();
        let listed: Written = entries
            .iter()
            .filter(|e| e.kind() == EntryKind::Instruction)
            .map(|e| {
                let sharding = e.sharding.as_deref().map(|s| s.as_ref().unwrap().to_string());
                (e.site.to_string(), e.shape.text().to_owned(), sharding, e.shape.error().map(ToString::to_string))
            })
            .collect();
        prop_assert_eq!(&listed, &written, "{}", text);
        let summary = module.summary().unwrap();
        prop_assert_eq!(summary.name.as_str(), "generated");
        prop_assert_eq!(summary.computations, computations.len());
        prop_assert_eq!(summary.count(EntryKind::Instruction), written.len());
        prop_assert_eq!(summary.count(EntryKind::ComputationProgramShape), 2 * computations.len());
        prop_assert_eq!(summary.count(EntryKind::HostProgramShape), 2);
        prop_assert_eq!(summary.invalid, written.iter().filter(|w| w.3.is_some()).count());
        let layout = summary.entry_computation_layout().unwrap();
        prop_assert_eq!(layout.parameter_names, vec!["p".to_owned()]);
        // The same module streamed from a file reads the same.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.txt");
        std::fs::write(&path, &text).unwrap();
        let from_file = Module::open(&path).unwrap();
        prop_assert!(from_file.path().is_some());
        prop_assert_eq!(from_file.entries().unwrap().collect::<Result<Vec<_>, _>>().unwrap(), entries);
    }
}

/// The instruction entries of a module as `(site, shape text, sharding text)`, counted.
fn instructions(module: &Module) -> BTreeMap<(String, String, Option<String>), usize> {
    let mut out = BTreeMap::new();
    for entry in module.entries().unwrap() {
        let entry = entry.unwrap();
        if matches!(entry.kind(), EntryKind::HostProgramShape | EntryKind::ComputationProgramShape) {
            continue;
        }
        let sharding =
            entry.sharding.as_deref().map(|s| s.as_ref().map_or_else(ToString::to_string, ToString::to_string));
        *out.entry((entry.site.to_string(), entry.shape.text().to_owned(), sharding)).or_insert(0) += 1;
    }
    out
}

/// XLA's text and its proto of the same module list the same instructions, name, computation
/// count and entry layout.
#[test]
fn text_and_proto_twins_list_the_same() {
    let mut pairs = 0;
    for entry in std::fs::read_dir(fixtures("hlo_text")).unwrap() {
        let text = entry.unwrap().path();
        let name = text.file_name().unwrap().to_str().unwrap().to_owned();
        let Some(stem) = name.strip_suffix(".txt") else { continue };
        let proto = text.with_file_name(format!("{stem}.pb"));
        if [".large", ".operands"].iter().any(|suffix| stem.ends_with(suffix)) || !proto.exists() {
            continue;
        }
        let (from_text, from_proto) = (Module::open(&text).unwrap(), Module::open(&proto).unwrap());
        assert_eq!(from_text.form(), ModuleForm::Text, "{name}");
        assert!(matches!(from_proto.form(), ModuleForm::Proto(_)), "{name}");
        assert_eq!(instructions(&from_text), instructions(&from_proto), "{name}");
        let (a, b) = (from_text.summary().unwrap(), from_proto.summary().unwrap());
        assert_eq!((&a.name, a.computations), (&b.name, b.computations), "{name}");
        let layouts = (a.entry_computation_layout().unwrap(), b.entry_computation_layout().unwrap());
        let dims = |p: &xla_shape::proto::ProgramShapeProto| {
            p.parameters.iter().map(|s| s.dimensions.clone()).collect::<Vec<_>>()
        };
        assert_eq!(dims(&layouts.0), dims(&layouts.1), "{name}");
        pairs += 1;
    }
    assert!(pairs >= 20, "{pairs}");
}

/// Every StableHLO fixture lists its entry function's parameters and results in the entry
/// layout, and each operation as an instruction.
#[test]
fn stablehlo_fixtures_list_functions_and_operations() {
    let mut read = 0;
    for entry in std::fs::read_dir(fixtures("stablehlo")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("mlir") {
            continue;
        }
        let module = Module::open(&path).unwrap();
        assert_eq!(module.form(), ModuleForm::Mlir, "{}", path.display());
        let summary = module.summary().unwrap();
        assert!(summary.count(EntryKind::Parameter) + summary.count(EntryKind::Result) > 0);
        assert!(
            summary
                .entry_layout
                .iter()
                .all(|e| matches!(e.site, Site::FunctionParameter { .. } | Site::FunctionResult { .. }))
        );
        assert!(summary.entry_computation_layout().is_some(), "{}", path.display());
        read += 1;
    }
    assert!(read >= 10, "{read}");
}

#[test]
fn forms_are_told_apart_or_given() {
    let snapshot = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/snapshot.pb")).unwrap();
    assert_eq!(ModuleForm::detect(&snapshot, None), ModuleForm::Proto(HloMessage::Snapshot));
    let module = Module::from_bytes(snapshot.clone());
    let mut sites = Vec::new();
    module
        .for_each_literal(|literal| {
            sites.push(literal.site.to_string());
            Ok::<(), xla_shape::Error>(())
        })
        .unwrap();
    assert!(sites.iter().any(|s| s.starts_with("arguments[")), "{sites:?}");
    // Given as a module, the snapshot's bytes are refused where they stop being one.
    let forced = Module::from_bytes_as(snapshot, ModuleForm::Proto(HloMessage::Module));
    assert!(forced.entries().and_then(Iterator::collect::<Result<Vec<_>, _>>).is_err());
}

#[test]
fn a_missing_file_is_named() {
    let error = Module::open("tests/fixtures/no-such-module.pb").unwrap_err();
    let xla_shape::Error::File(file) = &error else { panic!("{error:?}") };
    assert_eq!(file.kind, std::io::ErrorKind::NotFound);
    assert!(error.to_string().starts_with("cannot open tests/fixtures/no-such-module.pb: "), "{error}");
}

/// `hlo --json` prints the library's entries: the same sites, kinds, shapes and validity, in
/// the same order, for every form.
#[cfg(feature = "cli")]
#[test]
fn the_command_line_prints_the_library_listing() {
    use serde_json::Value;
    let mut files: Vec<PathBuf> = ["hlo_text", "stablehlo", "hlo"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(fixtures(dir)).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| {
            p.extension().is_some_and(|e| {
                e == "pb" || e == "mlir" || (e == "txt" && !p.to_string_lossy().ends_with(".shapes.txt"))
            })
        })
        .collect();
    files.sort();
    for path in &files {
        let (status, stdout, _) = crate::common::run_cli(&["hlo", "--json", path.to_str().unwrap()], b"");
        let module = Module::open(path).unwrap();
        let Ok(entries) = module.entries().and_then(Iterator::collect::<Result<Vec<_>, _>>) else {
            assert!(stdout.is_empty(), "{}", path.display());
            continue;
        };
        let listing: Value = serde_json::from_str(&stdout).unwrap();
        let shapes = listing["shapes"].as_array().unwrap();
        assert_eq!(shapes.len(), entries.len(), "{}", path.display());
        for (json, entry) in shapes.iter().zip(&entries) {
            assert_eq!(json["site"], entry.site.to_string());
            assert_eq!(json["kind"], entry.kind().name());
            assert_eq!(json["shape"], entry.shape.text());
            assert_eq!(json["valid"], entry.shape.is_valid());
        }
        assert_eq!(status == 0, entries.iter().all(|e| e.shape.is_valid()), "{}", path.display());
    }
}
