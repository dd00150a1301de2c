"""Pure-torch kernels for DALI's arithmetic expressions: type promotion and each operation, with
DALI 2.4's semantics (checked against its CPU outputs):

* Type promotion is DALI's, not NumPy's or torch's: a float type beats any integer type; two
  floats give the wider; two signed (or two of unsigned/bool) integers give the wider; a signed
  and an unsigned integer give the signed one if it is wider, else the signed type twice the
  unsigned one's width (at most 64 bits); bool loses to everything. Python `int`/`float`/`bool`
  constants count as INT32/FLOAT/BOOL (`uint8_image + 1` is INT32).
* `/` always gives floats (FLOAT for integer operands); `//` truncates toward zero on integers
  and is true division on floats; `%` is C's truncated remainder (`fmod`); integer `**` with a
  negative exponent gives 0; integer division by zero is an error.
* Comparisons give BOOL; `~` is logical not on BOOL; shifts of BOOL are cast back to BOOL.
* Math functions (`sqrt`, `exp`, `floor`...) give FLOAT for integer inputs; `abs` keeps the type.
* Arithmetic on operands that are all BOOL is refused (except `*`, unary `+`, bitwise ops,
  shifts and comparisons), as are bitwise ops and shifts on floats.

torch lacks most kernels for uint16/uint32/uint64: those compute in int32/int64 and wrap back
(uint64 as int64 bit patterns, so `//`, `%` and `>>` of values >= 2**63 differ from DALI's).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..functional.crop import float_to_int
from ..functional.half import to_half
from ._dispatch import call

_UNSIGNED = {torch.uint8: 1, torch.uint16: 2, torch.uint32: 4, torch.uint64: 8}
_SIGNED = {torch.int8: 1, torch.int16: 2, torch.int32: 4, torch.int64: 8}
_SIGNED_BY_SIZE = {v: k for k, v in _SIGNED.items()}
_UNSIGNED_BY_SIZE = {v: k for k, v in _UNSIGNED.items()}
_FLOAT = {torch.float16: 2, torch.bfloat16: 2, torch.float32: 4, torch.float64: 8}


def kind(dt: torch.dtype) -> str:
    if dt == torch.bool:
        return "b"
    if dt in _UNSIGNED:
        return "u"
    if dt in _SIGNED:
        return "i"
    if dt in _FLOAT:
        return "f"
    raise ArgumentTypeError(f"arithmetic: element type {dt} is not supported")


def _size(dt: torch.dtype) -> int:
    return 1 if dt == torch.bool else {**_UNSIGNED, **_SIGNED, **_FLOAT}[dt]


def promote(a: torch.dtype, b: torch.dtype) -> torch.dtype:
    """DALI's binary type promotion."""
    if a == b:
        return a
    ka, kb = kind(a), kind(b)
    if ka == "f" or kb == "f":
        if ka != "f":
            return b
        if kb != "f":
            return a
        if _size(a) == _size(b):  # float16 with bfloat16
            return torch.float32
        return a if _size(a) > _size(b) else b
    if ka == "b" and kb == "b":
        return torch.bool
    if ka == "i" and kb == "i":
        return _SIGNED_BY_SIZE[max(_size(a), _size(b))]
    if ka != "i" and kb != "i":  # unsigned and/or bool
        return _UNSIGNED_BY_SIZE[max(_size(a), _size(b))]
    signed, other = (a, b) if ka == "i" else (b, a)
    if other == torch.bool or _size(signed) > _size(other):
        return signed
    return _SIGNED_BY_SIZE[min(2 * _size(other), 8)]


def promote_all(dts: list[torch.dtype]) -> torch.dtype:
    out = dts[0]
    for d in dts[1:]:
        out = promote(out, d)
    return out


def float_of(dts: list[torch.dtype]) -> torch.dtype:
    """The type of `/`, `fpow`, `atan2`: FLOAT unless a float operand says otherwise."""
    floats = [d for d in dts if kind(d) == "f"]
    return promote_all(floats) if floats else torch.float32


# -- work types: torch has few kernels for the wide unsigned types --------------------------------

