"""`enable_conditionals=True`: `if`/`else`, `and`, `or`, `not` and `x if c else y` on DataNodes
inside a pipeline definition, as DALI's conditionals give them (DALI 2.4 refuses `x if c else y`
on a DataNode `c`; here it is the `if` statement's short form: conformance/on_purpose.md).

As DALI does, the definition's source is rewritten (Python's `ast`) before it runs; functions it
calls are rewritten too, unless marked `@do_not_convert` or from libraries. An `if` whose
condition is not a DataNode runs as written. An `if` on a DataNode (one scalar per sample, any
type; nonzero is true) traces both branches, then every variable (or attribute such as
`obj.a`) either branch assigns becomes one node: per sample, the value of the branch that sample
takes. Constants (NumPy values, numbers) assigned in a branch become constant nodes; tuples,
lists and dicts of the same shape in both branches merge element by element. A variable
set in only one branch (and not before) is an error where it is used; so is a `return` in only
one branch with nothing after the `if`. Returns that end every path (`if/elif/else` returning in
each branch, early returns `if c: return a` followed by more code, which goes into the `else`)
give one merged return value; a `continue` in a loop's `if` works the same way. Nested `if`s,
`elif` chains and `if`s in helper functions work the same way.

How this differs from DALI, on purpose: DALI splits the batch and runs each branch's operators on
only the samples that take it. Here both branches run on the whole batch and the merge picks each
sample's value; outputs are the same for operators that work sample by sample (all of
torch_dali's). A value made before the `if` reaches a branch's operators with the samples of the
other branch replaced by one of its own (`graph.branch_scope`), so what the condition guards
(`data[i]` under `if i < n`) is never computed on values it excludes; when no sample takes a branch
its operators still run, on the batch as it is (an error they raise there is raised, and so is one
on the right side of `a or b` that no sample needed). The work of both branches is done, and
batch-level operators inside a branch (a batch permutation) see the whole batch.

Not supported (a clear error when the condition is a DataNode): `break` in a branch (nor in
DALI), a `return` in a loop's `if` (nor in DALI) or inside a `with` of a branch, item
assignments with a computed index (`d[k + 1] = ...`; `d["k"]`, `d[k]`, `lst[0]` merge as
variables do) in a branch, `while` on a DataNode.
"""
from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import types as pytypes
import weakref
from typing import Any, Callable

import numpy as np

from .errors import ArgumentError, ArgumentTypeError, GraphError
from .conditionals_rewrite import HELPERS as _GLOBAL
from .conditionals_rewrite import Rewrite
from .graph import branch_scope
from .graph.branch_values import BranchOutputError, SetInOneBranch, Unmerged, check_defined  # noqa: F401 - the rewritten code calls check_defined
from .graph.node import DataNode

_SKIP_MODULES = ("torch_dali", "numpy", "torch", "builtins", "nvidia", "functools", "itertools", "typing",
                 "collections", "math", "operator", "abc", "enum", "scipy", "cv2", "PIL")
_cache: "weakref.WeakKeyDictionary[Any, Callable]" = weakref.WeakKeyDictionary()
_rewritten_code: "weakref.WeakSet[pytypes.CodeType]" = weakref.WeakSet()  # code the rewrite compiled


UNDEFINED: Any = object()  # "not assigned" while a branch is traced


class LogicalOperandError(GraphError, RuntimeError):
    """An operand of `and`/`or`/`not` on DataNodes is not on the CPU: DALI raises a RuntimeError
    when it traces the expression, so this is one too (and a GraphError, as torch_dali's are)."""


# -- runtime helpers the rewritten code calls ------------------------------------------------------

def is_node(v: Any) -> bool:
    return isinstance(v, DataNode)


def predicate(p: DataNode) -> DataNode:
    if p.device != "cpu":
        raise ArgumentError("the condition of an `if` on a DataNode must be on the CPU (a scalar per sample); "
                            "move it with .cpu() or compute it from CPU data")
    return p


def enter_branch(pred: DataNode, side: bool) -> None:
    from .graph.node import current_graph
    branch_scope.enter(current_graph(), pred, side)


def leave_branch() -> None:
    branch_scope.leave()


def _as_node(v: Any, name: str) -> DataNode:
    from . import types
    if isinstance(v, DataNode):
        return v
    if isinstance(v, SetInOneBranch):
        raise v.error()
    try:
        if isinstance(v, types.ScalarConstant):
            return types.Constant(v.value, v.dtype, device="cpu")
        return types.Constant(v, device="cpu")
    except (TypeError, ValueError) as e:
        raise ArgumentTypeError(f"`if` on a DataNode: '{name}' gets a {type(v).__name__} in one branch; branch "
                                f"values must be DataNodes or constants (numbers, NumPy arrays) ({e})") from None


