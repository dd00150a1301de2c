"""`torch_dali.configs.load(...)` works after a bare `import torch_dali` (issue 16, item 12)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import torch_dali
pipe = torch_dali.configs.load("imagenet_val", batch_size=3)
assert pipe.batch_size == 3, pipe.batch_size
assert torch_dali.visualize.describe(pipe).startswith("Pipeline")
assert callable(torch_dali.sample_data.make_sample_dataset) and callable(torch_dali.augment.color_jitter)
assert {"configs", "visualize"} <= set(dir(torch_dali))
try:
    torch_dali.no_such_module
except AttributeError as e:
    assert "no_such_module" in str(e)
else:
    raise AssertionError("an unknown attribute must raise AttributeError")
print("ok")
"""


def test_configs_after_a_bare_import_torch_dali():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                         env=env, cwd=str(ROOT))
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-3000:]

