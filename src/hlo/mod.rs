//! Shapes inside serialized HLO: `HloModuleProto`, `HloProto` and `HloSnapshot`, read as a
//! stream.
//!
//! [`walk`] reads the bytes in place, computation by computation and instruction by instruction,
//! and yields one shape at a time with its [`ShapeSite`]. Everything else — names aside, which
//! are borrowed from the input — is checked as prost checks it and skipped without copying:
//! literals, metadata, backend configs. Only the field numbers of upstream
//! `xla/service/hlo.proto` that carry shapes or say where they sit are read:
//!
//! | message | fields read |
//! |---|---|
//! | `HloSnapshot` | `hlo = 1` (an `HloProto`) |
//! | `HloProto` | `hlo_module = 1` |
//! | `HloModuleProto` | `name = 1`, `computations = 3`, `host_program_shape = 4`, `frontend_attributes = 19` (`xla.sdy.meshes`) |
//! | `HloComputationProto` | `name = 1`, `instructions = 2`, `program_shape = 4` |
//! | `HloInstructionProto` | `name = 1`, `opcode = 2`, `shape = 3`, `outfeed_shape = 29`, `sharding = 40`, `operand_shapes_with_layout = 57`, `frontend_attributes = 68` (`xla.sdy.sharding`) |
//!
//! # Memory
//!
//! The walk holds the input (the caller's slice) and, at any time, one decoded shape of at most
//! [`MAX_SHAPE_BYTES`] on the wire (a shape larger than that is [`Error::LimitExceeded`]), its
//! [`WireReport`] (at most [`MAX_REPORTED`](crate::codec::MAX_REPORTED) findings per list) and a
//! few words of cursor state per nesting level: nothing grows with the number of computations,
//! instructions or parameters. A 16 MiB module of empty instructions and a 256 MiB module of
//! constants are read in the input's size plus a few megabytes (`docs/hlo.md`).
//!
//! Repeated occurrences of a singular field are merged as prost merges them (a later `name`
//! wins; a later `shape` is merged into the earlier one). Each shape is decoded on its own, with
//! prost's full limit of 100 nested messages (XLA's C++ parser counts the module levels too).

mod detect;
pub mod mlir;
pub mod module;
pub mod text;

pub use detect::{detect, reads_as};

use std::fmt;
use std::iter;

use crate::codec::{self, Fields, Value, WireReport};
use crate::error::{Error, Limit, Result, WireType};
use crate::proto::{ProgramShapeProto, ShapeProto};

/// The largest shape (or program-shape result, merged over its occurrences) the walk decodes: 1 MiB
/// on the wire, far above any real shape (a 10 000-element tuple is about 100 KB). It bounds the
/// memory one shape can take while it is yielded (`limits` module, "Input size").
pub const MAX_SHAPE_BYTES: usize = 1 << 20;

/// Which HLO message the bytes hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HloMessage {
    /// `HloModuleProto` (what `as_serialized_hlo_module_proto()` writes).
    #[default]
    Module,
    /// `HloProto` (`hlo_module = 1`).
    Proto,
    /// `HloSnapshot` (`hlo = 1`, an `HloProto`).
    Snapshot,
}

impl HloMessage {
    /// How many messages wrap the module.
    fn wrapping(self) -> u32 {
        match self {
            Self::Module => 0,
            Self::Proto => 1,
            Self::Snapshot => 2,
        }
    }
}

// Field numbers of `xla/service/hlo.proto`.
const WRAPPED: u32 = 1;
const MODULE_NAME: u32 = 1;
const MODULE_COMPUTATIONS: u32 = 3;
const MODULE_HOST_PROGRAM_SHAPE: u32 = 4;
const COMPUTATION_NAME: u32 = 1;
const COMPUTATION_INSTRUCTIONS: u32 = 2;
const COMPUTATION_PROGRAM_SHAPE: u32 = 4;
const INSTRUCTION_NAME: u32 = 1;
const INSTRUCTION_OPCODE: u32 = 2;
const INSTRUCTION_SHAPE: u32 = 3;
const INSTRUCTION_OUTFEED_SHAPE: u32 = 29;
const INSTRUCTION_OPERAND_SHAPES: u32 = 57;
const INSTRUCTION_FRONTEND_ATTRIBUTES: u32 = 68;
const MODULE_FRONTEND_ATTRIBUTES: u32 = 19;
// `FrontendAttributes { map<string, string> map = 1 }`: entries `{ key = 1, value = 2 }`.
const FRONTEND_MAP: u32 = 1;
const MAP_KEY: u32 = 1;
const MAP_VALUE: u32 = 2;
// And of `xla/xla_data.proto`.
const PROGRAM_PARAMETERS: u32 = 1;
const PROGRAM_RESULT: u32 = 2;
const PROGRAM_PARAMETER_NAMES: u32 = 3;

