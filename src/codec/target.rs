//! Where the single-pass decoder stores what the wire scanner accepts: one message of the schema
//! being filled, with prost's conversions (an `int32` enum is the varint truncated to 32 bits, a
//! `bool` is `varint != 0`, a repeated occurrence of a singular message is merged into it).
//!
//! The scanner ([`super::wire`]) decides everything (known or unknown, canonical or not, valid
//! or not); a `Target` only stores, so the strict and lenient decoders and the report-only scan
//! share one loop over the wire.

use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto, SplitConfigProto, TileProto};

/// The message being filled, or nothing (a scan that only reports).
pub enum Target<'m> {
    /// Nothing is stored.
    None,
    Shape(&'m mut ShapeProto),
    Layout(&'m mut LayoutProto),
    ProgramShape(&'m mut ProgramShapeProto),
    Tile(&'m mut TileProto),
    SplitConfig(&'m mut SplitConfigProto),
}

/// prost's reading of an `int32` (enum) varint: the low 32 bits.
#[allow(clippy::cast_possible_truncation, reason = "invariant: prost truncates an int32 varint to its low 32 bits")]
fn int32(v: u64) -> i32 {
    v as i32
}

/// prost's reading of an `int64` varint: the bits as two's complement.
#[allow(clippy::cast_possible_wrap, reason = "invariant: an int64 varint is the two's complement bits")]
fn int64(v: u64) -> i64 {
    v as i64
}

impl Target<'_> {
    /// Stores a scalar of field `number` (a singular one is replaced, a repeated one appended).
    /// The scanner calls it only for known scalar fields of this message.
    #[inline]
    pub(crate) fn scalar(&mut self, number: u32, v: u64) {
        if !self.singular(number, v) {
            self.repeated(number).push(v);
        }
    }

    /// Sets the singular scalar field `number`; whether there is one.
    #[inline]
    fn singular(&mut self, number: u32, v: u64) -> bool {
        match (self, number) {
            (Target::Shape(s), 2) => s.element_type = int32(v),
            (Target::Layout(l), 3) => l.padding_value = int32(v),
            (Target::Layout(l), 4) => l.format = int32(v),
            (Target::Layout(l), 5) => l.max_sparse_elements = int64(v),
            (Target::Layout(l), 7) => l.element_size_in_bits = int64(v),
            (Target::Layout(l), 8) => l.memory_space = int64(v),
            (Target::Layout(l), 11) => l.index_primitive_type = int32(v),
            (Target::Layout(l), 12) => l.pointer_primitive_type = int32(v),
            (Target::Layout(l), 15) => l.dynamic_shape_metadata_prefix_bytes = int64(v),
            (Target::Layout(l), 16) => l.tail_padding_alignment_in_elements = int64(v),
            (Target::SplitConfig(c), 1) => c.dimension = int64(v),
            _ => return false,
        }
        true
    }

    /// The list of the repeated scalar field `number`, for the values of one packed record.
    #[inline]
    pub(crate) fn repeated(&mut self, number: u32) -> Repeated<'_> {
        match self {
            Target::Shape(s) => match number {
                3 => Repeated::Int64(&mut s.dimensions),
                6 => Repeated::Bool(&mut s.is_dynamic_dimension),
                _ => Repeated::None,
            },
            Target::Layout(l) => match number {
                1 => Repeated::Int64(&mut l.minor_to_major),
                2 => Repeated::Int64(&mut l.padded_dimensions),
                9 => Repeated::Enum(&mut l.dim_level_types),
                13 => Repeated::Bool(&mut l.dim_unique),
                14 => Repeated::Bool(&mut l.dim_ordered),
                _ => Repeated::None,
            },
            Target::Tile(t) if number == 1 => Repeated::Int64(&mut t.dimensions),
            Target::SplitConfig(c) if number == 2 => Repeated::Int64(&mut c.split_indices),
            _ => Repeated::None,
        }
    }

    /// The sub-message of field `number` to fill next: a new element of a repeated field, or the
    /// singular field's message (created if absent, else merged into).
    #[inline]
    pub(crate) fn child(&mut self, number: u32) -> Target<'_> {
        #[allow(
            clippy::indexing_slicing,
            clippy::arithmetic_side_effects,
            reason = "invariant: the list holds the element just pushed, so its length is at least 1"
        )]
        fn push<T: Default>(list: &mut Vec<T>) -> &mut T {
            list.push(T::default());
            let pushed = list.len() - 1;
            &mut list[pushed]
        }
        match self {
            Target::Shape(s) => match number {
                4 => Target::Shape(push(&mut s.tuple_shapes)),
                5 => Target::Layout(s.layout.get_or_insert_with(Box::default)),
                _ => Target::None,
            },
            Target::Layout(l) => match number {
                6 => Target::Tile(push(&mut l.tiles)),
                10 => Target::Shape(l.physical_shape.get_or_insert_with(Box::default)),
                17 => Target::SplitConfig(push(&mut l.split_configs)),
                _ => Target::None,
            },
            Target::ProgramShape(p) => match number {
                1 => Target::Shape(push(&mut p.parameters)),
                2 => Target::Shape(p.result.get_or_insert_with(ShapeProto::default)),
                _ => Target::None,
            },
            Target::None | Target::Tile(_) | Target::SplitConfig(_) => Target::None,
        }
    }

    /// Stores a string of field `number` (only `ProgramShapeProto.parameter_names`).
    pub(crate) fn string(&mut self, number: u32, text: &str) {
        if let (Target::ProgramShape(p), 3) = (self, number) {
            p.parameter_names.push(text.to_owned());
        }
    }
}

/// One repeated scalar field of a [`Target`], with prost's conversion of its values.
pub(crate) enum Repeated<'m> {
    /// Nothing is stored.
    None,
    Int64(&'m mut Vec<i64>),
    Enum(&'m mut Vec<i32>),
    Bool(&'m mut Vec<bool>),
}

impl Repeated<'_> {
    /// Makes room for `additional` more values.
    #[inline]
    pub(crate) fn reserve(&mut self, additional: usize) {
        match self {
            Repeated::None => {}
            Repeated::Int64(list) => list.reserve(additional),
            Repeated::Enum(list) => list.reserve(additional),
            Repeated::Bool(list) => list.reserve(additional),
        }
    }

    /// Appends the value of one varint.
    #[inline]
    pub(crate) fn push(&mut self, v: u64) {
        match self {
            Repeated::None => {}
            Repeated::Int64(list) => list.push(int64(v)),
            Repeated::Enum(list) => list.push(int32(v)),
            Repeated::Bool(list) => list.push(v != 0),
        }
    }
}
