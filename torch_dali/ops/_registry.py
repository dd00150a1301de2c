"""The op registry, and the code that turns a schema into `ops.X` classes and `fn.x` functions."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..errors import ArgumentError, ArgumentTypeError, GraphError
from ..graph.node import DataNode, caller_origin, current_graph, set_op_caller, tracing
from ..graph import branch_scope
from . import legacy
from ._schema import COMMON_ARGS, OpSchema, adopted, array_arg_inputs, validate_args


class InputDeviceError(GraphError, RuntimeError):
    """A positional input on a device the op cannot read (GPU data into a CPU op): a GraphError, and
    a RuntimeError as DALI raises for it (its argument-input counterpart stays a ValueError, as in DALI)."""


_SCHEMAS: dict[str, OpSchema] = {}
_ALIASES: dict[str, str] = {}



def _seed_value(seed: Any) -> Any:
    """A seed as DALI 2.4 takes it: a NumPy integer, or a one-element array or tensor holding a
    whole number (`seed=torch.tensor([3])`, `np.array(3)`; measured: the same draws as seed=3), is
    that int; anything else is returned for the check to refuse."""
    if isinstance(seed, np.integer):
        return int(seed)
    if isinstance(seed, (np.ndarray, torch.Tensor)) and (seed.size if isinstance(seed, np.ndarray) else seed.numel()) == 1:
        v = seed.reshape(-1)[0].item()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer():
            return int(v)
    return seed

def register(schema: OpSchema) -> OpSchema:
    if schema.name in _SCHEMAS:
        raise ValueError(f"op {schema.name} registered twice")
    _SCHEMAS[schema.name] = schema
    for alias in (schema.class_name, *schema.legacy_names):
        _ALIASES.setdefault(alias, schema.name)
    return schema


def lookup(name: str) -> OpSchema:
    """By functional path (`readers.mxnet`) or class name (`MXNetReader`, `CropMirrorNormalize`)."""
    key = _ALIASES.get(name, name)
    if key not in _SCHEMAS:
        raise KeyError(name)
    return _SCHEMAS[key]


def all_schemas() -> list[OpSchema]:
    return list(_SCHEMAS.values())


# -- calling an op while a graph is traced ----------------------------------------------------------

def _resolve_device(schema: OpSchema, device: str | None, inputs: list[DataNode]) -> str:
    op = schema.display_name()
    if device is None:
        if any(i.device == "gpu" for i in inputs) and "gpu" in schema.devices:
            device = "gpu"
        else:
            device = schema.devices[0]
    if device not in schema.devices:
        raise GraphError(f"{op}: device must be one of {', '.join(schema.devices)}, got {device!r}")
    return device


_debug_call: Any = None


def set_debug_call(fn: Any) -> None:
    """Installs the debug-mode hook (torch_dali.eager): called with (schema, inputs, kwargs) for every
    op call made while no graph is traced; it runs the op at once during a debug pipeline's run and
    returns NotImplemented otherwise."""
    global _debug_call
    _debug_call = fn


def call_op(schema: OpSchema, inputs: tuple[Any, ...], kwargs: dict[str, Any],
            origin: str | None = None) -> Any:
    """Adds one node (or one per input set) to the graph being traced; returns its outputs."""
    if _debug_call is not None and not tracing():
        out = _debug_call(schema, inputs, kwargs)
        if out is not NotImplemented:
            return out
    op = schema.display_name()
    origin = caller_origin() if origin is None else origin
    sets = [len(x) for x in inputs if isinstance(x, (list, tuple))]
    if sets and getattr(schema.impl, "no_input_sets", False):  # DALI's Python function ops
        raise ArgumentTypeError(f"{op}: inputs must be DataNodes; Python function ops do not support multiple "
                                f"input sets (got a {type(next(x for x in inputs if isinstance(x, (list, tuple)))).__name__})")
    if sets:  # input sets: one node per element, sharing arguments
        if len(set(sets)) != 1:
            raise GraphError(f"{op}: input sets must have the same length, got {sets}")
        per_set = [call_op(schema, tuple(x[k] if isinstance(x, (list, tuple)) else x for x in inputs),
                           dict(kwargs), origin) for k in range(sets[0])]
        if per_set and isinstance(per_set[0], (list, tuple)):
            # DALI groups by output: [[out0 of set 0, out0 of set 1, ...], [out1 of set 0, ...], ...]
            return [list(outs) for outs in zip(*per_set)]
        return per_set
    if not schema.min_inputs <= len(inputs) <= schema.max_inputs:
        want = (str(schema.min_inputs) if schema.min_inputs == schema.max_inputs
                else f"{schema.min_inputs} to {schema.max_inputs}")
        raise GraphError(f"{op}: expected {want} input(s), got {len(inputs)}")
    for k, x in enumerate(inputs):
        if not isinstance(x, DataNode):
            raise GraphError(f"{op}: input {k} must be the output of another op (a DataNode), got "
                             f"{type(x).__name__}; feed Python data with fn.external_source")
    graph = current_graph()
    name = kwargs.pop("name", None)
    seed = kwargs.pop("seed", None)
    device = _resolve_device(schema, kwargs.pop("device", None), list(inputs))
    kwargs = array_arg_inputs(schema, kwargs, "cpu")
    consts, tensor_args = validate_args(schema, kwargs)
    ins = list(inputs)
    if branch_scope.active(graph):  # inside an `if` on a DataNode: values from outside the branch
        ins = [branch_scope.route(graph, x, _branch_input) for x in ins]
        tensor_args = {k: branch_scope.route(graph, x, _branch_input) for k, x in tensor_args.items()}
    for k, x in enumerate(ins):
        if schema.input_devices == "any":
            break
        want = "cpu" if schema.input_devices == "cpu" or device in ("cpu", "mixed") else "gpu"
        if x.device == want:
            continue
        if want == "cpu":
            raise InputDeviceError(f"{op}: input {k} ('{x.name}') is on the {x.device.upper()} but this op runs on "
                                   f"the {device.upper()}, which reads only CPU inputs; use device='gpu' or move "
                                   "data with .cpu()")
        ins[k] = x.gpu()  # a GPU op fed from the CPU: copy the batch over
    for key, x in tensor_args.items():
        if x.device != "cpu" and device == "cpu":
            raise GraphError(f"{op}: per-sample argument `{key}` is on the {x.device.upper()}; per-sample "
                             "arguments must come from a CPU op")
    seed = _seed_value(seed)
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ArgumentError(f"{op}: `seed` must be an integer, got {seed!r}")
    node = graph.add_node(schema, device=device, args=consts, inputs=ins, arg_inputs=tensor_args,
                          name=name, seed=seed, origin=origin)
    for key, value in kwargs.items():  # the constants the caller gave (validate_args checked the names)
        arg = schema.arg(key)
        # None is DALI's "not given" (the default applies), so it is not recorded as set
        if key not in COMMON_ARGS and arg is not None and value is not None and not isinstance(value, DataNode):
            node.explicit.add(arg.name)
    outs = node.outputs
    branch_scope.made(graph, list(outs))
    named = getattr(schema.impl, "graph_outputs", None)  # outputs by name (readers.tfrecord's dict)
    if named is not None:
        return named(consts, tuple(outs))
    return outs[0] if len(outs) == 1 else list(outs)  # several outputs: a list, as DALI


def _branch_input(node: DataNode, predicate: DataNode, side: bool) -> DataNode:
    # either may be made outside any pipeline: copied in first, as inputs are
    return call_op(lookup("_conditional.branch_input"), (adopted(node),),
                   {"predicate": adopted(predicate), "side": side})


def _call_by_name(op: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What DataNode methods add (`node.gpu()`: a `copy` node on "mixed"; `node.shape()`: `shapes`),
    as `fn.<op>(*inputs, **kwargs)` would (a node made outside the pipeline being traced is copied in)."""
    return call_op(lookup(op), tuple(adopted(x) for x in inputs), kwargs)


