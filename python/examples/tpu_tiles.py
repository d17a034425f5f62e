"""A TPU-tiled bf16 matrix: its device bytes from numpy, numpy from its device bytes, and a
row-major buffer moved into the tiles with the parallel kernels."""

import ml_dtypes
import numpy as np

import xla_shape as xs

tpu = xs.Shape.parse("bf16[1024,2048]{1,0:T(8,128)(2,1)}")
x = np.random.default_rng(0).standard_normal((1024, 2048)).astype(ml_dtypes.bfloat16)

device_bytes = xs.from_numpy(x, tpu)
print(f"{tpu}: {device_bytes.nbytes} bytes, 64-byte aligned: {device_bytes.ctypes.data % 64 == 0}")
assert (xs.to_numpy(device_bytes, tpu) == x).all()

plan = xs.RelayoutPlan("bf16[1024,2048]{1,0}", tpu)  # planned once, run on many buffers
assert (plan.run(x, threads=2) == device_bytes).all()
print(plan.explain().splitlines()[0])
