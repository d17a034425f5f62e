//! The checks the fuzz targets run, one public function per target.
//!
//! Both the libFuzzer binaries (`fuzz_targets/*.rs`) and the stable replay test
//! (`tests/it/fuzz_corpus.rs` in the library, which includes this file with `#[path]`) call these
//! functions, so every corpus file is checked by exactly the same code on stable Rust. A check
//! returns normally for any input the library handles correctly (an `Err` is a correct answer) and
//! panics when a property is broken: that panic is the crash libFuzzer reports.
//!
//! This file uses only `xla_shape` (with its `cli` feature) and `serde_json`: the replay test
//! compiles it as part of the library's test suite, which has both.

use std::fmt::Debug;

use xla_shape::codec::{self, Decoded, XlaMessage};
use xla_shape::physical::{PhysicalMap, Slot};
use xla_shape::proto::{LayoutProto, ProgramShapeProto, ShapeProto, TileProto};
use xla_shape::relayout::{RelayoutPlan, StorePolicy};
use xla_shape::validate::{self, LayoutMode};
use xla_shape::{
    ArrayShape, Dim, Layout, PrimitiveType, Shape, ShapeBuf, bitcast, hlo, index, padding, size, text, util,
};

/// Target `decode`: bytes → strict and lenient decode → validate (both modes) → print → parse →
/// encode → compare (spec README P4, P6, P8, P19).
///
/// The first byte (modulo 4) picks the message, the rest is its serialized form: 0 `ShapeProto`,
/// 1 `LayoutProto`, 2 `ProgramShapeProto`, 3 `HloModuleProto` (`fuzz/seeds.py` writes them so).
pub fn decode(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else { return };
    match selector % 4 {
        0 => decode_message(bytes, check_shape),
        1 => decode_message(bytes, check_layout),
        2 => decode_message(bytes, check_program_shape),
        _ => decode_hlo_module(bytes),
    }
}

/// Target `text`: a string → parse (raw and validated; as a shape and as a layout) → print →
/// parse → the same proto.
pub fn text(data: &[u8]) {
    let input = String::from_utf8_lossy(data);
    parse_shape_text(&input);
    parse_layout_text(&input);
}

/// Target `sharding`: selector byte 0 (even) → the rest is sharding text, 1 (odd) → `OpSharding`
/// bytes. Text that parses prints, and the print parses again to a fixed point (`docs/sharding.md`
/// §3.3); its bytes decode losslessly to the same sharding; bytes that decode re-encode to
/// themselves exactly when the lenient report is empty; every tiled sharding's placement (on a
/// small array) gives each device ranges inside the array, and each in-range element's holders
/// are exactly the devices whose ranges contain it.
pub fn sharding(data: &[u8]) {
    use xla_shape::proto::OpSharding;
    use xla_shape::sharding::HloSharding;
    let Some((&selector, rest)) = data.split_first() else { return };
    let sharding = if selector % 2 == 0 {
        match xla_shape::sharding::parse(&String::from_utf8_lossy(rest)) {
            Ok(sharding) => sharding,
            Err(_) => return,
        }
    } else {
        let Ok(decoded) = codec::decode_lenient::<OpSharding>(rest) else { return };
        assert_eq!(decoded.report.is_empty(), codec::encode(&decoded.message) == rest, "report vs re-encoding");
        let strict = codec::decode::<OpSharding>(rest);
        assert_eq!(strict.is_ok(), decoded.report.is_empty());
        match HloSharding::from_proto(&decoded.message) {
            Ok(sharding) => sharding,
            Err(_) => return,
        }
    };
    let printed = sharding.to_string();
    if !reparses(&sharding) {
        // XLA prints a named sharding's axis names unescaped (`docs/sharding.md` §9.5): the bytes
        // still go round.
        named_bytes_round_trip(&sharding);
        return;
    }
    let second: HloSharding = printed.parse().unwrap_or_else(|e| panic!("`{printed}` does not parse: {e}"));
    let settled = second.to_string();
    let third: HloSharding = settled.parse().unwrap_or_else(|e| panic!("`{settled}` does not parse: {e}"));
    assert_eq!(third.to_string(), settled, "print → parse is not a fixed point");
    let bytes = codec::encode(&third.to_proto());
    let decoded: OpSharding = codec::decode(&bytes[..]).expect("the crate's bytes decode strictly");
    // XLA's `FromProto` turns a one-device iota into `{replicated}`; from there bytes are stable.
    let again = HloSharding::from_proto(&decoded).expect("the crate's bytes are a valid sharding");
    let last = HloSharding::from_proto(&again.to_proto()).expect("the crate's bytes are a valid sharding");
    assert_eq!(last.to_string(), again.to_string());
    assert_eq!(codec::encode(&last.to_proto()), codec::encode(&again.to_proto()));
    for element in third.tuple_elements().unwrap_or(std::slice::from_ref(&third)) {
        check_placement(element);
    }
}

/// Whether the text XLA prints for `sharding` parses back: not when a named sharding's axis name
/// holds a quote or a backslash, which XLA prints as they are.
fn reparses(sharding: &xla_shape::sharding::HloSharding) -> bool {
    use xla_shape::sharding::ShardingKind;
    sharding.tuple_elements().unwrap_or(std::slice::from_ref(sharding)).iter().all(|element| match element.kind() {
        ShardingKind::Named(named) => named.mesh().axis_names().all(|n| !n.contains(['\'', '\\'])),
        _ => true,
    })
}

/// The crate's bytes of `sharding` decode strictly to the same sharding, and encode again to the
/// same bytes.
fn named_bytes_round_trip(sharding: &xla_shape::sharding::HloSharding) {
    use xla_shape::proto::OpSharding;
    use xla_shape::sharding::HloSharding;
    let bytes = codec::encode(&sharding.to_proto());
    let decoded: OpSharding = codec::decode(&bytes[..]).expect("the crate's bytes decode strictly");
    let again = HloSharding::from_proto(&decoded).expect("the crate's bytes are a valid sharding");
    assert_eq!(again.to_string(), sharding.to_string(), "bytes → sharding changed the text");
    assert_eq!(codec::encode(&again.to_proto()), bytes, "bytes are not a fixed point");
}

