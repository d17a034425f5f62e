"""Shapes and layouts against XLA's own (`xla_client.Shape`, `xla_client.Layout`, and the layouts
and sizes the CPU client gives device buffers); offsets against strides computed by hand."""

from __future__ import annotations

import itertools
import math
import pickle

import jax
import ml_dtypes
import numpy as np
import pytest
from jax._src.lib import xla_client as xc
from jax.experimental.layout import Format
from jax.experimental.layout import Layout as JaxLayout
from jax.sharding import SingleDeviceSharding

import xla_shape as xs

# Every array element type of XLA's PrimitiveType enum, and the sub-byte integers the enum of
# this jaxlib lacks (reachable through their ml_dtypes dtypes).
ENUM_TYPES = [
    t
    for name, t in xc.PrimitiveType.__members__.items()
    if name not in ("PRIMITIVE_TYPE_INVALID", "TUPLE", "OPAQUE_TYPE", "TOKEN")
]
EXTRA_DTYPES = [ml_dtypes.int2, ml_dtypes.uint2, ml_dtypes.int1, ml_dtypes.uint1]

DIMS = [(), (0,), (7,), (2, 3), (4, 0, 5), (3, 1, 2), (2, 3, 4, 5)]


def all_layouts(rank: int) -> list[tuple[int, ...]]:
    return [tuple(p) for p in itertools.permutations(range(rank))]


def xla_cases() -> list[tuple[object, tuple[int, ...], tuple[int, ...]]]:
    cases = []
    for t in ENUM_TYPES + [np.dtype(d) for d in EXTRA_DTYPES]:
        for dims in DIMS:
            layouts = all_layouts(len(dims))
            # every permutation for the f32 family, two for the others (row-, column-major)
            if t is not xc.PrimitiveType.F32:
                layouts = [layouts[0], layouts[-1]]
            cases.extend((t, dims, m2m) for m2m in dict.fromkeys(layouts))
    return cases


CASES = xla_cases()


def case_id(case: tuple[object, tuple[int, ...], tuple[int, ...]]) -> str:
    t, dims, m2m = case
    name = t.name if isinstance(t, xc.PrimitiveType) else str(t)
    return f"{name}-{dims}-{m2m}"


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_text_and_bytes_equal_xla(case: tuple[object, tuple[int, ...], tuple[int, ...]]) -> None:
    t, dims, m2m = case
    ref = xc.Shape.array_shape(t, dims, m2m)
    text = str(ref)
    ours = xs.Shape.parse(text)
    assert str(ours) == text
    assert ours.to_proto() == ref.to_serialized_proto()
    back = xs.Shape.from_proto(ref.to_serialized_proto())
    assert back == ours
    assert str(back) == text
    assert ours.dimensions == tuple(ref.dimensions())
    assert ours.rank == ref.rank()
    assert ours.dtype == ref.numpy_dtype()
    assert ours.layout is not None
    assert ours.layout.minor_to_major == tuple(ref.layout().minor_to_major())
    assert ours.layout.major_to_minor == tuple(reversed(ref.layout().minor_to_major()))
    assert ours.to_string_without_layout() == text.split("{")[0]
    layout_text = "{" + ",".join(map(str, m2m)) + "}" if dims else None  # XLA: no `{}` on scalars
    built = xs.Shape.array(ours.element_type, dims, layout_text)
    assert built == ours
    assert xs.Shape.array(ours.dtype, dims, ours.layout if dims else None) == ours
    assert ours.is_array
    assert not ours.is_tuple


@pytest.mark.parametrize("t", ENUM_TYPES, ids=[t.name for t in ENUM_TYPES])
def test_default_layout_equals_xla(t: xc.PrimitiveType) -> None:
    """A shape without a layout gets XLA's default (major to minor)."""
    ref = xc.Shape.array_shape(t, (2, 3, 4))
    ours = xs.Shape.parse(str(ref).split("{")[0])
    assert str(ours) == str(ref)
    assert ours.to_proto() == ref.to_serialized_proto()


