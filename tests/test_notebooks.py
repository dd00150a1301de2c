"""The notebooks in notebooks/ run top to bottom in a Jupyter kernel of this venv's Python, and show
what they claim: all-zero differences, images, and True for every equality check.

Each notebook builds its own small sample dataset (RECORDIO_DIR / IMAGE_DIR are unset here), so the
"no data given" path is the one tested. Cells are found by their metadata tags:
`check-difference`, `check-equal`, `show-images`.
"""
from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat (pip install 'torch_dali[test]')")
nbclient = pytest.importorskip("nbclient", reason="notebook tests need nbclient (pip install 'torch_dali[test]')")
pytest.importorskip("ipykernel", reason="notebook tests need ipykernel in this venv (pip install 'torch_dali[test]')")
pytest.importorskip("matplotlib", reason="the notebooks draw with matplotlib")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CELL_TIMEOUT_S = 120
PROBE = "import sys; print('KERNEL-PYTHON=' + sys.executable)"


def _kernel_manager(spec_dir: Path):
    """A kernel manager whose `python3` kernel is this interpreter, whatever other `python3`
    kernelspecs the machine has installed."""
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    write_kernel_spec(str(spec_dir / "python3"))  # argv: [sys.executable, "-m", "ipykernel_launcher", ...]
    ksm = KernelSpecManager(kernel_dirs=[str(spec_dir)], ensure_native_kernel=False)
    return KernelManager(kernel_name="python3", kernel_spec_manager=ksm)


def _text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream" and out["name"] == "stdout":
            parts.append(out["text"])
        elif out["output_type"] in ("execute_result", "display_data"):
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def _tagged(nb, tag: str) -> list:
    cells = [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]
    assert cells, f"no cell tagged {tag!r}"
    return cells


@pytest.fixture
def run_notebook(tmp_path, monkeypatch):
    """Executes notebooks/<name> in a fresh kernel (cwd: a tmp dir, MPLBACKEND=Agg; `%matplotlib
    inline` in the notebooks still sends figures to the notebook) and returns the executed notebook."""
    for var in ("RECORDIO_DIR", "IMAGE_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebooks' sample data go under tmp_path

    def run(name: str):
        source = NOTEBOOKS / name
        nb = nbformat.read(str(source), as_version=4)
        for cell in nb.cells:  # the notebooks are committed without outputs
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, f"{name} is saved with outputs"
        nb.cells.append(nbformat.v4.new_code_cell(PROBE))
        work = tmp_path / "work"
        work.mkdir(exist_ok=True)
        spec_dir = tmp_path / "kernels"
        spec_dir.mkdir(exist_ok=True)
        client = nbclient.NotebookClient(nb, km=_kernel_manager(spec_dir), timeout=CELL_TIMEOUT_S,
                                         kernel_name="python3", resources={"metadata": {"path": str(work)}})
        client.execute()
        errors = [(i, o.get("ename"), o.get("evalue")) for i, c in enumerate(nb.cells)
                  for o in c.get("outputs", []) if o["output_type"] == "error"]
        assert not errors, f"{name}: cells with errors: {errors}"
        probe = _text(nb.cells[-1])
        assert probe.startswith("KERNEL-PYTHON="), probe
        kernel_python = probe.strip().split("=", 1)[1]
        assert os.path.realpath(kernel_python) == os.path.realpath(sys.executable), (
            f"the kernel ran {kernel_python}, not this venv's {sys.executable}")
        return nb

    return run


def _assert_images(nb, name: str) -> None:
    for cell in _tagged(nb, "show-images"):
        pngs = [o for o in cell.outputs if o["output_type"] == "display_data" and "image/png" in o.get("data", {})]
        assert pngs, f"{name}: an image cell drew nothing:\n{cell.source}"


def _floats(text: str) -> list[float]:
    """`[np.float32(0.0), ...]` (NumPy >= 2) or `[0.0, ...]` -> list of floats."""
    return [float(x) for x in ast.literal_eval(re.sub(r"np\.\w+\(([^()]*)\)", r"\1", text.strip()))]


def test_serialization_notebook(run_notebook):
    nb = run_notebook("serialization.ipynb")
    (check,) = _tagged(nb, "check-difference")
    assert _floats(_text(check)) == [0.0] * 16, _text(check)
    _assert_images(nb, "serialization.ipynb")
    # the YAML it printed names the ops it serialized
    yaml_out = next(_text(c) for c in nb.cells if c.cell_type == "code" and "s = pipe.serialize()" in c.source)
    for op in ("readers.mxnet", "resize", "crop_mirror_normalize", "random.uniform"):
        assert op in yaml_out, f"{op} missing from the printed YAML:\n{yaml_out}"


def test_python_operators_notebook(run_notebook):
    nb = run_notebook("python_operators.ipynb")
    _assert_images(nb, "python_operators.ipynb")
    assert len(_tagged(nb, "show-images")) == 4


def test_torchvision_transforms_notebook(run_notebook):
    nb = run_notebook("torchvision_transforms.ipynb")
    checks = _tagged(nb, "check-equal")
    assert len(checks) == 2
    for cell in checks:
        assert _text(cell).strip() == "True", f"an equality check did not print True:\n{cell.source}\n-> {_text(cell)!r}"
    assert any("seed 7 differs: True" in _text(c) for c in nb.cells), "another seed should give another batch"
    _assert_images(nb, "torchvision_transforms.ipynb")
    yaml_out = next(_text(c) for c in nb.cells if c.cell_type == "code" and "pipe.serialize(" in c.source)
    assert "function: __main__:augment" in yaml_out, yaml_out


def test_eager_notebook(run_notebook):
    nb = run_notebook("eager.ipynb")
    (check,) = _tagged(nb, "check-equal")
    assert _text(check).strip() == "True", _text(check)
    _assert_images(nb, "eager.ipynb")
