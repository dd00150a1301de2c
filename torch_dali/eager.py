"""Eager calls for notebooks and debugging: any op applied directly to data, as DALI's dynamic mode
offers. `torch_dali.eager.rotate(image, angle=30)` runs the same op, kernels and seeds as inside a
pipeline: it is a one-op pipeline (external sources feeding the op), built once per signature and
cached, so repeated calls cost one run.

Data: one sample (a torch tensor or NumPy array: returns one tensor), a list of samples (returns a
list) or a TensorList (returns a TensorList). Samples on a CUDA device run the op on that GPU.
`layout=` names the samples' layout (default: the op's usual, e.g. "HWC" for images). Per-sample
arguments are torch tensors or NumPy arrays with one row per sample (`angle=torch.tensor([10., 20.])`);
Python numbers and lists are constants for every sample. Random ops take `seed=`: the result equals
the first batch of a pipeline `@pipeline_def(seed=seed)` whose sources feed this op, on every call;
without a seed each call draws anew. Ops without data inputs (random draws) take `batch_size=`. Ops
with several outputs return a tuple.
"""
from __future__ import annotations

import sys
import threading
from types import ModuleType
from typing import Any, Callable

import numpy as np
import torch

from . import fn as _fn
from . import ops as _ops  # noqa: F401 - registers every schema
from .errors import ArgumentError
from .graph.node import DataNode, set_debug_active
from .graph.pipeline import set_debug_runner
from .ops._registry import all_schemas, lookup, set_debug_call
from .ops.arg_input_types import data_dtype
from .rng import derive_seed
from .ops._schema import OpSchema
from .tensor_list import TensorList

_CACHE: dict[Any, Any] = {}
_LOCK = threading.Lock()
_CACHE_MAX = 64  # pipelines kept; the oldest is shut down beyond this


def _samples(data: Any) -> tuple[list[torch.Tensor], str, str]:
    """(samples, kind: one | list | tensorlist, layout found)."""
    if isinstance(data, TensorList):
        return list(data), "tensorlist", data.layout()
    if isinstance(data, (list, tuple)):
        return [torch.as_tensor(np.asarray(x)) if not isinstance(x, torch.Tensor) else x for x in data], "list", ""
    if isinstance(data, np.ndarray):
        data = torch.from_numpy(np.ascontiguousarray(data))
    if isinstance(data, torch.Tensor):
        return [data], "one", ""
    raise ArgumentError(f"eager: data must be a tensor, an array, a list of them or a TensorList, got "
                        f"{type(data).__name__}")


def _per_sample(v: Any, n: int) -> list[torch.Tensor] | None:
    """A per-sample argument (tensor/array with one row per sample) as n tensors, else None."""
    if isinstance(v, np.ndarray):
        v = torch.from_numpy(np.ascontiguousarray(v))
    if isinstance(v, torch.Tensor) and v.dim() >= 1 and v.shape[0] == n:
        return [v[i].reshape(v.shape[1:]) if v.dim() > 1 else v[i].reshape(1) for i in range(n)]
    return None


def _device_of(batches: list[list[torch.Tensor]]) -> torch.device:
    devs = {t.device for b in batches for t in b}
    if len(devs) > 1:
        raise ArgumentError(f"eager: samples are on several devices {sorted(map(str, devs))}")
    return devs.pop() if devs else torch.device("cpu")


def _op_device(schema: OpSchema, device: torch.device) -> str:
    where = "gpu" if device.type == "cuda" else "cpu"
    return ("mixed" if "mixed" in schema.devices and where == "gpu" and schema.input_devices == "cpu"
            else where if where in schema.devices else schema.devices[0])


_FED = "__fed"  # the name of a one-op pipeline's external source fed from a debug pipeline's feed_input