def test_scalars_tuples_tokens_dynamic_equal_xla() -> None:
    f32 = np.dtype(np.float32)
    refs = [
        xc.Shape.scalar_shape(f32),
        xc.Shape.scalar_shape(np.dtype(ml_dtypes.bfloat16)),
        xc.Shape.token_shape(),
        xc.Shape.tuple_shape([]),
        xc.Shape.tuple_shape(
            [xc.Shape.array_shape(f32, (2, 3)), xc.Shape.scalar_shape(np.dtype(np.int32))]
        ),
        xc.Shape.tuple_shape(
            [
                xc.Shape.tuple_shape([xc.Shape.array_shape(f32, (4,), (0,))]),
                xc.Shape.token_shape(),
                xc.Shape.array_shape(np.dtype(ml_dtypes.int4), (3, 5), (0, 1)),
            ]
        ),
        xc.Shape.array_shape(f32, (2, 3), None, (False, True)),
        xc.Shape.array_shape(f32, (5, 3, 2), (0, 2, 1), (True, False, True)),
    ]
    for ref in refs:
        text = str(ref)
        ours = xs.Shape.parse(text)
        assert str(ours) == text
        assert ours.to_proto() == ref.to_serialized_proto(), text
        assert xs.Shape.from_proto(ref.to_serialized_proto()) == ours
        assert ours.is_tuple == ref.is_tuple()
        if ref.is_tuple():
            elements = ours.tuple_shapes
            assert [str(e) for e in elements] == [str(r) for r in ref.tuple_shapes()]
        if ref.is_array():
            assert ours.dynamic_dimensions == tuple(
                ref.is_dynamic_dimension(k) for k in range(ref.rank())
            )
    assert xs.Shape.parse("token[]").element_type == "token"
    assert xs.Shape.parse("(f32[], s8[2])").element_type == "tuple"


# Layouts XLA's `Layout(minor_to_major, tiles, element_size_in_bits)` can build.
LAYOUTS = [
    ((1, 0), [], 0),
    ((0, 1), [], 0),
    ((2, 0, 1), [], 0),
    ((1, 0), [(8, 128)], 0),
    ((1, 0), [(8, 128), (2, 1)], 16),
    ((0, 1), [(4, 2)], 0),
    ((0, 1), [], 4),
    ((0,), [(128,)], 2),
    ((1, 2, 0), [(2, 1)], 0),
    ((1, 0), [(8, 128), (32, 1)], 8),
]


@pytest.mark.parametrize(("m2m", "tiles", "bits"), LAYOUTS)
def test_layout_equals_xla(m2m: tuple[int, ...], tiles: list[tuple[int, ...]], bits: int) -> None:
    ref = xc.Layout(list(m2m), tiles, bits) if tiles or bits else xc.Layout(list(m2m))
    text = ref.to_string()
    ours = xs.Layout.parse(text)
    assert str(ours) == text
    assert ours.minor_to_major == tuple(ref.minor_to_major())
    assert ours.major_to_minor == tuple(reversed(ref.minor_to_major()))
    assert ours.tiles == tuple(tuple(t) for t in ref.tiling())
    assert ours.element_size_in_bits == ref.element_size_in_bits()
    assert ours.is_tiled == bool(tiles)
    assert ours.memory_space == 0
    assert xs.Layout.from_proto(ours.to_proto()) == ours
    if bits == 0:
        # JAX's Layout(major_to_minor, tiling) spelling of the same layout
        jax_form = xs.Layout.from_major_to_minor(tuple(reversed(m2m)), tiling=tiles or None)
        assert jax_form == ours


# Shapes whose layouts only XLA's HLO text can carry (tiles, element sizes, memory spaces, tail
# padding, dynamic dimensions): XLA's parser and printer against ours, and XLA's serialized
# module holds our bytes of the shape verbatim.
PRINTER_SHAPES = [
    "bf16[8,256]{1,0:T(8,128)(2,1)}",
    "bf16[3,5]{0,1:T(8,128)(2,1)}",
    "f32[2,3]{1,0:T(2,*)}",
    "s4[8]{0:T(2)E(4)}",
    "s4[3,5]{0,1:E(4)}",
    "u2[9]{0:E(2)}",
    "f32[2]{0:S(5)}",
    "f32[2]{0:L(4)}",
    "f32[256]{0:T(128)L(4)E(32)S(5)}",
    "f32[2,3]{1,0:T(2,2)(1,1)}",
    "f32[<=4,3]{1,0}",
    "f32[4,<=3]{0,1:T(2,2)}",
    "s8[5,7,3]{1,2,0:T(4,4)(4,1)}",
    "f8e4m3fn[64,128]{1,0:T(8,128)(4,1)}",
    "pred[10]{0:T(1024)}",
    "(f32[2]{0:T(128)}, s4[4]{0:E(4)}, token[])",
    "f32[]",
    "c64[3,2]{0,1}",
]


