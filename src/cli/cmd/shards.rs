//! `shards`: where each device's part of a sharded array is (`docs/sharding.md` §5).
//!
//! [`load`] turns the operands into a validated shape, sharding and [`Placement`]; [`run`] then
//! lists the shards (`--json`) or draws the grid. Further modes of the subcommand start from
//! [`load`] too: `--split FILE --out-dir DIR` writes `DIR/device-D.bin` for every device,
//! `--assemble DIR --output FILE` builds the global buffer back (`docs/shard-buffers.md`). Every
//! file's length is checked (from its metadata) against the byte size the shape and the sharding
//! give it before anything is read or allocated; every file written appears whole or not at all
//! (`cli/outfile.rs`).

use std::fmt::Write as _;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::ShapeBuf;
use crate::sharding::{DeviceId, HloSharding, Placement, Shard};
use crate::{Dim, text};

use crate::cli::Io;
use crate::cli::args::ShardsArgs;
use crate::cli::data::{self, Source};
use crate::cli::fail::{Failure, Status};
use crate::cli::outfile::OutFile;
use crate::cli::output;
use crate::cli::parts;
use crate::error::ShardBufferProblem;
use crate::sharding::buffers::{ShardBuffers, ShardForm};
use crate::sharding::reshard::{ReshardPlan, Transfer};
use crate::sharding::stream::{ByteRun, ByteRuns};

/// The operands of `shards`, validated: the global shape, the sharding, and where each device's
/// part is.
pub struct Loaded {
    pub shape: ShapeBuf,
    pub sharding: HloSharding,
    pub placement: Placement,
}

/// Parses SHAPE and SHARDING and places the shards.
pub fn load(args: &ShardsArgs) -> Result<Loaded, Failure> {
    let shape = text::parse_shape(&args.shape)?;
    let sharding = crate::sharding::parse(&args.sharding)?;
    let array = super::array_of(&shape)?;
    sharding.validate(&shape.view(), args.devices)?;
    let placement = sharding.placement(&array, args.devices)?;
    Ok(Loaded { shape, sharding, placement })
}

/// The bits of one element in the shape's layout (sub-byte packed types included).
fn element_bits(shape: &ShapeBuf) -> u64 {
    shape.view().array_or_buffer().map_or(0, crate::memory::extent::element_size_in_bits)
}

/// One shard as JSON.
fn shard_json(shard: &Shard<'_>, bits: u64) -> Value {
    let elements = shard.element_count();
    let ranges: Vec<_> = shard.ranges().collect();
    json!({
        "device": shard.device().0,
        "holds_data": shard.holds_data(),
        "tile_index": shard.tile_indices().collect::<Vec<_>>(),
        "start": ranges.iter().map(|r| r.start).collect::<Vec<_>>(),
        "limit": ranges.iter().map(|r| r.end).collect::<Vec<_>>(),
        "replica_group": shard.replica_group().map(|d| d.0).collect::<Vec<_>>(),
        "replica_index": shard.replica_index(),
        "elements": elements,
        "bytes": elements.saturating_mul(bits).div_ceil(8),
    })
}

/// The most blocks drawn along one axis of the picture.
const MAX_BLOCKS: usize = 32;

