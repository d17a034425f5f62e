//! The names the pictures give elements and padding, shared with the `map` command's text
//! picture: letters `a b c …` for small arrays as the seed document writes them, indices
//! otherwise, and legacy padding shown as its fill value.

use crate::ArrayShape;
use crate::padding::{self, Fill};

/// Arrays with at most this many elements name them with letters `a`…`z`.
pub const MAX_LETTERS: i64 = 26;

/// The name of an element: with `letters`, its letter in logical row-major order (the caller
/// checked that there are at most [`MAX_LETTERS`] elements), else its index `i0,i1,…` in
/// parentheses.
///
/// ```
/// use xla_shape::draw::label::element_label;
/// assert_eq!(element_label(&[1, 0], &[2, 3], true), "d");
/// assert_eq!(element_label(&[1, 0], &[2, 3], false), "(1,0)");
/// ```
pub fn element_label(index: &[i64], dims: &[i64], letters: bool) -> String {
    if letters {
        let linear = index.iter().zip(dims).fold(0i64, |acc, (&i, &d)| acc.saturating_mul(d).saturating_add(i));
        // Below MAX_LETTERS, checked by the caller.
        let offset = u8::try_from(linear).unwrap_or(0);
        char::from(b'a'.saturating_add(offset)).to_string()
    } else {
        format!("({})", join(index))
    }
}

/// Index entries joined with commas, as the tool prints and reads them.
///
/// ```
/// assert_eq!(xla_shape::draw::label::join(&[3, 0, 12]), "3,0,12");
/// ```
pub fn join(index: &[i64]) -> String {
    index.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

/// How padding slots are named: the legacy padding value where the layout is padded and the
/// value is defined (`0` as in the seed document), else `pad`.
///
/// ```
/// use xla_shape::{draw::label::fill_label, make::{make_shape_with_layout, LayoutSpec}, proto::PaddingValue, PrimitiveType};
/// let s = make_shape_with_layout(PrimitiveType::F32, &[2, 3],
///     &LayoutSpec::new(&[0, 1]).padded_dimensions(&[3, 5], PaddingValue::ZeroPad)).unwrap();
/// assert_eq!(fill_label(s.as_array().unwrap()), "0");
/// ```
pub fn fill_label(array: ArrayShape<'_>) -> String {
    if !padding::is_padded(array) {
        return "pad".to_owned();
    }
    match padding::padding_fill(array) {
        Ok(Fill::Zero | Fill::ZeroBitPattern | Fill::Bool(false)) => "0".to_owned(),
        Ok(Fill::One | Fill::Bool(true)) => "1".to_owned(),
        Ok(Fill::Int(i)) => i.to_string(),
        Ok(Fill::NegInfinity) => "-inf".to_owned(),
        Ok(Fill::Infinity) => "inf".to_owned(),
        Ok(Fill::MinFinite(v) | Fill::MaxFinite(v)) => v.to_string(),
        _ => "pad".to_owned(),
    }
}
