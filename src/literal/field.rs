//! Which `LiteralProto` field holds the values of each element type, and how they are stored.
//!
//! One table ([`value_field`]) maps an element type to its field; everything else (validation,
//! reading, building) goes through it.

use crate::primitive::PrimitiveType;
use crate::proto::LiteralProto;

/// How a field stores one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Storage {
    /// `repeated bool`.
    Bool,
    /// `bytes`: this many little-endian bytes per element (1 or 2).
    Bytes(usize),
    /// `repeated int32`.
    I32,
    /// `repeated int64`.
    I64,
    /// `repeated uint32`.
    U32,
    /// `repeated uint64`.
    U64,
    /// `repeated float`: one per element, or two (real, imaginary) for `c64`.
    F32 { per_element: usize },
    /// `repeated double`: one per element, or two for `c128`.
    F64 { per_element: usize },
}

impl Storage {
    /// Bytes one element takes once its field is viewed as little-endian bytes.
    pub(crate) const fn element_bytes(self) -> usize {
        match self {
            Self::Bool => 1,
            Self::Bytes(width) => width,
            Self::I32 | Self::U32 => 4,
            Self::I64 | Self::U64 => 8,
            Self::F32 { per_element } => per_element.saturating_mul(4),
            Self::F64 { per_element } => per_element.saturating_mul(8),
        }
    }

    /// Field entries (elements of a repeated field, bytes of a `bytes` field) per element.
    pub(crate) const fn entries_per_element(self) -> usize {
        match self {
            Self::Bytes(width) => width,
            Self::F32 { per_element } | Self::F64 { per_element } => per_element,
            Self::Bool | Self::I32 | Self::I64 | Self::U32 | Self::U64 => 1,
        }
    }
}

/// The field of an element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ValueField {
    /// The field name, as in error paths.
    pub name: &'static str,
    /// How it stores elements.
    pub storage: Storage,
}

#[allow(clippy::unnecessary_wraps, reason = "invariant: every array type has a field; the table's other arms are None")]
const fn field(name: &'static str, storage: Storage) -> Option<ValueField> {
    Some(ValueField { name, storage })
}

/// The field holding the values of `ty`; `None` for tuple, token, opaque and buffer.
pub(crate) const fn value_field(ty: PrimitiveType) -> Option<ValueField> {
    use PrimitiveType as T;
    use Storage::Bytes;
    match ty {
        T::PRED => field("preds", Storage::Bool),
        T::S1 => field("s1s", Bytes(1)),
        T::S2 => field("s2s", Bytes(1)),
        T::S4 => field("s4s", Bytes(1)),
        T::S8 => field("s8s", Bytes(1)),
        T::S16 => field("s16s", Bytes(2)),
        T::S32 => field("s32s", Storage::I32),
        T::S64 => field("s64s", Storage::I64),
        T::U1 => field("u1s", Bytes(1)),
        T::U2 => field("u2s", Bytes(1)),
        T::U4 => field("u4s", Bytes(1)),
        T::U8 => field("u8s", Bytes(1)),
        T::U16 => field("u16s", Bytes(2)),
        T::U32 => field("u32s", Storage::U32),
        T::U64 => field("u64s", Storage::U64),
        T::F16 => field("f16s", Bytes(2)),
        T::BF16 => field("bf16s", Bytes(2)),
        T::F32 => field("f32s", Storage::F32 { per_element: 1 }),
        T::F64 => field("f64s", Storage::F64 { per_element: 1 }),
        T::C64 => field("c64s", Storage::F32 { per_element: 2 }),
        T::C128 => field("c128s", Storage::F64 { per_element: 2 }),
        T::F8E5M2 => field("f8e5m2s", Bytes(1)),
        T::F8E4M3 => field("f8e4m3s", Bytes(1)),
        T::F8E4M3FN => field("f8e4m3fns", Bytes(1)),
        T::F8E4M3B11FNUZ => field("f8e4m3b11fnuzs", Bytes(1)),
        T::F8E3M4 => field("f8e3m4s", Bytes(1)),
        T::F8E5M2FNUZ => field("f8e5m2fnuzs", Bytes(1)),
        T::F8E4M3FNUZ => field("f8e4m3fnuzs", Bytes(1)),
        T::F4E2M1FN => field("f4e2m1fns", Bytes(1)),
        T::F6E3M2FN => field("f6e3m2fns", Bytes(1)),
        T::F6E2M3FN => field("f6e2m3fns", Bytes(1)),
        T::F8E8M0FNU => field("f8e8m0fnus", Bytes(1)),
        T::TUPLE | T::OPAQUE_TYPE | T::TOKEN | T::BUFFER => None,
    }
}

