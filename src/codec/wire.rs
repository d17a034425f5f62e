//! The wire scanner: one pass over the protobuf bytes of a message that both decodes it (into a
//! [`Target`]) and reports what prost would drop or normalize.
//!
//! prost drops unknown fields and normalizes non-canonical encodings without a word. The scanner
//! knows the field tables of the six messages of the schema (spec `schema.md` §3, and
//! `LiteralProto`), recurses into
//! the known sub-messages, and reports every byte that re-encoding would not reproduce:
//!
//! * unknown fields (including `ShapeProto` field 1, the reserved `rank`), with their path;
//! * non-canonical encodings ([`NonCanonicalKind`]), at most once per field and kind in each
//!   message instance.
//!
//! It accepts exactly the inputs prost accepts (the same varint, key, wire-type, length, group and
//! recursion rules), so a [`Error::Decode`] from here is one prost would give too, but with a
//! field path. It is bounded: nesting stops at prost's [`RECURSION_LIMIT`], it never allocates
//! from a claimed length, it never indexes unchecked, it reads every byte once, and a valid
//! canonical input costs no allocation at all.

use crate::error::{Error, FieldPath, NonCanonicalKind, Result, WireType};
use crate::validate::Path;

use super::target::Target;
use super::{NonCanonical, UnknownField, WireReport};

/// prost's (and C++ protobuf's) limit on nested messages, counted below the root message.
pub const RECURSION_LIMIT: u32 = 100;

/// The most entries each list of a [`WireReport`] holds; further findings are only counted.
pub const MAX_REPORTED: usize = 1024;

/// The six messages of the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// `xla.LiteralProto`.
    Literal,
    /// `xla.ShapeProto`.
    Shape,
    /// `xla.LayoutProto`.
    Layout,
    /// `xla.ProgramShapeProto`.
    ProgramShape,
    /// `xla.TileProto`.
    Tile,
    /// `xla.SplitConfigProto`.
    SplitConfig,
    /// `xla.OpSharding`.
    OpSharding,
    /// `xla.OpMetadata`.
    OpMetadata,
    /// `xla.OpMetadata.ProfileInfo`.
    ProfileInfo,
    /// `xla.NamedShardingProto`.
    NamedSharding,
    /// `xla.NamedShardingProto.DimensionSharding`.
    DimensionSharding,
    /// `xla.MeshProto`.
    Mesh,
    /// `xla.MeshProto.MeshAxis`.
    MeshAxis,
    /// `xla.MeshProto.IotaTransform`.
    IotaTransform,
    /// `xla.AxisRefProto`.
    AxisRef,
    /// `xla.AxisRefProto.SubAxis`.
    SubAxis,
}

impl MessageKind {
    /// The message name without the package.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Shape => "ShapeProto",
            Self::Layout => "LayoutProto",
            Self::ProgramShape => "ProgramShapeProto",
            Self::Tile => "TileProto",
            Self::SplitConfig => "SplitConfigProto",
            Self::Literal => "LiteralProto",
            Self::OpSharding => "OpSharding",
            Self::OpMetadata => "OpMetadata",
            Self::ProfileInfo => "OpMetadata.ProfileInfo",
            Self::NamedSharding => "NamedShardingProto",
            Self::DimensionSharding => "NamedShardingProto.DimensionSharding",
            Self::Mesh => "MeshProto",
            Self::MeshAxis => "MeshProto.MeshAxis",
            Self::IotaTransform => "MeshProto.IotaTransform",
            Self::AxisRef => "AxisRefProto",
            Self::SubAxis => "AxisRefProto.SubAxis",
        }
    }

    /// The lowest field number and the fields from there on, one per number.
    fn table(self) -> (u32, &'static [Field]) {
        match self {
            Self::Shape => (2, SHAPE),
            Self::Layout => (1, LAYOUT),
            Self::ProgramShape => (1, PROGRAM_SHAPE),
            Self::Tile => (1, TILE),
            Self::SplitConfig => (1, SPLIT_CONFIG),
            Self::Literal => (1, LITERAL),
            Self::OpSharding => (1, OP_SHARDING),
            Self::OpMetadata => (1, OP_METADATA),
            Self::ProfileInfo => (1, PROFILE_INFO),
            Self::NamedSharding => (1, NAMED_SHARDING),
            Self::DimensionSharding => (1, DIMENSION_SHARDING),
            Self::Mesh => (1, MESH),
            Self::MeshAxis => (1, MESH_AXIS),
            Self::IotaTransform => (1, IOTA_TRANSFORM),
            Self::AxisRef => (1, AXIS_REF),
            Self::SubAxis => (1, SUB_AXIS),
        }
    }

    fn field(self, number: u32) -> Option<Field> {
        let (first, fields) = self.table();
        let index = usize::try_from(number.checked_sub(first)?).ok()?;
        fields.get(index).copied().filter(|f| f.ty != Type::Reserved)
    }
}

/// How a scalar's varint becomes its value (and back), which decides what is canonical.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scalar {
    /// `int64`: any 64-bit value.
    Int64,
    /// An enum (`int32` on the wire): the value sign-extended from 32 bits.
    Enum,
    /// `bool`: 0 or 1.
    Bool,
    /// `int32`: read as the low 32 bits, written sign-extended (as an enum).
    Int32,
    /// `uint32`: read as the low 32 bits, written zero-extended.
    UInt32,
    /// `uint64`: any 64-bit value.
    UInt64,
}