def merge(pred: DataNode, names: list[str], before: list[Any], true: list[Any], false: list[Any],
          unread: tuple[str, ...] = ()) -> list[Any]:
    """The value of each variable after an `if` on `pred`: per sample, its branch's. `unread`:
    the variables nothing reads after the `if` (the rewrite's liveness), where branch values that
    do not merge are no error until used."""
    out = []
    for name, b, t, f in zip(names, before, true, false):
        if t is UNDEFINED and f is UNDEFINED:
            out.append(b)
        elif t is UNDEFINED or f is UNDEFINED:
            item = "." in name or "[" in name
            missing = SetInOneBranch(name, "if" if t is UNDEFINED else "else",
                                     "return" if name == "<return value>" else "item" if item else "variable")
            if item:  # an attribute or item: DALI refuses it at the `if`, used afterwards or not
                raise missing.error()
            out.append(missing)
        elif t is f:
            out.append(t)
        elif isinstance(t, SetInOneBranch) or isinstance(f, SetInOneBranch):
            out.append(t if isinstance(t, SetInOneBranch) else f)
        elif name in unread:
            try:
                out.append(_select(pred, name, t, f))
            except (ArgumentError, ArgumentTypeError) as e:
                out.append(Unmerged(name, e))
        else:
            out.append(_select(pred, name, t, f))
    return out


def _select(pred: DataNode, name: str, t: Any, f: Any) -> Any:
    """One variable's merged value. Tuples (namedtuples too), lists and dicts of the same shape in
    both branches (`return node, 3`) merge element by element, as DALI's do; the rest becomes
    DataNodes."""
    from .ops._registry import call_op, lookup
    from .ops._schema import adopted
    if t is f:
        return t
    nested = (tuple, list, dict)
    if isinstance(t, nested) or isinstance(f, nested) or t is None or f is None:  # None: an empty nest
        if t is None or f is None or type(t) is not type(f) or len(t) != len(f) or \
                (isinstance(t, dict) and set(t) != set(f)):
            raise ArgumentError(f"`if` on a DataNode: '{name}' gets values of different structure in the two "
                                f"branches ({_structure(t)} and {_structure(f)}); both branches must give "
                                "the same nesting of tuples, lists and dicts")
        if isinstance(t, dict):
            return {k: _select(pred, f"{name}[{k!r}]", t[k], f[k]) for k in t}
        items = [_select(pred, f"{name}[{i}]", a, b) for i, (a, b) in enumerate(zip(t, f))]
        return type(t)(*items) if hasattr(t, "_fields") else type(t)(items)  # a namedtuple takes fields
    tn, fn_ = adopted(_as_node(t, name)), adopted(_as_node(f, name))
    pred = adopted(pred)
    if tn.device != fn_.device:
        tn, fn_ = tn.gpu(), fn_.gpu()
    return call_op(lookup("_conditional.select"), (tn, fn_, pred), {})


def _structure(v: Any) -> str:
    if v is None:
        return "None"
    if isinstance(v, (tuple, list, dict)):
        return f"a {type(v).__name__} of {len(v)}"
    return "a DataNode" if isinstance(v, DataNode) else f"a {type(v).__name__}"


def get(getter: Callable[[], Any]) -> Any:
    """The current value of a variable (or item, `d["k"]`), or UNDEFINED if it has none yet."""
    try:
        return getter()
    except (NameError, AttributeError, KeyError, IndexError):
        return UNDEFINED


def not_(v: Any) -> Any:
    return expression_not(_logical_operand(v, "not", "")) if isinstance(v, DataNode) else not v


def _logical_operand(v: DataNode, expr: str, side: str) -> DataNode:
    """`v` checked as an operand of `and`/`or`/`not` on DataNodes: on the CPU here, a scalar
    per sample (and bool, for `and`/`or`) when the pipeline runs."""
    from .ops._registry import call_op, lookup
    if v.device != "cpu":
        what = f"the {side} operand of `{expr}`" if side else f"the operand of `{expr}`"
        raise LogicalOperandError(f"{what} on DataNodes must be on the CPU (a scalar per sample), got a {v.device} "
                         "DataNode; compute it from CPU data")
    from .ops._schema import adopted
    return call_op(lookup("_conditional.validate_logical"), (adopted(v),), {"expression_name": expr,
                                                                  "expression_side": side})


def expression_not(v: DataNode) -> DataNode:
    from .ops.arithmetic import expression
    return expression("eq", v, False)


