"""XLA element types and the numpy dtypes that hold their values (ml_dtypes for the types
numpy lacks: bf16, the 8-, 6- and 4-bit floats, the sub-byte integers, one element per byte)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from xla_shape._errors import error

#: XLA's element type name -> the numpy dtype of its logical values.
DTYPES: dict[str, np.dtype[Any]] = {
    "pred": np.dtype(np.bool_),
    "s1": np.dtype(ml_dtypes.int1),
    "s2": np.dtype(ml_dtypes.int2),
    "s4": np.dtype(ml_dtypes.int4),
    "s8": np.dtype(np.int8),
    "s16": np.dtype(np.int16),
    "s32": np.dtype(np.int32),
    "s64": np.dtype(np.int64),
    "u1": np.dtype(ml_dtypes.uint1),
    "u2": np.dtype(ml_dtypes.uint2),
    "u4": np.dtype(ml_dtypes.uint4),
    "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "c64": np.dtype(np.complex64),
    "c128": np.dtype(np.complex128),
    "f8e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "f8e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8e4m3b11fnuz": np.dtype(ml_dtypes.float8_e4m3b11fnuz),
    "f8e5m2fnuz": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "f8e4m3fnuz": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "f8e4m3": np.dtype(ml_dtypes.float8_e4m3),
    "f8e3m4": np.dtype(ml_dtypes.float8_e3m4),
    "f8e8m0fnu": np.dtype(ml_dtypes.float8_e8m0fnu),
    "f4e2m1fn": np.dtype(ml_dtypes.float4_e2m1fn),
    "f6e2m3fn": np.dtype(ml_dtypes.float6_e2m3fn),
    "f6e3m2fn": np.dtype(ml_dtypes.float6_e3m2fn),
}

_NAMES: dict[np.dtype[Any], str] = {dtype: name for name, dtype in DTYPES.items()}


def dtype_of(element_type: str) -> np.dtype[Any]:
    """The numpy dtype of an XLA element type's values.

    >>> dtype_of("bf16")
    dtype(bfloat16)
    """
    try:
        return DTYPES[element_type]
    except KeyError:
        raise error(
            "NoDtype", f"element type {element_type} has no numpy dtype (not an array type)"
        ) from None


def element_type_of(dtype: Any) -> str:
    """XLA's element type name of a numpy (or ml_dtypes) dtype.

    >>> import numpy as np
    >>> import ml_dtypes
    >>> element_type_of(np.float32), element_type_of(ml_dtypes.int4)
    ('f32', 's4')
    """
    try:
        return _NAMES[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise error("NoElementType", f"numpy dtype {dtype!r} has no XLA element type") from None
