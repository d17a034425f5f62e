//! The checks the fuzz targets run, one public function per target.
//!
//! Both the libFuzzer binaries (`fuzz_targets/*.rs`) and the stable replay test
//! (`tests/fuzz_corpus.rs` in the library, which includes this file with `#[path]`) call these
//! functions, so every corpus file is checked by exactly the same code on stable Rust. A check
//! returns normally for any input the library handles correctly (an `Err` is a correct answer) and
//! panics when a property is broken: that panic is the crash libFuzzer reports.
//!
//! This file uses only `xla_shape` (and its re-exported `prost`): the replay test compiles it as
//! part of the library's test suite, which has no other dependencies.

use std::fmt::Debug;

use xla_shape::codec::{self, Decoded, XlaMessage};
use xla_shape::proto::{LayoutProto, ProgramShapeProto, ShapeProto};
use xla_shape::validate::{self, LayoutMode};
use xla_shape::{Layout, PrimitiveType, Shape, hlo, text, util};

/// Target `decode`: bytes → strict and lenient decode → validate (both modes) → print → parse →
/// encode → compare (spec README P4, P6, P8, P19).
///
/// The first byte (modulo 4) picks the message, the rest is its serialized form: 0 `ShapeProto`,
/// 1 `LayoutProto`, 2 `ProgramShapeProto`, 3 `HloModuleProto` (`fuzz/seeds.py` writes them so).
pub fn decode(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else { return };
    match selector % 4 {
        0 => decode_message(bytes, check_shape),
        1 => decode_message(bytes, check_layout),
        2 => decode_message(bytes, check_program_shape),
        _ => decode_hlo_module(bytes),
    }
}

/// Target `text`: a string → parse (raw and validated; as a shape and as a layout) → print →
/// parse → the same proto.
pub fn text(data: &[u8]) {
    let input = String::from_utf8_lossy(data);
    parse_shape_text(&input);
    parse_layout_text(&input);
}

/// The wire-level properties every message shares, then `check` on the decoded message.
fn decode_message<M: XlaMessage + PartialEq + Debug + Clone>(bytes: &[u8], check: fn(&M)) {
    let strict = codec::decode::<M>(bytes);
    let by_prost = M::decode(bytes);
    let Decoded { message, report } = match codec::decode_lenient::<M>(bytes) {
        Ok(decoded) => decoded,
        Err(error) => {
            assert!(strict.is_err(), "strict decode accepts what lenient decode rejects: {error}");
            assert!(by_prost.is_err(), "the wire scan rejects what prost accepts: {error}");
            let _ = error.to_string();
            return;
        }
    };
    assert_eq!(by_prost.as_ref().ok(), Some(&message), "lenient decode differs from prost");
    let encoded = codec::encode(&message);
    // Nothing lost (P4, P6): the report is empty exactly when re-encoding gives the input back.
    assert_eq!(
        report.is_empty(),
        encoded == bytes,
        "report {report:?} disagrees with the re-encoding (identical: {})",
        encoded == bytes
    );
    match &strict {
        Ok(strict) => {
            assert!(report.is_empty(), "strict decode accepts input with findings: {report:?}");
            assert_eq!(strict, &message, "strict and lenient decode differ");
        }
        Err(error) => {
            assert!(!report.is_empty(), "strict decode rejects input without findings: {error}");
            let _ = error.to_string();
        }
    }
    let _ = report.to_string();
    assert_canonical(&message);
    let mut xla_form = message.clone();
    if codec::to_xla_form(&mut xla_form).is_ok() {
        assert_canonical(&xla_form);
        let mut twice = xla_form.clone();
        assert!(codec::to_xla_form(&mut twice).is_ok() && twice == xla_form, "to_xla_form is not idempotent");
    } else {
        assert_eq!(xla_form, message, "a failed to_xla_form changed the message");
    }
    check(&message);
}

/// The crate's own encoding is canonical and decodes to the same message.
fn assert_canonical<M: XlaMessage + PartialEq + Debug>(message: &M) {
    let encoded = codec::encode(message);
    match codec::decode_lenient::<M>(encoded.as_slice()) {
        Ok(again) => {
            assert!(again.report.is_empty(), "the crate's encoding has findings: {:?}", again.report);
            assert_eq!(&again.message, message, "encode → decode changed the message");
        }
        Err(error) => panic!("the crate's encoding does not decode: {error}"),
    }
}

