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
names, functions as `module:qualname`. Only arguments that differ from the op's defaults are written.
"""
from __future__ import annotations

import difflib
import enum
from typing import TYPE_CHECKING, Any

import yaml

from ..errors import SerializationError, TorchDaliError
from ..graph.graph import Graph
from ..graph.node import DataNode
from ..ops._registry import all_schemas, lookup
from ..ops._schema import validate_args
from .callables import function_ref, resolve_function

if TYPE_CHECKING:
    from ..graph.pipeline import Pipeline

VERSION = 1
MAX_BYTES = 16 * 2**20  # a pipeline is a page of text; refuse anything absurdly large before parsing
PIPELINE_KEYS = ("batch_size", "num_threads", "device_id", "seed", "prefetch_queue_depth", "exec_async",
                 "exec_pipelined")


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
    ops = []
    for node in graph.reachable():
        schema = node.schema
        where = f"{schema.display_name()} '{node.name}'"
        args = {}
        for a in schema.args:
            v = node.args.get(a.name, a.default)
            if a.required or v != a.default:
                args[a.name] = _encode(v, a.kind, f"{where} argument `{a.name}`")
        entry: dict[str, Any] = {"name": node.name, "op": schema.name, "device": node.device,
                                 "seed": node.seed}
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


def dump_pipeline(pipe: "Pipeline") -> str:
    params = {"batch_size": pipe.batch_size, "num_threads": pipe.num_threads, "device_id": pipe.device_id,
              "seed": pipe.seed, "prefetch_queue_depth": pipe.prefetch_queue_depth,
              "exec_async": pipe.exec_async, "exec_pipelined": pipe.exec_pipelined}
    doc = graph_to_dict(pipe.graph, params)
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=100)


# -- reading ---------------------------------------------------------------------------------------

class _LineLoader(yaml.SafeLoader):
    """A safe loader that remembers the line of every mapping, for error messages."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        mapping = super().construct_mapping(node, deep=deep)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping


def _parse(text: str | bytes, source: str) -> dict[str, Any]:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise SerializationError(f"{source}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    if len(text) > MAX_BYTES:
        raise SerializationError(f"{source}: {len(text)} characters is more than a pipeline file may "
                                 f"hold ({MAX_BYTES})")
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):  # anchors can expand without bound
                line = event.start_mark.line + 1
                raise SerializationError(f"{source} line {line}: YAML aliases (*name) are not allowed in "
                                         "a pipeline file; write the value out")
        doc = yaml.load(text, Loader=_LineLoader)  # noqa: S506 - _LineLoader is a SafeLoader
    except yaml.YAMLError as e:
        raise SerializationError(f"{source}: not valid YAML: {e}") from None
    except RecursionError:
        raise SerializationError(f"{source}: nested too deeply to be a pipeline") from None
    if not isinstance(doc, dict) or "torch_dali_pipeline" not in doc:
        raise SerializationError(f"{source}: not a torch_dali pipeline (no `torch_dali_pipeline: {VERSION}` key)")
    if doc["torch_dali_pipeline"] != VERSION:
        raise SerializationError(f"{source}: format version {doc['torch_dali_pipeline']!r} is not supported "
                                 f"(this torch_dali reads version {VERSION})")
    if not isinstance(doc.get("ops"), list) or not doc["ops"]:
        raise SerializationError(f"{source} line {doc['__line__']}: `ops` must be a non-empty list")
    return doc


def _strip(d: Any, what: str = "value", source: str = "") -> dict[str, Any]:
    if not isinstance(d, dict):
        where = f"{source}: " if source else ""
        raise SerializationError(f"{where}{what} must be a mapping, got {type(d).__name__}")
    return {k: v for k, v in d.items() if k != "__line__"}


