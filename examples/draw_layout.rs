//! Draw where every element of a TPU layout lives: the picture's geometry (which slot holds
//! which element, which slots are padding) and its SVG, written to a file if one is named.
//!
//! ```sh
//! cargo run --features draw --example draw_layout -- tpu.svg
//! ```

use std::error::Error;

use xla_shape::draw::{self, Kind, Options, PaddingKind};
use xla_shape::text;

fn main() -> Result<(), Box<dyn Error>> {
    // bf16 with XLA's TPU tiling: 8×128 tiles, then pairs of rows inside them. 7 rows and 200
    // columns fill the tiles only partly, so some slots are padding.
    let shape = text::parse_shape("bf16[7,200]{1,0:T(8,128)(2,1)}")?;
    let array = shape.as_array().ok_or("an array")?;
    let picture = draw::picture(array, &Options::default())?;

    // The geometry says what each drawn slot holds; the first ones interleave rows 0 and 1.
    let first: Vec<String> = picture
        .slots
        .iter()
        .take(6)
        .map(|s| s.element.as_ref().map_or_else(|| "pad".to_owned(), |i| format!("({},{})", i[0], i[1])))
        .collect();
    println!("{shape}: first slots {}", first.join(" "));
    let padding = picture.slots.iter().filter(|s| s.kind == Kind::Padding(PaddingKind::Tile)).count();
    println!(
        "{} cells and {} slots drawn ({padding} of them tile padding), {} elided runs, {}×{} px",
        picture.cells.len(),
        picture.slots.len(),
        picture.elisions.len(),
        picture.width,
        picture.height
    );

    let svg = picture.to_svg();
    match std::env::args_os().nth(1) {
        Some(path) => {
            std::fs::write(&path, svg)?;
            println!("wrote {}", path.to_string_lossy());
        }
        None => println!("{} bytes of SVG (name a file to write it)", svg.len()),
    }
    Ok(())
}