const MODULE: &str = "HloModuleProto";
const COMPUTATION: &str = "HloComputationProto";
const INSTRUCTION: &str = "HloInstructionProto";
const PROGRAM: &str = "ProgramShapeProto";

fn decode_error(message: &'static str, reason: String) -> Error {
    Error::decode(message, reason)
}

/// The payloads of every occurrence of the length-delimited field `number` of one message, in
/// wire order; the first error ends it.
struct Occurrences<'a> {
    fields: Fields<'a>,
    number: u32,
    message: &'static str,
    failed: bool,
}

impl<'a> Occurrences<'a> {
    fn new(data: &'a [u8], number: u32, message: &'static str, level: u32) -> Self {
        Self { fields: Fields::new(data, level), number, message, failed: false }
    }
}

impl<'a> Iterator for Occurrences<'a> {
    type Item = Result<&'a [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let found = match self.fields.next()? {
                Err(reason) => Err(decode_error(self.message, reason)),
                Ok(field) if field.number != self.number => continue,
                Ok(field) => payload(field.value, field.wire_type, field.number, self.message),
            };
            self.failed = found.is_err();
            return Some(found);
        }
    }
}

/// A field the reader needs as a length-delimited payload.
fn payload<'a>(value: Value<'a>, wire_type: WireType, number: u32, message: &'static str) -> Result<&'a [u8]> {
    match value {
        Value::Len(bytes) => Ok(bytes),
        Value::Skipped => {
            Err(decode_error(message, format!("wire type is {wire_type}, expected {} (field {number})", WireType::Len)))
        }
    }
}

fn utf8<'a>(bytes: &'a [u8], message: &'static str, number: u32) -> Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|_| decode_error(message, format!("string is not valid UTF-8 (field {number})")))
}

/// The value of a singular string field: its last occurrence, every occurrence checked.
fn last_string<'a>(data: &'a [u8], number: u32, message: &'static str, level: u32) -> Result<&'a str> {
    let mut last = "";
    for bytes in Occurrences::new(data, number, message, level) {
        last = utf8(bytes?, message, number)?;
    }
    Ok(last)
}

type Slices<'a> = Box<dyn Iterator<Item = Result<&'a [u8]>> + 'a>;

/// The occurrences of field `number` in each of `parts`, one after the other: a repeated field of
/// a singular message that occurs several times (prost merges the occurrences).
fn within<'a>(parts: Slices<'a>, number: u32, message: &'static str, level: u32) -> Slices<'a> {
    Box::new(parts.flat_map(move |part| -> Slices<'a> {
        match part {
            Ok(bytes) => Box::new(Occurrences::new(bytes, number, message, level)),
            Err(error) => Box::new(iter::once(Err(error))),
        }
    }))
}

/// The module's encodings inside the input: the input itself, or every occurrence of the
/// wrapping fields.
fn module_parts(bytes: &[u8], message: HloMessage) -> Slices<'_> {
    match message {
        HloMessage::Module => Box::new(iter::once(Ok(bytes))),
        HloMessage::Proto => Box::new(Occurrences::new(bytes, WRAPPED, "HloProto", 0)),
        HloMessage::Snapshot => {
            within(Box::new(Occurrences::new(bytes, WRAPPED, "HloSnapshot", 0)), WRAPPED, "HloProto", 1)
        }
    }
}

/// A module's name and number of computations, read ahead of the [`walk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModuleHeader<'a> {
    /// `HloModuleProto.name`.
    pub name: &'a str,
    /// How many computations it holds.
    pub computations: usize,
    /// Its Shardy meshes: the `xla.sdy.meshes` frontend attribute (`frontend_attributes = 19`),
    /// if present (`docs/shardy.md`).
    pub sdy_meshes: Option<&'a str>,
}

/// The frontend attribute key of a module's Shardy meshes.
pub const SDY_MESHES: &str = "xla.sdy.meshes";
/// The frontend attribute key of an instruction's Shardy sharding.
pub const SDY_SHARDING: &str = "xla.sdy.sharding";

/// The value of `key` in one encoded `FrontendAttributes` (at nesting `level`), if present: the
/// last entry with that key, as prost merges a map.
fn frontend_value<'a>(bytes: &'a [u8], key: &str, level: u32, found: &mut Option<&'a str>) -> Result<()> {
    const ATTRIBUTES: &str = "FrontendAttributes";
    const ENTRY: &str = "FrontendAttributes.MapEntry";
    for entry in Occurrences::new(bytes, FRONTEND_MAP, ATTRIBUTES, level) {
        let entry = entry?;
        let (mut name, mut value) = ("", "");
        for field in Fields::new(entry, level.saturating_add(1)) {
            let field = field.map_err(|reason| decode_error(ENTRY, reason))?;
            let slot = match field.number {
                MAP_KEY => &mut name,
                MAP_VALUE => &mut value,
                _ => continue,
            };
            *slot = utf8(payload(field.value, field.wire_type, field.number, ENTRY)?, ENTRY, field.number)?;
        }
        if name == key {
            *found = Some(value);
        }
    }
    Ok(())
}