def _decode_args(schema: Any, raw: dict[str, Any], where: str, allow: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in _strip(raw, "`args`", where).items():
        arg = schema.arg(key)
        if arg is not None and arg.kind in ("callable", "source") and isinstance(value, str):
            value = resolve_function(value, where, allow)
        out[key] = value
    return out


def build_graph(doc: dict[str, Any], seed: int, source: str, allow: Any = None) -> Graph:
    graph = Graph(seed)
    outputs: dict[str, DataNode] = {}

    def ref(name: Any, line: int) -> DataNode:
        if not isinstance(name, str) or name not in outputs:
            raise SerializationError(f"{source} line {line}: input {name!r} is not the output of an "
                                     "op defined above it")
        return outputs[name]

    for entry in doc["ops"]:
        if not isinstance(entry, dict):
            raise SerializationError(f"{source}: each entry of `ops` must be a mapping, got {entry!r}")
        line = entry.get("__line__", "?")
        op_name = entry.get("op")
        try:
            schema = lookup(op_name)
        except (KeyError, TypeError):
            names = [s.name for s in all_schemas()]
            hint = difflib.get_close_matches(str(op_name), names, n=1)
            raise SerializationError(f"{source} line {line}: unknown op {op_name!r}"
                                     + (f" (did you mean {hint[0]!r}?)" if hint else "")) from None
        name = entry.get("name")
        where = f"{source} line {line}: {schema.display_name()} '{name}'"
        if name is not None and not isinstance(name, str):
            raise SerializationError(f"{where}: `name` must be a string")
        if not isinstance(entry.get("inputs") or [], list):
            raise SerializationError(f"{where}: `inputs` must be a list of op names")
        unknown = set(_strip(entry)) - {"name", "op", "device", "seed", "args", "inputs", "arg_inputs"}
        if unknown:
            raise SerializationError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        device = entry.get("device", schema.devices[0])
        if not isinstance(device, str) or device not in schema.devices:
            raise SerializationError(f"{where}: device must be one of {', '.join(schema.devices)}, got {device!r}")
        raw_args = entry.get("args") or {}
        if not isinstance(raw_args, dict):
            raise SerializationError(f"{where}: `args` must be a mapping")
        try:
            args = _decode_args(schema, raw_args, where, allow)
            consts, _ = validate_args(schema, args)
        except TorchDaliError as e:
            arg_line = raw_args.get("__line__", line)
            raise SerializationError(f"{source} line {arg_line}: {e}") from None
        inputs = [ref(x, line) for x in entry.get("inputs") or []]
        arg_inputs = {k: ref(v, line) for k, v in _strip(entry.get("arg_inputs") or {}, "`arg_inputs`",
                                                             f"{source} line {line}").items()}
        for k in arg_inputs:
            a = schema.arg(k)
            if a is None or not a.tensor:
                raise SerializationError(f"{where}: `{k}` cannot be a per-sample input")
        seed_v = entry.get("seed")
        if seed_v is not None and (not isinstance(seed_v, int) or isinstance(seed_v, bool)):
            raise SerializationError(f"{where}: `seed` must be an integer, got {seed_v!r}")
        if not schema.min_inputs <= len(inputs) <= schema.max_inputs:
            raise SerializationError(f"{where}: expected {schema.min_inputs} to {schema.max_inputs} inputs, "
                                     f"got {len(inputs)}")
        try:
            node = graph.add_node(schema, device=device, args=consts, inputs=inputs, arg_inputs=arg_inputs,
                                  name=name, seed=seed_v, origin=f"{source}:{line}")
        except TorchDaliError as e:
            raise SerializationError(f"{source} line {line}: {e}") from None
        for d in node.outputs:
            outputs[d.name] = d
    outs = doc.get("outputs")
    if not isinstance(outs, list) or not outs:
        raise SerializationError(f"{source}: `outputs` must be a non-empty list of op names")
    graph.set_outputs([ref(o, doc["__line__"]) for o in outs])
    return graph


def load_graph_into(pipe: "Pipeline", text: str | bytes, source: str = "serialized pipeline",
                    allow: Any = None) -> None:
    doc = _parse(text, source)
    pipe._graph = build_graph(doc, pipe.seed, source, allow)


def load_pipeline(text: str | bytes | None, filename: str | None, overrides: dict[str, Any]) -> "Pipeline":
    from ..graph.pipeline import Pipeline
    if (text is None) == (filename is None):
        raise SerializationError("Pipeline.deserialize: give exactly one of `serialized_pipeline` or `filename`")
    source = "serialized pipeline"
    if filename is not None:
        source = str(filename)
        try:
            with open(filename, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise SerializationError(f"cannot read pipeline file {filename}: {e.strerror}") from None
    allow = overrides.pop("allow_modules", None)
    doc = _parse(text, source)  # type: ignore[arg-type]
    params = {k: v for k, v in _strip(doc.get("pipeline") or {}, "`pipeline`", source).items()
              if k in PIPELINE_KEYS}
    params.update(overrides)
    try:
        pipe = Pipeline(**params)
    except TorchDaliError as e:
        raise SerializationError(f"{source}: `pipeline`: {e}") from None
    except (TypeError, ValueError) as e:
        raise SerializationError(f"{source}: `pipeline` has a bad value: {e}") from None
    pipe._graph = build_graph(doc, pipe.seed, source, allow)
    return pipe