/// Target `named_sharding`: `OpSharding` bytes (named shardings, `docs/sharding.md` §9) →
/// lenient decode → `from_proto`. What is accepted prints, and (unless an axis name holds a
/// quote) parses back to the same text; its bytes are a fixed point; its V2 form
/// (`v3_to_v2_sharding`) is valid, a fixed point of `to_v2`, survives its own bytes, and places
/// every device exactly as the named sharding does, with the same tile shape.
pub fn named_sharding(data: &[u8]) {
    use xla_shape::proto::OpSharding;
    use xla_shape::sharding::{HloSharding, Placement};
    let Ok(decoded) = codec::decode_lenient::<OpSharding>(data) else { return };
    assert_eq!(decoded.report.is_empty(), codec::encode(&decoded.message) == data, "report vs re-encoding");
    let Ok(sharding) = HloSharding::from_proto(&decoded.message) else { return };
    let printed = sharding.to_string();
    if reparses(&sharding) {
        let parsed: HloSharding = printed.parse().unwrap_or_else(|e| panic!("`{printed}` does not parse: {e}"));
        assert_eq!(parsed.to_string(), printed, "print → parse changed the text");
        // Metadata is not printed; everything else is, but for the axis lists a bare `unreduced`
        // or `manual` stands for (`docs/sharding.md` §9.5).
        let strip = |s: &HloSharding| codec::encode(&s.clone().with_metadata(Vec::new()).to_proto());
        let bare = printed.ends_with(", unreduced}") || printed.ends_with(", manual}");
        if sharding.tuple_elements().is_none() && !bare {
            assert_eq!(strip(&parsed), strip(&sharding), "text lost a field");
        }
    }
    named_bytes_round_trip(&sharding);
    let v2 = sharding.to_v2().expect("a validated sharding converts");
    assert_eq!(v2.to_v2().expect("converts").to_string(), v2.to_string(), "to_v2 is not idempotent");
    let v2_bytes = codec::encode(&v2.to_proto());
    let v2_again = HloSharding::from_proto(&codec::decode(&v2_bytes[..]).expect("decodes")).expect("valid");
    assert_eq!(v2_again.to_v2().expect("converts").to_string(), v2_again.to_string());
    for (element, flat) in sharding
        .tuple_elements()
        .unwrap_or(std::slice::from_ref(&sharding))
        .iter()
        .zip(v2.tuple_elements().unwrap_or(std::slice::from_ref(&v2)))
    {
        check_placement(flat);
        let Some(tiled) = flat.as_tiled() else { continue };
        if tiled.tile_assignment().num_elements() > 4096 {
            continue;
        }
        let dims: Vec<i64> = tiled.tiles().iter().map(|&t| t.saturating_mul(2).saturating_sub(1)).collect();
        let (Ok(ours), Ok(theirs)) = (Placement::new(element, &dims, None), Placement::new(flat, &dims, None)) else {
            continue;
        };
        assert_eq!(ours.tile_shape(), theirs.tile_shape());
        for (a, b) in ours.shards().zip(theirs.shards()) {
            assert_eq!((a.device(), a.ranges().collect::<Vec<_>>()), (b.device(), b.ranges().collect::<Vec<_>>()));
        }
    }
}

/// Places a tiled sharding on a small array (each dimension its tile count plus one or minus one,
/// so tails are short or empty) and checks every element's holders against the shards' ranges.
fn check_placement(sharding: &xla_shape::sharding::HloSharding) {
    let Some(tiled) = sharding.as_tiled() else { return };
    let count = tiled.tile_assignment().num_elements();
    if !(2..=256).contains(&count) || tiled.data_rank() > 3 {
        return;
    }
    let dims: Vec<i64> =
        tiled.tiles().iter().enumerate().map(|(i, &t)| if i % 2 == 0 { t + 1 } else { t - 1 }).collect();
    let placement = xla_shape::sharding::Placement::new(sharding, &dims, None).expect("a valid placement");
    let shards: Vec<_> = placement.shards().collect();
    assert_eq!(shards.len() as u64, count);
    for shard in &shards {
        for (range, &dim) in shard.ranges().zip(&dims) {
            assert!(0 <= range.start && range.start <= range.end && range.end <= dim);
        }
    }
    let elements: i64 = dims.iter().product();
    for linear in 0..elements.min(512) {
        let mut rest = linear;
        let mut index = vec![0i64; dims.len()];
        for (i, &d) in dims.iter().enumerate().rev() {
            index[i] = rest % d;
            rest /= d;
        }
        let mut holders: Vec<u64> = placement.devices_holding(&index).expect("in bounds").map(|d| d.0).collect();
        holders.sort_unstable();
        let expected: Vec<u64> = shards
            .iter()
            .filter(|s| s.ranges().zip(&index).all(|(r, &i)| r.contains(&i)))
            .map(|s| s.device().0)
            .collect();
        assert_eq!(holders, expected, "holders of {index:?}");
    }
}

/// Target `hlo_text`: bytes → the HLO text reader, twice (whole, and through a one-byte
/// `BufReader`, which must give the same items and the same error); every instruction's shape
/// prints and parses back to itself; every constant that parses validates as a literal and its
/// XLA text parses back to the same bytes; a small statement limit fails cleanly.
pub fn hlo_text(data: &[u8]) {
    use xla_shape::hlo::text::{Item, TextOptions, TextReader};
    use xla_shape::literal::{Constant, Literal, parse_constant};

    fn items<R: std::io::BufRead>(reader: R, limit: usize, deep: bool) -> (Vec<String>, Option<String>) {
        let mut reader = TextReader::with_options(reader, TextOptions { max_statement_bytes: limit });
        let mut out = Vec::new();
        loop {
            match reader.next_item() {
                Ok(None) => break,
                Err(error) => {
                    assert!(reader.next_item().expect("after an error: nothing").is_none());
                    return (out, Some(error.to_string()));
                }
                Ok(Some(Item::Instruction(i))) => {
                    let printed = i.shape.to_string();
                    let attributes: Vec<String> = i.attributes().map(|(n, v)| format!("{n}={v}")).collect();
                    out.push(format!("{} {} {printed} {} {attributes:?}", i.computation, i.name, i.opcode));
                    if deep {
                        let back = text::parse_shape_raw(&printed).expect("a parsed shape prints and parses back");
                        assert_eq!(&back, i.shape, "{printed}");
                        if let Ok(Some(Constant::Literal(proto))) = i.constant() {
                            let literal = Literal::try_new(&proto).expect("a parsed constant validates");
                            let again = literal.to_text(None).expect("prints");
                            match parse_constant(i.shape, &again) {
                                Ok(Constant::Literal(back)) => {
                                    assert_eq!(codec::encode(&*back), codec::encode(&*proto), "{again}");
                                }
                                other => panic!("{again}: {other:?}"),
                            }
                        }
                    }
                }
                Ok(Some(Item::Module(m))) => out.push(format!("module {} {:?}", m.name, m.entry_computation_layout)),
                Ok(Some(Item::Computation(c))) => out.push(format!("computation {} {}", c.name, c.entry)),
                Ok(Some(Item::ComputationEnd(e))) => out.push(format!("end {} {:?}", e.name, e.program_shape)),
            }
        }
        (out, None)
    }
    let whole = items(data, 1 << 20, true);
    let trickled = items(std::io::BufReader::with_capacity(1, data), 1 << 20, false);
    assert_eq!(whole, trickled);
    let _ = items(data, 64, false);
}

