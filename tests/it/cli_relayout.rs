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

/// `bytes` written to `name` in `dir`, as a path string.
fn temp(dir: &std::path::Path, name: &str, bytes: &[u8]) -> String {
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
    let tmp = scratch();
    let input = temp(tmp.path(), "col_major.bin", &col_major);
    let npy = tmp.path().join("a.npy");
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
    assert!(err.contains("input has 30 or more bytes, expected 24"), "{err}");
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
    let tmp = scratch();
    let proto = temp(tmp.path(), "padded.pb", &encode(padded.proto()));
    let (status, out, err) = run(&["--to-file", &proto, "s8[2,3]{1,0}"], &[1, 2, 3, 4, 5, 6]);
    assert_eq!(status, 0, "{err}");
    // Column-major over padded [3,5]: a d pad | b e pad | c f pad | then two padded columns.
    assert_eq!(out, [1, 4, 127, 2, 5, 127, 3, 6, 127, 127, 127, 127, 127, 127, 127]);
    let (status, back, err) = run(&["--from-file", &proto, "s8[2,3]{1,0}"], &out);
    assert_eq!((status, back), (0, vec![1, 2, 3, 4, 5, 6]), "{err}");
}

// Issue 25: bounded memory, parts written in order, files mapped, pipes spooled.

/// A fresh directory for one test's files, removed when dropped (even when the test fails).
fn scratch() -> tempfile::TempDir {
    tempfile::TempDir::new().unwrap()
}

/// Deterministic bytes.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|k| u8::try_from((k * 7 + k / 251) % 251).unwrap()).collect()
}

fn plan_output(from: &str, to: &str, input: &[u8]) -> Vec<u8> {
    let (a, b): (xla_shape::ShapeBuf, xla_shape::ShapeBuf) = (from.parse().unwrap(), to.parse().unwrap());
    let plan = xla_shape::relayout::RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap();
    plan.run_to_vec(input).unwrap()
}

/// Arrays of a few MiB with `--max-memory 1` (parts of 256 KiB): tiled, sub-byte, padded and
/// transposed layouts give the in-memory plan's bytes whether the input is a mapped file, a file
/// read with `--no-mmap`, or a stream (spooled past 512 KiB), on one thread or two, to stdout
/// or to `--output`.
#[test]
fn parts_written_in_order_match_the_in_memory_plan() {
    let tmp = scratch();
    let dir = tmp.path();
    let cases = [
        ("f32[1000,700]{0,1}", "f32[1000,700]{1,0}"),
        ("bf16[1000,1024]{1,0:T(8,128)(2,1)}", "bf16[1000,1024]{1,0}"),
        ("bf16[1000,1024]{1,0}", "bf16[1000,1024]{0,1:T(8,128)(2,1)}"),
        ("s4[3000001]{0:E(4)}", "s4[3000001]{0}"),
        ("s4[1000,3001]{0,1}", "s4[1000,3001]{1,0:E(4)}"),
        ("f32[333,1031]{1,0:T(8,128)}", "f32[333,1031]{0,1:T(4,128)}"),
        ("f32[100,100,100]{2,1,0}", "f32[100,100,100]{1,0,2}"),
    ];
    for (from, to) in cases {
        let len = usize::try_from(
            xla_shape::size::storage_bytes(from.parse::<xla_shape::ShapeBuf>().unwrap().as_array().unwrap()).unwrap(),
        )
        .unwrap();
        let input = pattern(len);
        let expected = plan_output(from, to, &input);
        assert!(expected.len() > 1 << 20, "{from}: {} bytes is one part", expected.len());
        let file = dir.join("input.bin");
        std::fs::write(&file, &input).unwrap();
        let file = file.to_str().unwrap();
        let out = dir.join("out.bin");
        for extra in [&[][..], &["--no-mmap"], &["--threads", "2"], &["--threads", "1"]] {
            let mut args = vec!["--max-memory", "1", from, to, file];
            args.extend_from_slice(extra);
            let (status, stdout, err) = run(&args, b"");
            assert_eq!(status, 0, "{from} {extra:?}: {err}");
            assert!(stdout == expected, "{from} -> {to} {extra:?}: the parts differ from the plan");
        }
        let (status, stdout, err) = run(&["--max-memory", "1", from, to], &input);
        assert_eq!(status, 0, "{from} from a stream: {err}");
        assert!(stdout == expected, "{from} -> {to} from a stream: the parts differ from the plan");
        let (status, stdout, err) = run(&["--max-memory", "1", from, to, file, "-o", out.to_str().unwrap()], b"");
        assert_eq!((status, stdout.len()), (0, 0), "{err}");
        assert!(std::fs::read(&out).unwrap() == expected, "{from} -> {to} --output");
    }
    // Legacy padding (a proto file) through parts.
    let padded = make_shape_with_layout(
        PrimitiveType::S16,
        &[700, 900],
        &LayoutSpec::new(&[0, 1]).padded_dimensions(&[701, 1001], PaddingValue::HighestPad),
    )
    .unwrap();
    let proto = dir.join("padded.pb");
    std::fs::write(&proto, encode(padded.proto())).unwrap();
    let input = pattern(700 * 900 * 2);
    let (status, whole, err) = run(&["--to-file", proto.to_str().unwrap(), "s16[700,900]{1,0}"], &input);
    assert_eq!(status, 0, "{err}");
    let (status, parts, err) =
        run(&["--max-memory", "1", "--to-file", proto.to_str().unwrap(), "s16[700,900]{1,0}"], &input);
    assert_eq!(status, 0, "{err}");
    assert_eq!(whole.len(), 701 * 1001 * 2);
    assert!(parts == whole, "legacy padding through parts");
    assert_eq!(whole[whole.len() - 2..], [0xff, 0x7f]);
}

