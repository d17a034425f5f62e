"""Shapes and layouts: XLA's text and bytes, the facts of a layout, where an element lives."""

import xla_shape as xs

shape = xs.Shape.parse("bf16[8,256]{1,0:T(8,128)(2,1)}")
print(shape, "=", shape.to_proto().hex())
print("dimensions", shape.dimensions, "dtype", shape.dtype, "ByteSizeOf", shape.byte_size)
print("tiles", shape.layout.tiles, "minor_to_major", shape.layout.minor_to_major)
for index in [(0, 0), (1, 0), (0, 1), (0, 128)]:
    print(f"element {index} at byte {shape.byte_offset(index)}")

# Bytes from another tool, validated as XLA validates them.
print(xs.Shape.from_proto(bytes.fromhex("100b1a0202032a070a02000180010132020000")))
try:
    xs.Shape.parse("f32[2,3]{2,0}")
except xs.ValidationError as e:
    print(f"refused ({e.kind}): {e}")
