//! Bytes → a valid array shape and an index → slot → index, linear ⇄ multi-index, every slot of
//! small buffers. See `xla_shape_fuzz::index`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xla_shape_fuzz::index(data));
