//! StableHLO MLIR text (`xla_shape::hlo::mlir`, `xla-shape hlo FILE.mlir`) against XLA's HLO of
//! the same lowering: for every program of `tests/fixtures/stablehlo/` (written by
//! `tools/fixtures/stablehlo.py` from jax 0.10.2, Shardy on and off), the entry function's
//! parameters and results listed from the `.mlir` have the shapes and shardings of the HLO
//! module's entry computation (`.txt`: `entry_computation_layout`, the `parameter(N)`
//! instructions' `sharding={…}` and the ROOT's; `.pb`: `host_program_shape`).

use std::collections::BTreeMap;
use std::fs;

use serde_json::Value;
use xla_shape::hlo::text::{Item, TextReader};
use xla_shape::sharding;

use crate::common::run_cli as run;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/stablehlo");

/// The program names with a `.mlir`, `.txt` and `.pb` each (`NAME.sdy`, `NAME.gspmd`).
fn programs() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(".mlir").map(str::to_owned))
        // `jax.export` output has no HLO twin.
        .filter(|n| !n.ends_with(".export"))
        .collect();
    names.sort();
    for name in &names {
        for ext in ["txt", "pb"] {
            assert!(fs::metadata(format!("{DIR}/{name}.{ext}")).is_ok(), "{name}.{ext} missing");
        }
    }
    names
}

