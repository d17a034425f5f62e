//! Writing a [`Picture`] as SVG with the `svg` crate: one element per rectangle, label and
//! arrow of the geometry, in the order background, cells and slots, byte and inner-tile frames, arrows,
//! labels (so text stays on top).

use svg::Document;
use svg::node::element::{Definitions, Group, Line, Marker, Path, Pattern, Rectangle, Text, Title};

use crate::draw::geometry::{ACCENT, BACKGROUND, Colour, HATCH, Kind, PAD, PaddingKind, Picture, Rect};
use crate::draw::label::join;

/// The id of the hatching pattern and of the arrowhead marker.
const HATCH_ID: &str = "padding";
const ARROW_ID: &str = "arrow";
/// The outline of cells and slots.
const OUTLINE: Colour = Colour(0x55, 0x55, 0x55);

fn rectangle(rect: &Rect) -> Rectangle {
    Rectangle::new().set("x", rect.x).set("y", rect.y).set("width", rect.width).set("height", rect.height)
}

/// A cell or slot, with a tooltip saying what it holds (a browser shows it on hover).
fn filled(rect: &Rect, kind: Kind, tooltip: String) -> Rectangle {
    let fill = match kind {
        Kind::Element(colour) => colour.to_string(),
        Kind::Padding(_) => format!("url(#{HATCH_ID})"),
    };
    rectangle(rect).set("fill", fill).set("stroke", OUTLINE.to_string()).set("stroke-width", 1).add(Title::new(tooltip))
}

/// What a padding slot or cell is, for its tooltip.
fn padding_name(kind: PaddingKind) -> &'static str {
    match kind {
        PaddingKind::Legacy => "legacy padding",
        PaddingKind::Tile => "tile padding",
        PaddingKind::Tail => "tail padding",
    }
}

fn definitions() -> Definitions {
    // Diagonal lines 2 px wide every 6 px over the padding grey.
    let hatch = Pattern::new()
        .set("id", HATCH_ID)
        .set("patternUnits", "userSpaceOnUse")
        .set("width", 6)
        .set("height", 6)
        .set("patternTransform", "rotate(45)")
        .add(Rectangle::new().set("width", 6).set("height", 6).set("fill", PAD.to_string()))
        .add(
            Line::new()
                .set("x1", 0)
                .set("y1", 0)
                .set("x2", 0)
                .set("y2", 6)
                .set("stroke", HATCH.to_string())
                .set("stroke-width", 3),
        );
    let arrow = Marker::new()
        .set("id", ARROW_ID)
        .set("viewBox", "0 0 10 10")
        .set("refX", 9)
        .set("refY", 5)
        .set("markerWidth", 6)
        .set("markerHeight", 6)
        .set("orient", "auto")
        .add(Path::new().set("d", "M 0 0 L 10 5 L 0 10 z").set("fill", ACCENT.to_string()));
    Definitions::new().add(hatch).add(arrow)
}

impl Picture {
    /// The picture as an SVG document.
    ///
    /// ```
    /// use xla_shape::{draw, text};
    /// let shape = text::parse_shape("f32[3,5]{1,0:T(2,2)}")?;
    /// let svg = draw::picture(shape.as_array().expect("an array"), &draw::Options::default())?.to_svg();
    /// assert!(svg.starts_with("<svg"));
    /// assert!(svg.contains("f32[3,5]{1,0:T(2,2)}"));
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn to_svg(&self) -> String {
        let mut document = Document::new()
            .set("width", self.width)
            .set("height", self.height)
            .set("viewBox", (0, 0, self.width, self.height))
            .add(Title::new(format!("{}: logical array and memory", self.shape)))
            .add(definitions())
            .add(
                rectangle(&Rect { x: 0.0, y: 0.0, width: self.width, height: self.height })
                    .set("fill", BACKGROUND.to_string()),
            );
        let mut shapes = Group::new().set("class", "cells");
        for cell in &self.cells {
            let tooltip = match (cell.slot, cell.kind) {
                (Some(slot), _) => format!("({}) in slot {slot}", join(&cell.index)),
                (None, Kind::Padding(kind)) => format!("({}): {}", join(&cell.index), padding_name(kind)),
                (None, Kind::Element(_)) => format!("({})", join(&cell.index)),
            };
            shapes = shapes.add(filled(&cell.rect, cell.kind, tooltip));
        }
        for slot in &self.slots {
            let tooltip = match (&slot.element, slot.kind) {
                (Some(index), _) => format!("slot {}: ({})", slot.slot, join(index)),
                (None, Kind::Padding(kind)) => format!("slot {}: {}", slot.slot, padding_name(kind)),
                (None, Kind::Element(_)) => format!("slot {}", slot.slot),
            };
            shapes = shapes.add(filled(&slot.rect, slot.kind, tooltip));
        }
        for elision in &self.elisions {
            shapes = shapes.add(rectangle(&elision.rect).set("fill", "none").set("stroke", "none"));
        }
        document = document.add(shapes);
        let mut frames =
            Group::new().set("class", "bytes").set("fill", "none").set("stroke", "#000000").set("stroke-width", 2);
        for byte in &self.bytes {
            frames = frames.add(rectangle(&byte.rect));
        }
        document = document.add(frames);
        let mut inner = Group::new()
            .set("class", "inner-tiles")
            .set("fill", "none")
            .set("stroke", "#1f3b73")
            .set("stroke-width", 1.5)
            .set("stroke-dasharray", "4,2");
        for rect in &self.sub_tiles {
            inner = inner.add(rectangle(rect));
        }
        document = document.add(inner);
        let mut links = Group::new().set("class", "links").set("stroke", ACCENT.to_string()).set("fill", "none");
        for link in &self.links {
            let (from, to) = (link.from, link.to);
            links = links
                .add(
                    Line::new()
                        .set("x1", from.0)
                        .set("y1", from.1)
                        .set("x2", to.0)
                        .set("y2", to.1)
                        .set("stroke-width", 1.5)
                        .set("marker-end", format!("url(#{ARROW_ID})")),
                )
                .add(rectangle(&link.cell).set("stroke-width", 2))
                .add(rectangle(&link.target).set("stroke-width", 2));
        }
        document = document.add(links);
        let mut labels = Group::new()
            .set("class", "labels")
            .set("font-family", "monospace")
            .set("text-anchor", "middle")
            .set("dominant-baseline", "central")
            .set("fill", "#000000");
        for label in &self.labels {
            let (x, y) = label.rect.centre();
            labels = labels.add(Text::new(label.text.clone()).set("x", x).set("y", y).set("font-size", label.size));
        }
        document.add(labels).to_string()
    }
}
