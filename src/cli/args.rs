//! The command line (clap derive). Exit status 2 for usage errors is clap's own.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// XLA shapes and layouts: decode, encode, validate, locate elements in memory, describe.
///
/// Exit status: 0 success, 1 invalid input (wire error, validation failure, parse failure),
/// 2 usage error.
#[derive(Debug, Parser)]
#[command(name = "xla-shape", version, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode a serialized proto (FILE or stdin) and print its XLA string with layout.
    Decode(BytesArgs),
    /// Parse an XLA string and write the XLA-form proto bytes to stdout.
    Encode(EncodeArgs),
    /// Decode and validate a serialized proto; print `ok` or the error.
    Validate(BytesArgs),
    /// Print the physical slot of the element at I0,I1,… (`""` for a scalar).
    Offset(LocateArgs),
    /// Print the logical index `i0,i1,…` held by a physical SLOT, or `padding`.
    Index(LocateArgs),
    /// Describe a shape for a person: type, dimensions, layout, tiles, padding, sizes, strides.
    Info(InfoArgs),
    /// Draw the physical memory of a small array (at most 4096 slots).
    Map(MapArgs),
    /// Draw an array's logical grid and memory strip as an SVG picture (large arrays summarized).
    Draw(DrawArgs),
    /// List and validate every shape in a serialized `HloModuleProto` (or `HloProto`, `HloSnapshot`).
    Hlo(HloArgs),
    /// Print the values of every constant (and a snapshot's arguments and result) in XLA's text.
    Values(ValuesArgs),
    /// Where each device's part of a sharded array is: one JSON object per device with --json,
    /// else a picture of the two major sharded dimensions with the device ids in each block;
    /// `--split FILE --out-dir DIR` writes each device's buffer, `--assemble DIR --output FILE`
    /// builds the global buffer back.
    Shards(ShardsArgs),
    /// Move an array's bytes from layout FROM to layout TO: reads FROM's physical bytes (FILE or
    /// stdin), writes TO's (stdout or --output).
    Relayout(RelayoutArgs),
}

#[allow(clippy::struct_excessive_bools, reason = "each is an independent command-line switch")]
#[derive(Debug, Args)]
pub struct RelayoutArgs {
    /// FROM as a serialized `ShapeProto` file (the only way to state legacy padding).
    #[arg(long, value_name = "FILE", conflicts_with = "npy_in")]
    pub from_file: Option<PathBuf>,
    /// TO as a serialized `ShapeProto` file.
    #[arg(long, value_name = "FILE", conflicts_with = "npy_out")]
    pub to_file: Option<PathBuf>,
    /// The input is a `.npy` file: FROM is its dtype, shape and order (give no FROM).
    #[arg(long)]
    pub npy_in: bool,
    /// Write a row-major `.npy` file of TO's element type and dimensions (give no TO).
    #[arg(long)]
    pub npy_out: bool,
    /// Write here instead of stdout (through a temporary file beside it, renamed into place
    /// when complete; a symbolic link is followed, a device or FIFO written in place).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Threads that produce the output (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Memory for data, in MiB: the output is produced in two buffers of a quarter of it (one
    /// written while the next is computed), and a piped input larger than the other half is
    /// spooled to a temporary file. Mapped files do not count.
    #[arg(long, value_name = "MIB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub max_memory: u64,
    /// Read an input file into memory instead of mapping it (memory as large as the input).
    #[arg(long)]
    pub no_mmap: bool,
    /// Print what the plan decided (boxes, axes, kernels, stores, and the column blocks a file
    /// would get) instead of relaying out; no input data is read (a `.npy` header aside).
    #[arg(long)]
    pub explain: bool,
    /// FROM (unless --from-file or --npy-in), TO (unless --to-file or --npy-out), then FILE
    /// (default: stdin).
    #[arg(value_name = "FROM|TO|FILE", num_args = 0..=3)]
    pub operands: Vec<String>,
}