/// The picture: the two major sharded dimensions as rows and columns, each block naming the
/// devices that hold it (as `jax.debug.visualize_array_sharding` does).
fn picture(loaded: &Loaded) -> String {
    let placement = &loaded.placement;
    let tiles = placement.tiles();
    let sharded: Vec<usize> = (0..tiles.len()).filter(|&d| tiles.get(d).copied().unwrap_or(1) > 1).collect();
    let (row_dim, col_dim) = match sharded.as_slice() {
        [] => (None, None),
        // As JAX draws it: a sharded minor dimension runs across, any other one down.
        [only] if only.saturating_add(1) < tiles.len() => (Some(*only), None),
        [only] => (None, Some(*only)),
        [first, second, ..] => (Some(*first), Some(*second)),
    };
    let count =
        |dim: Option<usize>| dim.and_then(|d| tiles.get(d)).map_or(1, |&t| usize::try_from(t).unwrap_or(usize::MAX));
    let (rows, cols) = (count(row_dim), count(col_dim));
    let mut out = format!("{} {}", loaded.shape, loaded.sharding);
    for (name, dim) in [("rows", row_dim), ("columns", col_dim)] {
        if let Some(d) = dim {
            let tile = placement.tile_shape().get(d).copied().unwrap_or(0);
            let _ = write!(out, "; {name}: dimension {d}, {} tiles of {tile}", count(dim));
        }
    }
    out.push('\n');
    if rows > MAX_BLOCKS || cols > MAX_BLOCKS {
        let _ = writeln!(out, "({rows} × {cols} blocks: too many to draw; use --json)");
        return out;
    }
    // Devices of each block, sorted (a block gathers every tile of the other dimensions).
    let mut blocks: Vec<Vec<DeviceId>> = vec![Vec::new(); rows.saturating_mul(cols)];
    for shard in placement.shards().filter(Shard::holds_data) {
        let at = |dim: Option<usize>| dim.map_or(0, |d| usize::try_from(shard.tile_index(Dim(d))).unwrap_or(0));
        if let Some(block) = blocks.get_mut(at(row_dim).saturating_mul(cols).saturating_add(at(col_dim))) {
            block.push(shard.device());
        }
    }
    let labels: Vec<String> = blocks
        .iter_mut()
        .map(|block| {
            block.sort_unstable();
            block.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
        })
        .collect();
    let width = labels.iter().map(String::len).max().unwrap_or(0).saturating_add(4);
    let rule = |left: &str, mid: &str, right: &str| {
        let cells: Vec<String> = (0..cols).map(|_| "─".repeat(width)).collect();
        format!("{left}{}{right}\n", cells.join(mid))
    };
    out.push_str(&rule("┌", "┬", "┐"));
    for r in 0..rows {
        if r > 0 {
            out.push_str(&rule("├", "┼", "┤"));
        }
        let blank: Vec<String> = (0..cols).map(|_| " ".repeat(width)).collect();
        let blank = format!("│{}│\n", blank.join("│"));
        out.push_str(&blank);
        let cells: Vec<String> = (0..cols)
            .map(|c| {
                let label = labels.get(r.saturating_mul(cols).saturating_add(c)).map_or("", String::as_str);
                format!("{label:^width$}")
            })
            .collect();
        let _ = writeln!(out, "│{}│", cells.join("│"));
        out.push_str(&blank);
    }
    out.push_str(&rule("└", "┴", "┘"));
    out
}

pub fn run(args: &ShardsArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    let loaded = load(args)?;
    if let (Some(in_dir), Some(to)) = (&args.reshard, &args.to) {
        return reshard(args, &loaded, (in_dir, to), io);
    }
    if args.split.is_some() || args.assemble.is_some() {
        return buffers(args, &loaded);
    }
    if args.json {
        let bits = element_bits(&loaded.shape);
        let mut text = String::new();
        for shard in loaded.placement.shards() {
            text.push_str(&shard_json(&shard, bits).to_string());
            text.push('\n');
        }
        output::write_stdout(io, text.as_bytes())?;
    } else {
        output::write_stdout(io, picture(&loaded).as_bytes())?;
    }
    Ok(Status::Ok)
}

/// The file of `device` in `dir`.
fn device_file(dir: &Path, device: DeviceId) -> PathBuf {
    dir.join(format!("device-{device}.bin"))
}

/// A file's length from its metadata, or why it cannot be had.
fn file_len(path: &Path) -> Result<u64, Failure> {
    fs::metadata(path).map(|m| m.len()).map_err(|e| Failure::invalid(format!("cannot read {}: {e}", path.display())))
}

fn shard_error(problem: ShardBufferProblem, path: &Path) -> Failure {
    Failure::invalid(format!("{} ({})", crate::Error::ShardBuffer(Box::new(problem)), path.display()))
}

