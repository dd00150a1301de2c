"""What DALI's Python API does with a keyword value before its operator sees it, where that decides
whether a call is refused and with which exception (DALI 2.4, measured op by op with
`python -m conformance.arg_sweep`; conformance/README.md has the summary).

DALI converts a constant argument with Python's own constructor for its type (`int(v)`, `float(v)`,
`bool(v)`, `str(v)`, an enum from `int(v)`; element by element for lists), so a value it cannot
convert is refused at the call with that constructor's exception: ValueError (`int("abc")`,
`int(nan)`), TypeError (`int([1, 2])`, `float(None)`), OverflowError (`int(inf)`). An empty list
where one value is expected is a RuntimeError. A value that converts but that the operator then
rejects (out of range, a string it does not know, a number given to a string argument) fails when
the pipeline is built or run: a RuntimeError. A NumPy array or torch tensor holding more than one
value is an argument input (a per-sample tensor), which only per-sample arguments take: elsewhere a
TypeError.

These rules apply to values given in Python (`fn.x(...)`, `ops.X(...)`); serialized pipelines and
configs are checked by `_schema.coerce` alone.
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np
import torch

from ..errors import ArgumentError, ArgumentTypeError

# kinds whose values DALI converts with a Python constructor (the others take objects as they are)
_CONVERT: dict[str, Any] = {
    "int": int, "ints": int, "int_list": int, "float": float, "floats": float, "float_list": float,
    "bool": bool, "dtype": int, "image_type": int, "interp_type": int,
}
_SCALAR_KINDS = ("int", "float", "bool", "dtype", "image_type", "interp_type")
_TYPED = frozenset(_CONVERT) | {"str", "layout", "str_list", "strs", "oob_policy"}


class ArgumentOverflowError(ArgumentError, OverflowError):
    """A number too large for the argument's type (`int(float("inf"))`), an OverflowError as in DALI."""


def is_array(v: Any) -> bool:
    return isinstance(v, (np.ndarray, torch.Tensor))


def one_value(v: Any) -> bool:
    """An array DALI reads as one number (shape () or (1,)), not as an argument input."""
    return tuple(v.shape) in ((), (1,))


def check_array(op: str, name: str, kind: str, tensor: bool, v: Any) -> None:
    """Refuses an array or tensor of several values given to an argument that takes no per-sample
    input (TypeError, as DALI: it would be an argument input there)."""
    if is_array(v) and not one_value(v) and not tensor and kind in _TYPED:
        raise ArgumentTypeError(f"{op}: `{name}` takes a constant, not an array or tensor of shape "
                                f"{tuple(v.shape)} (only per-sample arguments take those); pass a list")


def as_dali_reads(kind: str, v: Any) -> Any:
    """`v` as DALI's conversion reads it, where that is a value torch_dali's checks would refuse but
    means one thing: any number given to a flag is `bool(v)` (`mirror=2` is True; DALI 2.4 takes
    every number there). Anything else as it is."""
    if kind == "bool":
        x = _number(v)
        if isinstance(x, torch.Tensor) and x.dim() == 0:
            x = x.item()
        if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, enum.Enum):
            return bool(x)
    return v


# integer arguments DALI 2.4 does not hold as int32 (by name: each is typed so in every op that has it)
# (uint32 ones take -2**31..2**32-1: DALI 2.4 takes `hybrid_huffman_threshold=-1`, measured)
_WIDE = {"out_length": (-(1 << 63), 1 << 63), "idata": (-(1 << 63), 1 << 63),
         "shuffle_after_epoch_seed": (-(1 << 63), 1 << 63), "hybrid_huffman_threshold": (-(1 << 31), 1 << 32),
         "stride": (-(1 << 31), 1 << 32),
         # experimental.erode/dilate (GPU-only in DALI): a count that stops once the image settles
         "iterations": (-(1 << 63), 1 << 63)}
_INT32 = (-(1 << 31), 1 << 31)


