//! [`ModuleReader`]: one pass over a module in any of its five forms, giving its entries one at
//! a time (`docs/hlo.md`, "Module listing"). A proto is walked in place ([`crate::hlo::walk`]),
//! text is streamed ([`TextReader`], [`MlirReader`]); the reader keeps the current item's
//! entries, the module's meshes and the shape cache, never the module.

use std::collections::{BTreeMap, VecDeque};
use std::io::BufRead;
use std::sync::Arc;

use crate::codec::WireReport;
use crate::hlo::mlir::{self, MlirReader, ShardingAttribute};
use crate::hlo::text::{self, TextOptions, TextReader};
use crate::hlo::{self, Found, HloMessage, ShapeSite, Walk};
use crate::proto::{ProgramShapeProto, ShapeProto};
use crate::sharding::{self, shardy};
use crate::{Error, Result};

use super::ModuleForm;
use super::entry::{Attribute, AttributeError, Entry, ShardingResult, Shardy, Site};
use super::printed::{Key, Printed};

/// One item of a [`ModuleReader`]: an entry, or (serialized modules only) what the codec's wire
/// scan found in a shape-carrying field.
#[derive(Debug, Clone, PartialEq)]
pub enum Listed {
    /// A shape with its site.
    Entry(Entry),
    /// Unknown fields or non-canonical encodings in the field just walked (never empty).
    Report {
        /// Where: a site, `host_program_shape` or `COMPUTATION / program_shape`.
        site: String,
        /// The findings.
        report: WireReport,
    },
}

/// The module's Shardy meshes by name, or why they are refused.
type Meshes = std::result::Result<BTreeMap<String, shardy::Mesh>, AttributeError>;

fn own(error: Error) -> AttributeError {
    AttributeError { attribute: Attribute::Own, error }
}

/// The meshes of an `xla.sdy.meshes` value, if the module has one.
fn meshes(text: Option<&str>) -> Meshes {
    text.map_or_else(
        || Ok(BTreeMap::new()),
        |text| shardy::parse_meshes(text).map_err(|error| AttributeError { attribute: Attribute::SdyMeshes, error }),
    )
}

/// An instruction's Shardy sharding (`text`, or why its attributes are refused) converted over
/// the module's `meshes` and compared with its own `sharding`.
fn shardy_of(
    text: Option<std::result::Result<&str, AttributeError>>,
    meshes: &Meshes,
    sharding: Option<&ShardingResult>,
) -> Option<Shardy> {
    let converted = text?.and_then(|text| {
        let meshes = meshes.as_ref().map_err(Clone::clone)?;
        shardy::to_hlo_sharding(text, meshes).map_err(own)
    });
    let disagrees = match (&converted, sharding) {
        (Ok(converted), Some(Ok(own))) => Some(converted.to_string() != own.to_string()),
        _ => None,
    };
    Some(Shardy { converted, disagrees })
}

/// A name shared by the entries of one computation: `current` again if it is the same.
fn shared(current: &mut Arc<str>, name: &str) -> Arc<str> {
    if &**current != name {
        *current = Arc::from(name);
    }
    Arc::clone(current)
}

/// Where each form's reader is.
enum State<'a> {
    Proto { walk: Box<Walk<'a>>, meshes: Meshes },
    Text { reader: Box<TextReader<Box<dyn BufRead + 'a>>>, meshes: Meshes, host_given: bool },
    Mlir { reader: Box<MlirReader<Box<dyn BufRead + 'a>>>, meshes: Meshes, entry: bool },
}

/// One pass over a module: its entries in the order the module holds them (for a proto, the
/// host program shape, then each computation's program shape and instructions; for text, the
/// `entry_computation_layout`, then each instruction as it comes and each computation's
/// signature at its end), each shape printed and validated once per distinct text.
///
/// Memory is bounded whatever the module's size: one statement of text, the entries of one
/// item, the module's meshes, a bounded shape cache (a proto is walked in the caller's bytes).
///
/// ```
/// use xla_shape::hlo::module::{Listed, ModuleForm, ModuleReader};
/// let text = "HloModule m\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n";
/// let mut reader = ModuleReader::new(text.as_bytes(), ModuleForm::Text, Default::default())?;
/// let mut sites = Vec::new();
/// while let Some(Listed::Entry(entry)) = reader.next_item()? {
///     sites.push(format!("{} {}", entry.site, entry.shape.text()));
/// }
/// assert_eq!(sites, ["e / p f32[2]{0}", "host_program_shape / parameter 0 (p) f32[2]{0}",
///                    "host_program_shape / result f32[2]{0}", "e / parameter 0 (p) f32[2]{0}", "e / result f32[2]{0}"]);
/// assert_eq!((reader.name(), reader.computations()), ("m", 1));
/// # Ok::<(), xla_shape::Error>(())
/// ```
pub struct ModuleReader<'a> {
    state: State<'a>,
    printed: Printed,
    pending: VecDeque<Listed>,
    name: String,
    computations: usize,
    /// The name shared by the current computation's (or function's) entries.
    computation: Arc<str>,
    done: bool,
}

impl std::fmt::Debug for ModuleReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModuleReader").field("name", &self.name).field("done", &self.done).finish_non_exhaustive()
    }
}

