//! `values`: the literals of a serialized HLO module, `HloProto`, `HloSnapshot` or bare
//! `LiteralProto` — one line per constant, argument and result, with its shape and its values in
//! XLA's text; typed JSON; `.npy` files.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::hlo::{self, HloMessage, SitedLiteral};
use crate::literal::{ArrayLiteral, Literal, Values};
use crate::primitive::PrimitiveType;
use crate::proto::LiteralProto;
use crate::{Shape, codec};

use crate::cli::Io;
use crate::cli::args::{ValuesArgs, ValuesType};
use crate::cli::cmd::hlo as hlo_cmd;
use crate::cli::fail::{Failure, Status};
use crate::cli::input::{self, ModuleInput};
use crate::cli::outfile::OutFile;
use crate::cli::output::{self, Reply};
use crate::hlo::module::{self, LiteralValue};
use crate::hlo::text::TextOptions;
use crate::proto::ShapeProto;

/// A literal's site as text, and as a file name stem for `--npy`.
struct Site {
    text: String,
    stem: String,
}

fn site(literal_site: &hlo::LiteralSite<'_>) -> Site {
    let text = literal_site.to_string();
    let stem = text.replace(['/', '['], ".").replace(']', "");
    Site { text, stem }
}

/// XLA's text of a literal with arrays of more than `limit` elements elided; a tuple lists its
/// elements (each elided on its own) instead of eliding as a whole.
fn text(literal: &Literal<'_>, limit: Option<usize>) -> crate::Result<String> {
    match literal {
        Literal::Tuple(tuple) => {
            let elements = tuple.elements().iter().map(|e| text(e, limit)).collect::<crate::Result<Vec<String>>>()?;
            Ok(format!("( {} )", elements.join(", ")))
        }
        other => other.to_text(limit),
    }
}

/// A float as JSON: a number when finite, else its XLA text (`nan`, `-inf`).
fn float_json(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { json!(crate::literal::format_float_text(x)) }
}

/// An `f32` (or a narrower float) as JSON: its shortest decimal that reads back to it.
fn f32_json(x: f32) -> Value {
    if x.is_finite() {
        format!("{x}").parse::<f64>().map_or(Value::Null, |v| json!(v))
    } else {
        float_json(f64::from(x))
    }
}

/// The values, flat in row-major order, as typed JSON.
fn values_json(values: &Values) -> Value {
    fn list<T>(v: &[T], f: impl Fn(&T) -> Value) -> Value {
        Value::Array(v.iter().map(f).collect())
    }
    match values {
        Values::Pred(v) => list(v, |x| json!(x)),
        Values::S8(v) => list(v, |x| json!(x)),
        Values::S16(v) => list(v, |x| json!(x)),
        Values::S32(v) => list(v, |x| json!(x)),
        Values::S64(v) => list(v, |x| json!(x)),
        Values::U8(v) => list(v, |x| json!(x)),
        Values::U16(v) => list(v, |x| json!(x)),
        Values::U32(v) => list(v, |x| json!(x)),
        Values::U64(v) => list(v, |x| json!(x)),
        Values::F16(v) => list(v, |x| f32_json(x.to_f32())),
        Values::BF16(v) => list(v, |x| f32_json(x.to_f32())),
        Values::F32(v) => list(v, |x| f32_json(*x)),
        Values::F64(v) => list(v, |x| float_json(*x)),
        Values::C64(v) => list(v, |c| json!([f32_json(c.re), f32_json(c.im)])),
        Values::C128(v) => list(v, |c| json!([float_json(c.re), float_json(c.im)])),
        Values::Small(v) => list(v, |x| f32_json(x.to_f32())),
    }
}

