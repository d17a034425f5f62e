//! Build a layout and a shape, and encode them in XLA's own serialized form for another tool
//! (a PJRT client, an HLO rewriter, a C++ binary reading `xla::ShapeProto`).
//!
//! ```sh
//! cargo run --example encode_layout                 # prints the bytes as hex
//! cargo run --example encode_layout -- shape.pb     # also writes the shape's bytes to a file
//! ```

use std::error::Error;

use xla_shape::make::{self, LayoutSpec};
use xla_shape::proto::{LayoutProto, ShapeProto};
use xla_shape::{LayoutBuf, PrimitiveType, ShapeBuf, codec};

fn main() -> Result<(), Box<dyn Error>> {
    // A TPU-style layout: row-major bf16 in (8,128) tiles with (2,1) sub-tiles packing pairs of
    // rows, in memory space 1. The builder checks everything XLA's LayoutUtil checks.
    let spec = LayoutSpec::new(&[1, 0]).tiles(&[&[8, 128], &[2, 1]]).memory_space(1);
    let layout: LayoutBuf = spec.clone().build()?;
    let shape: ShapeBuf = make::make_shape_with_layout(PrimitiveType::BF16, &[16, 256], &spec)?;
    println!("layout {layout}");
    println!("shape  {shape}");

    // Constructors produce XLA's form (a dynamic flag per dimension, tail padding alignment 1),
    // so these are the bytes XLA itself writes for the same values.
    let layout_bytes = codec::encode(layout.proto());
    let shape_bytes = codec::encode(shape.proto());
    println!("LayoutProto: {:>3} bytes  {}", layout_bytes.len(), hex(&layout_bytes));
    println!("ShapeProto:  {:>3} bytes  {}", shape_bytes.len(), hex(&shape_bytes));

    // The same values from text, e.g. a layout string copied from an HLO dump.
    let parsed: ShapeBuf = "bf16[16,256]{1,0:T(8,128)(2,1)S(1)}".parse()?;
    assert_eq!(parsed, shape, "text and constructor build the same proto");

    // Reading the bytes back is lossless: strict decoding, then byte-identical re-encoding.
    let decoded: ShapeProto = codec::decode(&shape_bytes[..])?;
    assert_eq!(ShapeBuf::try_from_proto(decoded.clone())?, shape);
    assert_eq!(codec::encode(&decoded), shape_bytes);

    // A hand-built proto is encoded exactly as it is. `to_xla_form` adds what XLA's serializer
    // always writes, when another tool compares bytes.
    let mut minimal = LayoutProto { minor_to_major: vec![1, 0], ..LayoutProto::default() };
    println!("minimal {{1,0}}:  {}", hex(&codec::encode(&minimal)));
    codec::to_xla_form(&mut minimal)?;
    println!("in XLA form:     {}", hex(&codec::encode(&minimal)));

    if let Some(path) = std::env::args_os().nth(1).map(std::path::PathBuf::from) {
        std::fs::write(&path, &shape_bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {} bytes to {}", shape_bytes.len(), path.display());
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
}
