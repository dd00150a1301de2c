"""`ndd.math`: elementwise functions of Tensors and Batches with DALI's type rules (integer inputs
give FLOAT for the functions of reals; `abs`, `min`, `max`, `clamp`, `pow` keep the promoted type)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._invoke import math_op as _math_op

__all__ = ["abs", "fabs", "floor", "ceil", "sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10", "sin", "cos",
           "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "min", "max", "pow",
           "fpow", "atan2", "clamp"]


def _unary(op: str) -> Any:
    def f(input: Any) -> Any:  # noqa: A002 - DALI's argument name
        return _math_op(op, input)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"Elementwise `{op}`."
    return f


for _name in __all__[:23]:
    globals()[_name] = _unary(_name)


def min(left: Any, right: Any) -> Any:  # noqa: A001
    return _math_op("min", left, right)


def max(left: Any, right: Any) -> Any:  # noqa: A001
    return _math_op("max", left, right)


def pow(base: Any, exponent: Any) -> Any:  # noqa: A001
    return _math_op("pow", base, exponent)


def fpow(base: Any, exponent: Any) -> Any:
    return _math_op("fpow", base, exponent)


def atan2(x: Any, y: Any) -> Any:
    return _math_op("atan2", x, y)


def clamp(value: Any, lo: Any, hi: Any) -> Any:
    return _math_op("clamp", value, lo, hi)


if TYPE_CHECKING:
    # the unary functions above are made through globals(), invisible to mypy: a type checker reads them as Any
    def __getattr__(name: str) -> Any: ...