/// The name and the number of computations of a serialized module. Reads the module's own
/// fields only (a computation is skipped by its length), allocating nothing.
///
/// ```
/// use xla_shape::hlo::{header, HloMessage};
/// let module = header(&[0x0a, 0x01, b'm', 0x1a, 0x00], HloMessage::Module)?;
/// assert_eq!((module.name, module.computations), ("m", 1));
/// # Ok::<(), xla_shape::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Decode`] when the bytes are not the given message at the module level.
pub fn header(bytes: &[u8], message: HloMessage) -> Result<ModuleHeader<'_>> {
    let level = message.wrapping();
    let mut module = ModuleHeader { name: "", computations: 0, sdy_meshes: None };
    for part in module_parts(bytes, message) {
        for field in Fields::new(part?, level) {
            let field = field.map_err(|reason| decode_error(MODULE, reason))?;
            match field.number {
                MODULE_NAME => {
                    module.name =
                        utf8(payload(field.value, field.wire_type, field.number, MODULE)?, MODULE, MODULE_NAME)?;
                }
                MODULE_COMPUTATIONS => {
                    payload(field.value, field.wire_type, field.number, MODULE)?;
                    module.computations = module.computations.saturating_add(1);
                }
                MODULE_FRONTEND_ATTRIBUTES => {
                    let bytes = payload(field.value, field.wire_type, field.number, MODULE)?;
                    frontend_value(bytes, SDY_MESHES, level.saturating_add(1), &mut module.sdy_meshes)?;
                }
                _ => {}
            }
        }
    }
    Ok(module)
}

/// Where a shape sits in a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeSite<'a> {
    /// A parameter of `host_program_shape`.
    HostParameter {
        /// The parameter number.
        index: usize,
        /// Its name, if given.
        name: &'a str,
    },
    /// The result of `host_program_shape`.
    HostResult,
    /// A parameter of a computation's program shape.
    ComputationParameter {
        /// The computation.
        computation: &'a str,
        /// The parameter number.
        index: usize,
        /// Its name, if given.
        name: &'a str,
    },
    /// The result of a computation's program shape.
    ComputationResult {
        /// The computation.
        computation: &'a str,
    },
    /// An instruction's `shape`.
    Instruction {
        /// The computation.
        computation: &'a str,
        /// The instruction.
        instruction: &'a str,
        /// Its opcode.
        opcode: &'a str,
        /// Its encoded `OpSharding` (`sharding = 40`, the last occurrence), if it has one:
        /// decode it with [`SitedSharding`]'s rules (`docs/hlo.md`, "Shardings").
        sharding: Option<&'a [u8]>,
        /// Its Shardy sharding: the `xla.sdy.sharding` frontend attribute
        /// (`frontend_attributes = 68`), if present (`docs/shardy.md`).
        shardy: Option<&'a str>,
    },
    /// An instruction's `outfeed_shape`.
    OutfeedShape {
        /// The computation.
        computation: &'a str,
        /// The instruction.
        instruction: &'a str,
    },
    /// One of an instruction's `operand_shapes_with_layout`.
    OperandShape {
        /// The computation.
        computation: &'a str,
        /// The instruction.
        instruction: &'a str,
        /// The operand number.
        operand: usize,
    },
}

impl fmt::Display for ShapeSite<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HostParameter { index, name } => write!(f, "host_program_shape / parameter {index} ({name})"),
            Self::HostResult => f.write_str("host_program_shape / result"),
            Self::ComputationParameter { computation, index, name } => {
                write!(f, "{computation} / parameter {index} ({name})")
            }
            Self::ComputationResult { computation } => write!(f, "{computation} / result"),
            Self::Instruction { computation, instruction, .. } => write!(f, "{computation} / {instruction}"),
            Self::OutfeedShape { computation, instruction } => {
                write!(f, "{computation} / {instruction} / outfeed_shape")
            }
            Self::OperandShape { computation, instruction, operand } => {
                write!(f, "{computation} / {instruction} / operand_shapes_with_layout[{operand}]")
            }
        }
    }
}

/// Where the codec's wire scan found something: a program shape as a whole, or one shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportSite<'a> {
    /// `host_program_shape` (paths are relative to the `ProgramShapeProto`).
    HostProgramShape,
    /// A computation's `program_shape`.
    ProgramShape {
        /// The computation.
        computation: &'a str,
    },
    /// An instruction's shape field (paths are relative to the `ShapeProto`).
    Shape(ShapeSite<'a>),
}

impl fmt::Display for ReportSite<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HostProgramShape => f.write_str("host_program_shape"),
            Self::ProgramShape { computation } => write!(f, "{computation} / program_shape"),
            Self::Shape(site) => site.fmt(f),
        }
    }
}

