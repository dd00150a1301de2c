"""`torch_dali.math` mirrors `nvidia.dali.math`: elementwise functions of DataNodes (and typed
constants), each one arithmetic node. Integer inputs give FLOAT results for the functions of
reals (`sqrt`, `exp`, `floor`...); `abs`, `min`, `max`, `clamp` and `pow` keep DALI's promoted
type; `fpow` and `atan2` always give floats."""
from __future__ import annotations

from typing import Any

from .ops.arithmetic import expression


def _unary(op: str, doc: str) -> Any:
    def f(input: Any) -> Any:  # noqa: A002 - DALI's argument name
        return expression(op, input)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return f


abs = _unary("abs", "Absolute value; keeps the input's type.")  # noqa: A001
fabs = _unary("fabs", "Absolute value as a float.")
floor = _unary("floor", "Rounds down; FLOAT for integer inputs.")
ceil = _unary("ceil", "Rounds up; FLOAT for integer inputs.")
sqrt = _unary("sqrt", "Square root.")
rsqrt = _unary("rsqrt", "1 / square root.")
cbrt = _unary("cbrt", "Cube root.")
exp = _unary("exp", "e to the power of the input.")
log = _unary("log", "Natural logarithm.")
log2 = _unary("log2", "Base-2 logarithm.")
log10 = _unary("log10", "Base-10 logarithm.")
sin = _unary("sin", "Sine (radians).")
cos = _unary("cos", "Cosine (radians).")
tan = _unary("tan", "Tangent (radians).")
asin = _unary("asin", "Arcsine.")
acos = _unary("acos", "Arccosine.")
atan = _unary("atan", "Arctangent.")
sinh = _unary("sinh", "Hyperbolic sine.")
cosh = _unary("cosh", "Hyperbolic cosine.")
tanh = _unary("tanh", "Hyperbolic tangent.")
asinh = _unary("asinh", "Inverse hyperbolic sine.")
acosh = _unary("acosh", "Inverse hyperbolic cosine.")
atanh = _unary("atanh", "Inverse hyperbolic tangent.")


def min(left: Any, right: Any) -> Any:  # noqa: A001
    """Elementwise minimum, in the promoted type."""
    return expression("min", left, right)


def max(left: Any, right: Any) -> Any:  # noqa: A001
    """Elementwise maximum, in the promoted type."""
    return expression("max", left, right)


def pow(base: Any, exponent: Any) -> Any:  # noqa: A001
    """base ** exponent in the promoted type (integers to a negative power give 0)."""
    return expression("pow", base, exponent)


def fpow(base: Any, exponent: Any) -> Any:
    """base ** exponent computed in floating point."""
    return expression("fpow", base, exponent)


def atan2(x: Any, y: Any) -> Any:
    """C's atan2(x, y): the arctangent of x / y, in the quadrant of (y, x)."""
    return expression("atan2", x, y)


def clamp(value: Any, lo: Any, hi: Any) -> Any:
    """`value` limited to [lo, hi] (hi wins where lo > hi, as NumPy's clip)."""
    return expression("clamp", value, lo, hi)
