"""No module of torch_dali reads another's private names (DESIGN.md, "Seams"): a name with a
leading underscore (`_dense`, `_failed`, `_run_chain`) belongs to the module that defines it; what
another module needs becomes public. Underscored modules (`ops._registry`, `_native`) are internal
to the package (not user API) and may be imported inside it."""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "torch_dali"
# conventions of the standard library, not private state: namedtuple's API (and ast nodes'
# `_fields`/`_attributes`), the frame getter
# and torch's own opt-out for Tensor subclasses (`__torch_function__ = torch._C._disabled_...`)
ALLOWED = {"_replace", "_asdict", "_fields", "_attributes", "_make", "_getframe", "_C", "_disabled_torch_function_impl",
           "_abc_caches_clear",  # ABCMeta's cache reset (after a class stops being Iterable)
           # marks set on the user's functions (DALI's `_is_pipeline_def`; our conditionals' own)
           "_is_pipeline_def", "_torch_dali_converted", "_torch_dali_do_not_convert",
           "_schema_name",  # DALI's mark on each fn function (`ops._op_name(f._schema_name)`)
           # DALI's NumbaFunction static checks, named as DALI names them (its tests call them)
           "_check_minimal_numba_version", "_check_cuda_compatibility"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined(tree: ast.AST) -> set[str]:
    """Private names this module defines: functions, classes, assigned names and attributes."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            out.add(node.attr)  # set on its own objects: writing another module's `x._name` is a read too
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == "self"
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            out.add(node.args[1].value)  # an attribute its own objects may carry (set by a factory here)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return {n for n in out if _private(n)}


def _is_module(path: Path, node: ast.ImportFrom, name: str) -> bool:
    """Whether `from <node.module> import name` names a module or package of torch_dali."""
    base = path.parent
    for _ in range(max(node.level - 1, 0)):
        base = base.parent
    if node.level == 0:
        parts = (node.module or "").split(".")
        if parts[0] != "torch_dali":
            return False
        base = PKG.parent
    for part in (node.module or "").split(".") if node.module else []:
        base = base / part
    return (base / f"{name}.py").exists() or (base / name / "__init__.py").exists()


def _getattr_name(node: ast.AST) -> str | None:
    """The attribute `getattr`/`hasattr`/`setattr` names as a constant on an object other than the
    caller's own (`getattr(pool, "_max_workers", 1)` reads the pool's private state as surely as
    `pool._max_workers`), else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
            and not (isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls"))):
        return node.args[1].value
    return None


def violations() -> list[str]:
    found: list[str] = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        own = _defined(tree)
        rel = path.relative_to(PKG.parent)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in ALLOWED:
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                if node.attr not in own:
                    found.append(f"{rel}:{node.lineno}: reads {ast.unparse(node.value)}.{node.attr}")
            elif (name := _getattr_name(node)) is not None and _private(name) and name not in ALLOWED \
                    and name not in own:
                found.append(f"{rel}:{node.lineno}: reads {ast.unparse(node.args[0])}.{name} by name")
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if _private(alias.name) and not _is_module(path, node, alias.name):
                        found.append(f"{rel}:{node.lineno}: imports {alias.name} from {node.module}")
    return found


def test_no_module_reads_another_modules_private_names() -> None:
    assert violations() == []


def test_the_check_finds_a_private_read(tmp_path: Path) -> None:
    """The checker itself: a read of another module's `_name` is found, the module's own is not."""
    code = "import x\nclass A:\n    def f(self, tl):\n        self._a = 1\n        return tl._dense, self._a\n"
    tree = ast.parse(code)
    own = _defined(tree)
    reads = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and _private(n.attr)
             and not (isinstance(n.value, ast.Name) and n.value.id == "self") and n.attr not in own]
    assert reads == ["_dense"]


def test_the_check_finds_a_private_read_by_name() -> None:
    """getattr with a constant private name on another object counts as a read; on self it does not."""
    tree = ast.parse("def f(pool, obj):\n    return getattr(pool, '_max_workers', 1), getattr(obj, 'size')\n"
                     "class A:\n    def g(self):\n        return getattr(self, '_mine', 0)\n")
    assert [n for node in ast.walk(tree) if (n := _getattr_name(node)) and _private(n)] == ["_max_workers"]