@pytest.mark.parametrize("text", PRINTER_SHAPES)
def test_text_and_bytes_equal_xla_printer(text: str) -> None:
    module = xc.hlo.hlo_module_from_text(
        f"HloModule m\nENTRY e {{\n  ROOT p = {text} parameter(0)\n}}\n"
    )
    [instruction] = module.computations()[0].instructions()
    printed = instruction.to_string().split(" = ", 1)[1].rsplit(" parameter(0)", 1)[0]
    ours = xs.Shape.parse(text)
    assert str(ours) == printed
    assert ours.to_proto() in module.as_serialized_hlo_module_proto()


def test_array_from_dtype_objects() -> None:
    """`Shape.array` takes XLA names, numpy dtypes and the scalar types themselves."""
    for kind, name in [
        (np.float32, "f32"),
        (np.dtype(np.int8), "s8"),
        (ml_dtypes.bfloat16, "bf16"),
        (ml_dtypes.int4, "s4"),
        (ml_dtypes.float8_e4m3fn, "f8e4m3fn"),
        (np.bool_, "pred"),
        (np.complex128, "c128"),
    ]:
        shape = xs.Shape.array(kind, (2, 3))
        assert shape == xs.Shape.parse(f"{name}[2,3]")
        assert shape.element_type == name
        assert shape.dtype == np.dtype(kind)


def test_layout_fields() -> None:
    layout = xs.Layout.parse("{0,1:T(8,128)(2,1)L(4)E(16)S(5)}")
    assert layout.memory_space == 5
    assert layout.tail_padding_alignment_in_elements == 4
    assert layout.element_size_in_bits == 16
    assert layout.tiles == ((8, 128), (2, 1))
    assert xs.Layout.parse("{1,0:T(2,*)}").tiles == ((2, "*"),)
    assert xs.Layout.parse("{1,0}").tail_padding_alignment_in_elements == 1
    shape = xs.Shape.parse("f32[2,3]{0,1}")
    assert shape.layout == xs.Layout.parse("{0,1}")
    assert shape.with_layout(xs.Layout.parse("{1,0}")) == xs.Shape.parse("f32[2,3]")


# Layouts the CPU client gives device buffers (reported layout, on-device size); tiles are
# reported and sized though not honoured in the bytes.
DEVICE_LAYOUTS = [
    (np.float32, (3, 5), (0, 1), None),
    (np.float32, (3, 5), (1, 0), None),
    (np.float32, (2, 3, 4), (2, 0, 1), None),
    (np.float32, (3, 5), (0, 1), ((2, 2),)),
    (np.float32, (3, 5), (1, 0), ((8, 128),)),
    (ml_dtypes.bfloat16, (3, 5), (1, 0), ((8, 128), (2, 1))),
    (ml_dtypes.bfloat16, (9, 130), (0, 1), ((8, 128), (2, 1))),
    (np.int8, (5, 7, 3), (1, 2, 0), None),
    (np.int8, (5, 7), (0, 1), ((4, 4),)),
    (ml_dtypes.int4, (3, 5), (1, 0), None),
    (ml_dtypes.int4, (4, 3), (0, 1), None),
    (np.bool_, (7,), (0,), None),
    (np.float64, (2, 3), (1, 0), None),
    (np.complex64, (3, 2), (1, 0), None),
    (np.float16, (6, 2), (0, 1), ((2, 1),)),
]


@pytest.mark.parametrize(("dtype", "dims", "m2m_major", "tiling"), DEVICE_LAYOUTS)
def test_layout_and_size_of_device_buffers(
    dtype: type, dims: tuple[int, ...], m2m_major: tuple[int, ...], tiling: tuple | None
) -> None:
    """`major_to_minor` here is JAX's order. The CPU client reports XLA's layout text and its
    on-device size (tile padding included): our text, layout and sizes agree."""
    x = np.zeros(dims, dtype)
    target = Format(
        JaxLayout(major_to_minor=m2m_major, tiling=tiling),
        SingleDeviceSharding(jax.devices()[0]),
    )
    arr = jax.device_put(x, target)
    reported = arr._pjrt_layout._xla_layout().to_string()
    layout = xs.Layout.parse(reported)
    assert str(layout) == reported
    assert layout.major_to_minor == tuple(arr.format.layout.major_to_minor)
    assert layout.tiles == tuple(tuple(t) for t in arr.format.layout.tiling)
    assert layout.element_size_in_bits == arr.format.layout.sub_byte_element_size_in_bits
    shape = xs.Shape.array(np.dtype(dtype), dims, layout)
    assert shape.storage_bytes == arr.on_device_size_in_bytes()
    if not layout.is_tiled:
        assert shape.byte_size == arr.on_device_size_in_bytes()
    else:
        # XLA's ByteSizeOf counts the elements only, never the tiles' padding.
        bits = np.dtype(dtype).itemsize * 8
        assert shape.byte_size == math.prod(dims) * bits // 8


