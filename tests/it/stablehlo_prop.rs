//! Property and edge tests of the StableHLO reader (`xla_shape::hlo::mlir`): tensor types of
//! every element type and rank read back to the XLA shape written independently here; attribute
//! soups that must be skipped; several meshes; regions; errors with positions.

use proptest::prelude::*;
use xla_shape::Error;
use xla_shape::hlo::mlir::{Item, MlirReader, ShardingAttribute};

/// MLIR element types and XLA's names, written out here independently of the reader's table.
const TYPES: [(&str, &str); 24] = [
    ("i1", "pred"),
    ("i2", "s2"),
    ("i4", "s4"),
    ("i8", "s8"),
    ("i16", "s16"),
    ("i32", "s32"),
    ("i64", "s64"),
    ("ui2", "u2"),
    ("ui4", "u4"),
    ("ui8", "u8"),
    ("ui16", "u16"),
    ("ui32", "u32"),
    ("ui64", "u64"),
    ("f16", "f16"),
    ("bf16", "bf16"),
    ("f32", "f32"),
    ("f64", "f64"),
    ("f8E5M2", "f8e5m2"),
    ("f8E4M3FN", "f8e4m3fn"),
    ("f8E4M3FNUZ", "f8e4m3fnuz"),
    ("f8E8M0FNU", "f8e8m0fnu"),
    ("f4E2M1FN", "f4e2m1fn"),
    ("complex<f32>", "c64"),
    ("complex<f64>", "c128"),
];

/// The parameters' and results' shapes and the op results' shapes of `text`.
fn read(text: &str) -> Result<(Vec<String>, Vec<String>), Error> {
    let mut reader = MlirReader::new(text.as_bytes());
    let (mut values, mut ops) = (Vec::new(), Vec::new());
    while let Some(item) = reader.next_item()? {
        match item {
            Item::Function(f) => {
                values.extend(f.parameters.iter().chain(f.results).map(|v| v.shape.as_ref().unwrap().to_string()));
            }
            Item::Op(op) => {
                ops.extend((0..op.len()).map(|i| format!("{}={}", op.result_name(i), op.shape(i).unwrap())));
            }
            _ => {}
        }
    }
    Ok((values, ops))
}

/// An attribute value the reader must skip: words, numbers, strings with escapes, nested groups
/// of every bracket kind, arrows.
fn soup() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        "[a-z][a-z0-9_.]{0,6}",
        "-?[0-9]{1,4} : i32",
        "[a-z{}()<>\\[\\], =:]{0,8}".prop_map(|s| format!("\"{s}\\\"x\\\\{s}\"")),
        Just("affine_map<(d0) -> (d0)>".to_owned()),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        (prop::collection::vec(inner, 0..4), 0..4usize).prop_map(|(items, bracket)| {
            let (open, close) = [("{", "}"), ("[", "]"), ("(", ")"), ("#x.y<", ">")][bracket];
            format!("{open}{}{close}", items.join(", "))
        })
    })
}