impl Scalar {
    /// Whether prost reads the varint `v` back as `v` (an enum is read as `v as i32` and written
    /// sign-extended to 64 bits, a bool as `v != 0`), and whether that value is the default.
    #[inline]
    fn read_back(self, v: u64) -> (bool, bool) {
        match self {
            Scalar::Int64 | Scalar::UInt64 => (true, v == 0),
            Scalar::UInt32 => (v <= 0xffff_ffff, v == 0),
            Scalar::Enum | Scalar::Int32 => (v <= 0x7fff_ffff || v >= 0xffff_ffff_8000_0000, v.trailing_zeros() >= 32),
            Scalar::Bool => (v <= 1, v == 0),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Type {
    Scalar(Scalar),
    /// `float` (four bytes) or `double` (eight): packed when repeated; any bit pattern reads back.
    Fixed(FixedWidth),
    Message(MessageKind),
    String,
    /// `bytes`: any content.
    Bytes,
    /// A number upstream reserves (a hole in a table): never a known field.
    Reserved,
}

/// The width of a fixed-size scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FixedWidth {
    /// `float` (`fixed32` wire type).
    Four,
    /// `double` (`fixed64` wire type).
    Eight,
}

impl FixedWidth {
    const fn bytes(self) -> usize {
        match self {
            Self::Four => 4,
            Self::Eight => 8,
        }
    }

    const fn wire_type(self) -> WireType {
        match self {
            Self::Four => WireType::Fixed32,
            Self::Eight => WireType::Fixed64,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Field {
    name: &'static str,
    ty: Type,
    repeated: bool,
}

const fn singular(name: &'static str, ty: Type) -> Field {
    Field { name, ty, repeated: false }
}

const fn repeated(name: &'static str, ty: Type) -> Field {
    Field { name, ty, repeated: true }
}

const INT64: Type = Type::Scalar(Scalar::Int64);
const ENUM: Type = Type::Scalar(Scalar::Enum);
const BOOL: Type = Type::Scalar(Scalar::Bool);
const INT32: Type = Type::Scalar(Scalar::Int32);
const UINT32: Type = Type::Scalar(Scalar::UInt32);
const UINT64: Type = Type::Scalar(Scalar::UInt64);
const FLOAT: Type = Type::Fixed(FixedWidth::Four);
const DOUBLE: Type = Type::Fixed(FixedWidth::Eight);
const BYTES: Type = Type::Bytes;

/// Fields 2–6 (field 1 is the reserved `rank`, so unknown).
const SHAPE: &[Field] = &[
    singular("element_type", ENUM),
    repeated("dimensions", INT64),
    repeated("tuple_shapes", Type::Message(MessageKind::Shape)),
    singular("layout", Type::Message(MessageKind::Layout)),
    repeated("is_dynamic_dimension", BOOL),
];

/// Fields 1–17, including the legacy 2–5.
const LAYOUT: &[Field] = &[
    repeated("minor_to_major", INT64),
    repeated("padded_dimensions", INT64),
    singular("padding_value", ENUM),
    singular("format", ENUM),
    singular("max_sparse_elements", INT64),
    repeated("tiles", Type::Message(MessageKind::Tile)),
    singular("element_size_in_bits", INT64),
    singular("memory_space", INT64),
    repeated("dim_level_types", ENUM),
    singular("physical_shape", Type::Message(MessageKind::Shape)),
    singular("index_primitive_type", ENUM),
    singular("pointer_primitive_type", ENUM),
    repeated("dim_unique", BOOL),
    repeated("dim_ordered", BOOL),
    singular("dynamic_shape_metadata_prefix_bytes", INT64),
    singular("tail_padding_alignment_in_elements", INT64),
    repeated("split_configs", Type::Message(MessageKind::SplitConfig)),
];

const PROGRAM_SHAPE: &[Field] = &[
    repeated("parameters", Type::Message(MessageKind::Shape)),
    singular("result", Type::Message(MessageKind::Shape)),
    repeated("parameter_names", Type::String),
];

const TILE: &[Field] = &[repeated("dimensions", INT64)];

const SPLIT_CONFIG: &[Field] = &[singular("dimension", INT64), repeated("split_indices", INT64)];

/// Fields 1–36 of `LiteralProto`, by number (numbers are upstream's, not declaration order).
const LITERAL: &[Field] = &[
    singular("shape", Type::Message(MessageKind::Shape)),
    repeated("preds", BOOL),
    singular("u8s", BYTES),
    repeated("s32s", INT32),
    repeated("s64s", INT64),
    repeated("u32s", UINT32),
    repeated("u64s", UINT64),
    repeated("f32s", FLOAT),
    repeated("f64s", DOUBLE),
    repeated("tuple_literals", Type::Message(MessageKind::Literal)),
    singular("f16s", BYTES),
    repeated("c64s", FLOAT),
    singular("bf16s", BYTES),
    repeated("sparse_indices", INT64),
    singular("s8s", BYTES),
    singular("u16s", BYTES),
    singular("s16s", BYTES),
    repeated("c128s", DOUBLE),
    singular("f8e5m2s", BYTES),
    singular("f8e4m3fns", BYTES),
    singular("s4s", BYTES),
    singular("u4s", BYTES),
    singular("f8e4m3b11fnuzs", BYTES),
    singular("f8e5m2fnuzs", BYTES),
    singular("f8e4m3fnuzs", BYTES),
    singular("s2s", BYTES),
    singular("u2s", BYTES),
    singular("f8e4m3s", BYTES),
    singular("f8e3m4s", BYTES),
    singular("s1s", BYTES),
    singular("u1s", BYTES),
    singular("f4e2m1fns", BYTES),
    singular("f8e8m0fnus", BYTES),
    repeated("dynamic_sizes", INT32),
    singular("f6e3m2fns", BYTES),
    singular("f6e2m3fns", BYTES),
];

const STRING: Type = Type::String;

/// Fields 1–14 of `OpSharding` (`docs/sharding.md` §4).
const OP_SHARDING: &[Field] = &[
    singular("type", ENUM),
    singular("tile_shape", Type::Message(MessageKind::Shape)),
    repeated("tile_assignment_dimensions", INT64),
    repeated("tile_assignment_devices", INT64),
    repeated("tuple_shardings", Type::Message(MessageKind::OpSharding)),
    singular("replicate_on_last_tile_dim", BOOL),
    repeated("metadata", Type::Message(MessageKind::OpMetadata)),
    repeated("last_tile_dims", ENUM),
    repeated("iota_reshape_dims", INT64),
    repeated("iota_transpose_perm", INT32),
    singular("is_shard_group", BOOL),
    singular("shard_group_id", INT64),
    singular("shard_group_type", ENUM),
    singular("named_sharding", Type::Message(MessageKind::NamedSharding)),
];

/// A number upstream reserves: unknown here.
const RESERVED: Field = Field { name: "", ty: Type::Reserved, repeated: false };

/// Fields 1–19 of `OpMetadata`; 6, 7, 11, 13 and 14 are reserved upstream.
const OP_METADATA: &[Field] = &[
    singular("op_type", STRING),
    singular("op_name", STRING),
    singular("source_file", STRING),
    singular("source_line", INT32),
    repeated("profile_type", ENUM),
    RESERVED,
    RESERVED,
    singular("size_of_generated_code_in_bytes", INT64),
    singular("size_of_memory_working_set_in_bytes", INT64),
    singular("profile_info", Type::Message(MessageKind::ProfileInfo)),
    RESERVED,
    singular("deduplicated_name", STRING),
    RESERVED,
    RESERVED,
    singular("stack_frame_id", INT32),
    singular("scheduling_name", STRING),
    singular("source_end_line", INT32),
    singular("source_column", INT32),
    singular("source_end_column", INT32),
];

const PROFILE_INFO: &[Field] = &[
    repeated("profile_type", ENUM),
    singular("relative_speedup", DOUBLE),
    singular("profile_source", ENUM),
    singular("compilation_event", ENUM),
    singular("profile_generation_strategy", ENUM),
];

const NAMED_SHARDING: &[Field] = &[
    repeated("tuple_shardings", Type::Message(MessageKind::NamedSharding)),
    singular("mesh", Type::Message(MessageKind::Mesh)),
    repeated("dim_shardings", Type::Message(MessageKind::DimensionSharding)),
    repeated("replicated_axes", Type::Message(MessageKind::AxisRef)),
    repeated("unreduced_axes", Type::Message(MessageKind::AxisRef)),
    repeated("metadata", Type::Message(MessageKind::OpMetadata)),
    repeated("manual_axes", Type::Message(MessageKind::AxisRef)),
];

const DIMENSION_SHARDING: &[Field] =
    &[repeated("axes", Type::Message(MessageKind::AxisRef)), singular("is_closed", BOOL)];

const MESH: &[Field] = &[
    repeated("axes", Type::Message(MessageKind::MeshAxis)),
    repeated("device_ids", INT64),
    singular("iota_transform", Type::Message(MessageKind::IotaTransform)),
];

const IOTA_TRANSFORM: &[Field] = &[repeated("reshape_dims", INT64), repeated("transpose_perm", INT64)];

const MESH_AXIS: &[Field] = &[singular("name", STRING), singular("size", INT64)];

const AXIS_REF: &[Field] =
    &[singular("mesh_axis_index", INT64), singular("sub_axis_info", Type::Message(MessageKind::SubAxis))];

const SUB_AXIS: &[Field] = &[singular("pre_size", INT64), singular("size", INT64)];

/// One more than the highest known field number (36, `LiteralProto.f6e2m3fns`).
const FIELD_SLOTS: usize = 37;

/// A decoded varint and whether it used more bytes than its value needs.
#[derive(Debug, Clone, Copy)]
struct Varint {
    value: u64,
    overlong: bool,
}

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy)]
enum VarintError {
    /// The input ends inside it.
    Truncated,
    /// More than 10 bytes, or a 10th byte above 1 (the value would exceed 64 bits).
    Overflow,
}

/// Reads a varint at `*pos` with prost's rules (at most 10 bytes, the 10th at most 1).
#[inline]
fn read_varint(data: &[u8], pos: &mut usize) -> Result<Varint, VarintError> {
    let rest = data.get(*pos..).unwrap_or_default();
    match rest.first() {
        Some(&byte) if byte < 0x80 => {
            // `pos` is below `data.len()` (a byte was read there), so this cannot saturate.
            *pos = pos.saturating_add(1);
            Ok(Varint { value: u64::from(byte), overlong: false })
        }
        Some(_) => read_varint_long(rest, pos),
        None => Err(VarintError::Truncated),
    }
}

fn read_varint_long(rest: &[u8], pos: &mut usize) -> Result<Varint, VarintError> {
    let mut value = 0u64;
    for (i, &byte) in rest.iter().take(10).enumerate() {
        // `take(10)` bounds `i` by 9, so the shift is at most 63.
        #[allow(clippy::arithmetic_side_effects)]
        let shift = 7 * i;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            if i == 9 && byte > 1 {
                return Err(VarintError::Overflow);
            }
            // `i + 1 ≤ 10` bytes were read past `pos`, inside `data`: this cannot saturate.
            *pos = pos.saturating_add(i).saturating_add(1);
            // The last byte holds the highest seven bits; zero there means a shorter form exists.
            return Ok(Varint { value, overlong: byte == 0 });
        }
    }
    Err(if rest.len() < 10 { VarintError::Truncated } else { VarintError::Overflow })
}

/// The next `len` bytes at `*pos`, or `None` if fewer remain.
fn take<'d>(data: &'d [u8], pos: &mut usize, len: u64) -> Option<&'d [u8]> {
    let end = pos.checked_add(usize::try_from(len).ok()?)?;
    let bytes = data.get(*pos..end)?;
    *pos = end;
    Some(bytes)
}

