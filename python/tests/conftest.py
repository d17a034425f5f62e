"""Shared setup of the suite: one pytest session with 8 CPU devices, configured before jax is
imported anywhere (the environment variables must be set first, so they sit at the top)."""

from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"

import ctypes
from typing import Any

import jax
import numpy as np
import pytest
from _pytest.doctest import DoctestItem
from hypothesis import settings
from jax.sharding import Mesh

import xla_shape as xs

# f64 and s64 values must reach the devices as they are (JAX narrows them otherwise).
jax.config.update("jax_enable_x64", True)

assert len(jax.devices()) == 8, f"expected 8 CPU devices, got {jax.devices()}"
assert jax.default_backend() == "cpu"

# Property tests: the same examples on every run (no example database written to disk).
settings.register_profile("xla_shape", derandomize=True, database=None, deadline=None)
settings.load_profile("xla_shape")

DOCTEST_GLOBALS: dict[str, Any] = {"xs": xs, "np": np}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Gives every doctest (the package's own modules too, which this directory's fixtures do not
    reach) ``xs`` and ``np``."""
    for item in items:
        if isinstance(item, DoctestItem) and item.dtest is not None:
            for name, value in DOCTEST_GLOBALS.items():
                item.dtest.globs.setdefault(name, value)


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace: dict[str, Any]) -> None:
    doctest_namespace.update(DOCTEST_GLOBALS)


def make_mesh(sizes: tuple[int, ...], names: tuple[str, ...]) -> Mesh:
    return Mesh(np.array(jax.devices()).reshape(sizes), names)


@pytest.fixture(scope="session")
def mesh8() -> Mesh:
    return make_mesh((8,), ("x",))


@pytest.fixture(scope="session")
def mesh2x4() -> Mesh:
    return make_mesh((2, 4), ("x", "y"))


@pytest.fixture(scope="session")
def mesh2x2x2() -> Mesh:
    return make_mesh((2, 2, 2), ("x", "y", "z"))


MESHES: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "8": ((8,), ("x",)),
    "2x4": ((2, 4), ("x", "y")),
    "2x2x2": ((2, 2, 2), ("x", "y", "z")),
}


@pytest.fixture(scope="session")
def meshes() -> dict[str, Mesh]:
    return {name: make_mesh(sizes, axes) for name, (sizes, axes) in MESHES.items()}


def storage_nbytes(arr: jax.Array) -> int:
    """The bytes a CPU device buffer of ``arr`` holds: ``s4``/``u4`` packed two per byte."""
    n = int(np.prod(arr.shape, dtype=np.int64))
    bits = np.dtype(arr.dtype).itemsize * 8
    if np.dtype(arr.dtype).name in ("int4", "uint4"):
        bits = 4
    return (n * bits + 7) // 8


def device_bytes(arr: jax.Array) -> bytes:
    """The raw bytes of a single-device array's buffer (host memory on the CPU client)."""
    arr.block_until_ready()
    return ctypes.string_at(arr.unsafe_buffer_pointer(), storage_nbytes(arr))


@pytest.fixture(name="device_bytes", scope="session")
def device_bytes_fixture() -> Any:
    """`device_bytes`, for the test modules (a fixture: no import of conftest needed)."""
    return device_bytes
