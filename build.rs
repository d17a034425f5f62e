//! Compiles the vendored protos with `protox` (pure Rust, no system `protoc`) into prost types:
//!
//! `proto/xla/xla_data.proto` → `$OUT_DIR/xla.rs` (`xla_shape::proto`), with the compiled
//! descriptor set beside it. (Serialized HLO is read by `xla_shape::hlo`'s streaming walker,
//! which needs no generated types.)

use std::io::{Error, Result};
use std::path::{Path, PathBuf};

use prost::Message;

fn main() -> Result<()> {
    // prost-build >= 0.14.1 no longer emits this itself.
    println!("cargo:rerun-if-changed=proto");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| Error::other("OUT_DIR is not set"))?);
    compile_xla_data(&out_dir)
}

fn compile(file: &str) -> Result<prost_types::FileDescriptorSet> {
    protox::compile([file], ["proto"]).map_err(|e| Error::other(e.to_string()))
}

fn compile_xla_data(out_dir: &Path) -> Result<()> {
    let file_descriptors = compile("xla/xla_data.proto")?;
    std::fs::write(out_dir.join("xla_data.bin"), file_descriptors.encode_to_vec())?;

    let mut config = prost_build::Config::new();
    // prost derives Eq/Hash only where it can prove them; these recursive messages need a hand.
    // Adding them to TileProto or SplitConfigProto would be a duplicate-derive compile error.
    for message in [".xla.ShapeProto", ".xla.LayoutProto", ".xla.ProgramShapeProto"] {
        config.message_attribute(message, "#[derive(Eq, Hash)]");
    }
    // Feature `serde`: the raw messages and enums as plain structs (enum fields stay `i32`, as
    // prost stores them, so any value round-trips).
    config.type_attribute(".", "#[cfg_attr(feature = \"serde\", derive(serde::Serialize, serde::Deserialize))]");
    // Fields left out of a serialized message take their protobuf defaults, as on the wire.
    config.message_attribute(".", "#[cfg_attr(feature = \"serde\", serde(default))]");
    config.compile_fds(file_descriptors)
}
