"""What a type checker sees of torch_dali: names made at import time (DataNode's operators, the
dynamic-mode ops) must be declared where mypy can read them, as DALI's stubs declare them
(DALI's type_annotations tests run mypy --check-untyped-defs over pipelines using them)."""
import ast
import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

import torch_dali  # noqa: F401 - installs the operators
from torch_dali.ops import arithmetic

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _type_checking_defs(path: str, cls: str | None) -> set[str]:
    """Names of the functions defined under `if TYPE_CHECKING:` in class `cls` (None: the module)."""
    tree = ast.parse(open(os.path.join(ROOT, path)).read())
    body = tree.body
    if cls is not None:
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    names = set()
    for n in body:
        if isinstance(n, ast.If) and ast.unparse(n.test) in ("TYPE_CHECKING", "_typing.TYPE_CHECKING"):
            names |= {f.name for f in n.body if isinstance(f, ast.FunctionDef)}
    return names


def test_datanode_operators_declared_for_type_checkers():
    class Probe:
        pass
    arithmetic.install(Probe)
    installed = {k for k in vars(Probe) if k.startswith("__") and callable(vars(Probe)[k])}
    installed |= {"__getitem__"}  # ops/subscript.py installs it
    assert _type_checking_defs("torch_dali/graph/node.py", "DataNode") == installed


def _mypy(tmp_path, code: str) -> subprocess.CompletedProcess:
    src = tmp_path / "snippet.py"
    src.write_text(textwrap.dedent(code))
    env = dict(os.environ, MYPYPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "mypy", "--check-untyped-defs", "--follow-imports=silent",
                           "--ignore-missing-imports", "--no-incremental", str(src)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy not installed")
def test_mypy_accepts_datanode_arithmetic(tmp_path):
    # DALI 2.4's stubs type these as DataNode; before, mypy said "Unsupported left operand type for +",
    # "not indexable" (the same snippet against nvidia.dali passes)
    r = _mypy(tmp_path, """
        from torch_dali import fn
        from torch_dali.data_node import DataNode
        def f() -> None:
            a: DataNode = fn.random.uniform(range=[0, 1])
            b: DataNode = (a + a - 1) * 2 / a // 3 % 2 + 1 - a
            c: DataNode = (a < 0.5) & ~(a == 1) | -a[0]
        """)
    assert r.returncode == 0, r.stdout


@pytest.mark.parametrize("path, module, example", [
    ("torch_dali/experimental/dynamic/__init__.py", "torch_dali.experimental.dynamic", "zeros"),
    ("torch_dali/experimental/dynamic/random.py", "torch_dali.experimental.dynamic.random", "coin_flip"),
    ("torch_dali/experimental/dynamic/math.py", "torch_dali.experimental.dynamic.math", "sqrt"),
])
def test_dynamic_mode_ops_visible_to_type_checkers(path, module, example):
    # the ops are placed at import (ndd.zeros, ndd.random.coin_flip, ndd.math.sqrt): no def of them in
    # the source, so the module must tell type checkers that other names exist
    mod = importlib.import_module(module)
    assert callable(getattr(mod, example))
    assert f"def {example}(" not in open(os.path.join(ROOT, path)).read()
    assert "__getattr__" in _type_checking_defs(path, None)


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy not installed")
def test_mypy_accepts_dynamic_mode_ops(tmp_path):
    # DALI's type_annotations/test_typing_dynamic.py: before, "Module has no attribute zeros/stack/copy"
    r = _mypy(tmp_path, """
        import torch_dali.experimental.dynamic as ndd
        def f() -> None:
            t: ndd.Tensor = ndd.stack(ndd.zeros(shape=10), ndd.copy(1))
            b: ndd.Batch = ndd.random.coin_flip(probability=0.5, batch_size=2)
            s = ndd.math.sqrt(t)
            r = ndd.readers.File(files="x.jpg")
        """)
    assert r.returncode == 0, r.stdout


def test_torch_python_function_annotated():
    # the class is generated at import; unannotated, mypy typed the alias "Any?" and refused calls
    import torch_dali.plugin.pytorch as dali_torch
    assert "TorchPythonFunction" in dali_torch.__annotations__


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy not installed")
def test_mypy_accepts_torch_python_function(tmp_path):
    # DALI's type_annotations/test_typing_pipelines.py::test_pytorch_plugin: "Any? not callable" before
    r = _mypy(tmp_path, """
        import torch_dali.plugin.pytorch as dali_torch
        def f() -> None:
            zeros = dali_torch.TorchPythonFunction(lambda: 0, num_outputs=1)()
        """)
    assert r.returncode == 0, r.stdout