proptest! {
    /// A tensor of any element type, rank and dynamic dimensions reads back to the XLA shape
    /// written here, as a parameter (with an attribute soup around the sharding) and as an
    /// operation's result.
    #[test]
    fn tensor_types_read_back(
        element in 0..TYPES.len(),
        dims in prop::collection::vec(prop_oneof![(0u64..100).prop_map(Some), Just(None)], 0..4),
        soup in soup(),
    ) {
        let (mlir, xla) = TYPES[element];
        let mut tensor = String::from("tensor<");
        let mut shape = format!("{xla}[");
        for (i, d) in dims.iter().enumerate() {
            tensor.push_str(&d.map_or_else(|| "?".to_owned(), |d| d.to_string()));
            tensor.push('x');
            shape.push_str(&d.map_or_else(|| "?".to_owned(), |d| d.to_string()));
            if i + 1 < dims.len() {
                shape.push(',');
            }
        }
        tensor.push_str(mlir);
        tensor.push('>');
        shape.push(']');
        if !dims.is_empty() {
            let order: Vec<String> = (0..dims.len()).rev().map(|i| i.to_string()).collect();
            shape.push('{');
            shape.push_str(&order.join(","));
            shape.push('}');
        }
        let text = format!(
            "module @m {{\n  func.func public @main(%arg0: {tensor} {{a.b = {soup}, mhlo.sharding = \"{{replicated}}\", c = {soup}}} loc(\"x\"(#loc1))) -> ({tensor} {{jax.result_info = \"r\"}}) {{\n    %0 = x.y %arg0 {{k = {soup}}} : {tensor} loc(#loc2)\n    return %0 : {tensor}\n  }} loc(#loc)\n}} loc(#loc)\n"
        );
        let (values, ops) = read(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(values, vec![shape.clone(), shape.clone()]);
        prop_assert_eq!(ops, vec![format!("%0={shape}")]);
    }

    /// Any text: the reader returns items or an error, never panics, and stops after an error.
    #[test]
    fn any_text_is_read_or_refused(text in "(module \\{\n|func.func @f\\(|%[0-9] = |[a-z<>(){}\\[\\]\":,=@%# \n-]){0,30}") {
        let mut reader = MlirReader::new(text.as_bytes());
        let mut items = 0;
        loop {
            match reader.next_item() {
                Ok(Some(_)) => items += 1,
                Ok(None) => break,
                Err(_) => {
                    prop_assert!(reader.next_item().unwrap().is_none());
                    break;
                }
            }
            prop_assert!(items < 1000);
        }
    }
}

#[test]
fn meshes_functions_and_regions() {
    let text = r#"#loc = loc(unknown)
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.frontend_attributes = {a = "}"}} {
  sdy.mesh @mesh = <["x"=2, "y"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}} loc(#loc)
  sdy.mesh @other = <["z"=8], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@other, [{"z"}]>, tf.aliasing_output = 0 : i32}, %arg1: !stablehlo.token, %arg2: tensor<i1>) -> (tensor<8xf32>, !stablehlo.token) {
    %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg2) : tensor<8xf32>, tensor<i1>
     cond {
      stablehlo.return %iterArg_0 : tensor<i1>
    } do {
      stablehlo.return %iterArg, %iterArg_0 : tensor<8xf32>, tensor<i1>
    }
    %1 = "stablehlo.case"(%arg2) ({
      %2 = stablehlo.negate %0#0 : tensor<8xf32>
      stablehlo.return %2 : tensor<8xf32>
    }, {
      stablehlo.return %0#0 : tensor<8xf32>
    }) : (tensor<i1>) -> tensor<8xf32>
    %3, %4 = "x.pair"(%1) : (tensor<8xf32>) -> (tensor<?x2xbf16, #stablehlo.bounds<4, ?>>, tuple<tensor<i4>, !stablehlo.token>)
    return %1, %arg1 : tensor<8xf32>, !stablehlo.token
  }
  func.func private @decl(tensor<f64>) -> tensor<f64>
}
"#;
    let mut reader = MlirReader::new(text.as_bytes());
    let mut seen = Vec::new();
    while let Some(item) = reader.next_item().unwrap() {
        match item {
            Item::Module(m) => seen.push(format!("module {:?}", m.name)),
            Item::Mesh(m) => seen.push(format!("mesh {} {}", m.name, m.mesh)),
            Item::Function(f) => {
                let p = &f.parameters[0];
                if f.name == "main" {
                    assert!(f.is_entry());
                    assert_eq!(p.attributes.aliasing_output, Some(0));
                    assert!(
                        matches!(&p.attributes.sharding, Some(ShardingAttribute::Shardy(s)) if s.contains("@other"))
                    );
                    assert_eq!(p.name.as_deref(), Some("%arg0"));
                }
                let shapes: Vec<String> =
                    f.parameters.iter().chain(f.results).map(|v| v.shape.as_ref().unwrap().to_string()).collect();
                seen.push(format!("{} {:?} {}", f.name, f.visibility, shapes.join(" ")));
            }
            Item::Op(op) => {
                for i in 0..op.len() {
                    seen.push(format!("{} {} {}", op.name, op.result_name(i), op.shape(i).unwrap()));
                }
            }
            Item::FunctionEnd(name) => seen.push(format!("end {name}")),
        }
    }
    assert_eq!(
        seen,
        [
            "module Some(\"jit_f\")",
            "mesh mesh <[\"x\"=2, \"y\"=4]>",
            "mesh other <[\"z\"=8], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>",
            "main Some(\"public\") f32[8]{0} token[] pred[] f32[8]{0} token[]",
            "stablehlo.while %0#0 f32[8]{0}",
            "stablehlo.while %0#1 pred[]",
            "stablehlo.negate %2 f32[8]{0}",
            "stablehlo.case %1 f32[8]{0}",
            "x.pair %3 bf16[<=4,2]{1,0}",
            "x.pair %4 (s4[], token[])",
            "end main",
            "decl Some(\"private\") f64[] f64[]",
        ]
    );
}

#[test]
fn errors_have_lines_and_columns() {
    let cases = [
        ("module {\n  func.func @main(%a: tensor<2xindex>) {\n  }\n}\n", 2, "element type"),
        ("module {\n  func.func @main(%a: tensor<2xf32> {a = (]}) {\n  }\n}\n", 2, "`)`"),
        ("module {\n}\n}\n", 3, "no `}`"),
        ("stablehlo.add\n", 1, "`module` or `func.func`"),
        ("module {\n  func.func @main(%a: tensor<?xf32, #stablehlo.bounds<1, 2>>) {\n", 2, "bound"),
        ("module {\n  func.func @main() {\n", 3, "unexpected end"),
        ("", 1, "unexpected end"),
        ("module {\n  func.func @main(%a: tensor<2xf32> {mhlo.sharding = 1}) {\n  }\n}\n", 2, "a string"),
    ];
    for (text, line, phrase) in cases {
        let mut reader = MlirReader::new(text.as_bytes());
        let error = loop {
            match reader.next_item() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("{text}: no error"),
                Err(e) => break e,
            }
        };
        let Error::HloText(detail) = &error else { panic!("{error}") };
        assert_eq!(detail.line, line, "{text}: {error}");
        assert!(error.to_string().contains(phrase), "{text}: {error}");
    }
}

/// A declared result count allocates nothing: the op is listed only when the stated types are
/// as many.
#[test]
fn result_counts_are_not_allocated() {
    let text = "module {\n  func.func @f() {\n    %0:4000000000 = x.y : tensor<f32>\n    %1:2, %2 = x.z : tensor<f32>, tensor<i1>, tensor<2xui8>\n  }\n}\n";
    let (_, ops) = read(text).unwrap();
    assert_eq!(ops, ["%1#0=f32[]", "%1#1=pred[]", "%2=u8[2]{0}"]);
}
