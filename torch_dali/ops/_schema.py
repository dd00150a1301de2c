"""Operator schemas: each op is declared once, as data. Validation, `ops.X`, `fn.x`, YAML and docs
are all generated from the schema."""
from __future__ import annotations

import enum
import functools
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from .arg_input_types import constant_mismatch
from .python_values import as_dali_reads, check_array, check_common, check_int_range, one_value, reclassed


class UnknownArgumentError(ArgumentError, KeyError):
    """An argument the operator does not have; a KeyError too, as DALI raises it."""

    def __str__(self) -> str:  # KeyError's would quote the message
        return str(self.args[0]) if self.args else ""


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
    # Where DALI's schema lets an input be, per input position, where it differs from
    # `input_devices` ("" where it does not): "cpu" (the CPU only), "cpu_or_same" (the CPU or the
    # op's device), "any" (either: only its shape or metadata is read). What
    # `backend.GetSchema(...).GetInputDevice` reports; inputs are moved as `input_devices` says.
    input_kinds: tuple[str, ...] = ()
    class_name_override: str = ""  # where DALI's class name is not the CamelCase of the fn name
    _by_name: dict[str, Arg] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for a in self.args:
            self._by_name[a.name] = a
            for alias in a.aliases:
                self._by_name[alias] = a

    @functools.cached_property  # (in __dict__, past the frozen __setattr__) ops name themselves per sample
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
    """Python and NumPy numbers (not bools)."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _is_flag(v: Any) -> bool:
    return isinstance(v, (bool, np.bool_))


def plain_number(v: Any) -> Any:
    """NumPy scalars and 0-d arrays or torch tensors (CPU) as Python numbers, as DALI 2.4 takes
    them (`angle=torch.tensor(30.0)`); anything else unchanged."""
    if isinstance(v, np.generic) or (isinstance(v, np.ndarray) and v.ndim == 0):
        return v.item()
    if isinstance(v, torch.Tensor) and v.dim() == 0 and v.device.type == "cpu":
        return v.item()
    return v


def plain_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the registry reads them: NumPy scalars and `types.Constant` scalars as Python
    numbers (DALI code passes `seed=np.int64(3)`, `range=types.Constant(...)`)."""
    from ..graph.node import DataNode
    for k, v in kwargs.items():
        if isinstance(v, types.ScalarConstant):
            kwargs[k] = v.value
        elif isinstance(v, (list, tuple)) and any(isinstance(x, types.ScalarConstant) for x in v):
            kwargs[k] = type(v)(x.value if isinstance(x, types.ScalarConstant) else x for x in v)
        elif k == "seed":
            kwargs[k] = plain_number(v)
        elif isinstance(v, DataNode):
            kwargs[k] = adopted(v)
    return kwargs


def adopted(x: Any) -> Any:
    """A DataNode made outside the graph being traced (an op called outside any pipeline), copied
    into it, so that the op about to use it comes after it; anything else as it is."""
    from ..graph.node import DataNode, current_graph, require_source, tracing
    if not isinstance(x, DataNode) or not tracing():
        return x
    require_source(x)
    graph = current_graph()
    return x if graph.owns(x.node) else graph.adopt([x])[0]