def and_(*thunks: Callable[[], Any]) -> Any:
    """`a and b and ...`: Python's for Python values; per sample for DataNodes (BOOL)."""
    value = thunks[0]()
    for nxt in thunks[1:]:
        if isinstance(value, DataNode):
            other = nxt()
            value = _logic("bitand", value, other)
        elif not value:
            return value
        else:
            value = nxt()
    return value


def or_(*thunks: Callable[[], Any]) -> Any:
    value = thunks[0]()
    for nxt in thunks[1:]:
        if isinstance(value, DataNode):
            value = _logic("bitor", value, nxt())
        elif value:
            return value
        else:
            value = nxt()
    return value


def _logic(op: str, a: DataNode, b: Any) -> DataNode:
    from .ops.arithmetic import expression
    expr = "and" if op == "bitand" else "or"
    if not isinstance(b, (DataNode, bool, np.bool_)):
        # DALI makes a constant of it and checks it as any operand: `node and 1` is refused (int32)
        from . import types
        b = types.Constant(b, device="cpu")
    b = _logical_operand(b, expr, "right") if isinstance(b, DataNode) else bool(b)
    return expression(op, _logical_operand(a, expr, "left"), b)


def ifexp(cond: Any, when_true: Callable[[], Any], when_false: Callable[[], Any]) -> Any:
    if not isinstance(cond, DataNode):
        return when_true() if cond else when_false()
    return merge(predicate(cond), ["<expression>"], [UNDEFINED], [when_true()], [when_false()])[0]


def converted(f: Any) -> Any:
    """`f` as called from rewritten code: user functions rewritten too, the rest as they are."""
    if isinstance(f, pytypes.MethodType) and isinstance(f.__func__, pytypes.FunctionType):
        g = converted(f.__func__)
        return f if g is f.__func__ else pytypes.MethodType(g, f.__self__)
    if not isinstance(f, pytypes.FunctionType):
        return f
    mod = getattr(f, "__module__", "") or ""
    if mod.split(".")[0] in _SKIP_MODULES or getattr(f, "_torch_dali_do_not_convert", False):
        return f
    return convert(f, strict=False)


def is_autograph_artifact(f: Any) -> bool:
    """Whether the rewrite has had its hands on `f` (DALI's name): a function it converted, one
    defined inside converted code (a nested `def` or lambda, made when that code ran), or one
    marked `@do_not_convert` (as in DALI, where that marker is itself such an artifact)."""
    if isinstance(f, pytypes.MethodType):
        f = f.__func__
    if getattr(f, "_torch_dali_converted", False) or getattr(f, "_torch_dali_do_not_convert", False):
        return True
    return isinstance(f, pytypes.FunctionType) and f.__code__ in _rewritten_code


def _remember(code: pytypes.CodeType) -> None:
    _rewritten_code.add(code)
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            _remember(c)


class BranchReturnError(GraphError, RuntimeError):
    """A `return` in an `if` on a DataNode that not every path takes: DALI raises a RuntimeError
    while tracing, so this is one too (and a GraphError, as torch_dali's are)."""


class BranchBreakError(GraphError, TypeError):
    """A `break` in an `if` on a DataNode: DALI asks the DataNode for a truth value there (its
    TypeError), so this is one too."""


def unsupported(what: str) -> GraphError:
    if what.startswith("only the"):
        return BranchReturnError(f"`if` on a DataNode: {what}")
    cls = (BranchReturnError if "`return`" in what else BranchBreakError if "`break`" in what
           else BranchOutputError if "`del " in what else GraphError)
    return cls(f"`if` on a DataNode (enable_conditionals): {what} is not supported")


# -- turning a function into its rewritten form ------------------------------------------------------

def _source_node(func: Any) -> tuple[ast.AST, int]:
    # the code object's own source and name: `inspect` follows a `functools.wraps` wrapper's
    # `__wrapped__` to the function it wraps, and the wrapper carries that function's __name__
    lines, start = inspect.getsourcelines(func.__code__)
    src = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(src)
    except SyntaxError:
        tree = ast.parse("(" + src.strip().rstrip(",") + "\n)")  # a lambda in the middle of a call
    name = func.__code__.co_name
    want = list(func.__code__.co_varnames[:func.__code__.co_argcount])
    lambdas = []
    for node in ast.walk(tree):
        if name == "<lambda>" and isinstance(node, ast.Lambda) and [a.arg for a in node.args.args] == want:
            lambdas.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node, start
    # Several lambdas on these lines take the same arguments: the one whose body compiles to what
    # `func` runs (its names and constants), not simply the first
    same = [n for n in lambdas if _body_key(n) == _code_key(func.__code__)]
    if same or len(lambdas) == 1:
        return (same or lambdas)[0], start
    if lambdas:  # none is surely this one: left as it is (DALI does not convert such lambdas either)
        raise ValueError(f"several lambdas on line {start} take the same arguments; none is known to be this one")
    raise ValueError(f"cannot find the source of {name}")


