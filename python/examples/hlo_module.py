"""An HLO module as JAX and XLA dump it: its shapes, shardings, entry layout and constants."""

import xla_shape as xs

module = xs.HloModule.load("tests/fixtures/hlo_text/sharded.compiled.txt")
print(module.name, module.entry_computation_layout)
for entry in module.shapes():
    if "sharding" in entry:
        print(f"{entry['site']}: {entry['shape']} sharding={entry['sharding']}")

constants = xs.HloModule.load("tests/fixtures/hlo_text/constants.compiled.pb").constants()
for site, value in constants.items():
    print(site, value.dtype, value.tolist())