/// Target `stablehlo`: bytes → the StableHLO reader (whole and one byte at a time) → the same
/// items either way; every listed shape prints and parses back; after an error nothing more; a
/// short statement limit is an error, never a panic; `is_mlir_text` never panics.
pub fn stablehlo(data: &[u8]) {
    use xla_shape::hlo::mlir::{Item, MlirReader, is_mlir_text};
    use xla_shape::hlo::text::TextOptions;

    fn items<R: std::io::BufRead>(reader: R, limit: usize) -> (Vec<String>, Option<String>) {
        let mut reader = MlirReader::with_options(reader, TextOptions { max_statement_bytes: limit });
        let mut out = Vec::new();
        loop {
            match reader.next_item() {
                Ok(None) => break,
                Err(error) => {
                    assert!(reader.next_item().expect("after an error: nothing").is_none());
                    return (out, Some(error.to_string()));
                }
                Ok(Some(Item::Function(f))) => {
                    for value in f.parameters.iter().chain(f.results) {
                        if let Some(shape) = &value.shape {
                            let printed = shape.to_string();
                            let back = text::parse_shape_raw(&printed).expect("a listed shape prints and parses back");
                            assert_eq!(&back, shape, "{printed}");
                        }
                        out.push(format!("{} {} {:?}", f.name, value.type_text, value.attributes));
                    }
                }
                Ok(Some(Item::Op(op))) => {
                    for i in 0..op.len() {
                        let shape = op.shape(i).expect("a listed result has a shape");
                        out.push(format!("{} {} {shape}", op.name, op.result_name(i)));
                    }
                }
                Ok(Some(Item::Module(m))) => out.push(format!("module {:?} {:?}", m.name, m.attributes)),
                Ok(Some(Item::Mesh(m))) => out.push(format!("mesh {} {}", m.name, m.mesh)),
                Ok(Some(Item::FunctionEnd(name))) => out.push(format!("end {name}")),
            }
        }
        (out, None)
    }
    let _ = is_mlir_text(data);
    let whole = items(data, 1 << 20);
    let trickled = items(std::io::BufReader::with_capacity(1, data), 1 << 20);
    assert_eq!(whole, trickled);
    let _ = items(data, 64);
}

/// Target `literal`: selector byte 0 (even) → the rest is a `LiteralProto`, 1 (odd) → an
/// `HloSnapshot`. Strict and lenient decode agree with prost (compared through encodings: values
/// may be NaN), the report is empty exactly when re-encoding gives the input back, and every
/// literal that validates reads (values, XLA text with and without the limit); an array read
/// and rebuilt gives its own bytes back.
pub fn literal(data: &[u8]) {
    use xla_shape::literal::Literal;
    use xla_shape::proto::LiteralProto;
    let Some((&selector, bytes)) = data.split_first() else { return };
    if selector % 2 == 1 {
        if let Ok(found) = hlo::literals(bytes, hlo::HloMessage::Snapshot) {
            for sited in found {
                if let Ok(decoded) = codec::decode_lenient::<LiteralProto>(sited.bytes) {
                    if let Ok(literal) = Literal::try_new(&decoded.message) {
                        check_literal(&literal);
                    }
                }
            }
        }
        return;
    }
    let strict = codec::decode::<LiteralProto>(bytes);
    let by_prost = <LiteralProto as xla_shape::prost::Message>::decode(bytes);
    let Decoded { message, report } = match codec::decode_lenient::<LiteralProto>(bytes) {
        Ok(decoded) => decoded,
        Err(error) => {
            assert!(strict.is_err() && by_prost.is_err(), "the wire scan rejects what prost accepts: {error}");
            return;
        }
    };
    let encoded = codec::encode(&message);
    assert_eq!(by_prost.as_ref().map(codec::encode).ok(), Some(encoded.clone()), "lenient decode differs from prost");
    assert_eq!(report.is_empty(), encoded == bytes, "report and re-encoding disagree: {report}");
    assert_eq!(strict.is_ok(), report.is_empty());
    let Ok(literal) = Literal::try_new(&message) else { return };
    check_literal(&literal);
    if let Some(array) = literal.as_array() {
        if array.proto().dynamic_sizes.is_empty() {
            let rebuilt = rebuild(array);
            assert_eq!(codec::encode(&rebuilt), codec::encode(array.proto()), "read → build changed the literal");
        }
    }
}

/// Reading and printing a validated literal succeed.
fn check_literal(literal: &xla_shape::literal::Literal<'_>) {
    let full = literal.to_text(None).expect("a validated literal prints");
    let limited = literal.to_text(Some(10)).expect("a validated literal prints");
    assert!(limited == full || limited == "{...}", "the limit changed more than eliding: {limited}");
    assert_eq!(literal.to_string(), full);
    if let Some(array) = literal.as_array() {
        let values = array.values().expect("a validated literal reads");
        assert_eq!(values.len(), array.element_count());
    }
}