/// A shape found in a module, with its site.
#[derive(Debug, Clone, PartialEq)]
pub struct SitedShape<'a> {
    /// Where the shape sits.
    pub site: ShapeSite<'a>,
    /// The raw shape, as prost decodes it (validate it with [`crate::Shape::try_new`]).
    pub shape: ShapeProto,
}

/// What the codec's wire scan found inside one shape-carrying field: unknown fields prost
/// drops and non-canonical encodings it normalizes. Never empty when yielded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeWireReport<'a> {
    /// The field.
    pub site: ReportSite<'a>,
    /// The findings; paths are relative to the field's message.
    pub report: WireReport,
}

/// One item of a [`walk`].
#[derive(Debug, Clone, PartialEq)]
pub enum Found<'a> {
    /// A shape.
    Shape(SitedShape<'a>),
    /// The findings of the field just walked (after its shapes).
    Report(ShapeWireReport<'a>),
}

/// Walks serialized HLO: every shape the module holds, in order — the host program shape's
/// parameters and result, then for each computation its program shape's, then each
/// instruction's `shape`, `outfeed_shape` and `operand_shapes_with_layout` — each followed by a
/// [`Found::Report`] when its bytes hold unknown fields or non-canonical encodings (a program
/// shape is scanned as a whole, after its shapes).
///
/// The iterator ends after the first error. Use [`header`] for the module's name.
///
/// ```
/// use xla_shape::hlo::{self, Found, HloMessage};
/// use xla_shape::Shape;
///
/// // HloModuleProto { computations { name "c" instructions { name "x" opcode "parameter" shape f32[2] } } }
/// let instruction = [0x0a, 0x01, b'x', 0x12, 0x09, b'p', b'a', b'r', b'a', b'm', b'e', b't', b'e', b'r', 0x1a, 0x05, 0x10, 0x0b, 0x1a, 0x01, 0x02];
/// let mut computation = vec![0x0a, 0x01, b'c', 0x12, instruction.len() as u8];
/// computation.extend_from_slice(&instruction);
/// let mut module = vec![0x1a, computation.len() as u8];
/// module.extend_from_slice(&computation);
///
/// let mut listed = Vec::new();
/// for found in hlo::walk(&module, HloMessage::Module) {
///     if let Found::Shape(sited) = found? {
///         listed.push(format!("{}: {}", sited.site, Shape::try_new_optional_layout(&sited.shape)?));
///     }
/// }
/// assert_eq!(listed, ["c / x: f32[2]"]); // no layout: XLA loads it with the default one
/// # Ok::<(), xla_shape::Error>(())
/// ```
///
/// # Errors
///
/// Items are [`Error::Decode`] when the bytes are not the given message (or a shape inside is
/// not a `ShapeProto`), and [`Error::LimitExceeded`] for a shape beyond [`MAX_SHAPE_BYTES`].
pub fn walk(bytes: &[u8], message: HloMessage) -> Walk<'_> {
    let level = message.wrapping();
    let host = ProgramWalk::new(
        ProgramOwner::Host,
        Box::new(move || within(module_parts(bytes, message), MODULE_HOST_PROGRAM_SHAPE, MODULE, level)),
        level.saturating_add(1),
    );
    Walk {
        header: Some(Box::new(move || header(bytes, message).map(|_| ()))),
        level,
        host: Some(host),
        computations: within(module_parts(bytes, message), MODULE_COMPUTATIONS, MODULE, level),
        computation: None,
        done: false,
    }
}

/// The iterator of [`walk`].
pub struct Walk<'a> {
    /// The module's own fields, checked before the first item (its name is UTF-8, …).
    header: Option<Box<dyn FnOnce() -> Result<()> + 'a>>,
    level: u32,
    host: Option<ProgramWalk<'a>>,
    computations: Slices<'a>,
    computation: Option<ComputationWalk<'a>>,
    done: bool,
}

impl fmt::Debug for Walk<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Walk").field("done", &self.done).finish_non_exhaustive()
    }
}

impl<'a> Iterator for Walk<'a> {
    type Item = Result<Found<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.advance();
        self.done = !matches!(item, Some(Ok(_)));
        item
    }
}

