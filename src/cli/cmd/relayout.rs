//! `relayout`: an array's physical bytes from one layout to another (the library's
//! [`RelayoutPlan`]), with `.npy` on either side, in bounded memory whatever the array's size
//! (`docs/relayout.md`, "The command line").
//!
//! The source is a mapped file or a stream read in chunks (`cli/data.rs`); the destination is
//! produced in parts of a quarter of `--max-memory` with [`RelayoutPlan::run_range`], one
//! computed while the one before is written, to standard output or to a temporary file renamed
//! onto `--output` when complete. A transpose of long rows into a file is produced in column
//! blocks instead (`cli/blocks.rs`), each row written at its offset. Destinations over 256 MiB
//! show a progress bar (destination bytes) on stderr when the process's stderr is a terminal.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{IsTerminal, Read, Seek};
use std::path::Path;

use npyz::{DType, Order, TypeStr, WriterBuilder};

use crate::cli::Io;
use crate::cli::args::RelayoutArgs;
use crate::cli::blocks::Blocks;
use crate::cli::cmd;
use crate::cli::data::{self, Sink, Source};
use crate::cli::fail::{Failure, Status};
use crate::cli::input::{self, LoadedShape, MAX_INPUT_BYTES};
use crate::cli::outfile::OutFile;
use crate::cli::parts;
use crate::memory::extent::{len_u64, to_usize};
use crate::relayout::{Endpoint, RelayoutPlan, StridedView};
use crate::{PrimitiveType, ShapeBuf};

/// Above this many destination bytes a terminal gets a progress bar.
const PROGRESS_BYTES: u64 = 256 << 20;

/// A shape from `--*-file` or the next operand.
fn shape(file: Option<&Path>, operands: &mut std::slice::Iter<'_, String>, what: &str) -> Result<ShapeBuf, Failure> {
    let loaded: LoadedShape = match file {
        Some(path) => input::shape_from_bytes(&input::read_file(path, MAX_INPUT_BYTES)?)?,
        None => input::shape_from_text(operands.next().ok_or_else(|| Failure::Usage(format!("missing {what}")))?)?,
    };
    Ok(loaded.shape)
}

/// The element types numpy has natively, by type code (without the byte-order character).
const NPY_TYPES: [(&str, PrimitiveType); 14] = [
    ("b1", PrimitiveType::PRED),
    ("i1", PrimitiveType::S8),
    ("i2", PrimitiveType::S16),
    ("i4", PrimitiveType::S32),
    ("i8", PrimitiveType::S64),
    ("u1", PrimitiveType::U8),
    ("u2", PrimitiveType::U16),
    ("u4", PrimitiveType::U32),
    ("u8", PrimitiveType::U64),
    ("f2", PrimitiveType::F16),
    ("f4", PrimitiveType::F32),
    ("f8", PrimitiveType::F64),
    ("c8", PrimitiveType::C64),
    ("c16", PrimitiveType::C128),
];

/// The element type of a little-endian numpy type string.
fn npy_type(ty: &TypeStr) -> Option<PrimitiveType> {
    let text = ty.to_string();
    let code = text.strip_prefix(['<', '|'])?;
    NPY_TYPES.iter().find(|(c, _)| *c == code).map(|&(_, t)| t)
}

/// The numpy type string of an element type (little-endian; `|` for one byte).
fn npy_descr(t: PrimitiveType) -> Option<TypeStr> {
    let (code, _) = NPY_TYPES.iter().find(|(_, ty)| *ty == t)?;
    let order = if t.byte_width() == Some(1) { '|' } else { '<' };
    format!("{order}{code}").parse().ok()
}

/// Where the input comes from.
enum Input<'a> {
    /// A regular file, positioned where the data (or the `.npy` header) starts, and its name.
    File(File, String),
    /// Anything else: read in chunks.
    Stream(Box<dyn Read + 'a>),
}