/// The literal of `array`'s shape built from its values.
fn rebuild(array: xla_shape::literal::ArrayLiteral<'_>) -> xla_shape::proto::LiteralProto {
    use xla_shape::literal::{Values, make_array_literal as make};
    let shape = array.shape();
    let built = match array.values().expect("a validated literal reads") {
        Values::Pred(v) => make(shape, &v),
        Values::S8(v) => make(shape, &v),
        Values::S16(v) => make(shape, &v),
        Values::S32(v) => make(shape, &v),
        Values::S64(v) => make(shape, &v),
        Values::U8(v) => make(shape, &v),
        Values::U16(v) => make(shape, &v),
        Values::U32(v) => make(shape, &v),
        Values::U64(v) => make(shape, &v),
        Values::F16(v) => make(shape, &v),
        Values::BF16(v) => make(shape, &v),
        Values::F32(v) => make(shape, &v),
        Values::F64(v) => make(shape, &v),
        Values::C64(v) => make(shape, &v),
        Values::C128(v) => make(shape, &v),
        Values::Small(v) => make(shape, &v),
        other => panic!("unexpected values {other:?}"),
    };
    let mut built = built.expect("values of a validated literal build");
    // Sign-extended sub-byte values are accepted on input and written with their low bits only.
    if let Some(bits) = shape.element_type().bit_width().filter(|&b| b < 8 && shape.element_type().is_signed_integral())
    {
        let mask = u8::MAX >> (8 - bits);
        let original = array.proto();
        for (field, source) in
            [(&mut built.s1s, &original.s1s), (&mut built.s2s, &original.s2s), (&mut built.s4s, &original.s4s)]
        {
            if source.iter().any(|b| b & !mask != 0) {
                field.clone_from(source);
            }
        }
    }
    built
}

/// The wire-level properties every message shares, then `check` on the decoded message.
fn decode_message<M: XlaMessage + PartialEq + Debug + Clone>(bytes: &[u8], check: fn(&M)) {
    let strict = codec::decode::<M>(bytes);
    let by_prost = M::decode(bytes);
    let Decoded { message, report } = match codec::decode_lenient::<M>(bytes) {
        Ok(decoded) => decoded,
        Err(error) => {
            assert!(strict.is_err(), "strict decode accepts what lenient decode rejects: {error}");
            assert!(by_prost.is_err(), "the wire scan rejects what prost accepts: {error}");
            let _ = error.to_string();
            return;
        }
    };
    assert_eq!(by_prost.as_ref().ok(), Some(&message), "lenient decode differs from prost");
    let encoded = codec::encode(&message);
    // Nothing lost (P4, P6): the report is empty exactly when re-encoding gives the input back.
    assert_eq!(
        report.is_empty(),
        encoded == bytes,
        "report {report:?} disagrees with the re-encoding (identical: {})",
        encoded == bytes
    );
    match &strict {
        Ok(strict) => {
            assert!(report.is_empty(), "strict decode accepts input with findings: {report:?}");
            assert_eq!(strict, &message, "strict and lenient decode differ");
        }
        Err(error) => {
            assert!(!report.is_empty(), "strict decode rejects input without findings: {error}");
            let _ = error.to_string();
        }
    }
    let _ = report.to_string();
    assert_canonical(&message);
    let mut xla_form = message.clone();
    if codec::to_xla_form(&mut xla_form).is_ok() {
        assert_canonical(&xla_form);
        let mut twice = xla_form.clone();
        assert!(codec::to_xla_form(&mut twice).is_ok() && twice == xla_form, "to_xla_form is not idempotent");
    } else {
        assert_eq!(xla_form, message, "a failed to_xla_form changed the message");
    }
    check(&message);
}

/// The crate's own encoding is canonical and decodes to the same message.
fn assert_canonical<M: XlaMessage + PartialEq + Debug>(message: &M) {
    let encoded = codec::encode(message);
    match codec::decode_lenient::<M>(encoded.as_slice()) {
        Ok(again) => {
            assert!(again.report.is_empty(), "the crate's encoding has findings: {:?}", again.report);
            assert_eq!(&again.message, message, "encode → decode changed the message");
        }
        Err(error) => panic!("the crate's encoding does not decode: {error}"),
    }
}

fn decode_hlo_module(bytes: &[u8]) {
    let header = hlo::header(bytes, hlo::HloMessage::Module);
    let mut walked = true;
    for found in hlo::walk(bytes, hlo::HloMessage::Module) {
        match found {
            Ok(hlo::Found::Shape(sited)) => {
                let _ = sited.site.to_string();
                check_shape(&sited.shape);
            }
            Ok(hlo::Found::Report(found)) => {
                assert!(!found.report.is_empty(), "the walk reports a shape without findings at {}", found.site);
                let _ = found.report.to_string();
            }
            Err(_) => walked = false,
        }
    }
    // The header reads a subset of what the walk reads.
    assert!(!walked || header.is_ok(), "the walk succeeds where the header fails");
}

fn check_program_shape(proto: &ProgramShapeProto) {
    let printed = proto.to_string();
    let strict = validate::validate_program_shape(proto, LayoutMode::Strict);
    let optional = validate::validate_program_shape(proto, LayoutMode::Optional);
    assert!(strict.is_err() || optional.is_ok(), "strict accepts what optional-layout rejects: {printed}");
    for shape in proto.parameters.iter().chain(&proto.result) {
        check_shape(shape);
    }
}

fn check_layout(proto: &LayoutProto) {
    let printed = text::layout_to_string(proto);
    let Ok(layout) = Layout::try_new(proto) else { return };
    assert_eq!(layout.to_string(), printed, "the view prints differently from the raw proto");
    // A standalone layout may hold sparse-era lists of any length (its rank is unknown); text
    // has no place for them, so only lists that the XLA form drops survive the round trip.
    let rank = proto.minor_to_major.len();
    let lists = [proto.dim_level_types.len(), proto.dim_unique.len(), proto.dim_ordered.len()];
    if !text_keeps_layout(proto) || lists.iter().any(|&len| len != 0 && len != rank) {
        return;
    }
    match text::parse_layout(&printed) {
        Ok(parsed) => assert_eq!(parsed.proto(), &xla_form(proto), "print → parse changed the layout {printed}"),
        Err(error) => panic!("the printed valid layout {printed} does not parse: {error}"),
    }
}