/// Where the scanner is inside one message instance.
struct Frame {
    /// The previous known field number (0 before the first).
    last: u32,
    /// The highest known field number so far.
    max: u32,
    /// Bit `n` set: field `n` has appeared.
    seen: u64,
    /// Elements (repeated fields) read so far, by field number: the index of the next one.
    counts: [usize; FIELD_SLOTS],
    /// Bit `k` of entry `n`: field `n` already reported non-canonical kind `k`.
    reported: [u16; FIELD_SLOTS],
}

impl Frame {
    fn new() -> Self {
        Self { last: 0, max: 0, seen: 0, counts: [0; FIELD_SLOTS], reported: [0; FIELD_SLOTS] }
    }

    /// The index of the next element of field `number`, counting it.
    fn next_index(&mut self, number: u32) -> usize {
        let index = self.count(number);
        self.set_count(number, index.saturating_add(1));
        index
    }

    /// Elements of field `number` read so far.
    fn count(&self, number: u32) -> usize {
        self.counts.get(slot(number)).copied().unwrap_or(0)
    }

    fn set_count(&mut self, number: u32, count: usize) {
        if let Some(slot) = self.counts.get_mut(slot(number)) {
            *slot = count;
        }
    }

    /// Marks `kind` as reported for field `number`; whether it was new.
    fn first_report(&mut self, number: u32, kind: NonCanonicalKind) -> bool {
        let bit = 1u16 << kind_bit(kind);
        match self.reported.get_mut(slot(number)) {
            Some(reported) if *reported & bit == 0 => {
                *reported |= bit;
                true
            }
            _ => false,
        }
    }
}

