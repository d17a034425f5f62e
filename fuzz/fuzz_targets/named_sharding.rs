//! `OpSharding` bytes holding named ("V3") shardings → decode → `from_proto` → print → parse,
//! bytes, the V2 conversion and its placement. See `xla_shape_fuzz::named_sharding`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xla_shape_fuzz::named_sharding(data));
