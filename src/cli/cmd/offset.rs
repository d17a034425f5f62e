//! `offset` (index → slot) and `index` (slot → index), on the library's `PhysicalMap`.

use crate::physical::{PhysicalMap, Slot};
use serde_json::json;

use crate::cli::Io;
use crate::cli::args::LocateArgs;
use crate::cli::cmd;
use crate::cli::fail::{Failure, Status};
use crate::cli::input::LoadedShape;
use crate::cli::output::{self, Reply};

/// `i0,i1,…` → the index; the empty string is a scalar's empty index.
fn parse_index(text: &str) -> Result<Vec<i64>, Failure> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|entry| {
            entry.trim().parse::<i64>().map_err(|e| {
                Failure::invalid(format!(
                    "invalid index `{}`: `{}` is not an integer ({e})",
                    output::shorten(text),
                    entry.trim()
                ))
            })
        })
        .collect()
}

fn parse_slot(text: &str) -> Result<Slot, Failure> {
    text.trim()
        .parse::<u64>()
        .map(Slot)
        .map_err(|e| Failure::invalid(format!("invalid slot `{}`: {e}", output::shorten(text))))
}

pub use crate::draw::label::join;

/// The shape and, unless `--lines` reads them from stdin, the one index or slot.
fn operands(args: &LocateArgs) -> Result<(LoadedShape, Option<&str>), Failure> {
    let from_source = args.source.hex.is_some() || args.source.file.is_some();
    let expected = [!from_source, !args.output.lines].into_iter().filter(|&given| given).count();
    if args.operands.len() != expected {
        let what = match (from_source, args.output.lines) {
            (false, false) => "SHAPE and an index (or slot)",
            (false, true) => "SHAPE only (stdin gives one index or slot per line)",
            (true, false) => "one index (or slot): --hex/--file gives the shape",
            (true, true) => "nothing: --hex/--file gives the shape and stdin the indices",
        };
        return Err(Failure::Usage(format!("expected {what}, found {} operands", args.operands.len())));
    }
    let (shape_text, item) =
        if from_source { (None, args.operands.first()) } else { (args.operands.first(), args.operands.get(1)) };
    let shape = cmd::load_shape(&args.source, shape_text.map(String::as_str))?;
    Ok((shape, item.map(String::as_str)))
}

/// Runs `one` on the single operand or on every stdin line.
fn drive(
    args: &LocateArgs,
    io: &mut Io<'_>,
    one: impl Fn(&LoadedShape, &PhysicalMap, &str) -> Result<Reply, Failure>,
) -> Result<Status, Failure> {
    let (loaded, item) = operands(args)?;
    let map = PhysicalMap::new(cmd::array_of(&loaded.shape)?)?;
    match item {
        None => {
            output::each_line(io, args.output.json, crate::cli::input::LineKind::Index, |line| one(&loaded, &map, line))
        }
        Some(item) => {
            let mut warnings = loaded.warnings.clone();
            // The JSON output prints the shape as a string.
            warnings.extend(cmd::text_loss_warning(&loaded.shape).filter(|_| args.output.json));
            let reply = one(&loaded, &map, item)?.with_warnings(warnings);
            output::emit(io, &reply, args.output.json)
        }
    }
}

pub fn run_offset(args: &LocateArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    drive(args, io, |loaded, map, text| {
        let index = parse_index(text)?;
        let slot = map.slot(&index)?;
        let bit = map.bit_offset(&index)?;
        let json = json!({
            "shape": loaded.shape.to_string(),
            "index": index,
            "slot": slot.get(),
            "bits_per_slot": map.bits_per_slot(),
            "bit_offset": bit,
            "byte_offset": bit / 8,
            "bit_in_byte": bit % 8,
        });
        Ok(Reply::new(slot.to_string(), json))
    })
}

pub fn run_index(args: &LocateArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    drive(args, io, |loaded, map, text| {
        let slot = parse_slot(text)?;
        let index = map.index_of_slot(slot)?;
        let json = json!({
            "shape": loaded.shape.to_string(),
            "slot": slot.get(),
            "index": index,
            "padding": index.is_none(),
        });
        Ok(Reply::new(index.as_deref().map_or_else(|| "padding".to_owned(), join), json))
    })
}
