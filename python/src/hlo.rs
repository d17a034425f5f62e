//! `HloModule`: an HLO module in text or proto form (or an `HloProto`, or an `HloSnapshot`),
//! listed exactly as the CLI's `hlo --json` lists it (the same code, run in process), with its
//! entry computation layout, its constants and a snapshot's arguments and result as numpy
//! arrays.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use xla_shape::hlo::mlir::{Item as MlirItem, MlirReader, Value as MlirValue};
use xla_shape::hlo::text::{Item, TextReader, is_hlo_text};
use xla_shape::hlo::{self, HloMessage, LiteralSite, ShapeSite};
use xla_shape::literal::{Constant, Literal, Values};
use xla_shape::proto::{LiteralProto, ProgramShapeProto, ShapeProto};
use xla_shape::{PrimitiveType, Shape as ShapeView};

use crate::errors::{Class, IntoPyResult, binding_error, raise, to_py_at};
use crate::shape::ProgramShape;

/// The bytes sniffed to tell text from a proto (as the CLI does).
const SNIFF_BYTES: u64 = 4096;

/// Where the module is: a file (text is streamed from it on each pass) or bytes in memory.
enum Source {
    Path(PathBuf),
    Bytes(Vec<u8>),
}

/// The form of the module.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// HLO text.
    Text,
    /// StableHLO MLIR text.
    Mlir,
    /// A serialized message.
    Proto(HloMessage),
}

impl Form {
    /// The CLI's `--format` (and `--type`) for it.
    fn cli_args(self) -> &'static [&'static str] {
        match self {
            Self::Text => &["--format", "text"],
            Self::Mlir => &["--format", "mlir"],
            Self::Proto(HloMessage::Module) => &["--format", "proto", "--type", "module"],
            Self::Proto(HloMessage::Proto) => &["--format", "proto", "--type", "proto"],
            Self::Proto(HloMessage::Snapshot) => &["--format", "proto", "--type", "snapshot"],
        }
    }
}

impl Source {
    fn head(&self) -> PyResult<Vec<u8>> {
        match self {
            Self::Path(path) => {
                let mut head = Vec::new();
                File::open(path)
                    .and_then(|f| f.take(SNIFF_BYTES).read_to_end(&mut head))
                    .map_err(|e| binding_error("Io", format!("cannot read {}: {e}", path.display())))?;
                Ok(head)
            }
            Self::Bytes(bytes) => {
                Ok(bytes.get(..usize::try_from(SNIFF_BYTES).unwrap_or(usize::MAX)).unwrap_or(bytes).to_vec())
            }
        }
    }

    /// A reader of the text from its start.
    fn reader(&self) -> PyResult<Box<dyn BufRead + '_>> {
        match self {
            Self::Path(path) => {
                let file = File::open(path)
                    .map_err(|e| binding_error("Io", format!("cannot open {}: {e}", path.display())))?;
                Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
            }
            Self::Bytes(bytes) => Ok(Box::new(bytes.as_slice())),
        }
    }

    /// The whole input (a proto is read whole, as the CLI reads it).
    fn bytes(&self) -> PyResult<std::borrow::Cow<'_, [u8]>> {
        match self {
            Self::Path(path) => std::fs::read(path)
                .map(std::borrow::Cow::Owned)
                .map_err(|e| binding_error("Io", format!("cannot read {}: {e}", path.display()))),
            Self::Bytes(bytes) => Ok(std::borrow::Cow::Borrowed(bytes)),
        }
    }

    /// The file's name, a hint of the message it holds (`….hlo.pb`, `….snapshot.N.pb`).
    fn file_name(&self) -> Option<String> {
        match self {
            Self::Path(path) => path.file_name().map(|n| n.to_string_lossy().into_owned()),
            Self::Bytes(_) => None,
        }
    }

    fn name(&self) -> String {
        match self {
            Self::Path(path) => path.display().to_string(),
            Self::Bytes(_) => "<bytes>".to_owned(),
        }
    }
}