def _build(schema: OpSchema, n_data: int, n: int, device: torch.device, layouts: tuple[str, ...],
           const: dict[str, Any], tensor_args: tuple[str, ...], seed: int | None, num_threads: int,
           arg_layouts: dict[str, str] | None = None, op_seed: int | None = None) -> Any:
    """The one-op pipeline. `seed` is its pipeline seed (an op seed derived from it, as
    `@pipeline_def(seed=...)` gives); `op_seed`, when given, is the op's own seed."""
    from .graph.pipeline_def import pipeline_def
    gpu = device.type == "cuda"
    where = "gpu" if gpu else "cpu"
    op_device = _op_device(schema, device)
    target = _fn
    for part in schema.name.split("."):
        target = getattr(target, part)
    kw: dict[str, Any] = {} if seed is None else {"seed": seed}

    @pipeline_def(batch_size=n, num_threads=num_threads, device_id=(device.index or 0) if gpu else None,
                  exec_async=False, exec_pipelined=False, prefetch_queue_depth=1, **kw)
    def one_op() -> Any:
        src_dev = "cpu" if op_device == "mixed" else where
        ins = [_fn.external_source(name=f"in{k}", device=src_dev, layout=layouts[k] or None)
               for k in range(n_data)]
        targs = {a: _fn.external_source(name=f"arg_{a}", device="cpu", layout=(arg_layouts or {}).get(a) or None)
                 for a in tensor_args}
        # an argument whose layout starts with "F" holds values per frame (as fn.per_frame marks them)
        targs = {a: _fn.per_frame(v) if (arg_layouts or {}).get(a, "").startswith("F") else v
                 for a, v in targs.items()}
        own = {} if op_seed is None else {"seed": op_seed}
        if schema.name == "external_source" and const.get("source") is None:
            own["name"] = _FED  # a debug pipeline's fed source: fed under this name
        out = target(*ins, device=op_device, **const, **targs, **own)
        return tuple(out) if isinstance(out, (list, tuple)) else out
    pipe = one_op()
    pipe.build()
    return pipe, pipe.state_dict()


