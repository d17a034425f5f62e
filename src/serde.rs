//! [`serde`](https://serde.rs) support (feature `serde`).
//!
//! | type | serialized as | deserialized through |
//! |---|---|---|
//! | [`ShapeBuf`], [`Shape`], [`ArrayShape`] | its XLA string, `"f32[2,3]{0,1}"` | [`text::parse_shape`](crate::text::parse_shape) (validated; `ShapeBuf` only) |
//! | [`LayoutBuf`], [`Layout`] | its XLA string, `"{1,0:T(8,128)}"` | [`text::parse_layout`](crate::text::parse_layout) (validated; `LayoutBuf` only) |
//! | [`PrimitiveType`] | its text name, `"bf16"` | [`PrimitiveType::from_str`](std::str::FromStr::from_str) |
//! | [`Dim`], [`Slot`] | the number | any number that fits |
//! | the raw [`proto`](crate::proto) types | structs with the proto's field names; enum fields as their `i32`, missing fields default | serde's derive: any value, as on the wire (validate it afterwards) |
//!
//! A validated value therefore deserializes only when it is valid, and a value that comes back
//! is in XLA's form (every dynamic flag written, tail padding alignment 1): the same proto the
//! parser builds. An array that had no layout comes back with the default layout, which every
//! computation already assumed for it.
//!
//! XLA text cannot hold everything a proto can. Serializing a shape or layout whose text would
//! drop something — the legacy `padded_dimensions` or `padding_value`, or a negative
//! `dynamic_shape_metadata_prefix_bytes` — is an error rather than a silent loss; serialize its
//! [`proto()`](ShapeBuf::proto) instead.
//!
//! ```
//! use xla_shape::{make::{self, LayoutSpec}, proto::PaddingValue, PrimitiveType, ShapeBuf};
//!
//! let s: ShapeBuf = "bf16[8,256]{1,0:T(8,128)(2,1)}".parse()?;
//! let json = serde_json::to_string(&s).expect("printable");
//! assert_eq!(json, r#""bf16[8,256]{1,0:T(8,128)(2,1)}""#);
//! assert_eq!(serde_json::from_str::<ShapeBuf>(&json).expect("valid"), s);
//!
//! // Invalid text never becomes a validated value.
//! let err = serde_json::from_str::<ShapeBuf>(r#""f32[2,3]{0,0}""#).unwrap_err();
//! assert!(err.to_string().contains("minor_to_major"), "{err}");
//!
//! // Legacy padding has no text: serialize the proto instead.
//! let padded = make::make_shape_with_layout(
//!     PrimitiveType::F32, &[2, 3], &LayoutSpec::new(&[0, 1]).padded_dimensions(&[3, 5], PaddingValue::ZeroPad))?;
//! assert!(serde_json::to_string(&padded).is_err());
//! let json = serde_json::to_string(padded.proto()).expect("a plain struct");
//! assert!(json.contains(r#""padded_dimensions":[3,5]"#), "{json}");
//! # Ok::<(), xla_shape::Error>(())
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use ::serde::de::{self, Deserialize, Deserializer, Visitor};
use ::serde::ser::{self, Serialize, Serializer};

use crate::layout::{Layout, LayoutBuf};
use crate::physical::Slot;
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Dim, Shape, ShapeBuf};
use crate::text::{Dropped, dropped_in_layout};

/// The first field anywhere in `shape` that XLA text never prints (`text::lost_in_text`).
fn unprintable_shape_field(shape: Shape<'_>) -> Option<Dropped> {
    crate::text::lost_in_text(shape).first().map(|lost| lost.dropped)
}

/// Serializes `value`'s XLA text, or fails naming the field the text would drop.
fn serialize_text<S: Serializer>(
    serializer: S,
    value: &impl fmt::Display,
    unprintable: Option<Dropped>,
) -> Result<S::Ok, S::Error> {
    match unprintable {
        None => serializer.collect_str(value),
        Some(field) => Err(ser::Error::custom(format_args!(
            "`{value}` cannot be serialized as XLA text without losing its {field}; serialize its proto instead"
        ))),
    }
}

/// XLA's text; an error if the text would drop a field (see the module docs).
impl Serialize for Shape<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_text(serializer, self, unprintable_shape_field(*self))
    }
}

/// XLA's text; an error if the text would drop a field (see the module docs).
impl Serialize for ArrayShape<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_shape().serialize(serializer)
    }
}

/// XLA's text; an error if the text would drop a field (see the module docs).
impl Serialize for ShapeBuf {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.view().serialize(serializer)
    }
}

/// XLA's text; an error if the text would drop a field (see the module docs).
impl Serialize for Layout<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_text(serializer, self, dropped_in_layout(self.proto()).next())
    }
}

/// XLA's text; an error if the text would drop a field (see the module docs).
impl Serialize for LayoutBuf {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.view().serialize(serializer)
    }
}

/// The text name (`"f32"`, `"bf16"`, `"token"`).
impl Serialize for PrimitiveType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// The dimension number.
impl Serialize for Dim {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// The slot number.
impl Serialize for Slot {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Reads a string and hands it to `T::from_str`, whose error becomes the deserializer's.
struct TextVisitor<T> {
    expecting: &'static str,
    target: PhantomData<T>,
}

impl<T: FromStr<Err: fmt::Display>> Visitor<'_> for TextVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
        text.parse().map_err(E::custom)
    }
}

fn deserialize_text<'de, D: Deserializer<'de>, T: FromStr<Err: fmt::Display>>(
    deserializer: D,
    expecting: &'static str,
) -> Result<T, D::Error> {
    deserializer.deserialize_str(TextVisitor { expecting, target: PhantomData })
}

/// Parses and validates XLA shape text ([`crate::text::parse_shape`]).
impl<'de> Deserialize<'de> for ShapeBuf {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_text(deserializer, "an XLA shape string such as \"f32[2,3]{1,0}\"")
    }
}

/// Parses and validates XLA layout text ([`crate::text::parse_layout`]).
impl<'de> Deserialize<'de> for LayoutBuf {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_text(deserializer, "an XLA layout string such as \"{1,0:T(8,128)}\"")
    }
}

/// An exact, case-sensitive text name.
impl<'de> Deserialize<'de> for PrimitiveType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_text(deserializer, "an XLA element type name such as \"f32\"")
    }
}

/// A dimension number.
impl<'de> Deserialize<'de> for Dim {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        usize::deserialize(deserializer).map(Dim)
    }
}

/// A slot number.
impl<'de> Deserialize<'de> for Slot {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        u64::deserialize(deserializer).map(Slot)
    }
}
