//! Each distinct shape of an `hlo` text listing printed and validated once: a module repeats a
//! few shapes over thousands of instructions, and printing (XLA's text) and validating
//! (`Shape::try_new_optional_layout`, as XLA loads modules) are pure functions of the proto,
//! which is a function of the shape's text as written (`Instruction::shape_text`). Keyed by that
//! text: hashing and comparing a few bytes costs less than hashing and comparing a proto.
//! Bounded by the reader's own cache type (`hlo::text::TextCache`): at most
//! `hlo::text::MAX_CACHED_SHAPES` texts of at most `hlo::text::MAX_CACHED_SHAPE_TEXT` bytes
//! (another shape is printed and validated each time); when full it starts over.

use std::fmt::Write as _;

use crate::Shape;
use crate::hlo::text::TextCache;
use crate::proto::ShapeProto;

/// A shape as the listing shows it: XLA's text and, if invalid, why.
#[derive(Debug, Default)]
pub(crate) struct Checked {
    pub text: String,
    pub error: Option<String>,
}

impl Checked {
    /// Prints and validates `shape` into `self`, reusing its text's buffer.
    fn set(&mut self, shape: &ShapeProto) {
        self.text.clear();
        // Writing to a String cannot fail.
        let _ = write!(self.text, "{shape}");
        self.error = Shape::try_new_optional_layout(shape).err().map(|e| e.to_string());
    }
}

/// The shapes printed and validated so far.
#[derive(Debug, Default)]
pub(crate) struct Printed {
    checked: TextCache<Checked>,
    /// The last shape that was not kept.
    fresh: Checked,
}

impl Printed {
    /// `shape` printed and validated; `text` is its text as written, if it has one.
    pub(crate) fn get(&mut self, text: Option<&str>, shape: &ShapeProto) -> &Checked {
        match text.and_then(|text| self.checked.find(text)) {
            Some(at) => self.checked.get(at).unwrap_or(&self.fresh),
            None => self.insert(text, shape),
        }
    }

    /// Prints and validates a shape not seen yet, keeping it if its text is short enough.
    fn insert(&mut self, text: Option<&str>, shape: &ShapeProto) -> &Checked {
        self.fresh.set(shape);
        let Some(text) = text else { return &self.fresh };
        match self.checked.insert(text, std::mem::take(&mut self.fresh)) {
            Ok(at) => self.checked.get(at).unwrap_or(&self.fresh),
            Err(fresh) => {
                self.fresh = fresh;
                &self.fresh
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::text::MAX_CACHED_SHAPES as MAX_SHAPES;
    use crate::text::parse_shape_raw;

    #[test]
    fn cached_shapes_print_and_validate_as_the_shape_does() {
        let mut printed = Printed::default();
        let long = format!("({})", vec!["f32[2]{0}"; 20].join(", "));
        for text in ["f32[2]{0}", "f32[2]{1}", "f32[2]", "f32[2]{0}", "f32[2]{1}", long.as_str(), long.as_str()] {
            let shape = parse_shape_raw(text).unwrap();
            for key in [Some(text), None] {
                let checked = printed.get(key, &shape);
                assert_eq!(checked.text, shape.to_string());
                assert_eq!(checked.error, Shape::try_new_optional_layout(&shape).err().map(|e| e.to_string()));
            }
        }
        assert!(printed.get(Some("f32[2]{1}"), &parse_shape_raw("f32[2]{1}").unwrap()).error.is_some());
        assert_eq!(printed.checked.len(), 3);
        // Full, it starts over.
        let mut printed = Printed::default();
        for n in 0..=MAX_SHAPES {
            let text = format!("f32[{n}]{{0}}");
            assert_eq!(printed.get(Some(&text), &parse_shape_raw(&text).unwrap()).text, text);
        }
        assert_eq!(printed.checked.len(), 1);
    }
}
