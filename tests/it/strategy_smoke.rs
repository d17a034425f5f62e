//! The exported strategies generate only valid values.

use proptest::prelude::*;
use xla_shape::strategy::{ShapeConfig, array_shape_and_index, shape};
use xla_shape::{Shape, ShapeBuf};

proptest! {
    #[test]
    fn generated_shapes_validate(s in shape(ShapeConfig::everything())) {
        // Shape construction already validated; validating the proto again must agree.
        prop_assert!(Shape::try_new_optional_layout(s.proto()).is_ok());
        prop_assert!(ShapeBuf::try_from_proto_optional_layout(s.clone().into_proto()).is_ok());
    }

    #[test]
    fn generated_indices_are_in_bounds((s, index) in array_shape_and_index(ShapeConfig::default())) {
        let dims = &s.proto().dimensions;
        prop_assert_eq!(dims.len(), index.len());
        for (i, d) in index.iter().zip(dims) {
            prop_assert!(*i >= 0 && i < d);
        }
    }
}
