//! One entry of a module's listing: where a shape sits ([`Site`]), which kind of site it is
//! ([`EntryKind`]), the shape printed and validated ([`CheckedShape`]) and the shardings beside
//! it ([`Sharded`]), each refusal a typed [`AttributeError`].

use std::fmt;
use std::sync::Arc;

use crate::hlo::ShapeSite;
use crate::hlo::mlir::ValueAttributes;
use crate::proto::ShapeProto;
use crate::sharding::HloSharding;
use crate::{Error, Shape, ShapeBuf};

/// The kind of site an entry sits at, as `xla-shape hlo` counts them.
///
/// ```
/// use xla_shape::hlo::module::EntryKind;
/// assert_eq!(EntryKind::Instruction.name(), "instruction");
/// assert_eq!(EntryKind::ALL.len(), 7);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntryKind {
    /// A parameter or the result of the module's entry computation layout (a proto's
    /// `host_program_shape`, HLO text's `entry_computation_layout`).
    HostProgramShape,
    /// A parameter or the result of a computation's program shape.
    ComputationProgramShape,
    /// An instruction's shape (a StableHLO operation's result).
    Instruction,
    /// An instruction's `outfeed_shape`.
    OutfeedShape,
    /// One of an instruction's `operand_shapes_with_layout`.
    OperandShapesWithLayout,
    /// A StableHLO function's parameter.
    Parameter,
    /// A StableHLO function's result.
    Result,
}

impl EntryKind {
    /// Every kind, in the order the summary counts them.
    pub const ALL: [Self; 7] = [
        Self::HostProgramShape,
        Self::ComputationProgramShape,
        Self::Instruction,
        Self::OutfeedShape,
        Self::OperandShapesWithLayout,
        Self::Parameter,
        Self::Result,
    ];

    /// Its name in listings: `host_program_shape`, `instruction`, ….
    pub const fn name(self) -> &'static str {
        match self {
            Self::HostProgramShape => "host_program_shape",
            Self::ComputationProgramShape => "computation_program_shape",
            Self::Instruction => "instruction",
            Self::OutfeedShape => "outfeed_shape",
            Self::OperandShapesWithLayout => "operand_shapes_with_layout",
            Self::Parameter => "parameter",
            Self::Result => "result",
        }
    }

    /// Its position in [`ALL`](Self::ALL).
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for EntryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where an entry's shape sits. Computation and function names are shared between the entries
/// of one computation (an [`Arc`]), so a listing allocates little per entry.
///
/// ```
/// use std::sync::Arc;
/// use xla_shape::hlo::module::Site;
/// let site = Site::Instruction { computation: Arc::from("main"), instruction: "dot.1".into() };
/// assert_eq!(site.to_string(), "main / dot.1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Site {
    /// Parameter `index` of the entry computation layout, with its name (empty if none).
    HostParameter {
        /// The parameter number.
        index: usize,
        /// Its name.
        name: String,
    },
    /// The result of the entry computation layout.
    HostResult,
    /// Parameter `index` of a computation's program shape.
    ComputationParameter {
        /// The computation.
        computation: Arc<str>,
        /// The parameter number.
        index: usize,
        /// Its name.
        name: String,
    },
    /// The result of a computation's program shape.
    ComputationResult {
        /// The computation.
        computation: Arc<str>,
    },
    /// An instruction's shape.
    Instruction {
        /// The computation.
        computation: Arc<str>,
        /// The instruction.
        instruction: String,
    },
    /// An instruction's `outfeed_shape`.
    OutfeedShape {
        /// The computation.
        computation: Arc<str>,
        /// The instruction.
        instruction: String,
    },
    /// An instruction's operand shape with layout number `operand`.
    OperandShape {
        /// The computation.
        computation: Arc<str>,
        /// The instruction.
        instruction: String,
        /// The operand number.
        operand: usize,
    },
    /// Parameter `index` of a StableHLO function.
    FunctionParameter {
        /// The function.
        function: Arc<str>,
        /// The parameter number.
        index: usize,
        /// Its name as written (`%arg0`), or empty.
        name: String,
    },
    /// Result `index` of a StableHLO function.
    FunctionResult {
        /// The function.
        function: Arc<str>,
        /// The result number.
        index: usize,
    },
    /// A result of a StableHLO operation: `%0`, or `%0#1` for the second of `%0:2`.
    Operation {
        /// The function.
        function: Arc<str>,
        /// The result's name.
        result: String,
    },
}