/// Byte runs at least this long go by `--split` from the input to the outputs with no buffer
/// ([`MIN_COPY_RUN`] says how); shorter ones, and layouts without byte runs, go through parts. Measured on the 1 GiB `f32[16384,16384]{1,0}`
/// (`docs/shard-buffers.md` §8) when runs were copied one `copy_file_range` each and parts
/// written whole: runs of 8 and 16 KiB split in 0.7–1.2 s copied, 1.9–4.9 s through parts.
const MIN_SPLIT_RUN: u64 = 4 << 10;

/// The same for `--assemble`, whose parts are cheaper to write (one output): runs of 16 KiB
/// assemble in 0.64–0.79 s copied against 0.74–0.98 s through parts, runs of 8 KiB in 0.86–1.0 s
/// against 0.74–0.87 s.
const MIN_ASSEMBLE_RUN: u64 = 16 << 10;

/// Byte runs at least this long are copied file to file (`OutFile::copy_from`, one
/// `copy_file_range` each, no page of the input mapped); shorter ones are written from the
/// mapped input, many per `writev` (`OutFile::write_slices`). Measured splitting 1 GiB in
/// alternated rounds (`docs/shard-buffers.md` §8): runs of 16 KiB 0.53 s by `writev` against
/// 0.94 s copied, 32 KiB 0.57 s against 0.67 s, 64 KiB 0.91 s against 0.73 s, 1 MiB 1.10 s
/// against 0.70 s, whole shards (`[8,1]`) 1.09 s against 0.79 s.
const MIN_COPY_RUN: u64 = 64 << 10;

/// `--max-memory` in bytes, a quarter of it per part (two parts in flight).
fn part_len(args: &ShardsArgs) -> usize {
    usize::try_from(args.max_memory.saturating_mul(1 << 20) / 4).unwrap_or(usize::MAX)
}

/// A file opened and mapped (or read, where it cannot be mapped) after its length was checked.
struct Opened {
    file: File,
    source: Source,
    name: String,
}

fn open(path: &Path, len: u64, what: &str) -> Result<Opened, Failure> {
    let name = path.display().to_string();
    let mut file = File::open(path).map_err(|e| Failure::invalid(format!("cannot read {name}: {e}")))?;
    let source = data::from_file(&mut file, 0, len, what, false, &name)?;
    Ok(Opened { file, source, name })
}

/// Every device's file in `dir` is there with its shard's length, and no other device's file is:
/// checked first, so that nothing is read or allocated for a wrong set of files.
fn check_shard_files(plan: &ShardBuffers, dir: &Path) -> Result<(), Failure> {
    for device in plan.devices() {
        let path = device_file(dir, device);
        if !path.exists() {
            return Err(shard_error(ShardBufferProblem::Missing { device: device.0 }, &path));
        }
        let expected = plan.shard_len(device).unwrap_or(0);
        let actual = file_len(&path)?;
        if actual != expected {
            return Err(shard_error(ShardBufferProblem::Length { device: device.0, expected, actual }, &path));
        }
    }
    check_no_other_devices(plan, dir)
}

/// Every device's file in `dir`, opened and mapped (after [`check_shard_files`]).
fn open_shards(plan: &ShardBuffers, dir: &Path) -> Result<Vec<(DeviceId, Opened)>, Failure> {
    let mut opened = Vec::with_capacity(plan.devices().len());
    for device in plan.devices() {
        let len = plan.shard_len(device).unwrap_or(0);
        opened.push((device, open(&device_file(dir, device), len, "its shard's byte size")?));
    }
    Ok(opened)
}

/// The byte runs of `device` when every one is at least `min` bytes long.
fn long_runs(plan: &ShardBuffers, device: DeviceId, min: u64) -> Option<ByteRuns> {
    plan.byte_runs(device).filter(|runs| runs.run_len() >= min)
}

