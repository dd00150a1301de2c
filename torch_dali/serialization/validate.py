"""The one validator of a pipeline document, used by every loader and by `torch-dali validate`.

It goes on after a problem where it can (each setting, each op, each argument, each reference) and
reports every one as `FILE line N: message`; a Graph (and a Pipeline) is made only when there are
none. `Pipeline.deserialize`, `deserialize_and_build`, `configs.load` and `configs.check` all come
through `validate()`, so what loads and what `torch-dali validate` calls OK are the same. The
pipeline layer sits above this one: its callers hand in how a Pipeline is made (`make_pipeline`).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import types
from ..errors import SerializationError, TorchDaliError
from ..graph.graph import Graph
from ..graph.node import DataNode
from ..ops._registry import all_schemas, lookup
from ..ops._schema import COMMON_ARGS, OpSchema, coerce
from .callables import Allow, resolve_function
from .document import Mapping, plain

VERSION = 1
TOP_KEYS = ("torch_dali_pipeline", "pipeline", "ops", "outputs")
OP_KEYS = ("name", "op", "device", "seed", "args", "inputs", "arg_inputs")
PIPELINE_KEYS = ("batch_size", "num_threads", "device_id", "seed", "prefetch_queue_depth", "exec_async",
                 "exec_pipelined", "output_dtype", "output_ndim", "output_layout", "stream_policy", "concurrency")
# Arguments that hold a live Python object: a YAML file cannot give one.
PYTHON_ONLY = {("readers.dataset", "dataset"): "a dataset is a Python object (see torch_dali.from_dataset)"}
# What a file may ask for: a YAML file is untrusted, and these sizes decide the memory a pipeline
# takes before any data is read (a batch of 10**9 samples, a queue of 10**6 batches, a random
# tensor of 10**10 values per sample; 10**5 threads: "can't start new thread" at the first batch,
# the machine's thread limit spent). Well above what training uses.
MAX_BATCH_SIZE = 1 << 20
MAX_QUEUE_DEPTH = 256
MAX_THREADS = 1024
MAX_SHAPE_ELEMENTS = 1 << 28  # one sample of a `shape` argument: 1 GiB of float32
SHOWN = 20  # problems in one loading error; `torch-dali validate` lists up to MAX_PROBLEMS
MAX_PROBLEMS = 200


@dataclass
class Report:
    source: str
    problems: list[str] = field(default_factory=list)

    def bad(self, line: Any, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"{self.source} line {line}: {message}")
        elif len(self.problems) == MAX_PROBLEMS:
            self.problems.append(f"{self.source}: more than {MAX_PROBLEMS} problems; the rest are not listed")

    def error(self) -> SerializationError:
        more = len(self.problems) - SHOWN
        return SerializationError("\n".join(self.problems[:SHOWN])
                                  + (f"\n... and {more} more (torch-dali validate lists them)" if more > 0 else ""))


def _shown(value: Any, limit: int = 80) -> str:
    """A value as an error message quotes it: short, whatever the file held."""
    text = repr(plain(value))
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _hint(word: Any, choices: Any, quote: str = "`") -> str:
    found = difflib.get_close_matches(str(word), list(choices), n=1)
    return f" (did you mean {quote}{found[0]}{quote}?)" if found else ""


def _header(doc: Any, r: Report) -> bool:
    """Is this a pipeline document of a version we read? Reports unknown top-level keys."""
    if not isinstance(doc, Mapping) or "torch_dali_pipeline" not in doc:
        r.bad(1, f"not a torch_dali pipeline (no `torch_dali_pipeline: {VERSION}` key)")
        return False
    if doc["torch_dali_pipeline"] != VERSION:
        r.bad(doc.key_lines["torch_dali_pipeline"], f"format version {doc['torch_dali_pipeline']!r} is not "
              f"supported (this torch_dali reads version {VERSION})")
        return False
    for key in doc:
        if key not in TOP_KEYS:
            r.bad(doc.key_lines[key], f"unknown top-level key `{key}`" + _hint(key, TOP_KEYS))
    return True


def _settings(doc: Mapping, r: Report) -> tuple[dict[str, Any], int]:
    """The `pipeline` section's known settings, and its line."""
    params = doc.get("pipeline")
    line = doc.key_lines.get("pipeline", doc.line)
    if params is None:
        return {}, line
    if not isinstance(params, Mapping):
        r.bad(line, f"`pipeline` must be a mapping of settings, got {type(params).__name__}")
        return {}, line
    for key in params:
        if key not in PIPELINE_KEYS:
            r.bad(params.key_lines[key], f"unknown pipeline setting `{key}`" + _hint(key, PIPELINE_KEYS))
    out = {k: plain(v) for k, v in params.items() if k in PIPELINE_KEYS}
    for key, most in (("batch_size", MAX_BATCH_SIZE), ("prefetch_queue_depth", MAX_QUEUE_DEPTH),
                      ("num_threads", MAX_THREADS)):
        v = out.get(key)
        values = list(v.values()) if isinstance(v, dict) else [v]  # depth: {cpu_size, gpu_size} too
        if any(isinstance(x, int) and not isinstance(x, bool) and x > most for x in values):
            r.bad(params.key_lines[key], f"`{key}` {_shown(v)} is more than a file may ask for ({most})")
            out.pop(key)
    if "output_dtype" in out:  # type names (FLOAT, UINT8) or null, one per output
        out["output_dtype"] = _dtype_names(out["output_dtype"], params.key_lines["output_dtype"], r)
    return out, params.line


