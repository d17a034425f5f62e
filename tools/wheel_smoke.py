"""The smoke test .ci/run gives the wheel in a fresh virtual environment without a Rust toolchain:
the installed package (not the source folder) imports, has its version, and does the three things
people do — read a shape, move a buffer (bf16 and int4, threads=1 and 2), find who holds what.

    VENV/bin/python tools/wheel_smoke.py VERSION
"""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np

import xla_shape as xs


def main() -> None:
    expected_version = sys.argv[1]
    installed = Path(xs.__file__).resolve()
    assert "site-packages" in installed.parts, f"not the installed package: {installed}"
    assert xs.__version__ == expected_version, (xs.__version__, expected_version)

    shape = xs.Shape.parse("bf16[16,256]{1,0:T(8,128)(2,1)}")
    assert shape.byte_size == 16 * 256 * 2
    logical = np.arange(16 * 256).reshape(16, 256).astype(ml_dtypes.bfloat16)
    for threads in (None, 1, 2):
        tiled = xs.from_numpy(logical, shape, threads=threads)
        assert tiled.ctypes.data % 64 == 0
        assert (xs.to_numpy(tiled, shape, threads=threads) == logical).all()
    packed = xs.from_numpy(np.array([1, 2, 3, -1], ml_dtypes.int4), "s4[4]{0:E(4)}")
    assert bytes(packed) == b"!\xf3"

    sharding = xs.HloSharding.parse("{devices=[2,2]<=[4]}")
    assert sharding.devices_indices_map((4, 4))[3] == (slice(2, 4), slice(2, 4))
    shards = xs.split(np.arange(16, dtype=np.int8), "s8[4,4]", sharding)
    assert xs.assemble(shards, "s8[4,4]", sharding).tolist() == list(range(16))
    print(f"smoke: xla_shape {xs.__version__} from {installed.parent}: ok")


if __name__ == "__main__":
    main()
