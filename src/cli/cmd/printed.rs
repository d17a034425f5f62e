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
use crate::hlo::text::{MAX_CACHED_SHAPES, TextCache};
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

/// How a shape is known again: its text as written, or its place in the StableHLO reader's
/// cache (`hlo::mlir::Op::slot`: the cache's generation and index), which needs no hashing.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Key<'a> {
    /// Not known again: printed each time.
    None,
    /// The shape's text as written.
    Text(&'a str),
    /// The reader's cache generation and index.
    Slot(u64, usize),
}

impl<'a> From<Option<&'a str>> for Key<'a> {
    fn from(text: Option<&'a str>) -> Self {
        text.map_or(Self::None, Self::Text)
    }
}

/// The shapes printed and validated so far.
#[derive(Debug, Default)]
pub(crate) struct Printed {
    checked: TextCache<Checked>,
    /// By the reader's cache index, for one generation of it (at most
    /// `hlo::text::MAX_CACHED_SHAPES`, as the reader's cache).
    slots: Vec<Option<Checked>>,
    generation: u64,
    /// The last shape that was not kept.
    fresh: Checked,
}

impl Printed {
    /// `shape` printed and validated; `key` tells it again.
    pub(crate) fn get(&mut self, key: Key<'_>, shape: &ShapeProto) -> &Checked {
        let text = match key {
            Key::None => None,
            Key::Text(text) => Some(text),
            Key::Slot(generation, at) => return self.slot(generation, at, shape),
        };
        match text.and_then(|text| self.checked.find(text)) {
            Some(at) => self.checked.get(at).unwrap_or(&self.fresh),
            None => self.insert(text, shape),
        }
    }

    /// The shape at `at` of the reader's cache in its `generation`.
    fn slot(&mut self, generation: u64, at: usize, shape: &ShapeProto) -> &Checked {
        if generation != self.generation {
            self.slots.clear();
            self.generation = generation;
        }
        if at >= MAX_CACHED_SHAPES {
            self.fresh.set(shape);
            return &self.fresh;
        }
        if self.slots.len() <= at {
            self.slots.resize_with(at.saturating_add(1), || None);
        }
        if let Some(slot) = self.slots.get_mut(at) {
            return slot.get_or_insert_with(|| {
                let mut checked = Checked::default();
                checked.set(shape);
                checked
            });
        }
        self.fresh.set(shape);
        &self.fresh
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
                let checked = printed.get(key.into(), &shape);
                assert_eq!(checked.text, shape.to_string());
                assert_eq!(checked.error, Shape::try_new_optional_layout(&shape).err().map(|e| e.to_string()));
            }
        }
        assert!(printed.get(Key::Text("f32[2]{1}"), &parse_shape_raw("f32[2]{1}").unwrap()).error.is_some());
        assert_eq!(printed.checked.len(), 3);
        // Full, it starts over.
        let mut printed = Printed::default();
        for n in 0..=MAX_SHAPES {
            let text = format!("f32[{n}]{{0}}");
            assert_eq!(printed.get(Key::Text(&text), &parse_shape_raw(&text).unwrap()).text, text);
        }
        assert_eq!(printed.checked.len(), 1);
    }

    #[test]
    fn slots_print_and_validate_as_the_shape_does_for_one_generation() {
        let mut printed = Printed::default();
        let (valid, invalid) = (parse_shape_raw("f32[2]{0}").unwrap(), parse_shape_raw("f32[2]{1}").unwrap());
        assert_eq!(printed.get(Key::Slot(0, 3), &valid).text, "f32[2]{0}");
        assert!(printed.get(Key::Slot(0, 3), &invalid).error.is_none(), "kept for generation 0");
        assert!(printed.get(Key::Slot(1, 3), &invalid).error.is_some(), "a new generation starts over");
        assert_eq!(printed.get(Key::Slot(1, MAX_SHAPES), &valid).text, "f32[2]{0}");
        assert_eq!(printed.slots.len(), 4);
    }
}
