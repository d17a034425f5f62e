//! Loading inputs: bytes from a file or stdin (capped), hex text, and shapes given as a string
//! or as a serialized `ShapeProto`.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::Path;

use xla_shape::proto::ShapeProto;
use xla_shape::{Error, ShapeBuf, codec, text};

use crate::args::ShapeSourceArgs;
use crate::fail::Failure;

/// The largest input read from a file or stdin, and the longest `--lines` line: 64 MiB. Larger
/// input is refused with [`Error::LimitExceeded`], never read whole.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// All of `reader`, up to [`MAX_INPUT_BYTES`].
fn read_capped(reader: impl Read, what: &str) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::invalid(format!("cannot read {what}: {e}")))?;
    check_size(bytes.len())?;
    Ok(bytes)
}

fn check_size(len: usize) -> Result<(), Failure> {
    let len = u64::try_from(len).unwrap_or(u64::MAX);
    if len > MAX_INPUT_BYTES {
        return Err(Error::LimitExceeded { limit: "input size", value: len, max: MAX_INPUT_BYTES }.into());
    }
    Ok(())
}

/// The bytes of `file`, or of stdin when there is none.
pub fn read_input(file: Option<&Path>) -> Result<Vec<u8>, Failure> {
    match file {
        Some(path) => {
            let what = format!("{}", path.display());
            let f = File::open(path).map_err(|e| Failure::invalid(format!("cannot open {what}: {e}")))?;
            read_capped(f, &what)
        }
        None => read_capped(io::stdin().lock(), "stdin"),
    }
}

/// Decodes hex text; ASCII whitespace is ignored, either case is accepted.
pub fn decode_hex(text: &[u8]) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    for (position, &c) in text.iter().enumerate() {
        if c.is_ascii_whitespace() {
            continue;
        }
        let nibble = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => {
                return Err(Failure::invalid(format!(
                    "invalid hex: {} at byte {position} is not a hex digit",
                    char::from(c).escape_default()
                )));
            }
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
pub fn encode_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// The bytes of a serialized message: from `file` or stdin, hex-decoded if `hex`.
pub fn read_message(file: Option<&Path>, hex: bool) -> Result<Vec<u8>, Failure> {
    let bytes = read_input(file)?;
    if hex { decode_hex(&bytes) } else { Ok(bytes) }
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
        return shape_from_bytes(&read_input(Some(path))?).map(Some);
    }
    Ok(None)
}

/// Calls `f` with each stdin line (without its line ending; each line at most
/// [`MAX_INPUT_BYTES`]). Stops at the first error `f` returns.
pub fn for_each_stdin_line(mut f: impl FnMut(&str) -> Result<(), Failure>) -> Result<(), Failure> {
    let mut stdin = io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut stdin)
            .take(MAX_INPUT_BYTES + 2)
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
        check_size(line.len())?;
        // A line that is not UTF-8 cannot be a shape or hex; the parser names the replacement.
        f(&String::from_utf8_lossy(&line))?;
    }
}