impl<'a> ModuleReader<'a> {
    /// A pass over a module's `bytes` read as `form` (see [`ModuleForm::detect`]). A
    /// serialized module's header (its name, computation count and meshes) is read now; text's
    /// as it comes.
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] when a proto's module-level fields are not the message.
    pub fn new(bytes: &'a [u8], form: ModuleForm, options: TextOptions) -> Result<Self> {
        match form {
            ModuleForm::Proto(message) => Self::proto(bytes, message),
            ModuleForm::Text => Ok(Self::text(Box::new(bytes), options)),
            ModuleForm::Mlir => Ok(Self::mlir(Box::new(bytes), options)),
        }
    }

    /// A pass over a stream of HLO text.
    pub fn text(stream: Box<dyn BufRead + 'a>, options: TextOptions) -> Self {
        let reader = Box::new(TextReader::with_options(stream, options));
        Self::with_state(State::Text { reader, meshes: Ok(BTreeMap::new()), host_given: false }, String::new(), 0)
    }

    /// A pass over a stream of StableHLO text.
    pub fn mlir(stream: Box<dyn BufRead + 'a>, options: TextOptions) -> Self {
        let reader = Box::new(MlirReader::with_options(stream, options));
        Self::with_state(State::Mlir { reader, meshes: Ok(BTreeMap::new()), entry: false }, String::new(), 0)
    }

    /// A pass over a serialized module, `bytes` holding `message`.
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] when the module-level fields are not the message.
    pub fn proto(bytes: &'a [u8], message: HloMessage) -> Result<Self> {
        let header = hlo::header(bytes, message)?;
        let state = State::Proto { walk: Box::new(hlo::walk(bytes, message)), meshes: meshes(header.sdy_meshes) };
        Ok(Self::with_state(state, header.name.to_owned(), header.computations))
    }

    fn with_state(state: State<'a>, name: String, computations: usize) -> Self {
        Self {
            state,
            printed: Printed::default(),
            pending: VecDeque::new(),
            name,
            computations,
            computation: Arc::from(""),
            done: false,
        }
    }

    /// The module's name (known from the start for a proto, after the first item for text).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many computations (StableHLO: functions) the module has: all of them for a proto,
    /// those read so far for text (all of them once [`next_item`](Self::next_item) gave `None`).
    pub fn computations(&self) -> usize {
        self.computations
    }

    /// The next item, or `None` at the end.
    ///
    /// # Errors
    ///
    /// The reader's error, after which it gives `None`: [`Error::HloText`] (with line, column
    /// and caret) for text, [`Error::Decode`] or [`Error::LimitExceeded`] for a proto.
    pub fn next_item(&mut self) -> Result<Option<Listed>> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                return Ok(Some(item));
            }
            if self.done {
                return Ok(None);
            }
            match self.advance() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(error) => {
                    self.done = true;
                    return Err(error);
                }
            }
        }
    }

    /// The next entry (wire reports skipped), or `None` at the end.
    ///
    /// # Errors
    ///
    /// As [`next_item`](Self::next_item).
    pub fn next_entry(&mut self) -> Result<Option<Entry>> {
        loop {
            match self.next_item()? {
                Some(Listed::Entry(entry)) => return Ok(Some(entry)),
                Some(Listed::Report { .. }) => {}
                None => return Ok(None),
            }
        }
    }

    /// Reads one item of the underlying reader into `pending`; false at its end.
    fn advance(&mut self) -> Result<bool> {
        let Self { state, printed, pending, name, computations, computation, .. } = self;
        let mut out = Out { printed, pending, name, computations, computation };
        match state {
            State::Proto { walk, meshes } => match walk.next().transpose()? {
                None => Ok(false),
                Some(Found::Shape(sited)) => {
                    out.proto_shape(&sited.site, &sited.shape, meshes);
                    Ok(true)
                }
                Some(Found::Report(found)) => {
                    out.pending.push_back(Listed::Report { site: found.site.to_string(), report: found.report });
                    Ok(true)
                }
            },
            State::Text { reader, meshes, host_given } => {
                let Some(item) = reader.next_item()? else { return Ok(false) };
                out.text_item(item, meshes, host_given);
                Ok(true)
            }
            State::Mlir { reader, meshes, entry } => {
                let Some(item) = reader.next_item()? else { return Ok(false) };
                out.mlir_item(item, meshes, entry);
                Ok(true)
            }
        }
    }
}

