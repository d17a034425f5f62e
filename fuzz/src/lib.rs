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

use xla_shape::prost::Message;
use xla_shape::proto::{LayoutProto, ProgramShapeProto, ShapeProto};
use xla_shape::validate::{self, LayoutMode};
use xla_shape::{Shape, hlo, text, util};

/// Target `decode`: bytes → decode → validate (both modes) → print → encode, with the
/// properties of spec README P4, P6, P8.
///
/// The first byte (modulo 4) picks the message, the rest is its serialized form: 0 `ShapeProto`,
/// 1 `LayoutProto`, 2 `ProgramShapeProto`, 3 `HloModuleProto` (`fuzz/seeds.py` writes them so).
pub fn decode(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else { return };
    match selector % 4 {
        0 => decode_shape(bytes),
        1 => decode_layout(bytes),
        2 => decode_program_shape(bytes),
        _ => decode_hlo_module(bytes),
    }
}

/// Decoding and re-encoding agree: the message survives an encode → decode round trip.
fn assert_reencodes<M: Message + Default + PartialEq + std::fmt::Debug>(message: &M) {
    let bytes = message.encode_to_vec();
    let again = M::decode(bytes.as_slice()).expect("re-encoded message decodes");
    assert_eq!(&again, message, "encode → decode changed the message");
}

fn decode_shape(bytes: &[u8]) {
    let Ok(proto) = ShapeProto::decode(bytes) else { return };
    assert_reencodes(&proto);
    check_shape(&proto);
}

fn decode_layout(bytes: &[u8]) {
    let Ok(proto) = LayoutProto::decode(bytes) else { return };
    assert_reencodes(&proto);
    let printed = text::layout_to_string(&proto);
    if validate::validate_layout(&proto).is_ok() {
        assert_eq!(xla_shape::Layout::try_new(&proto).map(|l| l.to_string()).as_deref(), Ok(printed.as_str()));
    }
}

fn decode_program_shape(bytes: &[u8]) {
    let Ok(proto) = ProgramShapeProto::decode(bytes) else { return };
    assert_reencodes(&proto);
    let printed = proto.to_string();
    let strict = validate::validate_program_shape(&proto, LayoutMode::Strict);
    let optional = validate::validate_program_shape(&proto, LayoutMode::Optional);
    assert!(strict.is_err() || optional.is_ok(), "strict accepts what optional-layout rejects: {printed}");
    for shape in proto.parameters.iter().chain(&proto.result) {
        check_shape(shape);
    }
}

fn decode_hlo_module(bytes: &[u8]) {
    let Ok(module) = hlo::decode_module(bytes, hlo::HloMessage::Module) else { return };
    for sited in hlo::shapes(&module) {
        let _ = sited.site.to_string();
        check_shape(sited.shape);
    }
}

/// Every check that applies to one decoded or parsed shape.
pub fn check_shape(proto: &ShapeProto) {
    let printed = text::shape_to_string(proto, true);
    let _ = text::shape_to_string(proto, false);
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
    check_util(shape);
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
