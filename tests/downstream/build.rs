//! Compiles `proto/downstream/model.proto`, which imports `xla/xla_data.proto` from the parent
//! crate's `proto/` directory. `extern_path` maps the whole `xla` package onto
//! `xla_shape::proto`, so no second copy of XLA's types is generated.

use std::io::{Error, Result};
use std::path::PathBuf;

fn main() -> Result<()> {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").ok_or_else(|| Error::other("no manifest dir"))?);
    let own = manifest.join("proto");
    let xla = manifest.join("../../proto");
    println!("cargo:rerun-if-changed={}", own.display());
    println!("cargo:rerun-if-changed={}", xla.join("xla/xla_data.proto").display());
    let descriptors =
        protox::compile(["downstream/model.proto"], [&own, &xla]).map_err(|e| Error::other(e.to_string()))?;
    prost_build::Config::new()
        .extern_path(".xla", "::xla_shape::proto")
        // The XLA types serialize with the `serde` feature of xla-shape, so the messages that
        // embed them can too.
        .type_attribute(".downstream", "#[derive(serde::Serialize, serde::Deserialize)]")
        .compile_fds(descriptors)
}