#[allow(clippy::struct_excessive_bools, reason = "each is an independent command-line switch")]
#[derive(Debug, Args)]
pub struct ShardsArgs {
    /// The program's device count: required for `{replicated}`; checked against a tiled
    /// sharding (default: the tile assignment's devices).
    #[arg(long, value_name = "N")]
    pub devices: Option<u64>,
    /// One JSON object per device, by device id: device, tile index, start, limit, replica group,
    /// elements, bytes.
    #[arg(long)]
    pub json: bool,
    /// The global array's shape with its layout, e.g. `bf16[4096,1024]{0,1}`.
    #[arg(value_name = "SHAPE")]
    pub shape: String,
    /// The sharding in XLA's text, e.g. `{devices=[2,1,4]<=[8] last_tile_dim_replicate}`.
    #[arg(value_name = "SHARDING")]
    pub sharding: String,
    /// Split this global buffer (SHAPE's physical bytes) into DIR/device-D.bin, one file per
    /// device (`docs/shard-buffers.md`).
    #[arg(long, value_name = "FILE", requires = "out_dir", conflicts_with_all = ["assemble", "json"])]
    pub split: Option<PathBuf>,
    /// The directory --split writes to (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Assemble every device's DIR/device-D.bin into the global buffer.
    #[arg(long, value_name = "DIR", requires = "output", conflicts_with = "json")]
    pub assemble: Option<PathBuf>,
    /// The file --assemble writes.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Shard buffers padded to the tile shape (as the SPMD-partitioned program sees them)
    /// instead of each device's exact slice.
    #[arg(long)]
    pub pad_to_tile: bool,
    /// Memory for data, in MiB, for --split and --assemble: files are produced in two buffers
    /// of a quarter of it (one written while the next is computed). Mapped input files do not
    /// count; runs copied file to file (dense layouts) take none.
    #[arg(long, value_name = "MIB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub max_memory: u64,
    /// Reshard: read every IN_DIR/device-D.bin of SHAPE under SHARDING (as --split writes them)
    /// and write the buffers of --to as --out-dir/device-D.bin, with no global buffer
    /// (`docs/shard-buffers.md` §9).
    #[arg(long, value_name = "IN_DIR", requires = "to", conflicts_with_all = ["split", "assemble"])]
    pub reshard: Option<PathBuf>,
    /// The target sharding of --reshard, in XLA's text.
    #[arg(long, value_name = "SHARDING", requires = "reshard")]
    pub to: Option<String>,
    /// The target shape of --reshard: SHAPE's element type and dimensions, in another layout
    /// (default: SHAPE).
    #[arg(long, value_name = "SHAPE", requires = "reshard")]
    pub to_shape: Option<String>,
    /// The target's device count for --reshard (default: --devices).
    #[arg(long, value_name = "N", requires = "reshard")]
    pub to_devices: Option<u64>,
    /// --reshard writes target buffers padded to the target sharding's tile shape.
    #[arg(long, requires = "reshard")]
    pub to_pad_to_tile: bool,
    /// --reshard writes only these target devices' files (`0,2,5-7`): each host of a
    /// multi-host job its own, from a shared input directory.
    #[arg(long, value_name = "LIST", requires = "reshard")]
    pub only_devices: Option<String>,
    /// --reshard prints its transfers and per-device totals (--json: as one JSON object)
    /// instead of moving data; no file is read.
    #[arg(long, requires = "reshard")]
    pub plan: bool,
}

/// Which message serialized bytes hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MessageType {
    /// `xla.ShapeProto`
    Shape,
    /// `xla.LayoutProto`
    Layout,
    /// `xla.ProgramShapeProto`
    ProgramShape,
    /// `xla.OpSharding` (text: XLA's sharding, `{devices=[2,2]<=[4]}`)
    Sharding,
}

/// Output options every subcommand takes.
#[derive(Debug, Clone, Copy, Args)]
pub struct OutputArgs {
    /// Machine-readable output: one JSON object per result, on one line.
    #[arg(long)]
    pub json: bool,
    /// Read one input per stdin line and write one output line each (`error: …` for a failure;
    /// exit 1 if any failed).
    #[arg(long)]
    pub lines: bool,
}

