//! `HloModule`: an HLO module in any of its five forms (HLO text, StableHLO text, a serialized
//! `HloModuleProto`, `HloProto` or `HloSnapshot`), listed by the library's reader
//! (`xla_shape::hlo::module`): every shape as a dict, streamed or as a list, with its entry
//! computation layout, its constants and a snapshot's arguments and result as numpy arrays.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use numpy::PyArray1;
use pyo3::exceptions::PyStopIteration;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use xla_shape::hlo::module::{CheckedShape, Entry, EntryKind, LiteralValue, Module, ModuleForm, Summary};
use xla_shape::hlo::{HloMessage, LiteralSite};
use xla_shape::literal::{Literal, Values};
use xla_shape::proto::LiteralProto;
use xla_shape::{Error as CrateError, PrimitiveType};

use crate::errors::{IntoPyResult, binding_error, to_py, to_py_at};
use crate::shape::ProgramShape;

/// How many entries the reader's thread hands over at once, and how many such batches may
/// wait: the memory of a stream is bounded by their product, whatever the module's size.
const BATCH: usize = 1024;
const BATCHES: usize = 4;

/// A module's source: a path (`str` that is not module text, or `os.PathLike`), bytes, module
/// text, or a JAX `Lowered` / `Compiled` object (its `as_text()`).
pub enum ModuleSource {
    Bytes(Vec<u8>),
    Path(PathBuf),
    Text(String),
}

impl<'py> FromPyObject<'_, 'py> for ModuleSource {
    type Error = PyErr;

    fn extract(object: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(text) = object.cast::<PyString>() {
            let text = text.to_str()?;
            return Ok(if is_module_text(text) {
                Self::Text(text.to_owned())
            } else {
                Self::Path(PathBuf::from(text))
            });
        }
        if let Ok(bytes) = object.extract::<Vec<u8>>() {
            return Ok(Self::Bytes(bytes));
        }
        if let Ok(path) = object.extract::<PathBuf>() {
            return Ok(Self::Path(path));
        }
        if object.hasattr(intern!(object.py(), "as_text"))? {
            let text = object.call_method0(intern!(object.py(), "as_text"))?;
            return Ok(Self::Text(text.extract::<String>()?));
        }
        Err(binding_error(
            "InvalidArgument",
            format!(
                "a module is a path, bytes, module text or a jax Lowered/Compiled object, not {}",
                object.get_type().name()?
            ),
        ))
    }
}

/// Whether a `str` given as a module is its text rather than a path: it holds a newline, or
/// starts (after whitespace) with `HloModule` or `module`.
fn is_module_text(text: &str) -> bool {
    let start = text.trim_start();
    text.contains('\n') || start.starts_with("HloModule") || start.starts_with("module")
}

/// The form `format` names, or `None` to tell it from the content.
fn form_of(format: Option<&str>) -> PyResult<Option<ModuleForm>> {
    Ok(match format {
        None | Some("auto") => None,
        Some("text") => Some(ModuleForm::Text),
        Some("mlir") => Some(ModuleForm::Mlir),
        Some("proto") => Some(ModuleForm::Proto(HloMessage::Module)),
        Some("hlo_proto") => Some(ModuleForm::Proto(HloMessage::Proto)),
        Some("snapshot") => Some(ModuleForm::Proto(HloMessage::Snapshot)),
        Some(other) => {
            return Err(binding_error(
                "InvalidArgument",
                format!("format must be None, 'text', 'mlir', 'proto', 'hlo_proto' or 'snapshot', not {other:?}"),
            ));
        }
    })
}

/// An HLO module as XLA and JAX give it: HLO text (``--xla_dump_to``, ``as_text(dialect="hlo")``,
/// ``compiled.as_text()``), StableHLO text (``lowered.as_text()``) or a serialized
/// ``HloModuleProto`` / ``HloProto`` / ``HloSnapshot``.
///
/// >>> import xla_shape as xs
/// >>> m = xs.HloModule.load("HloModule m\nENTRY e {\n  ROOT c = f32[2]{0} constant({1.5, 2})\n}\n")
/// >>> m.name, [s["shape"] for s in m.shapes()][-1]
/// ('m', 'f32[2]{0}')
/// >>> m.constants()["e/c"]
/// array([1.5, 2. ], dtype=float32)
#[pyclass(module = "xla_shape", frozen)]
pub struct HloModule {
    module: Arc<Module>,
    /// Where it came from, for `repr`.
    origin: String,
    summary: Summary,
}