def _call(schema: OpSchema, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    seed = kwargs.pop("seed", None)
    layout = kwargs.pop("layout", None)
    num_threads = int(kwargs.pop("num_threads", 1))
    batch_size = kwargs.pop("batch_size", None)
    datas = [_samples(a) for a in args]
    if datas:
        n = len(datas[0][0])
        if any(len(d[0]) != n for d in datas):
            raise ArgumentError(f"eager.{schema.name}: the inputs have different numbers of samples "
                                f"{[len(d[0]) for d in datas]}")
        kind = datas[0][1]
    else:
        if batch_size is None:
            raise ArgumentError(f"eager.{schema.name} takes no data: give batch_size=")
        n, kind = int(batch_size), "list"
    if n < 1:
        raise ArgumentError(f"eager.{schema.name}: no samples")
    tensor_args, const = {}, {}
    for k, v in kwargs.items():
        per = _per_sample(v, n) if (a := schema.arg(k)) is not None and a.tensor else None
        if per is not None:  # rows of any number type, read as the type the op reads (int32, float32)
            want = data_dtype(a.kind)
            tensor_args[k] = per if want is None else [t.to(want) for t in per]
        else:
            const[k] = v
    # 3-D samples without a layout are images, HWC (as DALI's image ops take them by default)
    layouts = tuple((layout or d[2] or "HWC") if d[0][0].dim() == 3 else (layout or d[2]) for d in datas)
    device = _device_of([d[0] for d in datas])
    outs = _run(schema, [d[0] for d in datas], layouts, n, device, const, tensor_args, seed, num_threads, None)
    results = [_shape_like(o, kind) for o in outs]
    return results[0] if len(results) == 1 else tuple(results)


def _run(schema: OpSchema, datas: list[list[torch.Tensor]], layouts: tuple[str, ...], n: int, device: torch.device,
         const: dict[str, Any], tensor_args: dict[str, list[torch.Tensor]], seed: int | None, num_threads: int,
         iteration: int | None, arg_layouts: dict[str, str] | None = None) -> list[TensorList]:
    """Runs the cached one-op pipeline for this signature on the given samples."""
    key = (schema.name, len(datas), n, str(device), layouts, repr(sorted(const.items())), tuple(sorted(tensor_args)),
           tuple(sorted((arg_layouts or {}).items())),
           seed, num_threads, tuple((d[0].dtype, d[0].dim()) for d in datas),
           # an external source keeps its first batch's type and dimensionality (as in DALI)
           tuple((a, per[0].dtype, per[0].dim()) for a, per in sorted(tensor_args.items())))
    with _LOCK:
        entry = _CACHE.pop(key, None)
        if entry is None:
            entry = _build(schema, len(datas), n, device, layouts, const, tuple(sorted(tensor_args)), seed,
                           num_threads, arg_layouts)
            while len(_CACHE) >= _CACHE_MAX:
                _CACHE.pop(next(iter(_CACHE)))[0].shutdown()
        _CACHE[key] = entry  # most recently used last
        pipe, first = entry
        if iteration is not None:  # draws are a pure function of (seed, iteration, sample)
            pipe.load_state_dict({**first, "iteration": int(iteration)})
        elif seed is not None:  # a seed pins the draws: every call is the pipeline's first batch
            pipe.load_state_dict(first)
        for k, d in enumerate(datas):
            pipe.feed_input(f"in{k}", d)
        for name, per in tensor_args.items():
            pipe.feed_input(f"arg_{name}", per)
        return list(pipe.run())


def apply(name: str, inputs: list[TensorList], args: dict[str, Any], *, batch_size: int | None = None,
          device: str | None = None, draw: int | None = None, num_threads: int = 1) -> tuple[TensorList, ...]:
    """One op on whole batches, the seam for front ends that hold their own batch objects (the
    dynamic mode, torch_dali.experimental.dynamic). `inputs` are TensorLists (their layouts are the
    inputs' layouts); an argument given as a TensorList is per-sample (one sample per input sample),
    any other value is a constant (a TensorList's layout goes with it: `"F*"` marks a per-frame
    argument). `device` ("cpu" / "gpu", default: where the inputs are) picks the
    op's backend: "gpu" with host inputs runs a mixed op (decoders) or copies the inputs to the GPU.
    `draw` picks the random stream of a random op: outputs are a pure function of (op, arguments,
    draw), so equal draws give equal results. Returns the outputs as TensorLists."""
    schema = lookup(name)
    n = len(inputs[0]) if inputs else batch_size
    if n is None or n < 1:
        raise ArgumentError(f"{name}: no samples (an op without inputs needs a batch size)")
    if any(len(t) != n for t in inputs):
        raise ArgumentError(f"{name}: the inputs have different numbers of samples {[len(t) for t in inputs]}")
    datas = [list(t.samples) for t in inputs]
    where = torch.device("cpu") if not datas else _device_of(datas)
    if device == "gpu" and where.type != "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(f"{name}: device='gpu' needs a CUDA device; none is available")
        where = torch.device("cuda", torch.cuda.current_device())
        if _op_device(schema, where) != "mixed":
            datas = [[x.to(where) for x in d] for d in datas]
    elif device == "cpu" and where.type == "cuda":
        raise ArgumentError(f"{name}: device='cpu' cannot take inputs on the GPU; copy them with .cpu()")
    tensor_args, const, arg_layouts = {}, {}, {}
    for k, v in args.items():
        if isinstance(v, TensorList):
            if len(v) != n:
                raise ArgumentError(f"{name}: argument {k!r} has {len(v)} samples, the batch {n}")
            tensor_args[k] = [x.cpu() for x in v.samples]
            if v.layout():
                arg_layouts[k] = v.layout()  # "F*": a per-frame argument
        else:
            const[k] = v
    layouts = tuple(t.layout() for t in inputs)  # as given: ops without one treat data as a pipeline does
    return tuple(_run(schema, datas, layouts, n, where, const, tensor_args, 0 if draw is not None else None,
                      num_threads, draw, arg_layouts))


def _shape_like(tl: TensorList, kind: str) -> Any:
    if kind == "tensorlist":
        return tl
    samples = list(tl)
    return samples[0] if kind == "one" else samples


def reset() -> None:
    """Shuts down the cached pipelines (their threads and memory)."""
    with _LOCK:
        while _CACHE:
            _CACHE.popitem()[1][0].shutdown()


def _make(schema: OpSchema) -> Callable[..., Any]:
    def call(*data: Any, **kwargs: Any) -> Any:
        return _call(schema, data, dict(kwargs))
    call.__name__ = schema.name.split(".")[-1]
    call.__qualname__ = schema.name
    call.__doc__ = f"Eager `fn.{schema.name}`: {schema.doc}\n\n(see torch_dali.eager)"
    return call


def _generate() -> None:
    this = sys.modules[__name__]
    for schema in all_schemas():
        if schema.name.startswith("readers.") or schema.name in ("external_source",):
            continue  # sources: nothing to apply them to
        parts = schema.name.split(".")
        target: Any = this
        for depth, part in enumerate(parts[:-1]):
            full = f"{__name__}." + ".".join(parts[: depth + 1])
            sub = sys.modules.get(full)
            if sub is None:
                sub = ModuleType(full)
                sys.modules[full] = sub
                setattr(target, part, sub)
            target = sub
        setattr(target, parts[-1], _make(schema))


_generate()


# -- debug mode (DALI's experimental `@pipeline_def(debug=True)`) --------------------------------
#
# A debug pipeline's run() calls its definition; every op the definition calls runs at once on real
# batches and returns a DataNodeDebug holding its outputs (`.get()`), which later ops take as inputs
# and Python code can print or inspect. Each call site (the n-th op call of an iteration) keeps its
# own one-op pipeline across iterations, so readers go on through their data and random ops draw
# new values, each seeded as the traced graph seeds the op in that place (so a debug run draws what
# the ordinary pipeline draws).

_DEBUG = threading.local()


class DataNodeDebug(DataNode):
    """An op's output in debug mode: a DataNode that holds its batch."""

    __slots__ = ("_data", "_label")

    def __init__(self, data: TensorList, label: str, device: str) -> None:
        super().__init__(None, 0, device)  # type: ignore[arg-type] - no graph node behind it
        self._data = data
        self._label = label

    @property
    def name(self) -> str:
        return self._label

    def get(self) -> TensorList:
        """The batch (a TensorListCPU / TensorListGPU)."""
        return self._data

    def __repr__(self) -> str:
        data = repr(self._data).replace("\n", "\n" + " " * 9)
        return f'DataNodeDebug(\n    name="{self._label}",\n    data={data})'

    __str__ = __repr__


class _DebugRun:
    def __init__(self, pipe: Any) -> None:
        self.pipe = pipe
        self.calls = 0
        self.seeded = 0  # ops that are not device copies, counted as a traced graph counts them


def _debug_batch(op: str, x: Any) -> TensorList:
    if isinstance(x, DataNodeDebug):
        return x.get()
    if isinstance(x, TensorList):
        return x
    if isinstance(x, DataNode):
        raise ArgumentError(f"{op}: a DataNode from a traced graph cannot feed a debug-mode pipeline")
    if isinstance(x, (list, tuple)) and x and not isinstance(x[0], (int, float, bool)):
        return TensorList([torch.as_tensor(np.asarray(v)) if not isinstance(v, torch.Tensor) else v for v in x])
    raise ArgumentError(f"{op}: in debug mode an input must be an op's output, a TensorList or a list of "
                        f"samples, got {type(x).__name__}")


def _debug_call(schema: OpSchema, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    run = getattr(_DEBUG, "run", None)
    if run is None:
        return NotImplemented
    op = schema.display_name()
    kwargs = dict(kwargs)
    name = kwargs.pop("name", None)
    seed = kwargs.pop("seed", None)
    device = kwargs.pop("device", None)
    batches = [_debug_batch(op, x) for x in inputs]
    pipe = run.pipe
    n = len(batches[0]) if batches else pipe.batch_size
    tensor_args: dict[str, list[torch.Tensor]] = {}
    const: dict[str, Any] = {}
    arg_layouts: dict[str, str] = {}
    for k, v in kwargs.items():
        if isinstance(v, (DataNodeDebug, TensorList)):
            tl = _debug_batch(op, v)
            if len(tl) != n:
                raise ArgumentError(f"{op}: argument {k!r} has {len(tl)} samples, the batch {n}")
            tensor_args[k] = [x.cpu() for x in tl]
            if tl.layout():
                arg_layouts[k] = tl.layout()
        else:
            const[k] = v
    where = torch.device("cpu")
    if device in ("gpu", "mixed") or any(t.is_cuda for b in batches for t in b):
        where = torch.device("cuda", pipe.device_id or 0)
    layouts = tuple(b.layout() for b in batches)
    call = run.calls
    run.calls += 1
    seeded = run.seeded  # the op's seed is the one the traced graph gives the op in this place
    if schema.name != "copy":
        run.seeded += 1
    # a callable or iterator argument (an external source's `source`) is made anew by each run of
    # the definition: the op keeps the one its first iteration gave, as its other state
    fixed = {k: (type(v).__name__ if callable(v) or hasattr(v, "__next__") else v) for k, v in const.items()}
    sig = (schema.name, len(batches), n, str(where), layouts, repr(sorted(fixed.items())),
           tuple(sorted(tensor_args)), tuple(sorted(arg_layouts.items())),
           tuple((b[0].dtype, b[0].dim()) if len(b) else None for b in batches))
    ops = pipe.__dict__.setdefault("debug_ops", {})
    entry = ops.get(call)
    if entry is None or entry[0] != sig:
        if entry is not None:
            entry[1].shutdown()
        op_seed = seed if seed is not None else derive_seed(pipe.seed, seeded)
        entry = (sig, _build(schema, len(batches), n, where, layouts, const, tuple(sorted(tensor_args)), None,
                             pipe.num_threads, arg_layouts, op_seed)[0])
        ops[call] = entry
    one = entry[1]
    if schema.name == "external_source" and const.get("source") is None:  # data from feed_input
        fed = pipe.__dict__.get("debug_fed", {}).get(str(name), [])
        if not fed:
            raise ArgumentError(f"{op} {name!r}: no data fed for this iteration; call "
                                f"pipe.feed_input({name!r}, batch) before each run()")
        data, fed_layout = fed.pop(0)
        one.feed_input(_FED, data, layout=fed_layout)
    for k, b in enumerate(batches):
        one.feed_input(f"in{k}", list(b), layout=b.layout() or None)
    for k, per in tensor_args.items():
        one.feed_input(f"arg_{k}", per)
    outs = list(one.run())
    label = name or f"__{schema.display_name()}_{call}"
    nodes = [DataNodeDebug(o, label if i == 0 else f"{label}:{i}", "gpu" if o.is_cuda else "cpu")
             for i, o in enumerate(outs)]
    return nodes[0] if len(nodes) == 1 else tuple(nodes)


def _flatten(outs: Any) -> list[Any]:
    if isinstance(outs, (list, tuple)):
        return [x for o in outs for x in _flatten(o)]
    return [outs]


def _debug_run(pipe: Any, definition: Callable[[], Any]) -> tuple[TensorList, ...]:
    """One iteration of a debug pipeline: the definition called with ops running at once."""
    if getattr(_DEBUG, "run", None) is not None:
        raise ArgumentError("debug mode: a debug pipeline cannot run inside another one's definition")
    _DEBUG.run = _DebugRun(pipe)
    set_debug_active(True)
    try:
        outs = definition()
    finally:
        _DEBUG.run = None
        set_debug_active(False)
    if outs is None:
        return ()
    return tuple(_debug_batch("debug pipeline output", o) for o in _flatten(outs))


set_debug_call(_debug_call)
set_debug_runner(_debug_run)
