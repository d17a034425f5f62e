//! Loading inputs: bytes from a file or stdin (capped), hex text, and shapes given as a string
//! or as a serialized `ShapeProto`.

use std::fs::File;
use std::io::{BufRead, Read};
use std::path::Path;

use crate::proto::ShapeProto;
use crate::{Error, ShapeBuf, codec, text};

use crate::cli::args::ShapeSourceArgs;
use crate::cli::fail::Failure;

/// The largest shape, layout or program-shape input the tool reads from a file or stdin: 1 MiB
/// of bytes. Hex text and each `--lines` line (which may be hex) may be twice as long.
///
/// Far above any real value (a 10 000-element tuple of arrays is about 100 KB as text or bytes),
/// and it bounds the memory a hostile input can make decoding take under 80 MB (see
/// [`limits`](crate::limits#input-size)). Larger input is refused with
/// [`Error::LimitExceeded`](crate::Error::LimitExceeded), never read whole.
///
/// ```
/// let big = vec![b'0'; (2 << 20) + 2]; // hex for 1 MiB and one byte
/// let mut stderr = Vec::new();
/// let status = xla_shape::cli::run(["xla-shape", "decode", "--hex", "-"], &mut big.as_slice(), &mut Vec::new(), &mut stderr);
/// assert_eq!(status, 1);
/// assert!(String::from_utf8_lossy(&stderr).contains("input size"));
/// ```
pub const MAX_INPUT_BYTES: u64 = 1 << 20;

/// The cap on text that may be hex (two characters a byte): `--hex` input and `--lines` lines.
const MAX_TEXT_INPUT_BYTES: u64 = 2 * MAX_INPUT_BYTES;

/// All of `reader`, up to `cap` bytes.
fn read_capped(reader: impl Read, what: &str, cap: u64) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    reader
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::invalid(format!("cannot read {what}: {e}")))?;
    check_size(bytes.len(), cap)?;
    Ok(bytes)
}

/// Refuses `len` bytes beyond `cap`. Read from a stream, `len` is what was read: one byte more
/// than the cap, not the whole input.
fn check_size(len: impl TryInto<u64>, cap: u64) -> Result<(), Failure> {
    let len = len.try_into().unwrap_or(u64::MAX);
    if len > cap {
        return Err(Error::LimitExceeded { limit: crate::error::Limit::InputSize, value: len, max: cap }.into());
    }
    Ok(())
}

/// The bytes of `file`, or of `stdin` when there is none, up to `cap` bytes.
pub fn read_input(stdin: &mut dyn BufRead, file: Option<&Path>, cap: u64) -> Result<Vec<u8>, Failure> {
    match file {
        Some(path) => read_file(path, cap),
        None => read_capped(stdin, "stdin", cap),
    }
}

/// All the bytes of `file`, or of `stdin` when there is none, with no cap: serialized HLO, which
/// the `hlo` command walks in place in memory bounded by its size plus a constant
/// ([`crate::hlo`]). A regular file is read into one allocation of its exact size.
pub fn read_whole(stdin: Option<&mut dyn BufRead>, file: Option<&Path>) -> Result<Vec<u8>, Failure> {
    match (file, stdin) {
        (Some(path), _) => {
            std::fs::read(path).map_err(|e| Failure::invalid(format!("cannot open {}: {e}", path.display())))
        }
        (None, Some(stdin)) => {
            let mut bytes = Vec::new();
            stdin.read_to_end(&mut bytes).map_err(|e| Failure::invalid(format!("cannot read stdin: {e}")))?;
            Ok(bytes)
        }
        (None, None) => Ok(Vec::new()),
    }
}

/// The bytes of the file at `path`, up to `cap` bytes.
pub fn read_file(path: &Path, cap: u64) -> Result<Vec<u8>, Failure> {
    let what = format!("{}", path.display());
    let f = File::open(path).map_err(|e| Failure::invalid(format!("cannot open {what}: {e}")))?;
    // A regular file's length is known: refuse it whole, naming its size. Other files (pipes,
    // devices) are read up to the cap like stdin.
    if let Some(len) = f.metadata().ok().filter(std::fs::Metadata::is_file).map(|m| m.len()) {
        check_size(len, cap)?;
    }
    read_capped(f, &what, cap)
}

/// Decodes hex text; ASCII whitespace is ignored, either case is accepted.
pub fn decode_hex(text: &[u8]) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    for (position, &c) in text.iter().enumerate() {
        if c.is_ascii_whitespace() {
            continue;
        }
        let Some(nibble) = char::from(c).to_digit(16).and_then(|d| u8::try_from(d).ok()) else {
            return Err(Failure::invalid(format!(
                "invalid hex: {} at byte {position} is not a hex digit",
                char::from(c).escape_default()
            )));
        };
        match high.take() {
            Some(h) => out.push(h << 4 | nibble),
            None => high = Some(nibble),
        }
    }
    if high.is_some() {
        return Err(Failure::invalid("invalid hex: odd number of hex digits"));
    }
    Ok(out)
}

