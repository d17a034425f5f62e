//! A TPU-tiled bf16 buffer (`{1,0:T(8,128)(2,1)}`, as a TPU dump holds it) to row-major and back.
//!
//! ```sh
//! cargo run --example relayout
//! ```
//!
//! The plan is built once from the two validated shapes and run on each buffer; running
//! allocates nothing (`run_to_vec` allocates the output for convenience).

use std::error::Error;

use xla_shape::relayout::RelayoutPlan;
use xla_shape::{PhysicalMap, ShapeBuf};

fn main() -> Result<(), Box<dyn Error>> {
    let tiled: ShapeBuf = "bf16[24,300]{1,0:T(8,128)(2,1)}".parse()?;
    let row_major: ShapeBuf = "bf16[24,300]{1,0}".parse()?;
    let (tiled_array, rm_array) = (tiled.as_array().ok_or("array")?, row_major.as_array().ok_or("array")?);
    let to_rm = RelayoutPlan::new(tiled_array, rm_array)?;
    let to_tiled = RelayoutPlan::new(rm_array, tiled_array)?;
    println!("{tiled}: {} bytes (partial tiles padded); {row_major}: {} bytes", to_rm.src_len(), to_rm.dst_len());

    // A row-major matrix whose element (i, j) holds the 16-bit pattern i·300 + j.
    let values: Vec<u8> = (0..24 * 300u32).flat_map(|k| u16::try_from(k & 0xFFFF).unwrap_or(0).to_le_bytes()).collect();
    let dump = to_tiled.run_to_vec(&values)?;
    let back = to_rm.run_to_vec(&dump)?;
    assert_eq!(back, values, "row-major → tiled → row-major is the identity");

    // Where did element (9, 130) land in the tiled buffer? The PhysicalMap says; the bytes agree.
    let map = PhysicalMap::new(tiled_array)?;
    let byte = usize::try_from(map.bit_offset(&[9, 130])? / 8)?;
    let stored = u16::from_le_bytes([dump[byte], dump[byte + 1]]);
    println!("element (9, 130) is at byte {byte} of the tiled dump and holds {stored} = 9·300 + 130");
    assert_eq!(stored, 9 * 300 + 130);
    Ok(())
}
