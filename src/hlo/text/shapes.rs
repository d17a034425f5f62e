//! The instructions' shapes, parsed once per distinct text: an XLA module repeats a few shapes
//! over thousands of instructions, and parsing one (a `ShapeProto` with its vectors and boxed
//! layout) costs more than the rest of its statement. The cache is bounded
//! ([`MAX_CACHED_SHAPES`] texts of at most [`MAX_CACHED_SHAPE_TEXT`] bytes; when full it starts
//! over), so the reader's memory stays bounded by the statement (`docs/hlo.md` §6).
//!
//! A cached text answers only where the parser would give the same answer: the text is the
//! shape up to the first space outside brackets, followed by one space and an ASCII letter (the
//! opcode). It is cached only when the parser, on such a text, stopped exactly at that letter:
//! the parse read the cached bytes and a lookahead identifier, which the shape grammar never
//! continues with, so the same bytes before any other identifier parse to the same shape.

use std::collections::HashMap;

use crate::error::Result;
use crate::proto::ShapeProto;
use crate::text;

/// The most distinct shape texts kept.
pub const MAX_CACHED_SHAPES: usize = 512;

/// The longest shape text kept (longer shapes are parsed each time).
pub const MAX_CACHED_SHAPE_TEXT: usize = 128;

/// An instruction's shape: one of the cache's, or parsed for this instruction alone.
#[derive(Debug)]
pub(super) enum Parsed {
    /// The cache's entry at this index.
    Cached(usize),
    /// Not cacheable.
    Fresh(ShapeProto),
}

/// Values keyed by short texts, bounded: at most [`MAX_CACHED_SHAPES`] of them, keys of at most
/// [`MAX_CACHED_SHAPE_TEXT`] bytes; when full it starts over. The reader's parsed shapes, and
/// what `xla-shape hlo` derives from them (`cli/cmd/printed.rs`).
#[derive(Debug)]
pub(crate) struct TextCache<V> {
    index: HashMap<Box<str>, usize>,
    values: Vec<V>,
    /// How many times it started over: a value's place is known by it and its index.
    generation: u64,
}

impl<V> Default for TextCache<V> {
    fn default() -> Self {
        Self { index: HashMap::new(), values: Vec::new(), generation: 0 }
    }
}

impl<V> TextCache<V> {
    /// Where `key`'s value is, if it is kept.
    pub(crate) fn find(&self, key: &str) -> Option<usize> {
        self.index.get(key).copied()
    }

    /// The value at `at` (as [`find`](Self::find) or [`insert`](Self::insert) gave it).
    pub(crate) fn get(&self, at: usize) -> Option<&V> {
        self.values.get(at)
    }

    /// Keeps `value` for `key` (the cache starting over if full) and gives where; gives the
    /// value back if `key` is too long to keep.
    pub(crate) fn insert(&mut self, key: &str, value: V) -> Result<usize, V> {
        if key.len() > MAX_CACHED_SHAPE_TEXT {
            return Err(value);
        }
        if self.values.len() >= MAX_CACHED_SHAPES {
            self.start_over();
        }
        let at = self.values.len();
        self.index.insert(key.into(), at);
        self.values.push(value);
        Ok(at)
    }

    /// Makes sure that `count` more [`insert`](Self::insert)s do not start over (which would move
    /// the values inserted before them): starts over now if they would not fit. False when
    /// `count` values can never be kept at once.
    pub(crate) fn reserve(&mut self, count: usize) -> bool {
        if count > MAX_CACHED_SHAPES {
            return false;
        }
        if self.values.len().saturating_add(count) > MAX_CACHED_SHAPES {
            self.start_over();
        }
        true
    }

    fn start_over(&mut self) {
        self.index.clear();
        self.values.clear();
        self.generation = self.generation.wrapping_add(1);
    }

    /// How many times it started over: the values found or inserted since it last did keep
    /// their places.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// How many values are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }
}

/// Shape texts and what they parse to.
#[derive(Debug, Default)]
pub(super) struct ShapeCache {
    shapes: TextCache<ShapeProto>,
}

