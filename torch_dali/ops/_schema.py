"""Operator schemas: each op is declared once, as data. Validation, `ops.X`, `fn.x`, YAML and docs
are all generated from the schema."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

# Arguments every op takes. `seed` feeds the counter-based RNG; the rest are DALI's and are
# accepted for compatibility (they tune DALI's memory planner, which torch's allocator replaces).
COMMON_ARGS = ("device", "name", "seed", "preserve", "bytes_per_sample_hint")


@dataclass(frozen=True)
class Arg:
    """One operator argument. `kind` names how values are checked and written to YAML."""

    name: str
    kind: str
    default: Any = REQUIRED
    doc: str = ""
    tensor: bool = False  # may be a per-sample DataNode (`resize_shorter=fn.random.uniform(...)`)
    check: Callable[[Any], str | None] | None = None  # returns what was expected, or None if fine
    aliases: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class OpSchema:
    """What an operator is: its names, devices, inputs, outputs and arguments."""

    name: str  # canonical functional path: "resize", "readers.file", "random.uniform"
    impl: type  # the Operator subclass that runs it
    args: tuple[Arg, ...] = ()
    doc: str = ""
    devices: tuple[str, ...] = ("cpu", "gpu")
    min_inputs: int = 1
    max_inputs: int = 1
    num_outputs: int | Callable[..., int] = 1
    # num_outputs is called as f(args, number of inputs): outputs that depend on which optional
    # inputs were given (random_bbox_crop's labels)
    outputs_use_inputs: bool = False
    legacy_names: tuple[str, ...] = ()  # DALI's old class names: "FileReader", "nvJPEGDecoder"
    random: bool = False
    output_layout: str = ""
    input_devices: str = "same"  # "same": inputs on the op's device; "cpu": always CPU (mixed ops)
    class_name_override: str = ""  # where DALI's class name is not the CamelCase of the fn name
    _by_name: dict[str, Arg] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for a in self.args:
            self._by_name[a.name] = a
            for alias in a.aliases:
                self._by_name[alias] = a

    @property
    def class_name(self) -> str:
        """`readers.file` -> `File`, `crop_mirror_normalize` -> `CropMirrorNormalize`."""
        if self.class_name_override:
            return self.class_name_override
        return "".join(p.capitalize() if p.islower() else p for p in self.name.split(".")[-1].split("_"))

    def arg(self, name: str) -> Arg | None:
        return self._by_name.get(name)

    def outputs_for(self, args: dict[str, Any], num_inputs: int = 0) -> int:
        if not callable(self.num_outputs):
            return self.num_outputs
        return self.num_outputs(args, num_inputs) if self.outputs_use_inputs else self.num_outputs(args)

    def display_name(self) -> str:
        return self.legacy_names[0] if self.legacy_names else self.class_name


# -- value checking --------------------------------------------------------------------------------

def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _as_list(v: Any) -> list:
    if isinstance(v, torch.Tensor):
        return v.flatten().tolist()
    if isinstance(v, (list, tuple)):
        return list(v)
    if hasattr(v, "tolist"):  # numpy
        r = v.tolist()
        return r if isinstance(r, list) else [r]
    return [v]


def _enum(cls: type[enum.Enum], v: Any) -> enum.Enum:
    if isinstance(v, cls):
        return v
    if isinstance(v, str):
        for cand in (v, v.upper(), "INTERP_" + v.upper()):
            if cand in cls.__members__:
                return cls[cand]
        for m in cls:
            if m.value == v or m.value == v.lower():
                return m
    raise ValueError


_KIND_DOC = {
    "int": "an integer", "float": "a number", "bool": "a boolean", "str": "a string",
    "int_list": "a list of integers", "float_list": "a list of numbers", "str_list": "a list of strings",
    "floats": "a number or a list of numbers", "ints": "an integer or a list of integers",
    "strs": "a string or a list of strings", "dtype": "a data type such as types.FLOAT",
    "image_type": "an image type such as types.RGB", "interp_type": "an interpolation type such as "
    "types.INTERP_LINEAR", "layout": "a layout string such as 'CHW'", "callable": "a Python function",
    "any": "a value", "oob_policy": "one of 'error', 'pad', 'trim_to_shape'",
}


def coerce(op: str, arg: Arg, v: Any) -> Any:
    """Checks and normalizes one constant argument value; raises naming the op and the argument."""
    kind = arg.kind
    try:
        if kind == "int":
            if isinstance(v, bool) or not (_is_num(v) and float(v).is_integer()):
                raise ValueError
            out: Any = int(v)
        elif kind == "float":
            if not _is_num(v):
                raise ValueError
            out = float(v)
        elif kind == "bool":
            if isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)):
                out = bool(v)
            else:
                raise ValueError
        elif kind in ("str", "layout"):
            if not isinstance(v, str):
                raise ValueError
            out = v
        elif kind in ("int_list", "ints"):
            items = _as_list(v)
            if not all(_is_num(x) and float(x).is_integer() for x in items):
                raise ValueError
            out = [int(x) for x in items]
            if kind == "ints" and not isinstance(v, (list, tuple)) and len(out) == 1:
                out = out[0]
        elif kind in ("float_list", "floats"):
            items = _as_list(v)
            if not all(_is_num(x) for x in items):
                raise ValueError
            out = [float(x) for x in items]
            if kind == "floats" and _is_num(v):
                out = out[0]
        elif kind in ("str_list", "strs"):
            items = [v] if isinstance(v, str) else _as_list(v)
            if not all(isinstance(x, str) for x in items):
                raise ValueError
            out = items if kind == "str_list" or not isinstance(v, str) else v
        elif kind == "dtype":
            if isinstance(v, torch.dtype):
                v = types.from_torch_dtype(v)
            out = _enum(types.DALIDataType, v)
        elif kind == "image_type":
            out = _enum(types.DALIImageType, v)
        elif kind == "interp_type":
            out = _enum(types.DALIInterpType, v)
        elif kind == "oob_policy":
            out = _enum(types.OutOfBoundsPolicy, v)
        elif kind == "callable":
            if not callable(v):
                raise ValueError
            out = v
        else:
            out = v
    except (ValueError, KeyError, TypeError):
        raise ArgumentTypeError(
            f"{op}: `{arg.name}` must be {_KIND_DOC.get(kind, kind)}, got {v!r}") from None
    if arg.check is not None:
        problem = arg.check(out)
        if problem:
            raise ArgumentError(f"{op}: `{arg.name}` must be {problem}, got {v!r}")
    return out


# -- small reusable checks -------------------------------------------------------------------------

def positive(v: Any) -> str | None:
    vals = _as_list(v)
    return None if all(x > 0 for x in vals) else "> 0"


def non_negative(v: Any) -> str | None:
    vals = _as_list(v)
    return None if all(x >= 0 for x in vals) else ">= 0"


def unit_interval(v: Any) -> str | None:
    vals = _as_list(v)
    return None if all(0 <= x <= 1 for x in vals) else "in [0, 1]"


def one_of(*choices: str) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        return None if v in choices else "one of " + ", ".join(repr(c) for c in choices)
    return check


def length(*ns: int) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        n = len(_as_list(v))
        return None if n in ns else f"a list of {' or '.join(map(str, ns))} values"
    return check


def validate_args(schema: OpSchema, given: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Splits `given` into (constant args, per-sample DataNode args), checking names and values.

    Returns constants with defaults filled in under canonical names.
    """
    from ..graph.node import DataNode  # local: graph imports schema

    op = schema.display_name()
    consts: dict[str, Any] = {}
    tensor_args: dict[str, Any] = {}
    for key, value in given.items():
        if key in COMMON_ARGS:
            continue
        arg = schema.arg(key)
        if arg is None:
            known = ", ".join(sorted(a.name for a in schema.args)) or "none"
            raise ArgumentError(f"{op}: unknown argument `{key}`; its arguments are: {known}")
        if isinstance(value, DataNode):
            if not arg.tensor:
                raise ArgumentTypeError(
                    f"{op}: `{arg.name}` cannot be a per-sample input; give a constant value")
            tensor_args[arg.name] = value
            continue
        if value is None and not arg.required and arg.default is None:
            consts[arg.name] = None
            continue
        consts[arg.name] = coerce(op, arg, value)
    for arg in schema.args:
        if arg.name in consts or arg.name in tensor_args:
            continue
        if arg.required:
            raise ArgumentError(f"{op}: argument `{arg.name}` is required ({arg.doc})")
        consts[arg.name] = arg.default
    return consts, tensor_args