/// A module file or its bytes.
#[derive(FromPyObject)]
pub enum PathOrBytes {
    /// The bytes of the module.
    Bytes(Vec<u8>),
    /// A path (`str` or `os.PathLike`).
    Path(PathBuf),
}

/// An HLO module as XLA dumps it: text (``--xla_dump_to``, ``as_text(dialect="hlo")``,
/// ``compiled.as_text()``) or a serialized ``HloModuleProto`` / ``HloProto`` / ``HloSnapshot``.
///
/// >>> import xla_shape as xs
/// >>> m = xs.HloModule.load(b"HloModule m\nENTRY e {\n  ROOT c = f32[2]{0} constant({1.5, 2})\n}\n")
/// >>> m.name, [s["shape"] for s in m.shapes()][-1]
/// ('m', 'f32[2]{0}')
/// >>> m.constants()["e/c"]
/// array([1.5, 2. ], dtype=float32)
#[pyclass(module = "xla_shape", frozen)]
pub struct HloModule {
    source: Source,
    form: Form,
    /// The `hlo --json` object as the CLI printed it: compact, parsed into Python objects only
    /// when asked for (a module of 700 000 instructions lists as ~150 MB of JSON).
    listing: Vec<u8>,
    /// The module's name and computation count, from the listing.
    name: String,
    computations: u64,
    entry: Option<ProgramShapeProto>,
}

/// Runs the CLI's `hlo --json` on the source, in process: the JSON text.
fn listing(py: Python<'_>, source: &Source, form: Form) -> PyResult<Vec<u8>> {
    let mut args: Vec<String> = ["xla-shape", "hlo", "--json"].map(str::to_owned).to_vec();
    args.extend(form.cli_args().iter().map(|a| (*a).to_owned()));
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let status = match source {
        Source::Path(path) => {
            args.push(path.display().to_string());
            py.detach(|| xla_shape::cli::run(args, &mut &b""[..], &mut stdout, &mut stderr))
        }
        Source::Bytes(bytes) => {
            py.detach(|| xla_shape::cli::run(args, &mut bytes.as_slice(), &mut stdout, &mut stderr))
        }
    };
    let message = String::from_utf8_lossy(&stderr);
    let message = message.trim().strip_prefix("error: ").unwrap_or(message.trim()).to_owned();
    if status != 0 {
        // A listing was printed (and complete) only when the module was read to its end: its
        // shapes are then refused by validation.
        return Err(if stdout.is_empty() {
            match form {
                Form::Text | Form::Mlir => raise(Class::Parse, "HloText", message),
                Form::Proto(_) => raise(Class::Decode, "Decode", message),
            }
        } else {
            raise(Class::Validation, "InvalidShape", message)
        });
    }
    Ok(stdout)
}

/// The listing's JSON parsed into Python objects.
fn parse_json<'py>(py: Python<'py>, json: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (PyBytes::new(py, json),))
}

/// The module's name and computation count: the listing's head, `{"module":NAME,"computations":N`
/// before `,"shapes":` (the CLI writes it first; a JSON string cannot hold a bare quote).
fn head(py: Python<'_>, json: &[u8]) -> PyResult<(String, u64)> {
    const SHAPES: &[u8] = b",\"shapes\":";
    let end = json
        .windows(SHAPES.len())
        .position(|w| w == SHAPES)
        .ok_or_else(|| binding_error("Listing", "the listing has no shapes (the CLI's hlo --json changed its form)"))?;
    let mut head = json.get(..end).unwrap_or_default().to_vec();
    head.push(b'}');
    let head = parse_json(py, &head)?;
    Ok((head.get_item("module")?.extract()?, head.get_item("computations")?.extract()?))
}