_WORK = {torch.uint16: torch.int32, torch.uint32: torch.int64, torch.uint64: torch.int64}
_MASK = {torch.uint16: 0xFFFF, torch.uint32: 0xFFFFFFFF}


def to_work(x: torch.Tensor, dt: torch.dtype) -> torch.Tensor:
    """`x` converted to `dt`, then to the type the computation runs in."""
    if x.dtype != dt:
        x = x.to(dt)
    if dt == torch.uint64:
        return x.view(torch.int64) if x.dim() else x.reshape(1).view(torch.int64).reshape(())
    w = _WORK.get(dt)
    return x.to(w) if w is not None else x


def from_work(x: torch.Tensor, dt: torch.dtype) -> torch.Tensor:
    """The result computed in the work type, as `dt` (wrapping as C does)."""
    if x.dtype == dt:
        return x
    if dt == torch.uint64:
        x = x.to(torch.int64)
        return x.view(torch.uint64) if x.dim() else x.reshape(1).view(torch.uint64).reshape(())
    if dt in _MASK:
        return (x & _MASK[dt]).to(dt)
    return x.to(dt)


def _ordered(x: torch.Tensor, dt: torch.dtype) -> torch.Tensor:
    """uint64 work values in an order signed comparison respects (the sign bit flipped)."""
    return x ^ torch.iinfo(torch.int64).min if dt == torch.uint64 else x


# -- operations ------------------------------------------------------------------------------------

#: display names, as DALI's messages and Python spell them
DISPLAY = {"add": "+", "sub": "-", "mul": "*", "div": "//", "fdiv": "/", "mod": "%", "pow": "**",
           "bitand": "&", "bitor": "|", "bitxor": "^", "bitnot": "~", "lshift": "<<", "rshift": ">>",
           "eq": "==", "neq": "!=", "lt": "<", "leq": "<=", "gt": ">", "geq": ">=", "plus": "+", "minus": "-"}

COMPARISONS = {"eq": torch.eq, "neq": torch.ne, "lt": torch.lt, "leq": torch.le, "gt": torch.gt, "geq": torch.ge}
BITWISE = {"bitand": torch.bitwise_and, "bitor": torch.bitwise_or, "bitxor": torch.bitwise_xor}
SHIFTS = {"lshift": torch.bitwise_left_shift, "rshift": torch.bitwise_right_shift}
FLOATY = {"fdiv", "fpow", "atan2"}
SAME_TYPE = {"add", "sub", "mul", "div", "mod", "pow", "min", "max", "clamp"}


def _cbrt(x: torch.Tensor) -> torch.Tensor:
    return torch.sign(x) * torch.abs(x).pow(1.0 / 3.0)


def _wide(f: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """`f` computed in float64 and rounded, on the CPU: DALI 2.4's CPU sqrt is correctly rounded,
    where torch's float32 kernel is 1 ulp off on 0.7% of random inputs. (exp and pow stay torch's:
    in float64 they left DALI 0.07% apart, not 1-2%, but cost a pipeline of sqrt, exp and pow over
    32 224x224x3 images 34 ms against 17, DALI 2.4 30 ms.)"""
    def g(*xs: torch.Tensor) -> torch.Tensor:
        dt = xs[0].dtype
        if dt in (torch.float32, torch.float16, torch.bfloat16) and xs[0].device.type == "cpu":
            return f(*(x.double() for x in xs)).to(dt)
        return f(*xs)
    return g


MATH: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "sqrt": _wide(torch.sqrt), "rsqrt": torch.rsqrt, "cbrt": _cbrt, "exp": torch.exp, "log": torch.log,
    "log2": torch.log2, "log10": torch.log10, "fabs": torch.abs, "floor": torch.floor, "ceil": torch.ceil,
    "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "asin": torch.asin, "acos": torch.acos,
    "atan": torch.atan, "sinh": torch.sinh, "cosh": torch.cosh, "tanh": torch.tanh, "asinh": torch.asinh,
    "acosh": torch.acosh, "atanh": torch.atanh,
}
UNARY = {"plus", "minus", "bitnot", "abs", *MATH}
BINARY = {"add", "sub", "mul", "div", "fdiv", "mod", "pow", "fpow", "min", "max", "atan2", *COMPARISONS,
          *BITWISE, *SHIFTS}