#[derive(Debug, Args)]
pub struct BytesArgs {
    /// The message the bytes hold.
    #[arg(long = "type", value_enum, default_value_t = MessageType::Shape)]
    pub message: MessageType,
    /// The serialized proto as hex (whitespace ignored), as in every subcommand; `--hex -` reads
    /// the hex from stdin (deprecated: a bare `--hex`, FILE or stdin holding hex). With --lines
    /// every line is hex.
    #[arg(long, value_name = "HEX", num_args = 0..=1, conflicts_with = "file")]
    #[allow(clippy::option_option, reason = "clap's form of a flag with an optional value: absent, bare, or given")]
    pub hex: Option<Option<String>>,
    /// Accept arrays without a layout (XLA's `ValidateShapeWithOptionalLayout`).
    #[arg(long)]
    pub optional_layout: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    /// The serialized proto in a file, as in every subcommand (or give FILE alone).
    #[arg(long = "file", value_name = "FILE", conflicts_with_all = ["lines", "path"])]
    pub file: Option<PathBuf>,
    /// The serialized proto (default: stdin).
    #[arg(value_name = "FILE", conflicts_with = "lines")]
    pub path: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct EncodeArgs {
    /// The message the string describes.
    #[arg(long = "type", value_enum, default_value_t = MessageType::Shape)]
    pub message: MessageType,
    /// Write the serialized bytes as one line of lowercase hex instead of binary (always so with
    /// --lines): the same hex form `--hex HEX` reads in the other subcommands.
    #[arg(long)]
    pub hex: bool,
    /// Parse as XLA's own parser does, without the crate's strict validation.
    #[arg(long)]
    pub raw: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    /// The XLA shape, layout or program-shape string.
    #[arg(required_unless_present = "lines", conflicts_with = "lines")]
    pub string: Option<String>,
}

/// A serialized `ShapeProto` given instead of a SHAPE string: the only way to state what XLA text
/// cannot express (legacy padding).
#[derive(Debug, Args)]
pub struct ShapeSourceArgs {
    /// The shape as a serialized `ShapeProto` in hex, instead of a SHAPE string.
    #[arg(long = "hex", value_name = "HEX", conflicts_with = "file")]
    pub hex: Option<String>,
    /// The shape as a serialized `ShapeProto` file, instead of a SHAPE string.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct LocateArgs {
    #[command(flatten)]
    pub source: ShapeSourceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// SHAPE (unless --hex or --file gives it), then the index or slot (unless --lines reads
    /// them from stdin).
    #[arg(value_name = "SHAPE|INDEX", num_args = 0..=2)]
    pub operands: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ShapeOnlyArgs {
    #[command(flatten)]
    pub source: ShapeSourceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// The XLA shape string (unless --hex, --file or --lines gives the shape).
    #[arg(value_name = "SHAPE")]
    pub shape: Option<String>,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub shape: ShapeOnlyArgs,
    /// With SHAPE naming a file, or with --type or --format text: the file is an HLO module
    /// (text, or the proto this gives), summarized instead of a shape.
    #[arg(long = "type", value_enum)]
    pub message: Option<HloType>,
    #[command(flatten)]
    pub format: ModuleFormatArgs,
}

/// How `map` names the element in a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Labels {
    /// Letters `a b c …` in logical row-major order when there are at most 26 elements, as in
    /// the seed documents; indices otherwise.
    Auto,
    /// Letters (at most 26 elements).
    Letters,
    /// Logical indices `(i0,i1,…)`.
    Index,
}

#[derive(Debug, Args)]
pub struct MapArgs {
    #[command(flatten)]
    pub shape: ShapeOnlyArgs,
    /// Draw the logical array instead, with each element's slot.
    #[arg(long)]
    pub grid: bool,
    /// How a memory slot names its element.
    #[arg(long, value_enum, default_value_t = Labels::Auto)]
    pub labels: Labels,
}

#[derive(Debug, Args)]
pub struct DrawArgs {
    #[command(flatten)]
    pub source: ShapeSourceArgs,
    /// Print a JSON summary (size, cells, slots, padding slots, output file) instead of the SVG
    /// when no -o is given, besides writing the file when it is.
    #[arg(long)]
    pub json: bool,
    /// Write the SVG to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE.svg")]
    pub output: Option<PathBuf>,
    /// The dimensions forming the rows and columns of the grid, as ROWS,COLUMNS (default: the
    /// last two).
    #[arg(long, value_name = "ROWS,COLUMNS")]
    pub grid: Option<String>,
    /// The most positions shown along a grid axis (2–48); longer axes are elided.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub max_extent: u64,
    /// The most slices of higher dimensions shown (2–8).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub max_slices: u64,
    /// About the most memory slots shown (32–4096).
    #[arg(long, value_name = "N", default_value_t = 512)]
    pub max_slots: u64,
    /// Draw this sharding (XLA's text) over the array instead of its layout: one block per
    /// slice, coloured, labelled with its devices.
    #[arg(long, value_name = "SHARDING")]
    pub sharding: Option<String>,
    /// With --sharding: the program's device count (required for `{replicated}`).
    #[arg(long, value_name = "N", requires = "sharding")]
    pub devices: Option<u64>,
    /// The XLA shape string (unless --hex or --file gives the shape).
    #[arg(value_name = "SHAPE")]
    pub shape: Option<String>,
}

/// Which HLO message the bytes hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HloType {
    /// `xla.HloModuleProto`
    Module,
    /// `xla.HloProto` (a module inside)
    Proto,
    /// `xla.HloSnapshot` (an `HloProto` inside)
    Snapshot,
}