/// Every check that applies to one decoded or parsed shape.
pub fn check_shape(proto: &ShapeProto) {
    let printed = text::shape_to_string(proto, true);
    let without_layout = text::shape_to_string(proto, false);
    let strict = validate::validate_shape(proto, LayoutMode::Strict);
    let optional = validate::validate_shape(proto, LayoutMode::Optional);
    assert!(strict.is_err() || optional.is_ok(), "strict accepts what optional-layout rejects: {printed}");
    if let Err(error) = &optional {
        // Error messages are built from the input; building them must not panic either.
        let _ = error.to_string();
        return;
    }
    let Ok(shape) = Shape::try_new_optional_layout(proto) else { unreachable!("validated above") };
    assert_eq!(shape.to_string(), printed, "the view prints differently from the raw proto");
    let _ = text::describe_sizes(shape).to_string();
    // The crate's own account of what text loses agrees with the round trip below.
    assert_eq!(text::lost_in_text(shape).is_empty(), text_keeps_shape(proto), "lost_in_text disagrees on {printed}");
    check_util(shape);
    check_sizes(shape);

    // Text round trips (text-format.md §6). Without layouts, any valid shape comes back with the
    // same dimensions; with layouts, a strictly valid one comes back in XLA form.
    match text::parse_shape(&without_layout) {
        Ok(parsed) => assert_eq!(
            text::shape_to_string(parsed.proto(), false),
            without_layout,
            "print → parse changed {without_layout}"
        ),
        Err(error) => panic!("the printed valid shape {without_layout} does not parse: {error}"),
    }
    if strict.is_ok() && text_keeps_shape(proto) {
        match text::parse_shape(&printed) {
            Ok(parsed) => assert_eq!(parsed.proto(), &xla_form(proto), "print → parse changed {printed}"),
            Err(error) => panic!("the printed valid shape {printed} does not parse: {error}"),
        }
    }
}

/// Whether text can hold everything in the shape's layouts (text-format.md §6: the legacy padding
/// fields and a negative `dynamic_shape_metadata_prefix_bytes` are never printed; as in XLA, a
/// non-integral index or pointer type prints as `#(invalid)`, which does not parse).
fn text_keeps_shape(proto: &ShapeProto) -> bool {
    proto.layout.as_deref().is_none_or(text_keeps_layout) && proto.tuple_shapes.iter().all(text_keeps_shape)
}

fn text_keeps_layout(layout: &LayoutProto) -> bool {
    let printable_type = |raw: i32| raw == 0 || PrimitiveType::from_i32(raw).is_some_and(PrimitiveType::is_integral);
    layout.padded_dimensions.is_empty()
        && layout.padding_value == 0
        && layout.dynamic_shape_metadata_prefix_bytes >= 0
        && printable_type(layout.index_primitive_type)
        && printable_type(layout.pointer_primitive_type)
        && layout.physical_shape.as_deref().is_none_or(text_keeps_shape)
}

fn xla_form<M: XlaMessage + Clone>(message: &M) -> M {
    let mut converted = message.clone();
    assert!(codec::to_xla_form(&mut converted).is_ok(), "to_xla_form fails on a valid message");
    converted
}

/// The `util` operations that take nothing but the shape: none may panic, every shape they build
/// must validate, and a shape equals itself.
fn check_util(shape: Shape<'_>) {
    assert!(util::equal(shape, shape), "a shape is not equal to itself: {shape}");
    assert!(util::compatible(shape, shape), "a shape is not compatible with itself: {shape}");
    assert!(util::layouts_in_shapes_equal(shape, shape), "layouts differ from themselves: {shape}");
    let built = [
        util::with_default_layout(shape),
        util::clear_layout(shape),
        util::clear_tiles(shape),
        util::device_shape_to_host_shape(shape),
        util::make_shape_with_descending_layout_and_same_physical_layout(shape),
    ];
    for result in built.into_iter().flatten() {
        assert_valid(result.proto());
    }
    let _ = util::device_shape_is_host_shape(shape);
    if let Some(array) = shape.as_array() {
        let _ = util::true_num_dimensions(array);
        let _ = util::has_descending_layout(array);
        let _ = util::has_ascending_layout(array);
        if let Ok(dropped) = util::drop_degenerate_dimensions(array) {
            assert_valid(dropped.proto());
        }
    }
}

fn assert_valid(proto: &ShapeProto) {
    if let Err(error) = validate::validate_shape(proto, LayoutMode::Optional) {
        panic!("a shape the crate built does not validate: {proto}: {error}");
    }
}

fn parse_shape_text(input: &str) {
    let raw = text::parse_shape_raw(input);
    let validated = text::parse_shape(input);
    let proto = match (&raw, &validated) {
        (Ok(raw), Ok(validated)) => {
            assert_eq!(raw, validated.proto(), "raw and validated parses differ on {input:?}");
            raw
        }
        (Ok(raw), Err(error)) => {
            let strict = validate::validate_shape(raw, LayoutMode::Strict);
            assert!(strict.is_err(), "validated parse rejects a strictly valid raw parse of {input:?}: {error}");
            raw
        }
        (Err(error), Ok(_)) => panic!("raw parse rejects what validated parse accepts, {input:?}: {error}"),
        (Err(error), Err(_)) => {
            let _ = error.to_string();
            return;
        }
    };
    assert_canonical(proto);
    assert_eq!(&xla_form(proto), proto, "the parser's output is not in XLA form: {input:?}");
    // The printed form is a fixed point and parses back to the same proto.
    let printed = text::shape_to_string(proto, true);
    match text::parse_shape_raw(&printed) {
        Ok(again) => {
            assert_eq!(text::shape_to_string(&again, true), printed, "print → parse → print is not stable");
            if text_keeps_shape(proto) {
                assert_eq!(&again, proto, "print → parse changed {input:?} (printed {printed})");
            }
        }
        Err(error) => {
            assert!(!text_keeps_shape(proto), "{input:?} parses, but its printed form {printed} does not: {error}");
        }
    }
    check_shape(proto);
}

