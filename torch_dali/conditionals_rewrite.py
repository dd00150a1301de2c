"""The source rewrite behind `enable_conditionals` (see `torch_dali.conditionals`): `if`
statements, `and`/`or`/`not`, conditional expressions and calls become calls of the runtime
helpers in `torch_dali.conditionals`, reached through one global name of the rewritten function.
An `if` keeps its plain Python form for conditions that are not DataNodes."""
from __future__ import annotations

import ast
import copy
from typing import Any

#: the global name under which rewritten code reaches torch_dali.conditionals
HELPERS = "__torch_dali_conditionals__"


class _Stores(ast.NodeVisitor):
    """Names and attribute targets a block assigns (not inside nested functions or classes)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.bad: list[str] = []
        self.deleted: list[str] = []  # names a `del` statement removes

    def _add(self, s: str) -> None:
        if s not in self.names:
            self.names.append(s)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self._add(node.id)
        elif isinstance(node.ctx, ast.Del):
            self.deleted.append(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Store):
            self._add(ast.unparse(node))
        else:
            self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Store):
            # `d["k"] = ...`, `d[k] = ...`, `lst[0] = ...`: merged as a variable; other subscripts not
            (self._add if _plain_item(node) else self.bad.append)(ast.unparse(node))
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._add(node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        pass

    def visit_ListComp(self, node: ast.AST) -> None:
        pass

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]


def _plain_item(node: ast.expr) -> bool:
    """A name, attribute or item (`d["k"]`, `d[k]`, `o.a[0]`) that reads the same before and after
    a branch, so that the rewrite can read, restore and merge it like a variable."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _plain_item(node.value)
    return isinstance(node, ast.Subscript) and isinstance(node.slice, (ast.Constant, ast.Name)) \
        and _plain_item(node.value)


def _expr(src: str) -> ast.expr:
    e = ast.parse(src, mode="eval").body
    for sub in ast.walk(e):  # parsed at line 1; `_place` gives it the line of the code it stands for
        for a in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(sub, a):
                delattr(sub, a)
    return e


def _place(tree: ast.AST, at: ast.AST) -> ast.AST:
    """Puts the nodes the rewrite made (those without a location) on the first line of `at`, the
    code they stand for. An op they add (the per-sample select after an `if`) is then reported
    at `if pred:`, as DALI reports its merge; `fix_missing_locations` would copy the whole `if`'s
    span, and CPython attributes a call of `helpers.merge` to the span's last line."""
    for sub in ast.walk(tree):
        if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
            sub.lineno, sub.end_lineno = at.lineno, at.lineno
            sub.col_offset, sub.end_col_offset = at.col_offset, at.col_offset
    return tree


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=ast.Name(HELPERS, ast.Load()), attr=name, ctx=ast.Load()),
                    args=list(args), keywords=[])


def _thunk(e: ast.expr) -> ast.Lambda:
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                      body=e)


def _jumps(block: list[ast.stmt]) -> list[ast.stmt]:
    """return/break/continue statements of a block, outside nested functions and loops' own."""
    found: list[ast.stmt] = []

    def walk(stmts: list[ast.stmt], in_loop: bool) -> None:
        for s in stmts:
            if isinstance(s, ast.Return) or (isinstance(s, (ast.Break, ast.Continue)) and not in_loop):
                found.append(s)
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            else:
                loop = isinstance(s, (ast.For, ast.While, ast.AsyncFor))
                for field in ("body", "orelse", "finalbody", "handlers"):
                    sub = getattr(s, field, None)
                    if isinstance(sub, list):
                        inner = [h for x in sub for h in (x.body if isinstance(x, ast.ExceptHandler) else [x])]
                        walk(inner, in_loop or loop)
    walk(block, False)
    return found


_BY_NAME = frozenset({"locals", "vars", "eval", "exec", "dir"})  # calls that read variables by name
_LIVE = "_tdc_live_after"  # an `if`'s annotation: the names that may be read after it


def _reads(nodes: list[Any]) -> set[str]:
    """The names `nodes` read anywhere in them, nested scopes included (`x += 1` reads x)."""
    out: set[str] = set()
    for n in nodes:
        for sub in ast.walk(n):
            if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Store):
                out.add(sub.id)
            elif isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name):
                out.add(sub.target.id)
    return out


def _read_anytime(func: ast.AST) -> set[str] | None:
    """Names that may be read out of statement order: in a nested function, lambda, class or
    generator (run later), or declared global / nonlocal. None when the function reads its
    variables by name (locals(), eval...): then any name may be read."""
    live: set[str] = set()
    for sub in ast.walk(func):
        if sub is func:
            continue
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.GeneratorExp)):
            live |= _reads([sub])
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            live.update(sub.names)
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in _BY_NAME:
            return None
    return live