def check_int_range(op: str, name: str, kind: str, v: Any) -> None:
    """Refuses an integer that does not fit the type DALI holds the argument in (int32 for nearly
    all): DALI wraps it (`shape=[2**31]` becomes negative) and its op fails when the pipeline runs
    (a RuntimeError; here at the call, before a sample that size is ever allocated)."""
    if kind not in ("int", "ints", "int_list"):
        return
    lo, hi = _WIDE.get(name, _INT32)
    for x in v if isinstance(v, (list, tuple)) else [v]:
        if isinstance(x, int) and not lo <= x < hi:
            from ._operator import BuildArgumentError
            raise BuildArgumentError(f"{op}: `{name}` is {x}, outside [{lo}, {hi - 1}], the range of the "
                                     f"integer type DALI holds it in")


def check_common(op: str, key: str, v: Any, node: bool) -> None:
    """`preserve` and `bytes_per_sample_hint`, which every op takes and torch_dali does not use,
    refused where DALI 2.4 refuses them (measured on `copy`): a DataNode or an array of several
    values (TypeError), an empty list (RuntimeError), a hint that is not integers (int() fails:
    ValueError for `"abc"`, TypeError for a torch dtype). Anything else is taken, as in DALI."""
    if key not in ("preserve", "bytes_per_sample_hint") or v is None:
        return
    if node or (is_array(v) and not one_value(v)):
        raise ArgumentTypeError(f"{op}: `{key}` takes a constant, not a DataNode or an array of several values")
    if isinstance(v, (list, tuple)) and not v:
        from ._operator import BuildArgumentError
        raise BuildArgumentError(f"{op}: `{key}` is an empty list")
    if key == "bytes_per_sample_hint" and refusal_class("ints", list(v) if isinstance(v, tuple) else v) \
            in (ValueError, TypeError, OverflowError):
        raise reclassed(ArgumentTypeError(f"{op}: `{key}` must be an integer or a list of integers, got {v!r}"),
                        "ints", v)


def refusal_class(kind: str, v: Any) -> type[BaseException]:
    """The builtin exception DALI 2.4 raises for `v` given to an argument of `kind` that refuses it:
    its conversion's error where the conversion fails, else RuntimeError (the operator refuses the
    converted value when the pipeline is built or run)."""
    conv = _CONVERT.get(kind)
    if conv is None:
        return RuntimeError
    try:
        if isinstance(v, (list, tuple)):
            if not v:  # DALI: no element type for one value; an empty list its op refuses later
                return RuntimeError
            if kind in _SCALAR_KINDS:
                conv(v)
            else:
                for x in v:
                    conv(_number(x))
        else:
            conv(_number(v))
    except OverflowError:
        return OverflowError
    except ValueError:
        return ValueError
    except TypeError:
        return TypeError
    return RuntimeError


def _number(v: Any) -> Any:
    """How DALI's converters see `v`: a one-value array as that value, an enum member as its number
    (DALI's enums convert to int and float)."""
    if is_array(v) and one_value(v):
        return v.reshape(-1)[0]
    return v.value if isinstance(v, enum.Enum) else v


def reclassed(e: Exception, kind: str, v: Any, tensor: bool = False) -> Exception:
    """`e` (ArgumentError or ArgumentTypeError from checking `v`) as the class DALI raises there (an
    array of several values given to a per-sample argument is an argument input there, which its op
    refuses when it runs: a RuntimeError)."""
    from ._operator import BuildArgumentError, BuildArgumentTypeError
    want = RuntimeError if tensor and is_array(v) and not one_value(v) else refusal_class(kind, v)
    if isinstance(e, want) and not (want is TypeError and isinstance(e, ValueError)):
        return e
    msg = str(e)
    if want is RuntimeError:
        return (BuildArgumentError if isinstance(e, ArgumentError) else BuildArgumentTypeError)(msg)
    if want is OverflowError:
        return ArgumentOverflowError(msg)
    return ArgumentError(msg) if want is ValueError else ArgumentTypeError(msg)