/// Whether a module file is HLO text or a serialized proto.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModuleFormat {
    /// Text if the content starts (after whitespace) with `HloModule`, StableHLO if it starts
    /// as MLIR text does, else a proto.
    Auto,
    /// XLA's HLO text (`--xla_dump_to` `.txt` dumps, `as_text()`).
    Text,
    /// A serialized proto (`--type` says which message).
    Proto,
    /// StableHLO MLIR text (`lowered.as_text()`, `jax.export`): detected when the content starts
    /// with `module`, `func.func` or an alias definition (`#loc…`).
    Mlir,
}

/// How a module file is read: its format, and the text reader's statement limit.
#[derive(Debug, Clone, Copy, Args)]
pub struct ModuleFormatArgs {
    /// The file's format.
    #[arg(long, value_enum, default_value_t = ModuleFormat::Auto)]
    pub format: ModuleFormat,
    /// HLO text: the longest statement (a line, or the lines an open bracket joins) read, in
    /// bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::hlo::text::DEFAULT_MAX_STATEMENT_BYTES)]
    pub max_statement_bytes: usize,
}

#[derive(Debug, Args)]
pub struct HloArgs {
    /// The message the file holds (a proto; HLO text is always a module). Default: told from
    /// the bytes (an `HloModuleProto`, an `HloProto` as `--xla_dump_hlo_as_proto` writes, or an
    /// `HloSnapshot`).
    #[arg(long = "type", value_enum)]
    pub message: Option<HloType>,
    #[command(flatten)]
    pub format: ModuleFormatArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// The serialized HLO in a file, as in every subcommand (or give FILE alone).
    #[arg(long = "file", value_name = "FILE", conflicts_with_all = ["lines", "path"])]
    pub file: Option<PathBuf>,
    /// The serialized HLO (default: stdin). With --lines, stdin lists one file path per line.
    #[arg(value_name = "FILE", conflicts_with = "lines")]
    pub path: Option<PathBuf>,
}

/// XLA elides constants of more than 10 elements (`HloPrintOptions::print_large_constants`).
pub const DEFAULT_VALUES_LIMIT: usize = 10;

/// Which message holds the literals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ValuesType {
    /// `xla.HloModuleProto`: its constants
    Module,
    /// `xla.HloProto`: its module's constants
    Proto,
    /// `xla.HloSnapshot`: its module's constants, `arguments` and `result`
    Snapshot,
    /// `xla.LiteralProto`: one literal
    Literal,
}

#[derive(Debug, Args)]
pub struct ValuesArgs {
    /// The message the file holds (a proto; HLO text is always a module). Default: told from
    /// the bytes, as for `hlo` (a lone `LiteralProto` needs `--type literal`).
    #[arg(long = "type", value_enum)]
    pub message: Option<ValuesType>,
    #[command(flatten)]
    pub format: ModuleFormatArgs,
    /// `--json`: one JSON object with typed values (flat, row-major).
    #[command(flatten)]
    pub output: OutputArgs,
    /// Elide arrays of more than N elements as XLA does (`{...}`).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_VALUES_LIMIT, conflicts_with = "all")]
    pub limit: usize,
    /// Print every value, however many.
    #[arg(long)]
    pub all: bool,
    /// Also write one `.npy` file per array into DIR (types numpy has).
    #[arg(long, value_name = "DIR")]
    pub npy: Option<PathBuf>,
    /// The serialized message (default: stdin). With --lines, stdin lists one file path per line.
    #[arg(conflicts_with = "lines")]
    pub file: Option<PathBuf>,
}
