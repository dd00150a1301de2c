"""After a bare `import torch_dali`, the submodules that `import nvidia.dali` exposes as attributes resolve.

DALI 2.4: `import nvidia.dali as dali; dali.pipeline.Pipeline(...)` works (DALI's own `test_resize_seq` builds
its pipelines so); so do `dali.math`, `dali.backend`, `dali.tensors`, `dali.data_node`, `dali.plugin_manager`.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import numpy as np
import torch_dali as dali
import torch_dali.fn as fn
pipe = dali.pipeline.Pipeline(2, 1, None, 0)
with pipe:
    pipe.set_outputs(dali.math.abs(fn.external_source(lambda: [np.array([-1.5], np.float32)] * 2)))
pipe.build()
assert np.array(pipe.run()[0][1]).tolist() == [1.5]
assert dali.tensors.TensorListCPU is dali.backend.TensorListCPU
assert dali.data_node.DataNode is dali.pipeline.DataNode and callable(dali.plugin_manager.load_library)
assert {"pipeline", "math", "backend", "tensors"} <= set(dir(dali))
print("ok")
"""


def test_dali_submodules_after_a_bare_import():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                         env=env, cwd=str(ROOT))
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-3000:]
