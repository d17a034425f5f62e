"""Raw bytes of the buffers users pass, as 1-D ``uint8`` numpy views: never a copy."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from xla_shape._errors import error


def as_bytes(data: Any) -> npt.NDArray[np.uint8]:
    """The bytes of ``data`` — a bytes-like object (``bytes``, ``bytearray``, ``memoryview``,
    ``mmap``) or a numpy array whose memory is contiguous (any dtype, ml_dtypes ones included) —
    as a 1-D ``uint8`` view of the same memory. Arrays are read in memory order.

    >>> import numpy as np
    >>> as_bytes(np.array([1, 2], np.int16)).tolist()
    [1, 0, 2, 0]
    """
    if isinstance(data, np.ndarray):
        if not (data.flags.c_contiguous or data.flags.f_contiguous):
            raise error(
                "NotContiguous",
                "the array is not contiguous: its raw bytes are not one buffer "
                "(np.ascontiguousarray makes a copy that is)",
            )
        flat = data.ravel(order="K")
        return flat.view(np.uint8) if flat.dtype != np.uint8 else flat
    try:
        return np.frombuffer(data, dtype=np.uint8)
    except (TypeError, ValueError, BufferError) as e:
        kind = type(data).__name__
        raise error(
            "NotABuffer", f"expected a bytes-like object or a numpy array, got {kind}: {e}"
        ) from None