/// `--split` and `--assemble`.
fn buffers(args: &ShardsArgs, loaded: &Loaded) -> Result<Status, Failure> {
    let array = super::array_of(&loaded.shape)?;
    let form = if args.pad_to_tile { ShardForm::padded_to_tile(&loaded.placement) } else { ShardForm::Exact };
    let plan = ShardBuffers::from_placement(array, &loaded.placement, &form)?;
    if let (Some(file), Some(out_dir)) = (&args.split, &args.out_dir) {
        let actual = file_len(file)?;
        if actual != plan.global_len() {
            return Err(shard_error(ShardBufferProblem::GlobalLength { expected: plan.global_len(), actual }, file));
        }
        fs::create_dir_all(out_dir)
            .map_err(|e| Failure::invalid(format!("cannot create {}: {e}", out_dir.display())))?;
        let input = open(file, actual, "the physical size of SHAPE")?;
        split(&plan, &input, out_dir, part_len(args))?;
    }
    if let (Some(dir), Some(output)) = (&args.assemble, &args.output) {
        check_shard_files(&plan, dir)?;
        assemble(&plan, dir, output, part_len(args))?;
    }
    Ok(Status::Ok)
}

/// Writes every device's file, one distinct box after another: its byte runs copied or written
/// from the mapped input ([`MIN_COPY_RUN`]), or its parts computed once and written to each replica's file.
fn split(plan: &ShardBuffers, input: &Opened, out_dir: &Path, part: usize) -> Result<(), Failure> {
    for group in plan.replica_groups() {
        let Some(&first) = group.first() else { continue };
        if let Some(runs) = long_runs(plan, first, MIN_SPLIT_RUN) {
            for &device in group {
                let mut out = OutFile::create(&device_file(out_dir, device))?;
                out.reserve(plan.shard_len(device).unwrap_or(0))?;
                if runs.run_len() >= MIN_COPY_RUN {
                    for run in runs.clone() {
                        out.copy_from(&input.file, run.global, run.len, &input.name)?;
                    }
                } else {
                    let slices = runs.clone().map(|run| run_bytes(&input.source, run.global, run.len));
                    out.write_slices(slices, || input.name.clone())?;
                }
                // A truncation the kernel's copy did not meet still fails the run.
                input.source.check()?;
                out.finish()?;
            }
            continue;
        }
        let mut outs = Vec::with_capacity(group.len());
        for &device in group {
            let mut out = OutFile::create(&device_file(out_dir, device))?;
            out.reserve(plan.shard_len(device).unwrap_or(0))?;
            outs.push(out);
        }
        let total = usize::try_from(plan.shard_len(first).unwrap_or(0)).unwrap_or(usize::MAX);
        let compute = |buf: &mut [u8], range| plan.split_range(first, &input.source, buf, range).map_err(Failure::from);
        parts::produce(total, part, &compute, &mut |bytes| {
            // A mapped input truncated underneath read as zeros: they go nowhere.
            input.source.check()?;
            outs.iter_mut().try_for_each(|out| out.write_bytes(bytes))
        })?;
        for out in outs {
            out.finish()?;
        }
    }
    Ok(())
}

/// Writes the global buffer: the replicas checked (a chunk at a time), then the distinct boxes'
/// byte runs copied or written from the mapped files in the global order, or its parts computed and written.
fn assemble(plan: &ShardBuffers, dir: &Path, output: &Path, part: usize) -> Result<(), Failure> {
    let mut out = OutFile::create(output)?;
    out.reserve(plan.global_len())?;
    let opened = open_shards(plan, dir)?;
    let shrank = |opened: &[(DeviceId, Opened)]| opened.iter().try_for_each(|(_, o)| o.source.check());
    let sources = plan.sources(opened.iter().map(|(d, o)| (*d, &o.source[..])));
    // Zeros read from a file truncated underneath are not a replica's difference.
    shrank(&opened)?;
    let sources = sources?;
    if let Some(runs) = global_runs(plan, &opened) {
        if runs.shortest >= MIN_COPY_RUN {
            for (k, run) in runs {
                let Some((_, input)) = opened.get(k) else { continue };
                out.copy_from(&input.file, run.shard, run.len, &input.name)?;
            }
            return out.finish();
        }
        let slices =
            runs.filter_map(|(k, run)| opened.get(k).map(|(_, input)| run_bytes(&input.source, run.shard, run.len)));
        out.write_slices(slices, || shrunk_name(&opened))?;
        shrank(&opened)?;
        return out.finish();
    }
    let total = usize::try_from(plan.global_len()).unwrap_or(usize::MAX);
    let compute = |buf: &mut [u8], range| sources.assemble_range(buf, range).map_err(Failure::from);
    parts::produce(total, part, &compute, &mut |bytes| {
        shrank(&opened)?;
        out.write_bytes(bytes)
    })?;
    out.finish()
}

