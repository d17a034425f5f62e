//! The fields XLA's text drops, one rule (`text::dropped_in_layout`) for every input kind: a
//! standalone layout, an array, a tuple element, a buffer's array, a program shape's parameter
//! and result, and serde's refusal (`docs/text-format.md` §4).

use xla_shape::proto::{LayoutProto, ProgramShapeProto, ShapeProto};
use xla_shape::text::{self, Dropped};
use xla_shape::{Layout, ProgramShape, Shape};

/// A valid `f32[2,3]{1,0}` layout with exactly one dropped field set.
pub(crate) fn layout_with(dropped: Dropped) -> LayoutProto {
    let mut layout =
        LayoutProto { minor_to_major: vec![1, 0], tail_padding_alignment_in_elements: 1, ..LayoutProto::default() };
    match dropped {
        Dropped::PaddedDimensions => layout.padded_dimensions = vec![3, 5],
        Dropped::PaddingValue => layout.padding_value = 1,
        Dropped::NegativeMetadataPrefix => layout.dynamic_shape_metadata_prefix_bytes = -8,
        _ => unreachable!("a new Dropped field needs a case here"),
    }
    layout
}

pub(crate) fn array_with(dropped: Dropped) -> ShapeProto {
    ShapeProto {
        element_type: 11,
        dimensions: vec![2, 3],
        is_dynamic_dimension: vec![false, false],
        layout: Some(Box::new(layout_with(dropped))),
        ..ShapeProto::default()
    }
}

fn tuple_of(elements: Vec<ShapeProto>) -> ShapeProto {
    ShapeProto { element_type: 13, tuple_shapes: elements, ..ShapeProto::default() }
}

fn buffer_of(array: ShapeProto) -> ShapeProto {
    ShapeProto { element_type: 34, tuple_shapes: vec![array], ..ShapeProto::default() }
}

pub(crate) const FIELDS: [Dropped; 3] =
    [Dropped::PaddedDimensions, Dropped::PaddingValue, Dropped::NegativeMetadataPrefix];

fn paths(lost: &[text::LostField]) -> Vec<String> {
    lost.iter().map(ToString::to_string).collect()
}

#[test]
fn a_standalone_layout_loses_each_field() {
    for dropped in FIELDS {
        let proto = layout_with(dropped);
        let layout = Layout::try_new(&proto).unwrap();
        let lost = text::lost_in_layout_text(layout);
        assert_eq!(paths(&lost), [dropped.field()], "{dropped:?}");
        assert_eq!(lost[0].dropped, dropped);
        assert_eq!(text::dropped_in_layout(&proto).collect::<Vec<_>>(), [dropped]);
    }
}

#[test]
fn an_array_a_tuple_element_and_a_buffer_lose_each_field() {
    for dropped in FIELDS {
        let array = array_with(dropped);
        let field = dropped.field();
        let cases = [
            (array.clone(), format!("layout.{field}")),
            (tuple_of(vec![array_with_no_loss(), array.clone()]), format!("tuple_shapes[1].layout.{field}")),
            (buffer_of(array.clone()), format!("tuple_shapes[0].layout.{field}")),
        ];
        for (proto, path) in cases {
            let shape = Shape::try_new(&proto).unwrap();
            let lost = text::lost_in_text(shape);
            assert_eq!(paths(&lost), [path], "{dropped:?}");
            assert_eq!(lost[0].dropped, dropped);
        }
    }
}

fn array_with_no_loss() -> ShapeProto {
    let mut array = array_with(Dropped::PaddingValue);
    if let Some(layout) = array.layout.as_mut() {
        layout.padding_value = 0;
    }
    array
}

#[test]
fn program_shapes_lose_each_field_in_parameters_and_result() {
    for dropped in FIELDS {
        let program = ProgramShapeProto {
            parameters: vec![array_with_no_loss(), array_with(dropped)],
            result: Some(array_with(dropped)),
            parameter_names: vec!["a".into(), "b".into()],
        };
        let program = ProgramShape::try_new(&program).unwrap();
        let parameters: Vec<Vec<String>> = program.parameters().map(|p| paths(&text::lost_in_text(p))).collect();
        assert_eq!(parameters, [vec![], vec![format!("layout.{}", dropped.field())]]);
        assert_eq!(paths(&text::lost_in_text(program.result())), [format!("layout.{}", dropped.field())]);
    }
}

#[test]
fn nothing_else_is_lost() {
    let plain = array_with_no_loss();
    assert!(text::lost_in_text(Shape::try_new(&plain).unwrap()).is_empty());
    let positive = LayoutProto { dynamic_shape_metadata_prefix_bytes: 8, ..layout_with(Dropped::PaddingValue) };
    let positive = LayoutProto { padding_value: 0, ..positive };
    assert_eq!(text::dropped_in_layout(&positive).count(), 0, "M(8) is printed");
}

#[test]
fn serde_refuses_each_field_by_name() {
    for dropped in FIELDS {
        let array = array_with(dropped);
        let shape = Shape::try_new(&array).unwrap();
        let err = serde_json::to_string(&shape).unwrap_err().to_string();
        assert!(err.contains(&dropped.to_string()), "{err}");
        let proto = layout_with(dropped);
        let err = serde_json::to_string(&Layout::try_new(&proto).unwrap()).unwrap_err().to_string();
        assert!(err.contains(&dropped.to_string()), "{err}");
    }
}
