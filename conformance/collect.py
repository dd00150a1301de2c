"""A collector for DALI's test modules with nose2's rules (nose2 itself is not needed).

What nose2 (0.16, DALI's unittest.cfg) collects from a module, in its order (`dir()` order):

* functions whose name starts with `test`: plain ones taking no arguments; generator functions
  (each yield is one case: `(func, args)` with a tuple `args` is unpacked, else `(func, *args)`);
  functions with a `paramList` (`nose2.tools.params` / `cartesian_params`; a non-tuple entry is
  one argument). `setup`/`setUp`/`teardown`/`tearDown` attributes run around each case;
* `unittest.TestCase` subclasses and plain classes whose name starts with `test`
  (case-insensitive): methods starting with `test`, sorted, with the same generator / paramList
  expansion; a fresh instance per case, `setUp`/`tearDown` around it; the class's `setUpClass`
  runs once, before its first case (when it raises, each of the class's cases fails with that
  error), and `tearDownClass` after its last;
* objects with a false `__test__` are left out (nose2's dundertest plugin).

Case ids follow nose2: `module.func`, `module.func:N` (N from 1), `module.Class.method:N`.
A generator that raises while yielding gives the cases it yielded plus one failing case
`<id>:collect`.
"""
from __future__ import annotations

import inspect
import types
import unittest
from dataclasses import dataclass
from typing import Any, Callable, Iterator

PREFIX = "test"


@dataclass
class Case:
    id: str
    summary: str  # the arguments, as nose2 prints them (first 79 characters)
    run: Callable[[], Any]  # runs the case with its setUp/tearDown; raises on failure
    attrs: frozenset[str] = frozenset()


def _summary(args: tuple) -> str:
    try:
        return ", ".join(repr(a) for a in args)[:79]
    except Exception:  # a repr that raises must not stop collection
        return "<args>"


def _attrs(obj: Any) -> frozenset[str]:
    """nose_utils.attr sets `name = True` on the function; the names are DALI's tags."""
    known = ("slow", "pytorch", "paddle", "jax", "mxnet", "cupy", "numba", "scipy", "sanitizer_skip",
             "multi_gpu", "gds", "nvjpeg")
    return frozenset(a for a in known if getattr(obj, a, False) is True)


def _unpack(item: Any) -> tuple[Callable, tuple]:
    """nose2's generator unpacking, quirk included: `(f, t)` with a tuple t calls f(*t)."""
    try:
        func, args = item
        if not isinstance(args, tuple):
            args = (args,)
        return func, args
    except (ValueError, TypeError):
        return item[0], tuple(item[1:])


def _params(param_list: Any) -> Iterator[tuple]:
    for entry in param_list:
        yield entry if isinstance(entry, tuple) else (entry,)


def _wrap(call: Callable[[], Any], setup: Callable | None, teardown: Callable | None) -> Callable[[], Any]:
    def run() -> Any:
        if setup is not None:
            setup()
        try:
            return call()
        finally:
            if teardown is not None:
                teardown()
    return run


def _fixture(obj: Any, *names: str) -> Callable | None:
    for n in names:
        f = getattr(obj, n, None)
        if callable(f):
            return f
    return None


def _expand(base_id: str, target: Callable, prefix_args: tuple, attrs: frozenset[str],
            setup: Callable | None, teardown: Callable | None) -> Iterator[Case]:
    """One test callable (function or bound-method-to-be) -> its cases."""
    param_list = getattr(target, "paramList", None)
    if param_list is not None:
        for k, args in enumerate(_params(param_list)):
            yield Case(f"{base_id}:{k + 1}", _summary(args),
                       _wrap(lambda a=args: target(*prefix_args, *a), setup, teardown), attrs)
        return
    if inspect.isgeneratorfunction(target):
        k = 0
        try:
            for item in target(*prefix_args):
                func, args = _unpack(item)
                yield Case(f"{base_id}:{k + 1}", _summary(args),
                           _wrap(lambda f=func, a=args: f(*a), setup, teardown), attrs)
                k += 1
        except Exception as e:  # the generator itself failed: one failing case says so
            err = e
            yield Case(f"{base_id}:collect", "", lambda: _reraise(err), attrs)
        return
    yield Case(base_id, "", _wrap(lambda: target(*prefix_args), setup, teardown), attrs)


