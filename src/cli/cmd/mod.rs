//! One module per subcommand. Each builds a [`crate::cli::output::Reply`] per input from library
//! calls and hands it to [`crate::cli::output::emit`] or [`crate::cli::output::each_line`].

pub mod decode;
pub mod draw;
pub mod encode;
pub mod hlo;
pub mod info;
pub mod map;
pub mod offset;
pub mod relayout;
pub mod shards;
pub mod validate;
pub mod values;

use crate::{ArrayShape, ShapeBuf};

use crate::cli::fail::Failure;
use crate::cli::input::{self, LoadedShape};

/// The serialized message of `decode` and `validate`: `--hex HEX`, `--file FILE`, FILE or stdin
/// (with the deprecation note of a bare `--hex` on stderr).
pub fn read_bytes(args: &crate::cli::args::BytesArgs, io: &mut crate::cli::Io<'_>) -> Result<Vec<u8>, Failure> {
    let file = args.file.as_deref().or(args.path.as_deref());
    let (source, note) = input::message_source(args.hex.as_ref(), file);
    if let Some(note) = note {
        crate::cli::output::warn(io.stderr, "", &[note.to_owned()]);
    }
    input::read_message(io.stdin, source)
}

/// The array of a shape (a buffer's array too), for the commands that locate elements.
pub fn array_of(shape: &ShapeBuf) -> Result<ArrayShape<'_>, Failure> {
    shape.view().array_or_buffer().ok_or_else(|| Failure::invalid(format!("`{shape}` is not an array shape")))
}

/// The warning for a shape whose XLA string drops fields, if it does.
pub fn text_loss_warning(shape: &ShapeBuf) -> Option<String> {
    let lost = crate::text::lost_in_text(shape.view());
    if lost.is_empty() {
        return None;
    }
    let fields = lost.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    Some(format!(
        "the XLA string `{shape}` omits {fields}: XLA text cannot hold them, so the string alone \
         loses them (keep the serialized ShapeProto)"
    ))
}

/// The shape of a shape-taking command: `--hex`/`--file`, else the SHAPE string.
pub fn load_shape(source: &crate::cli::args::ShapeSourceArgs, text: Option<&str>) -> Result<LoadedShape, Failure> {
    match (input::shape_from_source(source)?, text) {
        (Some(loaded), None) => Ok(loaded),
        (None, Some(text)) => input::shape_from_text(text),
        (Some(_), Some(_)) => {
            Err(Failure::Usage("give the shape either as SHAPE or with --hex/--file, not both".into()))
        }
        (None, None) => Err(Failure::Usage("missing SHAPE (or --hex HEX, --file FILE)".into())),
    }
}