/// The `len` bytes of `source` from byte `start`: a byte run of a file whose length was checked
/// against the plan (an empty slice cannot occur; it would only shorten the output, which the
/// plan's lengths rule out).
fn run_bytes(source: &Source, start: u64, len: u64) -> &[u8] {
    let start = usize::try_from(start).unwrap_or(usize::MAX);
    let end = start.saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
    source.get(start..end).unwrap_or_default()
}

/// The name of the first opened file now shorter than its shard (the one the kernel's copy
/// could not read), for the message.
fn shrunk_name(opened: &[(DeviceId, Opened)]) -> String {
    opened
        .iter()
        .find(|(_, o)| o.file.metadata().map_or(true, |m| m.len() < u64::try_from(o.source.len()).unwrap_or(0)))
        .map_or_else(|| "a shard file".to_owned(), |(_, o)| o.name.clone())
}

/// The distinct boxes' byte runs merged in the global order: each run with the index of the
/// opened file it is in. State: one iterator per distinct box.
#[derive(Clone)]
struct Merged {
    pending: Vec<(usize, std::iter::Peekable<ByteRuns>)>,
    /// The shortest box's run length.
    shortest: u64,
}

impl Iterator for Merged {
    type Item = (usize, ByteRun);

    fn next(&mut self) -> Option<(usize, ByteRun)> {
        let (_, best) = self
            .pending
            .iter_mut()
            .enumerate()
            .filter_map(|(i, (_, runs))| runs.peek().map(|run| (run.global, i)))
            .min()?;
        let (k, runs) = self.pending.get_mut(best)?;
        Some((*k, runs.next()?))
    }
}

/// The global buffer as byte runs of the opened files, in the global order, when every
/// distinct box has long byte runs and together they cover the buffer end to end (checked by a
/// first pass over the runs, which holds nothing).
fn global_runs(plan: &ShardBuffers, opened: &[(DeviceId, Opened)]) -> Option<Merged> {
    let mut pending = Vec::with_capacity(plan.replica_groups().len());
    let mut shortest = u64::MAX;
    for group in plan.replica_groups() {
        let first = *group.first()?;
        // An empty box (a tile past the end of an uneven dimension) has no runs to merge.
        if plan.shard_len(first) == Some(0) {
            continue;
        }
        let k = opened.iter().position(|(d, _)| *d == first)?;
        let runs = long_runs(plan, first, MIN_ASSEMBLE_RUN)?;
        shortest = shortest.min(runs.run_len());
        pending.push((k, runs.peekable()));
    }
    let merged = Merged { pending, shortest };
    let mut at = 0u64;
    for (_, run) in merged.clone() {
        if run.global != at {
            return None;
        }
        at = at.checked_add(run.len)?;
    }
    (at == plan.global_len()).then_some(merged)
}

/// A `device-D.bin` in `dir` for a device the sharding does not name is an error (a file of
/// another sharding, or of more devices).
fn check_no_other_devices(plan: &ShardBuffers, dir: &Path) -> Result<(), Failure> {
    let entries = fs::read_dir(dir).map_err(|e| Failure::invalid(format!("cannot read {}: {e}", dir.display())))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_prefix("device-")).and_then(|n| n.strip_suffix(".bin"))
        else {
            continue;
        };
        if id.parse::<u64>().ok().is_none_or(|d| plan.shard_len(DeviceId(d)).is_none()) {
            return Err(Failure::invalid(format!(
                "{} is not a device of the sharding ({} devices)",
                entry.path().display(),
                plan.devices().len()
            )));
        }
    }
    Ok(())
}

