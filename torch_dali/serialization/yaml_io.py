"""Pipelines as YAML: readable, diffable, versioned, loaded with a safe loader.

Format (version 1)::

    torch_dali_pipeline: 1
    pipeline: {batch_size: 16, num_threads: 2, device_id: 0, seed: 12, ...}
    ops:
    - {name: Reader, op: readers.mxnet, device: cpu, seed: 1234, args: {path: [...]}, inputs: []}
    - {name: __Resize_2, op: resize, device: gpu, inputs: [__Image_1],
       arg_inputs: {resize_shorter: __Uniform_3}, args: {interp_type: INTERP_LINEAR}}
    outputs: [__CropMirrorNormalize_4, Reader:1]

An output reference is a node name, with `:k` for output k > 0. Enums are written by their DALI
names, functions as `module:name`. An argument is written when it differs from the op's default or
was set explicitly (in the op call, the YAML read, or an override), even to its default value.
"""
from __future__ import annotations

import enum
from typing import Any, Callable, Protocol

import yaml

from ..errors import SerializationError
from ..graph.graph import Graph
from ..graph.node import DataNode
from .callables import Allow, allow_list, function_ref
from .document import parse, read_file
from .validate import PIPELINE_KEYS, PYTHON_ONLY, VERSION, validate  # noqa: F401 - PIPELINE_KEYS: configs


class Serializable(Protocol):
    """What `dump_pipeline` reads of a pipeline: its settings and its traced graph."""

    @property
    def batch_size(self) -> int: ...
    @property
    def num_threads(self) -> int: ...
    @property
    def device_id_setting(self) -> int | None: ...
    @property
    def seed(self) -> int: ...
    @property
    def seed_given(self) -> bool: ...
    @property
    def prefetch_queue_depth(self) -> int: ...
    @property
    def exec_async(self) -> bool: ...
    @property
    def exec_pipelined(self) -> bool: ...
    @property
    def graph(self) -> Graph: ...
    def output_dtype(self) -> list[Any]: ...
    def output_ndim(self) -> list[Any]: ...
    def output_layout(self) -> list[Any]: ...
    @property
    def stream_policy(self) -> Any: ...
    @property
    def concurrency(self) -> Any: ...


# -- writing ---------------------------------------------------------------------------------------

def _encode(value: Any, kind: str, where: str) -> Any:
    if isinstance(value, enum.Enum):
        return value.name
    if kind == "callable" and value is not None:
        return function_ref(value, where)
    if kind == "source" and value is not None:
        if not callable(value) or hasattr(value, "__next__"):
            raise SerializationError(
                f"{where}: a {type(value).__name__} cannot be written to YAML (its data would have to go "
                "into the file); give `source` a module-level function or generator function, or feed "
                "the pipeline with feed_input()")
        return function_ref(value, where)
    if isinstance(value, tuple):
        return [_encode(v, kind, where) for v in value]
    if isinstance(value, list):
        return [_encode(v, kind, where) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _encode(v, kind, where) for k, v in value.items()}
    raise SerializationError(f"{where}: cannot write a value of type {type(value).__name__} to YAML")


def _ref(d: DataNode) -> str:
    return d.name


def graph_to_dict(graph: Graph, pipeline: dict[str, Any]) -> dict[str, Any]:
    # a pipeline made without a seed (written as -1) keeps only the seeds given to ops: a load
    # draws anew, as DALI's does (and a DataLoader folds each rank into those draws)
    unseeded = pipeline.get("seed") == -1
    ops = []
    for node in graph.reachable():
        schema = node.schema
        where = f"{schema.display_name()} '{node.name}'"
        args = {}
        for a in schema.args:
            if a.name in node.arg_inputs:  # fed per sample (even a required argument): under arg_inputs
                continue
            v = node.args.get(a.name, a.default)
            if (schema.name, a.name) in PYTHON_ONLY:
                raise SerializationError(f"{where} argument `{a.name}`: a {type(v).__name__} cannot be written "
                                         f"to YAML: {PYTHON_ONLY[schema.name, a.name]}")
            if a.required or a.name in node.explicit or v != a.default:
                args[a.name] = _encode(v, a.kind, f"{where} argument `{a.name}`")
        entry: dict[str, Any] = {"name": node.name, "op": schema.name, "device": node.device}
        if node.seed_given or not unseeded:
            entry["seed"] = node.seed
        if args:
            entry["args"] = args
        entry["inputs"] = [_ref(d) for d in node.inputs]
        if node.arg_inputs:
            entry["arg_inputs"] = {k: _ref(d) for k, d in node.arg_inputs.items()}
        ops.append(entry)
    return {"torch_dali_pipeline": VERSION, "pipeline": pipeline, "ops": ops,
            "outputs": [_ref(d) for d in graph.outputs]}


class _Dumper(yaml.SafeDumper):
    pass


def _flow_short_lists(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    flow = len(data) <= 8 and all(isinstance(x, (int, float, str, bool)) and len(str(x)) < 40 for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _flow_short_lists)


def dump_pipeline(pipe: Serializable) -> str:
    params = {"batch_size": pipe.batch_size, "num_threads": pipe.num_threads, "device_id": pipe.device_id_setting,
              "seed": pipe.seed if pipe.seed_given else -1, "prefetch_queue_depth": pipe.prefetch_queue_depth,
              "exec_async": pipe.exec_async, "exec_pipelined": pipe.exec_pipelined}
    dtypes, ndims = pipe.output_dtype(), pipe.output_ndim()  # one per output (None: any)
    if any(d is not None for d in dtypes):
        params["output_dtype"] = [d.name if d is not None else None for d in dtypes]
    if any(n is not None for n in ndims):
        params["output_ndim"] = list(ndims)
    layouts = pipe.output_layout()
    if any(x is not None for x in layouts):
        params["output_layout"] = list(layouts)
    for key in ("stream_policy", "concurrency"):  # DALI's executor flags, by member name
        if getattr(pipe, key) is not None:
            params[key] = getattr(pipe, key).name
    doc = graph_to_dict(pipe.graph, params)
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=100)


# -- reading: one validator (validate.py) behind every loader -------------------------------------

def load_graph(text: str | bytes, seed: int | Callable[[dict[str, Any]], int], source: str = "serialized pipeline",
               allow: Allow | None = None) -> Graph:
    """The graph of a serialized pipeline, for an existing pipeline of seed `seed`, or of the seed
    `seed(settings)` returns given the document's settings (`deserialize_and_build`): the settings
    are checked, not applied."""
    doc = parse(text, source)
    _, graph, report = validate(doc, source, allow, seed=seed)
    if graph is None:
        raise report.error()
    return graph


def load_pipeline(text: str | bytes | None, filename: str | None, overrides: dict[str, Any],
                  make_pipeline: Callable[..., Any]) -> tuple[Any, Graph]:
    """(pipeline, graph) of a serialized pipeline: `make_pipeline(**settings)` (the Pipeline class)
    makes the pipeline from the document's settings and `overrides`; the caller gives it the graph."""
    if (text is None) == (filename is None):
        raise SerializationError("Pipeline.deserialize: give exactly one of `serialized_pipeline` or `filename`")
    source = "serialized pipeline"
    if filename is not None:
        source = str(filename)
        text = read_file(filename)
    allow = allow_list(overrides.pop("allow_modules", None), overrides.pop("allow_functions", None))
    doc = parse(text, source)  # type: ignore[arg-type]
    pipe, graph, report = validate(doc, source, allow, make_pipeline=make_pipeline, overrides=overrides)
    if pipe is None or graph is None:
        raise report.error()
    return pipe, graph
