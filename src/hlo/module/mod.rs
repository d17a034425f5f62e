//! One module, any of its five forms, listed as typed entries (`docs/hlo.md`, "Module
//! listing"): what `xla-shape hlo`, `info` and `values` print and Python's `HloModule` wraps.
//!
//! [`Module`] holds the input — bytes, or a path whose text is streamed from the file on each
//! pass — and its [`ModuleForm`] (HLO text, StableHLO text, or a serialized `HloModuleProto`,
//! `HloProto` or `HloSnapshot`), told from the content as the command line tells it or given.
//! [`Module::entries`] is one pass ([`ModuleReader`]) giving each shape as an [`Entry`]: its
//! [`Site`], its [`EntryKind`], the shape printed and validated ([`CheckedShape`]) and its
//! shardings (`HloSharding`, the Shardy attribute converted, whether they disagree).
//! [`Module::summary`] is a pass that keeps only the module's name, computation count, counts
//! and entry computation layout; [`Module::for_each_literal`] finds the constants (and a
//! snapshot's arguments and result) that `values` reads.
//!
//! ```
//! use xla_shape::hlo::module::{EntryKind, Module};
//! let text = b"HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} negate(p)\n}\n";
//! let module = Module::from_bytes(text.to_vec());
//! for entry in module.entries()? {
//!     let entry = entry?;
//!     if entry.kind() == EntryKind::Instruction {
//!         println!("{} {}", entry.site, entry.shape.text());
//!     }
//! }
//! let summary = module.summary()?;
//! assert_eq!((summary.name.as_str(), summary.computations), ("m", 1));
//! # Ok::<(), xla_shape::Error>(())
//! ```
//!
//! # Memory
//!
//! A pass holds one item's entries, the module's meshes and a bounded shape cache; text is read
//! one statement at a time, a proto walked in place. A file's text is never loaded whole; a
//! serialized module is (as [`crate::hlo::walk`] needs its bytes).
//!
//! # Files
//!
//! [`Module::open`] reads files with `std::fs` (no memory map: the library has no `unsafe`, and a
//! stream needs none); a file truncated while it is read ends its text early, which the reader
//! reports as text that ends inside a computation.

mod entry;
mod printed;
mod reader;

pub use entry::{Attribute, AttributeError, CheckedShape, Entry, EntryKind, ShardingResult, Shardy, Site};
pub use reader::{Listed, ModuleReader};

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::{FileError, FileOperation};
use crate::hlo::text::{TextOptions, TextReader};
use crate::hlo::{self, HloMessage, LiteralSite};
use crate::literal::Constant;
use crate::proto::{LiteralProto, ProgramShapeProto, ShapeProto};
use crate::{Error, Result};

/// The bytes of a file read to tell its form: enough to skip leading whitespace and see
/// `HloModule` or `module`.
const SNIFF_BYTES: u64 = 4096;

/// Which of the five forms a module is in.
///
/// ```
/// use xla_shape::hlo::{HloMessage, module::ModuleForm};
/// assert_eq!(ModuleForm::detect(b"HloModule m\n", None), ModuleForm::Text);
/// assert_eq!(ModuleForm::detect(b"module @jit_f {\n", None), ModuleForm::Mlir);
/// assert_eq!(ModuleForm::detect(&[0x0a, 0x01, b'm'], None), ModuleForm::Proto(HloMessage::Module));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModuleForm {
    /// XLA's HLO text (`--xla_dump_to` `.txt` dumps, `as_text(dialect="hlo")`).
    Text,
    /// StableHLO MLIR text (`lowered.as_text()`).
    Mlir,
    /// A serialized message.
    Proto(HloMessage),
}

impl ModuleForm {
    /// The text form `head` (a module's first bytes) starts as, if any: HLO text when it starts
    /// (after whitespace) with `HloModule`, StableHLO as MLIR text does.
    pub fn of_text(head: &[u8]) -> Option<Self> {
        if hlo::text::is_hlo_text(head) {
            Some(Self::Text)
        } else if hlo::mlir::is_mlir_text(head) {
            Some(Self::Mlir)
        } else {
            None
        }
    }

