"""What an external source's `source` and `cycle` may be: the argument checks, a source's name
for messages, and the iterators DALI starts when the op is defined (`start_iterable`)."""
from __future__ import annotations

import inspect
import threading
from typing import Any, Iterator


# a generator object runs once; cycling needs something that can start over
GENERATOR_CYCLE = ("`source` is a generator object, which cannot be restarted to cycle; pass the generator "
                   "function itself as `source`")

CYCLES = {None: "no", False: "no", "no": "no", True: "quiet", "quiet": "quiet", "raise": "raise"}


def check_cycle(v: Any) -> str | None:
    ok = any(v is k or (isinstance(k, str) and v == k) for k in CYCLES)
    return None if ok else "one of None, False, True, 'no', 'quiet', 'raise'"


def check_source(v: Any) -> str | None:
    ok = v is None or callable(v) or hasattr(v, "__iter__")
    return None if ok else "an iterable, a generator function or a callable"


def describe_source(src: Any) -> str:
    """A source by name, for messages (whatever the length of its qualified name)."""
    if inspect.isgenerator(src):
        return f"<generator object {src.__qualname__}>"
    if inspect.isfunction(src) or inspect.ismethod(src):
        return f"<function {src.__qualname__}>"
    return f"<{type(src).__qualname__} object>"


# iterators taken at definition time, as DALI takes them (`fn.external_source(source=iterable)`
# calls `iter(iterable)` there, before build): id(source) -> [(source, iterator), ...]; the op's
# setup at build uses the latest one, later builds and restarts call `iter()` anew
_STARTED: dict[int, list[tuple[Any, Iterator[Any]]]] = {}
_STARTED_LOCK = threading.Lock()


def start_iterable(src: Any) -> None:
    """At definition: `iter(src)` now when `src` is a plain iterable (not a callable, a generator
    function or a generator), so that its `__iter__` runs where DALI runs it."""
    if src is None or callable(src) or inspect.isgenerator(src) or not hasattr(src, "__iter__"):
        return
    it = iter(src)
    with _STARTED_LOCK:
        _STARTED.setdefault(id(src), []).append((src, it))


def take_started(src: Any) -> Iterator[Any] | None:
    with _STARTED_LOCK:
        queue = _STARTED.get(id(src))
        while queue:
            owner, it = queue.pop()
            if not queue:
                del _STARTED[id(src)]
            if owner is src:
                return it
        return None
