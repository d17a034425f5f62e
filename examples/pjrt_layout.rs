//! Parse the layout strings PJRT reports (`PjRtLayout::ToString`, `jax.Array.format.layout`)
//! and explain where each element of the array goes.
//!
//! ```sh
//! cargo run --example pjrt_layout                         # examples/data/pjrt_layouts.txt
//! cargo run --example pjrt_layout -- 'f32[8,128] {0,1:T(8,128)}'
//! ```
//!
//! Each input line is an array shape followed by its layout string.

use std::error::Error;
use std::path::PathBuf;

use xla_shape::{LayoutBuf, PhysicalMap, ShapeBuf, Slot, size, text, util};

fn main() -> Result<(), Box<dyn Error>> {
    let input = if let Some(line) = std::env::args().nth(1) {
        line
    } else {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/data/pjrt_layouts.txt");
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?
    };
    for line in input.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        println!("{line}");
        if let Err(e) = explain(line) {
            println!("  error: {e}");
        }
        println!();
    }
    Ok(())
}

fn explain(line: &str) -> Result<(), Box<dyn Error>> {
    let at = line.find('{').ok_or("expected `<shape> {<layout>}`")?;
    let (shape_text, layout_text) = line.split_at(at);

    // The layout on its own: the checks that need no shape.
    let layout: LayoutBuf = text::parse_layout(layout_text)?;
    // The array without a layout gets the default one; `with_layout` then checks this layout
    // against its rank and dimensions, as XLA's ValidateLayoutForShape does.
    let bare = text::parse_shape(shape_text.trim())?;
    let array = bare.as_array().ok_or("not an array shape")?;
    let shape: ShapeBuf = util::with_layout(array, layout.view())?;
    let array = shape.as_array().ok_or("not an array shape")?;
    let view = layout.view();

    let order: Vec<String> = array
        .minor_to_major()
        .iter()
        .rev()
        .map(|d| match util::dimension_letter(array.rank(), i64::try_from(d.index()).unwrap_or(-1)) {
            Some(letter) => format!("{d} ({letter})"),
            None => d.to_string(),
        })
        .collect();
    println!("  shape:            {shape}");
    println!("  major to minor:   {}", order.join(", "));
    let tiles: Vec<String> = view.tiles().map(|t| t.to_string()).collect();
    println!("  tiles:            {}", if tiles.is_empty() { "none".to_owned() } else { tiles.join(" then ") });
    println!("  element size:     {} bits", size::element_size_in_bits(array));
    println!("  memory space:     {}", view.memory_space());

    let map = PhysicalMap::new(array)?;
    println!(
        "  storage:          {} slots = {} bytes for {} elements (XLA ArraySize: {} bytes)",
        map.storage_slots(),
        map.storage_bytes(),
        size::elements_in(array)?,
        size::array_size(array)?,
    );
    let first: Vec<String> = (0..map.storage_slots().min(8))
        .map(|s| match map.index_of_slot(Slot(s)) {
            Ok(Some(index)) => format!("{index:?}"),
            Ok(None) => "pad".to_owned(),
            Err(e) => e.to_string(),
        })
        .collect();
    println!("  first slots:      {}", first.join(" "));
    let last: Option<Vec<i64>> = array.dimensions().iter().map(|&d| (d > 0).then(|| d - 1)).collect();
    if let Some(last) = last {
        let bit = map.bit_offset(&last)?;
        println!("  last element:     {last:?} at slot {} = byte {}, bit {}", map.slot(&last)?.0, bit / 8, bit % 8);
    }
    Ok(())
}