/// Lowercase hex, no separators.
#[allow(clippy::indexing_slicing)] // b >> 4 and b & 0xf are below 16, the length of DIGITS
pub fn encode_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len().saturating_mul(2));
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// Where `decode` and `validate` read their serialized message from.
#[derive(Clone, Copy)]
pub enum MessageSource<'a> {
    /// `--hex HEX`: the bytes, in hex, on the command line.
    Hex(&'a str),
    /// `--file FILE`, FILE, or stdin when `None`; `hex` (`--hex -`, or the deprecated bare
    /// `--hex`) when the input holds hex text.
    Input { file: Option<&'a Path>, hex: bool },
}

/// The bytes of a serialized message.
pub fn read_message(stdin: &mut dyn BufRead, source: MessageSource<'_>) -> Result<Vec<u8>, Failure> {
    match source {
        MessageSource::Hex(hex) => {
            check_size(hex.len(), MAX_TEXT_INPUT_BYTES)?;
            decode_hex(hex.as_bytes())
        }
        MessageSource::Input { file, hex } => {
            let cap = if hex { MAX_TEXT_INPUT_BYTES } else { MAX_INPUT_BYTES };
            let bytes = read_input(stdin, file, cap)?;
            if hex { decode_hex(&bytes) } else { Ok(bytes) }
        }
    }
}

/// The deprecation note of a bare `--hex`.
pub const BARE_HEX_DEPRECATED: &str =
    "`--hex` without a value is deprecated: give the hex as `--hex HEX`, or `--hex -` to read it from stdin";

/// The message source of `decode` and `validate` arguments, and a deprecation note if the old
/// spelling was used. `--hex VALUE` where VALUE is no hex but names an existing file is the old
/// `--hex FILE` (a flag, then FILE) and is read so, with the note.
pub fn message_source<'a>(
    hex: Option<&'a Option<String>>,
    file: Option<&'a Path>,
) -> (MessageSource<'a>, Option<&'static str>) {
    match hex {
        None => (MessageSource::Input { file, hex: false }, None),
        Some(Some(dash)) if dash == "-" => (MessageSource::Input { file, hex: true }, None),
        Some(None) => (MessageSource::Input { file, hex: true }, Some(BARE_HEX_DEPRECATED)),
        Some(Some(value)) => {
            let is_hex = value.bytes().all(|b| b.is_ascii_hexdigit() || b.is_ascii_whitespace());
            if !is_hex && file.is_none() && Path::new(value).is_file() {
                (MessageSource::Input { file: Some(Path::new(value)), hex: true }, Some(BARE_HEX_DEPRECATED))
            } else {
                (MessageSource::Hex(value), None)
            }
        }
    }
}

/// A shape from the command line, validated, with the wire findings of its bytes (if any).
pub struct LoadedShape {
    pub shape: ShapeBuf,
    pub warnings: Vec<String>,
}

/// Decodes a serialized `ShapeProto` leniently and validates it with optional layouts (an array
/// without a layout uses the default one, as every computation of the crate does).
pub fn shape_from_bytes(bytes: &[u8]) -> Result<LoadedShape, Failure> {
    if bytes.is_empty() {
        return Err(Failure::invalid("empty input: no ShapeProto bytes"));
    }
    let decoded = codec::decode_lenient::<ShapeProto>(bytes)?;
    let warnings = decoded.report.to_string().lines().map(str::to_owned).collect();
    let shape = ShapeBuf::try_from_proto_optional_layout(decoded.message)?;
    Ok(LoadedShape { shape, warnings })
}

/// Parses and strictly validates a shape string.
pub fn shape_from_text(text: &str) -> Result<LoadedShape, Failure> {
    Ok(LoadedShape { shape: text::parse_shape(text)?, warnings: Vec::new() })
}

/// The shape given by `--hex` or `--file`, if either is.
pub fn shape_from_source(source: &ShapeSourceArgs) -> Result<Option<LoadedShape>, Failure> {
    if let Some(hex) = &source.hex {
        return shape_from_bytes(&decode_hex(hex.as_bytes())?).map(Some);
    }
    if let Some(path) = &source.file {
        return shape_from_bytes(&read_file(path, MAX_INPUT_BYTES)?).map(Some);
    }
    Ok(None)
}

/// What a `--lines` line holds, which sets its cap (see [`LineKind::cap`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Hex of a serialized message (`decode`, `validate`): 2 MiB, the hex of the 1 MiB byte cap.
    Hex,
    /// An XLA string (`encode`, `info`, `map`): 2 MiB; the worst case, a line of
    /// `(f32[],f32[],…)`, peaks at 124 MB of resident memory (release build).
    Text,
    /// An index or slot (`offset`, `index`): 1 MiB, a rank-100 000 index.
    Index,
    /// A file path (`hlo`): 4 KiB, Linux's `PATH_MAX`.
    Path,
}