    /// The form of a whole module's `bytes`: a text form ([`of_text`](Self::of_text)), else the
    /// message the bytes read as ([`hlo::detect`], `file_name` a hint), else a module (whose
    /// reading then says where it fails).
    pub fn detect(bytes: &[u8], file_name: Option<&str>) -> Self {
        Self::of_text(bytes).unwrap_or_else(|| Self::Proto(hlo::detect(bytes, file_name).unwrap_or(HloMessage::Module)))
    }

    /// Whether it is text (HLO or StableHLO).
    pub const fn is_text(self) -> bool {
        matches!(self, Self::Text | Self::Mlir)
    }
}

/// Where a module is.
#[derive(Debug, Clone)]
enum Source {
    Bytes(Vec<u8>),
    /// A text file, streamed on each pass.
    Path(PathBuf),
}

/// A module to list: its input and its form.
///
/// ```
/// use xla_shape::hlo::module::{Module, ModuleForm};
/// let module = Module::from_bytes(b"module @jit_f {\n  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n    return %arg0 : tensor<2xf32>\n  }\n}\n".to_vec());
/// assert_eq!(module.form(), ModuleForm::Mlir);
/// let sites: Vec<String> = module.entries()?.map(|e| e.map(|e| e.site.to_string())).collect::<Result<_, _>>()?;
/// assert_eq!(sites, ["main / parameter 0", "main / result 0"]);
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Module {
    source: Source,
    form: ModuleForm,
    options: TextOptions,
}