def _mark_live(block: list[ast.stmt], after: set[str]) -> None:
    """Annotates each `if` of `block` (nested blocks too, not nested functions) with the names
    read after it: the rest of its blocks, the enclosing loops' whole bodies (a later iteration)
    and try statements' handlers. DALI merges only the variables read after an `if` (autograph's
    liveness); this over-approximates that set, so a variable it leaves out is never read."""
    tails: list[set[str]] = [set()] * (len(block) + 1)
    for k in range(len(block) - 1, -1, -1):
        tails[k] = tails[k + 1] | _reads([block[k]])
    for k, s in enumerate(block):
        rest = after | tails[k + 1]
        if isinstance(s, ast.If):
            setattr(s, _LIVE, rest)
            _mark_live(s.body, rest)
            _mark_live(s.orelse, rest)
        elif isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            _mark_live(s.body, rest | _reads([s]))
            _mark_live(s.orelse, rest)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            _mark_live(s.body, rest)
        elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            tail = rest | _reads(s.finalbody)  # type: ignore[attr-defined]
            _mark_live(s.body, tail | _reads(s.handlers) | _reads(s.orelse))  # type: ignore[attr-defined]
            for h in s.handlers:  # type: ignore[attr-defined]
                _mark_live(h.body, tail)
            _mark_live(s.orelse, tail)  # type: ignore[attr-defined]
            _mark_live(s.finalbody, rest)  # type: ignore[attr-defined]
        elif isinstance(s, ast.Match):
            for case in s.cases:
                _mark_live(case.body, rest)


def _always_ends(block: list[ast.stmt], kind: type = ast.Return) -> bool:
    """Whether every path through `block` ends in a `kind` statement (a `return` or a `continue`)
    that is its last statement (or the last of an if/else chain's branches)."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, kind):
        return True
    return isinstance(last, ast.If) and _always_ends(last.body, kind) and _always_ends(last.orelse, kind)


def _tails(block: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that end every path of a block `_always_ends` holds for."""
    last = block[-1]
    return [last] if not isinstance(last, ast.If) else _tails(last.body) + _tails(last.orelse)


def _replace_tails(block: list[ast.stmt], make: Any) -> None:
    """Each tail statement of `block` (see `_tails`) becomes `make(it)`."""
    last = block[-1]
    if isinstance(last, ast.If):
        _replace_tails(last.body, make)
        _replace_tails(last.orelse, make)
    else:
        block[-1] = ast.copy_location(make(last), last)


def _fold(block: list[ast.stmt], kind: type = ast.Return) -> list[ast.stmt]:
    """`if c: ... return a` (or `continue`) followed by more statements becomes `if c: ... return a
    else: <more>` (the rest of the block goes into each branch that can fall through), so that
    the jumps of an `if` end its branches, as DALI's conversion (autograph's) arranges early
    returns and continues. Only `if` branches are folded into (not nested loops)."""
    out: list[ast.stmt] = []
    for k, s in enumerate(block):
        if isinstance(s, ast.If):
            rest = block[k + 1:]
            if rest and any(isinstance(j, kind) for j in _jumps(s.body) + _jumps(s.orelse)):
                body_falls, else_falls = not _always_ends(s.body, kind), not _always_ends(s.orelse, kind)
                body = s.body + (copy.deepcopy(rest) if body_falls and else_falls else rest if body_falls else [])
                orelse = s.orelse + (rest if else_falls else [])
                out.append(ast.copy_location(ast.If(test=s.test, body=_fold(body, kind),
                                                    orelse=_fold(orelse, kind)), s))
                return out
            s.body, s.orelse = _fold(s.body, kind), _fold(s.orelse, kind)
        out.append(s)
    return out


def _fold_continues(body: list[ast.stmt]) -> list[ast.stmt]:
    """A loop body with its `continue`s in `if` branches folded (see `_fold`): they then end the
    iteration, so the ones that end a branch are dropped (`pass`)."""
    body = _fold(body, ast.Continue)

    def drop(block: list[ast.stmt]) -> None:
        last = block[-1] if block else None
        if isinstance(last, ast.If):
            for branch in (last.body, last.orelse):
                if branch and isinstance(branch[-1], ast.Continue):
                    branch[-1] = ast.copy_location(ast.Pass(), branch[-1])
                drop(branch)
    drop(body)
    return body