/// The strings a listing repeats, made once: the dict keys, the kinds, and each distinct shape's
/// text and error (by the reader's shared [`CheckedShape`]), so a list of a million dicts holds
/// a few thousand strings besides the sites.
struct Strings {
    kinds: Vec<Py<PyString>>,
    /// By the address of the reader's shared shape (kept alive here, so the address is not reused).
    shapes: HashMap<usize, ShapeStrings>,
    shardings: HashMap<String, Py<PyString>>,
}

/// A shape kept alive, its text and its error (if invalid) as Python strings.
type ShapeStrings = (Arc<CheckedShape>, Py<PyString>, Option<Py<PyString>>);

/// Batches of entries from the reader's thread, or its error.
type Batches = Receiver<Result<Vec<Entry>, CrateError>>;

/// At most this many distinct shapes and shardings are kept as strings (a module repeats few).
const MAX_STRINGS: usize = 1 << 14;

impl Strings {
    fn new(py: Python<'_>) -> Self {
        let kinds = EntryKind::ALL.iter().map(|k| PyString::intern(py, k.name()).unbind()).collect();
        Self { kinds, shapes: HashMap::new(), shardings: HashMap::new() }
    }

    fn shape<'py>(
        &mut self,
        py: Python<'py>,
        shape: &Arc<CheckedShape>,
    ) -> (Bound<'py, PyString>, Option<Bound<'py, PyString>>) {
        let make = || {
            let error = shape.error().map(|e| PyString::new(py, &e.to_string()).unbind());
            (PyString::new(py, shape.text()).unbind(), error)
        };
        let (text, error) = if let Some((_, text, error)) = self.shapes.get(&address(shape)) {
            (text.clone_ref(py), error.as_ref().map(|e| e.clone_ref(py)))
        } else {
            let (text, error) = make();
            if self.shapes.len() >= MAX_STRINGS {
                self.shapes.clear();
            }
            // The Arc is kept so that its address is not reused while it is a key.
            self.shapes.insert(
                address(shape),
                (Arc::clone(shape), text.clone_ref(py), error.as_ref().map(|e| e.clone_ref(py))),
            );
            (text, error)
        };
        (text.into_bound(py), error.map(|e| e.into_bound(py)))
    }

    fn sharding<'py>(&mut self, py: Python<'py>, text: String) -> Bound<'py, PyString> {
        if let Some(found) = self.shardings.get(&text) {
            return found.bind(py).clone();
        }
        let string = PyString::new(py, &text);
        if self.shardings.len() >= MAX_STRINGS {
            self.shardings.clear();
        }
        self.shardings.insert(text, string.clone().unbind());
        string
    }

    /// An entry as the dict ``shapes()`` lists (its keys in sorted order, as the CLI's JSON).
    fn dict<'py>(&mut self, py: Python<'py>, entry: &Entry) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        let (shape, error) = self.shape(py, &entry.shape);
        if let Some(attributes) = &entry.attributes {
            if let Some(output) = attributes.aliasing_output {
                dict.set_item(intern!(py, "aliasing_output"), output)?;
            }
            if attributes.buffer_donor {
                dict.set_item(intern!(py, "buffer_donor"), true)?;
            }
        }
        dict.set_item(intern!(py, "error"), error)?;
        let kind = self.kinds.get(entry.kind().index()).map(|k| k.bind(py).clone());
        dict.set_item(intern!(py, "kind"), kind)?;
        if let Some(attributes) = &entry.attributes {
            if let Some(mode) = &attributes.layout_mode {
                dict.set_item(intern!(py, "layout_mode"), mode)?;
            }
            if let Some(kind) = &attributes.memory_kind {
                dict.set_item(intern!(py, "memory_kind"), kind)?;
            }
            if let Some(info) = &attributes.result_info {
                dict.set_item(intern!(py, "result_info"), info)?;
            }
        }
        dict.set_item(intern!(py, "shape"), shape)?;
        match entry.sharding.as_deref() {
            Some(Ok(sharding)) => dict.set_item(intern!(py, "sharding"), self.sharding(py, sharding.to_string()))?,
            Some(Err(e)) => dict.set_item(intern!(py, "sharding_error"), e.to_string())?,
            None => {}
        }
        if let Some(shardy) = entry.shardy.as_deref() {
            match &shardy.converted {
                Ok(sharding) => dict.set_item(intern!(py, "shardy"), self.sharding(py, sharding.to_string()))?,
                Err(e) => dict.set_item(intern!(py, "shardy_error"), e.to_string())?,
            }
            if let Some(disagrees) = shardy.disagrees {
                dict.set_item(intern!(py, "shardy_disagrees"), disagrees)?;
            }
        }
        let mut site = String::new();
        entry.site.push_to(&mut site);
        dict.set_item(intern!(py, "site"), site)?;
        dict.set_item(intern!(py, "valid"), entry.shape.is_valid())?;
        Ok(dict)
    }
}