set_op_caller(_call_by_name)


def make_function(schema: OpSchema):
    """`fn.resize(...)`: the functional API for one schema (warning at each call when DALI
    deprecates the op, ops/legacy.py)."""
    deprecation = (legacy.message(f"fn.{schema.name}", legacy.OPS[schema.name] and f"fn.{legacy.OPS[schema.name]}")
                   if schema.name in legacy.OPS else "")

    def op_fn(*inputs: Any, **kwargs: Any) -> Any:
        if deprecation:
            legacy.warn(deprecation)
        legacy.warn_args(schema.name, kwargs, schema.random)
        return call_op(schema, inputs, kwargs)
    op_fn.__name__ = schema.name.split(".")[-1]
    op_fn.__qualname__ = schema.name
    op_fn.__doc__ = _docstring(schema)
    return op_fn


class OpClass:
    """Base of the class API (`ops.Resize(...)`; then call the instance in define_graph)."""

    _schema: OpSchema
    deprecation = ""  # the warning each call gives, where DALI deprecates the class's name

    def __init__(self, **kwargs: Any) -> None:
        schema = self._schema
        given = {k: v for k, v in kwargs.items() if not isinstance(v, DataNode)}
        validate_args_partial(schema, given)
        legacy.warn_args(schema.name, kwargs, schema.random)  # once per instance, as DALI warns when it makes the op
        self._kwargs = kwargs
        self._origin = caller_origin()

    @property
    def schema(self) -> OpSchema:
        return self._schema

    # What DALI's op instances report (pipelines branch on `self.op.device`)
    @property
    def device(self) -> str:
        return self._kwargs.get("device") or "cpu"

    @property
    def preserve(self) -> bool:
        return bool(self._kwargs.get("preserve", False)) or getattr(self._schema.impl, "no_prune", False)

    @property
    def schema_name(self) -> str:
        return self._schema_name

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.deprecation:
            legacy.warn(self.deprecation)
        merged = {**self._kwargs, **kwargs}
        return call_op(self._schema, inputs, merged, origin=caller_origin() or self._origin)