def _dtype_names(value: Any, line: int, r: Report) -> Any:
    names = value if isinstance(value, list) else [value]
    known = [n for n in names if n is None or (isinstance(n, str) and n in types.DALIDataType.__members__)]
    if len(known) != len(names):
        r.bad(line, f"`output_dtype` must be type names such as FLOAT (or null), one per output, got "
                    f"{_shown(value)}")
        return None
    dtypes = [None if n is None else types.DALIDataType[n] for n in names]
    return dtypes if isinstance(value, list) else dtypes[0]


def _check_shape(label: str, shape: Any) -> None:
    """A `shape` argument (the size of each sample an op makes) within MAX_SHAPE_ELEMENTS."""
    dims = shape if isinstance(shape, (list, tuple)) else [shape]
    n = 1
    for d in dims:
        if isinstance(d, int) and not isinstance(d, bool) and d > 0:
            n *= d
    if n > MAX_SHAPE_ELEMENTS:
        raise SerializationError(f"{label}: `shape` {_shown(shape)} makes samples of {n} values, more than a "
                                 f"file may ask for ({MAX_SHAPE_ELEMENTS})")


#: arguments besides `shape` that set the size of each sample an op makes: the values of one group
#: multiply (`resize_shorter` S: at least S x S; `resize_longer` L: up to L x L, as large as an image
#: gets); `bbox_rotate`'s `size` is the image's, not made. `pad`'s `align` and `mel_filter_bank`'s
#: `nfilter` were missing (align 73000 on two axes: a 16 GB sample from a 3-line op)
_SIZE_GROUPS = (("size",), ("resize_x", "resize_y", "resize_z"), ("resize_shorter",), ("resize_longer",),
                ("crop",), ("crop_h", "crop_w", "crop_d"), ("output_size",), ("sizes",), ("num_classes",),
                ("nfft",), ("out_length",), ("align",), ("nfilter",))
_SQUARED = (("resize_shorter",), ("resize_longer",))


def _check_sizes(label: str, op: str, consts: dict[str, Any], name: str) -> None:
    """The size arguments of one op, in the group of argument `name` just read, within
    MAX_SHAPE_ELEMENTS (a YAML `resize` to 10**5 x 10**5 makes samples of 10**10 pixels, 120 GB as float RGB;
    `one_hot` of 10**9 classes 4 GB a sample)."""
    for group in (g for g in _SIZE_GROUPS if name in g):
        given = [consts[a] for a in group if consts.get(a) is not None and (op, a) != ("bbox_rotate", "size")]
        if not given:
            continue
        n = 1
        for v in given:
            for d in (v if isinstance(v, (list, tuple)) else [v]):
                if isinstance(d, (int, float)) and not isinstance(d, bool) and d > 1 and d == d:
                    n *= min(d, 2.0 ** 64) ** (2 if group in _SQUARED else 1)
        if n > MAX_SHAPE_ELEMENTS:
            names = ", ".join(f"`{a}` {_shown(consts[a])}" for a in group if consts.get(a) is not None)
            raise SerializationError(f"{label}: {names} asks for samples of {int(n)} values or more, more than "
                                     f"a file may ask for ({MAX_SHAPE_ELEMENTS})")


def _make_pipeline(make: Callable[..., Any], params: dict[str, Any], line: int, r: Report) -> Any:
    try:
        return make(**params)
    except (TorchDaliError, TypeError, ValueError) as e:
        r.bad(line, f"`pipeline`: {e}")
        return None