impl Module {
    /// A module from its bytes, its form told from them ([`ModuleForm::detect`]).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        let form = ModuleForm::detect(&bytes, None);
        Self::from_bytes_as(bytes, form)
    }

    /// A module from its bytes, in the given form.
    pub fn from_bytes_as(bytes: Vec<u8>, form: ModuleForm) -> Self {
        Self { source: Source::Bytes(bytes), form, options: TextOptions::default() }
    }

    /// A module read whole from `reader` (a pipe cannot be read twice), its form told from it.
    ///
    /// # Errors
    ///
    /// [`Error::File`] when reading fails (`what` names the input in it).
    pub fn from_reader(mut reader: impl Read, what: &Path) -> Result<Self> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).map_err(|e| file_error(FileOperation::Read, what, &e))?;
        Ok(Self::from_bytes(bytes))
    }

    /// The module in the file at `path`, its form told from its first bytes and, for a proto,
    /// from its bytes and its name (`….hlo.pb`, `….snapshot.N.pb`). Text stays in the file and is
    /// streamed on each pass; a proto is read whole.
    ///
    /// ```
    /// let error = xla_shape::hlo::module::Module::open("no/such/module.txt").unwrap_err();
    /// assert!(error.to_string().starts_with("cannot open no/such/module.txt: "));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::File`] when the file cannot be opened or read.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let mut head = Vec::new();
        let file = File::open(path).map_err(|e| file_error(FileOperation::Open, path, &e))?;
        file.take(SNIFF_BYTES).read_to_end(&mut head).map_err(|e| file_error(FileOperation::Read, path, &e))?;
        if let Some(form) = ModuleForm::of_text(&head) {
            return Self::open_as(path, form);
        }
        let bytes = std::fs::read(path).map_err(|e| file_error(FileOperation::Open, path, &e))?;
        let name = path.file_name().and_then(|n| n.to_str());
        let form = ModuleForm::Proto(hlo::detect(&bytes, name).unwrap_or(HloMessage::Module));
        Ok(Self::from_bytes_as(bytes, form))
    }

    /// The module in the file at `path`, in the given form (text is opened on each pass).
    ///
    /// # Errors
    ///
    /// [`Error::File`] when a proto's file cannot be read.
    pub fn open_as(path: impl AsRef<Path>, form: ModuleForm) -> Result<Self> {
        let path = path.as_ref();
        let source = if form.is_text() {
            Source::Path(path.to_path_buf())
        } else {
            Source::Bytes(std::fs::read(path).map_err(|e| file_error(FileOperation::Open, path, &e))?)
        };
        Ok(Self { source, form, options: TextOptions::default() })
    }

    /// The same module read with other text options (the longest statement).
    #[must_use]
    pub fn with_options(mut self, options: TextOptions) -> Self {
        self.options = options;
        self
    }

    /// Its form.
    pub fn form(&self) -> ModuleForm {
        self.form
    }

    /// Its bytes, when it is held in memory (not a text file).
    pub fn bytes(&self) -> Option<&[u8]> {
        match &self.source {
            Source::Bytes(bytes) => Some(bytes),
            Source::Path(_) => None,
        }
    }

    /// The text file it streams from, if it does.
    pub fn path(&self) -> Option<&Path> {
        match &self.source {
            Source::Bytes(_) => None,
            Source::Path(path) => Some(path),
        }
    }

    /// The text from its start, for one pass.
    fn stream(&self) -> Result<Box<dyn BufRead + '_>> {
        match &self.source {
            Source::Bytes(bytes) => Ok(Box::new(bytes.as_slice())),
            Source::Path(path) => {
                let file = File::open(path).map_err(|e| file_error(FileOperation::Open, path, &e))?;
                Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
            }
        }
    }

    /// One pass over the module: its entries, and for a proto the wire findings
    /// ([`ModuleReader::next_item`]). As an iterator it gives the entries.
    ///
    /// # Errors
    ///
    /// [`Error::File`] when a text file cannot be opened; [`Error::Decode`] when a proto's
    /// module-level fields are not its message.
    pub fn entries(&self) -> Result<ModuleReader<'_>> {
        match (&self.source, self.form) {
            (Source::Bytes(bytes), form) => ModuleReader::new(bytes, form, self.options),
            (Source::Path(_), ModuleForm::Mlir) => Ok(ModuleReader::mlir(self.stream()?, self.options)),
            (Source::Path(_), _) => Ok(ModuleReader::text(self.stream()?, self.options)),
        }
    }

    /// One pass that keeps what describes the module: its name, computation count, the count of
    /// entries of each kind, the invalid shapes and the entry computation layout.
    ///
    /// # Errors
    ///
    /// As [`entries`](Self::entries), and the reader's first error.
    pub fn summary(&self) -> Result<Summary> {
        let mut reader = self.entries()?;
        let mut summary = Summary::default();
        while let Some(entry) = reader.next_entry()? {
            summary.add(entry);
        }
        reader.name().clone_into(&mut summary.name);
        summary.computations = reader.computations();
        Ok(summary)
    }

    /// Calls `f` with each literal of the module in order: each constant's and, for a
    /// snapshot, each recorded argument and the result. A proto's literals are given encoded;
    /// text constants parsed (or elided, as XLA's printer elides large ones). A StableHLO
    /// module's constants are not read: there are none.
    ///
    /// ```
    /// use xla_shape::hlo::module::{LiteralValue, Module};
    /// let module = Module::from_bytes(b"HloModule m\nENTRY e {\n  ROOT c = f32[2]{0} constant({1, 2})\n}\n".to_vec());
    /// let mut sites = Vec::new();
    /// module.for_each_literal(|literal| {
    ///     assert!(matches!(literal.value, LiteralValue::Parsed(_)));
    ///     sites.push(literal.site.to_string());
    ///     Ok::<(), xla_shape::Error>(())
    /// })?;
    /// assert_eq!(sites, ["e/c"]);
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `f`'s first error; [`Error::Decode`] for a proto the literals' path through is not its
    /// message; [`Error::HloText`] for text the reader (or a constant's values) refuses.
    pub fn for_each_literal<E: From<Error>>(
        &self,
        mut f: impl FnMut(ModuleLiteral<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        match (self.form, &self.source) {
            (ModuleForm::Mlir, _) => Ok(()),
            (ModuleForm::Proto(message), Source::Bytes(bytes)) => {
                for sited in hlo::literals(bytes, message)? {
                    f(ModuleLiteral { site: sited.site, value: LiteralValue::Encoded(sited.bytes) })?;
                }
                Ok(())
            }
            _ => for_each_text_constant(self.stream()?, self.options, f),
        }
    }
}

