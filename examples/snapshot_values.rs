//! Read the values recorded in an `HloSnapshot` (the arguments and result XLA saved for a run)
//! and the constants of its module: validate each literal, print it as XLA's HLO text does, and
//! use the numbers.
//!
//! ```sh
//! cargo run --example snapshot_values                      # examples/data/snapshot.pb
//! cargo run --example snapshot_values -- my_snapshot.pb
//! ```

use std::error::Error;
use std::path::PathBuf;

use xla_shape::literal::{Literal, Values};
use xla_shape::proto::LiteralProto;
use xla_shape::{codec, hlo};

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/data/snapshot.pb"), PathBuf::from);
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    // Each literal's bytes, with its site; nothing is decoded yet.
    for sited in hlo::literals(&bytes, hlo::HloMessage::Snapshot)? {
        // Unknown fields or non-canonical encodings inside a literal are named, not dropped.
        let decoded = codec::decode_lenient::<LiteralProto>(sited.bytes)?;
        if !decoded.report.is_empty() {
            eprint!("{}: {}", sited.site, decoded.report);
        }
        let proto = decoded.message;
        let shape = proto.shape.as_ref().map(ToString::to_string).unwrap_or_default();
        // Validation checks the values against the shape once; reading trusts it.
        let literal = match Literal::try_new(&proto) {
            Ok(literal) => literal,
            Err(error) => {
                println!("{}: {shape}  [invalid: {error}]", sited.site);
                continue;
            }
        };
        // XLA's own text, with its limit of 10 elements for large arrays.
        println!("{}: {shape} {}", sited.site, literal.to_text(Some(10))?);
        // The numbers themselves, in row-major order.
        if let Some(array) = literal.as_array() {
            if let Values::F32(values) = array.values()? {
                let sum: f64 = values.iter().map(|&x| f64::from(x)).sum();
                println!("    {} f32 values, sum {sum}", values.len());
            }
        }
    }
    Ok(())
}
