"""The class API of the dynamic mode (DALI 2.4's `ndd._ops.Resize`, `ndd._ops.random.Uniform`,
...; `ndd.ops` here too, the name earlier DALI 2.x releases used): an op object is made once with
its arguments (`op = ndd._ops.Resize(size=[224, 224])`) and called on data with the per-sample
arguments (`op(images, resize_shorter=...)`), which run through the same path as the functions.

As in DALI 2.4, an object remembers its first call: a later call whose inputs or per-sample
arguments differ in kind (Tensor / Batch), dimensions or layout, or whose batch is larger than the
object's `max_batch_size` (1 where none was given), is a RuntimeError."""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from ...ops._schema import REQUIRED
from . import _device as D
from . import _invoke
from . import random as _random
from ._data import Batch, Tensor, as_tensor


class Operator:
    """An op as an object: `Op(max_batch_size=None, name=None, device="cpu", **arguments)`, then
    `op(*inputs, batch_size=None, **per_sample_arguments)` (`rng=` too for random ops)."""

    _schema_name = ""  # torch_dali's op name: "resize", "random.uniform"
    _is_stateful = False  # random ops: DALI checks their batch size against max_batch_size at once
    _has_random_state_arg = False
    _min_inputs = 0
    _max_inputs = 0
    _init_names: frozenset[str] = frozenset()
    _call_names: frozenset[str] = frozenset()
    _devices: tuple[str, ...] = ("cpu",)
    _required: tuple[str, ...] = ()  # arguments that are not per-sample and have no default

    def __init__(self, max_batch_size: int | None = None, name: str | None = None, device: Any = "cpu",
                 num_inputs: int | None = None, **kwargs: Any) -> None:
        cls = type(self).__name__
        for k in kwargs:
            if k not in self._init_names:
                raise TypeError(f"{cls}.__init__() got an unexpected keyword argument {k!r}")
            if isinstance(kwargs[k], Batch):  # DALI 2.4 refuses them too (TypeError)
                raise TypeError(f"{cls}.__init__(): argument {k!r} is a Batch; per-sample values go to the call")
        missing = [k for k in self._required if kwargs.get(k) is None]
        if missing:
            raise TypeError(f"{cls}.__init__() missing required keyword argument(s): {', '.join(missing)}")
        dev = D.device(device)  # an unknown device type is a ValueError
        backend = dev.device_type
        if backend not in self._devices and not (backend == "gpu" and "mixed" in self._devices):
            raise ValueError(f"ndd: operator {cls} has no {backend!r} implementation (it runs on "
                             f"{', '.join(self._devices)})")
        self._max_batch_size = max_batch_size
        self._name = name
        self._device = dev
        self._init_args = {k: v for k, v in kwargs.items() if v is not None}
        # DALI 2.4 draws a random op's stream from `rng` / the default RNG; its `seed` is not used
        self._init_args.pop("seed", None)
        self._meta: tuple[list[Any], dict[str, Any]] | None = None

    @staticmethod
    def _meta_of(x: Any, batched: bool, with_dtype: bool) -> tuple[Any, ...]:
        # in a batch call every input and argument is a batch (a Tensor is given to every sample);
        # an argument's dtype is left out: DALI converts arguments to the argument's type first
        t = x if isinstance(x, (Tensor, Batch)) else as_tensor(x)
        return (batched, t.ndim, t.layout, t.dtype if with_dtype else None)

    def _check(self, inputs: list[Any], kwargs: dict[str, Any], n: int | None) -> None:
        cls = type(self).__name__
        if self._is_stateful and n is not None and self._max_batch_size is not None and n > self._max_batch_size:
            raise RuntimeError(f"ndd: {cls}: batch of {n} samples, more than the max_batch_size "
                               f"{self._max_batch_size} the operator was made with")
        metas = ([self._meta_of(x, n is not None, True) for x in inputs],
                 {k: self._meta_of(v, n is not None, False) for k, v in kwargs.items()})
        if self._meta is None:
            self._meta = metas
            return
        head = f"ndd: {cls}: this call does not match the operator's first call:"
        limit = self._max_batch_size if self._max_batch_size is not None else 1
        if n is not None and n > limit:
            raise RuntimeError(f"{head} a batch of {n} samples, more than its max_batch_size {limit}")
        (ins0, args0), (ins1, args1) = self._meta, metas
        if len(ins0) != len(ins1):
            raise RuntimeError(f"{head} {len(ins1)} inputs instead of {len(ins0)}")
        for i, (a, b) in enumerate(zip(ins0, ins1)):
            if a != b:
                raise RuntimeError(f"{head} input {i} differs in kind, dimensions, layout or type "
                                   f"({_describe(b)} instead of {_describe(a)})")
        for k in sorted(set(args0) | set(args1)):
            if k not in args0:
                raise RuntimeError(f"{head} argument {k!r} was not given in the first call")
            if k not in args1:
                raise RuntimeError(f"{head} argument {k!r} of the first call is missing")
            if args0[k] != args1[k]:
                raise RuntimeError(f"{head} argument {k!r} differs in kind, dimensions or layout")

    def __call__(self, *inputs: Any, batch_size: int | None = None, **kwargs: Any) -> Any:
        cls = type(self).__name__
        rng = kwargs.pop("rng", None) if self._has_random_state_arg else None
        for k in kwargs:
            if k not in self._call_names:
                raise TypeError(f"{cls}.__call__() got an unexpected keyword argument {k!r}")
        inputs_ = [x for x in inputs if x is not None]
        if not self._min_inputs <= len(inputs_) <= self._max_inputs:
            raise TypeError(f"{cls}.__call__() takes {self._min_inputs}..{self._max_inputs} inputs, "
                            f"{len(inputs_)} given")
        call_args = {k: v for k, v in kwargs.items() if v is not None}
        batched = [x for x in [*inputs_, *call_args.values()] if isinstance(x, Batch)]
        n = batched[0].batch_size if batched else (int(batch_size) if batch_size is not None else None)
        self._check(inputs_, call_args, n)
        args = dict(self._init_args, **call_args)
        args["device"] = self._device.device_type
        if batch_size is not None:
            args["batch_size"] = batch_size
        draw = _random.draw_for_call(rng) if self._has_random_state_arg else None
        return _invoke.invoke(self._schema_name, inputs_, args, draw=draw)

    def __repr__(self) -> str:
        dev = getattr(self, "_device", None)  # readers keep their own attributes
        return f"<ndd op {type(self).__name__}{'' if dev is None else ' on ' + dev.device_type}>"