/// An output that fails part-way (here after 1 MiB of a 16 MiB transpose in parts of 256 KiB)
/// is exit 1 with the reason, and stops the thread computing the parts (the run returns).
#[test]
fn a_failing_output_stops_the_parts() {
    struct Fails(usize);
    impl std::io::Write for Fails {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0 >= 1 << 20 {
                return Err(std::io::Error::other("the disk is full"));
            }
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let input = pattern(16 << 20);
    let mut out = Fails(0);
    let mut stderr = Vec::new();
    let args = ["xla-shape", "relayout", "--max-memory", "1", "f32[2048,2048]{0,1}", "f32[2048,2048]{1,0}"];
    let status = cli::run(args, &mut &input[..], &mut out, &mut stderr);
    let stderr = String::from_utf8(stderr).unwrap();
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("cannot write the output: the disk is full"), "{stderr}");
    assert!(out.0 >= 1 << 20 && out.0 < 2 << 20, "{} bytes written", out.0);
}

/// `.npy` in and out take the same path: the header is read (bounded), the data mapped or
/// streamed; f16 and complex types are written too.
#[test]
fn npy_goes_through_parts() {
    let tmp = scratch();
    let dir = tmp.path();
    let input = pattern(600 * 1000 * 2);
    let npy = dir.join("a.npy");
    let (status, _, err) =
        run(&["--max-memory", "1", "--npy-out", "f16[600,1000]{0,1}", "-o", npy.to_str().unwrap()], &input);
    assert_eq!(status, 0, "{err}");
    let file = std::fs::read(&npy).unwrap();
    assert!(
        String::from_utf8_lossy(&file[..128]).contains("'descr': '<f2', 'fortran_order': False, 'shape': (600, 1000")
    );
    let data = &file[file.len() - 600 * 1000 * 2..];
    assert!(data == plan_output("f16[600,1000]{0,1}", "f16[600,1000]{1,0}", &input));
    for source in [&[npy.to_str().unwrap()][..], &[]] {
        let mut args = vec!["--max-memory", "1", "--npy-in", "f16[600,1000]{0,1}"];
        args.extend_from_slice(source);
        let (status, back, err) = run(&args, &file);
        assert_eq!(status, 0, "{err}");
        assert!(back == input, "{source:?}");
    }
    // A header that claims more than the input cap is refused before it is read.
    let mut huge = b"\x93NUMPY\x02\x00".to_vec();
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    let (status, _, err) = run(&["--npy-in", "f16[2]{0}"], &huge);
    assert_eq!(status, 1);
    assert!(err.contains("input size limit exceeded"), "{err}");
}

