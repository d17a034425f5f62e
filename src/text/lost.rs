//! The fields XLA's text form cannot hold, written once: every warning and every refusal to
//! serialize (the CLI's `decode`, its text-taking commands, serde) asks [`dropped_in_layout`].
//!
//! XLA never printed the legacy `padded_dimensions` and `padding_value`, and its printer leaves
//! out a negative `dynamic_shape_metadata_prefix_bytes` (`docs/text-format.md` §4). Everything
//! else a valid shape or layout holds survives print → parse.

use std::fmt;

use crate::error::FieldPath;
use crate::layout::Layout;
use crate::proto::LayoutProto;
use crate::shape::{Shape, ShapeKind};

/// A layout field that XLA's text form does not hold.
///
/// ```
/// use xla_shape::text::Dropped;
/// assert_eq!(Dropped::PaddingValue.field(), "padding_value");
/// assert_eq!(Dropped::PaddingValue.to_string(), "legacy padding_value");
/// assert_eq!(Dropped::PaddedDimensions.reason(), "legacy padding is never printed");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dropped {
    /// The legacy `padded_dimensions` (2017–2018).
    PaddedDimensions,
    /// The legacy `padding_value` (2017–2018).
    PaddingValue,
    /// A negative `dynamic_shape_metadata_prefix_bytes` (the printer writes `M(n)` only for a
    /// positive `n`).
    NegativeMetadataPrefix,
}

impl Dropped {
    /// The field's name in `LayoutProto`.
    pub fn field(self) -> &'static str {
        match self {
            Self::PaddedDimensions => "padded_dimensions",
            Self::PaddingValue => "padding_value",
            Self::NegativeMetadataPrefix => "dynamic_shape_metadata_prefix_bytes",
        }
    }

    /// Why the text does not hold it.
    pub fn reason(self) -> &'static str {
        match self {
            Self::PaddedDimensions | Self::PaddingValue => "legacy padding is never printed",
            Self::NegativeMetadataPrefix => "a negative dynamic_shape_metadata_prefix_bytes is never printed",
        }
    }
}

/// The field as people name it: `legacy padded_dimensions`, `negative
/// dynamic_shape_metadata_prefix_bytes`.
impl fmt::Display for Dropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PaddedDimensions | Self::PaddingValue => write!(f, "legacy {}", self.field()),
            Self::NegativeMetadataPrefix => write!(f, "negative {}", self.field()),
        }
    }
}

/// The fields of one layout that its text does not hold, in field order. The one rule.
///
/// ```
/// use xla_shape::{proto::LayoutProto, text::{dropped_in_layout, Dropped}};
/// let layout = LayoutProto { minor_to_major: vec![0], dynamic_shape_metadata_prefix_bytes: -4, ..Default::default() };
/// assert_eq!(dropped_in_layout(&layout).collect::<Vec<_>>(), [Dropped::NegativeMetadataPrefix]);
/// ```
pub fn dropped_in_layout(layout: &LayoutProto) -> impl Iterator<Item = Dropped> {
    [
        (!layout.padded_dimensions.is_empty()).then_some(Dropped::PaddedDimensions),
        (layout.padding_value != 0).then_some(Dropped::PaddingValue),
        (layout.dynamic_shape_metadata_prefix_bytes < 0).then_some(Dropped::NegativeMetadataPrefix),
    ]
    .into_iter()
    .flatten()
}

/// One field a text form loses: where it is, and which it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LostField {
    /// The path of the field in the message (`tuple_shapes[1].layout.padding_value`).
    pub path: FieldPath,
    /// Which field.
    pub dropped: Dropped,
}

/// Shows the path.
impl fmt::Display for LostField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.path.fmt(f)
    }
}

/// The fields of a shape that its XLA text does not hold, so a print → parse round trip loses
/// them ([`dropped_in_layout`] of every layout), in shape order.
///
/// ```
/// use xla_shape::{make, proto::PaddingValue, text::lost_in_text, PrimitiveType};
/// let layout = make::LayoutSpec::new(&[0, 1]).padded_dimensions(&[3, 5], PaddingValue::ZeroPad);
/// let padded = make::make_shape_with_layout(PrimitiveType::F32, &[2, 3], &layout).unwrap();
/// let lost: Vec<String> = lost_in_text(padded.view()).iter().map(ToString::to_string).collect();
/// assert_eq!(lost, ["layout.padded_dimensions", "layout.padding_value"]);
/// assert!(lost_in_text(make::make_shape(PrimitiveType::F32, &[2]).unwrap().view()).is_empty());
/// ```
pub fn lost_in_text(shape: Shape<'_>) -> Vec<LostField> {
    let mut lost = Vec::new();
    collect(shape, FieldPath::root(), &mut lost);
    lost
}

/// The fields of a standalone layout that its XLA text does not hold ([`dropped_in_layout`]),
/// with paths from the layout.
pub fn lost_in_layout_text(layout: Layout<'_>) -> Vec<LostField> {
    in_layout(layout, &FieldPath::root())
}

fn in_layout(layout: Layout<'_>, path: &FieldPath) -> Vec<LostField> {
    dropped_in_layout(layout.proto())
        .map(|dropped| LostField { path: path.clone().field(dropped.field()), dropped })
        .collect()
}

/// Validated shapes nest at most `MAX_DEPTH` levels, so the recursion is bounded.
fn collect(shape: Shape<'_>, path: FieldPath, lost: &mut Vec<LostField>) {
    match shape.kind() {
        ShapeKind::Array(array) => {
            if let Some(layout) = array.layout() {
                lost.extend(in_layout(layout, &path.field("layout")));
            }
        }
        ShapeKind::Buffer(array) => {
            if let Some(layout) = array.layout() {
                lost.extend(in_layout(layout, &path.field("tuple_shapes").index(0).field("layout")));
            }
        }
        ShapeKind::Tuple(tuple) => {
            for (i, element) in tuple.iter().enumerate() {
                collect(element, path.clone().field("tuple_shapes").index(i), lost);
            }
        }
        ShapeKind::Token | ShapeKind::Opaque => {}
    }
}