def validate_args_partial(schema: OpSchema, given: dict[str, Any]) -> None:
    """Checks constructor arguments early (required ones may still come at call time)."""
    try:
        validate_args(schema, given)
    except ArgumentError as e:
        if "is required" not in str(e):
            raise


def class_path(schema: OpSchema) -> str:
    """The op's class under `ops`: `readers.File`, `CropMirrorNormalize`."""
    return ".".join([*schema.name.split(".")[:-1], schema.class_name])


def make_class(schema: OpSchema, name: str | None = None) -> type:
    """`ops.Resize`: the class API for one schema, under its class name or the old name `name` (a
    path under `ops` for the old names that live in a namespace); its calls warn where DALI
    deprecates that name or the op (ops/legacy.py)."""
    old = name or class_path(schema)
    attrs: dict[str, Any] = {"_schema": schema, "__doc__": _docstring(schema),
                             "_schema_name": old.replace(".", "__")}  # DALI's: `readers__File`
    if schema.name in legacy.OPS:
        new = legacy.OPS[schema.name]
        attrs["deprecation"] = legacy.message(f"ops.{old}", new and f"fn.{new}")
    elif name in legacy.DEPRECATED_CLASSES or name in legacy.CLASSES:
        # the functional op is named as the replacement, for the class API too (as DALI does)
        attrs["deprecation"] = legacy.message(f"ops.{old}", f"fn.{schema.name}")
    return type(old.split(".")[-1], (OpClass,), attrs)


def _docstring(schema: OpSchema) -> str:
    lines = [schema.doc or schema.name, "", f"Devices: {', '.join(schema.devices)}.", "", "Arguments:"]
    for a in schema.args:
        default = "required" if a.required else f"default {a.default!r}"
        per_sample = "; may be per-sample" if a.tensor else ""
        lines.append(f"  {a.name} ({a.kind}, {default}{per_sample}): {a.doc}")
    return "\n".join(lines)
