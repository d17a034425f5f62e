//! `decode`: serialized bytes → XLA's string, with validation and a report of what the bytes
//! held beyond the message.

use crate::codec::{self, WireReport};
use crate::proto::{LayoutProto, OpSharding, ProgramShapeProto, ShapeProto};
use crate::sharding::HloSharding;
use crate::text::{Dropped, LostField};
use crate::{Error, Layout, ProgramShape, Shape, text};
use serde_json::{Value, json};

use crate::cli::Io;
use crate::cli::args::{BytesArgs, MessageType};
use crate::cli::fail::{Failure, Status};
use crate::cli::input;
use crate::cli::output::{self, Reply};

/// What decoding and validating one message found.
pub struct Outcome {
    /// XLA's string of the message, printed even when it is invalid (as XLA prints in errors).
    pub text: String,
    pub validation: Result<(), Error>,
    /// Fields the string does not hold: each field's path, and which field it is.
    pub lost_in_text: Vec<(String, Dropped)>,
    pub reencoded: Vec<u8>,
    pub report: WireReport,
    /// For a valid sharding: the text of its tile-assignment form (`HloSharding::to_v2`; a
    /// named sharding converted as XLA's `v3_to_v2_sharding`, any other as it is).
    pub v2: Option<String>,
}

fn lost(shape: Shape<'_>, prefix: &str) -> Vec<(String, Dropped)> {
    paths(text::lost_in_text(shape), prefix)
}

fn paths(lost: Vec<LostField>, prefix: &str) -> Vec<(String, Dropped)> {
    lost.into_iter().map(|l| (format!("{prefix}{}", l.path.as_str()), l.dropped)).collect()
}

/// Decodes leniently (every finding reported, nothing rejected for it) and validates.
pub fn decode_any(message: MessageType, bytes: &[u8], optional_layout: bool) -> Result<Outcome, Error> {
    match message {
        MessageType::Shape => {
            let decoded = codec::decode_lenient::<ShapeProto>(bytes)?;
            let shape = if optional_layout {
                Shape::try_new_optional_layout(&decoded.message)
            } else {
                Shape::try_new(&decoded.message)
            };
            Ok(Outcome {
                text: decoded.message.to_string(),
                lost_in_text: shape.as_ref().map_or_else(|_| Vec::new(), |s| lost(*s, "")),
                validation: shape.map(drop),
                reencoded: codec::encode(&decoded.message),
                report: decoded.report,
                v2: None,
            })
        }
        MessageType::Layout => {
            let decoded = codec::decode_lenient::<LayoutProto>(bytes)?;
            let layout = Layout::try_new(&decoded.message);
            let lost_in_text =
                layout.as_ref().map_or_else(|_| Vec::new(), |l| paths(text::lost_in_layout_text(*l), ""));
            Ok(Outcome {
                text: decoded.message.to_string(),
                validation: layout.map(drop),
                lost_in_text,
                reencoded: codec::encode(&decoded.message),
                report: decoded.report,
                v2: None,
            })
        }
        MessageType::Sharding => {
            let decoded = codec::decode_lenient::<OpSharding>(bytes)?;
            let sharding = HloSharding::from_proto(&decoded.message);
            let v2 = sharding.as_ref().ok().and_then(|s| s.to_v2().ok()).map(|s| s.to_string());
            Ok(Outcome {
                text: sharding.as_ref().map(ToString::to_string).unwrap_or_default(),
                validation: sharding.map(drop),
                lost_in_text: Vec::new(),
                reencoded: codec::encode(&decoded.message),
                report: decoded.report,
                v2,
            })
        }
        MessageType::ProgramShape => {
            let decoded = codec::decode_lenient::<ProgramShapeProto>(bytes)?;
            let program = if optional_layout {
                ProgramShape::try_new_optional_layout(&decoded.message)
            } else {
                ProgramShape::try_new(&decoded.message)
            };
            let lost_in_text = program.as_ref().map_or_else(
                |_| Vec::new(),
                |p| {
                    let mut all: Vec<(String, Dropped)> =
                        p.parameters().enumerate().flat_map(|(i, s)| lost(s, &format!("parameters[{i}]."))).collect();
                    all.extend(lost(p.result(), "result."));
                    all
                },
            );
            Ok(Outcome {
                text: decoded.message.to_string(),
                validation: program.map(drop),
                lost_in_text,
                reencoded: codec::encode(&decoded.message),
                report: decoded.report,
                v2: None,
            })
        }
    }
}