/// The entries of one field.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Raw<'a> {
    Bool(&'a [bool]),
    Bytes(&'a [u8]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    F32(&'a [f32]),
    F64(&'a [f64]),
}

impl Raw<'_> {
    /// Entries in the field.
    pub(crate) fn len(self) -> usize {
        match self {
            Self::Bool(v) => v.len(),
            Self::Bytes(v) => v.len(),
            Self::I32(v) => v.len(),
            Self::I64(v) => v.len(),
            Self::U32(v) => v.len(),
            Self::U64(v) => v.len(),
            Self::F32(v) => v.len(),
            Self::F64(v) => v.len(),
        }
    }
}

/// The `bytes` fields by name, listed once: the shared and the mutable accessor.
macro_rules! bytes_fields {
    ($($name:ident),* $(,)?) => {
        /// The bytes field of `name` (one of the names of [`value_field`]).
        fn bytes_field<'a>(proto: &'a LiteralProto, name: &str) -> &'a [u8] {
            match name {
                $(stringify!($name) => &proto.$name,)*
                _ => &[],
            }
        }

        /// The mutable bytes field of `name`, for building.
        fn bytes_field_mut<'a>(proto: &'a mut LiteralProto, name: &str) -> Option<&'a mut Vec<u8>> {
            match name {
                $(stringify!($name) => Some(&mut proto.$name),)*
                _ => None,
            }
        }
    };
}

bytes_fields!(
    s1s,
    s2s,
    s4s,
    s8s,
    s16s,
    u1s,
    u2s,
    u4s,
    u8s,
    u16s,
    f16s,
    bf16s,
    f8e5m2s,
    f8e4m3s,
    f8e4m3fns,
    f8e4m3b11fnuzs,
    f8e3m4s,
    f8e5m2fnuzs,
    f8e4m3fnuzs,
    f4e2m1fns,
    f6e3m2fns,
    f6e2m3fns,
    f8e8m0fnus
);

/// The entries of `field` in `proto`.
pub(crate) fn raw(proto: &LiteralProto, field: ValueField) -> Raw<'_> {
    match field.storage {
        Storage::Bool => Raw::Bool(&proto.preds),
        Storage::Bytes(_) => Raw::Bytes(bytes_field(proto, field.name)),
        Storage::I32 => Raw::I32(&proto.s32s),
        Storage::I64 => Raw::I64(&proto.s64s),
        Storage::U32 => Raw::U32(&proto.u32s),
        Storage::U64 => Raw::U64(&proto.u64s),
        Storage::F32 { .. } if field.name == "c64s" => Raw::F32(&proto.c64s),
        Storage::F32 { .. } => Raw::F32(&proto.f32s),
        Storage::F64 { .. } if field.name == "c128s" => Raw::F64(&proto.c128s),
        Storage::F64 { .. } => Raw::F64(&proto.f64s),
    }
}

/// Stores `entries` (the field's whole content) into `field` of `proto`.
pub(crate) fn store(proto: &mut LiteralProto, field: ValueField, entries: Owned) {
    match entries {
        Owned::Bool(v) => proto.preds = v,
        Owned::Bytes(v) => {
            if let Some(slot) = bytes_field_mut(proto, field.name) {
                *slot = v;
            }
        }
        Owned::I32(v) => proto.s32s = v,
        Owned::I64(v) => proto.s64s = v,
        Owned::U32(v) => proto.u32s = v,
        Owned::U64(v) => proto.u64s = v,
        Owned::F32(v) if field.name == "c64s" => proto.c64s = v,
        Owned::F32(v) => proto.f32s = v,
        Owned::F64(v) if field.name == "c128s" => proto.c128s = v,
        Owned::F64(v) => proto.f64s = v,
    }
}

/// The owned content of a field, for building.
#[derive(Debug, Clone)]
pub(crate) enum Owned {
    Bool(Vec<bool>),
    Bytes(Vec<u8>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Every field that can hold values, with its entry count: the element type's own field must
/// be the only non-empty one.
pub(crate) fn value_entry_counts(proto: &LiteralProto) -> impl Iterator<Item = (&'static str, usize)> + '_ {
    PrimitiveType::ALL
        .iter()
        .filter_map(|&ty| value_field(ty))
        .map(move |field| (field.name, raw(proto, field).len()))
        .chain(std::iter::once(("tuple_literals", proto.tuple_literals.len())))
        .chain(std::iter::once(("sparse_indices", proto.sparse_indices.len())))
}