TERNARY = {"clamp"}
ALL_OPS = UNARY | BINARY | TERNARY
# all-BOOL operands are refused for these (DALI: use bitwise operators instead)
_NO_BOOL = {"add", "sub", "div", "fdiv", "mod", "pow", "fpow", "min", "max", "atan2", "minus", "abs", "clamp",
            *MATH}


def arity(op: str) -> int:
    return 1 if op in UNARY else 3 if op in TERNARY else 2


def display(op: str) -> str:
    return DISPLAY.get(op, op)


def result_type(op: str, dts: list[torch.dtype]) -> torch.dtype:
    """The output element type of `op` on operands of types `dts`; refuses what DALI refuses."""
    kinds = [kind(d) for d in dts]
    name = display(op)
    if op in _NO_BOOL and all(k == "b" for k in kinds):
        what = "Input" if len(dts) == 1 else "Inputs"
        tail = "cannot be a boolean" if len(dts) == 1 else "cannot be booleans"
        raise ArgumentTypeError(f"{what} to arithmetic operator `{name}` {tail}. Consider using bitwise "
                                "operators (`|`, `&`, `^`, `~`) or cast the input to a number first")
    if (op in BITWISE or op in SHIFTS or op == "bitnot") and "f" in kinds:
        raise ArgumentTypeError(f"Inputs to bitwise operator `{name}` must be of integral type, got "
                                f"{', '.join(str(d).replace('torch.', '') for d in dts)}")
    if op in COMPARISONS:
        return torch.bool
    if op in FLOATY:
        return float_of(dts)
    if op in MATH:
        return dts[0] if kinds[0] == "f" else torch.float32
    return promote_all(dts)


def _int_div(a: torch.Tensor, b: torch.Tensor, mode: str) -> torch.Tensor:
    if bool((b == 0).any()):
        raise ArgumentError("arithmetic: integer division by zero")
    minus_one = b == -1
    if bool(minus_one.any()) and a.is_signed():
        # the type's minimum divided by -1 overflows: the CPU traps (SIGFPE ends the process, in DALI
        # too); x // -1 is -x (the minimum wraps to itself, as two's complement negation does), x % -1 is 0
        safe = torch.where(minus_one, torch.ones_like(b), b)
        q = torch.div(a, safe, rounding_mode="trunc") if mode == "div" else torch.fmod(a, safe)
        return torch.where(minus_one, torch.neg(a) if mode == "div" else torch.zeros_like(a), q)
    return torch.div(a, b, rounding_mode="trunc") if mode == "div" else torch.fmod(a, b)


