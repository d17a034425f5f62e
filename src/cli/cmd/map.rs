//! `map`: the physical memory of a small array as the seed documents draw it (each slot with its
//! element, padding shown as its fill), or with `--grid` the logical array with each element's
//! slot. Every slot comes from the library's `PhysicalMap`; this module only lays out text.

use std::fmt::Write as _;

use crate::draw::label::{MAX_LETTERS, element_label, fill_label};
use crate::padding;
use crate::physical::{PhysicalMap, Slot};
use crate::proto::PaddingValue;
use crate::{ArrayShape, Error};
use serde_json::{Value, json};

use crate::cli::Io;
use crate::cli::args::{Labels, MapArgs};
use crate::cli::cmd;
use crate::cli::fail::{Failure, Status};
use crate::cli::input::{self, LoadedShape};
use crate::cli::output::{self, Reply};
use crate::draw::label::join;

/// The largest buffer `map` draws, in slots.
pub const MAX_MAP_SLOTS: u64 = 4096;
/// Memory cells per text row, unless a tile gives the row.
const ROW: usize = 16;

/// Cells per memory row: one tile of the first tiling level when it has 2 to 64 elements (so
/// tiles line up), else [`ROW`].
fn row_length(array: ArrayShape<'_>) -> usize {
    let tile = array.layout().and_then(|l| l.tiles().next());
    let elements =
        tile.and_then(|t| t.dimensions().iter().try_fold(1i64, |acc, &d| (d > 0).then(|| acc.saturating_mul(d))));
    match elements.and_then(|n| usize::try_from(n).ok()) {
        Some(n @ 2..=64) => n,
        _ => ROW,
    }
}

/// Cells right-aligned to one width, `per_row` to a line (all on one line when `None`).
fn rows(cells: &[String], per_row: Option<usize>) -> Vec<String> {
    let width = cells.iter().map(|c| c.chars().count()).max().unwrap_or(0);
    let line = |chunk: &[String]| chunk.iter().map(|c| format!("{c:>width$}")).collect::<Vec<_>>().join(" ");
    match per_row {
        Some(n) => cells.chunks(n.max(1)).map(line).collect(),
        None => vec![line(cells)],
    }
}

struct Drawing {
    header: String,
    body: Vec<String>,
    json: Value,
}

#[allow(clippy::arithmetic_side_effects)] // row ≥ 1 and cells.len() ≤ MAX_MAP_SLOTS, checked by the caller
fn memory(
    array: ArrayShape<'_>,
    map: &PhysicalMap,
    letters: bool,
    pad: &str,
    compact: bool,
) -> Result<Drawing, Failure> {
    let dims = array.dimensions();
    let mut cells = Vec::new();
    let mut slots_json = Vec::new();
    let mut legend = Vec::new();
    for s in 0..map.storage_slots() {
        if let Some(index) = map.index_of_slot(Slot(s))? {
            let label = element_label(&index, dims, letters);
            if letters {
                legend.push((label.clone(), format!("{label}=({})", join(&index))));
            }
            cells.push(label);
            slots_json.push(json!(index));
        } else {
            cells.push(pad.to_owned());
            slots_json.push(Value::Null);
        }
    }
    let mut body: Vec<String> = if compact {
        rows(&cells, None)
    } else {
        let row = row_length(array);
        let lines = rows(&cells, Some(row));
        let width = (cells.len().saturating_sub(1) / row * row).to_string().len();
        lines.iter().enumerate().map(|(r, line)| format!("slot {:>width$}: {line}", r * row)).collect()
    };
    if !legend.is_empty() {
        legend.sort();
        body.push(legend.into_iter().map(|(_, entry)| entry).collect::<Vec<_>>().join(" "));
    }
    Ok(Drawing { header: String::new(), body, json: json!({ "slots": slots_json }) })
}