impl Site {
    /// The kind of site.
    pub const fn kind(&self) -> EntryKind {
        match self {
            Self::HostParameter { .. } | Self::HostResult => EntryKind::HostProgramShape,
            Self::ComputationParameter { .. } | Self::ComputationResult { .. } => EntryKind::ComputationProgramShape,
            Self::Instruction { .. } | Self::Operation { .. } => EntryKind::Instruction,
            Self::OutfeedShape { .. } => EntryKind::OutfeedShape,
            Self::OperandShape { .. } => EntryKind::OperandShapesWithLayout,
            Self::FunctionParameter { .. } => EntryKind::Parameter,
            Self::FunctionResult { .. } => EntryKind::Result,
        }
    }

    /// The computation (or function) it belongs to; empty for the entry computation layout.
    pub fn computation(&self) -> &str {
        match self {
            Self::HostParameter { .. } | Self::HostResult => "",
            Self::ComputationParameter { computation, .. }
            | Self::ComputationResult { computation }
            | Self::Instruction { computation, .. }
            | Self::OutfeedShape { computation, .. }
            | Self::OperandShape { computation, .. } => computation,
            Self::FunctionParameter { function, .. }
            | Self::FunctionResult { function, .. }
            | Self::Operation { function, .. } => function,
        }
    }

    /// Writes it as [`Display`](fmt::Display) does, without formatting machinery for the common
    /// sites.
    pub fn push_to(&self, out: &mut String) {
        match self {
            Self::Instruction { computation, instruction } => {
                out.push_str(computation);
                out.push_str(" / ");
                out.push_str(instruction);
            }
            Self::Operation { function, result } => {
                out.push_str(function);
                out.push_str(" / ");
                out.push_str(result);
            }
            // Writing to a String cannot fail.
            other => {
                let _ = fmt::write(out, format_args!("{other}"));
            }
        }
    }
}

impl fmt::Display for Site {
    /// The sites of a proto or HLO text print as the walk's [`ShapeSite`] does (one rule for
    /// both); StableHLO's as `FUNCTION / parameter N`, `FUNCTION / result N`, `FUNCTION / %R`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let site = match self {
            Self::HostParameter { index, name } => ShapeSite::HostParameter { index: *index, name },
            Self::HostResult => ShapeSite::HostResult,
            Self::ComputationParameter { computation, index, name } => {
                ShapeSite::ComputationParameter { computation, index: *index, name }
            }
            Self::ComputationResult { computation } => ShapeSite::ComputationResult { computation },
            Self::Instruction { computation, instruction } => {
                ShapeSite::Instruction { computation, instruction, opcode: "", sharding: None, shardy: None }
            }
            Self::OutfeedShape { computation, instruction } => ShapeSite::OutfeedShape { computation, instruction },
            Self::OperandShape { computation, instruction, operand } => {
                ShapeSite::OperandShape { computation, instruction, operand: *operand }
            }
            Self::FunctionParameter { function, index, .. } => return write!(f, "{function} / parameter {index}"),
            Self::FunctionResult { function, index } => return write!(f, "{function} / result {index}"),
            Self::Operation { function, result } => return write!(f, "{function} / {result}"),
        };
        fmt::Display::fmt(&site, f)
    }
}

/// A shape as the listing shows it: XLA's text of the raw proto, and the shape validated as XLA
/// loads modules (`ValidateShapeWithOptionalLayout`), or why it is refused. A module repeats a
/// few shapes over many sites; the reader prints and validates each distinct text once and
/// shares the result ([`Entry::shape`] is an [`Arc`]).
///
/// ```
/// use xla_shape::hlo::module::CheckedShape;
/// let shape = CheckedShape::new(&xla_shape::text::parse_shape_raw("f32[2]{1}")?);
/// assert_eq!(shape.text(), "f32[2]{1}");
/// assert!(shape.shape().is_err());
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedShape {
    text: Box<str>,
    proto: ShapeProto,
    error: Option<Error>,
}

impl CheckedShape {
    /// Prints and validates `proto`.
    pub fn new(proto: &ShapeProto) -> Self {
        let error = Shape::try_new_optional_layout(proto).err();
        Self { text: proto.to_string().into_boxed_str(), proto: proto.clone(), error }
    }

    /// XLA's text of the shape (printed from the proto, valid or not).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The validated shape, or why XLA refuses it.
    ///
    /// # Errors
    ///
    /// The validation error of the shape, as [`Shape::try_new_optional_layout`] gives it.
    pub fn shape(&self) -> Result<Shape<'_>, &Error> {
        match &self.error {
            None => Ok(Shape::new_unchecked(&self.proto)),
            Some(error) => Err(error),
        }
    }

    /// The validated shape, owned.
    ///
    /// # Errors
    ///
    /// As [`shape`](Self::shape).
    pub fn to_shape_buf(&self) -> Result<ShapeBuf, Error> {
        match &self.error {
            None => Ok(ShapeBuf::from_validated(self.proto.clone())),
            Some(error) => Err(error.clone()),
        }
    }

    /// The shape as the module holds it, valid or not.
    pub fn proto(&self) -> &ShapeProto {
        &self.proto
    }

    /// Why XLA refuses the shape, if it does.
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }

    /// Whether the shape is valid.
    pub fn is_valid(&self) -> bool {
        self.error.is_none()
    }
}