def test_byte_size_of_default_device_buffers() -> None:
    for dtype, dims in [
        (np.float32, (5, 3)),
        (np.int64, (4,)),
        (ml_dtypes.bfloat16, (2, 2, 3)),
        (ml_dtypes.int4, (4, 3)),
        (np.uint8, (0, 4)),
    ]:
        arr = jax.device_put(np.zeros(dims, dtype), jax.devices()[1])
        shape = xs.Shape.array(np.dtype(dtype), dims)
        assert shape.byte_size == arr.on_device_size_in_bytes(), (dtype, dims)


def test_tuple_byte_size_counts_pointers() -> None:
    shape = xs.Shape.parse("(f32[2,3], s8[5], (pred[]))")
    assert shape.byte_size == 3 * 8
    assert xs.Shape.parse("()").byte_size == 0


# ---- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["f32[2,3", "f33[2]", "f32[2,3]{0}", "f32[-2]", "", "f32[2]{0", "(f32[2]", "f32[2]x"]
)
def test_bad_text_is_a_parse_error(text: str) -> None:
    with pytest.raises(xs.ParseError) as info:
        xs.Shape.parse(text)
    assert info.value.kind == "Parse"
    assert isinstance(info.value, xs.Error)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("dims", "m2m", "path"),
    [
        ((2, 3), (0, 0), "layout.minor_to_major[1]"),
        ((2, 3), (0, 2), "layout.minor_to_major"),
        ((2, 3, 4), (2, 1, 1), "layout.minor_to_major"),
    ],
)
def test_invalid_layout_is_a_validation_error_like_xla(
    dims: tuple[int, ...], m2m: tuple[int, ...], path: str
) -> None:
    with pytest.raises(jax.errors.JaxRuntimeError) as xla_error:
        xc.Shape.array_shape(xc.PrimitiveType.F32, dims, m2m)
    text = f"f32[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}}}"
    with pytest.raises(xs.ValidationError) as info:
        xs.Shape.parse(text)
    message = str(info.value)
    assert info.value.kind == "InvalidLayout"
    assert path in message
    # XLA's phrase ("layout minor_to_major field has duplicate values" / "out-of-bounds value")
    phrase = str(xla_error.value).split(":")[1].strip()
    assert phrase in message


def test_validation_errors_name_the_field() -> None:
    with pytest.raises(xs.ValidationError) as info:
        xs.Shape.parse("(f32[2]{1})")
    assert "tuple_shapes[0].layout.minor_to_major[0]" in str(info.value)
    with pytest.raises(xs.ValidationError) as info:
        xs.Shape.parse("f32[2]{0:T(0)}")
    assert "layout.tiles[0].dimensions[0]" in str(info.value)
    with pytest.raises(xs.ValidationError):
        xs.Layout.parse("{0,0}")


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, wire: int, payload: bytes) -> bytes:
    key = varint(number << 3 | wire)
    return key + (varint(len(payload)) + payload if wire == 2 else payload)


def shape_proto(element_type: int, dims: list[int], m2m: list[int] | None) -> bytes:
    """A ShapeProto written by hand: element_type (2), dimensions (3, packed), layout (5) with
    minor_to_major (1, packed)."""
    out = field(2, 0, varint(element_type))
    if dims:
        out += field(3, 2, b"".join(varint(d) for d in dims))
    if m2m is not None:
        out += field(5, 2, field(1, 2, b"".join(varint(d) for d in m2m)) if m2m else b"")
    return out


def test_scalar_layout_can_be_given_back() -> None:
    """A scalar's own layout (``{}``) rebuilds the scalar: ``Shape.array(s.dtype, s.dimensions,
    s.layout) == s`` holds for every other array shape (test_text_and_bytes_equal_xla)."""
    scalar = xs.Shape.parse("f32[]")
    assert scalar.layout is not None
    assert str(scalar.layout) == "{}"
    assert scalar.with_layout(scalar.layout) == scalar
    assert xs.Shape.array(scalar.dtype, scalar.dimensions, scalar.layout) == scalar