// The caller checked the buffer has at most MAX_MAP_SLOTS slots, so the padded extents (each
// ≥ 1 where a slot exists) and their product are small; `rank - 2` and `rank - 1` appear only
// under `rank >= 2` or `rank > 2`; positions stay below their extents.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn grid(array: ArrayShape<'_>, map: &PhysicalMap, compact: bool) -> Result<Drawing, Failure> {
    let dims = array.dimensions();
    let extents = padding::padded_extents(array)?;
    let rank = extents.len();
    let columns = usize::try_from(extents.last().copied().unwrap_or(1)).unwrap_or(1).max(1);
    let rows_per_block = if rank >= 2 { usize::try_from(extents[rank - 2]).unwrap_or(1).max(1) } else { 1 };
    let mut cells = Vec::new();
    let mut element_slots = Vec::new();
    let mut position = vec![0i64; rank];
    let total = extents.iter().try_fold(1i64, |n, &e| n.checked_mul(e)).ok_or(Error::Overflow {
        path: crate::error::FieldPath::root(),
        what: crate::error::Quantity::PaddedExtents,
    })?;
    for _ in 0..total.max(1) {
        if position.iter().zip(dims).all(|(&p, &d)| p < d) {
            let slot = map.slot(&position)?;
            cells.push(slot.to_string());
            element_slots.push(json!({ "index": position, "slot": slot.get() }));
        } else {
            cells.push("-".to_owned());
        }
        // Row-major over the padded extents.
        for (p, &e) in position.iter_mut().zip(&extents).rev() {
            *p += 1;
            if *p < e {
                break;
            }
            *p = 0;
        }
    }
    let lines = rows(&cells, Some(columns));
    let mut body = Vec::new();
    for (b, block) in lines.chunks(rows_per_block).enumerate() {
        if rank > 2 {
            let mut leading = Vec::new();
            let mut rest = b;
            for &e in extents[..rank - 2].iter().rev() {
                let e = usize::try_from(e).unwrap_or(1).max(1);
                leading.push(rest % e);
                rest /= e;
            }
            leading.reverse();
            let prefix = leading.iter().map(ToString::to_string).collect::<Vec<_>>().join(",");
            body.push(format!("[{prefix},:,:]"));
        }
        body.extend(block.iter().cloned());
    }
    if compact {
        body = vec![body.join(" | ")];
    }
    let mut header = String::from("; the slot of each element");
    if rank >= 2 {
        let _ = write!(header, " (rows: dimension {}, columns: dimension {})", rank - 2, rank - 1);
    }
    if padding::is_padded(array) {
        header.push_str("; - marks legacy padding");
    }
    Ok(Drawing { header, body, json: json!({ "element_slots": element_slots }) })
}

fn reply(loaded: LoadedShape, args: &MapArgs, compact: bool) -> Result<Reply, Failure> {
    let array = cmd::array_of(&loaded.shape)?;
    let map = PhysicalMap::new(array)?;
    let slots = map.storage_slots();
    if slots > MAX_MAP_SLOTS {
        return Err(
            Error::LimitExceeded { limit: crate::error::Limit::MapSlots, value: slots, max: MAX_MAP_SLOTS }.into()
        );
    }
    let elements = crate::size::elements_in(array)?;
    let letters = match args.labels {
        Labels::Auto => elements <= MAX_LETTERS,
        Labels::Index => false,
        Labels::Letters if elements <= MAX_LETTERS => true,
        Labels::Letters => {
            return Err(Failure::invalid(format!("--labels letters needs at most 26 elements, found {elements}")));
        }
    };
    let pad = fill_label(array);
    let drawing = if args.grid { grid(array, &map, compact)? } else { memory(array, &map, letters, &pad, compact)? };
    let shape = loaded.shape.to_string();
    let padding_value = array.layout().filter(|_| padding::is_padded(array)).map(|l| {
        PaddingValue::try_from(l.padding_value())
            .map_or_else(|_| l.padding_value().to_string(), |v| v.as_str_name().to_owned())
    });
    let mut header = format!(
        "{shape}: {slots} slot{} of {} bits ({} bytes)",
        if slots == 1 { "" } else { "s" },
        map.bits_per_slot(),
        map.storage_bytes()
    );
    if let (Some(value), Some(extents)) = (&padding_value, array.padded_dimensions()) {
        let _ = write!(header, "; legacy padding to [{}] with {value}, shown as {pad}", join(extents));
    }
    header.push_str(&drawing.header);
    let text = if compact {
        format!("{shape}: {}", drawing.body.join(" | "))
    } else {
        std::iter::once(header).chain(drawing.body).collect::<Vec<_>>().join("\n")
    };
    let mut json = json!({
        "shape": shape,
        "storage_slots": slots,
        "raw_slots": map.raw_slots(),
        "bits_per_slot": map.bits_per_slot(),
        "storage_bytes": map.storage_bytes(),
        "padding_label": pad,
        "padding_value": padding_value,
    });
    if let (Value::Object(out), Value::Object(extra)) = (&mut json, drawing.json) {
        out.extend(extra);
    }
    let mut warnings = loaded.warnings;
    warnings.extend(cmd::text_loss_warning(&loaded.shape));
    Ok(Reply::new(text, json).with_warnings(warnings))
}

pub fn run(args: &MapArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    let source = &args.shape;
    if source.output.lines {
        if source.shape.is_some() || source.source.hex.is_some() || source.source.file.is_some() {
            return Err(Failure::Usage("with --lines, stdin gives one SHAPE string per line".into()));
        }
        return output::each_line(io, source.output.json, input::LineKind::Text, |line| {
            reply(input::shape_from_text(line)?, args, true)
        });
    }
    let loaded = cmd::load_shape(&source.source, source.shape.as_deref())?;
    output::emit(io, &reply(loaded, args, false)?, source.output.json)
}