/// `--only-devices LIST`: device ids and ranges (`0,2,5-7`).
fn device_list(text: &str) -> Result<std::collections::BTreeSet<DeviceId>, Failure> {
    let bad = |part: &str| Failure::invalid(format!("--only-devices: `{part}` is not a device id or a range `A-B`"));
    let mut devices = std::collections::BTreeSet::new();
    for part in text.split(',').map(str::trim) {
        let parse = |n: &str| n.trim().parse::<u64>().map_err(|_| bad(part));
        let (lo, hi) =
            if let Some((a, b)) = part.split_once('-') { (parse(a)?, parse(b)?) } else { (parse(part)?, parse(part)?) };
        if hi.checked_sub(lo).is_none_or(|span| span >= crate::sharding::MAX_SHARDING_DEVICES) {
            return Err(bad(part));
        }
        devices.extend((lo..=hi).map(DeviceId));
    }
    Ok(devices)
}

/// The side of a reshard given by a shape, a placement and `--pad-to-tile`.
fn side(shape: &ShapeBuf, placement: &Placement, padded: bool) -> Result<ShardBuffers, Failure> {
    let form = if padded { ShardForm::padded_to_tile(placement) } else { ShardForm::Exact };
    Ok(ShardBuffers::from_placement(super::array_of(shape)?, placement, &form)?)
}

/// `--reshard IN_DIR --to SHARDING2`: every target device's file made from the source files,
/// or (`--plan`) the transfers printed.
fn reshard(
    args: &ShardsArgs,
    loaded: &Loaded,
    (in_dir, to): (&Path, &str),
    io: &mut Io<'_>,
) -> Result<Status, Failure> {
    let to_shape = match &args.to_shape {
        Some(text) => text::parse_shape(text)?,
        None => loaded.shape.clone(),
    };
    let to_sharding = crate::sharding::parse(to)?;
    let to_devices = args.to_devices.or(args.devices);
    to_sharding.validate(&to_shape.view(), to_devices)?;
    let to_placement = to_sharding.placement(&super::array_of(&to_shape)?, to_devices)?;
    let plan = ReshardPlan::new(
        side(&loaded.shape, &loaded.placement, args.pad_to_tile)?,
        side(&to_shape, &to_placement, args.to_pad_to_tile)?,
    )?;
    let only = args.only_devices.as_deref().map(device_list).transpose()?;
    if let Some(unknown) = only.iter().flatten().find(|d| plan.target().shard_len(**d).is_none()) {
        return Err(Failure::invalid(format!(
            "--only-devices: device {unknown} is not a device of the target sharding ({} devices)",
            plan.target().devices().len()
        )));
    }
    let wanted = |d: &DeviceId| only.as_ref().is_none_or(|set| set.contains(d));
    if args.plan {
        let text = if args.json { plan_json(&plan, &wanted).to_string() + "\n" } else { plan_text(&plan, &wanted) };
        output::write_stdout(io, text.as_bytes())?;
        return Ok(Status::Ok);
    }
    let Some(out_dir) = &args.out_dir else {
        return Err(Failure::invalid("--reshard writes to --out-dir DIR (or give --plan)"));
    };
    let source = plan.source();
    check_shard_files(source, in_dir)?;
    let opened = open_shards(source, in_dir)?;
    let shrank = |opened: &[(DeviceId, Opened)]| opened.iter().try_for_each(|(_, o)| o.source.check());
    let sources = plan.sources(opened.iter().map(|(d, o)| (*d, &o.source[..])));
    // Zeros read from a file truncated underneath are not a replica's difference.
    shrank(&opened)?;
    let sources = sources?;
    fs::create_dir_all(out_dir).map_err(|e| Failure::invalid(format!("cannot create {}: {e}", out_dir.display())))?;
    let groups: Vec<Vec<DeviceId>> = plan
        .target()
        .replica_groups()
        .map(|group| group.iter().copied().filter(|d| wanted(d)).collect::<Vec<_>>())
        .filter(|group| !group.is_empty())
        .collect();
    // The distinct target boxes are independent outputs: one writer each, on every core (the
    // kernel's copies and the parts' relayouts are CPU work). Memory: two parts per writer, so
    // the part is split between them.
    let writers = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(groups.len()).max(1);
    let part = part_len(args).checked_div(writers).unwrap_or(1).max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failure: std::sync::Mutex<Option<Failure>> = std::sync::Mutex::new(None);
    let failed = || failure.lock().map_or(true, |f| f.is_some());
    let target = Target { plan: &plan, sources: &sources, opened: &opened, in_dir, out_dir, part };
    std::thread::scope(|scope| {
        for _ in 0..writers {
            scope.spawn(|| {
                while !failed() {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(group) = groups.get(k) else { break };
                    if let Err(e) = target.write(group) {
                        if let Ok(mut slot) = failure.lock() {
                            slot.get_or_insert(e);
                        }
                        break;
                    }
                }
            });
        }
    });
    match failure.into_inner() {
        Ok(None) => Ok(Status::Ok),
        Ok(Some(e)) => Err(e),
        Err(_) => Err(Failure::invalid("a writer of --reshard failed")),
    }
}

