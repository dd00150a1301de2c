"""A notebook's code cells as a script for the harness (cells split by `# %%`), made CPU only:
`device="mixed"` / `"gpu"` -> `"cpu"`, `.gpu()` dropped, IPython magics and shell lines dropped.
Notebooks whose cells need more than that (GPU-only ops, plots between cells) are adapted by hand
afterwards; the docs pages say where."""
from __future__ import annotations

import json
import re
from pathlib import Path

_DEVICE = re.compile(r"""(device\s*=\s*)(["'])(mixed|gpu)\2""")


def extract(notebook: Path, out_dir: Path) -> Path:
    cells = json.loads(notebook.read_text())["cells"]
    parts = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        lines = [ln for ln in "".join(cell.get("source", [])).splitlines() if not ln.lstrip().startswith(("%", "!"))]
        parts.append(_DEVICE.sub(r"\1\2cpu\2", "\n".join(lines)).replace(".gpu()", ""))
    # */pipeline_mode.ipynb and */dynamic_mode.ipynb are named by their folder
    stem = notebook.parent.name if notebook.stem in ("pipeline_mode", "dynamic_mode") else notebook.stem
    target = (out_dir / stem).with_suffix(".py")
    target.write_text(f"# extracted from {notebook.name}: code cells, CPU only\n" + "\n# %%\n".join(parts) + "\n")
    return target
