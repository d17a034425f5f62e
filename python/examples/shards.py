"""A sharded array: which device holds which slice, and the per-device buffers cut from the
global buffer and put back (uneven shardings too, which JAX refuses)."""

import numpy as np

import xla_shape as xs

sharding = xs.HloSharding.from_named({"x": 2, "y": 4}, ("x", "y"), ndim=2)
print(sharding, "tile", sharding.tile_shape((5, 10)))
for device, index in sharding.devices_indices_map((5, 10)).items():
    print(f"device {device}: {index}")

a = np.arange(50, dtype=np.float32).reshape(5, 10)
shards = xs.split(a, "f32[5,10]", sharding)
assert (xs.assemble(shards, "f32[5,10]", sharding) == xs.as_bytes(a)).all()
print({d: b.view(np.float32).tolist() for d, b in list(shards.items())[:2]})
