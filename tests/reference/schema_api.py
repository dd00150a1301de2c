"""What a backend's `GetSchema(name)` answers for every current (not deprecated, not internal) op of
DALI 2.4: whether it keeps state, how many inputs it takes, and the device of each input for each
(input device, operator device) pair; for comparing torch_dali's `backend.GetSchema` with DALI's.

    /work/dali-venv/bin/python -m tests.reference.schema_api      # rewrites schema_api.json

Needs only the backend module: `nvidia.dali.backend_impl` here (DALI's)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STORED = Path(__file__).with_name("schema_api.json")
DEVICES = (None, "cpu", "gpu", "mixed")


def describe(schema: Any) -> dict[str, Any]:
    n_inputs = min(schema.MaxNumInput(), 4)
    return {
        "stateful": bool(schema.IsStateful()),
        "min_inputs": schema.MinNumInput(),
        "max_inputs": schema.MaxNumInput(),
        # per input: GetInputDevice for each (input device, op device), input device outermost
        "input_devices": [[schema.GetInputDevice(i, a, b) for a in DEVICES[:3] for b in DEVICES]
                          for i in range(n_inputs)],
    }


def dali_table() -> dict[str, Any]:
    from nvidia.dali import backend_impl as b
    names = set(b.RegisteredCPUOps()) | set(b.RegisteredGPUOps()) | set(b.RegisteredMixedOps())
    out = {}
    for name in sorted(names):
        s = b.GetSchema(name)
        if s.IsInternal() or s.IsDeprecated() or name.startswith("_"):
            continue
        out[name] = describe(s)
    return out


if __name__ == "__main__":
    STORED.write_text(json.dumps(dali_table(), indent=0, sort_keys=True) + "\n")
    print(f"wrote {STORED}")
