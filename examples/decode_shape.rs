//! Decode a serialized `xla::ShapeProto`, validate it, and print what it means.
//!
//! ```sh
//! cargo run --example decode_shape                      # examples/data/tuple_shape.pb
//! cargo run --example decode_shape -- path/to/shape.pb  # your own bytes
//! ```
//!
//! Strict decoding refuses bytes that prost would silently shorten (unknown fields); the
//! lenient decoding keeps going and reports what it dropped. Validation then hands out a view
//! that every later computation trusts.

use std::error::Error;
use std::path::PathBuf;

use xla_shape::proto::ShapeProto;
use xla_shape::{PhysicalMap, Shape, ShapeKind, codec, size, text};

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/data/tuple_shape.pb"), PathBuf::from);
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{}: {} bytes", path.display(), bytes.len());

    // 1. Strict decoding: any unknown field is an error naming its path, number and wire type.
    let proto: ShapeProto = match codec::decode(&bytes[..]) {
        Ok(proto) => proto,
        Err(strict) => {
            println!("strict decoding failed: {strict}");
            let decoded = codec::decode_lenient::<ShapeProto>(&bytes[..])?;
            println!("lenient decoding report:\n{}", decoded.report);
            decoded.message
        }
    };

    // 2. Validation, as XLA's ValidateShapeWithOptionalLayout (arrays may lack a layout; they
    //    then use the default descending one).
    let shape = Shape::try_new_optional_layout(&proto)?;
    println!("shape: {shape}");
    println!("without layouts: {}", shape.to_string_without_layout());
    println!("byte size (8-byte pointers): {}", size::byte_size_of(shape, 8)?);
    println!();

    // 3. Every field spelled out, then sizes per array.
    match shape.kind() {
        ShapeKind::Tuple(tuple) => {
            for (i, element) in tuple.iter().enumerate() {
                println!("element {i}:");
                print_facts(element)?;
            }
        }
        _ => print_facts(shape)?,
    }

    // The same bytes with an unknown field 99 = 1 appended, as a newer XLA might write them:
    // strict decoding refuses, lenient decoding says exactly what would be lost.
    let mut newer = bytes.clone();
    newer.extend_from_slice(&[0x98, 0x06, 0x01]);
    let err = codec::decode::<ShapeProto>(&newer[..]).err().ok_or("strict decoding must refuse field 99")?;
    println!("with an unknown field appended, strict decoding says: {err}");
    let lenient = codec::decode_lenient::<ShapeProto>(&newer[..])?;
    println!("and lenient decoding reports: {}", lenient.report);
    Ok(())
}

fn print_facts(shape: Shape<'_>) -> Result<(), Box<dyn Error>> {
    print!("{}", text::describe(shape));
    if let Some(array) = shape.array_or_buffer() {
        println!("  elements:        {}", size::elements_in(array)?);
        println!("  XLA ByteSizeOf:  {} bytes (tiles ignored)", size::byte_size_of_elements(array)?);
        println!("  XLA ArraySize:   {} bytes", size::array_size(array)?);
        println!("  storage:         {} bytes (every tile and padding slot)", size::storage_bytes(array)?);
        if let Some(strides) = size::byte_strides(array)? {
            println!("  byte strides:    {strides:?} (XLA ByteStrides: tiles ignored)");
        }
        let map = PhysicalMap::new(array)?;
        if let Some(last) = last_index(array.dimensions()) {
            println!("  last element {last:?} is at bit {}", map.bit_offset(&last)?);
        }
    }
    println!();
    Ok(())
}

/// The index of the last element, if the array has any.
fn last_index(dimensions: &[i64]) -> Option<Vec<i64>> {
    dimensions.iter().map(|&d| (d > 0).then(|| d - 1)).collect()
}