impl<'a> Walk<'a> {
    fn advance(&mut self) -> Option<Result<Found<'a>>> {
        if let Some(Err(error)) = self.header.take().map(|check| check()) {
            return Some(Err(error));
        }
        if let Some(host) = &mut self.host {
            if let Some(item) = host.next() {
                return Some(item);
            }
            self.host = None;
        }
        loop {
            if let Some(computation) = &mut self.computation {
                if let Some(item) = computation.next() {
                    return Some(item);
                }
                self.computation = None;
            }
            let next = self.computations.next()?;
            match next.and_then(|bytes| ComputationWalk::new(bytes, self.level.saturating_add(1))) {
                Ok(computation) => self.computation = Some(computation),
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

#[derive(Clone, Copy)]
enum ProgramOwner<'a> {
    Host,
    Computation(&'a str),
}

/// The program shapes' encodings (several when the field occurs more than once), from the start.
type Programs<'a> = Box<dyn Fn() -> Slices<'a> + 'a>;

enum ProgramPhase<'a> {
    Start,
    Parameters { parameters: Slices<'a>, names: Slices<'a>, index: usize },
    Result,
    Reports(Slices<'a>),
    Done,
}

/// One program shape: its parameters one at a time, its result, then its wire reports.
struct ProgramWalk<'a> {
    owner: ProgramOwner<'a>,
    programs: Programs<'a>,
    level: u32,
    phase: ProgramPhase<'a>,
}

impl<'a> ProgramWalk<'a> {
    fn new(owner: ProgramOwner<'a>, programs: Programs<'a>, level: u32) -> Self {
        Self { owner, programs, level, phase: ProgramPhase::Start }
    }

    fn next(&mut self) -> Option<Result<Found<'a>>> {
        let owner = self.owner;
        loop {
            match &mut self.phase {
                ProgramPhase::Start => {
                    let parameters = within((self.programs)(), PROGRAM_PARAMETERS, PROGRAM, self.level);
                    let names = within((self.programs)(), PROGRAM_PARAMETER_NAMES, PROGRAM, self.level);
                    self.phase = ProgramPhase::Parameters { parameters, names, index: 0 };
                }
                ProgramPhase::Parameters { parameters, names, index } => {
                    let Some(bytes) = parameters.next() else {
                        self.phase = ProgramPhase::Result;
                        continue;
                    };
                    let name = match names.next() {
                        None => Ok(""),
                        Some(name) => name.and_then(|bytes| utf8(bytes, PROGRAM, PROGRAM_PARAMETER_NAMES)),
                    };
                    let i = *index;
                    *index = index.saturating_add(1);
                    return Some(name.and_then(|name| {
                        let site = match owner {
                            ProgramOwner::Host => ShapeSite::HostParameter { index: i, name },
                            ProgramOwner::Computation(computation) => {
                                ShapeSite::ComputationParameter { computation, index: i, name }
                            }
                        };
                        Ok(Found::Shape(SitedShape { site, shape: decode_shape(bytes?)? }))
                    }));
                }
                ProgramPhase::Result => {
                    self.phase = ProgramPhase::Reports((self.programs)());
                    let site = match owner {
                        ProgramOwner::Host => ShapeSite::HostResult,
                        ProgramOwner::Computation(computation) => ShapeSite::ComputationResult { computation },
                    };
                    let results = within((self.programs)(), PROGRAM_RESULT, PROGRAM, self.level);
                    match merged(results, false) {
                        Ok(Some((shape, _))) => return Some(Ok(Found::Shape(SitedShape { site, shape }))),
                        Ok(None) => {}
                        Err(error) => return Some(Err(error)),
                    }
                }
                ProgramPhase::Reports(programs) => {
                    let Some(bytes) = programs.next() else {
                        self.phase = ProgramPhase::Done;
                        continue;
                    };
                    match bytes.and_then(codec::scan_lenient::<ProgramShapeProto>) {
                        Ok(report) if report.is_empty() => {}
                        Ok(report) => {
                            let site = match owner {
                                ProgramOwner::Host => ReportSite::HostProgramShape,
                                ProgramOwner::Computation(computation) => ReportSite::ProgramShape { computation },
                            };
                            return Some(Ok(Found::Report(ShapeWireReport { site, report })));
                        }
                        Err(error) => return Some(Err(error)),
                    }
                }
                ProgramPhase::Done => return None,
            }
        }
    }
}

/// Decodes one shape, refusing one beyond [`MAX_SHAPE_BYTES`].
fn decode_shape(bytes: &[u8]) -> Result<ShapeProto> {
    check_shape_size(bytes.len())?;
    codec::decode_with_prost(bytes)
}

fn check_shape_size(len: usize) -> Result<()> {
    if len > MAX_SHAPE_BYTES {
        return Err(Error::LimitExceeded {
            limit: Limit::HloShapeSize,
            value: u64::try_from(len).unwrap_or(u64::MAX),
            max: u64::try_from(MAX_SHAPE_BYTES).unwrap_or(u64::MAX),
        });
    }
    Ok(())
}

/// A singular shape field: its occurrences merged as prost merges them (in at most
/// [`MAX_SHAPE_BYTES`] all together), and with `reported`, the findings of each occurrence.
fn merged<'a>(
    occurrences: impl Iterator<Item = Result<&'a [u8]>>,
    reported: bool,
) -> Result<Option<(ShapeProto, WireReport)>> {
    let mut total = 0usize;
    let mut out: Option<(ShapeProto, WireReport)> = None;
    for bytes in occurrences {
        let bytes = bytes?;
        total = total.saturating_add(bytes.len());
        check_shape_size(total)?;
        let report = if reported { codec::scan_lenient::<ShapeProto>(bytes)? } else { WireReport::default() };
        match &mut out {
            None => out = Some((codec::decode_with_prost(bytes)?, report)),
            Some((shape, so_far)) => {
                codec::merge_with_prost(shape, bytes)?;
                so_far.absorb(report);
            }
        }
    }
    Ok(out)
}

