//! Bytes → the StableHLO MLIR reader (whole and one byte at a time) → shapes read back.
//! See `xla_shape_fuzz::stablehlo`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xla_shape_fuzz::stablehlo(data));