fn parse_layout_text(input: &str) {
    let raw = text::parse_layout_raw(input);
    let validated = text::parse_layout(input);
    let proto = match (&raw, &validated) {
        (Ok(raw), Ok(validated)) => {
            assert_eq!(raw, validated.proto(), "raw and validated parses differ on {input:?}");
            raw
        }
        (Ok(raw), Err(error)) => {
            assert!(
                validate::validate_layout(raw).is_err(),
                "validated parse rejects a valid layout {input:?}: {error}"
            );
            raw
        }
        (Err(error), Ok(_)) => panic!("raw parse rejects what validated parse accepts, {input:?}: {error}"),
        (Err(error), Err(_)) => {
            let _ = error.to_string();
            return;
        }
    };
    assert_canonical(proto);
    let printed = text::layout_to_string(proto);
    match text::parse_layout_raw(&printed) {
        Ok(again) => {
            assert_eq!(text::layout_to_string(&again), printed, "print → parse → print is not stable");
            if text_keeps_layout(proto) {
                assert_eq!(&again, proto, "print → parse changed {input:?} (printed {printed})");
            }
        }
        Err(error) => {
            assert!(!text_keeps_layout(proto), "{input:?} parses, but its printed form {printed} does not: {error}");
        }
    }
    check_layout(proto);
}

/// Target `index`: the bytes build a valid array shape (any element type, rank ≤ 6, small
/// dimensions, any permutation, nested tiles with `*` and rank extension, element sizes, tail
/// padding, legacy padding) and an index; then index → slot → index, linear ⇄ multi-index, and
/// for small shapes every slot of the buffer.
pub fn index(data: &[u8]) {
    let mut bytes = Bytes(data);
    let Some(shape) = array_from_bytes(&mut bytes) else { return };
    let Some(array) = shape.as_array() else { return };
    check_sizes(shape.view());
    let Ok(map) = PhysicalMap::new(array) else { return };
    let dims = array.dimensions();
    let elements: u64 = dims.iter().map(|&d| d.unsigned_abs()).product();
    let index: Vec<i64> = dims.iter().map(|&d| if d > 0 { i64::from(bytes.next()) % d } else { 0 }).collect();
    if elements > 0 {
        check_element(array, &map, &index);
    } else {
        assert!(map.slot(&index).is_err(), "a zero-element array has a slot for {index:?}");
    }
    // Out of bounds, negative, and wrong-length indices are errors.
    if let Some((d, &bound)) = dims.iter().enumerate().next_back() {
        let mut beyond = index.clone();
        beyond[d] = bound;
        assert!(map.slot(&beyond).is_err(), "{shape}: {beyond:?} is out of bounds");
        beyond[d] = -1;
        assert!(map.slot(&beyond).is_err(), "{shape}: {beyond:?} is negative");
    }
    assert!(map.slot(&[0; 7]).is_err(), "{shape}: an index of rank 7 has a slot");
    assert!(map.index_of_slot(Slot(map.storage_slots())).is_err(), "{shape}: a slot beyond the buffer");
    // Small buffers: every slot maps back to the element that maps to it, and exactly
    // `elements` slots hold one.
    if map.storage_slots() <= 4096 {
        let mut held = 0u64;
        for slot in 0..map.storage_slots() {
            let found = map.index_of_slot(Slot(slot)).expect("a slot below storage_slots");
            if let Some(found) = found {
                assert_eq!(map.slot(&found).ok(), Some(Slot(slot)), "{shape}: slot {slot} → {found:?} → another slot");
                held += 1;
            }
        }
        assert_eq!(held, elements, "{shape}: {held} slots hold an element, but it has {elements} elements");
    }
}

/// Target `relayout`: bytes → two valid layouts of one array (any type, rank ≤ 6, tiles with `*`
/// and rank extension, element sizes, tail and legacy padding) and the source bytes; the plan
/// either refuses with an error or moves every element's value bits to where the destination's
/// `PhysicalMap` puts them, and back again (A → B → A keeps every element).
pub fn relayout(data: &[u8]) {
    let mut bytes = Bytes(data);
    let Some(a) = array_from_bytes(&mut bytes) else { return };
    let Some(b) = array_from_bytes(&mut bytes) else { return };
    let mut proto = b.proto().clone();
    proto.element_type = a.proto().element_type;
    proto.dimensions.clone_from(&a.proto().dimensions);
    proto.is_dynamic_dimension.clone_from(&a.proto().is_dynamic_dimension);
    if let Some(layout) = proto.layout.as_mut() {
        layout.padding_value = i32::from(bytes.next() % 7);
    }
    let Ok(b) = ShapeBuf::try_from_proto(proto) else { return };
    let (Some(sa), Some(sb)) = (a.as_array(), b.as_array()) else { return };
    let (Ok(ma), Ok(mb)) = (PhysicalMap::new(sa), PhysicalMap::new(sb)) else { return };
    if ma.storage_bytes() > 1 << 16 || mb.storage_bytes() > 1 << 16 {
        return;
    }
    let Ok(there) = RelayoutPlan::new(sa, sb) else { return };
    let back = RelayoutPlan::new(sb, sa).expect("the reverse of a valid plan is valid");
    let fill: Vec<u8> = bytes.0.to_vec();
    let source: Vec<u8> = (0..there.src_len())
        .map(|k| fill.get(k % fill.len().max(1)).copied().unwrap_or(u8::try_from(k % 251).unwrap_or(0)))
        .collect();
    if let Some(short) = source.get(1..) {
        assert!(there.run(short, &mut vec![0; there.dst_len()]).is_err(), "{a} → {b}: a short source ran");
    }
    let middle = there.run_to_vec(&source).expect("buffers of the planned lengths");
    // Streaming stores (`Auto` uses them only from 16 MiB) write the same bytes.
    let streaming = RelayoutPlan::with_stores(sa, sb, StorePolicy::Streaming).expect("the same plan, other stores");
    assert!(
        streaming.run_to_vec(&source).expect("buffers of the planned lengths") == middle,
        "{a} → {b}: streaming stores differ"
    );
    let again = back.run_to_vec(&middle).expect("buffers of the planned lengths");
    let container = u64::from(sa.element_type().byte_width().unwrap_or(1)) * 8;
    let (va, vb) = (ma.bits_per_slot().min(container), mb.bits_per_slot().min(container));
    let keep = va.min(vb);
    let read = |buf: &[u8], at: u64, bits: u64| -> u128 {
        (0..bits.min(128)).fold(0, |v, k| v | (u128::from((buf[((at + k) / 8) as usize] >> ((at + k) % 8)) & 1) << k))
    };
    let dims: Vec<i64> = sa.dimensions().to_vec();
    if dims.iter().any(|&d| d <= 0) {
        return;
    }
    let mut index = vec![0i64; dims.len()];
    loop {
        let (oa, ob) = (ma.bit_offset(&index).expect("in bounds"), mb.bit_offset(&index).expect("in bounds"));
        let want = read(&source, oa, keep);
        assert_eq!(read(&middle, ob, mb.bits_per_slot()), want, "{a} → {b}: element {index:?}");
        assert_eq!(read(&again, oa, keep), want, "{a} → {b} → back: element {index:?}");
        let Some(d) = (0..dims.len()).rev().find(|&d| index[d] + 1 < dims[d]) else { break };
        index[d] += 1;
        for later in &mut index[d + 1..] {
            *later = 0;
        }
    }
}