impl<'a> Input<'a> {
    /// The FILE operand, or standard input (as a file if the process's standard input is a
    /// regular file).
    fn open(path: Option<&String>, stdin: &'a mut dyn std::io::BufRead, process_stdin: bool) -> Result<Self, Failure> {
        let Some(path) = path else {
            if process_stdin {
                if let Some(file) = stdin_file() {
                    return Ok(Self::File(file, "standard input".to_owned()));
                }
            }
            return Ok(Self::Stream(Box::new(stdin)));
        };
        let file = File::open(path).map_err(|e| Failure::invalid(format!("cannot open {path}: {e}")))?;
        let regular = file.metadata().map_err(|e| Failure::invalid(format!("cannot open {path}: {e}")))?.is_file();
        Ok(if regular { Self::File(file, path.clone()) } else { Self::Stream(Box::new(std::io::BufReader::new(file))) })
    }

    fn reader(&mut self) -> &mut dyn Read {
        match self {
            Self::File(file, _) => file,
            Self::Stream(stream) => stream,
        }
    }

    /// The `expected` bytes that follow.
    fn load(self, expected: u64, args: &RelayoutArgs, what: &str) -> Result<Source, Failure> {
        match self {
            Self::File(mut file, name) => {
                let at = file.stream_position().map_err(|e| Failure::invalid(format!("cannot read the input: {e}")))?;
                data::from_file(&mut file, at, expected, what, args.no_mmap, &name)
            }
            Self::Stream(mut stream) => data::from_stream(&mut stream, expected, memory(args) / 2, what),
        }
    }
}

/// The process's standard input as a file, when it is a regular one.
#[cfg(unix)]
fn stdin_file() -> Option<File> {
    use std::os::fd::AsFd;
    let file = File::from(std::io::stdin().as_fd().try_clone_to_owned().ok()?);
    file.metadata().ok()?.is_file().then_some(file)
}

#[cfg(not(unix))]
fn stdin_file() -> Option<File> {
    None
}

/// `--max-memory` in bytes.
fn memory(args: &RelayoutArgs) -> u64 {
    args.max_memory.saturating_mul(1 << 20)
}

/// A `.npy` header, read in bounded memory: its length field is checked before the header is
/// read.
fn npy_header(reader: &mut dyn Read) -> Result<npyz::NpyHeader, Failure> {
    let bad = |e: &dyn std::fmt::Display| Failure::invalid(format!("not a .npy file: {e}"));
    let mut head = vec![0u8; 8];
    reader.read_exact(&mut head).map_err(|e| bad(&e))?;
    if head.get(..6) != Some(b"\x93NUMPY") {
        return Err(bad(&"no \\x93NUMPY magic"));
    }
    // Version 1 has a 2-byte header length, versions 2 and 3 a 4-byte one.
    let field = if head.get(6) == Some(&1) { 2 } else { 4 };
    head.resize(8usize.saturating_add(field), 0);
    reader.read_exact(head.get_mut(8..).unwrap_or_default()).map_err(|e| bad(&e))?;
    let mut le = [0u8; 4];
    le.get_mut(..field).unwrap_or_default().copy_from_slice(head.get(8..).unwrap_or_default());
    let len = u64::from(u32::from_le_bytes(le));
    if len > MAX_INPUT_BYTES {
        return Err(crate::Error::LimitExceeded {
            limit: crate::error::Limit::InputSize,
            value: len,
            max: MAX_INPUT_BYTES,
        }
        .into());
    }
    reader.take(len).read_to_end(&mut head).map_err(|e| bad(&e))?;
    npyz::NpyHeader::from_reader(&mut head.as_slice()).map_err(|e| bad(&e))
}

/// The source of a `.npy` input: its element type and dimensions, as a strided view (C or
/// Fortran order).
fn npy_source(header: &npyz::NpyHeader) -> Result<(PrimitiveType, Vec<u64>, StridedView), Failure> {
    let ty = match header.dtype() {
        DType::Plain(ty) => ty,
        other => return Err(Failure::invalid(format!("unsupported .npy dtype {}", other.descr()))),
    };
    let element_type = npy_type(&ty).ok_or_else(|| Failure::invalid(format!("unsupported .npy dtype {ty}")))?;
    let dims = header.shape().to_vec();
    let mut view = StridedView::row_major(element_type, &dims)?;
    if header.order() == Order::Fortran {
        let reversed: Vec<u64> = dims.iter().rev().copied().collect();
        let mut strides = StridedView::row_major(element_type, &reversed)?.byte_strides().to_vec();
        strides.reverse();
        view = StridedView::new(element_type, &dims, &strides, 0)?;
    }
    Ok((element_type, dims, view))
}

