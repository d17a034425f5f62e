//! The fast path of decoding: a decoder specialized to the five messages that accepts only
//! canonical encodings — exactly the bytes [`super::encode`] writes — and gives up (`None`) on
//! anything else, which the full scanner ([`super::wire`]) then decodes again from the start to
//! say what is wrong, or to report it.
//!
//! Whatever this module accepts, the scanner accepts too, with an empty report and the same
//! message; the property tests below hold it to that, on arbitrary messages, their mutations and
//! the fuzz corpus. The rules are
//! those of the scanner, restricted to canonical input:
//!
//! * field keys are minimal varints of known fields with their schema's wire type (a byte for
//!   fields 1–15, two for 16 and 17), in strictly increasing field order, except that the
//!   elements of a repeated message (or string) field follow each other;
//! * every varint is minimal (its last byte is not zero, unless it is the only one);
//! * a singular scalar is not its default (0), an enum is a sign-extended 32-bit value, a bool
//!   is 0 or 1;
//! * a repeated scalar is one non-empty packed record;
//! * nesting stops at [`RECURSION_LIMIT`] (the scanner reports it);
//! * strings are UTF-8.
//!
//! Field dispatch is a `match` on the whole key, and varints of one or two bytes (all keys and
//! lengths of a shape, most dimension sizes) are read inline.

use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto, SplitConfigProto, TileProto};

use super::wire::RECURSION_LIMIT;

/// A minimal varint at the front of `data`, consuming it; `None` for an over-long, truncated or
/// over-wide one.
#[inline]
fn varint(data: &mut &[u8]) -> Option<u64> {
    let (&b0, rest) = data.split_first()?;
    if b0 < 0x80 {
        *data = rest;
        return Some(u64::from(b0));
    }
    let (&b1, rest2) = rest.split_first()?;
    if b1 < 0x80 {
        // A zero last byte means a shorter form exists.
        if b1 == 0 {
            return None;
        }
        *data = rest2;
        return Some(u64::from(b0 & 0x7f) | (u64::from(b1) << 7));
    }
    long_varint(data)
}

/// A minimal varint of three to ten bytes (the first two are known to have the high bit set).
#[inline(never)]
fn long_varint(data: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    let mut shift = 0u32;
    for (taken, &byte) in (1usize..=10).zip(data.iter()) {
        value |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte < 0x80 {
            // The tenth byte holds only the top bit; zero as the last byte is over-long.
            if byte == 0 || (taken == 10 && byte > 1) {
                return None;
            }
            *data = data.get(taken..)?;
            return Some(value);
        }
        shift = shift.checked_add(7)?;
    }
    None
}

/// The payload of a length-delimited field (its minimal length prefix consumed).
#[inline]
fn payload<'d>(data: &mut &'d [u8]) -> Option<&'d [u8]> {
    let len = usize::try_from(varint(data)?).ok()?;
    if len > data.len() {
        return None;
    }
    let (body, rest) = data.split_at(len);
    *data = rest;
    Some(body)
}

/// A singular `int64`: anything but the default 0.
#[inline]
#[allow(clippy::cast_possible_wrap, reason = "invariant: an int64 varint is the two's complement bits")]
fn int64(data: &mut &[u8]) -> Option<i64> {
    let v = varint(data)?;
    (v != 0).then_some(v as i64)
}

/// An enum value (`int32` on the wire, sign-extended to 64 bits), as prost reads it.
#[inline]
#[allow(clippy::cast_possible_truncation, reason = "invariant: a sign-extended int32 varint fits 32 bits")]
fn enum_value(v: u64) -> Option<i32> {
    (v <= 0x7fff_ffff || v >= 0xffff_ffff_8000_0000).then_some(v as i32)
}

/// A singular enum: in range and not the default 0.
#[inline]
fn singular_enum(data: &mut &[u8]) -> Option<i32> {
    enum_value(varint(data)?).filter(|&v| v != 0)
}

