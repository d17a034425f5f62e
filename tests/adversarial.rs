//! Hostile inputs get a typed error, and large valid inputs the right answer, each within 64 MB of
//! heap; the command-line tool's worst case at its input cap is held to 80 MB.
//!
//! Every case runs through [`guarded`]: the global allocator of this binary is capped at 64 MB
//! above what was live before the case, and an allocation beyond the cap aborts the binary with
//! "memory allocation of N bytes failed" (or, for `try_reserve`, returns an error).
//!
//! The cap is global, so nothing but the case that set it may allocate while it is set. That is
//! why this file is a binary of its own with its own `main` (`harness = false` in `Cargo.toml`):
//! [`libtest_mimic`] runs the cases one after another on the main thread, with no output capture
//! and no other test thread. Under libtest, the other tests of the binary and the harness's capture
//! allocated under a case's cap and aborted the binary in some runs.
//!
//! How long the hostile inputs take is measured in `benches/hostile.rs`, not asserted here: wall
//! time depends on the machine and its load, memory does not.

#[path = "common/mod.rs"]
mod common;

use common::{bytes_from_hex, nested_tuple_bytes};
use libtest_mimic::{Arguments, Trial};
use std::process::{Command, ExitCode};

use xla_shape::codec::{self, Decoded};
use xla_shape::error::{NonCanonicalKind, WireType};
use xla_shape::make::{self, LayoutSpec};
use xla_shape::physical::{PhysicalMap, Slot};
use xla_shape::prost::Message;
use xla_shape::proto::{LayoutProto, ProgramShapeProto, ShapeProto};
use xla_shape::validate::{LayoutMode, validate_shape};
use xla_shape::{Dim, Error, PrimitiveType, Shape, index, size, text, util};

#[global_allocator]
static HEAP: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

const HEAP_BUDGET: usize = 64 * 1024 * 1024;

/// The heap bound the `xla-shape` tool's 1 MiB input cap gives (see `cli::MAX_INPUT_BYTES`).
#[cfg(feature = "cli")]
const CLI_WORST_CASE_HEAP: usize = 80 * 1024 * 1024;

/// Set in the environment of a child process of this binary that must overrun the cap (see
/// [`an_allocation_past_the_cap_aborts_the_binary`]).
const OVERRUN_CHILD: &str = "XLA_SHAPE_ADVERSARIAL_OVERRUN";

fn main() -> ExitCode {
    if std::env::var_os(OVERRUN_CHILD).is_some() {
        // Allocates past the cap the way a runaway decoder would; never returns.
        guarded("overrun", || std::hint::black_box(vec![1_u8; HEAP_BUDGET + 1]).len());
        return ExitCode::SUCCESS;
    }
    let mut args = Arguments::from_args();
    // The main thread alone: nothing else of this binary allocates while a case holds the cap.
    args.test_threads = Some(1);
    libtest_mimic::run(&args, cases()).exit_code()
}

