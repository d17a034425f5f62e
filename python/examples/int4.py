"""int4 weights packed two to a byte (XLA's E(4) layouts), and back, with no nibble arithmetic."""

import ml_dtypes
import numpy as np

import xla_shape as xs

weights = np.random.default_rng(1).integers(-8, 8, size=(4, 6)).astype(ml_dtypes.int4)
for layout in ["{1,0:E(4)}", "{0,1:E(4)}", "{1,0:T(2,4)E(4)}"]:
    shape = xs.Shape.parse(f"s4[4,6]{layout}")
    packed = xs.from_numpy(weights, shape)
    assert (xs.to_numpy(packed, shape) == weights).all()
    print(f"{shape}: {packed.nbytes} bytes {bytes(packed[:6]).hex()}…")