/// Values in a packed record: each ends in one byte below 0x80.
#[inline]
fn packed_count(body: &[u8]) -> usize {
    body.iter().filter(|&&b| b < 0x80).count()
}

/// A non-empty packed record of `int64`s, appended to `list`.
#[inline]
#[allow(clippy::cast_possible_wrap, reason = "invariant: an int64 varint is the two's complement bits")]
fn packed_int64(data: &mut &[u8], list: &mut Vec<i64>) -> Option<()> {
    let mut body = payload(data)?;
    if body.is_empty() {
        return None;
    }
    list.reserve_exact(packed_count(body));
    while !body.is_empty() {
        list.push(varint(&mut body)? as i64);
    }
    Some(())
}

/// A non-empty packed record of enums.
#[inline]
fn packed_enum(data: &mut &[u8], list: &mut Vec<i32>) -> Option<()> {
    let mut body = payload(data)?;
    if body.is_empty() {
        return None;
    }
    list.reserve_exact(packed_count(body));
    while !body.is_empty() {
        list.push(enum_value(varint(&mut body)?)?);
    }
    Some(())
}

/// A non-empty packed record of bools: every byte is one value, 0 or 1.
#[inline]
fn packed_bool(data: &mut &[u8], list: &mut Vec<bool>) -> Option<()> {
    let body = payload(data)?;
    if body.is_empty() || body.iter().any(|&b| b > 1) {
        return None;
    }
    list.extend(body.iter().map(|&b| b != 0));
    Some(())
}

/// Field order: strictly increasing, except the next element of the repeated message field
/// just read (`repeats`).
#[inline]
fn advance(last: &mut u32, number: u32, repeats: bool) -> Option<()> {
    if number > *last || (repeats && number == *last) {
        *last = number;
        Some(())
    } else {
        None
    }
}

/// The element just pushed onto `list`.
fn push_default<T: Default>(list: &mut Vec<T>) -> Option<&mut T> {
    list.push(T::default());
    list.last_mut()
}

/// Decodes a canonical `ShapeProto` nested `depth` messages below the root into `shape` (empty).
pub(super) fn shape(shape: &mut ShapeProto, mut data: &[u8], depth: u32) -> Option<()> {
    let mut last = 0;
    while !data.is_empty() {
        match varint(&mut data)? {
            0x10 => {
                advance(&mut last, 2, false)?;
                shape.element_type = singular_enum(&mut data)?;
            }
            0x1a => {
                advance(&mut last, 3, false)?;
                packed_int64(&mut data, &mut shape.dimensions)?;
            }
            0x22 => {
                advance(&mut last, 4, true)?;
                if depth >= RECURSION_LIMIT {
                    return None;
                }
                let body = payload(&mut data)?;
                self::shape(push_default(&mut shape.tuple_shapes)?, body, depth.checked_add(1)?)?;
            }
            0x2a => {
                advance(&mut last, 5, false)?;
                if depth >= RECURSION_LIMIT {
                    return None;
                }
                let body = payload(&mut data)?;
                layout(shape.layout.insert(Box::default()), body, depth.checked_add(1)?)?;
            }
            0x32 => {
                advance(&mut last, 6, false)?;
                packed_bool(&mut data, &mut shape.is_dynamic_dimension)?;
            }
            _ => return None,
        }
    }
    Some(())
}

