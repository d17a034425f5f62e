//! List every shape in a serialized HLO module (`HloModuleProto`, as written by
//! `as_serialized_hlo_module_proto()` or XLA's `--xla_dump_hlo_as_proto`).
//!
//! ```sh
//! cargo run --example hlo_shapes                           # examples/data/hlo_module_tuple.pb
//! cargo run --example hlo_shapes -- module.pb              # an HloModuleProto
//! cargo run --example hlo_shapes -- snapshot.pb snapshot   # an HloSnapshot (or `proto`: HloProto)
//! ```
//!
//! The HLO messages are read through small view protos that keep only the shape-carrying fields;
//! they were compiled with prost-build's `extern_path` pointing at this crate's shape types, the
//! way your own build of XLA's `hlo.proto` can reuse them.

use std::error::Error;
use std::path::PathBuf;

use xla_shape::Shape;
use xla_shape::hlo::{self, HloMessage, ShapeSite};

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
    let module = hlo::decode_module(&bytes, message)?;
    println!("module {:?}: {} computations", module.name, module.computations.len());

    let found = hlo::shapes(&module);
    let (mut valid, mut invalid) = (0, 0);
    for sited in &found {
        // XLA loads HLO with ValidateShapeWithOptionalLayout; so does this listing.
        match Shape::try_new_optional_layout(sited.shape) {
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
    println!("{} shapes: {valid} valid, {invalid} invalid", found.len());
    Ok(())
}
