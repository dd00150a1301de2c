"""`pipeline_def` (a function's body as a Pipeline's definition) and `do_not_convert`, with DALI's
names and meanings."""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable

from ..errors import ArgumentError
from .dali_api import ACCEPTED
from .pipeline import Pipeline


_PIPELINE_ARGS = (set(inspect.signature(Pipeline.__init__).parameters) - {"self", "kwargs"}) | ACCEPTED


def do_not_convert(func: Callable) -> Callable:
    """Marks a function that `enable_conditionals` must not rewrite: it is called as written (an
    `if` on a DataNode inside it is an error). A pipeline definition itself cannot be marked."""
    try:
        func._torch_dali_do_not_convert = True  # type: ignore[attr-defined]
        return func
    except (AttributeError, TypeError):  # builtins, bound methods: wrap them
        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs)
        call._torch_dali_do_not_convert = True  # type: ignore[attr-defined]
        return call


def _named_params(func: Callable) -> set[str]:
    """The parameters a call can name (not *args/**kwargs)."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return set()
    return {k for k, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def pipeline_def(fn: Callable | None = None, *, enable_conditionals: bool = False,
                 **pipeline_kwargs: Any) -> Any:
    """Decorator: the function's body defines the graph; calling it returns a Pipeline.

    Pipeline arguments can be given to the decorator or at call time; the rest go to the function.
    With `enable_conditionals=True`, `if`/`else` on DataNodes in the body route samples (see
    `torch_dali.conditionals`). `debug=True` (DALI's debug mode, at decoration or call time): run()
    calls the body each iteration and its ops run at once on data (`.get()` gives a batch; see
    torch_dali.eager); a function that names a `debug` parameter still receives it.
    """
    debug_default = bool(pipeline_kwargs.pop("debug", False))

    def decorate(func: Callable) -> Callable[..., Pipeline]:
        if getattr(func, "_torch_dali_do_not_convert", False):
            raise ArgumentError(f"pipeline_def: '{getattr(func, '__name__', func)}' is marked @do_not_convert; "
                                "a pipeline definition cannot be (mark the functions it calls instead)")
        named = _named_params(func)

        @functools.wraps(func)
        def make(*args: Any, **kwargs: Any) -> Pipeline:
            # a keyword the function names goes to the function, even when it is also a Pipeline
            # argument (DALI 2.4: `def p(num_threads)` called with num_threads=42 gets 42, the
            # Pipeline keeps the decorator's); `debug` and `enable_conditionals` are then read too
            debug = bool(kwargs.get("debug", debug_default) if "debug" in named else kwargs.pop("debug", debug_default))
            shadowed = sorted(k for k in kwargs if k in _PIPELINE_ARGS and k in named and k != "debug")
            if shadowed:
                warnings.warn(f"pipeline_def: {', '.join(shadowed)} given to '{getattr(func, '__name__', func)}' "
                              "(it names them), not to the Pipeline", stacklevel=2)
            pipe_kw = {**pipeline_kwargs, **{k: kwargs.pop(k) for k in list(kwargs)
                                             if k in _PIPELINE_ARGS and k not in named and k != "debug"},
                       "debug": debug}
            conditionals = bool(kwargs.get("enable_conditionals", enable_conditionals)
                                if "enable_conditionals" in named else kwargs.pop("enable_conditionals", enable_conditionals))
            body = func
            if conditionals:
                from ..conditionals import convert
                body = convert(func)
            pipe = Pipeline(**pipe_kw)
            pipe.define_from(functools.partial(body, *args, **kwargs), conditionals)
            return pipe
        make._is_pipeline_def = True  # type: ignore[attr-defined] - DALI's mark
        return make
    return decorate(fn) if fn is not None else decorate
