//! Each distinct shape of a listing printed and validated once: a module repeats a few shapes
//! over thousands of instructions, and printing (XLA's text) and validating
//! (`Shape::try_new_optional_layout`, as XLA loads modules) are pure functions of the proto,
//! which is a function of the shape's text as written (`Instruction::shape_text`). Keyed by that
//! text: hashing and comparing a few bytes costs less than hashing and comparing a proto.
//! Bounded by the reader's own cache type (`hlo::text::TextCache`): at most
//! `hlo::text::MAX_CACHED_SHAPES` texts of at most `hlo::text::MAX_CACHED_SHAPE_TEXT` bytes
//! (another shape is printed and validated each time); when full it starts over.

use std::sync::Arc;

use crate::hlo::text::{MAX_CACHED_SHAPES, TextCache};
use crate::proto::ShapeProto;

use super::entry::CheckedShape;

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
    checked: TextCache<Arc<CheckedShape>>,
    /// By the reader's cache index, for one generation of it (at most
    /// `hlo::text::MAX_CACHED_SHAPES`, as the reader's cache).
    slots: Vec<Option<Arc<CheckedShape>>>,
    generation: u64,
}

impl Printed {
    /// `shape` printed and validated; `key` tells it again.
    pub(crate) fn get(&mut self, key: Key<'_>, shape: &ShapeProto) -> Arc<CheckedShape> {
        let text = match key {
            Key::None => return Arc::new(CheckedShape::new(shape)),
            Key::Text(text) => text,
            Key::Slot(generation, at) => return self.slot(generation, at, shape),
        };
        if let Some(checked) = self.checked.find(text).and_then(|at| self.checked.get(at)) {
            return Arc::clone(checked);
        }
        let checked = Arc::new(CheckedShape::new(shape));
        // A text too long to keep is printed again next time.
        let _ = self.checked.insert(text, Arc::clone(&checked));
        checked
    }

    /// The shape at `at` of the reader's cache in its `generation`.
    fn slot(&mut self, generation: u64, at: usize, shape: &ShapeProto) -> Arc<CheckedShape> {
        if generation != self.generation {
            self.slots.clear();
            self.generation = generation;
        }
        if at >= MAX_CACHED_SHAPES {
            return Arc::new(CheckedShape::new(shape));
        }
        if self.slots.len() <= at {
            self.slots.resize_with(at.saturating_add(1), || None);
        }
        match self.slots.get_mut(at) {
            Some(slot) => Arc::clone(slot.get_or_insert_with(|| Arc::new(CheckedShape::new(shape)))),
            None => Arc::new(CheckedShape::new(shape)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Shape;
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
                assert_eq!(checked.text(), shape.to_string());
                assert_eq!(
                    checked.shape().err().map(ToString::to_string),
                    Shape::try_new_optional_layout(&shape).err().map(|e| e.to_string())
                );
            }
        }
        assert!(printed.get(Key::Text("f32[2]{1}"), &parse_shape_raw("f32[2]{1}").unwrap()).shape().is_err());
        assert_eq!(printed.checked.len(), 3);
        // Full, it starts over.
        let mut printed = Printed::default();
        for n in 0..=MAX_SHAPES {
            let text = format!("f32[{n}]{{0}}");
            assert_eq!(printed.get(Key::Text(&text), &parse_shape_raw(&text).unwrap()).text(), text);
        }
        assert_eq!(printed.checked.len(), 1);
    }

    #[test]
    fn slots_print_and_validate_as_the_shape_does_for_one_generation() {
        let mut printed = Printed::default();
        let (valid, invalid) = (parse_shape_raw("f32[2]{0}").unwrap(), parse_shape_raw("f32[2]{1}").unwrap());
        assert_eq!(printed.get(Key::Slot(0, 3), &valid).text(), "f32[2]{0}");
        assert!(printed.get(Key::Slot(0, 3), &invalid).is_valid(), "kept for generation 0");
        assert!(!printed.get(Key::Slot(1, 3), &invalid).is_valid(), "a new generation starts over");
        assert_eq!(printed.get(Key::Slot(1, MAX_SHAPES), &valid).text(), "f32[2]{0}");
        assert_eq!(printed.slots.len(), 4);
    }
}