/// The address of a shared shape, its identity while it is alive.
fn address(shape: &Arc<CheckedShape>) -> usize {
    Arc::as_ptr(shape).addr()
}

/// Reads the module's entries on a thread of their own, in batches of [`BATCH`] over a channel
/// of [`BATCHES`]: the reader works while Python builds dicts, and memory stays bounded. The
/// thread ends at the end, at an error, or when the receiver is dropped.
fn spawn_entries(module: Arc<Module>) -> Batches {
    let (sender, receiver) = sync_channel(BATCHES);
    std::thread::spawn(move || produce(&module, &sender));
    receiver
}

fn produce(module: &Module, sender: &SyncSender<Result<Vec<Entry>, CrateError>>) {
    let mut reader = match module.entries() {
        Ok(reader) => reader,
        Err(error) => {
            let _ = sender.send(Err(error));
            return;
        }
    };
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        match reader.next_entry() {
            Ok(Some(entry)) => {
                batch.push(entry);
                if batch.len() == BATCH
                    && sender.send(Ok(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))).is_err()
                {
                    return;
                }
            }
            Ok(None) => {
                if !batch.is_empty() {
                    let _ = sender.send(Ok(batch));
                }
                return;
            }
            Err(error) => {
                let _ = sender.send(Err(error));
                return;
            }
        }
    }
}

/// The entries of a module as dicts, one at a time (``HloModule.entries()``): read on a thread
/// of their own, a few thousand ahead at most.
#[pyclass(module = "xla_shape")]
pub struct HloEntries {
    receiver: Option<Mutex<Batches>>,
    batch: VecDeque<Entry>,
    strings: Strings,
}

impl HloEntries {
    /// The next entry, the GIL released while the reader's thread works; `None` at the end.
    fn next_entry(&mut self, py: Python<'_>) -> PyResult<Option<Entry>> {
        loop {
            if let Some(entry) = self.batch.pop_front() {
                return Ok(Some(entry));
            }
            let Some(receiver) = &mut self.receiver else { return Ok(None) };
            let receiver = receiver.get_mut().map_err(|_| binding_error("Listing", "the listing's reader failed"))?;
            match py.detach(move || receiver.recv()) {
                Ok(Ok(batch)) => self.batch = batch.into(),
                Ok(Err(error)) => {
                    self.receiver = None;
                    return Err(to_py(error));
                }
                Err(_) => self.receiver = None,
            }
        }
    }
}

#[pymethods]
impl HloEntries {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        match self.next_entry(py)? {
            Some(entry) => self.strings.dict(py, &entry),
            None => Err(PyStopIteration::new_err(())),
        }
    }
}