/// The attribute a sharding was read from, when its refusal names it (`docs/hlo.md`,
/// "Module listing").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attribute {
    /// The instruction's own sharding (an `OpSharding`, or `sharding={…}` in HLO text) or its
    /// Shardy sharding converted: the error alone.
    Own,
    /// An HLO text instruction's `frontend_attributes={…}`, which holds its Shardy sharding.
    FrontendAttributes,
    /// The module's `xla.sdy.meshes` frontend attribute.
    SdyMeshes,
    /// A StableHLO module's `sdy.mesh @NAME` declaration.
    SdyMesh(Box<str>),
    /// A StableHLO argument's or result's `sdy.sharding`.
    SdySharding,
    /// A StableHLO argument's or result's `mhlo.sharding`.
    MhloSharding,
}

/// A sharding refused: the crate's [`Error`], and the attribute it came from.
///
/// ```
/// use xla_shape::hlo::module::{Attribute, AttributeError};
/// let error = xla_shape::sharding::parse("{devices=[2]0}").unwrap_err();
/// let refused = AttributeError { attribute: Attribute::MhloSharding, error };
/// assert!(refused.to_string().starts_with("mhlo.sharding: "));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeError {
    /// Where the refused text sits.
    pub attribute: Attribute,
    /// Why it is refused.
    pub error: Error,
}

impl fmt::Display for AttributeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.attribute {
            Attribute::Own => Ok(()),
            Attribute::FrontendAttributes => f.write_str("frontend_attributes: "),
            Attribute::SdyMeshes => write!(f, "{}: ", crate::hlo::SDY_MESHES),
            Attribute::SdyMesh(name) => write!(f, "sdy.mesh @{name}: "),
            Attribute::SdySharding => f.write_str("sdy.sharding: "),
            Attribute::MhloSharding => f.write_str("mhlo.sharding: "),
        }?;
        self.error.fmt(f)
    }
}

impl std::error::Error for AttributeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// A sharding, or why it is refused.
pub type ShardingResult = Result<HloSharding, AttributeError>;

/// An instruction's Shardy sharding (`xla.sdy.sharding`) converted to the `HloSharding` XLA's
/// Shardy export writes (`docs/shardy.md`), and whether it disagrees with the instruction's
/// own sharding (`None` unless both are read).
#[derive(Debug, Clone, PartialEq)]
pub struct Shardy {
    /// The converted sharding, or why the attribute (or the module's meshes) is refused.
    pub converted: ShardingResult,
    /// Whether the two print differently; `None` when either is absent or refused.
    pub disagrees: Option<bool>,
}

/// One shape of a module with its site and what the module says beside it.
///
/// ```
/// use xla_shape::hlo::module::{EntryKind, Module};
/// let module = Module::from_bytes(b"HloModule m\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n".to_vec());
/// let entries = module.entries()?.collect::<Result<Vec<_>, _>>()?;
/// let instruction = entries.iter().find(|e| e.kind() == EntryKind::Instruction).unwrap();
/// assert_eq!((instruction.site.to_string(), instruction.shape.text()), ("e / p".to_owned(), "f32[2]{0}"));
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Where the shape sits.
    pub site: Site,
    /// The shape, printed and validated (shared between the sites of equal text).
    pub shape: Arc<CheckedShape>,
    /// The instruction's sharding (or a StableHLO argument's or result's), if it has one.
    pub sharding: Option<Box<ShardingResult>>,
    /// The instruction's Shardy sharding, if it has one.
    pub shardy: Option<Box<Shardy>>,
    /// A StableHLO argument's or result's attributes (none elsewhere).
    pub attributes: Option<Box<ValueAttributes>>,
    /// Whether it belongs to the module's entry computation layout: a host program shape's
    /// site, or a parameter or result of a StableHLO module's entry function.
    pub in_entry_layout: bool,
}

impl Entry {
    /// The kind of its site.
    pub const fn kind(&self) -> EntryKind {
        self.site.kind()
    }

    /// Its site's `ShapeProto`-free text (see [`Site`]'s `Display`).
    pub fn site_text(&self) -> String {
        let mut out = String::new();
        self.site.push_to(&mut out);
        out
    }
}