impl LineKind {
    /// The longest line of this kind, in bytes.
    pub const fn cap(self) -> u64 {
        match self {
            Self::Hex | Self::Text => MAX_TEXT_INPUT_BYTES,
            Self::Index => MAX_INPUT_BYTES,
            Self::Path => 4096,
        }
    }
}

/// Calls `f` with each line of `stdin` (without its line ending; each line at most
/// `kind.cap()` bytes). Stops at the first error `f` returns.
pub fn for_each_line(
    stdin: &mut dyn BufRead,
    kind: LineKind,
    mut f: impl FnMut(&str) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let cap = kind.cap();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut *stdin)
            .take(cap.saturating_add(2))
            .read_until(b'\n', &mut line)
            .map_err(|e| Failure::invalid(format!("cannot read stdin: {e}")))?;
        if read == 0 {
            return Ok(());
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        check_size(line.len(), cap)?;
        // A line that is not UTF-8 cannot be a shape or hex; the parser names the replacement.
        f(&String::from_utf8_lossy(&line))?;
    }
}

/// A module file as the `hlo` and `values` commands read it.
pub enum ModuleInput {
    /// HLO text in a file, read as a stream (opened again for each pass).
    TextFile(std::path::PathBuf),
    /// HLO text from stdin, held whole (stdin cannot be read twice).
    TextBytes(Vec<u8>),
    /// A serialized proto, held whole.
    Proto(Vec<u8>),
    /// StableHLO MLIR text in a file, read as a stream.
    MlirFile(std::path::PathBuf),
    /// StableHLO MLIR text from stdin, held whole.
    MlirBytes(Vec<u8>),
}

impl ModuleInput {
    /// Whether it holds StableHLO MLIR text.
    pub fn is_mlir(&self) -> bool {
        matches!(self, Self::MlirFile(_) | Self::MlirBytes(_))
    }

    /// A reader of the text from its start, for one pass.
    pub fn text_reader(&self) -> Result<Box<dyn BufRead + '_>, Failure> {
        match self {
            Self::TextFile(path) | Self::MlirFile(path) => {
                let file =
                    File::open(path).map_err(|e| Failure::invalid(format!("cannot open {}: {e}", path.display())))?;
                Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, file)))
            }
            Self::TextBytes(bytes) | Self::Proto(bytes) | Self::MlirBytes(bytes) => Ok(Box::new(bytes.as_slice())),
        }
    }
}

/// The bytes a file starts with that decide its format: enough to skip leading whitespace and
/// see `HloModule`.
const SNIFF_BYTES: u64 = 4096;

/// Loads a module file (or stdin) in `format`: text is left in the file (a proto is read whole,
/// as [`read_whole`] does).
pub fn module_input(
    stdin: Option<&mut dyn BufRead>,
    file: Option<&Path>,
    format: crate::cli::args::ModuleFormat,
) -> Result<ModuleInput, Failure> {
    use crate::cli::args::ModuleFormat;
    use crate::hlo::mlir::is_mlir_text;
    use crate::hlo::text::is_hlo_text;
    /// What the head of the input holds.
    fn detect(format: ModuleFormat, head: &[u8]) -> ModuleFormat {
        match format {
            ModuleFormat::Auto if is_hlo_text(head) => ModuleFormat::Text,
            ModuleFormat::Auto if is_mlir_text(head) => ModuleFormat::Mlir,
            ModuleFormat::Auto => ModuleFormat::Proto,
            given => given,
        }
    }
    if let Some(path) = file {
        let format = if format == ModuleFormat::Auto {
            let f = File::open(path).map_err(|e| Failure::invalid(format!("cannot open {}: {e}", path.display())))?;
            let mut head = Vec::new();
            f.take(SNIFF_BYTES)
                .read_to_end(&mut head)
                .map_err(|e| Failure::invalid(format!("cannot read {}: {e}", path.display())))?;
            detect(format, &head)
        } else {
            format
        };
        Ok(match format {
            ModuleFormat::Text => ModuleInput::TextFile(path.to_path_buf()),
            ModuleFormat::Mlir => ModuleInput::MlirFile(path.to_path_buf()),
            ModuleFormat::Proto | ModuleFormat::Auto => ModuleInput::Proto(read_whole(None, Some(path))?),
        })
    } else {
        let bytes = read_whole(stdin, None)?;
        Ok(match detect(format, &bytes) {
            ModuleFormat::Text => ModuleInput::TextBytes(bytes),
            ModuleFormat::Mlir => ModuleInput::MlirBytes(bytes),
            ModuleFormat::Proto | ModuleFormat::Auto => ModuleInput::Proto(bytes),
        })
    }
}