/// Every case of this binary, by its function name.
fn cases() -> Vec<Trial> {
    macro_rules! trials {
        ($($(#[$attribute:meta])* $case:ident),* $(,)?) => {
            vec![$($(#[$attribute])* Trial::test(stringify!($case), || {
                $case();
                Ok(())
            })),*]
        };
    }
    trials![
        the_cap_refuses_a_reservation_past_it,
        an_allocation_past_the_cap_aborts_the_binary,
        truncated_varints,
        over_long_varints,
        wire_types_6_and_7,
        groups,
        field_number_0,
        claimed_lengths_of_2_gib,
        nesting_2000_deep,
        ten_megabyte_parameter_name,
        ten_megabyte_strings,
        xla_text_crash_inputs_are_errors,
        xla_crash_fixtures_are_errors,
        xla_api_crash_inputs_are_errors,
        rank_5000_of_size_1,
        tuple_of_10000_elements,
        layout_with_2000_tiles,
        unknown_fields_are_never_dropped_silently,
        unknown_fields_in_program_shapes_and_layouts,
        hostile_literals,
        large_literal_reads_within_the_cap,
        #[cfg(feature = "cli")]
        the_cli_input_cap_bounds_the_worst_case,
        hlo_walk_of_16_mib_of_empty_instructions,
        hlo_walk_of_a_shape_at_its_cap_and_past_it,
        #[cfg(feature = "cli")]
        the_cli_lists_16_mib_of_empty_instructions_in_bounded_memory,
        #[cfg(feature = "draw")]
        pictures_of_huge_arrays_are_bounded,
    ]
}

/// Runs one case under the heap cap.
fn guarded<T>(case: &str, run: impl FnOnce() -> T) -> T {
    guarded_within(HEAP_BUDGET, case, run)
}

/// [`guarded`] with another cap, for the one case whose bound is stated differently.
fn guarded_within<T>(budget: usize, case: &str, run: impl FnOnce() -> T) -> T {
    let _cap = Cap::set(budget, case);
    run()
}

/// The heap cap while it lives; dropping it lifts the cap, also when the case panics.
struct Cap;

impl Cap {
    fn set(budget: usize, case: &str) -> Cap {
        HEAP.set_limit(HEAP.allocated() + budget).unwrap_or_else(|()| panic!("{case}: cannot set the cap"));
        Cap
    }
}

impl Drop for Cap {
    fn drop(&mut self) {
        // Raising the limit cannot fail: every live allocation is below `usize::MAX`.
        let _ = HEAP.set_limit(usize::MAX);
    }
}

// ---------------------------------------------------------------------------------------------
// The cap itself can fail a case.

fn the_cap_refuses_a_reservation_past_it() {
    guarded("a reservation within and one past the cap", || {
        let mut within = Vec::<u8>::new();
        assert!(within.try_reserve_exact(HEAP_BUDGET / 2).is_ok(), "half the budget fits");
        drop(within);
        let mut past = Vec::<u8>::new();
        assert!(past.try_reserve_exact(HEAP_BUDGET + 1).is_err(), "the cap let {} bytes through", HEAP_BUDGET + 1);
    });
    // Lifted after the case.
    let mut after = Vec::<u8>::new();
    assert!(after.try_reserve_exact(HEAP_BUDGET + 1).is_ok());
}

fn an_allocation_past_the_cap_aborts_the_binary() {
    let child = Command::new(std::env::current_exe().unwrap()).env(OVERRUN_CHILD, "1").output().unwrap();
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(!child.status.success(), "the overrun child exited {:?}; stderr: {stderr}", child.status);
    assert!(
        stderr.contains(&format!("memory allocation of {} bytes failed", HEAP_BUDGET + 1)),
        "the overrun child was not stopped by the cap: {stderr}"
    );
}

// ---------------------------------------------------------------------------------------------
// Operations on hostile inputs.

/// Strict and lenient decoding of a `ShapeProto` both fail with [`Error::Decode`].
fn assert_decode_error(case: &str, bytes: &[u8]) {
    guarded(case, || {
        let strict = codec::decode::<ShapeProto>(bytes).map(drop);
        let lenient = codec::decode_lenient::<ShapeProto>(bytes).map(drop);
        for result in [strict, lenient] {
            assert!(matches!(&result, Err(Error::Decode(d)) if d.message == "ShapeProto"), "{case}: {result:?}");
        }
    });
}

// ---------------------------------------------------------------------------------------------
// The wire.

fn truncated_varints() {
    for bytes in ["10", "10 80", "10 0b 1a 80", "10 0b 1a 01 80", "80", "22 80"] {
        assert_decode_error(&format!("truncated varint {bytes}"), &bytes_from_hex(bytes));
    }
}

fn over_long_varints() {
    // More than ten bytes, or a tenth byte beyond bit 63: invalid.
    for bytes in
        ["10 80 80 80 80 80 80 80 80 80 80 00", "10 ff ff ff ff ff ff ff ff ff 02", "80 80 80 80 80 80 80 80 80 80 01"]
    {
        assert_decode_error(&format!("over-long varint {bytes}"), &bytes_from_hex(bytes));
    }
    // Longer than needed but valid: strict decoding reports it, lenient decoding keeps the value
    // and says re-encoding changes the bytes.
    let bytes = bytes_from_hex("10 8b 80 00");
    guarded("valid over-long varint", || {
        let strict = codec::decode::<ShapeProto>(&bytes[..]);
        assert!(
            matches!(strict, Err(Error::NonCanonical { field_number: 2, kind: NonCanonicalKind::OverlongVarint, .. })),
            "{strict:?}"
        );
        let Decoded { message, report } = codec::decode_lenient::<ShapeProto>(&bytes[..]).unwrap();
        assert_eq!(message.element_type, 11);
        assert!(report.is_lossless() && !report.is_canonical());
    });
}

fn wire_types_6_and_7() {
    for bytes in ["0e", "0f", "16", "17", "10 0b fe 06", "10 0b ff 06"] {
        assert_decode_error(&format!("wire type {bytes}"), &bytes_from_hex(bytes));
    }
}

fn groups() {
    // A known field written as a group, an end without a start, an unterminated group, a
    // mismatched end: not protobuf.
    for bytes in ["13 14", "1c", "9c 06", "9b 06", "9b 06 08 01", "9b 06 a4 06"] {
        assert_decode_error(&format!("group {bytes}"), &bytes_from_hex(bytes));
    }
    // A well-formed group of an unknown field: strict decoding rejects it, lenient decoding
    // reports it (groups are skipped whole, nested content included).
    let bytes = bytes_from_hex("10 0b 9b 06 08 01 a3 06 a4 06 9c 06");
    guarded("unknown group", || {
        let strict = codec::decode::<ShapeProto>(&bytes[..]);
        assert!(
            matches!(strict, Err(Error::UnknownField { field_number: 99, wire_type: WireType::StartGroup, .. })),
            "{strict:?}"
        );
        let Decoded { message, report } = codec::decode_lenient::<ShapeProto>(&bytes[..]).unwrap();
        assert_eq!(message.to_string(), "f32[]");
        assert_eq!(report.unknown_fields.len(), 1, "{report:?}");
        assert_eq!(report.unknown_fields[0].wire_type, WireType::StartGroup);
    });
}

fn field_number_0() {
    for bytes in ["00", "02 00", "05 00 00 00 00", "01 00 00 00 00 00 00 00 00", "10 0b 00 00"] {
        assert_decode_error(&format!("field 0 {bytes}"), &bytes_from_hex(bytes));
    }
}

fn claimed_lengths_of_2_gib() {
    // The cap would abort the test if any of these allocated what the length claims.
    for bytes in [
        "22 80 80 80 80 08",
        "1a 80 80 80 80 08 01",
        "2a ff ff ff ff 07 0a",
        "9a 06 ff ff ff ff 07",
        "9a 06 ff ff ff ff ff ff ff ff ff 01",
        "10 0b 2a 06 0a 80 80 80 80 08",
    ] {
        assert_decode_error(&format!("2 GiB length {bytes}"), &bytes_from_hex(bytes));
    }
    let program = bytes_from_hex("1a 80 80 80 80 08 78");
    guarded("2 GiB parameter name", || {
        let result = codec::decode::<ProgramShapeProto>(&program[..]);
        assert!(matches!(result, Err(Error::Decode { .. })), "{result:?}");
    });
}

/// `levels` tuples nested in one another in memory, around `()`.
fn nested_tuple(levels: usize) -> ShapeProto {
    let mut shape = ShapeProto { element_type: PrimitiveType::TUPLE.into(), ..ShapeProto::default() };
    for _ in 0..levels {
        shape = ShapeProto {
            element_type: PrimitiveType::TUPLE.into(),
            tuple_shapes: vec![shape],
            ..ShapeProto::default()
        };
    }
    shape
}

fn nesting_2000_deep() {
    assert_decode_error("2000 nested tuples", &nested_tuple_bytes(2000));
    let groups: Vec<u8> = std::iter::repeat_n([0x9b, 0x06], 2000).flatten().collect();
    assert_decode_error("2000 nested groups", &groups);

    // Built in memory, deeper than any decoder allows: every entry point stops at MAX_DEPTH.
    // (prost's derived Clone and PartialEq recurse without a limit, so the test avoids them.)
    let mut deep = nested_tuple(2000);
    guarded("2000 nested tuples in memory", || {
        for mode in [LayoutMode::Strict, LayoutMode::Optional] {
            let result = validate_shape(&deep, mode);
            assert!(matches!(result, Err(Error::TooDeep { limit: 64, .. })), "{result:?}");
        }
        let printed = deep.to_string();
        assert!(printed.starts_with("((((") && printed.contains("..."), "{printed}");
        let before = codec::encode(&deep);
        assert!(matches!(codec::to_xla_form(&mut deep), Err(Error::TooDeep { limit: 64, .. })));
        assert_eq!(codec::encode(&deep), before, "a failed conversion leaves the message as it was");
    });

    let text = format!("{}f32[]{}", "(".repeat(2000), ")".repeat(2000));
    guarded("2000 nested tuples as text", || {
        for result in [text::parse_shape(&text).map(drop), text::parse_shape_raw(&text).map(drop)] {
            assert!(matches!(result, Err(Error::TooDeep { limit: 64, .. })), "{result:?}");
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Ten-megabyte strings.

const TEN_MB: usize = 10 * 1024 * 1024;

fn ten_megabyte_parameter_name() {
    // A valid program shape whose one parameter name is 10 MB long decodes, validates and prints
    // with the whole name (the right answer; strings are not limited).
    let name = "x".repeat(TEN_MB);
    let program = ProgramShapeProto {
        parameters: vec![make::make_scalar_shape(PrimitiveType::F32).unwrap().into_proto()],
        result: Some(make::make_scalar_shape(PrimitiveType::F32).unwrap().into_proto()),
        parameter_names: vec![name],
    };
    let bytes = codec::encode(&program);
    guarded("10 MB parameter name", || {
        let decoded: ProgramShapeProto = codec::decode(&bytes[..]).unwrap();
        assert_eq!(decoded.parameter_names[0].len(), TEN_MB);
        let view = xla_shape::ProgramShape::try_new(&decoded).unwrap();
        assert_eq!(view.parameter_names()[0].len(), TEN_MB);
    });
    let mut invalid_utf8 = bytes.clone();
    let last = invalid_utf8.len() - 1;
    invalid_utf8[last - 1] = 0xff;
    guarded("10 MB parameter name, invalid UTF-8", || {
        let result = codec::decode::<ProgramShapeProto>(&invalid_utf8[..]);
        assert!(matches!(result, Err(Error::Decode { .. })), "{result:?}");
    });
}

/// A parse error whose message stays short, however long the input.
fn assert_short_parse_error(case: &str, result: Result<(), Error>) {
    let Err(error @ Error::Parse { .. }) = result else { panic!("{case}: {result:?}") };
    let message = error.to_string();
    assert!(message.len() < 1024, "{case}: a {} byte message", message.len());
}

fn ten_megabyte_strings() {
    let identifier = "x".repeat(TEN_MB);
    guarded("10 MB identifier", || {
        assert_short_parse_error("shape", text::parse_shape(&identifier).map(drop));
        assert_short_parse_error("raw shape", text::parse_shape_raw(&identifier).map(drop));
        assert_short_parse_error("layout", text::parse_layout(&identifier).map(drop));
    });
    let number = format!("f32[{}]", "9".repeat(TEN_MB));
    guarded("10 MB number", || {
        assert_short_parse_error("number", text::parse_shape(&number).map(drop));
    });
    let element_type = format!("f32{}[2]", "3".repeat(TEN_MB));
    guarded("10 MB element type", || {
        assert_short_parse_error("type", text::parse_shape(&element_type).map(drop));
    });
    let open = "(".repeat(TEN_MB);
    guarded("10 MB of (", || {
        let result = text::parse_shape(&open);
        assert!(matches!(result, Err(Error::TooDeep { limit: 64, .. })), "{result:?}");
    });
    let unterminated = format!("f32[2]/*{}", " ".repeat(TEN_MB));
    guarded("10 MB unterminated comment", || {
        assert_short_parse_error("comment", text::parse_shape(&unterminated).map(drop));
    });
    let trailing = format!("f32[2]{}", "x".repeat(TEN_MB));
    guarded("10 MB after a shape", || {
        assert_short_parse_error("trailing", text::parse_shape(&trailing).map(drop));
    });
}

// ---------------------------------------------------------------------------------------------
// XLA's crash inputs (validation.md §4, text-format.md §7, and every `crashed` fixture).

fn xla_text_crash_inputs_are_errors() {
    let spec = [
        "f32[2]{0:L(0)}",
        "f32[2]{0:L(-3)}",
        "f32[2,3]{1,0:T(-2,128)}",
        "token[1]",
        "opaque[2]",
        "token[]{:T(2)}",
        "opaque[]{:S(1)}",
    ];
    for input in spec {
        guarded(input, || {
            for result in [text::parse_shape_raw(input).map(drop), text::parse_shape(input).map(drop)] {
                assert!(matches!(result, Err(Error::Parse { .. })), "{input}: {result:?}");
            }
        });
    }
    for input in ["{1,0:L(0)}", "{0:T(-2)}", "{1,0:L(-3)}"] {
        guarded(input, || {
            let result = text::parse_layout_raw(input);
            assert!(matches!(result, Err(Error::Parse { .. })), "{input}: {result:?}");
        });
    }
}

/// The inputs real XLA crashed on, from the fixtures (`status` = `crashed`).
fn crashed_fixtures(file: &str) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(file);
    let text = std::fs::read_to_string(path).expect("fixture file");
    text.lines()
        .filter(|line| line.contains(r#""status": "crashed""#))
        .map(|line| {
            let field = |key: &str| {
                let start = line.find(&format!(r#""{key}": ""#))? + key.len() + 5;
                Some(line[start..].split('"').next()?.to_owned())
            };
            field("input").unwrap_or_else(|| {
                // `depth_N`: N-1 tuples around `f32[]` (tests/fixtures/README.md).
                let n: usize = field("category").and_then(|c| c.strip_prefix("depth_")?.parse().ok()).expect("depth");
                format!("{}f32[]{}", "(".repeat(n - 1), ")".repeat(n - 1))
            })
        })
        .collect()
}

fn xla_crash_fixtures_are_errors() {
    let shapes = crashed_fixtures("shapes.jsonl");
    assert_eq!(shapes.len(), 20);
    for input in &shapes {
        guarded(input, || {
            let result = text::parse_shape_raw(input);
            assert!(matches!(result, Err(Error::Parse { .. } | Error::TooDeep { .. })), "{input}: {result:?}");
        });
    }
    let layouts = crashed_fixtures("layouts.jsonl");
    assert_eq!(layouts.len(), 3);
    for input in &layouts {
        guarded(input, || assert!(matches!(text::parse_layout_raw(input), Err(Error::Parse { .. })), "{input}"));
    }
}

fn xla_api_crash_inputs_are_errors() {
    let f32_2x3 = make::make_shape(PrimitiveType::F32, &[2, 3]).unwrap();
    let a = f32_2x3.as_array().unwrap();
    guarded("validation.md §4 rows 19-29", || {
        // 19: an out-of-range index.
        assert!(matches!(
            index::multidimensional_index_to_linear_index(a, &[2, 0]),
            Err(Error::IndexOutOfBounds { dimension: 0, index: 2, bound: 2 })
        ));
        // 20: a linear index past the end, and any on a zero-element array.
        assert!(matches!(index::linear_index_to_multidimensional_index(a, 6), Err(Error::OutOfRange { .. })));
        let empty = make::make_shape(PrimitiveType::F32, &[0, 3]).unwrap();
        assert!(index::linear_index_to_multidimensional_index(empty.as_array().unwrap(), 0).is_err());
        // 21: negative indices are never in bounds.
        assert!(!index::index_in_bounds(a, &[-1, 0]));
        // 22: a dimension number out of range.
        assert!(util::get_dimension(a, -3).is_err());
        assert_eq!(util::get_dimension(a, -1).unwrap(), 3);
        // 23: the byte size of a non-array type.
        assert_eq!(size::byte_size_of_primitive_type(PrimitiveType::TUPLE), None);
        // 24: the element count with an unbounded dimension.
        let unbounded = make::make_shape_dynamic(PrimitiveType::F32, &[i64::MIN, 3], &[true, false]).unwrap();
        assert!(matches!(size::elements_in(unbounded.as_array().unwrap()), Err(Error::UnboundedDimension { .. })));
        // 25: a tile of higher rank than the shape extends it with size-1 dimensions.
        let wide =
            make::make_shape_with_layout(PrimitiveType::F32, &[4], &LayoutSpec::new(&[0]).tiles(&[&[2, 2]])).unwrap();
        let map = PhysicalMap::new(wide.as_array().unwrap()).unwrap();
        assert_eq!(map.slot(&[3]).unwrap(), Slot(5));
        // 26: array_size with a combine tile entry.
        let combined = make::make_shape_with_layout(
            PrimitiveType::F32,
            &[2, 3],
            &LayoutSpec::new(&[1, 0]).tiles(&[&[i64::MIN, 4]]),
        )
        .unwrap();
        assert!(size::array_size(combined.as_array().unwrap()).is_ok());
        // 27: an increment of 0 would loop forever.
        assert!(matches!(
            index::for_each_index(a, &[0, 0], &[2, 3], &[1, 0], |_| true),
            Err(Error::InvalidArgument(_))
        ));
        // 28: a shape without a layout uses the default descending one.
        let proto = ShapeProto { element_type: 11, dimensions: vec![2, 3], ..ShapeProto::default() };
        let no_layout = Shape::try_new_optional_layout(&proto).unwrap().as_array().unwrap();
        assert_eq!(index::multidimensional_index_to_linear_index(no_layout, &[1, 2]).unwrap(), 5);
    });
}

// ---------------------------------------------------------------------------------------------
// Large valid inputs: accepted, with the right answer.

fn rank_5000_of_size_1() {
    let made = make::make_shape(PrimitiveType::F32, &vec![1; 5000]).unwrap();
    let ones = vec!["1"; 5000].join(",");
    let order: Vec<String> = (0..5000).rev().map(|d: usize| d.to_string()).collect();
    let expected = format!("f32[{ones}]{{{}}}", order.join(","));
    let bytes = codec::encode(made.proto());
    guarded("rank 5000", || {
        let proto: ShapeProto = codec::decode(&bytes[..]).unwrap();
        let shape = Shape::try_new(&proto).unwrap();
        let printed = shape.to_string();
        assert_eq!(printed, expected);
        assert_eq!(text::parse_shape(&printed).unwrap().proto(), &proto);
        let array = shape.as_array().unwrap();
        assert_eq!(size::elements_in(array).unwrap(), 1);
        assert_eq!(size::byte_size_of_elements(array).unwrap(), 4);
        let origin = vec![0; 5000];
        let map = PhysicalMap::new(array).unwrap();
        assert_eq!(map.slot(&origin).unwrap(), Slot(0));
        assert_eq!(index::multidimensional_index_to_linear_index(array, &origin).unwrap(), 0);
        assert_eq!(util::true_num_dimensions(array), 0);
        assert_eq!(util::get_dimension(array, -1).unwrap(), 1);
        assert!(util::equal(shape, shape));
    });
}

fn tuple_of_10000_elements() {
    let element = make::make_shape(PrimitiveType::S32, &[2]).unwrap();
    let made = make::make_tuple_shape(&vec![element; 10_000]).unwrap();
    let bytes = codec::encode(made.proto());
    guarded("10 000-element tuple", || {
        let proto: ShapeProto = codec::decode(&bytes[..]).unwrap();
        let shape = Shape::try_new(&proto).unwrap();
        assert_eq!(shape.as_tuple().unwrap().len(), 10_000);
        let printed = shape.to_string();
        assert!(printed.starts_with("(s32[2]{0}, s32[2]{0}, s32[2]{0}, s32[2]{0}, s32[2]{0}, /*index=5*/s32[2]{0}, "));
        assert_eq!(printed.matches("/*index=").count(), 1999);
        assert_eq!(text::parse_shape(&printed).unwrap().proto(), &proto);
        assert_eq!(size::byte_size_of(shape, 8).unwrap(), 80_000);
        assert!(util::equal(shape, shape));
        assert_eq!(codec::encode(&proto), bytes);
    });
}

fn layout_with_2000_tiles() {
    let tiles = vec![&[1i64, 1][..]; 2000];
    let made =
        make::make_shape_with_layout(PrimitiveType::F32, &[4, 4], &LayoutSpec::new(&[1, 0]).tiles(&tiles)).unwrap();
    let bytes = codec::encode(made.proto());
    let expected = format!("f32[4,4]{{1,0:T{}}}", "(1,1)".repeat(2000));
    guarded("2000 tiles", || {
        let proto: ShapeProto = codec::decode(&bytes[..]).unwrap();
        let shape = Shape::try_new(&proto).unwrap();
        let printed = shape.to_string();
        assert_eq!(printed, expected);
        assert_eq!(text::parse_shape(&printed).unwrap().proto(), &proto);
        let array = shape.as_array().unwrap();
        let map = PhysicalMap::new(array).unwrap();
        assert_eq!(map.storage_slots(), 16);
        assert_eq!(map.slot(&[3, 2]).unwrap(), Slot(14));
        assert_eq!(map.index_of_slot(Slot(14)).unwrap(), Some(vec![3, 2]));
        assert_eq!(size::array_size(array).unwrap(), 64);
        assert_eq!(util::get_dimension(array, 0).unwrap(), 4);
        let layout: &LayoutProto = proto.layout.as_deref().unwrap();
        assert_eq!(text::parse_layout(&text::layout_to_string(layout)).unwrap().proto(), layout);
        assert_eq!(util::minor(shape.as_array().unwrap().layout().unwrap(), 0).unwrap(), Dim(1));
    });
}

// ---------------------------------------------------------------------------------------------
// Nothing is lost: every unknown field, at every depth and of every wire type, is reported.

/// An unknown field of each wire type (field numbers the schema does not use), as bytes.
const UNKNOWN: [(u32, WireType, &str); 5] = [
    (99, WireType::Varint, "98 06 2a"),
    (100, WireType::Fixed64, "a1 06 01 02 03 04 05 06 07 08"),
    (101, WireType::Len, "aa 06 03 0a 0b 0c"),
    (102, WireType::StartGroup, "b3 06 08 01 b4 06"),
    (103, WireType::Fixed32, "bd 06 01 02 03 04"),
];

/// A length-delimited field `number` holding `payload`.
fn submessage(number: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    xla_shape::prost::encoding::encode_key(number, xla_shape::prost::encoding::WireType::LengthDelimited, &mut out);
    xla_shape::prost::encoding::encode_varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

/// `message` encoded with `extra` appended to its own fields.
fn with_extra(message: &impl xla_shape::prost::Message, extra: &[u8]) -> Vec<u8> {
    let mut out = message.encode_to_vec();
    out.extend_from_slice(extra);
    out
}

/// `(f32[4]{0:T(2)SC(0:1)}, s32[])` encoded canonically, with `extra[site]` at the end of each
/// of its messages: the root, both tuple elements, the first element's layout, its tile and its
/// split config. prost encodes each field on its own, so the encodings of messages holding
/// disjoint sets of fields, concatenated in field-number order, are the canonical encoding; the
/// unknown field numbers (99 and up) come last in every message.
fn shape_with_unknowns(extra: &[Vec<u8>; 6]) -> (ShapeProto, Vec<u8>) {
    let shape = make::make_tuple_shape(&[
        make::make_shape_with_layout(
            PrimitiveType::F32,
            &[4],
            &LayoutSpec::new(&[0]).tiles(&[&[2]]).split_config(0, &[1]),
        )
        .unwrap(),
        make::make_scalar_shape(PrimitiveType::S32).unwrap(),
    ])
    .unwrap()
    .into_proto();
    let [root, first, second, layout, tile, split] = extra;
    let array = &shape.tuple_shapes[0];
    let l = array.layout.as_deref().unwrap();
    let layout_bytes = [
        LayoutProto { minor_to_major: l.minor_to_major.clone(), ..LayoutProto::default() }.encode_to_vec(),
        submessage(6, &with_extra(&l.tiles[0], tile)),
        LayoutProto { minor_to_major: vec![], tiles: vec![], split_configs: vec![], ..l.clone() }.encode_to_vec(),
        submessage(17, &with_extra(&l.split_configs[0], split)),
        layout.clone(),
    ]
    .concat();
    let first_bytes = [
        ShapeProto { layout: None, is_dynamic_dimension: vec![], ..array.clone() }.encode_to_vec(),
        submessage(5, &layout_bytes),
        ShapeProto { is_dynamic_dimension: array.is_dynamic_dimension.clone(), ..ShapeProto::default() }
            .encode_to_vec(),
        first.clone(),
    ]
    .concat();
    let bytes = [
        ShapeProto { tuple_shapes: vec![], ..shape.clone() }.encode_to_vec(),
        submessage(4, &first_bytes),
        submessage(4, &with_extra(&shape.tuple_shapes[1], second)),
        root.clone(),
    ]
    .concat();
    (shape, bytes)
}

const SITES: [&str; 6] = [
    "",
    "tuple_shapes[0]",
    "tuple_shapes[1]",
    "tuple_shapes[0].layout",
    "tuple_shapes[0].layout.tiles[0]",
    "tuple_shapes[0].layout.split_configs[0]",
];

fn unknown_fields_are_never_dropped_silently() {
    let (plain, plain_bytes) = shape_with_unknowns(&Default::default());
    assert_eq!(plain_bytes, codec::encode(&plain), "the construction is canonical");
    // One unknown field at one site, for every site and wire type.
    for (site, path) in SITES.iter().enumerate() {
        for (number, wire_type, field) in UNKNOWN {
            let mut extra: [Vec<u8>; 6] = Default::default();
            extra[site] = bytes_from_hex(field);
            let (_, bytes) = shape_with_unknowns(&extra);
            guarded(path, || {
                let strict = codec::decode::<ShapeProto>(&bytes[..]).unwrap_err();
                let Error::UnknownField { path: found, field_number, wire_type: found_type } = strict else {
                    panic!("{path} {number}: {strict:?}")
                };
                assert_eq!((found.as_str(), field_number, found_type), (*path, number, wire_type));
                let Decoded { message, report } = codec::decode_lenient::<ShapeProto>(&bytes[..]).unwrap();
                assert_eq!(message, plain, "{path} {number}: the known fields decode as without it");
                let reported: Vec<_> =
                    report.unknown_fields.iter().map(|f| (f.path.as_str(), f.field_number, f.wire_type)).collect();
                assert_eq!(reported, [(*path, number, wire_type)], "{path} {number}");
                assert!(!report.is_lossless());
                assert_ne!(codec::encode(&message), bytes);
            });
        }
    }
    // All of them at once: every one is reported, in input order.
    let all = UNKNOWN.iter().map(|(_, _, field)| bytes_from_hex(field)).collect::<Vec<_>>().concat();
    let (_, bytes) = shape_with_unknowns(&std::array::from_fn(|_| all.clone()));
    guarded("every site, every wire type", || {
        let Decoded { message, report } = codec::decode_lenient::<ShapeProto>(&bytes[..]).unwrap();
        assert_eq!(message, plain);
        let reported: Vec<_> = report.unknown_fields.iter().map(|f| (f.path.as_str(), f.field_number)).collect();
        let mut expected: Vec<_> = Vec::new();
        for path in [SITES[4], SITES[5], SITES[3], SITES[1], SITES[2], SITES[0]] {
            expected.extend(UNKNOWN.iter().map(|&(number, _, _)| (path, number)));
        }
        assert_eq!(reported, expected);
        assert_eq!(report.omitted_unknown_fields, 0);
    });
    // More than the report lists: the rest are counted, never dropped.
    let many = bytes_from_hex(UNKNOWN[0].2).repeat(codec::MAX_REPORTED + 10);
    let bytes = with_extra(&plain, &many);
    guarded("more unknown fields than the report lists", || {
        let report = codec::decode_lenient::<ShapeProto>(&bytes[..]).unwrap().report;
        assert_eq!(report.unknown_fields.len() + report.omitted_unknown_fields, codec::MAX_REPORTED + 10);
    });
}

fn unknown_fields_in_program_shapes_and_layouts() {
    let scalar = make::make_scalar_shape(PrimitiveType::F32).unwrap().into_proto();
    let (number, wire_type, field) = UNKNOWN[3];
    let mut bytes = with_extra(
        &ProgramShapeProto { parameter_names: vec!["x".into()], ..Default::default() },
        &bytes_from_hex(field),
    );
    bytes.extend(submessage(1, &with_extra(&scalar, &bytes_from_hex(field))));
    bytes.extend(submessage(2, &with_extra(&scalar, &bytes_from_hex(field))));
    guarded("program shape", || {
        let Decoded { message, report } = codec::decode_lenient::<ProgramShapeProto>(&bytes[..]).unwrap();
        assert_eq!(message.to_string(), "(x: f32[]) -> f32[]");
        let reported: Vec<_> =
            report.unknown_fields.iter().map(|f| (f.path.as_str(), f.field_number, f.wire_type)).collect();
        assert_eq!(
            reported,
            [("", number, wire_type), ("parameters[0]", number, wire_type), ("result", number, wire_type)]
        );
        assert!(matches!(codec::decode::<ProgramShapeProto>(&bytes[..]), Err(Error::UnknownField { .. })));
    });
    let layout = with_extra(&LayoutProto { minor_to_major: vec![1, 0], ..Default::default() }, &bytes_from_hex(field));
    guarded("layout", || {
        let report = codec::decode_lenient::<LayoutProto>(&layout[..]).unwrap().report;
        assert_eq!(report.unknown_fields.len(), 1);
        assert!(matches!(
            codec::decode::<LayoutProto>(&layout[..]),
            Err(Error::UnknownField { field_number: 102, .. })
        ));
    });
}

// ---------------------------------------------------------------------------------------------
// The command-line tool's input cap.

/// The tool's 1 MiB cap on shape input is what bounds its worst case (every byte pair an empty
/// tuple element, the largest heap per input byte: prost's growing `Vec` of 88-byte messages
/// peaks near 70 MB) under [`CLI_WORST_CASE_HEAP`]; ten times that is refused after reading one
/// byte past the cap.
#[cfg(feature = "cli")]
fn the_cli_input_cap_bounds_the_worst_case() {
    use xla_shape::cli::{self, MAX_INPUT_BYTES};
    let cap = usize::try_from(MAX_INPUT_BYTES).unwrap();
    let run = |args: &[&str], stdin: &[u8]| {
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let status = cli::run(args, &mut &stdin[..], &mut stdout, &mut stderr);
        (status, stdout.len(), String::from_utf8_lossy(&stderr).into_owned())
    };
    // A tuple of empty `ShapeProto`s: each is decoded (the costly part) before validation
    // stops at the first one, whose element type is unset.
    let at_cap = bytes_from_hex(&format!("10 0d {}", "22 00".repeat(cap / 2 - 1)));
    assert_eq!(at_cap.len(), cap);
    guarded_within(CLI_WORST_CASE_HEAP, "1 MiB of empty tuple elements through the tool", || {
        let (status, printed, stderr) = run(&["xla-shape", "validate", "--optional-layout"], &at_cap);
        assert_eq!((status, printed), (1, 0));
        assert!(stderr.starts_with("error: invalid element type 0 at tuple_shapes[0]"), "{stderr}");
    });
    let ten_times: Vec<u8> = at_cap.iter().copied().cycle().take(10 * cap).collect();
    guarded("10 MiB of empty tuple elements through the tool", || {
        let (status, printed, stderr) = run(&["xla-shape", "decode", "--optional-layout"], &ten_times);
        assert_eq!((status, printed), (1, 0));
        assert!(stderr.contains(&format!("input size limit exceeded: {} is more than {cap}", cap + 1)), "{stderr}");
    });
}

// ---------------------------------------------------------------------------------------------
// Serialized HLO: the walk holds one shape at a time (docs/hlo.md).

/// `HloModuleProto { computations { instructions {} × n } }`: two bytes an instruction.
fn module_of_empty_instructions(n: usize) -> Vec<u8> {
    let mut computation = Vec::with_capacity(2 * n);
    for _ in 0..n {
        computation.extend_from_slice(&[0x12, 0x00]);
    }
    let mut module = vec![0x1a];
    xla_shape::prost::encoding::encode_varint(computation.len() as u64, &mut module);
    module.extend_from_slice(&computation);
    module
}

/// Before issue 15 the view decode of this took 2.8 GB.
fn hlo_walk_of_16_mib_of_empty_instructions() {
    use xla_shape::hlo::{self, HloMessage};
    let module = module_of_empty_instructions(8 << 20);
    guarded("16 MiB of empty instructions through hlo::walk", || {
        assert_eq!(hlo::header(&module, HloMessage::Module).unwrap().computations, 1);
        assert_eq!(hlo::walk(&module, HloMessage::Module).map(Result::unwrap).count(), 0);
    });
}

/// The costliest shape the walk decodes: `MAX_SHAPE_BYTES` of empty tuple elements as the
/// module's result (≈ 49 MB of heap); one more element is refused before decoding.
fn hlo_walk_of_a_shape_at_its_cap_and_past_it() {
    use xla_shape::hlo::{self, HloMessage, MAX_SHAPE_BYTES};
    let module_with_result = |len: usize| {
        let shape = bytes_from_hex(&format!("10 0d {}", "22 00".repeat((len - 2) / 2)));
        let mut program = vec![0x12];
        xla_shape::prost::encoding::encode_varint(shape.len() as u64, &mut program);
        program.extend_from_slice(&shape);
        let mut module = vec![0x22];
        xla_shape::prost::encoding::encode_varint(program.len() as u64, &mut module);
        module.extend_from_slice(&program);
        module
    };
    let (at, past) = (module_with_result(MAX_SHAPE_BYTES), module_with_result(MAX_SHAPE_BYTES + 2));
    guarded("a 1 MiB shape of empty tuple elements in a module", || {
        assert_eq!(hlo::walk(&at, HloMessage::Module).map(Result::unwrap).count(), 1);
        let error = hlo::walk(&past, HloMessage::Module).find_map(Result::err).unwrap();
        assert!(matches!(error, Error::LimitExceeded { .. }), "{error}");
    });
}

/// The tool reads the module whole (growing its buffer from stdin) and walks it twice.
#[cfg(feature = "cli")]
fn the_cli_lists_16_mib_of_empty_instructions_in_bounded_memory() {
    let module = module_of_empty_instructions(8 << 20);
    guarded_within(CLI_WORST_CASE_HEAP, "16 MiB of empty instructions through xla-shape hlo", || {
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let status = xla_shape::cli::run(["xla-shape", "hlo"], &mut &module[..], &mut stdout, &mut stderr);
        assert_eq!(status, 0, "{}", String::from_utf8_lossy(&stderr));
        assert!(
            String::from_utf8_lossy(&stdout)
                .ends_with("summary: 0 shapes (), 0 invalid, 0 unknown fields, 0 non-canonical encodings\n")
        );
    });
}

/// A picture costs what it shows, not what the array holds: the largest arrays, at the largest
/// limits the options accept, stay under the cap (geometry and SVG).
#[cfg(feature = "draw")]
fn pictures_of_huge_arrays_are_bounded() {
    use xla_shape::draw::{self, Options};
    let huge = [
        "u8[1000000,1000000,1000000]{2,1,0}",
        "s4[4611686018427387903]{0:E(4)}",
        "bf16[100000,100000,1000]{2,1,0:T(8,128)(2,1)}",
        "f32[3,1000,1000,1000]{0,1,2,3:T(*,8,128)}",
    ];
    let shapes: Vec<_> = huge.iter().map(|s| text::parse_shape(s).unwrap()).collect();
    let widest =
        Options { grid: None, max_extent: draw::MAX_EXTENT, max_slices: draw::MAX_SLICES, max_slots: draw::MAX_SLOTS };
    for (text, shape) in huge.iter().zip(&shapes) {
        guarded(text, || {
            let array = shape.as_array().unwrap();
            for options in [Options::default(), widest] {
                let picture = draw::picture(array, &options).unwrap();
                assert!(!picture.elisions.is_empty(), "{text}");
                let svg = picture.to_svg();
                assert!(svg.len() < 32 << 20, "{text}: {} bytes", svg.len());
            }
        });
    }
}

/// `LiteralProto`s that claim more than they hold: 2 GiB lengths, element counts no field could
/// hold, the wrong per-type field, tuple literals nested beyond every limit. Each is a typed
/// error, and nothing is allocated from a claimed size.
fn hostile_literals() {
    use xla_shape::error::LiteralProblem;
    use xla_shape::literal::Literal;
    use xla_shape::proto::LiteralProto;

    for bytes in
        ["42 80 80 80 80 08", "1a 80 80 80 80 08 01", "52 80 80 80 80 08", "0a 80 80 80 80 08", "aa 01 ff ff ff ff 07"]
    {
        let input = bytes_from_hex(bytes);
        guarded(&format!("literal with a 2 GiB length {bytes}"), || {
            let strict = codec::decode::<LiteralProto>(&input[..]);
            assert!(matches!(strict, Err(Error::Decode { .. })), "{bytes}: {strict:?}");
            assert!(matches!(codec::decode_lenient::<LiteralProto>(&input[..]), Err(Error::Decode { .. })));
        });
    }
    let problem = |proto: &LiteralProto| match Literal::try_new(proto) {
        Err(Error::Literal(error)) => error.problem,
        other => panic!("{other:?}"),
    };
    // 2^60 elements claimed (the most an f32 shape can have), 3 present.
    let huge = make::make_shape(PrimitiveType::F32, &[1 << 30, 1 << 30]).unwrap().into_proto();
    let proto = LiteralProto { shape: Some(huge), f32s: vec![1.0; 3], ..LiteralProto::default() };
    guarded("literal claiming 2^60 elements", || {
        assert_eq!(problem(&proto), LiteralProblem::ValueCount { field: "f32s", expected: 1 << 60, actual: 3 });
    });
    // A bytes field: 2^61 two-byte elements claimed, 8 bytes present.
    let huge16 = make::make_shape(PrimitiveType::BF16, &[1 << 30, 1 << 31]).unwrap().into_proto();
    let proto = LiteralProto { shape: Some(huge16), bf16s: vec![0; 8], ..LiteralProto::default() };
    guarded("bf16 literal claiming 2^62 bytes", || {
        assert_eq!(problem(&proto), LiteralProblem::ValueCount { field: "bf16s", expected: 1 << 62, actual: 8 });
    });
    // The wrong per-type field, and a length mismatch, on a 1M-element shape.
    let shape = make::make_shape(PrimitiveType::F32, &[1 << 20]).unwrap().into_proto();
    let wrong = LiteralProto { shape: Some(shape.clone()), s32s: vec![0; 1 << 20], ..LiteralProto::default() };
    let short = LiteralProto { shape: Some(shape), f32s: vec![0.0; (1 << 20) - 1], ..LiteralProto::default() };
    guarded("wrong field and length mismatch", || {
        assert_eq!(problem(&wrong), LiteralProblem::UnexpectedField { field: "s32s", element_type: "f32" });
        assert_eq!(
            problem(&short),
            LiteralProblem::ValueCount { field: "f32s", expected: 1 << 20, actual: (1 << 20) - 1 }
        );
    });
    // Tuple literals nested 2000 deep on the wire: prost's recursion limit, as a decode error.
    let mut deep = Vec::new();
    for _ in 0..2000 {
        let mut outer = vec![0x52];
        xla_shape::prost::encoding::encode_varint(deep.len() as u64, &mut outer);
        outer.extend_from_slice(&deep);
        deep = outer;
    }
    guarded("tuple literals 2000 deep", || {
        assert!(matches!(codec::decode::<LiteralProto>(&deep[..]), Err(Error::Decode { .. })));
    });
    // In memory, deeper than MAX_DEPTH: the shape's validation stops it before any recursion
    // into the literals.
    let mut literal = LiteralProto {
        shape: Some(ShapeProto { element_type: PrimitiveType::TUPLE.into(), ..ShapeProto::default() }),
        ..LiteralProto::default()
    };
    for _ in 0..200 {
        let shape = ShapeProto {
            element_type: PrimitiveType::TUPLE.into(),
            tuple_shapes: vec![literal.shape.clone().unwrap()],
            ..ShapeProto::default()
        };
        literal = LiteralProto { shape: Some(shape), tuple_literals: vec![literal], ..LiteralProto::default() };
    }
    guarded("tuple literals 200 deep in memory", || {
        assert!(matches!(Literal::try_new(&literal), Err(Error::TooDeep { .. })));
    });
}

/// A valid 4M-element (16 MB) f32 literal in a column-major layout is read into row-major order
/// and printed elided within the cap.
fn large_literal_reads_within_the_cap() {
    use xla_shape::literal::Literal;
    use xla_shape::proto::LiteralProto;
    let shape = make::make_shape_with_dense_layout(PrimitiveType::F32, &[2048, 2048], &[0, 1]).unwrap().into_proto();
    #[allow(clippy::cast_precision_loss, reason = "indices below 2^22 are exact in f32")]
    let values: Vec<f32> = (0..2048 * 2048).map(|i| i as f32).collect();
    let proto = LiteralProto { shape: Some(shape), f32s: values, ..LiteralProto::default() };
    guarded("16 MB column-major literal", || {
        let literal = Literal::try_new(&proto).unwrap();
        let logical = literal.as_array().unwrap().to_vec::<f32>().unwrap();
        // Row-major (i, j) is physical j * 2048 + i.
        assert_eq!((logical[1].to_bits(), logical[2048].to_bits()), (2048f32.to_bits(), 1f32.to_bits()));
        assert_eq!(literal.to_text(Some(10)).unwrap(), "{...}");
    });
}
