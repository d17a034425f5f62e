//! Compiles the vendored `proto/xla/xla_data.proto` with `protox` (pure Rust, no system `protoc`)
//! into prost types at `$OUT_DIR/xla.rs`, and keeps the compiled descriptor set beside them.

use std::io::{Error, Result};
use std::path::PathBuf;

use prost::Message;

fn main() -> Result<()> {
    // prost-build >= 0.14.1 no longer emits this itself.
    println!("cargo:rerun-if-changed=proto");

    let file_descriptors =
        protox::compile(["xla/xla_data.proto"], ["proto"]).map_err(|e| Error::other(e.to_string()))?;
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| Error::other("OUT_DIR unset"))?);
    std::fs::write(out_dir.join("xla_data.bin"), file_descriptors.encode_to_vec())?;

    let mut config = prost_build::Config::new();
    // prost derives Eq/Hash only where it can prove them; these recursive messages need a hand.
    // Adding them to TileProto or SplitConfigProto would be a duplicate-derive compile error.
    for message in [".xla.ShapeProto", ".xla.LayoutProto", ".xla.ProgramShapeProto"] {
        config.message_attribute(message, "#[derive(Eq, Hash)]");
    }
    config.compile_fds(file_descriptors)
}