/// `--explain` prints the plan's decision and reads no input.
#[test]
fn explain_shows_the_plan() {
    let (status, out, err) = run(&["--explain", "f32[4096,4096]{0,1}", "f32[4096,4096]{1,0}"], b"");
    assert_eq!(status, 0, "{err}");
    let out = String::from_utf8(out).unwrap();
    assert_eq!(
        out,
        "1 box(es); whole elements of 4 bytes, strides in bytes; streaming stores\n\
         box 0 at source 0, destination 0: axes 4096×(4, 16384) 4096×(16384, 4); transpose of axis 0 \
         (source-minor) and the innermost axis, 64-byte micro-tiles in bands of 256 bytes of destination row \
         (128 where the source runs straddle cache lines: the source rows are a multiple of 16 KiB apart)\n"
    );
    // Rows longer than a part's 512: into a file, column blocks (rule 15); a part of 1 MiB
    // (`--max-memory 4`) holds 2 KiB of 512 rows.
    let (status, out, _) =
        run(&["--explain", "--max-memory", "4", "f32[4096,4096]{0,1}", "f32[4096,4096]{1,0}", "-o", "x"], b"");
    assert_eq!(status, 0);
    assert!(String::from_utf8(out).unwrap().ends_with(
        "into a regular file (--output): column blocks of 512 destination rows × 512 columns, each row written at its offset\n"
    ));
    // Destination rows shorter than a band (NCHW -> NHWC's 64 channels): the source in order.
    let (status, out, _) = run(&["--explain", "f32[16,64,128,128]{3,2,1,0}", "f32[16,64,128,128]{1,3,2,0}"], b"");
    assert_eq!(status, 0);
    assert!(String::from_utf8(out).unwrap().contains("64-byte micro-tiles in source order (streamed lines)"));
    let (status, out, _) = run(&["--explain", "s4[64]{0:E(4)}", "s4[64]{0}"], b"");
    assert_eq!(status, 0);
    assert!(String::from_utf8(out).unwrap().contains("unpack 4-bit elements"));
    let (status, out, _) = run(&["--explain", "f32[4,6]{1,0:T(*,2)}", "f32[4,6]{1,0}"], b"");
    assert_eq!(status, 0);
    assert!(String::from_utf8(out).unwrap().starts_with("general: element by element"));
}