fn slot(number: u32) -> usize {
    usize::try_from(number).unwrap_or(usize::MAX)
}

fn kind_bit(kind: NonCanonicalKind) -> u32 {
    match kind {
        NonCanonicalKind::Unpacked => 0,
        NonCanonicalKind::ExplicitDefault => 1,
        NonCanonicalKind::OverlongVarint => 2,
        NonCanonicalKind::OutOfOrder => 3,
        NonCanonicalKind::Repeated => 4,
        NonCanonicalKind::EmptyPacked => 5,
        NonCanonicalKind::Split => 6,
        NonCanonicalKind::ValueOutOfRange => 7,
    }
}

/// Where a finding goes: strict mode keeps only the first, lenient mode all (up to
/// [`MAX_REPORTED`] each).
enum Sink {
    First(Option<Error>),
    All(WireReport),
}

/// Scans `data` as an encoded `root` message.
///
/// # Errors
///
/// [`Error::Decode`] for bytes prost would reject. In strict mode, otherwise the first finding
/// as [`Error::UnknownField`] or [`Error::NonCanonical`].
pub fn scan(root: MessageKind, data: &[u8], strict: bool) -> Result<WireReport> {
    scan_into(root, Target::None, data, strict)
}

/// [`scan`], storing every known field into `target` as prost would decode it: one loop over
/// the wire both decodes and reports.
///
/// # Errors
///
/// As [`scan`].
pub fn scan_into(root: MessageKind, target: Target<'_>, data: &[u8], strict: bool) -> Result<WireReport> {
    let mut scanner = Scanner { root, sink: if strict { Sink::First(None) } else { Sink::All(WireReport::default()) } };
    scanner.message(root, target, data, Path::Root, 0)?;
    match scanner.sink {
        Sink::First(Some(finding)) => Err(finding),
        Sink::First(None) => Ok(WireReport::default()),
        Sink::All(report) => Ok(report),
    }
}

struct Scanner {
    root: MessageKind,
    sink: Sink,
}

impl Scanner {
    /// Strict mode after its first finding: only validity matters from here on.
    fn done_reporting(&self) -> bool {
        matches!(self.sink, Sink::First(Some(_)))
    }

    // Findings are the exception: kept out of line so that the canonical path stays small.
    #[cold]
    #[inline(never)]
    fn unknown(&mut self, path: Path<'_>, field_number: u32, wire_type: WireType) {
        if self.done_reporting() {
            return;
        }
        let finding = UnknownField { path: path.to_field_path(), field_number, wire_type };
        match &mut self.sink {
            Sink::First(first) => *first = Some(finding.into()),
            Sink::All(report) if report.unknown_fields.len() < MAX_REPORTED => report.unknown_fields.push(finding),
            Sink::All(report) => report.omitted_unknown_fields = report.omitted_unknown_fields.saturating_add(1),
        }
    }

    /// Reports `kind` for field `number` unless this message instance already did.
    #[cold]
    #[inline(never)]
    fn non_canonical(
        &mut self,
        frame: &mut Frame,
        number: u32,
        kind: NonCanonicalKind,
        path: impl FnOnce() -> FieldPath,
    ) {
        if self.done_reporting() || !frame.first_report(number, kind) {
            return;
        }
        match &mut self.sink {
            Sink::First(first) => {
                *first = Some(NonCanonical { path: path(), field_number: number, kind }.into());
            }
            Sink::All(report) if report.non_canonical.len() < MAX_REPORTED => {
                report.non_canonical.push(NonCanonical { path: path(), field_number: number, kind });
            }
            Sink::All(report) => report.omitted_non_canonical = report.omitted_non_canonical.saturating_add(1),
        }
    }

