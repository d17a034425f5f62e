//! Writes a large serialized `HloModuleProto` for measuring `xla-shape hlo` (issue 15): too big to
//! commit, so it is made on demand.
//!
//! ```sh
//! cargo run --release --example hlo_big_module -- empty /tmp/empty.pb      # 16 MiB of empty instructions
//! cargo run --release --example hlo_big_module -- constants /tmp/const.pb  # 2000 f32[256,128] constants (≈ 250 MiB)
//! /usr/bin/time -v target/release/xla-shape hlo /tmp/const.pb > /dev/null
//! cargo run --example hlo_big_module                                       # a small one, walked in memory
//! ```
//!
//! Each constant carries its literal (`HloInstructionProto.literal = 8`, a `LiteralProto` whose
//! `shape = 1` and packed `f32s = 8`), which the walk skips without a copy.

use std::error::Error;
use std::io::Write;

use xla_shape::hlo::{self, Found, HloMessage};
use xla_shape::prost::encoding::{WireType, encode_key, encode_varint};
use xla_shape::{PrimitiveType, codec, make};

/// The key and length of a length-delimited field.
fn head(number: u32, len: usize, out: &mut Vec<u8>) {
    encode_key(number, WireType::LengthDelimited, out);
    encode_varint(len as u64, out);
}

fn field(number: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    head(number, payload.len(), &mut out);
    out.extend_from_slice(payload);
    out
}

/// Writes a module with one computation `main` whose instructions are `instructions` copies of
/// `make(i)`.
fn write_module(
    out: &mut impl Write,
    instructions: usize,
    make: impl Fn(usize) -> Vec<u8>,
) -> Result<(), Box<dyn Error>> {
    let name = field(1, b"main");
    let total: usize = (0..instructions).map(|i| make(i).len()).sum::<usize>() + name.len();
    let mut prefix = field(1, b"big");
    head(3, total, &mut prefix);
    prefix.extend_from_slice(&name);
    out.write_all(&prefix)?;
    for i in 0..instructions {
        out.write_all(&make(i))?;
    }
    Ok(())
}

fn empty_instruction(_: usize) -> Vec<u8> {
    field(2, &[])
}

fn constant(i: usize, shape: &[u8], literal_len: usize) -> Vec<u8> {
    let mut literal = field(1, shape);
    head(8, literal_len, &mut literal);
    literal.resize(literal.len() + literal_len, 0x3f);
    let mut instruction = field(1, format!("constant.{i}").as_bytes());
    instruction.extend(field(2, b"constant"));
    instruction.extend(field(3, shape));
    instruction.extend(field(8, &literal));
    field(2, &instruction)
}

fn main() -> Result<(), Box<dyn Error>> {
    let shape = codec::encode(make::make_shape(PrimitiveType::F32, &[256, 128])?.proto());
    let mut args = std::env::args().skip(1);
    if let (Some(kind), Some(path)) = (args.next(), args.next()) {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
        match kind.as_str() {
            // `12 00` is one empty instruction: 8 Mi of them.
            "empty" => write_module(&mut out, 8 << 20, empty_instruction)?,
            "constants" => write_module(&mut out, 2000, |i| constant(i, &shape, 256 * 128 * 4))?,
            other => return Err(format!("unknown kind {other:?}: use empty or constants").into()),
        }
        out.flush()?;
        println!("wrote {path}");
    } else {
        let mut bytes = Vec::new();
        write_module(&mut bytes, 20, |i| constant(i, &shape, 1024))?;
        let shapes = hlo::walk(&bytes, HloMessage::Module).filter(|f| matches!(f, Ok(Found::Shape(_)))).count();
        println!("{} bytes, {shapes} shapes", bytes.len());
        assert_eq!(shapes, 20);
    }
    Ok(())
}