/// The element offsets of a dense layout: each dimension's stride in elements, from
/// `minor_to_major` (the reference the column blocks are held to, written here, not the crate's).
fn dense_strides(dims: &[usize], minor_to_major: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; dims.len()];
    let mut step = 1;
    for &d in minor_to_major {
        strides[d] = step;
        step *= dims[d];
    }
    strides
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..proptest::prelude::ProptestConfig::default() })]

    /// A transpose written to a file in column blocks (`--max-memory 1`: parts of 256 KiB, so
    /// blocks of at most 512 rows and 32–512 columns): every element where the independent
    /// reference puts it, for rank 2 and 3, element widths 1–16 bytes, heights and row lengths
    /// on both sides of a block's, and any order of the other dimensions.
    #[test]
    fn column_blocks_put_every_element_where_the_reference_does(
        ty in proptest::sample::select(vec![("u8", 1usize), ("bf16", 2), ("f32", 4), ("f64", 8), ("c128", 16)]),
        height in 300usize..1100,
        per_block in 1usize..4,
        extra in 0usize..40,
        outer in 1usize..3,
        rank3 in proptest::bool::ANY,
        dst_outer_first in proptest::bool::ANY,
        src_outer_first in proptest::bool::ANY,
    ) {
        let (name, width) = ty;
        // A block's columns at this height: a part (256 KiB) over at most 512 rows.
        let cols = (256 << 10) / (height.min(512) * width);
        let extent = cols * per_block + extra + 1;
        // Dimension 0 is the destination's minor one, 1 its second-minor and the source's minor.
        let (dims, dst_m2m, src_m2m): (Vec<usize>, Vec<usize>, Vec<usize>) = if rank3 {
            (
                vec![extent, height, outer],
                vec![0, 1, 2],
                if src_outer_first { vec![1, 2, 0] } else { vec![1, 0, 2] },
            )
        } else {
            (vec![extent, height], vec![0, 1], vec![1, 0])
        };
        // The destination's outer dimension may also come first in the logical order.
        let (dims, dst_m2m, src_m2m) = if rank3 && dst_outer_first {
            let map = |d: usize| (d + 1) % 3;
            let mut moved = vec![0; 3];
            for (d, &e) in dims.iter().enumerate() {
                moved[map(d)] = e;
            }
            (moved, dst_m2m.into_iter().map(map).collect(), src_m2m.into_iter().map(map).collect())
        } else {
            (dims, dst_m2m, src_m2m)
        };
        let text = |m2m: &[usize]| {
            let d: Vec<String> = dims.iter().map(ToString::to_string).collect();
            let l: Vec<String> = m2m.iter().map(ToString::to_string).collect();
            format!("{name}[{}]{{{}}}", d.join(","), l.join(","))
        };
        let (from, to) = (text(&src_m2m), text(&dst_m2m));
        let elements: usize = dims.iter().product();
        let input = pattern(elements * width);
        let (src_strides, dst_strides) = (dense_strides(&dims, &src_m2m), dense_strides(&dims, &dst_m2m));
        let mut expected = vec![0u8; input.len()];
        let mut index = vec![0usize; dims.len()];
        for _ in 0..elements {
            let at = |strides: &[usize]| index.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>() * width;
            let (s, d) = (at(&src_strides), at(&dst_strides));
            expected[d..d + width].copy_from_slice(&input[s..s + width]);
            for (i, &e) in index.iter_mut().zip(&dims) {
                *i += 1;
                if *i < e {
                    break;
                }
                *i = 0;
            }
        }
        let tmp = scratch();
        let file = temp(tmp.path(), "in.bin", &input);
        let out = tmp.path().join("out.bin");
        // The file gets blocks (`--explain` says so), not parts of whole rows.
        let (status, explained, _) = run(&["--explain", "--max-memory", "1", &from, &to], b"");
        proptest::prop_assert_eq!(status, 0);
        let explained = String::from_utf8(explained).unwrap();
        proptest::prop_assert!(explained.contains("column blocks of"), "{} -> {}: {}", from, to, explained);
        for threads in ["1", "2"] {
            let args = ["--max-memory", "1", "--threads", threads, &from, &to, &file, "-o", out.to_str().unwrap()];
            let (status, _, err) = run(&args, b"");
            proptest::prop_assert_eq!(status, 0, "{} -> {}: {}", from, to, err);
            proptest::prop_assert!(std::fs::read(&out).unwrap() == expected, "{} -> {} on {} threads", from, to, threads);
        }
        // The output's directory holds the output only.
        proptest::prop_assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 2);
    }
}

/// An `--output` that exists and is not a regular file is written in place: a FIFO stays a
/// FIFO and its reader gets the bytes (renaming onto it would have replaced it, as it once
/// replaced `/dev/null`). A symbolic link is followed: the link stays, the file it names is
/// replaced and keeps its permissions. A directory is exit 1, and is left as it was.
#[cfg(unix)]
#[test]
fn outputs_that_are_not_plain_files() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let tmp = scratch();
    let dir = tmp.path();
    let input = dir.join("in.bin");
    std::fs::write(&input, f32s([1., 4., 2., 5., 3., 6.])).unwrap();
    let expected = f32s([1., 2., 3., 4., 5., 6.]);
    let relayout = |out: &std::path::Path| {
        run(&["f32[2,3]{0,1}", "f32[2,3]{1,0}", input.to_str().unwrap(), "-o", out.to_str().unwrap()], b"")
    };
    // A FIFO, read by another thread.
    let fifo = dir.join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let (status, _, err) = relayout(&fifo);
    assert_eq!(status, 0, "{err}");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    assert_eq!(reader.join().unwrap(), expected);
    // A link to an existing file of mode 0600, and a link to a link to no file yet.
    let (file, link) = (dir.join("file.bin"), dir.join("link.bin"));
    std::fs::write(&file, b"old").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink("file.bin", &link).unwrap();
    let (status, _, err) = relayout(&link);
    assert_eq!(status, 0, "{err}");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert_eq!(std::fs::read(&file).unwrap(), expected);
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    let (twice, dangling) = (dir.join("twice"), dir.join("dangling"));
    std::os::unix::fs::symlink("dangling", &twice).unwrap();
    std::os::unix::fs::symlink("new.bin", &dangling).unwrap();
    let (status, _, err) = relayout(&twice);
    assert_eq!(status, 0, "{err}");
    assert_eq!(std::fs::read(dir.join("new.bin")).unwrap(), expected);
    assert!(std::fs::symlink_metadata(&twice).unwrap().file_type().is_symlink());
    // A directory.
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let (status, _, err) = relayout(&sub);
    assert_eq!(status, 1);
    assert!(err.contains("is a directory"), "{err}");
    assert_eq!(std::fs::read_dir(&sub).unwrap().count(), 0);
}

