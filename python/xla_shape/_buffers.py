"""The arrays and buffers users pass, as numpy arrays and as 1-D ``uint8`` views of their bytes.

Everything numpy can view is taken, of every dtype (ml_dtypes' too): numpy arrays, objects
with ``__array__``, ``__array_interface__`` or ``__array_struct__`` (``jax.Array``, torch
tensors), objects with only ``__dlpack__``, and bytes-like objects (the buffer protocol).

No copy is made, except where the producer cannot share its memory in a form numpy reads:

* a ``jax.Array`` of a sub-byte type (``int1``/``int2``/``int4``, their unsigned forms,
  ``float4_e2m1fn``) is stored packed on the device and comes out one element per byte: one copy
  (every other dtype of a single-device CPU ``jax.Array`` is viewed in place, bf16 and the
  float8s included);
* an array sharded over several devices is gathered by its producer: one copy;
* a non-contiguous array: refused (``np.ascontiguousarray`` makes the one copy explicitly).

An array on a device other than the host (a GPU, a TPU) is refused with an error naming the
device: its bytes are not in this process's memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from xla_shape._errors import error

#: DLPack device types whose memory the host reads: CPU, CUDA pinned host memory, ROCm host
#: memory, CUDA managed memory (``DLDeviceType`` in dlpack.h).
_HOST_DEVICE_TYPES = frozenset({1, 3, 11, 13})

#: DLPack device type names, for the error naming a device (dlpack.h).
_DEVICE_TYPE_NAMES = {
    2: "CUDA",
    4: "OpenCL",
    7: "Vulkan",
    8: "Metal",
    9: "VPI",
    10: "ROCm",
    12: "ExtDev",
    14: "oneAPI",
    15: "WebGPU",
    16: "Hexagon",
    17: "MAIA",
}

_ARRAY_PROTOCOLS = ("__array__", "__array_interface__", "__array_struct__")


def _device_name(data: Any, device_type: int, device_id: int) -> str:
    """The device ``data`` lives on, as its producer names it (``jax.Array.device``,
    ``torch.Tensor.device``), else DLPack's device type and id."""
    try:
        device = data.device
        if device is not None and not callable(device):
            return str(device)
    except Exception:  # a multi-device jax.Array has no single .device
        pass
    kind = _DEVICE_TYPE_NAMES.get(device_type, f"DLPack device type {device_type}")
    return f"{kind}:{device_id}"


def _check_on_host(data: Any) -> None:
    """Refuses an array whose memory is on a device the host cannot read."""
    dlpack_device = getattr(data, "__dlpack_device__", None)
    if dlpack_device is None:
        return
    try:
        device_type, device_id = dlpack_device()
    except Exception:  # a producer that cannot say (a sharded jax.Array) goes on
        return
    if int(device_type) not in _HOST_DEVICE_TYPES:
        name = _device_name(data, int(device_type), int(device_id))
        raise error(
            "NotOnHost",
            f"the {type(data).__name__} is on device {name}, not in host memory: copy it to the "
            "host first (jax.device_get(x), tensor.cpu())",
        )


def _not_viewable(data: Any, why: object) -> Exception:
    kind = type(data).__name__
    return error(
        "NotABuffer",
        f"expected an array or a bytes-like object numpy can view, got {kind}: {why}",
    )


def as_array(data: Any) -> npt.NDArray[Any]:
    """``data`` as a numpy array of its own dtype and shape: a numpy array as it is; an array
    (``__array__``, ``__array_interface__``, ``__array_struct__``, ``__dlpack__``) through
    numpy, in place where its producer allows; a bytes-like object as its items (``uint8`` for
    ``bytes``).

    >>> import ml_dtypes
    >>> a = np.array([1.5, -2], ml_dtypes.bfloat16)
    >>> as_array(a) is a, as_array(b"ab").tolist()
    (True, [97, 98])
    """
    if isinstance(data, np.ndarray):
        return data
    _check_on_host(data)
    if any(hasattr(data, name) for name in _ARRAY_PROTOCOLS):
        # numpy tries the buffer protocol, then the array interfaces, then __array__: a CPU
        # jax.Array of any byte-wide dtype is viewed in place this way (its buffer protocol
        # refuses bf16 and the float8s, its __array__ does not).
        try:
            array = np.asarray(data)
        except Exception as e:
            if not hasattr(data, "__dlpack__"):
                raise _not_viewable(data, e) from None
        else:
            if array.dtype != np.dtype(object):
                return array
    if hasattr(data, "__dlpack__"):
        try:
            return np.from_dlpack(data)
        except Exception as e:
            raise _not_viewable(data, e) from None
    try:
        view = memoryview(data)
    except TypeError as e:
        raise _not_viewable(data, e) from None
    try:
        return np.asarray(view)
    except Exception:  # a format numpy does not read: the raw bytes
        return np.frombuffer(view, dtype=np.uint8)


def as_bytes(data: Any) -> npt.NDArray[np.uint8]:
    """The bytes of ``data`` — anything :func:`as_array` takes, whose memory is contiguous — as
    a 1-D ``uint8`` view of the same memory. Arrays are read in memory order.

    >>> as_bytes(np.array([1, 2], np.int16)).tolist()
    [1, 0, 2, 0]
    """
    return _bytes_of(as_array(data))


def as_writable_bytes(out: Any) -> npt.NDArray[np.uint8]:
    """The bytes of ``out`` — a writable numpy array or bytes-like object (``bytearray``, a
    writable ``memoryview`` or ``mmap``), contiguous — as a writable 1-D ``uint8`` view of the
    same memory. Never a copy: what is written lands in ``out``.

    >>> buf = bytearray(2)
    >>> as_writable_bytes(buf)[:] = [1, 2]
    >>> bytes(buf)
    b'\\x01\\x02'
    """
    if isinstance(out, np.ndarray):
        array = out
    else:
        try:
            array = np.frombuffer(memoryview(out), dtype=np.uint8)
        except (TypeError, ValueError, BufferError) as e:
            kind = type(out).__name__
            raise error(
                "NotWritable",
                f"out must be a writable numpy array or bytes-like object, got {kind}: {e}",
            ) from None
    if not array.flags.writeable:
        raise error("NotWritable", f"out (a {type(out).__name__}) is read-only")
    return _bytes_of(array)


def _bytes_of(array: npt.NDArray[Any]) -> npt.NDArray[np.uint8]:
    """A contiguous array's bytes in memory order, as a 1-D ``uint8`` view."""
    if array.dtype.hasobject:
        raise error(
            "NotABuffer", f"an array of dtype {array.dtype} holds Python objects, not bytes"
        )
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        raise error(
            "NotContiguous",
            "the array is not contiguous: its raw bytes are not one buffer "
            "(np.ascontiguousarray makes a copy that is)",
        )
    flat = array.ravel(order="K")
    return flat.view(np.uint8) if flat.dtype != np.uint8 else flat