def _describe(meta: tuple[Any, ...]) -> str:
    is_batch, ndim, layout, dtype = meta
    return f"{'Batch' if is_batch else 'Tensor'} of {ndim} dims, layout {layout!r}, {dtype}"


def op_class(schema: Any, module: str) -> type:
    """The class of one op (its schema's CamelCase name), placed in `module`."""
    names = {n for a in schema.args for n in (a.name, *a.aliases)} | {"seed", "preserve", "bytes_per_sample_hint"}
    call_names = {n for a in schema.args if a.tensor for n in (a.name, *a.aliases)}
    required = tuple(a.name for a in schema.args if a.default is REQUIRED and not a.tensor)
    attrs = {
        "_schema_name": schema.name, "__module__": module, "_is_stateful": bool(schema.random),
        "_has_random_state_arg": bool(schema.random), "_min_inputs": schema.min_inputs,
        "_max_inputs": schema.max_inputs, "_init_names": frozenset(names - {"device", "name"}),
        "_call_names": frozenset(call_names), "_required": required, "_devices": tuple(schema.devices),
        "__doc__": f"{schema.doc}\n\nClass API of `{schema.name}`: {Operator.__doc__}",
    }
    return type(schema.class_name, (Operator,), attrs)


def build(root: ModuleType, schemas: list[Any], skip: set[str]) -> ModuleType:
    """Makes the `ops` namespace of `root` (a class per op at its module path: `ops.Resize`,
    `ops.random.Uniform`, `ops.decoders.Image`); readers stay at `root.readers`, as in DALI."""
    ops = _module(f"{root.__name__}.ops")
    for schema in schemas:
        name = schema.name
        parts = name.split(".")
        if name.startswith("_") or name in skip or "readers" in parts:
            continue
        target = ops
        for depth, part in enumerate(parts[:-1]):
            sub = getattr(target, part, None)
            if not isinstance(sub, ModuleType):
                sub = _module(f"{ops.__name__}." + ".".join(parts[: depth + 1]))
                setattr(target, part, sub)
            target = sub
        setattr(target, schema.class_name, op_class(schema, target.__name__))
    ops.Operator = Operator
    return ops


def _module(name: str) -> ModuleType:
    mod = sys.modules.get(name)
    if mod is None:
        mod = ModuleType(name, "class API of torch_dali's dynamic mode")
        sys.modules[name] = mod
    return mod

