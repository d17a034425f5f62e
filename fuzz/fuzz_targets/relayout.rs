//! Bytes → two layouts of one array and its bytes → relayout there and back. See
//! `xla_shape_fuzz::relayout`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xla_shape_fuzz::relayout(data));