/// One computation: its program shape, then its instructions one at a time.
struct ComputationWalk<'a> {
    name: &'a str,
    level: u32,
    program: Option<ProgramWalk<'a>>,
    instructions: Occurrences<'a>,
    instruction: Option<InstructionWalk<'a>>,
}

impl<'a> ComputationWalk<'a> {
    fn new(bytes: &'a [u8], level: u32) -> Result<Self> {
        let name = last_string(bytes, COMPUTATION_NAME, COMPUTATION, level)?;
        let programs: Programs<'a> =
            Box::new(move || Box::new(Occurrences::new(bytes, COMPUTATION_PROGRAM_SHAPE, COMPUTATION, level)));
        Ok(Self {
            name,
            level,
            program: Some(ProgramWalk::new(ProgramOwner::Computation(name), programs, level.saturating_add(1))),
            instructions: Occurrences::new(bytes, COMPUTATION_INSTRUCTIONS, COMPUTATION, level),
            instruction: None,
        })
    }

    fn next(&mut self) -> Option<Result<Found<'a>>> {
        if let Some(program) = &mut self.program {
            if let Some(item) = program.next() {
                return Some(item);
            }
            self.program = None;
        }
        loop {
            if let Some(instruction) = &mut self.instruction {
                if let Some(item) = instruction.next() {
                    return Some(item);
                }
                self.instruction = None;
            }
            let next = self.instructions.next()?;
            match next.and_then(|bytes| InstructionWalk::new(self.name, bytes, self.level.saturating_add(1))) {
                Ok(instruction) => self.instruction = Some(instruction),
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

enum InstructionPhase<'a> {
    Shape,
    Outfeed,
    Operands(Occurrences<'a>, usize),
    Done,
}

/// One instruction: `shape`, `outfeed_shape`, then each of `operand_shapes_with_layout`, each
/// followed by its report when there is one.
struct InstructionWalk<'a> {
    computation: &'a str,
    name: &'a str,
    opcode: &'a str,
    sharding: Option<&'a [u8]>,
    shardy: Option<&'a str>,
    bytes: &'a [u8],
    level: u32,
    phase: InstructionPhase<'a>,
    pending: Option<Found<'a>>,
}

impl<'a> InstructionWalk<'a> {
    fn new(computation: &'a str, bytes: &'a [u8], level: u32) -> Result<Self> {
        let (mut name, mut opcode, mut sharding, mut shardy) = ("", "", None, None);
        for field in Fields::new(bytes, level) {
            let field = field.map_err(|reason| decode_error(INSTRUCTION, reason))?;
            if field.number == INSTRUCTION_SHARDING {
                sharding = Some(payload(field.value, field.wire_type, field.number, INSTRUCTION)?);
                continue;
            }
            if field.number == INSTRUCTION_FRONTEND_ATTRIBUTES {
                let attributes = payload(field.value, field.wire_type, field.number, INSTRUCTION)?;
                frontend_value(attributes, SDY_SHARDING, level.saturating_add(1), &mut shardy)?;
                continue;
            }
            let text = match field.number {
                INSTRUCTION_NAME => &mut name,
                INSTRUCTION_OPCODE => &mut opcode,
                _ => continue,
            };
            *text = utf8(payload(field.value, field.wire_type, field.number, INSTRUCTION)?, INSTRUCTION, field.number)?;
        }
        Ok(Self {
            computation,
            name,
            opcode,
            sharding,
            shardy,
            bytes,
            level,
            phase: InstructionPhase::Shape,
            pending: None,
        })
    }

    fn occurrences(&self, number: u32) -> Occurrences<'a> {
        Occurrences::new(self.bytes, number, INSTRUCTION, self.level)
    }

    /// The shape and, for later, its report.
    fn found(&mut self, site: ShapeSite<'a>, (shape, report): (ShapeProto, WireReport)) -> Found<'a> {
        if !report.is_empty() {
            self.pending = Some(Found::Report(ShapeWireReport { site: ReportSite::Shape(site), report }));
        }
        Found::Shape(SitedShape { site, shape })
    }

    fn next(&mut self) -> Option<Result<Found<'a>>> {
        if let Some(pending) = self.pending.take() {
            return Some(Ok(pending));
        }
        let (computation, instruction) = (self.computation, self.name);
        loop {
            let (site, shape) = match &mut self.phase {
                InstructionPhase::Shape => {
                    self.phase = InstructionPhase::Outfeed;
                    let site = ShapeSite::Instruction {
                        computation,
                        instruction,
                        opcode: self.opcode,
                        sharding: self.sharding,
                        shardy: self.shardy,
                    };
                    (site, merged(self.occurrences(INSTRUCTION_SHAPE), true))
                }
                InstructionPhase::Outfeed => {
                    self.phase = InstructionPhase::Operands(self.occurrences(INSTRUCTION_OPERAND_SHAPES), 0);
                    let site = ShapeSite::OutfeedShape { computation, instruction };
                    (site, merged(self.occurrences(INSTRUCTION_OUTFEED_SHAPE), true))
                }
                InstructionPhase::Operands(operands, index) => {
                    let Some(bytes) = operands.next() else {
                        self.phase = InstructionPhase::Done;
                        continue;
                    };
                    let site = ShapeSite::OperandShape { computation, instruction, operand: *index };
                    *index = index.saturating_add(1);
                    (site, merged(iter::once(bytes), true))
                }
                InstructionPhase::Done => return None,
            };
            match shape {
                Ok(Some(shape)) => return Some(Ok(self.found(site, shape))),
                Ok(None) => {}
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Literals: the values of constants, and a snapshot's arguments and result.

const INSTRUCTION_LITERAL: u32 = 8;
const SNAPSHOT_HLO: u32 = 1;
const SNAPSHOT_ARGUMENTS: u32 = 2;
const SNAPSHOT_RESULT: u32 = 3;
const SNAPSHOT: &str = "HloSnapshot";

/// Where a literal sits in a module or snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralSite<'a> {
    /// The value of a `constant` instruction (`HloInstructionProto.literal`, field 8).
    Constant {
        /// The computation.
        computation: &'a str,
        /// The instruction.
        instruction: &'a str,
    },
    /// A recorded argument of a snapshot (`HloSnapshot.arguments[index]`, field 2).
    Argument {
        /// The argument number.
        index: usize,
    },
    /// The recorded result of a snapshot (`HloSnapshot.result`, field 3).
    Result,
}

impl fmt::Display for LiteralSite<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Constant { computation, instruction } => write!(f, "{computation}/{instruction}"),
            Self::Argument { index } => write!(f, "arguments[{index}]"),
            Self::Result => f.write_str("result"),
        }
    }
}

/// A literal found in serialized HLO: its site and its encoded `LiteralProto`, borrowed from the
/// input (decode it with [`codec::decode_lenient`] to get the message and what its bytes hold
/// beyond it, then validate it with [`crate::literal::Literal::try_new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SitedLiteral<'a> {
    /// Where the literal sits.
    pub site: LiteralSite<'a>,
    /// The encoded `LiteralProto`.
    pub bytes: &'a [u8],
}