/// The cacheable shape text at the start of `text`: up to the first space outside brackets, if
/// one space and an ASCII letter follow and the text is at most [`MAX_CACHED_SHAPE_TEXT`] bytes.
fn key(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let end = bytes.iter().take(MAX_CACHED_SHAPE_TEXT.saturating_add(1)).position(|&b| {
        match b {
            b'(' | b'[' | b'{' => depth = depth.saturating_add(1),
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        b == b' ' && depth == 0
    })?;
    let letter = bytes.get(end.saturating_add(1))?;
    if end == 0 || !letter.is_ascii_alphabetic() {
        return None;
    }
    text.get(..end)
}

impl ShapeCache {
    /// The shape at the start of `text` and where the token after it starts, as
    /// [`text::parse_shape_prefix`] gives them.
    pub(super) fn parse_prefix(&mut self, text: &str) -> Result<(Parsed, usize)> {
        let key = key(text);
        if let Some(at) = key.and_then(|key| self.shapes.find(key)) {
            // `key` is `Some` here; the token after it starts after its one space.
            return Ok((Parsed::Cached(at), key.map_or(0, str::len).saturating_add(1)));
        }
        let (shape, used) = text::parse_shape_prefix(text)?;
        match key {
            Some(key) if used == key.len().saturating_add(1) => match self.shapes.insert(key, shape) {
                Ok(at) => Ok((Parsed::Cached(at), used)),
                Err(shape) => Ok((Parsed::Fresh(shape), used)),
            },
            _ => Ok((Parsed::Fresh(shape), used)),
        }
    }

    /// The cached shape at `at`.
    pub(super) fn get(&self, at: usize) -> Option<&ShapeProto> {
        self.shapes.get(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_end_at_a_space_outside_brackets_before_a_letter() {
        assert_eq!(key("f32[2]{0} add(x)"), Some("f32[2]{0}"));
        assert_eq!(key("(f32[2]{0}, /*index=1*/s32[]) tuple(x)"), Some("(f32[2]{0}, /*index=1*/s32[])"));
        assert_eq!(key("f32[2]{0}  add(x)"), None);
        assert_eq!(key("f32[2]{0} /*c*/ add(x)"), None);
        assert_eq!(key("f32[2]{0}"), None);
        assert_eq!(key(" add"), None);
        assert_eq!(key(&format!("({}) t()", "s32[], ".repeat(40))), None);
    }

    #[test]
    fn cached_shapes_equal_parsed_ones() {
        let mut cache = ShapeCache::default();
        for text in ["f32[2]{0} add(x)", "f32[2]{0} negate(y)", "f32[2] {0} add(x)", "f32[2]{0}/*c*/ add(x)"] {
            let (parsed, used) = cache.parse_prefix(text).unwrap();
            let shape = match &parsed {
                Parsed::Cached(at) => cache.get(*at).unwrap(),
                Parsed::Fresh(shape) => shape,
            };
            assert_eq!(
                (shape, used),
                (&text::parse_shape_prefix(text).unwrap().0, text::parse_shape_prefix(text).unwrap().1)
            );
        }
        // `f32[2]{0}` and `f32[2]{0}/*c*/` (a comment is part of the text before the space).
        assert_eq!(cache.shapes.len(), 2);
        // A text the parser refuses is never cached.
        assert!(cache.parse_prefix("f32[-1] add(x)").is_err());
        assert!(cache.parse_prefix("f32[-1] add(x)").is_err());
    }

    #[test]
    fn a_full_cache_starts_over() {
        let mut cache = ShapeCache::default();
        for n in 0..=MAX_CACHED_SHAPES {
            let text = format!("f32[{n}]{{0}} add(x)");
            let (parsed, _) = cache.parse_prefix(&text).unwrap();
            assert!(matches!(parsed, Parsed::Cached(_)));
        }
        assert_eq!(cache.shapes.len(), 1);
        assert_eq!(cache.shapes.index.len(), 1);
    }

    #[test]
    fn reserved_room_keeps_what_is_inserted_next() {
        let mut cache = TextCache::default();
        for n in 0..MAX_CACHED_SHAPES - 1 {
            assert_eq!(cache.insert(&n.to_string(), n), Ok(n));
        }
        assert!(cache.reserve(1));
        assert_eq!(cache.len(), MAX_CACHED_SHAPES - 1);
        assert!(cache.reserve(2));
        assert_eq!(cache.len(), 0);
        assert_eq!((cache.insert("a", 1), cache.insert("b", 2)), (Ok(0), Ok(1)));
        assert_eq!((cache.get(0), cache.get(1)), (Some(&1), Some(&2)));
        assert!(!cache.reserve(MAX_CACHED_SHAPES + 1));
        assert_eq!(cache.generation(), 1);
    }
}