    #[cold]
    fn malformed(&self, path: Path<'_>, what: &str) -> Error {
        Error::decode(self.root.name(), format!("{what} at {}", path.to_field_path()))
    }

    #[cold]
    fn recursion_limit(&self) -> Error {
        // No path: it would repeat a field name a hundred times.
        Error::decode(self.root.name(), format!("recursion limit reached: more than {RECURSION_LIMIT} nested messages"))
    }

    #[cold]
    fn bad_varint(&self, error: VarintError, what: &str, path: Path<'_>) -> Error {
        match error {
            VarintError::Truncated => self.malformed(path, &format!("truncated varint in {what}")),
            VarintError::Overflow => self.malformed(path, &format!("varint in {what} exceeds 64 bits")),
        }
    }

    #[inline]
    fn varint(&self, data: &[u8], pos: &mut usize, what: &str, path: Path<'_>) -> Result<Varint> {
        read_varint(data, pos).map_err(|e| self.bad_varint(e, what, path))
    }

    /// A field key: field number and wire type, with prost's checks.
    #[inline]
    fn key(&self, data: &[u8], pos: &mut usize, path: Path<'_>) -> Result<(u32, WireType, bool)> {
        let key = self.varint(data, pos, "a field key", path)?;
        let Ok(raw) = u32::try_from(key.value) else {
            return Err(self.malformed(path, &format!("field key {} exceeds 32 bits", key.value)));
        };
        let wire_type = WireType::from_raw((raw & 7) as u8);
        if let WireType::Invalid(value) = wire_type {
            return Err(self.malformed(path, &format!("invalid wire type {value} (field {})", raw >> 3)));
        }
        if raw >> 3 == 0 {
            return Err(self.malformed(path, "invalid field number 0"));
        }
        Ok((raw >> 3, wire_type, key.overlong))
    }

