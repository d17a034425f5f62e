//! `draw`: the library's picture of an array (`draw::picture_of_shape`) as SVG, on stdout or in
//! a file, or a JSON summary of it.

use std::path::Path;

use serde_json::json;

use crate::Dim;
use crate::draw::{self, Kind, Options, Picture};

use crate::cli::Io;
use crate::cli::args::DrawArgs;
use crate::cli::cmd;
use crate::cli::fail::{Failure, Status};
use crate::cli::outfile::OutFile;
use crate::cli::output::{self, Reply};

/// `ROWS,COLUMNS` as two dimension numbers.
fn grid(text: &str) -> Result<(Dim, Dim), Failure> {
    let parsed: Vec<Option<usize>> = text.split(',').map(|p| p.trim().parse::<usize>().ok()).collect();
    match parsed.as_slice() {
        [Some(rows), Some(columns)] => Ok((Dim(*rows), Dim(*columns))),
        _ => Err(Failure::Usage(format!(
            "--grid takes two dimension numbers ROWS,COLUMNS, found `{}`",
            output::shorten(text)
        ))),
    }
}

fn summary(picture: &Picture, file: Option<&Path>) -> serde_json::Value {
    let padding = picture.slots.iter().filter(|s| matches!(s.kind, Kind::Padding(_))).count();
    json!({
        "shape": picture.shape,
        "width": picture.width,
        "height": picture.height,
        "cells": picture.cells.len(),
        "slots": picture.slots.len(),
        "padding_slots": padding,
        "elisions": picture.elisions.len(),
        "file": file.map(|f| f.display().to_string()),
    })
}

/// Writes the picture to `-o`'s file, if there is one.
fn write_svg(out: Option<OutFile>, svg: &str) -> Result<(), Failure> {
    let Some(mut out) = out else { return Ok(()) };
    out.write_bytes(svg.as_bytes())?;
    out.write_bytes(b"\n")?;
    out.finish()
}

pub fn run(args: &DrawArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    let options = Options {
        grid: args.grid.as_deref().map(grid).transpose()?,
        max_extent: args.max_extent,
        max_slices: args.max_slices,
        max_slots: args.max_slots,
    };
    // The output first: one that cannot be written fails before the input is read.
    let out = args.output.as_deref().map(OutFile::create).transpose()?;
    let loaded = cmd::load_shape(&args.source, args.shape.as_deref())?;
    if let Some(text) = &args.sharding {
        return sharding(args, io, &loaded.shape, text, out);
    }
    let picture = draw::picture_of_shape(loaded.shape.view(), &options)?;
    let svg = picture.to_svg();
    let mut warnings = loaded.warnings;
    warnings.extend(cmd::text_loss_warning(&loaded.shape));
    output::warn(io.stderr, "", &warnings);
    write_svg(out, &svg)?;
    let file = args.output.as_deref();
    let text = match (args.json, file) {
        (true, _) => summary(&picture, file).to_string(),
        (false, None) => svg,
        (false, Some(_)) => return Ok(Status::Ok),
    };
    output::emit(io, &Reply::new(text, serde_json::Value::Null), false)
}

/// `--sharding`: the blocks of a sharding over the array, as SVG (or a JSON summary).
fn sharding(
    args: &DrawArgs,
    io: &mut Io<'_>,
    shape: &crate::ShapeBuf,
    text: &str,
    out: Option<OutFile>,
) -> Result<Status, Failure> {
    let array = cmd::array_of(shape)?;
    let sharding: crate::sharding::HloSharding = text.parse()?;
    let placement = sharding.placement(&array, args.devices)?;
    let picture = draw::sharding_picture(&placement);
    let svg = picture.to_svg();
    write_svg(out, &svg)?;
    let text = match (args.json, &args.output) {
        (true, file) => json!({
            "shape": shape.to_string(),
            "sharding": sharding.to_string(),
            "width": picture.width,
            "height": picture.height,
            "blocks": picture.blocks.len(),
            "file": file.as_deref().map(|f| f.display().to_string()),
        })
        .to_string(),
        (false, None) => svg,
        (false, Some(_)) => return Ok(Status::Ok),
    };
    output::emit(io, &Reply::new(text, serde_json::Value::Null), false)
}
