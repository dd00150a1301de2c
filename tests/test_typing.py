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
        if isinstance(n, ast.If) and isinstance(n.test, ast.Name) and n.test.id == "TYPE_CHECKING":
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
