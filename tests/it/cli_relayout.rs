//! `xla-shape relayout` in-process (issue 14): the README's examples round-trip, wrong lengths
//! and mismatched shapes are exit 1 with the numbers, `.npy` in and out.

use xla_shape::cli;
use xla_shape::make::{LayoutSpec, make_shape_with_layout};
use xla_shape::proto::PaddingValue;
use xla_shape::{PrimitiveType, encode};

fn run(args: &[&str], stdin: &[u8]) -> (u8, Vec<u8>, String) {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut command = vec!["xla-shape", "relayout"];
    command.extend_from_slice(args);
    let status = cli::run(command, &mut &stdin[..], &mut stdout, &mut stderr);
    (status, stdout, String::from_utf8(stderr).unwrap())
}

fn temp(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("xla-shape-cli-relayout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

fn f32s(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

#[test]
fn the_readme_examples_round_trip() {
    // bf16[16,256] TPU-tiled → row-major → tiled again gives the same bytes.
    let (tiled, rm) = ("bf16[16,256]{1,0:T(8,128)(2,1)}", "bf16[16,256]{1,0}");
    let dump: Vec<u8> = (0..16 * 256 * 2u32).map(|k| u8::try_from(k * 7 % 251).unwrap()).collect();
    let (status, row_major, err) = run(&[tiled, rm], &dump);
    assert_eq!(status, 0, "{err}");
    let (status, back, _) = run(&[rm, tiled], &row_major);
    assert_eq!((status, back), (0, dump));
    // Element (1, 0) of the tiled dump is slot 1 (the docs' offset example); row-major slot 256.
    assert_eq!(row_major[512..514], [14, 21]);
    // The column-major 2×3 array to .npy and back, through files and --output.
    let col_major = f32s([1., 4., 2., 5., 3., 6.]);
    let input = temp("col_major.bin", &col_major);
    let npy = std::env::temp_dir().join(format!("xla-shape-cli-relayout-{}/a.npy", std::process::id()));
    let (status, out, err) = run(&["--npy-out", "f32[2,3]{0,1}", &input, "-o", npy.to_str().unwrap()], b"");
    assert_eq!((status, out.len()), (0, 0), "{err}");
    let file = std::fs::read(&npy).unwrap();
    assert!(file.starts_with(b"\x93NUMPY"));
    assert!(String::from_utf8_lossy(&file).contains("'descr': '<f4', 'fortran_order': False, 'shape': (2, 3"));
    assert!(file.ends_with(&f32s([1., 2., 3., 4., 5., 6.])));
    let (status, again, err) = run(&["--npy-in", "f32[2,3]{0,1}", npy.to_str().unwrap()], b"");
    assert_eq!((status, again), (0, col_major), "{err}");
}

#[test]
fn a_fortran_order_npy_is_read_as_strided() {
    // A hand-written version 1.0 header: 2×3 f4, Fortran order.
    let header = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }";
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    let padded = format!("{header:<117}\n");
    file.extend_from_slice(&u16::try_from(padded.len()).unwrap().to_le_bytes());
    file.extend_from_slice(padded.as_bytes());
    file.extend_from_slice(&f32s([1., 4., 2., 5., 3., 6.]));
    let (status, out, err) = run(&["--npy-in", "f32[2,3]{1,0}"], &file);
    assert_eq!((status, out), (0, f32s([1., 2., 3., 4., 5., 6.])), "{err}");
}

#[test]
fn wrong_lengths_say_expected_and_actual() {
    let (status, out, err) = run(&["f32[2,3]{0,1}", "f32[2,3]{1,0}"], &[0; 23]);
    assert_eq!((status, out.len()), (1, 0));
    assert!(err.contains("input has 23 bytes, expected 24"), "{err}");
    let (status, _, err) = run(&["f32[2,3]{0,1}", "f32[2,3]{1,0}"], &[0; 30]);
    assert_eq!(status, 1);
    assert!(err.contains("input has 25 or more bytes, expected 24"), "{err}");
}

#[test]
fn mismatched_shapes_are_exit_1() {
    let (status, _, err) = run(&["f32[2,3]", "f32[3,2]"], &[0; 24]);
    assert_eq!(status, 1);
    assert!(err.contains("dimensions[0] differs: source 2, destination 3"), "{err}");
    let (status, _, err) = run(&["f32[2,3]", "s32[2,3]"], &[0; 24]);
    assert_eq!(status, 1);
    assert!(err.contains("element types differ: source f32, destination s32"), "{err}");
    let (status, _, _) = run(&["f32[2,3]"], &[0; 24]);
    assert_eq!(status, 2);
}

#[test]
fn legacy_padding_comes_from_a_proto_file() {
    let padded = make_shape_with_layout(
        PrimitiveType::S8,
        &[2, 3],
        &LayoutSpec::new(&[0, 1]).padded_dimensions(&[3, 5], PaddingValue::HighestPad),
    )
    .unwrap();
    let proto = temp("padded.pb", &encode(padded.proto()));
    let (status, out, err) = run(&["--to-file", &proto, "s8[2,3]{1,0}"], &[1, 2, 3, 4, 5, 6]);
    assert_eq!(status, 0, "{err}");
    // Column-major over padded [3,5]: a d pad | b e pad | c f pad | then two padded columns.
    assert_eq!(out, [1, 4, 127, 2, 5, 127, 3, 6, 127, 127, 127, 127, 127, 127, 127]);
    let (status, back, err) = run(&["--from-file", &proto, "s8[2,3]{1,0}"], &out);
    assert_eq!((status, back), (0, vec![1, 2, 3, 4, 5, 6]), "{err}");
}