/// Decodes a canonical `LayoutProto` nested `depth` messages below the root into `layout`.
pub(super) fn layout(layout: &mut LayoutProto, mut data: &[u8], depth: u32) -> Option<()> {
    let mut last = 0;
    while !data.is_empty() {
        match varint(&mut data)? {
            0x0a => {
                advance(&mut last, 1, false)?;
                packed_int64(&mut data, &mut layout.minor_to_major)?;
            }
            0x12 => {
                advance(&mut last, 2, false)?;
                packed_int64(&mut data, &mut layout.padded_dimensions)?;
            }
            0x18 => {
                advance(&mut last, 3, false)?;
                layout.padding_value = singular_enum(&mut data)?;
            }
            0x20 => {
                advance(&mut last, 4, false)?;
                layout.format = singular_enum(&mut data)?;
            }
            0x28 => {
                advance(&mut last, 5, false)?;
                layout.max_sparse_elements = int64(&mut data)?;
            }
            0x32 => {
                advance(&mut last, 6, true)?;
                if depth >= RECURSION_LIMIT {
                    return None;
                }
                let body = payload(&mut data)?;
                tile(push_default(&mut layout.tiles)?, body)?;
            }
            0x38 => {
                advance(&mut last, 7, false)?;
                layout.element_size_in_bits = int64(&mut data)?;
            }
            0x40 => {
                advance(&mut last, 8, false)?;
                layout.memory_space = int64(&mut data)?;
            }
            0x4a => {
                advance(&mut last, 9, false)?;
                packed_enum(&mut data, &mut layout.dim_level_types)?;
            }
            0x52 => {
                advance(&mut last, 10, false)?;
                if depth >= RECURSION_LIMIT {
                    return None;
                }
                let body = payload(&mut data)?;
                shape(layout.physical_shape.insert(Box::default()), body, depth.checked_add(1)?)?;
            }
            0x58 => {
                advance(&mut last, 11, false)?;
                layout.index_primitive_type = singular_enum(&mut data)?;
            }
            0x60 => {
                advance(&mut last, 12, false)?;
                layout.pointer_primitive_type = singular_enum(&mut data)?;
            }
            0x6a => {
                advance(&mut last, 13, false)?;
                packed_bool(&mut data, &mut layout.dim_unique)?;
            }
            0x72 => {
                advance(&mut last, 14, false)?;
                packed_bool(&mut data, &mut layout.dim_ordered)?;
            }
            0x78 => {
                advance(&mut last, 15, false)?;
                layout.dynamic_shape_metadata_prefix_bytes = int64(&mut data)?;
            }
            0x80 => {
                advance(&mut last, 16, false)?;
                layout.tail_padding_alignment_in_elements = int64(&mut data)?;
            }
            0x8a => {
                advance(&mut last, 17, true)?;
                if depth >= RECURSION_LIMIT {
                    return None;
                }
                let body = payload(&mut data)?;
                split_config(push_default(&mut layout.split_configs)?, body)?;
            }
            _ => return None,
        }
    }
    Some(())
}

/// Decodes a canonical `TileProto`.
fn tile(tile: &mut TileProto, mut data: &[u8]) -> Option<()> {
    while !data.is_empty() {
        match varint(&mut data)? {
            0x0a if tile.dimensions.is_empty() => packed_int64(&mut data, &mut tile.dimensions)?,
            _ => return None,
        }
    }
    Some(())
}

/// Decodes a canonical `SplitConfigProto`.
fn split_config(config: &mut SplitConfigProto, mut data: &[u8]) -> Option<()> {
    let mut last = 0;
    while !data.is_empty() {
        match varint(&mut data)? {
            0x08 => {
                advance(&mut last, 1, false)?;
                config.dimension = int64(&mut data)?;
            }
            0x12 => {
                advance(&mut last, 2, false)?;
                packed_int64(&mut data, &mut config.split_indices)?;
            }
            _ => return None,
        }
    }
    Some(())
}

