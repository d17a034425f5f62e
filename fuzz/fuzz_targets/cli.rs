//! The `xla-shape` tool in-process: a subcommand and its arguments picked by the first byte,
//! operands from the next lines, the rest as stdin. See `xla_shape_fuzz::cli`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xla_shape_fuzz::cli(data));