class _Ops:
    """Walks `ops` once: checks each entry and adds the good ones to a graph."""

    def __init__(self, doc: Mapping, seed: int, r: Report, allow: Allow | None) -> None:
        self.doc, self.r, self.allow = doc, r, allow
        self.graph = Graph(seed)
        self.outputs: dict[str, DataNode] = {}
        self.loose: set[str] = set()  # ops that could not be checked: any `name:k` is accepted

    def ref(self, name: Any) -> DataNode | None | bool:
        """The DataNode `name` refers to; True for an output of an op that failed its checks."""
        if not isinstance(name, str):
            return None
        if name in self.outputs:
            return self.outputs[name]
        return name.split(":")[0] in self.loose or None

    def run(self) -> Graph | None:
        doc, r = self.doc, self.r
        ops = doc.get("ops")
        ops_line = doc.key_lines.get("ops", doc.line)
        if not isinstance(ops, list) or not ops:
            r.bad(ops_line, "`ops` must be a non-empty list")
            ops = []
        for entry in ops:
            if not isinstance(entry, Mapping):
                r.bad(ops_line, f"each entry of `ops` must be a mapping, got {_shown(entry)}")
                continue
            name = entry.get("name")
            node = self.entry(entry, name)
            if node is not None:
                for d in node.outputs:
                    self.outputs[d.name] = d
            elif isinstance(name, str):
                self.loose.add(name)
        outs = doc.get("outputs")
        out_line = doc.key_lines.get("outputs", doc.line)
        refs: list[Any] = []
        if not isinstance(outs, list) or not outs:
            r.bad(out_line, "`outputs` must be a non-empty list of op names")
        else:
            refs = [self.ref(o) for o in outs]
            for o, d in zip(outs, refs):
                if d is None:
                    r.bad(out_line, f"output {_shown(o)} is not the output of an op defined in `ops`")
        if r.problems:
            return None
        self.graph.set_outputs(refs)
        return self.graph

    def entry(self, entry: Mapping, name: Any) -> Any:
        r, lines, line = self.r, entry.key_lines, entry.line
        before = len(r.problems)
        op_name = entry.get("op")
        label = f"op '{name}'"
        if not isinstance(name, str) or not name:
            r.bad(lines.get("name", line), "an op needs a `name` (a non-empty string)")
        elif name in self.outputs or name in self.loose:
            r.bad(lines["name"], f"{label}: the name is used twice")
        try:
            schema = lookup(op_name)
        except (KeyError, TypeError):
            r.bad(lines.get("op", line), f"{label}: unknown op {_shown(op_name)}"
                  + _hint(op_name, [s.name for s in all_schemas()], quote="'"))
            return None
        label = f"{schema.display_name()} '{name}'"
        for key in entry:
            if key not in OP_KEYS:
                r.bad(lines[key], f"{label}: unknown key `{key}`" + _hint(key, OP_KEYS))
        device = entry.get("device", schema.devices[0])
        if not isinstance(device, str) or device not in schema.devices:
            r.bad(lines.get("device", line), f"{label}: device must be one of {', '.join(schema.devices)}, "
                  f"got {_shown(device)}")
        seed = entry.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            r.bad(lines["seed"], f"{label}: `seed` must be an integer, got {_shown(seed)}")
        consts = self.args(schema, entry, label)
        arg_inputs = self.arg_inputs(schema, entry, label)
        inputs = self.inputs(schema, entry, label)
        if consts is not None:
            for a in schema.args:
                if a.required and a.name not in consts and a.name not in arg_inputs:
                    r.bad(lines.get("args", line), f"{label}: argument `{a.name}` is required ({a.doc})")
                    consts = None
                    break
        if consts is None or inputs is None or arg_inputs is None or len(r.problems) > before:
            return None
        full = dict(consts)
        for a in schema.args:
            if a.name not in full and a.name not in arg_inputs:
                full[a.name] = a.default
        if seed is not None and seed == self.graph.derived_seed():
            seed = None  # the seed the pipeline derives for this op: derived as when traced, not given
        try:
            node = self.graph.add_node(schema, device=device, args=full, inputs=inputs, arg_inputs=arg_inputs,
                                       name=name, seed=seed, origin=f"{self.r.source}:{line}")
        except TorchDaliError as e:
            r.bad(line, f"{label}: {e}")
            return None
        node.explicit.update(consts)  # written in the file: written again
        return node

    def args(self, schema: OpSchema, entry: Mapping, label: str) -> dict[str, Any] | None:
        """The constant arguments, checked and coerced; None if any is bad."""
        r = self.r
        raw = entry.get("args")
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            r.bad(entry.key_lines["args"], f"{label}: `args` must be a mapping")
            return None
        consts: dict[str, Any] = {}
        ok = True
        for key, value in raw.items():
            line, arg = raw.key_lines[key], schema.arg(key)
            if key in COMMON_ARGS:
                continue
            if arg is None:
                known = sorted(a.name for a in schema.args)
                r.bad(line, f"{label}: unknown argument `{key}`" + _hint(key, known)
                      + f"; its arguments are: {', '.join(known) or 'none'}")
                ok = False
                continue
            why = PYTHON_ONLY.get((schema.name, arg.name))
            if why:
                r.bad(line, f"{label}: `{arg.name}` cannot come from a YAML file: {why}")
                ok = False
                continue
            value = plain(value)
            try:
                if arg.kind in ("callable", "source") and value is not None:
                    if not isinstance(value, str):  # inline data would be a source nobody wrote
                        raise SerializationError(f"{label}: `{arg.name}` must be a function written as "
                                                 f"'module:name', got {_shown(value)}")
                    value = resolve_function(value, f"{label} argument `{arg.name}`", self.allow)
                consts[arg.name] = None if value is None and arg.default is None else coerce(label, arg, value)
                if arg.name == "shape":
                    _check_shape(label, consts[arg.name])
                if (schema.name, arg.name) == ("readers.tfrecord", "features") and isinstance(value, dict):
                    for fname, feat in value.items():  # a missing feature is filled with its default
                        for key in ("shape", "partial_shape") if isinstance(feat, dict) else ():
                            _check_shape(f"{label} feature {fname!r}" + ("" if key == "shape" else f" ({key})"),
                                         feat.get(key) or [])
                _check_sizes(label, schema.name, consts, arg.name)
            except TorchDaliError as e:
                r.bad(line, str(e))
                ok = False
        return consts if ok else None

    def arg_inputs(self, schema: OpSchema, entry: Mapping, label: str) -> dict[str, DataNode] | None:
        r = self.r
        raw = entry.get("arg_inputs")
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            r.bad(entry.key_lines["arg_inputs"], f"{label}: `arg_inputs` must be a mapping")
            return None
        out: dict[str, DataNode] = {}
        ok = True
        for key, value in raw.items():
            line, arg = raw.key_lines[key], schema.arg(key)
            if arg is None or not arg.tensor:
                r.bad(line, f"{label}: `{key}` cannot be a per-sample input")
                ok = False
            d = self.ref(value)
            if d is None:
                r.bad(line, f"{label}: input {_shown(value)} is not the output of an op defined above it")
                ok = False
            elif isinstance(d, DataNode) and arg is not None:
                out[arg.name] = d
            else:
                ok = False
        return out if ok else None

    def inputs(self, schema: OpSchema, entry: Mapping, label: str) -> list[DataNode] | None:
        r = self.r
        raw = entry.get("inputs")
        line = entry.key_lines.get("inputs", entry.line)
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            r.bad(line, f"{label}: `inputs` must be a list of op names")
            return None
        out: list[DataNode] = []
        ok = True
        for x in raw:
            d = self.ref(x)
            if d is None:
                r.bad(line, f"{label}: input {_shown(x)} is not the output of an op defined above it")
                ok = False
            elif isinstance(d, DataNode):
                out.append(d)
            else:
                ok = False
        if not schema.min_inputs <= len(raw) <= schema.max_inputs:
            r.bad(line, f"{label}: expected {schema.min_inputs} to {schema.max_inputs} inputs, got {len(raw)}")
            ok = False
        return out if ok else None