fn decode_hlo_module(bytes: &[u8]) {
    let Ok(module) = hlo::decode_module(bytes, hlo::HloMessage::Module) else { return };
    for sited in hlo::shapes(&module) {
        let _ = sited.site.to_string();
        check_shape(sited.shape);
    }
}

fn check_program_shape(proto: &ProgramShapeProto) {
    let printed = proto.to_string();
    let strict = validate::validate_program_shape(proto, LayoutMode::Strict);
    let optional = validate::validate_program_shape(proto, LayoutMode::Optional);
    assert!(strict.is_err() || optional.is_ok(), "strict accepts what optional-layout rejects: {printed}");
    for shape in proto.parameters.iter().chain(&proto.result) {
        check_shape(shape);
    }
}

fn check_layout(proto: &LayoutProto) {
    let printed = text::layout_to_string(proto);
    let Ok(layout) = Layout::try_new(proto) else { return };
    assert_eq!(layout.to_string(), printed, "the view prints differently from the raw proto");
    if !text_keeps_layout(proto) {
        return;
    }
    match text::parse_layout(&printed) {
        Ok(parsed) => assert_eq!(parsed.proto(), &xla_form(proto), "print → parse changed the layout {printed}"),
        Err(error) => panic!("the printed valid layout {printed} does not parse: {error}"),
    }
}

/// Every check that applies to one decoded or parsed shape.
pub fn check_shape(proto: &ShapeProto) {
    let printed = text::shape_to_string(proto, true);
    let without_layout = text::shape_to_string(proto, false);
    let strict = validate::validate_shape(proto, LayoutMode::Strict);
    let optional = validate::validate_shape(proto, LayoutMode::Optional);
    assert!(strict.is_err() || optional.is_ok(), "strict accepts what optional-layout rejects: {printed}");
    if let Err(error) = &optional {
        // Error messages are built from the input; building them must not panic either.
        let _ = error.to_string();
        return;
    }
    let Ok(shape) = Shape::try_new_optional_layout(proto) else { unreachable!("validated above") };
    assert_eq!(shape.to_string(), printed, "the view prints differently from the raw proto");
    let _ = text::describe(shape).to_string();
    check_util(shape);

    // Text round trips (text-format.md §6). Without layouts, any valid shape comes back with the
    // same dimensions; with layouts, a strictly valid one comes back in XLA form.
    match text::parse_shape(&without_layout) {
        Ok(parsed) => assert_eq!(
            text::shape_to_string(parsed.proto(), false),
            without_layout,
            "print → parse changed {without_layout}"
        ),
        Err(error) => panic!("the printed valid shape {without_layout} does not parse: {error}"),
    }
    if strict.is_ok() && text_keeps_shape(proto) {
        match text::parse_shape(&printed) {
            Ok(parsed) => assert_eq!(parsed.proto(), &xla_form(proto), "print → parse changed {printed}"),
            Err(error) => panic!("the printed valid shape {printed} does not parse: {error}"),
        }
    }
}

/// Whether text can hold everything in the shape's layouts (text-format.md §6: the legacy padding
/// fields and a negative `dynamic_shape_metadata_prefix_bytes` are never printed; as in XLA, a
/// non-integral index or pointer type prints as `#(invalid)`, which does not parse).
fn text_keeps_shape(proto: &ShapeProto) -> bool {
    proto.layout.as_deref().is_none_or(text_keeps_layout) && proto.tuple_shapes.iter().all(text_keeps_shape)
}

fn text_keeps_layout(layout: &LayoutProto) -> bool {
    let printable_type = |raw: i32| raw == 0 || PrimitiveType::from_i32(raw).is_some_and(PrimitiveType::is_integral);
    layout.padded_dimensions.is_empty()
        && layout.padding_value == 0
        && layout.dynamic_shape_metadata_prefix_bytes >= 0
        && printable_type(layout.index_primitive_type)
        && printable_type(layout.pointer_primitive_type)
        && layout.physical_shape.as_deref().is_none_or(text_keeps_shape)
}

fn xla_form<M: XlaMessage + Clone>(message: &M) -> M {
    let mut converted = message.clone();
    assert!(codec::to_xla_form(&mut converted).is_ok(), "to_xla_form fails on a valid message");
    converted
}