/// The header of a row-major `.npy` file of `t` and `dims` (npyz writes it).
fn npy_out_header(t: PrimitiveType, dims: &[u64]) -> Result<Vec<u8>, Failure> {
    let descr = npy_descr(t).ok_or_else(|| {
        Failure::invalid(format!("--npy-out supports pred, s8–s64, u8–u64, f16, f32, f64, c64 and c128, not {t}"))
    })?;
    let mut out = Vec::new();
    npyz::WriteOptions::new_header_only()
        .dtype(DType::Plain(descr))
        .shape(dims)
        .writer(&mut out)
        .write_header_only()
        .map_err(|e| Failure::invalid(format!("cannot write .npy: {e}")))?;
    Ok(out)
}

pub fn run(args: &RelayoutArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    let mut operands = args.operands.iter();
    let from = if args.npy_in { None } else { Some(shape(args.from_file.as_deref(), &mut operands, "FROM")?) };
    let to = if args.npy_out { None } else { Some(shape(args.to_file.as_deref(), &mut operands, "TO")?) };
    let path = operands.next();
    if let Some(extra) = operands.next() {
        return Err(Failure::Usage(format!("unexpected operand `{extra}`")));
    }
    let mut input = Input::open(path, &mut *io.stdin, io.process_stdin)?;
    // The source: a layout, or the .npy array as a strided view.
    let (element_type, dims, view, from_array) = if let Some(shape) = &from {
        let array = cmd::array_of(shape)?;
        // An unbounded dimension (`?`) maps to 0 here; planning rejects it below.
        let dims = array.dimensions().iter().map(|&d| u64::try_from(d).unwrap_or(0)).collect();
        (array.element_type(), dims, None, Some(array))
    } else {
        let (t, dims, view) = npy_source(&npy_header(input.reader())?)?;
        (t, dims, Some(view), None)
    };
    // TO, or the row-major layout of a .npy output.
    let to = if let Some(shape) = to {
        shape
    } else {
        let signed: Vec<i64> = dims.iter().map(|&d| i64::try_from(d).unwrap_or(i64::MAX)).collect();
        crate::make::make_shape(element_type, &signed)?
    };
    let to_array = cmd::array_of(&to)?;
    let src_side: Endpoint<'_> = match (&from_array, &view) {
        (Some(a), _) => (*a).into(),
        (None, Some(v)) => v.into(),
        (None, None) => return Err(Failure::invalid("no source")),
    };
    let plan = RelayoutPlan::new(src_side, to_array)?;
    // Two parts in flight: half the bound, the other half for a piped input.
    let part = to_usize(memory(args) / 4);
    if args.explain {
        let mut text = plan.explain();
        if let Some(blocks) = Blocks::new(src_side, to_array, part)? {
            let (rows, cols) = blocks.shape();
            let _ = writeln!(
                text,
                "into a regular file (--output): column blocks of {rows} destination rows × {cols} columns, \
                 each row written at its offset"
            );
        }
        io.stdout.write_all(text.as_bytes()).map_err(|e| Failure::invalid(format!("cannot write the output: {e}")))?;
        return Ok(Status::Ok);
    }
    let header = if args.npy_out { npy_out_header(element_type, &dims)? } else { Vec::new() };
    let expected = len_u64(plan.src_len());
    let what = if args.npy_in { "the .npy data" } else { "the physical size of FROM" };
    // The output first: one that cannot be written fails before a long input is read, and
    // its temporary file exists for the whole run.
    let mut sink = match &args.output {
        Some(path) => Sink::File(OutFile::create(path)?),
        None => Sink::Stdout(&mut *io.stdout),
    };
    let source = input.load(expected, args, what)?;
    let total = len_u64(plan.dst_len()).saturating_add(len_u64(header.len()));
    let bar = (total > PROGRESS_BYTES && std::io::stderr().is_terminal())
        .then(|| indicatif::ProgressBar::with_draw_target(Some(total), indicatif::ProgressDrawTarget::stderr()));
    sink.reserve(total)?;
    sink.write(&header)?;
    let pool = match args.threads {
        Some(n) => Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(usize::from(n))
                .build()
                .map_err(|e| Failure::invalid(format!("cannot start {n} threads: {e}")))?,
        ),
        None => None,
    };
    let blocks = if sink.positioned() { Blocks::new(src_side, to_array, part)? } else { None };
    let run = Run { src: &source, pool: pool.as_ref(), bar: bar.as_ref() };
    match blocks {
        Some(blocks) => run.blocks(&blocks, src_side, &mut sink, len_u64(header.len()))?,
        None => run.parts(&plan, &mut sink, part)?,
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    sink.finish()?;
    Ok(Status::Ok)
}