def test_dynamic_dimensions_of_a_proto_without_them() -> None:
    """A ShapeProto without ``is_dynamic_dimension`` has static dimensions (XLA's
    ``Shape(const ShapeProto&)`` reads a missing entry as static): one flag per dimension."""
    f32 = int(xc.PrimitiveType.F32.value)
    hand = xs.Shape.from_proto(shape_proto(f32, [2, 3], [0, 1]))
    assert str(hand) == "f32[2,3]{0,1}"
    assert hand.dynamic_dimensions == (False, False)


def test_hand_written_proto_equals_xla_shape() -> None:
    """A ShapeProto without the fields XLA fills on decoding (is_dynamic_dimension, the layout's
    tail_padding_alignment_in_elements = 1) is the same shape to XLA: ``Shape(proto)`` fills
    them, ``ShapeUtil::Equal`` holds, ``ToProto`` writes them back."""
    f32 = int(xc.PrimitiveType.F32.value)
    hand = xs.Shape.from_proto(shape_proto(f32, [2, 3], [0, 1]))
    text = xs.Shape.parse("f32[2,3]{0,1}")
    assert str(hand) == str(text)
    assert hand.layout is not None
    assert hand.layout.tail_padding_alignment_in_elements == 1
    assert hand == text
    assert hand.to_proto() == text.to_proto()


def test_hand_written_protos() -> None:
    f32 = int(xc.PrimitiveType.F32.value)
    good = shape_proto(f32, [2, 3], [0, 1])
    assert str(xs.Shape.from_proto(good)) == "f32[2,3]{0,1}"
    # a shape without a layout is allowed from bytes, as in XLA
    no_layout = xs.Shape.from_proto(shape_proto(f32, [2, 3], None))
    assert no_layout.layout is None
    assert no_layout.dimensions == (2, 3)
    with pytest.raises(xs.ValidationError) as info:
        xs.Shape.from_proto(shape_proto(f32, [2, 3], [0]))
    assert "minor_to_major" in str(info.value)
    with pytest.raises(xs.ValidationError) as info:
        xs.Shape.from_proto(shape_proto(f32, [2], [5]))
    assert info.value.kind == "InvalidLayout"
    with pytest.raises(xs.ValidationError) as info:
        xs.Shape.from_proto(shape_proto(99, [2], [0]))
    assert info.value.kind == "InvalidElementType"


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"\xff", "Decode"),
        (b"\x10\x0b\x1a\x02\x02", "Decode"),
        (b"\x10\x0b\x98\x01\x01", "UnknownField"),
    ],
)
def test_bad_bytes_are_decode_errors(data: bytes, kind: str) -> None:
    with pytest.raises(xs.DecodeError) as info:
        xs.Shape.from_proto(data)
    assert info.value.kind == kind
    with pytest.raises(xs.DecodeError):
        xs.Layout.from_proto(data + b"\xff")


def test_non_canonical_bytes_are_refused() -> None:
    """A varint with a redundant continuation byte decodes to the same value, but is not the
    bytes XLA writes: refused, so bytes round trip exactly."""
    canonical = xs.Shape.parse("f32[2]").to_proto()
    assert canonical.startswith(b"\x10\x0b")
    padded = b"\x10\x8b\x00" + canonical[2:]
    with pytest.raises(xs.DecodeError) as info:
        xs.Shape.from_proto(padded)
    assert info.value.kind == "NonCanonical"


def test_array_refuses_dtypes_without_element_type() -> None:
    with pytest.raises(xs.Error):
        xs.Shape.array(np.dtype("U3"), (2,))
    with pytest.raises(xs.Error):
        xs.Shape.array("f32", (2, 3), "{0}")
    with pytest.raises(xs.Error) as info:
        xs.Shape.parse("(f32[2])").dimensions  # noqa: B018
    assert info.value.kind == "NotAnArray"
    with pytest.raises(xs.Error) as info:
        xs.Shape.parse("f32[2]").tuple_shapes  # noqa: B018
    assert info.value.kind == "NotATuple"