/// The typed JSON of a literal: arrays with their element type, dimensions and (unless elided)
/// flat row-major values; tuples as their elements.
fn literal_json(literal: &Literal<'_>, limit: Option<usize>) -> crate::Result<Value> {
    Ok(match literal {
        Literal::Token => json!({ "token": true }),
        Literal::Tuple(tuple) => {
            let elements =
                tuple.elements().iter().map(|e| literal_json(e, limit)).collect::<crate::Result<Vec<_>>>()?;
            json!({ "tuple": elements })
        }
        Literal::Array(array) => {
            let elided = limit.is_some_and(|limit| array.element_count() > limit);
            json!({
                "element_type": array.element_type().name(),
                "dimensions": array.shape().dimensions(),
                "dynamic_sizes": if array.proto().dynamic_sizes.is_empty() { Value::Null } else { json!(array.proto().dynamic_sizes) },
                "elided": elided,
                "values": if elided { Value::Null } else { values_json(&array.values()?) },
            })
        }
    })
}

/// Writes one `.npy` per array of `literal` (tuple elements get `.0`, `.1`, … suffixes); types
/// numpy lacks (bf16, the small floats, the sub-byte integers) are skipped with a warning.
fn write_npy(dir: &Path, stem: &str, literal: &Literal<'_>, warnings: &mut Vec<String>) -> Result<(), Failure> {
    match literal {
        Literal::Token => Ok(()),
        Literal::Tuple(tuple) => {
            for (i, element) in tuple.elements().iter().enumerate() {
                write_npy(dir, &format!("{stem}.{i}"), element, warnings)?;
            }
            Ok(())
        }
        Literal::Array(array) => write_array_npy(&dir.join(format!("{stem}.npy")), array, warnings),
    }
}

fn write_array_npy(path: &Path, array: &ArrayLiteral<'_>, warnings: &mut Vec<String>) -> Result<(), Failure> {
    use npyz::WriterBuilder;
    let ty = array.element_type();
    let values = array.values()?;
    if ty.is_sub_byte() || ty == PrimitiveType::BF16 || matches!(values, Values::Small(_)) {
        warnings.push(format!("{}: numpy has no {ty} type; no .npy written", path.display()));
        return Ok(());
    }
    let shape: Vec<u64> = array.shape().dimensions().iter().map(|&d| u64::try_from(d).unwrap_or(0)).collect();
    let fail = |e: std::io::Error| Failure::invalid(format!("cannot write {}: {e}", path.display()));
    // A temporary file renamed onto PATH when complete (`cli/outfile.rs`).
    let mut writer = std::io::BufWriter::new(OutFile::create(path)?);
    macro_rules! write_all {
        ($v:expr, $t:ty) => {{
            let mut out = npyz::WriteOptions::<$t>::new()
                .default_dtype()
                .shape(&shape)
                .writer(&mut writer)
                .begin_nd()
                .map_err(fail)?;
            out.extend($v.iter().copied()).map_err(fail)?;
            out.finish().map_err(fail)
        }};
    }
    match values {
        Values::Pred(v) => write_all!(v, bool),
        Values::S8(v) => write_all!(v, i8),
        Values::S16(v) => write_all!(v, i16),
        Values::S32(v) => write_all!(v, i32),
        Values::S64(v) => write_all!(v, i64),
        Values::U8(v) => write_all!(v, u8),
        Values::U16(v) => write_all!(v, u16),
        Values::U32(v) => write_all!(v, u32),
        Values::U64(v) => write_all!(v, u64),
        Values::F16(v) => write_all!(v, half::f16),
        Values::F32(v) => write_all!(v, f32),
        Values::F64(v) => write_all!(v, f64),
        Values::C64(v) => write_all!(v, num_complex::Complex<f32>),
        Values::C128(v) => write_all!(v, num_complex::Complex<f64>),
        // Every type numpy lacks returned above; a new one writes nothing, and the temporary
        // file is removed.
        _ => return Ok(()),
    }?;
    writer.into_inner().map_err(|e| fail(e.into_error()))?.finish()
}