/// The findings of a wire report as JSON lists.
pub fn report_json(report: &WireReport) -> (Value, Value) {
    let unknown = report
        .unknown_fields
        .iter()
        .map(|f| {
            json!({
                "path": f.path.as_str(),
                "field_number": f.field_number,
                "wire_type": f.wire_type.to_string(),
                "message": f.to_string(),
            })
        })
        .collect();
    let non_canonical = report
        .non_canonical
        .iter()
        .map(|f| {
            json!({
                "path": f.path.as_str(),
                "field_number": f.field_number,
                "kind": f.kind.to_string(),
                "message": f.to_string(),
            })
        })
        .collect();
    (Value::Array(unknown), Value::Array(non_canonical))
}

/// Warnings for stderr: every wire finding, and what the string loses.
pub fn warnings(outcome: &Outcome) -> Vec<String> {
    let mut warnings: Vec<String> = outcome.report.to_string().lines().map(str::to_owned).collect();
    if !outcome.lost_in_text.is_empty() {
        let fields: Vec<&str> = outcome.lost_in_text.iter().map(|(path, _)| path.as_str()).collect();
        let mut reasons: Vec<&str> = Vec::new();
        for (_, dropped) in &outcome.lost_in_text {
            if !reasons.contains(&dropped.reason()) {
                reasons.push(dropped.reason());
            }
        }
        warnings.push(format!("the XLA string does not hold {} ({})", fields.join(", "), reasons.join("; ")));
    }
    warnings
}

/// The decode reply for bytes: the string (text) or the full object (JSON).
pub fn reply(message: MessageType, bytes: &[u8], optional_layout: bool) -> Reply {
    match decode_any(message, bytes, optional_layout) {
        Ok(outcome) => {
            let (unknown_fields, non_canonical) = report_json(&outcome.report);
            let error = outcome.validation.as_ref().err().map(|e| output::shorten(&e.to_string()));
            let mut json = json!({
                "shape": outcome.text,
                "valid": error.is_none(),
                "error": error,
                "reencoded_hex": input::encode_hex(&outcome.reencoded),
                "lossless": outcome.report.is_empty(),
                "unknown_fields": unknown_fields,
                "non_canonical": non_canonical,
                "omitted_unknown_fields": outcome.report.omitted_unknown_fields,
                "omitted_non_canonical": outcome.report.omitted_non_canonical,
                "lost_in_text": outcome.lost_in_text.iter().map(|(path, _)| path.as_str()).collect::<Vec<_>>(),
            });
            if let (Some(v2), Some(object)) = (&outcome.v2, json.as_object_mut()) {
                object.insert("v2".to_owned(), Value::String(v2.clone()));
            }
            let warnings = warnings(&outcome);
            Reply { text: outcome.text, json, error, warnings }
        }
        Err(e) => {
            let error = output::shorten(&e.to_string());
            let json = json!({
                "shape": null,
                "valid": false,
                "error": error,
                "reencoded_hex": null,
                "lossless": false,
                "unknown_fields": [],
                "non_canonical": [],
            });
            Reply { text: String::new(), json, error: Some(error), warnings: Vec::new() }
        }
    }
}

pub fn run(args: &BytesArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    let (message, optional_layout) = (args.message, args.optional_layout);
    if args.output.lines {
        return output::each_line(io, args.output.json, input::LineKind::Hex, |line| {
            Ok(reply(message, &input::decode_hex(line.as_bytes())?, optional_layout))
        });
    }
    let bytes = super::read_bytes(args, io)?;
    output::emit(io, &reply(message, &bytes, optional_layout), args.output.json)
}
