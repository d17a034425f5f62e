//! List every shape in a serialized HLO module (`HloModuleProto`, as written by
//! `as_serialized_hlo_module_proto()` or XLA's `--xla_dump_hlo_as_proto`).
//!
//! ```sh
//! cargo run --example hlo_shapes                           # examples/data/hlo_module_tuple.pb
//! cargo run --example hlo_shapes -- module.pb              # an HloModuleProto
//! cargo run --example hlo_shapes -- snapshot.pb snapshot   # an HloSnapshot (or `proto`: HloProto)
//! ```
//!
//! The module is walked in place, one shape at a time: literals and everything else that holds
//! no shape are skipped without a copy, so a module of any size lists in its own size of memory.

use std::error::Error;
use std::path::PathBuf;

use xla_shape::Shape;
use xla_shape::hlo::{self, Found, HloMessage, ShapeSite};

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args_os().skip(1);
    let path = args.next().map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/data/hlo_module_tuple.pb"),
        PathBuf::from,
    );
    let message = match args.next().as_deref().and_then(|m| m.to_str()) {
        None | Some("module") => HloMessage::Module,
        Some("proto") => HloMessage::Proto,
        Some("snapshot") => HloMessage::Snapshot,
        Some(other) => return Err(format!("unknown message {other:?}: use module, proto or snapshot").into()),
    };
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let module = hlo::header(&bytes, message)?;
    println!("module {:?}: {} computations", module.name, module.computations);

    let (mut valid, mut invalid) = (0, 0);
    for found in hlo::walk(&bytes, message) {
        let sited = match found? {
            Found::Shape(sited) => sited,
            Found::Report(found) => {
                print!("  {}: {}", found.site, found.report);
                continue;
            }
        };
        // XLA loads HLO with ValidateShapeWithOptionalLayout; so does this listing.
        match Shape::try_new_optional_layout(&sited.shape) {
            Ok(shape) => {
                valid += 1;
                let opcode = match sited.site {
                    ShapeSite::Instruction { opcode, .. } => format!(" [{opcode}]"),
                    _ => String::new(),
                };
                println!("  {}{opcode}: {shape}", sited.site);
            }
            Err(e) => {
                invalid += 1;
                println!("  {}: INVALID {}: {e}", sited.site, sited.shape);
            }
        }
    }
    println!("{} shapes: {valid} valid, {invalid} invalid", valid + invalid);
    Ok(())
}