impl Iterator for ModuleReader<'_> {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().transpose()
    }
}

/// The `HloSharding` of a StableHLO argument's or result's sharding attribute, or why it is
/// refused.
fn mlir_sharding(attribute: &ShardingAttribute, meshes: &BTreeMap<String, shardy::Mesh>) -> ShardingResult {
    match attribute {
        ShardingAttribute::Shardy(text) => shardy::to_hlo_sharding(text, meshes)
            .map_err(|error| AttributeError { attribute: Attribute::SdySharding, error }),
        ShardingAttribute::Hlo(text) => {
            sharding::parse(text).map_err(|error| AttributeError { attribute: Attribute::MhloSharding, error })
        }
    }
}

/// Where an item's entries go, and the module's name and counts.
struct Out<'r> {
    printed: &'r mut Printed,
    pending: &'r mut VecDeque<Listed>,
    name: &'r mut String,
    computations: &'r mut usize,
    /// The name shared by the current computation's entries.
    computation: &'r mut Arc<str>,
}

impl Out<'_> {
    /// The entries of one item of HLO text.
    fn text_item(&mut self, item: text::Item<'_>, meshes: &mut Meshes, host_given: &mut bool) {
        match item {
            text::Item::Module(module) => {
                module.name.clone_into(self.name);
                *meshes = match module.frontend_attributes.map(|a| text::frontend_attribute(a, hlo::SDY_MESHES)) {
                    Some(Err(error)) => Err(AttributeError { attribute: Attribute::SdyMeshes, error }),
                    Some(Ok(found)) => self::meshes(found.as_deref()),
                    None => Ok(BTreeMap::new()),
                };
                if let Some(layout) = module.entry_computation_layout {
                    *host_given = true;
                    self.program(layout, None);
                }
            }
            text::Item::Computation(_) => *self.computations = self.computations.saturating_add(1),
            text::Item::Instruction(i) => {
                let computation = shared(self.computation, i.computation);
                let sdy = i.attribute("frontend_attributes").map(|a| text::frontend_attribute(a, hlo::SDY_SHARDING));
                let sdy = match sdy {
                    Some(Ok(Some(text))) => Some(Ok(text)),
                    Some(Err(error)) => Some(Err(AttributeError { attribute: Attribute::FrontendAttributes, error })),
                    Some(Ok(None)) | None => None,
                };
                let sharding = i.attribute("sharding").map(|text| sharding::parse(text).map_err(own));
                let shardy =
                    shardy_of(sdy.as_ref().map(|r| r.as_deref().map_err(Clone::clone)), meshes, sharding.as_ref());
                let site = Site::Instruction { computation: Arc::clone(&computation), instruction: i.name.to_owned() };
                self.entry(site, i.shape, Key::Text(i.shape_text), (sharding, shardy));
                if let Some(outfeed) = i.outfeed_shape {
                    let site =
                        Site::OutfeedShape { computation: Arc::clone(&computation), instruction: i.name.to_owned() };
                    self.entry(site, outfeed, Key::None, (None, None));
                }
                for (operand, shape) in i.operand_shapes_with_layout.iter().enumerate() {
                    let site = Site::OperandShape {
                        computation: Arc::clone(&computation),
                        instruction: i.name.to_owned(),
                        operand,
                    };
                    self.entry(site, shape, Key::None, (None, None));
                }
            }
            text::Item::ComputationEnd(end) => {
                if end.entry && !*host_given {
                    self.program(end.program_shape, None);
                }
                let computation = shared(self.computation, end.name);
                self.program(end.program_shape, Some(&computation));
            }
        }
    }

    /// The entries of one item of StableHLO text.
    fn mlir_item(&mut self, item: mlir::Item<'_>, meshes: &mut Meshes, entry: &mut bool) {
        match item {
            mlir::Item::Module(module) => module.name.unwrap_or_default().clone_into(self.name),
            mlir::Item::Mesh(mesh) => {
                let parsed = shardy::parse_meshes(&format!("{} = #sdy.mesh{}", mesh.name, mesh.mesh))
                    .map_err(|error| AttributeError { attribute: Attribute::SdyMesh(mesh.name.into()), error });
                let all = std::mem::replace(meshes, Ok(BTreeMap::new()));
                *meshes = match (all, parsed) {
                    (Ok(mut all), Ok(more)) => {
                        all.extend(more);
                        Ok(all)
                    }
                    (Err(e), _) | (_, Err(e)) => Err(e),
                };
            }
            mlir::Item::Function(function) => {
                *self.computations = self.computations.saturating_add(1);
                *entry = function.is_entry();
                let name = shared(self.computation, function.name);
                for (result, values) in [(false, function.parameters), (true, function.results)] {
                    for (index, value) in values.iter().enumerate() {
                        let Some(shape) = &value.shape else { continue };
                        let function = Arc::clone(&name);
                        let site = if result {
                            Site::FunctionResult { function, index }
                        } else {
                            Site::FunctionParameter { function, index, name: value.name.clone().unwrap_or_default() }
                        };
                        let sharding = value.attributes.sharding.as_ref().map(|attribute| {
                            meshes.as_ref().map_err(Clone::clone).and_then(|meshes| mlir_sharding(attribute, meshes))
                        });
                        let attributes = &value.attributes;
                        let key = attributes.layout_mode.is_none() && attributes.memory_kind.is_none();
                        let key = if key { Key::Text(&value.type_text) } else { Key::None };
                        let shape = self.printed.get(key, shape);
                        self.push(Entry {
                            site,
                            shape,
                            sharding: sharding.map(Box::new),
                            shardy: None,
                            attributes: Some(Box::new(attributes.clone())),
                            in_entry_layout: *entry,
                        });
                    }
                }
            }
            mlir::Item::Op(op) => {
                let function = shared(self.computation, op.function);
                for index in 0..op.len() {
                    let Some(shape) = op.shape(index) else { continue };
                    let key = op.slot(index).map_or(Key::from(op.type_text(index)), |(g, at)| Key::Slot(g, at));
                    let site = Site::Operation { function: Arc::clone(&function), result: op.result_name(index) };
                    self.entry(site, shape, key, (None, None));
                }
            }
            mlir::Item::FunctionEnd(_) => *entry = false,
        }
    }

    fn push(&mut self, entry: Entry) {
        self.pending.push_back(Listed::Entry(entry));
    }

    /// An entry of an HLO module (no StableHLO attributes).
    fn entry(
        &mut self,
        site: Site,
        shape: &ShapeProto,
        key: Key<'_>,
        (sharding, shardy): (Option<ShardingResult>, Option<Shardy>),
    ) {
        let in_entry_layout = matches!(site, Site::HostParameter { .. } | Site::HostResult);
        let shape = self.printed.get(key, shape);
        let (sharding, shardy) = (sharding.map(Box::new), shardy.map(Box::new));
        self.push(Entry { site, shape, sharding, shardy, attributes: None, in_entry_layout });
    }

    /// A program shape's parameters and result: the entry computation layout's (no
    /// `computation`), or a computation's.
    fn program(&mut self, program: &ProgramShapeProto, computation: Option<&Arc<str>>) {
        for (index, shape) in program.parameters.iter().enumerate() {
            let name = program.parameter_names.get(index).map_or("", String::as_str).to_owned();
            let site = match computation {
                None => Site::HostParameter { index, name },
                Some(computation) => Site::ComputationParameter { computation: Arc::clone(computation), index, name },
            };
            self.entry(site, shape, Key::None, (None, None));
        }
        if let Some(shape) = &program.result {
            let site = match computation {
                None => Site::HostResult,
                Some(computation) => Site::ComputationResult { computation: Arc::clone(computation) },
            };
            self.entry(site, shape, Key::None, (None, None));
        }
    }

    /// A shape of a serialized module.
    fn proto_shape(&mut self, site: &ShapeSite<'_>, shape: &ShapeProto, meshes: &Meshes) {
        let (site, sharding, shardy) = match *site {
            ShapeSite::HostParameter { index, name } => {
                (Site::HostParameter { index, name: name.to_owned() }, None, None)
            }
            ShapeSite::HostResult => (Site::HostResult, None, None),
            ShapeSite::ComputationParameter { computation, index, name } => (
                Site::ComputationParameter {
                    computation: shared(self.computation, computation),
                    index,
                    name: name.to_owned(),
                },
                None,
                None,
            ),
            ShapeSite::ComputationResult { computation } => {
                (Site::ComputationResult { computation: shared(self.computation, computation) }, None, None)
            }
            ShapeSite::Instruction { computation, instruction, sharding: bytes, shardy: text, .. } => {
                let sharding =
                    bytes.map(|bytes| hlo::SitedSharding { computation, instruction, bytes }.sharding().map_err(own));
                let shardy = shardy_of(text.map(Ok), meshes, sharding.as_ref());
                let site = Site::Instruction {
                    computation: shared(self.computation, computation),
                    instruction: instruction.to_owned(),
                };
                (site, sharding, shardy)
            }
            ShapeSite::OutfeedShape { computation, instruction } => (
                Site::OutfeedShape {
                    computation: shared(self.computation, computation),
                    instruction: instruction.to_owned(),
                },
                None,
                None,
            ),
            ShapeSite::OperandShape { computation, instruction, operand } => (
                Site::OperandShape {
                    computation: shared(self.computation, computation),
                    instruction: instruction.to_owned(),
                    operand,
                },
                None,
                None,
            ),
        };
        self.entry(site, shape, Key::None, (sharding, shardy));
    }
}
