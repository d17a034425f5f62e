//! A string → parse (raw and validated, as a shape and as a layout) → print → parse → the same
//! proto. See `xla_shape_fuzz::text`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xla_shape_fuzz::text(data));