/// What writes one distinct target box's files.
struct Target<'a> {
    plan: &'a ReshardPlan,
    sources: &'a crate::sharding::reshard::ReshardSources<'a, 'a>,
    opened: &'a [(DeviceId, Opened)],
    in_dir: &'a Path,
    out_dir: &'a Path,
    part: usize,
}

impl Target<'_> {
    /// The files of `group` (replicas of one target box): its byte runs copied file to file or
    /// written from the mapped inputs ([`MIN_COPY_RUN`], as `--split` does), or its parts made
    /// once and written to each file.
    fn write(&self, group: &[DeviceId]) -> Result<(), Failure> {
        let Some(&first) = group.first() else { return Ok(()) };
        let shrank = || self.opened.iter().try_for_each(|(_, o)| o.source.check());
        let len = self.plan.target().shard_len(first).unwrap_or(0);
        if let Some(runs) = self.plan.byte_runs(first).filter(|runs| runs.min_len() >= MIN_SPLIT_RUN) {
            let input = |device: DeviceId| self.opened.iter().find(|(d, _)| *d == device).map(|(_, o)| o);
            // `copy_from` seeks its input: each writer reads through handles of its own, since
            // the writers' seeks on one shared handle would race.
            let mut handles: Vec<(DeviceId, File)> = Vec::new();
            for &device in group {
                let mut out = OutFile::create(&device_file(self.out_dir, device))?;
                out.reserve(len)?;
                if runs.min_len() >= MIN_COPY_RUN {
                    for run in runs.clone() {
                        let Some(opened) = input(run.source) else { continue };
                        if !handles.iter().any(|(d, _)| *d == run.source) {
                            let file = File::open(device_file(self.in_dir, run.source))
                                .map_err(|e| Failure::invalid(format!("cannot read {}: {e}", opened.name)))?;
                            handles.push((run.source, file));
                        }
                        let Some((_, file)) = handles.iter().find(|(d, _)| *d == run.source) else { continue };
                        out.copy_from(file, run.source_offset, run.len, &opened.name)?;
                    }
                } else {
                    let slices = runs.clone().filter_map(|run| {
                        input(run.source).map(|opened| run_bytes(&opened.source, run.source_offset, run.len))
                    });
                    out.write_slices(slices, || shrunk_name(self.opened))?;
                }
                // A truncation the kernel's copy did not meet still fails the run.
                shrank()?;
                out.finish()?;
            }
            return Ok(());
        }
        let mut outs = Vec::with_capacity(group.len());
        for &device in group {
            let mut out = OutFile::create(&device_file(self.out_dir, device))?;
            out.reserve(len)?;
            outs.push(out);
        }
        let total = usize::try_from(len).unwrap_or(usize::MAX);
        let compute = |buf: &mut [u8], range| self.sources.target_range(first, buf, range).map_err(Failure::from);
        parts::produce(total, self.part, &compute, &mut |bytes| {
            // A mapped input truncated underneath read as zeros: they go nowhere.
            shrank()?;
            outs.iter_mut().try_for_each(|out| out.write_bytes(bytes))
        })?;
        for out in outs {
            out.finish()?;
        }
        Ok(())
    }
}