/// The error of a module with invalid shapes, as the command line says it (the class from the
/// first one's error).
fn invalid_error(summary: &Summary) -> Option<PyErr> {
    let (site, error) = summary.first_invalid.as_ref()?;
    Some(to_py_at(&format!("{} invalid shape(s); first: {site}", summary.invalid), error.clone()))
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

/// Which literals a pass wants: a constant's, a snapshot's arguments, or its result.
type Keep = fn(&LiteralSite<'_>) -> bool;

fn constant(site: &LiteralSite<'_>) -> bool {
    matches!(site, LiteralSite::Constant { .. })
}

/// Why a pass over the literals stopped: the reader's error, or the conversion's.
enum Stop {
    Crate(CrateError),
    Py(PyErr),
}

impl From<CrateError> for Stop {
    fn from(error: CrateError) -> Self {
        Self::Crate(error)
    }
}

/// The literals of the module that `keep` selects, by site, in order; the others are neither
/// decoded nor converted (so `arguments()` of a text dump with elided constants works).
fn literals<'py>(py: Python<'py>, module: &Module, keep: Keep) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
    let mut out = Vec::new();
    let wants_constants = keep(&LiteralSite::Constant { computation: "", instruction: "" });
    match module.form() {
        // Text modules hold constants only.
        form if form.is_text() && !wants_constants => return Ok(out),
        ModuleForm::Mlir => {
            return Err(binding_error(
                "NotSupported",
                "the values of a StableHLO module's constants are not read: load the HLO of the same lowering \
                 (as_text(dialect=\"hlo\"), or its proto)",
            ));
        }
        _ => {}
    }
    let read = module.for_each_literal(|literal| {
        if !keep(&literal.site) {
            return Ok(());
        }
        let site = literal.site.to_string();
        let value = match literal.value {
            LiteralValue::Encoded(bytes) => {
                let proto: LiteralProto = xla_shape::decode(bytes).map_err(|e| Stop::Py(to_py_at(&site, e)))?;
                proto_to_numpy(py, &site, &proto)
            }
            LiteralValue::Parsed(proto) => proto_to_numpy(py, &site, &proto),
            LiteralValue::Elided(shape) => {
                let shape =
                    xla_shape::Shape::try_new_optional_layout(shape).map_or_else(|_| "?".to_owned(), |s| s.to_string());
                Err(binding_error(
                    "ElidedConstant",
                    format!(
                        "{site}: the constant {shape} is elided in the text dump ({{...}}): its values are not \
                         in the file (dump with print_large_constants, or load the .pb)"
                    ),
                ))
            }
        }
        .map_err(Stop::Py)?;
        out.push((site, value));
        Ok(())
    });
    match read {
        Ok(()) => Ok(out),
        Err(Stop::Crate(error)) => Err(to_py(error)),
        Err(Stop::Py(error)) => Err(error),
    }
}

impl HloModule {
    /// Reads `module` once (the GIL released): its name, computation count, entry layout, and
    /// the first invalid shape, which raises.
    fn read(py: Python<'_>, module: Module, origin: String) -> PyResult<Self> {
        let module = Arc::new(module);
        let summary = py.detach(|| module.summary()).py()?;
        if let Some(error) = invalid_error(&summary) {
            return Err(error);
        }
        Ok(Self { module, origin, summary })
    }

    /// A stream of the module's entries.
    fn stream(&self, py: Python<'_>) -> HloEntries {
        HloEntries {
            receiver: Some(Mutex::new(spawn_entries(Arc::clone(&self.module)))),
            batch: VecDeque::new(),
            strings: Strings::new(py),
        }
    }
}

#[pymethods]
impl HloModule {
    /// Reads a module. ``source`` is
    ///
    /// * module text as a ``str``: a ``str`` that holds a newline, or starts (after whitespace)
    ///   with ``HloModule`` or ``module``, is the module's text (what ``lowered.as_text()``,
    ///   ``lowered.as_text(dialect="hlo")`` and ``compiled.as_text()`` return);
    /// * any other ``str``, or an ``os.PathLike``: a path (text is streamed from the file; a path
    ///   that does not exist raises, naming it);
    /// * ``bytes``: the module's bytes, in any form;
    /// * a ``jax.stages.Lowered`` or ``Compiled`` (anything with ``as_text()``): its text.
    ///
    /// ``format``: ``None`` (HLO text when the content starts with ``HloModule``, StableHLO
    /// text when it starts as ``lowered.as_text()`` does, else the message the bytes hold:
    /// ``HloModuleProto``, ``HloProto`` or ``HloSnapshot``, as the CLI tells them apart),
    /// ``"text"``, ``"mlir"``, ``"proto"`` (``HloModuleProto``), ``"hlo_proto"`` (``HloProto``,
    /// what ``--xla_dump_hlo_as_proto`` writes) or ``"snapshot"`` (``HloSnapshot``).
    ///
    /// The module is read once: text XLA's parser refuses raises ``ParseError``, bytes that are
    /// not the message ``DecodeError``, a module with shapes XLA would refuse
    /// ``ValidationError``.
    #[staticmethod]
    #[pyo3(signature = (source, format=None))]
    pub fn load(py: Python<'_>, source: ModuleSource, format: Option<&str>) -> PyResult<Self> {
        let form = form_of(format)?;
        let (module, origin) = match source {
            ModuleSource::Path(path) => {
                let origin = path.display().to_string();
                let module = py.detach(|| match form {
                    Some(form) => Module::open_as(&path, form),
                    None => Module::open(&path),
                });
                (module.py()?, origin)
            }
            ModuleSource::Bytes(bytes) => (bytes_module(bytes, form), "<bytes>".to_owned()),
            ModuleSource::Text(text) => {
                // Text that starts as neither form is read as HLO text, whose error says where.
                let form = form.or_else(|| ModuleForm::of_text(text.as_bytes())).unwrap_or(ModuleForm::Text);
                (Module::from_bytes_as(text.into_bytes(), form), "<text>".to_owned())
            }
        };
        Self::read(py, module, origin)
    }