    /// The payload of a length-delimited field, with its length prefix checked.
    #[inline]
    fn payload<'d>(
        &mut self,
        data: &'d [u8],
        pos: &mut usize,
        path: Path<'_>,
        on_overlong: impl FnOnce(&mut Self),
    ) -> Result<&'d [u8]> {
        let len = self.varint(data, pos, "a length", path)?;
        if len.overlong {
            on_overlong(self);
        }
        let remaining = data.len().saturating_sub(*pos);
        take(data, pos, len.value).ok_or_else(|| {
            self.malformed(path, &format!("length {} exceeds the {remaining} remaining bytes", len.value))
        })
    }

    fn message(
        &mut self,
        kind: MessageKind,
        mut target: Target<'_>,
        data: &[u8],
        path: Path<'_>,
        depth: u32,
    ) -> Result<()> {
        let mut frame = Frame::new();
        let mut pos = 0;
        while pos < data.len() {
            let (number, wire_type, overlong_key) = self.key(data, &mut pos, path)?;
            let Some(field) = kind.field(number) else {
                self.unknown(path, number, wire_type);
                self.skip(data, &mut pos, number, wire_type, path, depth)?;
                continue;
            };
            let field_path = path.field(field.name);
            if overlong_key {
                self.non_canonical(&mut frame, number, NonCanonicalKind::OverlongVarint, || field_path.to_field_path());
            }
            self.placement(&mut frame, number, field, wire_type, field_path);
            match (field.ty, wire_type) {
                (Type::Scalar(scalar), WireType::Varint) => {
                    let value = self.varint(data, &mut pos, field.name, path)?;
                    if field.repeated {
                        self.non_canonical(&mut frame, number, NonCanonicalKind::Unpacked, || {
                            field_path.to_field_path()
                        });
                    }
                    let index = field.repeated.then(|| frame.next_index(number));
                    self.scalar(&mut frame, number, field, scalar, value, index, path);
                    target.scalar(number, value.value);
                }
                (Type::Scalar(scalar), WireType::Len) if field.repeated => {
                    let packed = self.payload(data, &mut pos, field_path, |s| {
                        s.non_canonical(&mut frame, number, NonCanonicalKind::OverlongVarint, || {
                            field_path.to_field_path()
                        });
                    })?;
                    if packed.is_empty() {
                        self.non_canonical(&mut frame, number, NonCanonicalKind::EmptyPacked, || {
                            field_path.to_field_path()
                        });
                    }
                    // The list is looked up once per record; every value ends in one byte below
                    // 0x80, so that many values at most are reserved.
                    let mut list = target.repeated(number);
                    list.reserve(packed.iter().filter(|&&b| b < 0x80).count());
                    let (mut at, mut index) = (0, frame.count(number));
                    while at < packed.len() {
                        let value = read_varint(packed, &mut at)
                            .map_err(|_| self.malformed(field_path, "packed field ends inside a varint"))?;
                        self.scalar(&mut frame, number, field, scalar, value, Some(index), path);
                        list.push(value.value);
                        index = index.saturating_add(1);
                    }
                    frame.set_count(number, index);
                }
                (Type::Message(inner), WireType::Len) => {
                    let index = field.repeated.then(|| frame.next_index(number));
                    let element_path = match index {
                        Some(i) => path.index(field.name, i),
                        None => field_path,
                    };
                    if depth >= RECURSION_LIMIT {
                        return Err(self.recursion_limit());
                    }
                    let body = self.payload(data, &mut pos, element_path, |s| {
                        s.non_canonical(&mut frame, number, NonCanonicalKind::OverlongVarint, || {
                            element_path.to_field_path()
                        });
                    })?;
                    self.message(inner, target.child(number), body, element_path, depth.saturating_add(1))?;
                }
                (Type::Fixed(width), wire) if wire == width.wire_type() => {
                    self.fixed(&mut frame, (number, field), width, data, &mut pos, field_path)?;
                }
                (Type::Fixed(width), WireType::Len) if field.repeated => {
                    self.packed_fixed(&mut frame, number, width, data, &mut pos, field_path)?;
                }
                (Type::Bytes, WireType::Len) => self.bytes(&mut frame, number, data, &mut pos, field_path)?,
                (Type::String, WireType::Len) => {
                    self.string(&mut frame, &mut target, (number, field), data, &mut pos, path)?;
                }
                (ty, _) => {
                    let expected = match ty {
                        Type::Scalar(_) => WireType::Varint,
                        Type::Fixed(width) => width.wire_type(),
                        Type::Message(_) | Type::String | Type::Bytes | Type::Reserved => WireType::Len,
                    };
                    return Err(self.malformed(
                        field_path,
                        &format!("wire type is {wire_type}, expected {expected} (field {number})"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// A `string` (singular or one element of a repeated field): valid UTF-8, and a singular
    /// empty one is an explicit default.
    fn string(
        &mut self,
        frame: &mut Frame,
        target: &mut Target<'_>,
        (number, field): (u32, Field),
        data: &[u8],
        pos: &mut usize,
        path: Path<'_>,
    ) -> Result<()> {
        let element_path =
            if field.repeated { path.index(field.name, frame.next_index(number)) } else { path.field(field.name) };
        let text = self.payload(data, pos, element_path, |s| {
            s.non_canonical(frame, number, NonCanonicalKind::OverlongVarint, || element_path.to_field_path());
        })?;
        let Ok(text) = std::str::from_utf8(text) else {
            return Err(self.malformed(element_path, "string is not valid UTF-8"));
        };
        if text.is_empty() && !field.repeated {
            self.non_canonical(frame, number, NonCanonicalKind::ExplicitDefault, || element_path.to_field_path());
        }
        target.string(number, text);
        Ok(())
    }

    /// One `float` or `double` value: unpacked when the field is repeated; for a singular field a
    /// zero (either sign) is an explicit default, as prost writes neither.
    fn fixed(
        &mut self,
        frame: &mut Frame,
        (number, field): (u32, Field),
        width: FixedWidth,
        data: &[u8],
        pos: &mut usize,
        path: Path<'_>,
    ) -> Result<()> {
        let Some(bytes) = take(data, pos, width.bytes() as u64) else {
            return Err(self.malformed(path, &format!("field {number} needs {} bytes, fewer remain", width.bytes())));
        };
        if field.repeated {
            self.non_canonical(frame, number, NonCanonicalKind::Unpacked, || path.to_field_path());
            frame.next_index(number);
            return Ok(());
        }
        // The sign bit is the top bit of the last (little-endian) byte; every other bit zero is ±0.
        let zero =
            bytes.split_last().is_some_and(|(&last, rest)| last.trailing_zeros() >= 7 && rest.iter().all(|&b| b == 0));
        if zero {
            self.non_canonical(frame, number, NonCanonicalKind::ExplicitDefault, || path.to_field_path());
        }
        Ok(())
    }

    /// A `bytes` field (always singular here): any content; empty is an explicit default.
    fn bytes(&mut self, frame: &mut Frame, number: u32, data: &[u8], pos: &mut usize, path: Path<'_>) -> Result<()> {
        let value = self.payload(data, pos, path, |s| {
            s.non_canonical(frame, number, NonCanonicalKind::OverlongVarint, || path.to_field_path());
        })?;
        if value.is_empty() {
            self.non_canonical(frame, number, NonCanonicalKind::ExplicitDefault, || path.to_field_path());
        }
        Ok(())
    }

    /// A packed `float` or `double` record: its length must be a whole number of values.
    fn packed_fixed(
        &mut self,
        frame: &mut Frame,
        number: u32,
        width: FixedWidth,
        data: &[u8],
        pos: &mut usize,
        path: Path<'_>,
    ) -> Result<()> {
        let packed = self.payload(data, pos, path, |s| {
            s.non_canonical(frame, number, NonCanonicalKind::OverlongVarint, || path.to_field_path());
        })?;
        if packed.is_empty() {
            self.non_canonical(frame, number, NonCanonicalKind::EmptyPacked, || path.to_field_path());
        }
        let (count, rest) = (packed.len().div_euclid(width.bytes()), packed.len().rem_euclid(width.bytes()));
        if rest != 0 {
            return Err(self.malformed(path, "packed field ends inside a fixed-width value"));
        }
        frame.set_count(number, frame.count(number).saturating_add(count));
        Ok(())
    }

    /// Where a known field appears relative to the fields before it in the same message.
    #[inline]
    fn placement(&mut self, frame: &mut Frame, number: u32, field: Field, wire_type: WireType, path: Path<'_>) {
        let bit = 1u64.checked_shl(number).unwrap_or(0);
        let problem = if frame.seen & bit == 0 {
            (number < frame.max).then_some(NonCanonicalKind::OutOfOrder)
        } else if !field.repeated {
            Some(NonCanonicalKind::Repeated)
        } else {
            // A second packed record is a split even right after the first; an unpacked element
            // right after another is reported as `Unpacked` instead.
            let packed = matches!(field.ty, Type::Scalar(_) | Type::Fixed(_)) && wire_type == WireType::Len;
            (frame.last != number || packed).then_some(NonCanonicalKind::Split)
        };
        if let Some(kind) = problem {
            self.non_canonical(frame, number, kind, || path.to_field_path());
        }
        frame.seen |= bit;
        frame.last = number;
        frame.max = frame.max.max(number);
    }

    /// Checks one scalar value: minimal varint, in range for its type, and (singular fields
    /// only) not the default. The common, canonical case is decided inline.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn scalar(
        &mut self,
        frame: &mut Frame,
        number: u32,
        field: Field,
        scalar: Scalar,
        value: Varint,
        index: Option<usize>,
        path: Path<'_>,
    ) {
        let (in_range, is_default) = scalar.read_back(value.value);
        if value.overlong || !in_range || (index.is_none() && is_default) {
            self.scalar_findings(frame, number, field, scalar, value, index, path);
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[cold]
    fn scalar_findings(
        &mut self,
        frame: &mut Frame,
        number: u32,
        field: Field,
        scalar: Scalar,
        value: Varint,
        index: Option<usize>,
        path: Path<'_>,
    ) {
        let at = || match index {
            Some(i) => path.index(field.name, i).to_field_path(),
            None => path.field(field.name).to_field_path(),
        };
        if value.overlong {
            self.non_canonical(frame, number, NonCanonicalKind::OverlongVarint, at);
        }
        let (in_range, is_default) = scalar.read_back(value.value);
        if !in_range {
            self.non_canonical(frame, number, NonCanonicalKind::ValueOutOfRange, at);
        }
        if index.is_none() && is_default {
            self.non_canonical(frame, number, NonCanonicalKind::ExplicitDefault, at);
        }
    }

    /// Skips an unknown field as prost's `skip_field` does, including nested groups, which
    /// count towards the recursion limit.
    fn skip(
        &self,
        data: &[u8],
        pos: &mut usize,
        number: u32,
        wire_type: WireType,
        path: Path<'_>,
        level: u32,
    ) -> Result<()> {
        if level >= RECURSION_LIMIT {
            return Err(self.recursion_limit());
        }
        let fixed = |pos: &mut usize, width: u64| {
            take(data, pos, width)
                .map(|_| ())
                .ok_or_else(|| self.malformed(path, &format!("field {number} needs {width} bytes, fewer remain")))
        };
        match wire_type {
            WireType::Varint => self.varint(data, pos, "an unknown field", path).map(|_| ()),
            WireType::Fixed64 => fixed(pos, 8),
            WireType::Fixed32 => fixed(pos, 4),
            WireType::Len => {
                let len = self.varint(data, pos, "a length", path)?;
                let remaining = data.len().saturating_sub(*pos);
                take(data, pos, len.value).map(|_| ()).ok_or_else(|| {
                    self.malformed(path, &format!("length {} exceeds the {remaining} remaining bytes", len.value))
                })
            }
            WireType::StartGroup => loop {
                let (inner, inner_type, _) = self.key(data, pos, path)?;
                if inner_type == WireType::EndGroup {
                    if inner == number {
                        return Ok(());
                    }
                    return Err(self.malformed(path, &format!("group {number} ends with an end-group tag {inner}")));
                }
                self.skip(data, pos, inner, inner_type, path, level.saturating_add(1))?;
            },
            WireType::EndGroup | WireType::Invalid(_) => {
                Err(self.malformed(path, &format!("unexpected end-group tag (field {number})")))
            }
        }
    }
}

/// The value of one field as [`Fields`] reads it: what a reader of a message that knows only a
/// few of its fields needs, with everything else checked and skipped in place.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Value<'d> {
    /// A length-delimited payload, borrowed from the input.
    Len(&'d [u8]),
    /// A varint, a fixed-width value or a group, checked and skipped.
    Skipped,
}

/// One field of a message on the wire.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawField<'d> {
    pub number: u32,
    pub wire_type: WireType,
    pub value: Value<'d>,
}

/// The top-level fields of one encoded message, in wire order, without decoding or copying
/// anything: the streaming HLO reader walks `HloModuleProto` and its parts with it. It applies
/// prost's rules (varints, keys, wire types, lengths, groups and their nesting below `level`)
/// and stops after the first error, whose text names what broke.
pub(crate) struct Fields<'d> {
    data: &'d [u8],
    pos: usize,
    level: u32,
    failed: bool,
}

impl<'d> Fields<'d> {
    /// The fields of `data`, a message nested `level` messages below the root.
    pub(crate) fn new(data: &'d [u8], level: u32) -> Self {
        Self { data, pos: 0, level, failed: false }
    }

    fn read(&mut self) -> Result<RawField<'d>, String> {
        let key = read_varint(self.data, &mut self.pos).map_err(|e| varint_reason(e, "a field key"))?;
        let raw = u32::try_from(key.value).map_err(|_| format!("field key {} exceeds 32 bits", key.value))?;
        let wire_type = WireType::from_raw((raw & 7) as u8);
        let number = raw >> 3;
        if let WireType::Invalid(value) = wire_type {
            return Err(format!("invalid wire type {value} (field {number})"));
        }
        if number == 0 {
            return Err("invalid field number 0".to_owned());
        }
        let value = match wire_type {
            WireType::Varint => {
                read_varint(self.data, &mut self.pos).map_err(|e| varint_reason(e, "a varint"))?;
                Value::Skipped
            }
            WireType::Len => Value::Len(length_delimited(self.data, &mut self.pos)?),
            WireType::Fixed64 | WireType::Fixed32 => {
                let width = if wire_type == WireType::Fixed64 { 8 } else { 4 };
                take(self.data, &mut self.pos, width)
                    .ok_or_else(|| format!("field {number} needs {width} bytes, fewer remain"))?;
                Value::Skipped
            }
            WireType::StartGroup => {
                skip_group(self.data, &mut self.pos, number, self.level)?;
                Value::Skipped
            }
            WireType::EndGroup | WireType::Invalid(_) => {
                return Err(format!("unexpected end-group tag (field {number})"));
            }
        };
        Ok(RawField { number, wire_type, value })
    }
}

impl<'d> Iterator for Fields<'d> {
    type Item = Result<RawField<'d>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.data.len() {
            return None;
        }
        let field = self.read();
        self.failed = field.is_err();
        Some(field)
    }
}

fn varint_reason(error: VarintError, what: &str) -> String {
    match error {
        VarintError::Truncated => format!("truncated varint in {what}"),
        VarintError::Overflow => format!("varint in {what} exceeds 64 bits"),
    }
}

fn length_delimited<'d>(data: &'d [u8], pos: &mut usize) -> Result<&'d [u8], String> {
    let len = read_varint(data, pos).map_err(|e| varint_reason(e, "a length"))?;
    let remaining = data.len().saturating_sub(*pos);
    take(data, pos, len.value).ok_or_else(|| format!("length {} exceeds the {remaining} remaining bytes", len.value))
}