/// The length-delimited fields `number` of `data` (a message of type `message`), in wire order.
fn payloads<'a>(data: &'a [u8], level: u32, number: u32, message: &'static str) -> Result<Vec<&'a [u8]>> {
    let mut out = Vec::new();
    for field in Fields::new(data, level) {
        let field = field.map_err(|reason| decode_error(message, reason))?;
        if field.number == number {
            match field.value {
                Value::Len(payload) => out.push(payload),
                Value::Skipped => {
                    return Err(decode_error(message, format!("field {number} is not length-delimited")));
                }
            }
        }
    }
    Ok(out)
}

/// The string field `number` (the last occurrence wins, as in prost), or `""`.
fn string_field<'a>(data: &'a [u8], level: u32, number: u32, message: &'static str) -> Result<&'a str> {
    let last = payloads(data, level, number, message)?.pop().unwrap_or_default();
    std::str::from_utf8(last).map_err(|_| decode_error(message, format!("field {number} is not valid UTF-8")))
}

/// Every literal of serialized HLO, in wire order: each constant's (`computation/instruction`),
/// then, for a snapshot, `arguments[i]` and `result`. Only the fields on the way are read; the
/// literals are returned as their bytes, so nothing is decoded or copied here.
///
/// ```
/// use xla_shape::hlo::{literals, HloMessage};
/// // HloSnapshot { result: LiteralProto { } }
/// let found = literals(&[0x1a, 0x00], HloMessage::Snapshot)?;
/// assert_eq!(found[0].site.to_string(), "result");
/// # Ok::<(), xla_shape::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Decode`] when the bytes on the way are not the given message.
pub fn literals(bytes: &[u8], message: HloMessage) -> Result<Vec<SitedLiteral<'_>>> {
    let mut out: Vec<SitedLiteral<'_>> = instruction_payloads(bytes, message, INSTRUCTION_LITERAL)?
        .into_iter()
        .map(|(computation, instruction, literal)| SitedLiteral {
            site: LiteralSite::Constant { computation, instruction },
            bytes: literal,
        })
        .collect();
    if message == HloMessage::Snapshot {
        for (index, argument) in payloads(bytes, 0, SNAPSHOT_ARGUMENTS, SNAPSHOT)?.into_iter().enumerate() {
            out.push(SitedLiteral { site: LiteralSite::Argument { index }, bytes: argument });
        }
        if let Some(result) = payloads(bytes, 0, SNAPSHOT_RESULT, SNAPSHOT)?.pop() {
            out.push(SitedLiteral { site: LiteralSite::Result, bytes: result });
        }
    }
    Ok(out)
}