    /// Reads module text (HLO or StableHLO, told apart by how it starts; HLO text otherwise),
    /// never a path.
    #[staticmethod]
    pub fn from_text(py: Python<'_>, text: String) -> PyResult<Self> {
        let form = ModuleForm::of_text(text.as_bytes()).unwrap_or(ModuleForm::Text);
        Self::read(py, Module::from_bytes_as(text.into_bytes(), form), "<text>".to_owned())
    }

    /// The module's name.
    #[getter]
    pub fn name(&self) -> &str {
        &self.summary.name
    }

    /// How many computations the module has (StableHLO: functions).
    #[getter]
    pub fn computation_count(&self) -> usize {
        self.summary.computations
    }

    /// Every shape of the module, as the CLI's ``hlo --json`` lists it: dicts with ``site``
    /// (``computation / instruction``), ``kind``, ``shape`` (XLA's text), ``valid``, ``error``
    /// and, where the instruction has one, ``sharding`` (XLA's text) and ``shardy`` (its Shardy
    /// sharding converted). A new list on each call; equal shape, kind and sharding strings are
    /// one object.
    pub fn shapes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let mut stream = self.stream(py);
        while let Some(entry) = stream.next_entry(py)? {
            list.append(stream.strings.dict(py, &entry)?)?;
        }
        Ok(list)
    }

    /// The same dicts as ``shapes()``, one at a time: the module is read as they are taken,
    /// in memory bounded whatever its size.
    pub fn entries(&self, py: Python<'_>) -> HloEntries {
        self.stream(py)
    }

    /// The listing as one dict: ``module``, ``computations``, ``shapes`` and the counts
    /// (``counts`` by kind, ``total``, ``invalid``).
    pub fn listing<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        out.set_item("module", &self.summary.name)?;
        out.set_item("computations", self.summary.computations)?;
        out.set_item("shapes", self.shapes(py)?)?;
        let counts = PyDict::new(py);
        for kind in EntryKind::ALL {
            let count = self.summary.count(kind);
            if count > 0 {
                counts.set_item(kind.name(), count)?;
            }
        }
        out.set_item("total", self.summary.counts.iter().sum::<usize>())?;
        out.set_item("counts", counts)?;
        out.set_item("invalid", self.summary.invalid)?;
        Ok(out)
    }

    /// The entry computation's parameters and result with their layouts
    /// (``entry_computation_layout``), or ``None`` when the module has no entry computation.
    #[getter]
    pub fn entry_computation_layout(&self) -> PyResult<Option<ProgramShape>> {
        self.summary.entry_computation_layout().map(ProgramShape::try_new).transpose()
    }

    /// Every constant's value as numpy (tuples as tuples of arrays), keyed by
    /// ``computation/instruction``. A constant the text dump elided (``{...}``) raises: its
    /// values are not in the file.
    pub fn constants<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (site, value) in literals(py, &self.module, constant)? {
            out.set_item(site, value)?;
        }
        Ok(out)
    }

    /// A snapshot's recorded arguments, in order (``format="snapshot"``; empty otherwise).
    pub fn arguments<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let argument: Keep = |site| matches!(site, LiteralSite::Argument { .. });
        Ok(literals(py, &self.module, argument)?.into_iter().map(|(_, value)| value).collect())
    }

    /// A snapshot's recorded result (``None`` when it has none).
    pub fn result<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let result: Keep = |site| matches!(site, LiteralSite::Result);
        Ok(literals(py, &self.module, result)?.into_iter().next().map(|(_, v)| v))
    }

    fn __repr__(&self) -> String {
        format!("<xs.HloModule {} from {}>", self.summary.name, self.origin)
    }
}

/// A module from bytes (or text), its form given or told from them.
fn bytes_module(bytes: Vec<u8>, form: Option<ModuleForm>) -> Module {
    match form {
        Some(form) => Module::from_bytes_as(bytes, form),
        None => Module::from_bytes(bytes),
    }
}