def plain_inputs(op: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Positional inputs as DataNodes: constants (numbers, NumPy arrays, lists of numbers,
    `types.Constant`) become constant nodes on the op's input device, as in DALI; lists that hold
    DataNodes stay input sets."""
    from ..graph.node import DataNode, debug_active
    dev = "gpu" if kwargs.get("device") == "gpu" else "cpu"
    debug = debug_active()

    def node(v: Any, k: int) -> Any:
        if isinstance(v, DataNode):
            return adopted(v)
        if debug and isinstance(v, (list, tuple)) and v and all(hasattr(y, "__array__") for y in v):
            return v  # debug mode: a batch given as its samples (arrays, tensors) feeds the op as it is
        from ..graph.branch_values import check_defined
        check_defined(v)  # a variable an `if` on a DataNode set in one branch only
        if isinstance(v, types.ScalarConstant):
            return types.Constant(v.value, v.dtype, device=dev)
        try:
            return types.Constant(v, device=dev)
        except (TypeError, ValueError, KeyError) as e:
            raise ArgumentTypeError(f"{op}: input {k} must be a DataNode, a list of DataNodes (input sets) or a "
                                    f"constant (number, NumPy array); got {type(v).__name__} ({e})") from None

    out = []
    for k, x in enumerate(inputs):
        if isinstance(x, (list, tuple)) and any(isinstance(y, DataNode) for y in x):
            out.append(type(x)(node(y, k) for y in x))
        else:
            out.append(node(x, k))
    return tuple(out)


def _as_list(v: Any) -> list:
    if isinstance(v, torch.Tensor):
        return v.flatten().tolist()
    if isinstance(v, (list, tuple)):
        return list(v)
    if hasattr(v, "tolist"):  # numpy
        r = v.tolist()
        return r if isinstance(r, list) else [r]
    return [v]


def enum_member(cls: type[enum.Enum], v: Any) -> enum.Enum:
    if isinstance(v, cls):
        return v
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return cls(int(v))  # DALI takes an enum's number (dtype=5 is INT16); ValueError when none is
    if isinstance(v, str):
        for cand in (v, v.upper(), "INTERP_" + v.upper()):
            if cand in cls.__members__:
                return cls[cand]
        for m in cls:
            key = types.enum_key(m)
            if key == v or key == v.lower():
                return m
    raise ValueError


_KIND_DOC = {
    "int": "an integer", "float": "a number", "bool": "a boolean", "str": "a string",
    "int_list": "a list of integers", "float_list": "a list of numbers", "str_list": "a list of strings",
    "floats": "a number or a list of numbers", "ints": "an integer or a list of integers",
    "strs": "a string or a list of strings (or None)", "dtype": "a data type such as types.FLOAT",
    "image_type": "an image type such as types.RGB", "interp_type": "an interpolation type such as "
    "types.INTERP_LINEAR", "layout": "a layout string such as 'CHW'", "callable": "a Python function",
    "any": "a value", "oob_policy": "one of 'error', 'pad', 'trim_to_shape' or a border policy (constant, edge, clamp, "
                  "reflect, reflect_1001, reflect_101, wrap)",
}


def coerce(op: str, arg: Arg, v: Any) -> Any:
    """Checks and normalizes one constant argument value; raises naming the op and the argument."""
    kind = arg.kind
    if kind in ("int", "float", "bool") and isinstance(v, (np.ndarray, torch.Tensor)) and tuple(v.shape) == (1,):
        v = v[0]  # a one-element 1-D array (or tensor) is a scalar where one is expected, as in DALI (lists are not)
    v = plain_number(v)
    try:
        if kind == "int":  # bools count as 0/1 (`mirror=False`), as DALI takes them
            if not (_is_flag(v) or (_is_num(v) and float(v).is_integer())):
                raise ValueError
            out: Any = int(v)
        elif kind == "float":
            if not (_is_num(v) or _is_flag(v)):
                raise ValueError
            out = float(v)
        elif kind == "bool":
            if _is_flag(v) or (_is_num(v) and v in (0, 1)):
                out = bool(v)
            else:
                raise ValueError
        elif kind in ("str", "layout"):
            if isinstance(v, os.PathLike):
                v = os.fspath(v)  # DALI 2.4 takes pathlib.Path for string arguments (file_root=Path(...))
            if not isinstance(v, str):
                raise ValueError
            out = v
        elif kind in ("int_list", "ints"):
            items = _as_list(v)
            if not all(_is_flag(x) or (_is_num(x) and float(x).is_integer()) for x in items):
                raise ValueError
            out = [int(x) for x in items]
            if kind == "ints" and not isinstance(v, (list, tuple, np.ndarray)) and len(out) == 1:
                out = out[0]
        elif kind in ("float_list", "floats"):
            items = _as_list(v)
            if not all(_is_num(x) or _is_flag(x) for x in items):
                raise ValueError
            out = [float(x) for x in items]
            if kind == "floats" and (_is_num(v) or _is_flag(v)):
                out = out[0]
        elif kind in ("str_list", "strs"):
            if isinstance(v, os.PathLike):
                v = os.fspath(v)
            items = [v] if isinstance(v, str) else [os.fspath(x) if isinstance(x, os.PathLike) else x
                                                    for x in _as_list(v)]
            # "strs" (one per output, as external_source's layout): None leaves that one unset, as in DALI
            if not all(isinstance(x, str) or (kind == "strs" and x is None) for x in items):
                raise ValueError
            out = items if kind == "str_list" or not isinstance(v, str) else v
        elif kind == "dtype":
            if isinstance(v, torch.dtype):
                v = types.from_torch_dtype(v)
            out = enum_member(types.DALIDataType, v)
        elif kind == "image_type":
            out = enum_member(types.DALIImageType, v)
        elif kind == "interp_type":
            out = enum_member(types.DALIInterpType, v)
        elif kind == "oob_policy":  # an OutOfBoundsPolicy, or a border policy's name (crop takes those too)
            from ..functional.regions import oob_policy
            if not isinstance(v, str):
                out = enum_member(types.OutOfBoundsPolicy, v)
            elif (name := oob_policy(v)) is None:
                raise ValueError
            elif name in ("pad", "constant", "error", "trim_to_shape"):
                out = enum_member(types.OutOfBoundsPolicy, "pad" if name == "constant" else name)
            else:
                out = name
        elif kind == "callable":
            if not callable(v):
                raise ValueError
            out = v
        else:
            out = v
    except (ValueError, KeyError, TypeError):
        err: type[Exception] = ArgumentTypeError
        if kind == "callable":  # DALI calls it and fails when the pipeline runs: a RuntimeError there
            from ._operator import BuildArgumentTypeError
            err = BuildArgumentTypeError
        raise err(f"{op}: `{arg.name}` must be {_KIND_DOC.get(kind, kind)}, got {v!r}") from None
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


def at_most(limit: int, why: str) -> Callable[[Any], str | None]:
    """A size bounded where a larger one could only exhaust memory (an untrusted config's lever)."""
    def check(v: Any) -> str | None:
        return None if all(x <= limit for x in _as_list(v)) else f"at most {limit} ({why})"
    return check


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


# how many dimensions one sample of a per-sample argument has, by kind
_SAMPLE_NDIM = {"int": 0, "float": 0, "bool": 0, "int_list": 1, "float_list": 1, "ints": 1, "floats": 1}


def _array_input(arg: Arg, v: Any) -> bool:
    """A NumPy array or tensor given to a per-sample argument, with more dimensions than one value
    of the argument has (`matrix=np.eye(3)`): DALI feeds those as constant per-sample inputs, so
    their shape is the op's to accept or refuse when it runs."""
    if not arg.tensor or arg.kind not in _SAMPLE_NDIM or not isinstance(v, (np.ndarray, torch.Tensor)):
        return False
    if v.ndim == 1 and v.shape[0] == 1 and _SAMPLE_NDIM[arg.kind] == 0:
        return False  # one value in a 1-D array: the scalar (coerce unwraps it)
    # several values of a type the argument's data may not have (`size=np.array([4, 4])`, int32 for
    # a float argument) are the constant node DALI makes of them, refused when the op runs
    return v.ndim > _SAMPLE_NDIM[arg.kind] or (v.ndim >= 1 and not one_value(v) and constant_mismatch(arg.kind, v))


def array_arg_inputs(schema: OpSchema, kwargs: dict[str, Any], device: str) -> dict[str, Any]:
    """`kwargs` with each array that `_array_input` accepts made a constant node (`types.Constant`)
    on `device` (per-sample arguments come from the CPU)."""
    out = dict(kwargs)
    for key, v in kwargs.items():
        arg = schema.arg(key) if key not in COMMON_ARGS else None
        if arg is not None and _array_input(arg, v):
            size = v.numel() if isinstance(v, torch.Tensor) else v.size
            if _SAMPLE_NDIM[arg.kind] == 0 and size == 1:
                # one value in 2+ dimensions would reach the op as a plain number: refused here
                from ._operator import BuildArgumentTypeError, not_scalar
                raise BuildArgumentTypeError(f"{schema.display_name()}: `{arg.name}` takes one number per sample; "
                                             f"got an array of shape {tuple(v.shape)}: {not_scalar(v.ndim)}")
            out[key] = types.Constant(v.cpu() if isinstance(v, torch.Tensor) else v, device=device)  # torch: its dtype kept, as in DALI
    return out


def validate_args(schema: OpSchema, given: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Splits `given` into (constant args, per-sample DataNode args), checking names and values.

    Returns constants with defaults filled in under canonical names.
    """
    from ..graph.node import DataNode  # local: graph imports schema

    op = schema.display_name()
    consts: dict[str, Any] = {}
    tensor_args: dict[str, Any] = {}
    spelled: dict[str, str] = {}  # canonical name -> the key it was given as
    for key, value in given.items():
        if key in COMMON_ARGS:
            check_common(op, key, value, isinstance(value, DataNode))
            continue
        arg = schema.arg(key)
        if arg is None:
            known = ", ".join(sorted(a.name for a in schema.args)) or "none"
            raise UnknownArgumentError(f"{op}: unknown argument `{key}` (operator {schema.name} has no "
                                       f"such argument); its arguments are: {known}")
        if arg.name in spelled:  # an argument and its alias (`output_dtype` and `dtype`): a TypeError, as in DALI
            raise ArgumentTypeError(f"{op}: unexpected `{key}` beside `{spelled[arg.name]}`: both name the "
                                    f"argument `{arg.name}`; give it once")
        spelled[arg.name] = key
        if isinstance(value, DataNode):
            if not arg.tensor:
                raise ArgumentTypeError(
                    f"{op}: `{arg.name}` was given a DataNode (a per-sample input), but it takes only a constant "
                    f"value ({_KIND_DOC.get(arg.kind, arg.kind)})")
            tensor_args[arg.name] = value
            continue
        if value is None:  # None means "not given", as in DALI (a required one is then missing)
            continue
        check_array(op, arg.name, arg.kind, arg.tensor, value)
        if _array_input(arg, value):  # a class API constructor's: made a node when the op is called
            continue
        try:
            consts[arg.name] = coerce(op, arg, as_dali_reads(arg.kind, value))
        except (ArgumentError, ArgumentTypeError) as e:
            raise reclassed(e, arg.kind, value, arg.tensor) from None
        check_int_range(op, arg.name, arg.kind, consts[arg.name])
    for arg in schema.args:
        if arg.name in consts or arg.name in tensor_args:
            continue
        if arg.required:  # a ValueError, and a RuntimeError as DALI raises it
            from ._operator import BuildArgumentError, BuildArgumentTypeError
            # a missing Python function: DALI's PythonFunction takes it as a positional parameter,
            # so Python raises TypeError there
            err = BuildArgumentTypeError if arg.kind == "callable" else BuildArgumentError
            raise err(f"{op}: argument `{arg.name}` is required ({arg.doc})")
        consts[arg.name] = arg.default
    return consts, tensor_args