/// The entry computation's program shape: the text's `entry_computation_layout` (or its entry
/// computation's signature), or a proto's host program shape.
fn entry_layout(source: &Source, form: Form) -> PyResult<Option<ProgramShapeProto>> {
    match form {
        Form::Text => {
            let mut reader = TextReader::new(source.reader()?);
            let mut from_entry = None;
            while let Some(item) = reader.next_item().py()? {
                match item {
                    Item::Module(module) => {
                        if let Some(layout) = module.entry_computation_layout {
                            return Ok(Some(layout.clone()));
                        }
                    }
                    Item::ComputationEnd(end) if end.entry => from_entry = Some(end.program_shape.clone()),
                    _ => {}
                }
            }
            Ok(from_entry)
        }
        Form::Mlir => {
            let mut reader = MlirReader::new(source.reader()?);
            while let Some(item) = reader.next_item().py()? {
                if let MlirItem::Function(function) = item {
                    if function.is_entry() {
                        let shapes =
                            |values: &[MlirValue]| values.iter().map(|v| v.shape.clone()).collect::<Option<Vec<_>>>();
                        let (Some(parameters), Some(results)) = (shapes(function.parameters), shapes(function.results))
                        else {
                            return Ok(None);
                        };
                        // XLA's entry result: the one result, or a tuple of them.
                        let results = results
                            .into_iter()
                            .map(|r| xla_shape::ShapeBuf::try_from_proto_optional_layout(r).py())
                            .collect::<PyResult<Vec<_>>>()?;
                        let result = xla_shape::make::make_maybe_tuple_shape(&results).py()?.into_proto();
                        let names = function.parameters.iter().map(|v| v.name.clone().unwrap_or_default()).collect();
                        return Ok(Some(ProgramShapeProto {
                            parameters,
                            parameter_names: names,
                            result: Some(result),
                        }));
                    }
                }
            }
            Ok(None)
        }
        Form::Proto(message) => {
            let bytes = source.bytes()?;
            let mut program = ProgramShapeProto::default();
            let mut found = false;
            for item in hlo::walk(&bytes, message) {
                if let hlo::Found::Shape(sited) = item.py()? {
                    match sited.site {
                        ShapeSite::HostParameter { name, .. } => {
                            program.parameters.push(sited.shape.clone());
                            program.parameter_names.push(name.to_owned());
                            found = true;
                        }
                        ShapeSite::HostResult => {
                            program.result = Some(sited.shape.clone());
                            found = true;
                        }
                        _ => {}
                    }
                }
            }
            Ok(found.then_some(program))
        }
    }
}