/// `hlo --json FILE` as JSON.
fn listing(path: &str) -> Value {
    let (status, out, err) = run(&["hlo", "--json", path], b"");
    assert_eq!(status, 0, "{path}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// The entry computation of HLO text: parameter shapes and result shape (from
/// `entry_computation_layout`), each parameter's sharding and the ROOT's.
#[derive(Debug, Default)]
struct Entry {
    parameters: Vec<String>,
    result: String,
    shardings: BTreeMap<usize, String>,
    root_sharding: Option<String>,
}

fn hlo_entry(path: &str) -> Entry {
    let text = fs::read_to_string(path).unwrap();
    let mut reader = TextReader::new(text.as_bytes());
    let mut entry = Entry::default();
    let mut in_entry = false;
    while let Some(item) = reader.next_item().unwrap() {
        match item {
            Item::Module(module) => {
                let layout = module.entry_computation_layout.unwrap();
                entry.parameters = layout.parameters.iter().map(ToString::to_string).collect();
                entry.result = layout.result.as_ref().unwrap().to_string();
            }
            Item::Computation(c) => in_entry = c.entry,
            Item::Instruction(i) if in_entry => {
                let canonical = i.attribute("sharding").map(|s| sharding::canonical_text(s).unwrap());
                if i.opcode == "parameter" {
                    let n: usize = i.operands.trim().parse().unwrap();
                    if let Some(s) = canonical {
                        entry.shardings.insert(n, s);
                    }
                } else if i.root {
                    entry.root_sharding = canonical;
                }
            }
            _ => {}
        }
    }
    entry
}

/// The element shapes of a result: the tuple's elements when the function has several results
/// (a single result is the shape itself).
fn result_elements(result: &str, count: usize) -> Vec<String> {
    if count == 1 {
        return vec![result.to_owned()];
    }
    let shape = xla_shape::text::parse_shape_raw(result).unwrap();
    shape.tuple_shapes.iter().map(ToString::to_string).collect()
}

/// The ROOT's sharding for result `index` of `count`: the element of a tuple sharding.
fn root_element(root: Option<&str>, index: usize, count: usize) -> Option<String> {
    let root = root?;
    if count == 1 {
        return Some(root.to_owned());
    }
    let parsed = sharding::parse(root).unwrap();
    match parsed.tuple_elements() {
        Some(elements) => elements.get(index).map(ToString::to_string),
        // A non-tuple sharding on a tuple applies to every element.
        None => Some(parsed.to_string()),
    }
}

/// The shape text without its layout (`f32[8,8]{0,1}` → `f32[8,8]`).
fn without_layout(shape: &str) -> &str {
    shape.split('{').next().unwrap()
}

/// The layout of the compiled module's entry computation layout, for the programs whose
/// layout only the compiler states (`mhlo.layout_mode`, `mhlo.memory_kind`).
fn compiled_layouts(name: &str) -> Option<(Vec<String>, Vec<String>)> {
    let path = format!("{DIR}/{name}.compiled.txt");
    let text = fs::read_to_string(path).ok()?;
    let mut reader = TextReader::new(text.as_bytes());
    let Some(Item::Module(module)) = reader.next_item().unwrap() else { panic!("{name}") };
    let layout = module.entry_computation_layout.unwrap();
    let parameters = layout.parameters.iter().map(|s| layout_of(&s.to_string())).collect();
    let result = layout.result.as_ref().unwrap();
    let results = if result.tuple_shapes.is_empty() {
        vec![layout_of(&result.to_string())]
    } else {
        result.tuple_shapes.iter().map(|s| layout_of(&s.to_string())).collect()
    };
    Some((parameters, results))
}

fn layout_of(shape: &str) -> String {
    shape.find('{').map_or_else(String::new, |at| shape[at..].to_owned())
}

#[test]
fn entry_functions_equal_the_hlo_entry_computations() {
    let names = programs();
    let (mut compared, mut parameters, mut results, mut sharded) = (0, 0, 0, 0);
    assert!(names.len() >= 24, "{names:?}");
    for name in &names {
        let mlir = listing(&format!("{DIR}/{name}.mlir"));
        let hlo = hlo_entry(&format!("{DIR}/{name}.txt"));
        let compiled = compiled_layouts(name);
        let entries: Vec<&Value> = mlir["shapes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["site"].as_str().unwrap().starts_with("main / ") && e["kind"] != "instruction")
            .collect();
        let params: Vec<&&Value> = entries.iter().filter(|e| e["kind"] == "parameter").collect();
        let outs: Vec<&&Value> = entries.iter().filter(|e| e["kind"] == "result").collect();
        assert_eq!(params.len(), hlo.parameters.len(), "{name}: parameters");
        for (n, (entry, shape)) in params.iter().zip(&hlo.parameters).enumerate() {
            assert_eq!(entry["site"], format!("main / parameter {n}"), "{name}");
            let listed = entry["shape"].as_str().unwrap();
            assert_eq!(entry["valid"], true, "{name} {n}");
            match &compiled {
                // The lowered HLO does not carry the stated layout; the compiled module does.
                Some((layouts, _)) => {
                    assert_eq!(without_layout(listed), without_layout(shape), "{name} parameter {n}");
                    assert_eq!(layout_of(listed), layouts[n], "{name} parameter {n} layout");
                }
                None => assert_eq!(listed, shape, "{name} parameter {n}"),
            }
            assert_eq!(entry["sharding"].as_str(), hlo.shardings.get(&n).map(String::as_str), "{name} parameter {n}");
            sharded += usize::from(entry["sharding"].is_string());
            parameters += 1;
        }
        let elements = result_elements(&hlo.result, outs.len());
        assert_eq!(outs.len(), elements.len(), "{name}: results");
        for (n, (entry, shape)) in outs.iter().zip(&elements).enumerate() {
            assert_eq!(entry["site"], format!("main / result {n}"), "{name}");
            let listed = entry["shape"].as_str().unwrap();
            match &compiled {
                Some((_, layouts)) => {
                    assert_eq!(without_layout(listed), without_layout(shape), "{name} result {n}");
                    assert_eq!(layout_of(listed), layouts[n], "{name} result {n} layout");
                }
                None => assert_eq!(listed, shape, "{name} result {n}"),
            }
            let xla = root_element(hlo.root_sharding.as_deref(), n, outs.len());
            match entry["sharding"].as_str() {
                Some(s) => {
                    assert_eq!(Some(s), xla.as_deref(), "{name} result {n}");
                    sharded += 1;
                }
                // No sharding: XLA gives none, or the `{replicated}` filler of a ROOT tuple.
                None => assert!(matches!(xla.as_deref(), None | Some("{replicated}")), "{name} result {n}: {xla:?}"),
            }
            results += 1;
        }
        // The proto of the same lowering says the same shapes.
        let proto = listing(&format!("{DIR}/{name}.pb"));
        let host: Vec<&str> = proto["shapes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["site"].as_str().unwrap().starts_with("host_program_shape / parameter"))
            .map(|e| e["shape"].as_str().unwrap())
            .collect();
        assert_eq!(host, hlo.parameters, "{name}.pb");
        compared += 1;
    }
    eprintln!("{compared} programs: {parameters} parameters and {results} results equal ({sharded} sharded)");
    assert!(compared >= 24 && parameters >= 60 && results >= 40, "{compared} {parameters} {results}");
}

/// Every operation whose result types the text states is listed, with a valid shape.
#[test]
fn operations_are_listed_with_their_stated_types() {
    for name in programs() {
        let mlir = listing(&format!("{DIR}/{name}.mlir"));
        let ops: Vec<&Value> =
            mlir["shapes"].as_array().unwrap().iter().filter(|e| e["kind"] == "instruction").collect();
        assert!(!ops.is_empty(), "{name}");
        assert!(ops.iter().all(|e| e["valid"] == true), "{name}");
        assert_eq!(mlir["invalid"], 0, "{name}");
    }
    // A `while` with two results, a `case` whose types follow its regions, a manual computation.
    let nested = listing(&format!("{DIR}/nested.sdy.mlir"));
    let sites: Vec<&str> = nested["shapes"].as_array().unwrap().iter().map(|e| e["site"].as_str().unwrap()).collect();
    assert!(sites.iter().any(|s| s.ends_with("#1")), "{sites:?}");
    let shard_map = listing(&format!("{DIR}/shard_map.sdy.mlir"));
    let manual: Vec<&Value> = shard_map["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["site"].as_str().unwrap().starts_with("main / %0#"))
        .collect();
    assert_eq!(manual.len(), 2, "{shard_map}");
    assert_eq!(manual[1]["shape"], "f32[2,2]{1,0}");
}

/// The attributes beside the shapes: donation, result paths, memory kinds, layout modes.
#[test]
fn argument_attributes_are_listed() {
    let donation = listing(&format!("{DIR}/donation.sdy.mlir"));
    let first = &donation["shapes"][0];
    assert_eq!(first["buffer_donor"], true);
    let memory = listing(&format!("{DIR}/memory_kind.gspmd.mlir"));
    let result = memory["shapes"].as_array().unwrap().iter().find(|e| e["site"] == "main / result 0").unwrap();
    assert_eq!(result["memory_kind"], "pinned_host");
    assert_eq!(result["shape"], "f32[8,8]{1,0:S(5)}");
    assert_eq!(result["result_info"], "result");
    let layout = listing(&format!("{DIR}/layout.sdy.mlir"));
    assert_eq!(layout["shapes"][0]["layout_mode"], "{0,1}");
    assert_eq!(layout["shapes"][0]["shape"], "f32[8,8]{0,1}");
}

/// `info` reads `.mlir` the same way: the entry function's parameters and results, described.
#[test]
fn info_describes_the_entry_function() {
    let (status, out, err) = run(&["info", "--json", &format!("{DIR}/mesh2x4.sdy.mlir")], b"");
    assert_eq!(status, 0, "{err}");
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["module"], "jit__lambda");
    let sites: Vec<&str> =
        info["entry_computation_layout"].as_array().unwrap().iter().map(|e| e["site"].as_str().unwrap()).collect();
    assert_eq!(sites, ["main / parameter 0", "main / result 0", "main / result 1"]);
    assert_eq!(info["sharded_instructions"], 2);
    let (status, out, _) = run(&["info", &format!("{DIR}/mesh2x4.sdy.mlir")], b"");
    assert_eq!(status, 0);
    assert!(out.starts_with("module jit__lambda: 1 computation"), "{out}");
}

/// Detection from the content, `--format mlir`, stdin, and errors with line and column.
#[test]
fn detection_forcing_and_errors() {
    let text =
        "module {\n  func.func @main(%a: tensor<2xui4>) -> tensor<2xui4> {\n    return %a : tensor<2xui4>\n  }\n}\n";
    let (status, out, err) = run(&["hlo", "--json"], text.as_bytes());
    assert_eq!(status, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["shapes"][0]["shape"], "u4[2]{0}");
    assert_eq!(json["computations"], 1);
    let (status, _, _) = run(&["hlo", "--format", "mlir"], format!("\n\n{text}").as_bytes());
    assert_eq!(status, 0);
    let bad = "module {\n  func.func @main(%a: tensor<2xindex>) {\n  }\n}\n";
    let (status, out, err) = run(&["hlo"], bad.as_bytes());
    assert_eq!((status, out.as_str()), (1, ""));
    assert!(err.contains("<stdin>:2:"), "{err}");
    assert!(err.contains("an element type XLA has"), "{err}");
    let (status, _, err) = run(&["hlo"], b"module {\n  func.func @main() {\n");
    assert_eq!(status, 1);
    assert!(err.contains("unexpected end of input"), "{err}");
    let (status, _, err) = run(&["values", "--format", "mlir"], text.as_bytes());
    assert_eq!(status, 1);
    assert!(err.contains("StableHLO"), "{err}");
}

/// `jax.export` of a shape-polymorphic function: dynamic dimensions, a nested call with three
/// results, `jax.uses_shape_polymorphism`.
#[test]
fn an_exported_polymorphic_module_is_read() {
    let listing = listing(&format!("{DIR}/poly.export.mlir"));
    let shapes: Vec<(&str, &str)> = listing["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["site"].as_str().unwrap(), e["shape"].as_str().unwrap()))
        .collect();
    assert_eq!(listing["computations"], 2);
    assert_eq!(listing["invalid"], 0);
    for expected in [
        ("main / parameter 0", "f32[?,4]{1,0}"),
        ("main / parameter 1", "s8[3]{0}"),
        ("main / result 1", "f32[]"),
        ("main / %2#0", "f32[?,4]{1,0}"),
        ("_wrapped_jax_export_main / parameter 0", "s32[]"),
    ] {
        assert!(shapes.contains(&expected), "{expected:?} in {shapes:?}");
    }
}
