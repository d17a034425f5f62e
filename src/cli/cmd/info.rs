//! `info`: the library's description of a shape (`text::describe_sizes`), as text or JSON; or,
//! for an HLO module, a summary read as `hlo` reads it (`docs/hlo.md`, "Info of a module").

use crate::{ShapeBuf, size, text, util};
use serde_json::{Map, Value, json};

use crate::cli::Io;
use std::fmt::Write as _;
use std::path::Path;

use crate::cli::args::{InfoArgs, ModuleFormat};
use crate::cli::cmd::{self, hlo};
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

/// The summary of a module for people: name, counts, the entry computation layout with each
/// shape described, the shardings.
fn module_reply(summary: &hlo::ModuleSummary) -> Reply {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let (computations, instructions) = (summary.computations, summary.instructions);
    let mut text = format!(
        "module {}: {computations} computation{}, {instructions} instruction{}\nentry computation layout:",
        summary.name,
        plural(computations),
        plural(instructions),
    );
    let mut entry = Vec::new();
    for (site, proto) in &summary.collected.entry {
        let site = site.strip_prefix("host_program_shape / ").unwrap_or(site);
        // XLA loads modules with ValidateShapeWithOptionalLayout.
        match crate::Shape::try_new_optional_layout(proto) {
            Ok(shape) => {
                let description = text::describe(shape);
                let _ = write!(text, "\n  {site}: {}", description.title());
                for (label, value) in description.lines() {
                    let _ = write!(text, "\n    {label}: {value}");
                }
                let lines: Vec<Value> = description.lines().iter().map(|(l, v)| json!([l, v])).collect();
                entry.push(json!({"site": site, "shape": description.title(), "description": lines}));
            }
            Err(e) => {
                let _ = write!(text, "\n  {site}: {proto}  [invalid: {e}]");
                entry.push(json!({"site": site, "shape": proto.to_string(), "error": e.to_string()}));
            }
        }
    }
    let collected = &summary.collected;
    let mut shardings = Vec::new();
    if collected.sharded > 0 {
        let _ = write!(text, "\nshardings ({} instruction{}):", collected.sharded, plural(collected.sharded));
    }
    // By site: a scheduled module's text lists its instructions in another order than its proto.
    let mut sorted: Vec<_> = collected.shardings.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (site, sharding) in sorted {
        match sharding {
            Ok(s) => {
                let _ = write!(text, "\n  {site}: {s}");
                shardings.push(json!({"site": site, "sharding": s}));
            }
            Err(e) => {
                let _ = write!(text, "\n  {site}: [invalid sharding: {e}]");
                shardings.push(json!({"site": site, "sharding_error": e}));
            }
        }
    }
    if collected.shardings.len() < collected.sharded {
        let _ = write!(text, "\n  … {} more", collected.sharded.saturating_sub(collected.shardings.len()));
    }
    let json = json!({
        "module": summary.name,
        "computations": computations,
        "instructions": instructions,
        "entry_computation_layout": entry,
        "sharded_instructions": collected.sharded,
        "shardings": shardings,
    });
    Reply::new(text, json)
}

pub fn run(args: &InfoArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    let module_path = args.shape.shape.as_deref().map(Path::new).filter(|p| p.is_file());
    let forced = args.message.is_some() || matches!(args.format.format, ModuleFormat::Text | ModuleFormat::Mlir);
    if module_path.is_some() || forced {
        if args.shape.output.lines {
            return Err(Failure::Usage("info of a module reads one module, not --lines".into()));
        }
        let path = module_path.or(args.shape.source.file.as_deref());
        let input = input::module_input(Some(&mut *io.stdin), path, args.format.format)?;
        let summary = hlo::module_summary(&input, args.message, args.format, &hlo::display_path(path))?;
        return output::emit(io, &module_reply(&summary), args.shape.output.json);
    }
    let args = &args.shape;
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