/// The `util` operations that take nothing but the shape: none may panic, every shape they build
/// must validate, and a shape equals itself.
fn check_util(shape: Shape<'_>) {
    assert!(util::equal(shape, shape), "a shape is not equal to itself: {shape}");
    assert!(util::compatible(shape, shape), "a shape is not compatible with itself: {shape}");
    assert!(util::layouts_in_shapes_equal(shape, shape), "layouts differ from themselves: {shape}");
    let built = [
        util::with_default_layout(shape),
        util::clear_layout(shape),
        util::clear_tiles(shape),
        util::device_shape_to_host_shape(shape),
        util::make_shape_with_descending_layout_and_same_physical_layout(shape),
    ];
    for result in built.into_iter().flatten() {
        assert_valid(result.proto());
    }
    let _ = util::device_shape_is_host_shape(shape);
    if let Some(array) = shape.as_array() {
        let _ = util::true_num_dimensions(array);
        let _ = util::has_descending_layout(array);
        let _ = util::has_ascending_layout(array);
        if let Ok(dropped) = util::drop_degenerate_dimensions(array) {
            assert_valid(dropped.proto());
        }
    }
}

fn assert_valid(proto: &ShapeProto) {
    if let Err(error) = validate::validate_shape(proto, LayoutMode::Optional) {
        panic!("a shape the crate built does not validate: {proto}: {error}");
    }
}

fn parse_shape_text(input: &str) {
    let raw = text::parse_shape_raw(input);
    let validated = text::parse_shape(input);
    let proto = match (&raw, &validated) {
        (Ok(raw), Ok(validated)) => {
            assert_eq!(raw, validated.proto(), "raw and validated parses differ on {input:?}");
            raw
        }
        (Ok(raw), Err(error)) => {
            let strict = validate::validate_shape(raw, LayoutMode::Strict);
            assert!(strict.is_err(), "validated parse rejects a strictly valid raw parse of {input:?}: {error}");
            raw
        }
        (Err(error), Ok(_)) => panic!("raw parse rejects what validated parse accepts, {input:?}: {error}"),
        (Err(error), Err(_)) => {
            let _ = error.to_string();
            return;
        }
    };
    assert_canonical(proto);
    assert_eq!(&xla_form(proto), proto, "the parser's output is not in XLA form: {input:?}");
    // The printed form is a fixed point and parses back to the same proto.
    let printed = text::shape_to_string(proto, true);
    match text::parse_shape_raw(&printed) {
        Ok(again) => {
            assert_eq!(text::shape_to_string(&again, true), printed, "print → parse → print is not stable");
            if text_keeps_shape(proto) {
                assert_eq!(&again, proto, "print → parse changed {input:?} (printed {printed})");
            }
        }
        Err(error) => {
            assert!(!text_keeps_shape(proto), "{input:?} parses, but its printed form {printed} does not: {error}");
        }
    }
    check_shape(proto);
}

fn parse_layout_text(input: &str) {
    let raw = text::parse_layout_raw(input);
    let validated = text::parse_layout(input);
    let proto = match (&raw, &validated) {
        (Ok(raw), Ok(validated)) => {
            assert_eq!(raw, validated.proto(), "raw and validated parses differ on {input:?}");
            raw
        }
        (Ok(raw), Err(error)) => {
            assert!(
                validate::validate_layout(raw).is_err(),
                "validated parse rejects a valid layout {input:?}: {error}"
            );
            raw
        }
        (Err(error), Ok(_)) => panic!("raw parse rejects what validated parse accepts, {input:?}: {error}"),
        (Err(error), Err(_)) => {
            let _ = error.to_string();
            return;
        }
    };
    assert_canonical(proto);
    let printed = text::layout_to_string(proto);
    match text::parse_layout_raw(&printed) {
        Ok(again) => {
            assert_eq!(text::layout_to_string(&again), printed, "print → parse → print is not stable");
            if text_keeps_layout(proto) {
                assert_eq!(&again, proto, "print → parse changed {input:?} (printed {printed})");
            }
        }
        Err(error) => {
            assert!(!text_keeps_layout(proto), "{input:?} parses, but its printed form {printed} does not: {error}");
        }
    }
    check_layout(proto);
}
