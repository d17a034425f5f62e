//! `relayout`: an array's physical bytes from one layout to another (the library's
//! [`RelayoutPlan`]), with `.npy` on either side.
//!
//! The input is read up to its expected length plus one byte, so a wrong length is reported
//! (exit 1, expected and actual sizes) without reading an unbounded stream. Inputs over 256 MiB
//! show a progress bar on stderr when the process's stderr is a terminal.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::path::Path;

use npyz::{DType, Order, TypeStr, WriterBuilder};

use crate::cli::Io;
use crate::cli::args::RelayoutArgs;
use crate::cli::cmd;
use crate::cli::fail::{Failure, Status};
use crate::cli::input::{self, LoadedShape, MAX_INPUT_BYTES};
use crate::relayout::{RelayoutPlan, StridedView};
use crate::{PrimitiveType, ShapeBuf};

/// Above this many bytes a terminal gets a progress bar.
const PROGRESS_BYTES: u64 = 256 << 20;

/// A shape from `--*-file` or the next operand.
fn shape(file: Option<&Path>, operands: &mut std::slice::Iter<'_, String>, what: &str) -> Result<ShapeBuf, Failure> {
    let loaded: LoadedShape = match file {
        Some(path) => input::shape_from_bytes(&input::read_file(path, MAX_INPUT_BYTES)?)?,
        None => input::shape_from_text(operands.next().ok_or_else(|| Failure::Usage(format!("missing {what}")))?)?,
    };
    Ok(loaded.shape)
}

/// The element type of a numpy type string, for the types numpy has natively.
fn npy_type(ty: &TypeStr) -> Option<PrimitiveType> {
    Some(match ty.to_string().trim_start_matches(['<', '|', '=']) {
        "b1" => PrimitiveType::PRED,
        "i1" => PrimitiveType::S8,
        "i2" => PrimitiveType::S16,
        "i4" => PrimitiveType::S32,
        "i8" => PrimitiveType::S64,
        "u1" => PrimitiveType::U8,
        "u2" => PrimitiveType::U16,
        "u4" => PrimitiveType::U32,
        "u8" => PrimitiveType::U64,
        "f2" => PrimitiveType::F16,
        "f4" => PrimitiveType::F32,
        "f8" => PrimitiveType::F64,
        "c8" => PrimitiveType::C64,
        "c16" => PrimitiveType::C128,
        _ => return None,
    })
}