def _reraise(e: BaseException) -> None:
    raise e


def _enabled(obj: Any) -> bool:
    return bool(getattr(obj, "__test__", True))


class _ClassFixture:
    """A class's `setUpClass`, run once on first use; its error, if it raised, is raised again for each case."""

    def __init__(self, cls: type) -> None:
        self.set_up = _fixture(cls, "setUpClass", "setup_class")
        self.tear_down = _fixture(cls, "tearDownClass", "teardown_class")
        self.ran = False
        self.error: BaseException | None = None

    def __call__(self) -> None:
        if not self.ran:
            self.ran = True
            if self.set_up is not None:
                try:
                    self.set_up()
                except Exception as e:  # each case of the class reports it
                    self.error = e
        if self.error is not None:
            raise self.error

    def finish(self) -> None:
        if self.ran and self.error is None and self.tear_down is not None:
            self.tear_down()


def _class_cases(modname: str, cls: type) -> Iterator[Case]:
    fixture = _ClassFixture(cls)
    yield from _method_cases(modname, cls, fixture)
    fixture.finish()


def _method_cases(modname: str, cls: type, class_setup: Callable[[], None]) -> Iterator[Case]:
    names = sorted(n for n in dir(cls) if n.startswith(PREFIX) and callable(getattr(cls, n, None)))
    is_tc = issubclass(cls, unittest.TestCase)
    for name in names:
        method = getattr(cls, name)
        if not _enabled(method):
            continue
        base = f"{modname}.{cls.__name__}.{name}"
        attrs = _attrs(method) | _attrs(cls)
        fixtures: dict[str, Any] = {}

        def make(name: str = name, is_tc: bool = is_tc) -> Any:
            return cls(name) if is_tc else cls()

        def setup(fixtures: dict = fixtures, make: Callable = make) -> None:
            class_setup()
            inst = fixtures["inst"] = make()
            f = _fixture(inst, "setUp")
            if f:
                f()

        def teardown(fixtures: dict = fixtures) -> None:
            f = _fixture(fixtures.pop("inst", None), "tearDown")
            if f:
                f()

        raw = method
        if inspect.isgeneratorfunction(raw) and getattr(raw, "paramList", None) is None:
            # generators run once at collection, on an instance of their own (as nose2 does)
            try:
                class_setup()
            except Exception as e:
                yield Case(f"{base}:collect", "", lambda err=e: _reraise(err), attrs)
                continue
            inst = make()
            yield from _expand(base, raw, (inst,), attrs, None, None)
            continue

        def bound(*args: Any, raw: Callable = raw, fixtures: dict = fixtures) -> Any:
            return raw(fixtures["inst"], *args)

        bound.paramList = getattr(raw, "paramList", None)  # type: ignore[attr-defined]
        if bound.paramList is None:  # type: ignore[attr-defined]
            del bound.paramList  # type: ignore[attr-defined]
        yield from _expand(base, bound, (), attrs, setup, teardown)


def collect(module: types.ModuleType) -> Iterator[Case]:
    """Yields the module's cases lazily (generators run as they are reached)."""
    modname = module.__name__
    for name in dir(module):
        obj = getattr(module, name)
        if isinstance(obj, type):
            if not name.lower().startswith(PREFIX) and not issubclass(obj, unittest.TestCase):
                continue
            if issubclass(obj, unittest.TestCase) and obj is unittest.TestCase:
                continue
            if not _enabled(obj):
                continue
            yield from _class_cases(modname, obj)
        elif isinstance(obj, types.FunctionType) and name.startswith(PREFIX) and _enabled(obj):
            is_param = getattr(obj, "paramList", None) is not None
            if not is_param and not inspect.isgeneratorfunction(obj) and _expected_args(obj) > 0:
                continue
            setup = _fixture(obj, "setUp", "setup", "setUpFunc")
            teardown = _fixture(obj, "tearDown", "teardown", "tearDownFunc")
            yield from _expand(f"{modname}.{obj.__name__}", obj, (), _attrs(obj), setup, teardown)


def _expected_args(func: Callable) -> int:
    return len(inspect.getfullargspec(func).args)