class Rewrite(ast.NodeTransformer):
    """Rewrites one function's body (a fresh instance per function)."""

    def __init__(self) -> None:
        self.n = 0

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        return _place(_call("and_" if isinstance(node.op, ast.And) else "or_",
                             *[_thunk(v) for v in node.values]), node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _place(_call("not_", node.operand), node)
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        return _place(_call("ifexp", node.test, _thunk(node.body), _thunk(node.orelse)), node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        node.func = ast.copy_location(_call("converted", node.func), node.func)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.body = _fold(node.body)
        anytime = _read_anytime(node)
        if anytime is not None:
            _mark_live(node.body, anytime)
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_For(self, node: ast.For) -> ast.For:
        node.body = _fold_continues(node.body)
        self.generic_visit(node)
        return node

    visit_While = visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_If(self, node: ast.If) -> list[ast.stmt]:
        tails = _tails(node.body) + _tails(node.orelse) if (
            _always_ends(node.body) and _always_ends(node.orelse)) else []
        if tails and len(tails) == len(_jumps(node.body) + _jumps(node.orelse)):
            # every path ends in a return: each becomes an assignment of one variable, merged as any
            # other, and returned after the `if`
            k = self.n = self.n + 1
            ret = f"__tdc_ret{k}"

            def assign(r: ast.Return) -> ast.stmt:
                return ast.Assign(targets=[ast.Name(ret, ast.Store())], value=r.value or ast.Constant(None))
            _replace_tails(node.body, assign)
            _replace_tails(node.orelse, assign)
            back = ast.Return(value=_call("check_defined", ast.Name(ret, ast.Load())))
            return self.visit_If(node) + [_place(back, node)]
        self.generic_visit(node)
        k = self.n = self.n + 1
        p, snap = f"__tdc_p{k}", f"__tdc_s{k}"
        body, orelse = node.body, node.orelse or [ast.Pass()]
        problem = self._problem(body, orelse)
        stores = _Stores()
        for s in body + orelse:
            stores.visit(s)
        if stores.bad and problem is None:
            problem = f"assignments to {', '.join(stores.bad)} (subscripts) in a branch"
        if problem is None:
            problem = self._deleted_outer(body) or self._deleted_outer(orelse)
        names = [n for n in stores.names if not n.startswith("__tdc_") or n.startswith("__tdc_ret")]
        def getters() -> ast.List:
            return ast.List(elts=[_call("get", _thunk(_expr(n))) for n in names], ctx=ast.Load())

        def restore() -> list[ast.stmt]:
            return [ast.Assign(targets=[self._target(n)], value=_expr(f"{snap}[{i}]")) for i, n in enumerate(names)]

        node_path: list[ast.stmt]
        if problem is not None:
            node_path = [ast.Raise(exc=_call("unsupported", ast.Constant(problem)))]
        else:
            labels = ast.List(elts=[ast.Constant("<return value>" if n.startswith("__tdc_ret") else n)
                                    for n in names], ctx=ast.Load())
            live = getattr(node, _LIVE, None)
            unread = ast.Tuple(elts=[ast.Constant(n) for n in names if live is not None and n.isidentifier()
                                     and not n.startswith("__tdc_") and n not in live], ctx=ast.Load())
            merged = ast.Assign(
                targets=[ast.Tuple(elts=[self._target(n) for n in names], ctx=ast.Store())] if names else
                [ast.Name(f"__tdc_m{k}", ast.Store())],
                value=_call("merge", ast.Name(p, ast.Load()), labels, ast.Name(snap, ast.Load()),
                            ast.Name(f"__tdc_t{k}", ast.Load()), getters(), unread))
            def scoped(stmts: list[ast.stmt], side: bool) -> ast.stmt:
                # the branch's ops read values from outside it through branch inputs (graph.branch_scope)
                return ast.Try(body=[ast.Expr(_call("enter_branch", ast.Name(p, ast.Load()), ast.Constant(side))),
                                     *copy.deepcopy(stmts)],
                               handlers=[], orelse=[], finalbody=[ast.Expr(_call("leave_branch"))])
            node_path = [
                ast.Assign(targets=[ast.Name(p, ast.Store())], value=_call("predicate", ast.Name(p, ast.Load()))),
                ast.Assign(targets=[ast.Name(snap, ast.Store())], value=getters()),
                scoped(body, True),
                ast.Assign(targets=[ast.Name(f"__tdc_t{k}", ast.Store())], value=getters()),
                *restore(),
                scoped(orelse, False),
                merged,
            ]
        plain = ast.If(test=ast.Name(p, ast.Load()), body=node.body, orelse=node.orelse)
        out = [ast.Assign(targets=[ast.Name(p, ast.Store())], value=node.test),
               ast.If(test=_call("is_node", ast.Name(p, ast.Load())), body=node_path, orelse=[plain])]
        return [_place(s, node) for s in out]

    @staticmethod
    def _target(n: str) -> ast.expr:
        e = _expr(n)
        for sub in ast.walk(e):
            if hasattr(sub, "ctx"):
                sub.ctx = ast.Load()
        e.ctx = ast.Store()  # type: ignore[attr-defined]
        return e

    @staticmethod
    def _deleted_outer(branch: list[ast.stmt]) -> str | None:
        """A `del` in a branch of a variable the branch does not assign (one from before the
        `if`): DALI refuses it (the variable would exist on one path only; measured with DALI 2.4,
        whether or not it is used afterwards). Both branches are traced one after the other, so
        here the other branch would not see it either."""
        st = _Stores()
        for s in branch:
            st.visit(s)
        outer = [n for n in st.deleted if n not in st.names]
        return f"`del {outer[0]}` of a variable from before the `if` in a branch" if outer else None

    def _problem(self, body: list[ast.stmt], orelse: list[ast.stmt]) -> str | None:
        jb, jo = _jumps(body), _jumps(orelse)
        if not jb and not jo:  # (returns that end every path were turned into an assignment first)
            return None
        if any(isinstance(j, (ast.Break, ast.Continue)) for j in jb + jo):
            return "`break` or `continue` in a branch"
        if jb and not jo:
            return "only the `if` branch returns; the `else` branch must also have a return statement"
        if jo and not jb:
            return "only the `else` branch returns; the `if` branch must also have a return statement"
        return "`return` other than as the last statement of both branches"