/// Calls `f` with each constant of a stream of HLO text, in order: parsed, or elided as XLA's
/// printer elides large ones ([`Module::for_each_literal`] on a stream read once).
///
/// ```
/// use xla_shape::hlo::module::{LiteralValue, for_each_text_constant};
/// let text = "HloModule m\nENTRY e {\n  ROOT c = f32[20]{0} constant({...})\n}\n";
/// let mut elided = 0;
/// for_each_text_constant(Box::new(text.as_bytes()), Default::default(), |literal| {
///     elided += usize::from(matches!(literal.value, LiteralValue::Elided(_)));
///     Ok::<(), xla_shape::Error>(())
/// })?;
/// assert_eq!(elided, 1);
/// # Ok::<(), xla_shape::Error>(())
/// ```
///
/// # Errors
///
/// `f`'s first error, or [`Error::HloText`] for text the reader (or a constant's values)
/// refuses.
pub fn for_each_text_constant<E: From<Error>>(
    stream: Box<dyn BufRead + '_>,
    options: TextOptions,
    mut f: impl FnMut(ModuleLiteral<'_>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let mut reader = TextReader::with_options(stream, options);
    while let Some(item) = reader.next_item()? {
        let hlo::text::Item::Instruction(instruction) = item else { continue };
        let Some(constant) = instruction.constant()? else { continue };
        let site = LiteralSite::Constant { computation: instruction.computation, instruction: instruction.name };
        let value = match constant {
            Constant::Elided => LiteralValue::Elided(instruction.shape),
            Constant::Literal(proto) => LiteralValue::Parsed(proto),
        };
        f(ModuleLiteral { site, value })?;
    }
    Ok(())
}

fn file_error(operation: FileOperation, path: &Path, error: &std::io::Error) -> Error {
    Error::File(Box::new(FileError::new(operation, path.to_path_buf(), error)))
}

/// A literal of a module, as [`Module::for_each_literal`] finds it.
#[derive(Debug, Clone, PartialEq)]
pub enum LiteralValue<'a> {
    /// A proto's encoded `LiteralProto` (decode it with [`crate::codec::decode_lenient`]).
    Encoded(&'a [u8]),
    /// A text constant's values, as the `LiteralProto` XLA would hold.
    Parsed(Box<LiteralProto>),
    /// A text constant XLA printed as `{...}`: only its shape is in the text.
    Elided(&'a ShapeProto),
}

/// A literal and where it sits.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleLiteral<'a> {
    /// The constant, argument or result.
    pub site: LiteralSite<'a>,
    /// Its value.
    pub value: LiteralValue<'a>,
}

/// What one pass tells of a module ([`Module::summary`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// The module's name.
    pub name: String,
    /// How many computations (StableHLO: functions) it has.
    pub computations: usize,
    /// The entries of each kind, by [`EntryKind::index`].
    pub counts: [usize; 7],
    /// How many shapes are invalid.
    pub invalid: usize,
    /// The first invalid shape: its site and why.
    pub first_invalid: Option<(Site, Error)>,
    /// The entries of the entry computation layout, in order.
    pub entry_layout: Vec<Entry>,
}

impl Summary {
    fn add(&mut self, entry: Entry) {
        if let Some(count) = self.counts.get_mut(entry.kind().index()) {
            *count = count.saturating_add(1);
        }
        if let Err(error) = entry.shape.shape() {
            self.invalid = self.invalid.saturating_add(1);
            if self.first_invalid.is_none() {
                self.first_invalid = Some((entry.site.clone(), error.clone()));
            }
        }
        if entry.in_entry_layout {
            self.entry_layout.push(entry);
        }
    }

    /// How many entries of `kind` the module has.
    pub fn count(&self, kind: EntryKind) -> usize {
        self.counts.get(kind.index()).copied().unwrap_or(0)
    }

    /// The entry computation's parameters and result as a program shape: the host program
    /// shape (HLO text: the `entry_computation_layout`, or the entry computation's signature), or
    /// a StableHLO entry function's (its results as XLA's one result: the result, or a tuple of
    /// them). `None` when the module has none, or a StableHLO result is invalid.
    pub fn entry_computation_layout(&self) -> Option<ProgramShapeProto> {
        let mut program = ProgramShapeProto::default();
        let mut results = Vec::new();
        let mut found = false;
        for entry in &self.entry_layout {
            let shape = entry.shape.proto().clone();
            match &entry.site {
                Site::HostParameter { name, .. } | Site::FunctionParameter { name, .. } => {
                    program.parameters.push(shape);
                    program.parameter_names.push(name.clone());
                }
                Site::HostResult => program.result = Some(shape),
                Site::FunctionResult { .. } => results.push(entry.shape.to_shape_buf().ok()?),
                _ => continue,
            }
            found = true;
        }
        if !results.is_empty() {
            program.result = Some(crate::make::make_maybe_tuple_shape(&results).ok()?.into_proto());
        }
        found.then_some(program)
    }
}