pub(crate) mod process {
    //! The binary as a process: its anonymous memory, its exit status on a huge declared shape,
    //! the output file of a failed run, standard input redirected from a file.

    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// The largest `RssAnon` (kB) of a running process, sampled from `/proc/PID/status` every
    /// millisecond until `done` is set (Linux; elsewhere nothing is sampled). `VmHWM` would count
    /// the mapped input file's pages too; anonymous memory is what the bound is about.
    pub(crate) fn watch(pid: u32, done: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
        std::thread::spawn(move || {
            let mut peak = 0u64;
            while !done.load(Ordering::Relaxed) {
                let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { break };
                let anon = status
                    .lines()
                    .find_map(|l| l.strip_prefix("RssAnon:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
                peak = peak.max(anon.unwrap_or(0));
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            peak
        })
    }

    fn binary() -> Command {
        Command::new(env!("CARGO_BIN_EXE_xla-shape"))
    }

    /// 512 MiB from a mapped file and 128 MiB from a pipe (spooled) through the binary with
    /// `--max-memory 16`: the output is checked element by element as it streams out, and the
    /// child's anonymous memory never exceeds the bound, the process's own memory included.
    /// (The pipe is smaller to keep the suite fast: the binary runs at opt-level 1 here.)
    #[test]
    fn memory_stays_under_the_bound_on_an_input_many_times_larger() {
        const WORDS: u32 = 1 << 27;
        let tmp = super::scratch();
        let dir = tmp.path();
        let path = dir.join("big.bin");
        // Word k holds k: column-major f32[R, C] has element (i, j) at word j·R + i.
        {
            let mut file = std::fs::File::create(&path).unwrap();
            let mut chunk = vec![0u8; 4 << 20];
            for first in (0..WORDS).step_by(1 << 20) {
                for (k, word) in (first..).zip(chunk.chunks_exact_mut(4)) {
                    word.copy_from_slice(&k.to_le_bytes());
                }
                file.write_all(&chunk).unwrap();
            }
        }
        for (piped, rows, cols) in [(false, 8192u32, 16384u32), (true, 4096, 8192)] {
            let (from, to) = (format!("f32[{rows},{cols}]{{0,1}}"), format!("f32[{rows},{cols}]{{1,0}}"));
            let mut command = binary();
            command.args(["relayout", "--max-memory", "16", &from, &to]);
            if !piped {
                command.arg(&path);
            }
            let mut child = command
                .stdin(if piped { Stdio::piped() } else { Stdio::null() })
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let done = Arc::new(AtomicBool::new(false));
            let watcher = watch(child.id(), Arc::clone(&done));
            let bytes = u64::from(rows * cols) * 4;
            let feeder = child.stdin.take().map(|mut stdin| {
                let path = path.clone();
                std::thread::spawn(move || {
                    std::io::copy(&mut std::fs::File::open(path).unwrap().take(bytes), &mut stdin)
                })
            });
            // Row-major output, one row at a time: row i holds i, R + i, 2·R + i, …
            let mut stdout = child.stdout.take().unwrap();
            let mut row = vec![0u8; cols as usize * 4];
            let mut bad = None;
            for i in 0..rows {
                stdout.read_exact(&mut row).unwrap();
                let good = row.chunks_exact(4).zip((i..).step_by(rows as usize)).all(|(w, v)| w == v.to_le_bytes());
                if bad.is_none() && !good {
                    bad = Some(i);
                }
            }
            assert_eq!(stdout.read(&mut row).unwrap(), 0, "output longer than the array");
            let status = child.wait().unwrap();
            done.store(true, Ordering::Relaxed);
            let peak = watcher.join().unwrap();
            if let Some(feeder) = feeder {
                assert_eq!(feeder.join().unwrap().unwrap(), bytes);
            }
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            assert!(status.success(), "{err}");
            assert_eq!(bad, None, "piped {piped}: a wrong element in this row");
            if cfg!(target_os = "linux") {
                assert!(peak > 0, "no sample of /proc");
                // The bound holds the process's own memory too (measured: 8.6 MiB from a file,
                // 9.5 MiB from a pipe, of which 8 MiB is the part buffer).
                assert!(peak <= 16 << 10, "piped {piped}: RssAnon peaked at {peak} kB");
            }
        }
    }

    /// A 40 GB declared shape with a 1-byte input: exit 1 with both sizes, from a file (its
    /// length from its metadata) and from a pipe, never an allocation of the declared size.
    #[test]
    fn a_huge_declared_shape_with_a_short_input_is_exit_1() {
        let tmp = super::scratch();
        let dir = tmp.path();
        let path = dir.join("one.bin");
        std::fs::write(&path, [7u8]).unwrap();
        let args = ["relayout", "f32[1000000,10000]{0,1}", "f32[1000000,10000]{1,0}"];
        for piped in [false, true] {
            let mut command = binary();
            command.args(args);
            if !piped {
                command.arg(&path);
            }
            let mut child =
                command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
            let mut stdin = child.stdin.take().unwrap();
            if piped {
                stdin.write_all(&[7]).unwrap();
            }
            drop(stdin);
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(err.contains("input has 1 bytes, expected 40000000000"), "{err}");
            assert!(out.stdout.is_empty());
        }
    }

    /// A failed run leaves no output file (and no temporary one), and an existing output file
    /// as it was; a successful one replaces it.
    #[test]
    fn a_failed_run_leaves_no_output_file() {
        let tmp = super::scratch();
        let dir = tmp.path();
        let (input, out) = (dir.join("in.bin"), dir.join("out.bin"));
        std::fs::write(&input, [0u8; 23]).unwrap();
        let relayout = |out: &std::path::Path| {
            binary()
                .args(["relayout", "f32[2,3]{0,1}", "f32[2,3]{1,0}"])
                .arg(&input)
                .arg("-o")
                .arg(out)
                .stdin(Stdio::null())
                .output()
                .unwrap()
        };
        let result = relayout(&out);
        assert_eq!(result.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&result.stderr).contains("input has 23 bytes, expected 24"));
        let names = |dir: &std::path::Path| -> Vec<String> {
            let mut v: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(dir), ["in.bin"]);
        std::fs::write(&out, b"old").unwrap();
        assert_eq!(relayout(&out).status.code(), Some(1));
        assert_eq!(std::fs::read(&out).unwrap(), b"old");
        assert_eq!(names(dir), ["in.bin", "out.bin"]);
        std::fs::write(&input, super::f32s([1., 4., 2., 5., 3., 6.])).unwrap();
        assert_eq!(relayout(&out).status.code(), Some(0));
        assert_eq!(std::fs::read(&out).unwrap(), super::f32s([1., 2., 3., 4., 5., 6.]));
        assert_eq!(names(dir), ["in.bin", "out.bin"]);
    }

    /// Standard input redirected from a regular file is used as a file: its length is checked
    /// from its metadata (a short one fails at once) and from where its position stands.
    #[test]
    fn standard_input_redirected_from_a_file_is_mapped() {
        let tmp = super::scratch();
        let dir = tmp.path();
        let path = dir.join("in.bin");
        std::fs::write(&path, super::f32s([1., 4., 2., 5., 3., 6.])).unwrap();
        let out = binary()
            .args(["relayout", "f32[2,3]{0,1}", "f32[2,3]{1,0}"])
            .stdin(std::fs::File::open(&path).unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.stdout, super::f32s([1., 2., 3., 4., 5., 6.]));
        // Positioned 4 bytes in: 20 bytes are left of the 24 expected.
        let mut file = std::fs::File::open(&path).unwrap();
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(4)).unwrap();
        let out = binary().args(["relayout", "f32[2,3]{0,1}", "f32[2,3]{1,0}"]).stdin(file).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("input has 20 bytes, expected 24"));
    }
}