# ---- pickling, equality, hashing ------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        xs.Shape.parse("bf16[8,256]{1,0:T(8,128)(2,1)}"),
        xs.Shape.parse("(f32[2,3]{0,1}, s4[5]{0:E(4)}, token[])"),
        xs.Shape.parse("f32[<=4,3]"),
        xs.Shape.from_proto(shape_proto(int(xc.PrimitiveType.F32.value), [2, 3], None)),
        xs.Layout.parse("{0,1:T(8,128)(2,1)E(16)S(5)}"),
        xs.HloSharding.parse("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
        xs.HloSharding.parse("{{maximal device=3}, {replicated}}"),
    ],
    ids=repr,
)
def test_pickle_round_trip(value: object) -> None:
    back = pickle.loads(pickle.dumps(value))
    assert back == value
    assert type(back) is type(value)
    assert hash(back) == hash(value)
    assert str(back) == str(value)
    assert repr(back) == repr(value)
    assert len({value, back}) == 1


def test_repr_and_equality() -> None:
    s = xs.Shape.parse("f32[2,3]")
    assert repr(s) == "xs.Shape('f32[2,3]{1,0}')"
    assert s == xs.Shape.parse("f32[2,3]{1,0}")
    assert s != xs.Shape.parse("f32[2,3]{0,1}")
    assert repr(xs.Layout.parse("{0,1}")) == "xs.Layout('{0,1}')"


# ---- offsets against strides computed by hand ------------------------------------------------


def strides_in_slots(dims: tuple[int, ...], m2m: tuple[int, ...]) -> list[int]:
    strides = [0] * len(dims)
    step = 1
    for d in m2m:
        strides[d] = step
        step *= dims[d]
    return strides


OFFSET_CASES = [
    ("f32", (3, 4), (1, 0)),
    ("f32", (3, 4), (0, 1)),
    ("bf16", (2, 3, 4), (0, 2, 1)),
    ("s8", (2, 3, 4), (2, 0, 1)),
    ("f64", (5,), (0,)),
    ("c64", (2, 2, 2, 3), (3, 1, 0, 2)),
    ("s4", (3, 5), (0, 1)),
    ("u2", (2, 7), (1, 0)),
]


@pytest.mark.parametrize(("etype", "dims", "m2m"), OFFSET_CASES)
def test_offsets_against_strides(etype: str, dims: tuple[int, ...], m2m: tuple[int, ...]) -> None:
    bits = {"s4": 4, "u2": 2}.get(etype)
    layout = "{" + ",".join(map(str, m2m)) + (f":E({bits})" if bits else "") + "}"
    shape = xs.Shape.parse(f"{etype}[{','.join(map(str, dims))}]{layout}")
    width = bits or shape.dtype.itemsize * 8
    strides = strides_in_slots(dims, m2m)
    seen = set()
    for index in itertools.product(*(range(d) for d in dims)):
        slot = sum(i * s for i, s in zip(index, strides, strict=True))
        assert shape.slot(index) == slot
        assert shape.bit_offset(index) == slot * width
        assert shape.byte_offset(index) == slot * width // 8
        assert shape.index_of_slot(slot) == index
        seen.add(slot)
    assert seen == set(range(math.prod(dims)))


def test_offsets_of_a_tiled_layout_by_hand() -> None:
    """f32[5,6]{1,0:T(2,4)}: tiles of 2x4 in row-major order over the padded 6x8 array."""
    shape = xs.Shape.parse("f32[5,6]{1,0:T(2,4)}")
    tiles_per_row = math.ceil(6 / 4)
    for i, j in itertools.product(range(5), range(6)):
        tile = (i // 2) * tiles_per_row + j // 4
        slot = tile * 8 + (i % 2) * 4 + j % 4
        assert shape.slot((i, j)) == slot
        assert shape.byte_offset((i, j)) == slot * 4
        assert shape.index_of_slot(slot) == (i, j)
    # padding slots hold no element
    assert shape.index_of_slot(1 * 8 + 2) is None  # tile 1, row 0, column 6: padding
    assert shape.storage_bytes == 3 * 2 * 8 * 4


def test_offset_errors() -> None:
    shape = xs.Shape.parse("f32[2,3]")
    with pytest.raises(xs.Error):
        shape.slot((2, 0))
    with pytest.raises(xs.Error):
        shape.slot((0,))
    with pytest.raises(xs.Error):
        xs.Shape.parse("(f32[2])").slot((0,))


def test_describe_mentions_the_sizes() -> None:
    text = xs.Shape.parse("bf16[8,256]{1,0:T(8,128)(2,1)}").describe()
    assert "4096" in text
    assert "bf16" in text