/// The bytes numpy (with ml_dtypes) holds `values` in: sub-byte integers one per byte, their
/// bits in the low bits; the small floats as their bits.
fn value_bytes(values: Values, element_type: PrimitiveType) -> PyResult<Vec<u8>> {
    let bits = element_type.bit_width().unwrap_or(8);
    let mask = if bits >= 8 { 0xff } else { (1u8 << bits) - 1 };
    Ok(match values {
        Values::Pred(v) => v.into_iter().map(u8::from).collect(),
        Values::S8(v) => v.into_iter().map(|x| u8::from_ne_bytes(x.to_ne_bytes()) & mask).collect(),
        Values::U8(v) => v,
        Values::S16(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::S32(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::S64(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::U16(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::U32(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::U64(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::F16(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::BF16(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::F32(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::F64(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::C64(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::C128(v) => bytemuck::cast_slice(&v).to_vec(),
        Values::Small(v) => v.into_iter().map(xla_shape::literal::SmallFloat::to_bits).collect(),
        other => {
            return Err(binding_error("Literal", format!("values of {element_type} are not supported: {other:?}")));
        }
    })
}

/// A literal as numpy: an array, a tuple of them, or `None` for a token.
fn literal_to_numpy<'py>(py: Python<'py>, literal: &Literal<'_>) -> PyResult<Bound<'py, PyAny>> {
    match literal {
        Literal::Token => Ok(py.None().into_bound(py)),
        Literal::Tuple(tuple) => {
            let elements = tuple.elements().iter().map(|e| literal_to_numpy(py, e)).collect::<PyResult<Vec<_>>>()?;
            Ok(PyTuple::new(py, elements)?.into_any())
        }
        Literal::Array(array) => {
            let element_type = array.element_type();
            let bytes = value_bytes(array.values().py()?, element_type)?;
            let dtype = py.import("xla_shape._dtypes")?.call_method1("dtype_of", (element_type.name(),))?;
            let dims = PyTuple::new(py, array.sizes())?;
            PyArray1::from_vec(py, bytes).call_method1("view", (dtype,))?.call_method1("reshape", (dims,))
        }
    }
}

/// A literal proto as numpy, validated.
fn proto_to_numpy<'py>(py: Python<'py>, site: &str, proto: &LiteralProto) -> PyResult<Bound<'py, PyAny>> {
    let literal = Literal::try_new(proto).map_err(|e| to_py_at(site, e))?;
    literal_to_numpy(py, &literal)
}

/// Which literals a reader wants: a constant's, a snapshot's arguments, or its result.
type Keep = fn(&LiteralSite<'_>) -> bool;

fn constant(site: &LiteralSite<'_>) -> bool {
    matches!(site, LiteralSite::Constant { .. })
}

/// The literals of the module that `keep` selects, by site, in order; the others are neither
/// decoded nor converted (so `arguments()` of a text dump with elided constants works).
fn literals<'py>(
    py: Python<'py>,
    source: &Source,
    form: Form,
    keep: Keep,
) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
    let mut out = Vec::new();
    // Text modules hold constants only.
    let texts_hold_some = keep(&LiteralSite::Constant { computation: "", instruction: "" });
    match form {
        Form::Text | Form::Mlir if !texts_hold_some => {}
        Form::Text => {
            let mut reader = TextReader::new(source.reader()?);
            while let Some(item) = reader.next_item().py()? {
                let Item::Instruction(instruction) = item else { continue };
                let Some(constant) = instruction.constant().py()? else { continue };
                let site =
                    LiteralSite::Constant { computation: instruction.computation, instruction: instruction.name }
                        .to_string();
                match constant {
                    Constant::Elided => {
                        let shape = shape_text(instruction.shape);
                        return Err(binding_error(
                            "ElidedConstant",
                            format!(
                                "{site}: the constant {shape} is elided in the text dump ({{...}}): its values are not \
                                 in the file (dump with print_large_constants, or load the .pb)"
                            ),
                        ));
                    }
                    Constant::Literal(proto) => {
                        let value = proto_to_numpy(py, &site, &proto)?;
                        out.push((site, value));
                    }
                }
            }
        }
        Form::Mlir => {
            return Err(binding_error(
                "NotSupported",
                "the values of a StableHLO module's constants are not read: load the HLO of the same lowering \
                 (as_text(dialect=\"hlo\"), or its proto)",
            ));
        }
        Form::Proto(message) => {
            let bytes = source.bytes()?;
            for sited in hlo::literals(&bytes, message).py()?.into_iter().filter(|s| keep(&s.site)) {
                let site = sited.site.to_string();
                let proto: LiteralProto = xla_shape::decode(sited.bytes).map_err(|e| to_py_at(&site, e))?;
                out.push((site.clone(), proto_to_numpy(py, &site, &proto)?));
            }
        }
    }
    Ok(out)
}

fn shape_text(shape: &ShapeProto) -> String {
    ShapeView::try_new_optional_layout(shape).map_or_else(|_| "?".to_owned(), |s| s.to_string())
}

#[pymethods]
impl HloModule {
    /// Reads a module from a path or its bytes. ``format``: ``None`` (HLO text when the content
    /// starts with ``HloModule``, StableHLO MLIR text when it starts as ``lowered.as_text()``
    /// does, else the message the bytes hold: ``HloModuleProto``, ``HloProto`` or
    /// ``HloSnapshot``, as the CLI tells them apart), ``"text"``, ``"mlir"``, ``"proto"``
    /// (``HloModuleProto``), ``"hlo_proto"`` (``HloProto``, what ``--xla_dump_hlo_as_proto``
    /// writes) or ``"snapshot"`` (``HloSnapshot``).
    ///
    /// The module is listed as the CLI's ``hlo --json`` lists it (text streamed): text XLA's
    /// parser refuses raises ``ParseError``, bytes that are not the message ``DecodeError``, a
    /// module with shapes XLA would refuse ``ValidationError``.
    #[staticmethod]
    #[pyo3(signature = (source, format=None))]
    pub fn load(py: Python<'_>, source: PathOrBytes, format: Option<&str>) -> PyResult<Self> {
        let source = match source {
            PathOrBytes::Path(path) => Source::Path(path),
            PathOrBytes::Bytes(bytes) => Source::Bytes(bytes),
        };
        let form = match format {
            None | Some("auto") => {
                let head = source.head()?;
                if is_hlo_text(&head) {
                    Form::Text
                } else if hlo::mlir::is_mlir_text(&head) {
                    Form::Mlir
                } else {
                    // The message from the bytes (the dump's file name a hint), as the CLI does;
                    // bytes that fit none are read as a module, whose error says so.
                    let name = source.file_name();
                    Form::Proto(hlo::detect(&source.bytes()?, name.as_deref()).unwrap_or(HloMessage::Module))
                }
            }
            Some("text") => Form::Text,
            Some("mlir") => Form::Mlir,
            Some("proto") => Form::Proto(HloMessage::Module),
            Some("hlo_proto") => Form::Proto(HloMessage::Proto),
            Some("snapshot") => Form::Proto(HloMessage::Snapshot),
            Some(other) => {
                return Err(binding_error(
                    "InvalidArgument",
                    format!("format must be None, 'text', 'mlir', 'proto', 'hlo_proto' or 'snapshot', not {other:?}"),
                ));
            }
        };
        let listing = listing(py, &source, form)?;
        let (name, computations) = head(py, &listing)?;
        let entry = entry_layout(&source, form)?;
        Ok(Self { source, form, listing, name, computations, entry })
    }

    /// The module's name.
    #[getter]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many computations the module has.
    #[getter]
    pub fn computation_count(&self) -> u64 {
        self.computations
    }

    /// Every shape of the module, as the CLI's ``hlo --json`` lists it: dicts with ``site``
    /// (``computation / instruction``), ``kind``, ``shape`` (XLA's text), ``valid`` and, where
    /// the instruction has one, ``sharding`` (XLA's text) and ``shardy`` (its Shardy sharding
    /// converted). A new list on each call.
    pub fn shapes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        Ok(parse_json(py, &self.listing)?.get_item("shapes")?.cast_into::<PyList>()?)
    }

    /// The whole ``hlo --json`` object (module, computations, shapes and the summary counts).
    pub fn listing<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        parse_json(py, &self.listing)
    }

    /// The entry computation's parameters and result with their layouts
    /// (``entry_computation_layout``), or ``None`` when the module has no entry computation.
    #[getter]
    pub fn entry_computation_layout(&self) -> PyResult<Option<ProgramShape>> {
        self.entry.clone().map(ProgramShape::try_new).transpose()
    }

    /// Every constant's value as numpy (tuples as tuples of arrays), keyed by
    /// ``computation/instruction``. A constant the text dump elided (``{...}``) raises: its
    /// values are not in the file.
    pub fn constants<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (site, value) in literals(py, &self.source, self.form, constant)? {
            out.set_item(site, value)?;
        }
        Ok(out)
    }

    /// A snapshot's recorded arguments, in order (``format="snapshot"``; empty otherwise).
    pub fn arguments<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let argument: Keep = |site| matches!(site, LiteralSite::Argument { .. });
        Ok(literals(py, &self.source, self.form, argument)?.into_iter().map(|(_, value)| value).collect())
    }

    /// A snapshot's recorded result (``None`` when it has none).
    pub fn result<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let result: Keep = |site| matches!(site, LiteralSite::Result);
        Ok(literals(py, &self.source, self.form, result)?.into_iter().next().map(|(_, v)| v))
    }

    fn __repr__(&self) -> String {
        format!("<xs.HloModule {} from {}>", self.name, self.source.name())
    }
}