_SCOPE_OPS = {"RESUME", "NOP", "CACHE", "COPY_FREE_VARS", "MAKE_CELL", "PUSH_NULL"}


def _code_key(code: Any) -> tuple[Any, ...]:
    """What tells two lambdas apart whatever scope they were compiled in: their instructions, with
    every load of a name (local, closure, global) the same instruction, and what sets up a scope
    left out."""
    import dis
    key = []
    for ins in dis.get_instructions(code):
        if ins.opname in _SCOPE_OPS:
            continue
        if ins.opname.startswith("LOAD_") and ins.opname not in ("LOAD_CONST", "LOAD_ATTR", "LOAD_METHOD"):
            key.append(("LOAD", str(ins.argval)))
        elif ins.opname == "LOAD_METHOD":  # CPython 3.11 reads `mod.f(...)` of an imported `mod` with
            key.append(("LOAD_ATTR", repr(ins.argval)))  # LOAD_ATTR, of any other name with LOAD_METHOD
        elif isinstance(ins.argval, pytypes.CodeType):
            key.append((ins.opname, _code_key(ins.argval)))
        else:
            key.append((ins.opname, repr(ins.argval)))
    return tuple(key)


def _body_key(node: ast.Lambda) -> tuple[Any, ...] | None:
    try:
        expr = ast.fix_missing_locations(ast.Expression(body=ast.Lambda(args=node.args, body=node.body)))
        code = compile(expr, "<lambda>", "eval")
    except (SyntaxError, ValueError, TypeError):
        return None
    inner = [c for c in code.co_consts if isinstance(c, pytypes.CodeType)]
    return _code_key(inner[0]) if inner else None


def convert(func: Callable, strict: bool = True) -> Callable:
    """`func` with `if`/`and`/`or`/`not` rewritten for DataNodes (see the module's doc). With
    `strict=False` a function whose source cannot be read is returned as it is."""
    if getattr(func, "_torch_dali_converted", False):
        return func
    target = func
    try:
        return _cache[target]
    except (KeyError, TypeError):
        pass
    try:
        node, start = _source_node(func)
    except (OSError, TypeError, ValueError, SyntaxError) as e:
        if strict:
            raise GraphError(f"enable_conditionals: cannot read the source of {getattr(func, '__name__', func)!r} "
                             f"to rewrite its `if` statements ({e})") from None
        return func
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        node.decorator_list = []
    node = Rewrite().visit(node)
    freevars = list(func.__code__.co_freevars)
    inner: ast.stmt = node if not isinstance(node, ast.Lambda) else ast.Assign(
        targets=[ast.Name("__tdc_lambda", ast.Store())], value=node)
    result = node.name if not isinstance(node, ast.Lambda) else "__tdc_lambda"
    factory = ast.FunctionDef(
        name="__tdc_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(v) for v in freevars], kwonlyargs=[], kw_defaults=[],
                           defaults=[]),
        body=[inner, ast.Return(ast.Name(result, ast.Load()))], decorator_list=[], returns=None)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    ast.increment_lineno(module, start - 1)
    code = compile(module, func.__code__.co_filename, "exec")
    _remember(code)
    glob = func.__globals__
    glob.setdefault(_GLOBAL, sys.modules[__name__])
    ns: dict[str, Any] = {}
    exec(code, glob, ns)  # noqa: S102 - the user's own function, rewritten
    cells = dict(zip(freevars, func.__closure__ or ()))
    made = ns["__tdc_factory"](*[_cell_value(cells[v]) for v in freevars])
    closure = tuple(cells[v] for v in made.__code__.co_freevars) if all(
        v in cells for v in made.__code__.co_freevars) else made.__closure__
    new = pytypes.FunctionType(made.__code__, glob, func.__name__, func.__defaults__, closure)
    new.__kwdefaults__ = func.__kwdefaults__
    new.__dict__.update(func.__dict__)
    new.__qualname__, new.__doc__, new.__module__ = func.__qualname__, func.__doc__, func.__module__
    new._torch_dali_converted = True  # type: ignore[attr-defined]
    try:
        _cache[target] = new
    except TypeError:
        pass
    return new


def _cell_value(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell (a name defined later in the enclosing function)
        return None