/// One in-bounds element: slot round trip, bit offset, and the untiled linear index round trip.
fn check_element(array: ArrayShape<'_>, map: &PhysicalMap, index: &[i64]) {
    let slot = map.slot(index).unwrap_or_else(|e| panic!("{array}: {index:?} has no slot: {e}"));
    assert!(slot.get() < map.storage_slots(), "{array}: slot {slot} beyond {}", map.storage_slots());
    assert_eq!(
        map.index_of_slot(slot).ok().flatten().as_deref(),
        Some(index),
        "{array}: slot {slot} maps back elsewhere"
    );
    assert_eq!(xla_shape::physical::physical_slot(array, index).ok(), Some(slot), "{array}: one-shot slot differs");
    assert_eq!(map.bit_offset(index).ok(), Some(slot.get() * map.bits_per_slot()), "{array}: bit offset");
    assert!(index::index_in_bounds(array, index), "{array}: {index:?} not in bounds");
    if let Ok(linear) = index::multidimensional_index_to_linear_index(array, index) {
        let back = index::linear_index_to_multidimensional_index(array, linear);
        assert_eq!(back.as_deref().ok(), Some(index), "{array}: linear {linear} maps back elsewhere");
    }
    let mut bumped = index.to_vec();
    let _ = index::bump_indices(array, &mut bumped);
}

/// Reads the fuzzer's bytes, then zeros when they run out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        let Some((&first, rest)) = self.0.split_first() else { return 0 };
        self.0 = rest;
        first
    }

    fn below(&mut self, n: usize) -> usize {
        usize::from(self.next()) % n.max(1)
    }

    fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[self.below(choices.len())]
    }
}

const TILE_ENTRIES: [i64; 8] = [1, 2, 3, 4, 8, 128, i64::MIN, 2];

/// A strictly valid array shape built from the bytes, or `None` when the choices do not validate
/// (say, a legacy padding together with tiles).
fn array_from_bytes(bytes: &mut Bytes<'_>) -> Option<ShapeBuf> {
    let arrays: Vec<PrimitiveType> = PrimitiveType::ALL.iter().copied().filter(|t| t.is_array()).collect();
    let element_type = bytes.pick(&arrays);
    let rank = bytes.below(7);
    let dimensions: Vec<i64> = (0..rank).map(|_| i64::from(bytes.next() % 9)).collect();
    let is_dynamic_dimension: Vec<bool> = (0..rank).map(|_| bytes.next() % 8 == 0).collect();
    let mut minor_to_major: Vec<i64> = (0..7).take(rank).collect();
    for i in (1..rank).rev() {
        minor_to_major.swap(i, bytes.below(i + 1));
    }
    let tiles = (0..bytes.below(3))
        .map(|_| TileProto { dimensions: (0..=bytes.below(rank + 1)).map(|_| bytes.pick(&TILE_ENTRIES)).collect() })
        .collect();
    let element_size_in_bits = bytes.pick(&[0, 0, 1, 2, 4, 8, 3, 32]);
    let tail_padding_alignment_in_elements = bytes.pick(&[1, 1, 0, 2, 3, 8]);
    let padded_dimensions = if bytes.next() % 4 == 0 {
        dimensions.iter().map(|&d| d + i64::from(bytes.next() % 3)).collect()
    } else {
        vec![]
    };
    let layout = LayoutProto {
        minor_to_major,
        tiles,
        element_size_in_bits,
        tail_padding_alignment_in_elements,
        padded_dimensions,
        ..LayoutProto::default()
    };
    let proto = ShapeProto {
        element_type: element_type.into(),
        dimensions,
        is_dynamic_dimension,
        layout: Some(Box::new(layout)),
        ..ShapeProto::default()
    };
    ShapeBuf::try_from_proto(proto).ok()
}

/// The size, padding, iteration and bitcast functions of one valid shape: none may panic, and the
/// physical model agrees with itself.
fn check_sizes(shape: Shape<'_>) {
    let _ = size::byte_size_of(shape, 8);
    let _ = size::byte_size_of_elements_recursive(shape);
    let Some(array) = shape.array_or_buffer() else { return };
    let _ = size::elements_in(array);
    let _ = size::byte_size_of_elements(array);
    let _ = size::array_size(array);
    let _ = size::array_data_size(array);
    let _ = size::max_elements_in_per_split(array);
    let _ = size::unpacked_byte_strides(array);
    let _ = size::byte_strides(array);
    let _ = padding::padded_extents(array);
    let _ = padding::padding_fill(array);
    let _ = xla_shape::tiling::expanded_shape(array);
    for d in 0..array.rank() {
        let _ = size::max_split_size(array, Dim(d));
        let _ = index::dimension_stride(array, Dim(d));
    }
    let _ = bitcast::reshape_is_bitcast(array, array, false);
    let _ = bitcast::is_reshape_or_transpose_bitcast(array, array, false);
    if let Ok(map) = PhysicalMap::new(array) {
        assert_eq!(size::storage_slots(array).ok(), Some(map.storage_slots()), "{array}: storage slots differ");
        assert_eq!(size::storage_bytes(array).ok(), Some(map.storage_bytes()), "{array}: storage bytes differ");
        let first = vec![0; array.rank()];
        if array.dimensions().iter().all(|&d| d > 0) {
            check_element(array, &map, &first);
            let last: Vec<i64> = array.dimensions().iter().map(|&d| d - 1).collect();
            check_element(array, &map, &last);
        }
        if map.storage_slots() > 0 {
            let _ = map.index_of_slot(Slot(map.storage_slots() - 1));
        }
    }
    if let Ok(mut indices) = index::Indices::in_layout_order(array) {
        for _ in 0..64 {
            if indices.next_index().is_none() {
                break;
            }
        }
    }
}