fn transfer_json(t: &Transfer<'_>) -> Value {
    json!({
        "target": t.target.0,
        "source": t.source.0,
        "replicas": t.replicas.iter().map(|d| d.0).collect::<Vec<_>>(),
        "global_start": t.global_start,
        "extent": t.extent,
        "source_start": t.source_start,
        "target_start": t.target_start,
        "elements": t.elements,
        "bytes": t.bytes,
    })
}

/// Per device: what it is read for and written with.
#[derive(Default)]
struct Totals {
    bytes_in: u64,
    bytes_out: u64,
    transfers_in: u64,
    transfers_out: u64,
    /// Transfers into this target read from a box that other devices hold too.
    replicas_read: u64,
}

fn totals(plan: &ReshardPlan, wanted: &dyn Fn(&DeviceId) -> bool) -> std::collections::BTreeMap<DeviceId, Totals> {
    let mut by_device: std::collections::BTreeMap<DeviceId, Totals> = std::collections::BTreeMap::new();
    for t in plan.transfers().filter(|t| wanted(&t.target)) {
        let target = by_device.entry(t.target).or_default();
        target.bytes_in = target.bytes_in.saturating_add(t.bytes);
        target.transfers_in = target.transfers_in.saturating_add(1);
        if t.replicas.len() > 1 {
            target.replicas_read = target.replicas_read.saturating_add(1);
        }
        let source = by_device.entry(t.source).or_default();
        source.bytes_out = source.bytes_out.saturating_add(t.bytes);
        source.transfers_out = source.transfers_out.saturating_add(1);
    }
    by_device
}

/// `--plan --json`: the transfers (into the wanted targets) and each device's totals.
fn plan_json(plan: &ReshardPlan, wanted: &dyn Fn(&DeviceId) -> bool) -> Value {
    let transfers: Vec<Value> = plan.transfers().filter(|t| wanted(&t.target)).map(|t| transfer_json(&t)).collect();
    let devices: Vec<Value> = totals(plan, wanted)
        .iter()
        .map(|(d, t)| {
            json!({
                "device": d.0,
                "source_len": plan.source().shard_len(*d),
                "target_len": plan.target().shard_len(*d),
                "bytes_in": t.bytes_in,
                "bytes_out": t.bytes_out,
                "transfers_in": t.transfers_in,
                "transfers_out": t.transfers_out,
                "replicas_read": t.replicas_read,
            })
        })
        .collect();
    json!({ "transfers": transfers, "devices": devices })
}

/// `--plan`: one line per transfer, then one per device.
fn plan_text(plan: &ReshardPlan, wanted: &dyn Fn(&DeviceId) -> bool) -> String {
    let boxed = |start: &[u64], extent: &[u64]| {
        let dims: Vec<String> =
            start.iter().zip(extent).map(|(&s, &e)| format!("{s}:{}", s.saturating_add(e))).collect();
        format!("[{}]", dims.join(","))
    };
    let mut out = String::new();
    for t in plan.transfers().filter(|t| wanted(&t.target)) {
        let _ = write!(
            out,
            "device {} <- device {}: global {} from {} to {}, {} bytes",
            t.target,
            t.source,
            boxed(t.global_start, t.extent),
            boxed(t.source_start, t.extent),
            boxed(t.target_start, t.extent),
            t.bytes
        );
        if t.replicas.len() > 1 {
            let replicas: Vec<String> = t.replicas.iter().map(ToString::to_string).collect();
            let _ = write!(out, " (replicas {})", replicas.join(","));
        }
        out.push('\n');
    }
    for (d, t) in totals(plan, wanted) {
        let _ = writeln!(
            out,
            "device {d}: {} bytes in ({} transfers, {} from replicas), {} bytes out ({} transfers)",
            t.bytes_in, t.transfers_in, t.replicas_read, t.bytes_out, t.transfers_out
        );
    }
    out
}