/// One literal to report: its bytes (a proto input), its proto (parsed from text), or XLA's
/// elided `{...}` with the constant's shape.
enum Source<'a> {
    Bytes(&'a [u8]),
    Parsed(Box<LiteralProto>),
    Elided(ShapeProto),
}

/// The lines, JSON entries, failures and warnings of a `values` run.
#[derive(Default)]
struct Report {
    lines: Vec<String>,
    entries: Vec<Value>,
    invalid: Vec<String>,
    warnings: Vec<String>,
}

impl Report {
    /// Adds one literal.
    fn add(
        &mut self,
        where_: &str,
        stem: &str,
        source: Source<'_>,
        limit: Option<usize>,
        npy: Option<&Path>,
    ) -> Result<(), Failure> {
        let proto = match source {
            Source::Bytes(bytes) => {
                // What prost would drop or normalize in the literal is named; the values still print.
                let decoded = codec::decode_lenient::<LiteralProto>(bytes)
                    .map_err(|e| Failure::invalid(format!("{where_}: {e}")))?;
                self.warnings.extend(decoded.report.to_string().lines().map(|l| format!("{where_} / {l}")));
                decoded.message
            }
            Source::Parsed(proto) => *proto,
            Source::Elided(shape) => {
                let shape = shape_text(Some(&shape));
                if npy.is_some() {
                    return Err(Failure::invalid(format!(
                        "{where_}: the constant is elided in the text dump ({{...}}): its values are not in the file, \
                         so no .npy can be written (dump with print_large_constants, or use the .pb)"
                    )));
                }
                self.lines.push(format!("{where_}: {shape} {{...}}  [elided in the dump]"));
                self.entries.push(json!({ "site": where_, "shape": shape, "valid": true, "elided_in_dump": true, "text": "{...}", "value": Value::Null }));
                return Ok(());
            }
        };
        let shape = shape_text(proto.shape.as_ref());
        match Literal::try_new(&proto) {
            Ok(literal) => {
                let printed = text(&literal, limit)?;
                self.lines.push(format!("{where_}: {shape} {printed}"));
                let value = literal_json(&literal, limit)?;
                self.entries
                    .push(json!({ "site": where_, "shape": shape, "valid": true, "text": printed, "value": value }));
                if let Some(dir) = npy {
                    write_npy(dir, stem, &literal, &mut self.warnings)?;
                }
            }
            Err(error) => {
                self.lines.push(format!("{where_}: {shape}  [invalid: {error}]"));
                self.entries
                    .push(json!({ "site": where_, "shape": shape, "valid": false, "error": error.to_string() }));
                self.invalid.push(format!("{where_}: {error}"));
            }
        }
        Ok(())
    }

    fn reply(mut self) -> Reply {
        if self.lines.is_empty() {
            self.lines.push("no literals".to_owned());
        }
        let error =
            self.invalid.first().map(|first| format!("{} invalid literal(s); first: {first}", self.invalid.len()));
        let json = json!({ "literals": self.entries, "invalid": self.invalid.len() });
        Reply { text: self.lines.join("\n"), json, error, warnings: self.warnings }
    }
}

/// A literal's shape as text (`?` when it has none or it is invalid).
fn shape_text(shape: Option<&ShapeProto>) -> String {
    shape.and_then(|s| Shape::try_new_optional_layout(s).ok()).map_or_else(|| "?".to_owned(), |s| s.to_string())
}

