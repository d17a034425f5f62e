//! `hlo`: every shape in a serialized HLO module, each validated, with a summary.

use std::path::Path;

use crate::Shape;
use crate::hlo::{self, HloMessage, ShapeSite};
use serde_json::{Value, json};

use crate::cli::Io;
use crate::cli::args::{HloArgs, HloType};
use crate::cli::cmd::decode;
use crate::cli::fail::{Failure, Status};
use crate::cli::input::{self, MAX_HLO_INPUT_BYTES};
use crate::cli::output::{self, Reply};

fn message(kind: HloType) -> HloMessage {
    match kind {
        HloType::Module => HloMessage::Module,
        HloType::Proto => HloMessage::Proto,
        HloType::Snapshot => HloMessage::Snapshot,
    }
}

/// Which kind of site, for the summary counts.
fn kind(site: &ShapeSite<'_>) -> &'static str {
    match site {
        ShapeSite::HostParameter { .. } | ShapeSite::HostResult => "host_program_shape",
        ShapeSite::ComputationParameter { .. } | ShapeSite::ComputationResult { .. } => "computation_program_shape",
        ShapeSite::Instruction { .. } => "instruction",
        ShapeSite::OutfeedShape { .. } => "outfeed_shape",
        ShapeSite::OperandShape { .. } => "operand_shapes_with_layout",
    }
}

/// The full listing (or, `compact`, the summary line alone) of one module.
fn reply(kind_of: HloType, bytes: &[u8], compact: bool, name: &str) -> Result<Reply, Failure> {
    if bytes.is_empty() {
        return Err(Failure::invalid("empty input: no HLO bytes"));
    }
    let module = hlo::decode_module(bytes, message(kind_of))?;
    let shapes = hlo::shapes(&module);
    let mut lines = vec![format!(
        "module {} ({} computation{})",
        module.name,
        module.computations.len(),
        if module.computations.len() == 1 { "" } else { "s" }
    )];
    let mut entries = Vec::new();
    let mut invalid = Vec::new();
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for sited in &shapes {
        // XLA loads modules with ValidateShapeWithOptionalLayout.
        let validation = Shape::try_new_optional_layout(sited.shape);
        let printed = sited.shape.to_string();
        let count = counts.entry(kind(&sited.site)).or_default();
        *count = count.saturating_add(1);
        let error = validation.err().map(|e| e.to_string());
        match &error {
            Some(e) => {
                lines.push(format!("{} / {printed}  [invalid: {e}]", sited.site));
                invalid.push(format!("{}: {e}", sited.site));
            }
            None => lines.push(format!("{} / {printed}", sited.site)),
        }
        entries.push(json!({
            "site": sited.site.to_string(),
            "kind": kind(&sited.site),
            "shape": printed,
            "valid": error.is_none(),
            "error": error,
        }));
    }
    let findings = hlo::wire_reports(bytes, message(kind_of))?;
    let (mut unknown, mut non_canonical) = (Vec::new(), Vec::new());
    let (mut omitted_unknown, mut omitted_non_canonical) = (0, 0);
    for found in &findings {
        for line in found.report.to_string().lines() {
            lines.push(format!("{} / {line}", found.site));
        }
        let (u, n) = decode::report_json(&found.report);
        let with_site = |list: Value| match list {
            Value::Array(items) => items
                .into_iter()
                .map(|mut item| {
                    if let Value::Object(fields) = &mut item {
                        fields.insert("site".to_owned(), json!(found.site));
                    }
                    item
                })
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        };
        unknown.extend(with_site(u));
        non_canonical.extend(with_site(n));
        omitted_unknown = found.report.omitted_unknown_fields.saturating_add(omitted_unknown);
        omitted_non_canonical = found.report.omitted_non_canonical.saturating_add(omitted_non_canonical);
    }
    let breakdown = counts.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
    let summary = format!(
        "{name}summary: {} shapes ({breakdown}), {} invalid, {} unknown fields, {} non-canonical encodings",
        shapes.len(),
        invalid.len(),
        unknown.len().saturating_add(omitted_unknown),
        non_canonical.len().saturating_add(omitted_non_canonical),
    );
    lines.push(summary.clone());
    let json = json!({
        "module": module.name,
        "computations": module.computations.len(),
        "shapes": if compact { Value::Null } else { Value::Array(entries) },
        "counts": counts,
        "total": shapes.len(),
        "invalid": invalid.len(),
        "unknown_fields": unknown,
        "non_canonical": non_canonical,
    });
    let error = invalid.first().map(|first| format!("{} invalid shape(s); first: {first}", invalid.len()));
    let text = if compact { summary } else { lines.join("\n") };
    Ok(Reply { text, json, error, warnings: Vec::new() })
}

pub fn run(args: &HloArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    if args.output.lines {
        return output::each_line(io, args.output.json, |line| {
            let bytes = input::read_file(Path::new(line), MAX_HLO_INPUT_BYTES)?;
            reply(args.message, &bytes, true, &format!("{line}: "))
        });
    }
    let bytes = input::read_input(io.stdin, args.file.as_deref(), MAX_HLO_INPUT_BYTES)?;
    output::emit(io, &reply(args.message, &bytes, false, "")?, args.output.json)
}
