//! [`FieldPath`]: where in a message an error points.

use std::fmt;

/// The path of a field inside a message, written as XLA users read it:
/// `tuple_shapes[2].layout.minor_to_major[1]`, `parameters[0].dimensions[1]`, `result`.
///
/// The root of the message is the empty path, displayed as `<root>`. A path is one pointer wide
/// (the root allocates nothing), which keeps [`Error`](crate::Error) small on every hot path's `Result`.
///
/// ```
/// use xla_shape::error::FieldPath;
/// let path = FieldPath::root().field("tuple_shapes").index(2).field("layout");
/// assert_eq!(path.as_str(), "tuple_shapes[2].layout");
/// assert_eq!(FieldPath::root().to_string(), "<root>");
/// ```
#[derive(Clone, Default)]
#[allow(clippy::box_collection, reason = "one pointer wide: `Box<str>` would be two, and every `Result` pays for it")]
pub struct FieldPath(Option<Box<String>>);

impl FieldPath {
    /// The path of the message itself.
    pub fn root() -> Self {
        Self(None)
    }

    /// This path extended by a field name.
    #[must_use]
    pub fn field(mut self, name: &str) -> Self {
        let text = self.0.get_or_insert_with(Box::default);
        if !text.is_empty() {
            text.push('.');
        }
        text.push_str(name);
        self
    }

    /// This path extended by an element index of a repeated field.
    #[must_use]
    pub fn index(mut self, index: usize) -> Self {
        use fmt::Write;
        // Writing to a String cannot fail.
        let _ = write!(self.0.get_or_insert_with(Box::default), "[{index}]");
        self
    }

    /// The path as text; empty for the root.
    pub fn as_str(&self) -> &str {
        self.0.as_deref().map_or("", String::as_str)
    }

    /// Whether this is the root path.
    pub fn is_root(&self) -> bool {
        self.as_str().is_empty()
    }
}

// By text: the root and an empty name are the same path.
impl PartialEq for FieldPath {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for FieldPath {}

impl std::hash::Hash for FieldPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FieldPath").field(&self.as_str()).finish()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_root() { f.write_str("<root>") } else { f.write_str(self.as_str()) }
    }
}

impl From<&str> for FieldPath {
    fn from(path: &str) -> Self {
        Self::root().field(path)
    }
}