/// The module inside the input (`HloModuleProto` itself, or the last one an `HloProto` or
/// `HloSnapshot` wraps).
fn module_bytes(bytes: &[u8], message: HloMessage) -> Result<Option<&[u8]>> {
    Ok(match message {
        HloMessage::Module => Some(bytes),
        HloMessage::Proto => payloads(bytes, 0, WRAPPED, "HloProto")?.pop(),
        HloMessage::Snapshot => match payloads(bytes, 0, SNAPSHOT_HLO, SNAPSHOT)?.pop() {
            Some(proto) => payloads(proto, 1, WRAPPED, "HloProto")?.pop(),
            None => None,
        },
    })
}

/// Field `number` of every instruction that has it (the last occurrence), with the instruction's
/// computation and name, in wire order.
fn instruction_payloads(bytes: &[u8], message: HloMessage, number: u32) -> Result<Vec<(&str, &str, &[u8])>> {
    let mut out = Vec::new();
    let Some(module) = module_bytes(bytes, message)? else { return Ok(out) };
    let level = message.wrapping();
    // One computation and one instruction at a time: memory grows with what is found only.
    for computation in Occurrences::new(module, MODULE_COMPUTATIONS, MODULE, level) {
        let computation = computation?;
        let name = string_field(computation, level.saturating_add(1), COMPUTATION_NAME, COMPUTATION)?;
        for instruction in Occurrences::new(computation, COMPUTATION_INSTRUCTIONS, COMPUTATION, level.saturating_add(1))
        {
            let instruction = instruction?;
            let at = level.saturating_add(2);
            if let Some(field) = payloads(instruction, at, number, INSTRUCTION)?.pop() {
                out.push((name, string_field(instruction, at, INSTRUCTION_NAME, INSTRUCTION)?, field));
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Shardings (`docs/hlo.md`, "Shardings"): `HloInstructionProto.sharding`, an `OpSharding`.

const INSTRUCTION_SHARDING: u32 = 40;

/// An instruction's sharding found in serialized HLO: where it sits and its encoded
/// `OpSharding`, borrowed from the input. ([`walk`] gives the same bytes with each instruction's
/// shape, in `ShapeSite::Instruction::sharding`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SitedSharding<'a> {
    /// The computation.
    pub computation: &'a str,
    /// The instruction.
    pub instruction: &'a str,
    /// The encoded `OpSharding` (`HloInstructionProto.sharding`, field 40).
    pub bytes: &'a [u8],
}

impl SitedSharding<'_> {
    /// The sharding: the bytes decoded strictly ([`codec::decode`]) and validated as XLA's
    /// `HloSharding::FromProto` ([`crate::sharding::HloSharding::from_proto`]).
    ///
    /// # Errors
    ///
    /// [`Error::Decode`], [`Error::UnknownField`] or [`Error::NonCanonical`] for the bytes,
    /// [`Error::Sharding`] for a sharding XLA refuses.
    pub fn sharding(&self) -> Result<crate::sharding::HloSharding> {
        let proto: crate::proto::OpSharding = codec::decode(self.bytes)?;
        crate::sharding::HloSharding::from_proto(&proto)
    }
}

/// Every instruction's sharding in serialized HLO, in wire order. Only the fields on the way are
/// read; the shardings are returned as their bytes.
///
/// ```
/// use xla_shape::hlo::{shardings, HloMessage};
/// // computations[0] { name: "c", instructions[0] { name: "p", sharding: {maximal device=3} } }
/// let module = [
///     0x1a, 0x10, 0x0a, 0x01, b'c', 0x12, 0x0b, 0x0a, 0x01, b'p', 0xc2, 0x02, 0x05, 0x08, 0x01,
///     0x22, 0x01, 0x03,
/// ];
/// let found = shardings(&module, HloMessage::Module)?;
/// assert_eq!((found[0].computation, found[0].instruction), ("c", "p"));
/// assert_eq!(found[0].sharding()?.to_string(), "{maximal device=3}");
/// # Ok::<(), xla_shape::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Decode`] when the bytes on the way are not the given message.
pub fn shardings(bytes: &[u8], message: HloMessage) -> Result<Vec<SitedSharding<'_>>> {
    Ok(instruction_payloads(bytes, message, INSTRUCTION_SHARDING)?
        .into_iter()
        .map(|(computation, instruction, bytes)| SitedSharding { computation, instruction, bytes })
        .collect())
}