/// Decodes a canonical `ProgramShapeProto`.
pub(super) fn program_shape(program: &mut ProgramShapeProto, mut data: &[u8]) -> Option<()> {
    let mut last = 0;
    while !data.is_empty() {
        match varint(&mut data)? {
            0x0a => {
                advance(&mut last, 1, true)?;
                let body = payload(&mut data)?;
                shape(push_default(&mut program.parameters)?, body, 1)?;
            }
            0x12 => {
                advance(&mut last, 2, false)?;
                let body = payload(&mut data)?;
                shape(program.result.insert(ShapeProto::default()), body, 1)?;
            }
            0x1a => {
                advance(&mut last, 3, true)?;
                let text = std::str::from_utf8(payload(&mut data)?).ok()?;
                program.parameter_names.push(text.to_owned());
            }
            _ => return None,
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    //! The fast path agrees with the scanner: whatever it accepts, the scanner accepts with an
    //! empty report and the same message; and it accepts every canonical encoding.

    use proptest::prelude::*;
    use prost::Message;

    use super::super::wire;
    use super::super::{XlaMessage, sealed::Sealed};
    use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto, SplitConfigProto, TileProto};

    /// Checks the contract on `bytes` as an encoding of `M`.
    fn agree<M: XlaMessage + PartialEq + std::fmt::Debug>(bytes: &[u8]) -> Result<(), TestCaseError> {
        let fast = M::decode_canonical(bytes);
        let mut scanned = M::default();
        let report = wire::scan_into(M::KIND, scanned.target(), bytes, false);
        if let Some(message) = fast {
            let report = report.map_err(|e| TestCaseError::fail(format!("fast accepted, scanner: {e}")))?;
            prop_assert!(report.is_empty(), "fast accepted {bytes:02x?}, scanner reports {report}");
            prop_assert_eq!(&message, &scanned);
            prop_assert_eq!(message.encode_to_vec(), bytes);
        } else {
            // Canonical bytes must take the fast path.
            let canonical = report.as_ref().is_ok_and(super::super::WireReport::is_empty);
            prop_assert!(!canonical, "fast refused canonical {bytes:02x?}");
        }
        Ok(())
    }

    fn values() -> impl Strategy<Value = i64> {
        prop_oneof![Just(0i64), -3i64..300, any::<i64>(), Just(i64::MIN), Just(i64::from(i32::MIN))]
    }

    fn enums() -> impl Strategy<Value = i32> {
        prop_oneof![Just(0i32), -2i32..40, any::<i32>()]
    }

    fn layout() -> impl Strategy<Value = LayoutProto> {
        let lists = (
            proptest::collection::vec(values(), 0..4),
            proptest::collection::vec(values(), 0..3),
            proptest::collection::vec(enums(), 0..3),
            proptest::collection::vec(any::<bool>(), 0..3),
            proptest::collection::vec(any::<bool>(), 0..3),
        );
        let scalars = (enums(), enums(), values(), values(), values(), enums(), enums(), values(), values());
        let tiles = proptest::collection::vec(proptest::collection::vec(values(), 0..3), 0..3);
        let splits = proptest::collection::vec((values(), proptest::collection::vec(values(), 0..3)), 0..3);
        let physical = proptest::option::weighted(0.1, (enums(), proptest::collection::vec(values(), 0..3)));
        (lists, scalars, tiles, splits, physical).prop_map(|(l, s, tiles, splits, physical)| LayoutProto {
            minor_to_major: l.0,
            padded_dimensions: l.1,
            dim_level_types: l.2,
            dim_unique: l.3,
            dim_ordered: l.4,
            padding_value: s.0,
            format: s.1,
            max_sparse_elements: s.2,
            element_size_in_bits: s.3,
            memory_space: s.4,
            index_primitive_type: s.5,
            pointer_primitive_type: s.6,
            dynamic_shape_metadata_prefix_bytes: s.7,
            tail_padding_alignment_in_elements: s.8,
            tiles: tiles.into_iter().map(|dimensions| TileProto { dimensions }).collect(),
            split_configs: splits
                .into_iter()
                .map(|(dimension, split_indices)| SplitConfigProto { dimension, split_indices })
                .collect(),
            physical_shape: physical.map(|(element_type, dimensions)| {
                Box::new(ShapeProto { element_type, dimensions, ..ShapeProto::default() })
            }),
        })
    }

    /// Any `ShapeProto`, valid or not, with every field exercised.
    fn shape() -> impl Strategy<Value = ShapeProto> {
        let leaf = (
            enums(),
            proptest::collection::vec(values(), 0..4),
            proptest::collection::vec(any::<bool>(), 0..4),
            proptest::option::of(layout()),
        )
            .prop_map(|(element_type, dimensions, is_dynamic_dimension, layout)| ShapeProto {
                element_type,
                dimensions,
                is_dynamic_dimension,
                layout: layout.map(Box::new),
                tuple_shapes: vec![],
            });
        leaf.prop_recursive(3, 12, 4, |inner| {
            (enums(), proptest::collection::vec(inner, 0..4)).prop_map(|(element_type, tuple_shapes)| ShapeProto {
                element_type,
                tuple_shapes,
                ..ShapeProto::default()
            })
        })
    }

    /// One edit of the bytes: flip, insert, delete or truncate.
    fn mutate(mut bytes: Vec<u8>, edits: &[(usize, u8, u8)]) -> Vec<u8> {
        for &(at, kind, byte) in edits {
            if bytes.is_empty() {
                bytes.push(byte);
                continue;
            }
            let at = at % bytes.len();
            match kind % 4 {
                0 => {
                    if let Some(b) = bytes.get_mut(at) {
                        *b = byte;
                    }
                }
                1 => bytes.insert(at, byte),
                2 => drop(bytes.remove(at)),
                _ => bytes.truncate(at),
            }
        }
        bytes
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn shapes_agree(shape in shape(), edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..3)) {
            let bytes = shape.encode_to_vec();
            agree::<ShapeProto>(&bytes)?;
            prop_assert!(ShapeProto::decode_canonical(&bytes).is_some(), "canonical {bytes:02x?} refused");
            agree::<ShapeProto>(&mutate(bytes.clone(), &edits))?;
            // The same bytes read as the other messages.
            agree::<LayoutProto>(&bytes)?;
            agree::<ProgramShapeProto>(&bytes)?;
        }

        #[test]
        fn layouts_agree(layout in layout(), edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..3)) {
            let bytes = layout.encode_to_vec();
            prop_assert!(LayoutProto::decode_canonical(&bytes).is_some(), "canonical {bytes:02x?} refused");
            agree::<LayoutProto>(&mutate(bytes, &edits))?;
        }

        #[test]
        fn program_shapes_agree(
            parameters in proptest::collection::vec(shape(), 0..3),
            names in proptest::collection::vec(".{0,3}", 0..3),
            result in proptest::option::of(shape()),
            edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..3),
        ) {
            let program = ProgramShapeProto { parameters, parameter_names: names, result };
            let bytes = program.encode_to_vec();
            prop_assert!(ProgramShapeProto::decode_canonical(&bytes).is_some(), "canonical {bytes:02x?} refused");
            agree::<ProgramShapeProto>(&mutate(bytes, &edits))?;
        }

        #[test]
        fn random_bytes_agree(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            agree::<ShapeProto>(&bytes)?;
            agree::<LayoutProto>(&bytes)?;
            agree::<ProgramShapeProto>(&bytes)?;
        }
    }

    /// Nesting at and beyond the scanner's limit is left to the scanner.
    #[test]
    fn deep_nesting_is_left_to_the_scanner() {
        for levels in [99, 100, 101] {
            let tuple = |tuple_shapes| ShapeProto { element_type: 13, tuple_shapes, ..ShapeProto::default() };
            let nested = (0..levels).fold(tuple(vec![]), |inner, _| tuple(vec![inner]));
            let bytes = nested.encode_to_vec();
            agree::<ShapeProto>(&bytes).unwrap();
            assert_eq!(ShapeProto::decode_canonical(&bytes).is_some(), levels <= 100, "{levels}");
        }
    }

    /// Every committed fuzz input of the decode target, read as each message.
    #[test]
    fn fuzz_corpus_agrees() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
        let mut seen = 0;
        for kind in ["corpus", "regressions"] {
            let Ok(entries) = std::fs::read_dir(root.join(kind).join("decode")) else { continue };
            for entry in entries {
                let bytes = std::fs::read(entry.unwrap().path()).unwrap();
                agree::<ShapeProto>(&bytes).unwrap();
                agree::<LayoutProto>(&bytes).unwrap();
                agree::<ProgramShapeProto>(&bytes).unwrap();
                seen += 1;
            }
        }
        assert!(seen > 0);
    }
}
