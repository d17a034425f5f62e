//! Bytes → decode (`ShapeProto`, `LayoutProto`, `ProgramShapeProto` or an HLO module, picked by the
//! first byte) → validate → print → encode. See `xla_shape_fuzz::decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xla_shape_fuzz::decode(data));