def validate(doc: Any, source: str, allow: Allow | None = None, *,
             make_pipeline: Callable[..., Any] | None = None,
             seed: int | Callable[[dict[str, Any]], int] | None = None,
             overrides: dict[str, Any] | None = None) -> tuple[Any, Graph | None, Report]:
    """Checks a parsed document. With `make_pipeline` (the Pipeline class), makes the pipeline from
    the document's settings and `overrides` (a setting it refuses is a problem at the `pipeline`
    line) and builds the graph with its seed; with `seed` instead, checks the settings' names and
    builds the graph for an existing pipeline of that seed (no pipeline is made: None); `seed` may
    be a function of the document's settings that returns it.
    Returns (pipeline, graph, report); graph and pipeline are None unless the report is empty."""
    if (make_pipeline is None) == (seed is None):
        raise TypeError("validate: give exactly one of `make_pipeline` or `seed`")
    r = Report(source)
    if not _header(doc, r):
        return None, None, r
    params, line = _settings(doc, r)
    pipe = None
    if make_pipeline is not None and not r.problems:
        pipe = _make_pipeline(make_pipeline, {**params, **(overrides or {})}, line, r)
    if callable(seed):
        seed = seed(params) if not r.problems else 0
    if seed is None:
        seed = pipe.seed if pipe is not None else 0
    graph = _Ops(doc, seed, r, allow).run()
    if r.problems:
        return None, None, r
    return pipe, graph, r
