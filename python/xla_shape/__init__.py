"""XLA's shapes, layouts, shardings and HLO modules for numpy and JAX users.

``import xla_shape as xs``:

* :class:`Shape`, :class:`Layout` — XLA's text and bytes exactly, validated as XLA validates;
  ``shape.dtype`` is the numpy (ml_dtypes) dtype of the values;
* :func:`relayout`, :func:`to_numpy`, :func:`from_numpy` — move buffers between layouts (tiled,
  sub-byte packed, padded) with the crate's parallel kernels, the GIL released;
* :class:`HloSharding` — ``devices_indices_map`` (JAX's slices, uneven shardings too),
  :func:`split` and :func:`assemble` of per-device buffers, :func:`reshard` from one sharding
  to another;
* :class:`HloModule` — every shape, sharding and constant of an HLO dump (text or proto).

Every error is an :class:`Error` (a ``ValueError``): :class:`ParseError`,
:class:`ValidationError` and :class:`DecodeError` under it, each with the crate's message (field
path, XLA's phrase) and ``kind``, the crate's error variant.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from xla_shape._buffers import as_array, as_bytes
from xla_shape._errors import error
from xla_shape._xla_shape import (
    DecodeError,
    Error,
    HloEntries,
    HloModule,
    HloSharding,
    Layout,
    ParseError,
    ProgramShape,
    RelayoutPlan,
    ReshardPlan,
    Shape,
    ShardBuffers,
    ValidationError,
    __version__,
)

__all__ = [
    "DecodeError",
    "Error",
    "HloEntries",
    "HloModule",
    "HloSharding",
    "Layout",
    "ParseError",
    "ProgramShape",
    "RelayoutPlan",
    "ReshardPlan",
    "Shape",
    "ShardBuffers",
    "ValidationError",
    "__version__",
    "as_bytes",
    "assemble",
    "from_numpy",
    "relayout",
    "reshard",
    "split",
    "to_numpy",
]

ShapeLike = Shape | str
ShardingLike = HloSharding | str


def _shape(shape: ShapeLike) -> Shape:
    return shape if isinstance(shape, Shape) else Shape.parse(shape)


def relayout(
    data: Any, from_shape: ShapeLike, to_shape: ShapeLike, *, threads: int | None = None
) -> npt.NDArray[np.uint8]:
    """The bytes of ``data`` (a buffer in ``from_shape``'s layout) moved to ``to_shape``'s layout.

    ``data`` is any contiguous array numpy can view (``jax.Array`` of any dtype, ``__dlpack__``)
    or bytes-like object: its raw bytes, not copied (see ``xla_shape._buffers`` for the cases
    where its producer makes one copy);
    the result is a new 1-D ``uint8`` array, cache-line aligned. The GIL is released while the
    kernels run on ``threads`` threads (default: one per core).

    >>> import numpy as np
    >>> import xla_shape as xs
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> out = xs.relayout(a, "f32[2,3]{1,0}", "f32[2,3]{0,1}")
    >>> out.view(np.float32).tolist()
    [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    """
    return RelayoutPlan(from_shape, to_shape).run(data, threads=threads)


def to_numpy(data: Any, shape: ShapeLike, *, threads: int | None = None) -> npt.NDArray[Any]:
    """The logical array held by ``data``, a buffer in ``shape``'s layout (tiled, packed,
    padded): row-major, of ``shape.dtype`` (sub-byte types one element per byte, as ml_dtypes
    holds them).

    >>> import xla_shape as xs
    >>> xs.to_numpy(bytes([0x21, 0xF3]), "s4[4]{0:E(4)}").tolist()
    [1, 2, 3, -1]
    """
    return RelayoutPlan.to_logical(shape).run(data, threads=threads)


def from_numpy(
    array: npt.ArrayLike, shape: ShapeLike, *, threads: int | None = None
) -> npt.NDArray[np.uint8]:
    """The bytes of ``shape``'s layout holding ``array`` (of ``shape.dtype`` and
    ``shape.dimensions``): a new 1-D ``uint8`` array, cache-line aligned. Non-contiguous arrays
    are copied once to C order first.

    >>> import numpy as np
    >>> import xla_shape as xs
    >>> import ml_dtypes
    >>> bytes(xs.from_numpy(np.array([1, 2, 3, -1], ml_dtypes.int4), "s4[4]{0:E(4)}"))
    b'!\\xf3'
    """
    shape = _shape(shape)
    # Lists and scalars through np.asarray; every array (jax.Array, __dlpack__) as it is.
    values = np.asarray(array) if isinstance(array, list | tuple) else as_array(array)
    if values.dtype != shape.dtype:
        raise error(
            "Dtype",
            f"the array's dtype {values.dtype} is not the shape's {shape.element_type} "
            f"({shape.dtype}); convert it with .astype first",
        )
    if tuple(values.shape) != tuple(shape.dimensions):
        raise error(
            "Dimensions",
            f"the array's shape {tuple(values.shape)} is not the shape's dimensions "
            f"{shape.dimensions}",
        )
    values = np.ascontiguousarray(values)
    return RelayoutPlan.from_logical(shape).run(values, threads=threads)


def split(
    data: Any,
    shape: ShapeLike,
    sharding: ShardingLike,
    num_devices: int | None = None,
    *,
    padded_to_tile: bool = False,
    threads: int | None = None,
) -> dict[int, npt.NDArray[np.uint8]]:
    """Each device's buffer of a global buffer ``data`` in ``shape``'s layout, as JAX's
    ``addressable_shards`` hold them (or padded to the sharding's tile), keyed by device id.

    >>> import numpy as np
    >>> import xla_shape as xs
    >>> shards = xs.split(np.arange(8, dtype=np.int8), "s8[8]", "{devices=[4]<=[4]}")
    >>> {d: b.tolist() for d, b in shards.items()}
    {0: [0, 1], 1: [2, 3], 2: [4, 5], 3: [6, 7]}
    """
    buffers = ShardBuffers(shape, sharding, num_devices, padded_to_tile=padded_to_tile)
    return buffers.split(data, threads=threads)


def assemble(
    shards: Mapping[int, Any],
    shape: ShapeLike,
    sharding: ShardingLike,
    num_devices: int | None = None,
    *,
    padded_to_tile: bool = False,
    threads: int | None = None,
) -> npt.NDArray[np.uint8]:
    """The global buffer in ``shape``'s layout assembled from per-device buffers (a mapping of
    device ids to buffers, as :func:`split` gives them). A missing, extra or mis-sized buffer,
    or replicas that differ, raise an :class:`Error` naming the device.

    >>> import xla_shape as xs
    >>> shards = {0: b"\\x00\\x01", 1: b"\\x02\\x03"}
    >>> xs.assemble(shards, "s8[4]", "{devices=[2]<=[2]}").tolist()
    [0, 1, 2, 3]
    """
    buffers = ShardBuffers(shape, sharding, num_devices, padded_to_tile=padded_to_tile)
    return buffers.assemble(shards, threads=threads)


def reshard(
    shards: Mapping[int, Any],
    shape: ShapeLike,
    from_sharding: ShardingLike,
    to_sharding: ShardingLike,
    num_devices: int | tuple[int | None, int | None] | None = None,
    *,
    to_shape: ShapeLike | None = None,
    padded_to_tile: bool = False,
    to_padded_to_tile: bool = False,
    threads: int | None = None,
) -> dict[int, npt.NDArray[np.uint8]]:
    """Per-device buffers (a mapping of device ids to buffers, as :func:`split` gives them) of an
    array of ``shape`` under ``from_sharding``, moved to its buffers under ``to_sharding``
    (``uint8`` arrays by device id, as :func:`split` would cut them) with no global buffer:
    device sets and counts may differ (``num_devices``: one count, or a pair ``(source,
    target)``), ``to_shape`` gives the targets another layout. A missing, extra or mis-sized
    buffer, or replicas that differ, raise an :class:`Error` naming the device.

    >>> import numpy as np
    >>> import xla_shape as xs
    >>> x = np.arange(16, dtype=np.int8)
    >>> on_8 = xs.split(x, "s8[16]", "{devices=[8]<=[8]}")
    >>> on_4 = xs.reshard(on_8, "s8[16]", "{devices=[8]<=[8]}", "{devices=[4]0,1,2,3}")
    >>> {d: b.tolist() for d, b in on_4.items()}
    {0: [0, 1, 2, 3], 1: [4, 5, 6, 7], 2: [8, 9, 10, 11], 3: [12, 13, 14, 15]}
    """
    plan = ReshardPlan(
        shape,
        from_sharding,
        to_sharding,
        num_devices,
        to_shape=to_shape,
        padded_to_tile=padded_to_tile,
        to_padded_to_tile=to_padded_to_tile,
    )
    return plan.run(shards, threads=threads)