def _int_pow(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    neg = b < 0
    out = torch.pow(a, torch.where(neg, torch.zeros_like(b), b))
    return torch.where(neg, torch.zeros_like(out), out)


def compute(op: str, xs: list[torch.Tensor], out: torch.dtype) -> torch.Tensor:
    """`op` on operands that broadcast against each other, giving type `out`."""
    dts = [x.dtype for x in xs]
    if op in COMPARISONS:
        common = promote_all(dts)
        ws = [_ordered(to_work(x, common), common) for x in xs]
        return COMPARISONS[op](ws[0], ws[1])
    if op in MATH or op in FLOATY:
        fs = [x.to(out) for x in xs]
        if op in MATH:
            return MATH[op](fs[0])
        if op == "fdiv":
            return torch.true_divide(fs[0], fs[1])
        if op == "fpow":
            return torch.pow(fs[0], fs[1])
        return torch.atan2(fs[0], fs[1])
    if out == torch.bool:
        return _bool_op(op, xs)
    ws = [to_work(x, out) for x in xs]
    is_float = kind(out) == "f"
    if op == "plus":
        r = ws[0]
    elif op == "minus":
        r = torch.neg(ws[0])
    elif op == "abs":
        r = ws[0] if kind(out) == "u" else torch.abs(ws[0])
    elif op == "bitnot":
        r = torch.bitwise_not(ws[0])
    elif op == "add":
        r = ws[0] + ws[1]
    elif op == "sub":
        r = ws[0] - ws[1]
    elif op == "mul":
        r = ws[0] * ws[1]
    elif op in ("div", "mod"):
        if is_float:
            r = torch.true_divide(ws[0], ws[1]) if op == "div" else torch.fmod(ws[0], ws[1])
        else:
            r = _int_div(ws[0], ws[1], op)
    elif op == "pow":
        r = torch.pow(ws[0], ws[1]) if is_float else _int_pow(ws[0], ws[1])
    elif op in ("min", "max"):
        a, b = _ordered(ws[0], out), _ordered(ws[1], out)
        # DALI 2.4's `a < b ? a : b` (max: `a > b`): a NaN on the left gives the right operand,
        # on the right the NaN; of -0.0 and 0.0 the right one (torch.minimum/maximum spread NaNs)
        r = _ordered(torch.where(a < b if op == "min" else a > b, a, b), out)
    elif op == "clamp":
        v, lo, hi = (_ordered(w, out) for w in ws)
        r = _ordered(torch.minimum(torch.maximum(v, lo), hi), out)
    elif op in BITWISE:
        r = BITWISE[op](ws[0], ws[1])
    elif op in SHIFTS:
        r = SHIFTS[op](ws[0], ws[1])
    else:
        raise ArgumentError(f"arithmetic: unknown operation {op!r}")
    return from_work(r, out)


def _bool_op(op: str, xs: list[torch.Tensor]) -> torch.Tensor:
    """Operations whose result is BOOL (all operands BOOL)."""
    a = xs[0]
    if op == "plus":
        return a
    if op == "bitnot":
        return torch.logical_not(a)
    b = xs[1]
    if op == "mul" or op == "bitand":
        return a & b
    if op == "bitor":
        return a | b
    if op == "bitxor":
        return a ^ b
    if op in SHIFTS:  # as C: the shift runs on ints; the result is cast back to bool
        return SHIFTS[op](a.to(torch.int32), b.to(torch.int32)) != 0
    raise ArgumentTypeError(f"Inputs to arithmetic operator `{display(op)}` cannot be booleans")


def constant_tensor(value: Any, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A typed scalar constant as a 0-d tensor (uint64 values above int64's range included)."""
    import numpy as np
    from .. import types
    np_type = types.to_numpy_type(types.from_torch_dtype(dtype))
    if isinstance(value, float) and np.dtype(np_type).kind in "iub" and not math.isfinite(value):
        raise ArgumentError(f"arithmetic: constant {value} does not fit {dtype}")
    return torch.from_numpy(np.array(value).astype(np_type)).to(device)


def cast_sat(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """DALI's conversion (`fn.cast`): floats to an integer type as `crop.float_to_int` (rounded half
    away from zero, saturated, NaN as DALI 2.4's CPU gives it); to BOOL is `!= 0` after that
    rounding (a float below 0.5 in magnitude is False, NaN True); to FLOAT16 halfway cases go
    away from zero (`functional.half`; a value too large becomes inf); to other float types plain."""
    if x.dtype == dtype:
        return x
    if dtype == torch.bool:
        return ~(x.abs() < 0.5) if x.dtype.is_floating_point else x != 0
    if dtype == torch.float16 and x.dtype != torch.bool:
        return call(to_half, x)
    if dtype.is_floating_point or x.dtype == torch.bool:
        return x.to(dtype)
    if x.dtype.is_floating_point:
        return float_to_int(x, dtype)
    info = torch.iinfo(dtype)
    w = to_work(x, x.dtype).to(torch.int64)
    lo = max(info.min, torch.iinfo(torch.int64).min)
    hi = min(info.max, torch.iinfo(torch.int64).max)
    out = w.clamp(lo, hi)
    if x.dtype == torch.uint64:  # negative bit patterns are values >= 2**63: above the target's range
        out = torch.where(w < 0, torch.full_like(out, hi), out)
    return from_work(out, dtype) if dtype in _MASK or dtype == torch.uint64 else out.to(dtype)
