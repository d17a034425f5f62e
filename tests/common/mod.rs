//! Helpers shared by the integration tests (each test binary uses a subset).
#![allow(dead_code)]

use std::fmt::Write as _;

/// Bytes from hex text; whitespace is ignored, so both `0a 01` and `0a01` read the same.
pub fn bytes_from_hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits.chunks(2).map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).expect("hex byte")).collect()
}

/// Lowercase hex, no separators.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// `inner` as length-delimited field 1 (`HloProto { hlo_module }`, `HloSnapshot { hlo }`).
pub fn length_delimited_field_1(inner: &[u8]) -> Vec<u8> {
    let mut out = vec![0x0a];
    let mut len = inner.len();
    while len >= 0x80 {
        out.push(u8::try_from(len & 0x7f).unwrap() | 0x80);
        len >>= 7;
    }
    out.push(u8::try_from(len).unwrap());
    out.extend_from_slice(inner);
    out
}

/// Runs `xla_shape::cli::run` in process with `args` after the program name: exit status, stdout,
/// stderr.
#[cfg(feature = "cli")]
pub fn run_cli(args: &[&str], stdin: &[u8]) -> (u8, String, String) {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut command_line = vec!["xla-shape"];
    command_line.extend_from_slice(args);
    let status = xla_shape::cli::run(command_line, &mut &stdin[..], &mut stdout, &mut stderr);
    (status, String::from_utf8(stdout).unwrap(), String::from_utf8(stderr).unwrap())
}

/// `levels` tuples nested in one another on the wire, around `()`.
pub fn nested_tuple_bytes(levels: usize) -> Vec<u8> {
    let mut bytes = vec![0x10, 0x0d];
    for _ in 0..levels {
        let mut outer = vec![0x10, 0x0d, 0x22];
        xla_shape::prost::encoding::encode_varint(bytes.len() as u64, &mut outer);
        outer.extend_from_slice(&bytes);
        bytes = outer;
    }
    bytes
}