/// The literals of a serialized input, with their sites.
fn reply(args: &ValuesArgs, bytes: &[u8], name: Option<&str>, io_dir: Option<&Path>) -> Result<Reply, Failure> {
    if bytes.is_empty() {
        return Err(Failure::invalid("empty input: no bytes"));
    }
    let limit = if args.all { None } else { Some(args.limit) };
    let sited: Vec<SitedLiteral<'_>> = match args.message {
        Some(ValuesType::Literal) => vec![SitedLiteral { site: hlo::LiteralSite::Result, bytes }],
        Some(ValuesType::Snapshot) => hlo::literals(bytes, HloMessage::Snapshot)?,
        Some(ValuesType::Module) => hlo::literals(bytes, HloMessage::Module)?,
        Some(ValuesType::Proto) => hlo::literals(bytes, HloMessage::Proto)?,
        // Told from the bytes, as `hlo` tells them.
        None => hlo::literals(bytes, hlo::detect(bytes, name).unwrap_or(HloMessage::Module))?,
    };
    let mut report = Report::default();
    for sited in &sited {
        let Site { text: where_, stem } = if args.message == Some(ValuesType::Literal) {
            Site { text: "literal".to_owned(), stem: "literal".to_owned() }
        } else {
            site(&sited.site)
        };
        report.add(&where_, &stem, Source::Bytes(sited.bytes), limit, io_dir)?;
    }
    Ok(report.reply())
}

/// Why reading a text module's constants stopped: the reader's error (given the path), or the
/// report's.
enum Stop {
    Reader(crate::Error),
    Failure(Failure),
}

impl From<crate::Error> for Stop {
    fn from(error: crate::Error) -> Self {
        Self::Reader(error)
    }
}

/// The constants of an HLO text module, read as a stream.
fn text_reply(args: &ValuesArgs, input: &ModuleInput, path: &str, io_dir: Option<&Path>) -> Result<Reply, Failure> {
    let limit = if args.all { None } else { Some(args.limit) };
    let options = TextOptions { max_statement_bytes: args.format.max_statement_bytes };
    let mut report = Report::default();
    let read = module::for_each_text_constant(input.text_reader()?, options, |literal| {
        let Site { text: where_, stem } = site(&literal.site);
        let source = match literal.value {
            LiteralValue::Elided(shape) => Source::Elided(shape.clone()),
            LiteralValue::Parsed(proto) => Source::Parsed(proto),
            LiteralValue::Encoded(bytes) => Source::Bytes(bytes),
        };
        report.add(&where_, &stem, source, limit, io_dir).map_err(Stop::Failure)
    });
    match read {
        Ok(()) => Ok(report.reply()),
        Err(Stop::Reader(error)) => Err(hlo_cmd::text_failure(path, &error)),
        Err(Stop::Failure(failure)) => Err(failure),
    }
}

/// The reply for one input, text or proto.
fn any_reply(args: &ValuesArgs, input: &ModuleInput, path: &str) -> Result<Reply, Failure> {
    match input {
        ModuleInput::Proto(bytes) => {
            reply(args, bytes, std::path::Path::new(path).file_name().and_then(|n| n.to_str()), args.npy.as_deref())
        }
        mlir if mlir.is_mlir() => Err(Failure::invalid(format!(
            "{path}: StableHLO text: `values` reads the constants of HLO modules (text or proto); \
             list this module's shapes with `xla-shape hlo`"
        ))),
        text => text_reply(args, text, path, args.npy.as_deref()),
    }
}

pub fn run(args: &ValuesArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    if let Some(dir) = &args.npy {
        fs::create_dir_all(dir).map_err(|e| Failure::invalid(format!("cannot create {}: {e}", dir.display())))?;
    }
    if args.output.lines {
        // One output line per file: its literals joined by "; ".
        return output::each_line(io, args.output.json, input::LineKind::Path, |line| {
            let module = input::module_input(None, Some(Path::new(line)), args.format.format)?;
            let mut reply = any_reply(args, &module, line)?;
            reply.text = format!("{line}: {}", reply.text.replace('\n', "; "));
            Ok(reply)
        });
    }
    let module = input::module_input(Some(&mut *io.stdin), args.file.as_deref(), args.format.format)?;
    let path = hlo_cmd::display_path(args.file.as_deref());
    output::emit(io, &any_reply(args, &module, &path)?, args.output.json)
}
