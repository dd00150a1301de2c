"""The layering is checked, not just described: `lint-imports` runs the import-linter contracts in
pyproject.toml ([tool.importlinter]; DESIGN.md explains each), so an import that reaches up a
layer, or a native call outside the places that choose kernels, fails `make test`."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold() -> None:
    exe = Path(sys.executable).parent / "lint-imports"
    assert exe.exists(), ("import-linter is not installed in this environment; it is part of the test "
                          "extra: pip install -e '.[test]'")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([str(exe), "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"import contracts broken:\n{r.stdout[-4000:]}\n{r.stderr[-2000:]}"
    assert "0 broken" in r.stdout