/// Reads exactly `expected` bytes (at most one more, to tell a longer input).
fn read_exact_len(reader: &mut dyn Read, expected: u64, progress: bool) -> Result<Vec<u8>, Failure> {
    let bar = progress
        .then(|| indicatif::ProgressBar::with_draw_target(Some(expected), indicatif::ProgressDrawTarget::stderr()));
    let mut out = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    let mut limited = reader.take(expected.saturating_add(1));
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = limited.read(&mut chunk).map_err(|e| Failure::invalid(format!("cannot read the input: {e}")))?;
        let Some(read) = chunk.get(..n).filter(|r| !r.is_empty()) else { break };
        out.extend_from_slice(read);
        if let Some(bar) = &bar {
            bar.inc(u64::try_from(n).unwrap_or(0));
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let actual = u64::try_from(out.len()).unwrap_or(u64::MAX);
    if actual != expected {
        let more = if actual > expected { " or more" } else { "" };
        return Err(Failure::invalid(format!(
            "input has {actual}{more} bytes, expected {expected} (the physical size of FROM)"
        )));
    }
    Ok(out)
}

/// The output as a row-major `.npy` file of TO's element type and dimensions (npyz writes it).
fn npy_bytes(t: PrimitiveType, dims: &[u64], data: &[u8]) -> Result<Vec<u8>, Failure> {
    let fail = |e: std::io::Error| Failure::invalid(format!("cannot write .npy: {e}"));
    let mut out = Vec::new();
    macro_rules! write_as {
        ($ty:ty, $convert:expr) => {{
            let mut writer = npyz::WriteOptions::<$ty>::new()
                .default_dtype()
                .shape(dims)
                .writer(&mut out)
                .begin_nd()
                .map_err(fail)?;
            for chunk in data.chunks_exact(size_of::<$ty>()) {
                writer.push(&$convert(chunk.try_into().unwrap_or_default())).map_err(fail)?;
            }
            writer.finish().map_err(fail)?;
        }};
    }
    match t {
        PrimitiveType::PRED => write_as!(bool, |b: [u8; 1]| b[0] != 0),
        PrimitiveType::S8 => write_as!(i8, i8::from_le_bytes),
        PrimitiveType::S16 => write_as!(i16, i16::from_le_bytes),
        PrimitiveType::S32 => write_as!(i32, i32::from_le_bytes),
        PrimitiveType::S64 => write_as!(i64, i64::from_le_bytes),
        PrimitiveType::U8 => write_as!(u8, u8::from_le_bytes),
        PrimitiveType::U16 => write_as!(u16, u16::from_le_bytes),
        PrimitiveType::U32 => write_as!(u32, u32::from_le_bytes),
        PrimitiveType::U64 => write_as!(u64, u64::from_le_bytes),
        PrimitiveType::F32 => write_as!(f32, f32::from_le_bytes),
        PrimitiveType::F64 => write_as!(f64, f64::from_le_bytes),
        _ => return Err(Failure::invalid(format!("--npy-out supports pred, s8–s64, u8–u64, f32 and f64, not {t}"))),
    }
    Ok(out)
}

pub fn run(args: &RelayoutArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    let mut operands = args.operands.iter();
    let mut file_reader: Option<File> = None;
    let from = if args.npy_in { None } else { Some(shape(args.from_file.as_deref(), &mut operands, "FROM")?) };
    let to = if args.npy_out { None } else { Some(shape(args.to_file.as_deref(), &mut operands, "TO")?) };
    if let Some(path) = operands.next() {
        file_reader = Some(File::open(path).map_err(|e| Failure::invalid(format!("cannot open {path}: {e}")))?);
    }
    if let Some(extra) = operands.next() {
        return Err(Failure::Usage(format!("unexpected operand `{extra}`")));
    }
    let reader: &mut dyn Read = match &mut file_reader {
        Some(f) => f,
        None => &mut *io.stdin,
    };
    // The source: a layout, or the .npy array as a strided view (C or Fortran order).
    let view;
    let (element_type, dims): (PrimitiveType, Vec<u64>);
    let from_array = if let Some(shape) = &from {
        let array = cmd::array_of(shape)?;
        element_type = array.element_type();
        // An unbounded dimension (`?`) maps to 0 here; planning rejects it below.
        dims = array.dimensions().iter().map(|&d| u64::try_from(d).unwrap_or(0)).collect();
        view = None;
        Some(array)
    } else {
        let header = npyz::NpyHeader::from_reader(&mut *reader)
            .map_err(|e| Failure::invalid(format!("not a .npy file: {e}")))?;
        let ty = match header.dtype() {
            DType::Plain(ty) if ty.to_string().starts_with(['<', '|']) => ty,
            other => return Err(Failure::invalid(format!("unsupported .npy dtype {}", other.descr()))),
        };
        element_type = npy_type(&ty).ok_or_else(|| Failure::invalid(format!("unsupported .npy dtype {ty}")))?;
        dims = header.shape().to_vec();
        let mut v = StridedView::row_major(element_type, &dims)?;
        if header.order() == Order::Fortran {
            let reversed: Vec<u64> = dims.iter().rev().copied().collect();
            let mut strides = StridedView::row_major(element_type, &reversed)?.byte_strides().to_vec();
            strides.reverse();
            v = StridedView::new(element_type, &dims, &strides, 0)?;
        }
        view = Some(v);
        None
    };
    let to_view;
    let plan = match (&from_array, &view, &to) {
        (Some(a), _, Some(b)) => RelayoutPlan::new(*a, cmd::array_of(b)?)?,
        (None, Some(v), Some(b)) => RelayoutPlan::new(v, cmd::array_of(b)?)?,
        (Some(a), _, None) => {
            to_view = StridedView::row_major(element_type, &dims)?;
            RelayoutPlan::new(*a, &to_view)?
        }
        (None, Some(v), None) => {
            to_view = StridedView::row_major(element_type, &dims)?;
            RelayoutPlan::new(v, &to_view)?
        }
        (None, None, _) => return Err(Failure::invalid("no source")),
    };
    let expected = u64::try_from(plan.src_len()).unwrap_or(u64::MAX);
    let progress = expected > PROGRESS_BYTES && std::io::stderr().is_terminal();
    let input = read_exact_len(reader, expected, progress)?;
    let output = plan.run_to_vec(&input)?;
    let output = if args.npy_out { npy_bytes(element_type, &dims, &output)? } else { output };
    let write = |w: &mut dyn Write| w.write_all(&output).and_then(|()| w.flush());
    match &args.output {
        Some(path) => {
            let mut f =
                File::create(path).map_err(|e| Failure::invalid(format!("cannot create {}: {e}", path.display())))?;
            write(&mut f).map_err(|e| Failure::invalid(format!("cannot write {}: {e}", path.display())))?;
        }
        None => write(io.stdout).map_err(|e| Failure::invalid(format!("cannot write the output: {e}")))?,
    }
    Ok(Status::Ok)
}
