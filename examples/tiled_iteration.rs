//! Linearize and iterate a tiled array: write a logical array into its tiled buffer, draw the
//! buffer, and read it back in memory order — then the same for packed 4-bit elements.
//!
//! ```sh
//! cargo run --example tiled_iteration
//! ```

use std::error::Error;

use xla_shape::index::{self, Indices};
use xla_shape::make::{self, LayoutSpec};
use xla_shape::{PhysicalMap, PrimitiveType, Slot};

fn main() -> Result<(), Box<dyn Error>> {
    // f32[3,5], row-major, cut into 2×2 tiles. Partial tiles at the bottom and right edges are
    // padded, so 15 elements take 24 slots.
    let shape = make::make_shape_with_layout(PrimitiveType::F32, &[3, 5], &LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]]))?;
    let array = shape.as_array().ok_or("an array")?;
    let map = PhysicalMap::new(array)?;
    println!("{shape}: {} elements in {} slots", array.dimensions().iter().product::<i64>(), map.storage_slots());

    // The logical array, lettered in row-major order.
    let letter = |index: &[i64]| {
        let n = usize::try_from(index[0] * 5 + index[1]).unwrap_or(usize::MAX);
        b"abcdefghijklmno".get(n).map_or('?', |&b| char::from(b))
    };
    let mut logical = Indices::in_logical_order(array)?;
    let mut row = Vec::new();
    while let Some(index) = logical.next_index() {
        row.push(letter(index).to_string());
        if index[1] == 4 {
            println!("  {}", row.join(" "));
            row.clear();
        }
    }

    // Write: every element goes to its slot. The map was built once; each lookup is a few
    // multiply-adds with no allocation.
    let mut buffer = vec!['.'; usize::try_from(map.storage_slots())?];
    let mut logical = Indices::in_logical_order(array)?;
    while let Some(index) = logical.next_index() {
        buffer[usize::try_from(map.slot(index)?.0)?] = letter(index);
    }
    let tiles: Vec<String> = buffer.chunks(4).map(|tile| tile.iter().collect()).collect();
    println!("memory, one 2×2 tile per group ('.' = padding):\n  {}", tiles.join(" | "));

    // Read back in memory order: each slot names its element, or None for padding.
    let mut index = [0i64; 2];
    let mut padding = 0;
    for slot in 0..map.storage_slots() {
        if map.index_of_slot_into(Slot(slot), &mut index)? {
            assert_eq!(buffer[usize::try_from(slot)?], letter(&index));
        } else {
            padding += 1;
        }
    }
    println!("read back: {padding} padding slots");

    // XLA's IndexUtil ignores tiles: its linear index is the untiled row-major position.
    let h = [1, 2];
    println!(
        "element {h:?} ('{}'): tiled slot {}, XLA's untiled linear index {}",
        letter(&h),
        map.slot(&h)?.0,
        index::multidimensional_index_to_linear_index(array, &h)?
    );

    // Many lookups at once, into a caller buffer.
    let corners = [[0, 0], [0, 4], [2, 0], [2, 4]];
    let mut slots = [Slot(0); 4];
    map.slots(&corners, &mut slots)?;
    println!("corners {corners:?} → slots {:?}", slots.map(|s| s.0));

    // Sub-byte elements: s4 packed two per byte (E(4)), low bits first, in 2×8 tiles.
    let packed = make::make_shape_with_layout(
        PrimitiveType::S4,
        &[4, 16],
        &LayoutSpec::new(&[1, 0]).tiles(&[&[2, 8]]).element_size_in_bits(4),
    )?;
    let packed_array = packed.as_array().ok_or("an array")?;
    let packed_map = PhysicalMap::new(packed_array)?;
    println!("\n{packed}: {} bytes", packed_map.storage_bytes());
    for index in [[0, 0], [0, 1], [1, 0], [0, 8], [3, 15]] {
        let bit = packed_map.bit_offset(&index)?;
        println!("  {index:?} → byte {:>2}, bits {}..{}", bit / 8, bit % 8, bit % 8 + 3);
    }

    // Iterating in layout order visits memory order for an untiled layout.
    let column_major = make::make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[0, 1])?;
    let column_array = column_major.as_array().ok_or("an array")?;
    let column_map = PhysicalMap::new(column_array)?;
    let mut in_layout_order = Vec::new();
    index::for_each_index(column_array, &[0, 0], &[2, 3], &[1, 1], |i| {
        in_layout_order.push(column_map.slot(i).map(|s| s.0));
        true
    })?;
    let in_layout_order = in_layout_order.into_iter().collect::<Result<Vec<_>, _>>()?;
    println!("\n{column_major} in layout order visits slots {in_layout_order:?}");
    Ok(())
}