/// Skips a group's fields up to its end tag, as prost's `skip_field` does: each nested group
/// counts towards [`RECURSION_LIMIT`].
fn skip_group(data: &[u8], pos: &mut usize, number: u32, level: u32) -> Result<(), String> {
    if level >= RECURSION_LIMIT {
        return Err(format!("recursion limit reached: more than {RECURSION_LIMIT} nested messages"));
    }
    let mut inner = Fields { data, pos: *pos, level: level.saturating_add(1), failed: false };
    loop {
        // An end-group tag is the one key `Fields::read` refuses; read it here first.
        let mut at = inner.pos;
        let key = read_varint(data, &mut at).map_err(|e| varint_reason(e, "a field key"))?;
        if key.value & 7 == 4 {
            let end = key.value >> 3;
            if end == u64::from(number) {
                *pos = at;
                return Ok(());
            }
            return Err(format!("group {number} ends with an end-group tag {end}"));
        }
        inner.read()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// The scanner's tables agree with the compiled descriptor of the vendored schema.
    #[test]
    fn tables_match_descriptor() {
        use prost_types::field_descriptor_proto::{Label, Type as T};
        let set = prost_types::FileDescriptorSet::decode(crate::proto::FILE_DESCRIPTOR_SET).unwrap();
        let file = &set.file[0];
        let kinds = [
            MessageKind::Shape,
            MessageKind::Layout,
            MessageKind::ProgramShape,
            MessageKind::Tile,
            MessageKind::SplitConfig,
            MessageKind::Literal,
            MessageKind::OpSharding,
            MessageKind::OpMetadata,
            MessageKind::ProfileInfo,
            MessageKind::NamedSharding,
            MessageKind::DimensionSharding,
            MessageKind::Mesh,
            MessageKind::MeshAxis,
            MessageKind::IotaTransform,
            MessageKind::AxisRef,
            MessageKind::SubAxis,
        ];
        for kind in kinds {
            // A nested message is named `Outer.Inner`.
            let mut parts = kind.name().split('.');
            let outer = parts.next().unwrap();
            let mut message = file.message_type.iter().find(|m| m.name() == outer).unwrap();
            for inner in parts {
                message = message.nested_type.iter().find(|m| m.name() == inner).unwrap();
            }
            let (first, fields) = kind.table();
            let known = fields.iter().filter(|f| f.ty != Type::Reserved).count();
            assert_eq!(known, message.field.len(), "{}", kind.name());
            for descriptor in &message.field {
                let number = u32::try_from(descriptor.number()).unwrap();
                let field = kind.field(number).unwrap();
                assert!(number >= first);
                assert_eq!(field.name, descriptor.name());
                assert_eq!(field.repeated, descriptor.label() == Label::Repeated, "{}", field.name);
                let expected = match descriptor.r#type() {
                    T::Int64 => INT64,
                    T::Enum => ENUM,
                    T::Bool => BOOL,
                    T::Int32 => INT32,
                    T::Uint32 => UINT32,
                    T::Uint64 => UINT64,
                    T::Float => FLOAT,
                    T::Double => DOUBLE,
                    T::Bytes => BYTES,
                    T::String => Type::String,
                    T::Message => {
                        let name = descriptor.type_name().trim_start_matches(".xla.");
                        Type::Message(kinds.into_iter().find(|k| k.name() == name).unwrap())
                    }
                    other => panic!("unexpected type {other:?}"),
                };
                assert_eq!(field.ty, expected, "{}", field.name);
            }
        }
        assert!(MessageKind::Shape.field(1).is_none(), "field 1 of ShapeProto is the reserved rank");
    }

    #[test]
    fn varints_follow_prost() {
        let read = |bytes: &[u8]| read_varint(bytes, &mut 0).map(|v| (v.value, v.overlong));
        assert_eq!(read(&[0x00]).unwrap(), (0, false));
        assert_eq!(read(&[0x80, 0x00]).unwrap(), (0, true));
        assert_eq!(read(&[0x96, 0x01]).unwrap(), (150, false));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(read(&max).unwrap(), (u64::MAX, false));
        let ten_zero = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
        assert_eq!(read(&ten_zero).unwrap(), (0, true));
        assert!(matches!(read(&[0xff; 9]), Err(VarintError::Truncated)));
        assert!(matches!(read(&[0xff; 11]), Err(VarintError::Overflow)));
        let mut too_big = max;
        too_big[9] = 0x02;
        assert!(matches!(read(&too_big), Err(VarintError::Overflow)));
        assert!(matches!(read(&[]), Err(VarintError::Truncated)));
    }
}