/// What the parts of a run share: the source, the threads, the progress bar.
struct Run<'r> {
    src: &'r Source,
    pool: Option<&'r rayon::ThreadPool>,
    bar: Option<&'r indicatif::ProgressBar>,
}

impl Run<'_> {
    /// Runs `work` on the pool if there is one, else on rayon's global pool.
    fn on_pool(&self, work: impl FnOnce() -> Result<(), crate::Error> + Send) -> Result<(), Failure> {
        match self.pool {
            Some(pool) => pool.install(work),
            None => work(),
        }
        .map_err(Failure::from)
    }

    /// Writes a part with `write`: first the mapped source is asked whether it was truncated
    /// underneath (its lost pages read as zeros, which must go nowhere: rule 22), then the
    /// progress bar advances by the part's `bytes`.
    fn write_part(&self, bytes: usize, write: impl FnOnce() -> Result<(), Failure>) -> Result<(), Failure> {
        self.src.check()?;
        write()?;
        if let Some(bar) = self.bar {
            bar.inc(len_u64(bytes));
        }
        Ok(())
    }

    /// The destination in parts of at most `part` bytes (`cli::parts`): a second thread
    /// computes the next part while this one writes the last, so the copy into the output (the
    /// kernel's, for a file) and the transposing overlap.
    fn parts(&self, plan: &RelayoutPlan, sink: &mut Sink<'_>, part: usize) -> Result<(), Failure> {
        let compute = |out: &mut [u8], range: std::ops::Range<usize>| {
            self.on_pool(move || plan.run_range(&self.src[..], out, range))
        };
        parts::produce(plan.dst_len(), part, &compute, &mut |bytes| self.write_part(bytes.len(), || sink.write(bytes)))
    }

    /// The destination in column blocks (`cli::blocks`), each written row by row at its
    /// offsets in the output file (after `header` bytes), one computed while the last is
    /// written.
    fn blocks(
        &self,
        blocks: &Blocks<'_>,
        src_side: Endpoint<'_>,
        sink: &mut Sink<'_>,
        header: u64,
    ) -> Result<(), Failure> {
        let compute = |out: &mut [u8], k: usize| {
            let plan = blocks.plan(src_side, k)?;
            self.on_pool(move || plan.run(&self.src[..], out))
        };
        parts::produce_parts(blocks.count(), blocks.max_len(), &|k| blocks.len(k), &compute, &mut |bytes, k| {
            self.write_part(bytes.len(), || {
                let runs = blocks.runs(k).ok_or_else(|| Failure::invalid("a block outside the destination"))?;
                for run in runs {
                    let (at, len) = (to_usize(run.shard), to_usize(run.len));
                    let row = bytes
                        .get(at..at.saturating_add(len))
                        .ok_or_else(|| Failure::invalid("a block's row outside it"))?;
                    sink.write_at(header.saturating_add(run.global), row)?;
                }
                Ok(())
            })
        })
    }
}
