//! `info`: the library's description of a shape (`text::describe_sizes`), as text or JSON.

use crate::{ShapeBuf, size, text, util};
use serde_json::{Map, Value, json};

use crate::cli::Io;
use crate::cli::args::ShapeOnlyArgs;
use crate::cli::cmd;
use crate::cli::fail::{Failure, Status};
use crate::cli::input::{self, LoadedShape};
use crate::cli::output::{self, Reply};

/// Numbers for machines: each is `null` where the library cannot compute it.
fn array_json(shape: &ShapeBuf) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(array) = shape.view().array_or_buffer() else { return out };
    let ok = |v: Result<Value, crate::Error>| v.unwrap_or(Value::Null);
    out.insert("element_type".into(), json!(array.element_type().to_string()));
    out.insert("dimensions".into(), json!(array.dimensions()));
    out.insert("minor_to_major".into(), json!(array.minor_to_major().to_vec()));
    out.insert("true_rank".into(), json!(util::true_num_dimensions(array)));
    out.insert("elements".into(), ok(size::elements_in(array).map(Value::from)));
    out.insert("byte_strides".into(), ok(size::byte_strides(array).map(|s| json!(s))));
    out.insert("byte_size".into(), ok(size::byte_size_of_elements(array).map(Value::from)));
    out.insert("array_size".into(), ok(size::array_size(array).map(Value::from)));
    out.insert("array_data_size".into(), ok(size::array_data_size(array).map(Value::from)));
    out.insert("storage_slots".into(), ok(size::storage_slots(array).map(Value::from)));
    out.insert("storage_bytes".into(), ok(size::storage_bytes(array).map(Value::from)));
    out
}

fn reply(loaded: LoadedShape) -> Reply {
    let description = text::describe_sizes(loaded.shape.view());
    let mut json = array_json(&loaded.shape);
    json.insert("shape".into(), json!(description.title()));
    let lines: Vec<Value> = description.lines().iter().map(|(label, value)| json!([label, value])).collect();
    json.insert("description".into(), Value::Array(lines));
    let mut warnings = loaded.warnings;
    warnings.extend(cmd::text_loss_warning(&loaded.shape));
    let mut text = description.to_string();
    text.pop(); // emit adds the final newline
    Reply::new(text, Value::Object(json)).with_warnings(warnings)
}

/// One line per shape for `--lines`: the title, then `label: value` pairs.
fn one_line(reply: Reply) -> Reply {
    let text = reply.text.lines().map(str::trim).collect::<Vec<_>>().join("; ");
    Reply { text, ..reply }
}

pub fn run(args: &ShapeOnlyArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    if args.output.lines {
        if args.shape.is_some() || args.source.hex.is_some() || args.source.file.is_some() {
            return Err(Failure::Usage("with --lines, stdin gives one SHAPE string per line".into()));
        }
        return output::each_line(io, args.output.json, input::LineKind::Text, |line| {
            Ok(one_line(reply(input::shape_from_text(line)?)))
        });
    }
    let loaded = cmd::load_shape(&args.source, args.shape.as_deref())?;
    output::emit(io, &reply(loaded), args.output.json)
}
