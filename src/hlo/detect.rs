//! Which message a serialized module file holds: `HloModuleProto`, `HloProto` (what
//! `--xla_dump_hlo_as_proto` writes: the module and its buffer assignment) or `HloSnapshot`
//! (`--xla_dump_hlo_snapshots`: an `HloProto` with the arguments and result), told from the
//! bytes (`docs/hlo.md`, "Which message").
//!
//! All three start with field 1 of wire type 2: the module's name, the module, or the
//! `HloProto`. Each reading's header (the module's top-level fields, computations skipped by
//! their length) is tried in turn — the file name's convention first (`*.snapshot.N.pb`,
//! `*.hlo.pb`), then the most wrapped — and a reading whose header decodes with at least one
//! computation is a candidate. One candidate is the answer (its walk, done once by the caller,
//! reports any later error); of two, the first whose whole walk decodes. A name is rarely a
//! well-formed message (its first letter would be a tag and its second a length), so a module is
//! not read as a wrapper by accident; a wrapper whose bytes are all valid UTF-8 would read as a
//! module with a strange name, which is why the wrapped readings go first.

use super::{HloMessage, header, walk};

/// Whether `bytes` read as `message`: the header and every shape of the walk decode, and the
/// module has a computation.
pub fn reads_as(bytes: &[u8], message: HloMessage) -> bool {
    match header(bytes, message) {
        Ok(module) if module.computations > 0 => walk(bytes, message).all(|found| found.is_ok()),
        _ => false,
    }
}

/// The message `bytes` hold, if the header of one of the three decodes (`docs/hlo.md`, "Which
/// message": the file name's convention first, then snapshot, `HloProto`, module; of two readings
/// whose headers decode, the first whose whole walk decodes); `name` is the file's name, a hint
/// for the order tried.
///
/// ```
/// use xla_shape::hlo::{HloMessage, detect};
/// // An HloModuleProto "m" with one empty computation, and the same inside an HloProto.
/// let module = [0x0a, 0x01, b'm', 0x1a, 0x00];
/// assert_eq!(detect(&module, None), Some(HloMessage::Module));
/// let mut proto = vec![0x0a, module.len() as u8];
/// proto.extend(module);
/// assert_eq!(detect(&proto, Some("module_0000.jit_f.before_optimizations.hlo.pb")), Some(HloMessage::Proto));
/// assert_eq!(detect(b"\x0a\x02", None), None);
/// ```
pub fn detect(bytes: &[u8], name: Option<&str>) -> Option<HloMessage> {
    let hinted = name.and_then(|name| {
        if name.contains(".snapshot.") {
            Some(HloMessage::Snapshot)
        } else if name.ends_with(".hlo.pb") {
            Some(HloMessage::Proto)
        } else {
            None
        }
    });
    let order = [HloMessage::Snapshot, HloMessage::Proto, HloMessage::Module];
    // The header alone (top-level fields, computations skipped by their length) rules most
    // readings out; the whole walk decides only between readings whose headers both decode.
    let mut candidates = hinted
        .into_iter()
        .chain(order)
        .filter(|&message| header(bytes, message).is_ok_and(|module| module.computations > 0));
    let first = candidates.next()?;
    match candidates.find(|&other| other != first) {
        None => Some(first),
        Some(second) => [first, second].into_iter().find(|&message| reads_as(bytes, message)).or(Some(first)),
    }
}
