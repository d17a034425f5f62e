//! A `LiteralProto` (selector 0) or `HloSnapshot` (selector 1): wire-exact decoding, validation,
//! values, XLA's text, and read → build. See `xla_shape_fuzz::literal`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xla_shape_fuzz::literal(data));