#[cfg(feature = "cli")]
pub use cli_target::cli;

/// The `cli` target, there when the `cli` feature (of this crate, or of `xla-shape` when the
/// replay test includes this file) gives the library its command-line tool.
#[cfg(feature = "cli")]
mod cli_target {
    /// One way of calling the command-line tool: its arguments, how many operands the input's first
    /// lines give, and whether the first line is the `--hex` shape instead.
    struct CliForm {
        args: &'static [&'static str],
        operands: usize,
        hex_source: bool,
    }

    const fn form(args: &'static [&'static str], operands: usize) -> CliForm {
        CliForm { args, operands, hex_source: false }
    }

    /// Every subcommand, in each input mode that reads the fuzzer's bytes (stdin, `--lines`,
    /// operands, `--hex` shapes). `hlo --lines` and `--file` are left out: they open the paths
    /// they are given.
    const CLI_FORMS: &[CliForm] = &[
        form(&["decode", "--lines"], 0),
        form(&["decode", "--lines", "--json", "--type", "layout"], 0),
        form(&["decode", "--lines", "--type", "program-shape", "--optional-layout"], 0),
        form(&["validate", "--lines", "--json"], 0),
        form(&["decode"], 0),
        form(&["decode", "--json", "--type", "layout"], 0),
        form(&["validate", "--type", "program-shape", "--optional-layout"], 0),
        form(&["decode", "--hex", "--json"], 0),
        form(&["validate", "--hex"], 0),
        form(&["hlo"], 0),
        form(&["hlo", "--json", "--type", "proto"], 0),
        form(&["hlo", "--type", "snapshot"], 0),
        form(&["encode", "--lines"], 0),
        form(&["encode", "--lines", "--raw", "--type", "layout", "--json"], 0),
        form(&["info", "--lines"], 0),
        form(&["info", "--lines", "--json"], 0),
        form(&["map", "--lines"], 0),
        form(&["map", "--lines", "--grid", "--json"], 0),
        form(&["offset", "--lines"], 1),
        form(&["index", "--lines", "--json"], 1),
        form(&["offset", "--json"], 2),
        form(&["index"], 2),
        form(&["info"], 1),
        form(&["map", "--labels", "letters"], 1),
        form(&["map", "--grid", "--json"], 1),
        form(&["encode", "--hex"], 1),
        form(&["encode", "--raw", "--type", "layout", "--json"], 1),
        CliForm { args: &["offset", "--lines"], operands: 0, hex_source: true },
        CliForm { args: &["info", "--json"], operands: 0, hex_source: true },
        CliForm { args: &["map", "--grid"], operands: 0, hex_source: true },
    ];

    /// The first line of `data` (without its `\n`) and the rest.
    fn first_line(data: &[u8]) -> (&[u8], &[u8]) {
        match data.iter().position(|&b| b == b'\n') {
            Some(end) => (&data[..end], &data[end + 1..]),
            None => (data, &[]),
        }
    }

    /// Target `cli`: the command-line tool, in-process, on the fuzzer's bytes. The first byte picks
    /// one of [`CLI_FORMS`]; the next lines give its operands (or its `--hex` shape); the rest is
    /// stdin. The tool must exit 0 or 1 (never a usage error: the arguments are well formed), write
    /// JSON lines that parse, and with `--lines` answer every input line with exactly one line
    /// unless a limit stopped it (an `error:` on stderr).
    pub fn cli(data: &[u8]) {
        let Some((&selector, mut stdin)) = data.split_first() else { return };
        let form = &CLI_FORMS[usize::from(selector) % CLI_FORMS.len()];
        let mut args: Vec<String> =
            std::iter::once("xla-shape").chain(form.args.iter().copied()).map(String::from).collect();
        if form.hex_source {
            let (hex, rest) = first_line(stdin);
            args.push(format!("--hex={}", String::from_utf8_lossy(hex)));
            stdin = rest;
        }
        if form.operands > 0 {
            args.push("--".to_owned());
            for _ in 0..form.operands {
                let (operand, rest) = first_line(stdin);
                args.push(String::from_utf8_lossy(operand).into_owned());
                stdin = rest;
            }
        }
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let status = xla_shape::cli::run(&args, &mut &stdin[..], &mut stdout, &mut stderr);
        let errors = String::from_utf8_lossy(&stderr);
        assert!(status <= 1, "{args:?}: exit status {status}: {errors}");
        let stopped = errors.lines().any(|line| line.starts_with("error: "));
        assert!(status == 1 || !stopped, "{args:?}: exit 0 after an error: {errors}");
        let binary = form.args.first() == Some(&"encode")
            && !form.args.iter().any(|a| ["--hex", "--json", "--lines"].contains(a));
        if binary {
            return;
        }
        let answers = String::from_utf8_lossy(&stdout);
        assert!(answers.is_empty() || answers.ends_with('\n'), "{args:?}: output ends mid-line: {answers:?}");
        if form.args.contains(&"--json") {
            for line in answers.lines() {
                if let Err(error) = serde_json::from_str::<serde_json::Value>(line) {
                    panic!("{args:?}: not JSON ({error}): {line}");
                }
            }
        }
        if form.args.contains(&"--lines") && !stopped {
            let inputs = stdin.split(|&b| b == b'\n').count() - usize::from(stdin.is_empty() || stdin.ends_with(b"\n"));
            assert_eq!(
                answers.split_terminator('\n').count(),
                inputs,
                "{args:?}: one answer per input line: {answers:?}"
            );
        }
    }
}
