"""The branches of an `if` on a DataNode being traced (enable_conditionals), and what their ops read.

Both branches of such an `if` are traced over the whole batch (see conditionals.py), so an op in a
branch also runs on the samples that take the other one. A value made before the `if` and read in a
branch therefore reaches that branch's ops through `_conditional.branch_input`: the samples that take
the branch as they are, each other one replaced by one that takes it. The branch's ops then see
only values meant for them (an index the condition guards, `data[i]` under `if i < n`, is never out of
range there, as in DALI, which runs a branch on its own samples) and do the same work as before.
Values made inside the branch are its own and pass as they are."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

_local = threading.local()


@dataclass
class Scope:
    graph: Any
    predicate: Any  # the DataNode the `if` tests
    side: bool  # True: the `if` body; False: the `else`
    local: set[int] = field(default_factory=set)  # ids of DataNodes made inside
    routed: dict[int, Any] = field(default_factory=dict)  # id of an outside DataNode -> its branch input


def _stack() -> list[Scope]:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def enter(graph: Any, predicate: Any, side: bool) -> None:
    _stack().append(Scope(graph, predicate, bool(side)))


def leave() -> None:
    s = _stack()
    if s:
        s.pop()


def active(graph: Any) -> list[Scope]:
    """The scopes open in `graph`, outermost first (a scope left open by a failed trace of another
    graph is not one of them)."""
    return [sc for sc in _stack() if sc.graph is graph]


def made(graph: Any, nodes: list[Any], upto: int | None = None) -> None:
    """Marks `nodes` as made inside every open scope of `graph` (or the first `upto` of them). A
    branch input being made is marked by `route`, for the scopes it belongs to."""
    if upto is None and getattr(_local, "making", False):
        return
    scopes = active(graph)
    for sc in scopes if upto is None else scopes[:upto]:
        sc.local.update(id(n) for n in nodes)


def route(graph: Any, node: Any, make: Callable[[Any, Any, bool], Any]) -> Any:
    """`node` as the innermost open scope's ops must read it: through each scope it was made outside
    of, outermost first, `make(node, predicate, side)` (cached: one branch input per value and scope)."""
    scopes = active(graph)
    if getattr(_local, "making", False):
        return node
    for k, sc in enumerate(scopes):
        if id(node) in sc.local:
            continue
        got = sc.routed.get(id(node))
        if got is None:
            _local.making = True
            try:
                got = make(node, sc.predicate, sc.side)
            finally:
                _local.making = False
            sc.routed[id(node)] = got
            made(graph, [got], upto=k + 1)
        node = got
    return node
