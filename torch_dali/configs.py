"""Ready pipelines as YAML (`configs/` at the repository root) and the helpers that run them unedited.

    pipe = torch_dali.configs.load("configs/imagenet_train.yaml", data="/data/train", batch_size=64,
                                   overrides={"Reader.random_shuffle": False, "num_threads": 4})

An override key is `NodeName.arg` (a node's name in the YAML, or its op when only one node has that
op: `CropMirrorNormalize.crop`, `crop_mirror_normalize.crop`), or a pipeline setting without a dot
(`batch_size`, `num_threads`, `seed`, `device_id`, ...). Values are checked through the op's schema.

`data` points the pipeline's one reader at local data:
  * readers.file: `file_root = data` (a folder with one subfolder per class);
  * readers.mxnet: `data` is a `.rec` file (its `.idx` beside it) or a folder: every `*.rec` in it,
    sorted, each with the `.idx` of the same name.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Iterable

import yaml

from .errors import ArgumentError, GraphError, SerializationError, TorchDaliError
from .graph.node import Node
from .graph.pipeline import Pipeline
from .ops._schema import coerce
from .serialization.callables import resolve_function
from .serialization.yaml_io import PIPELINE_KEYS

from .shipped_configs import (CONFIG_DIR, IMAGENET_MEAN, IMAGENET_STD, SHIPPED,  # noqa: F401
                              shipped_pipeline, write_shipped)
READERS = ("readers.file", "readers.mxnet")


# -- finding and loading ---------------------------------------------------------------------------

def available() -> list[str]:
    """Names of the shipped configs (`imagenet_train`, ...)."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.yaml")) if CONFIG_DIR.is_dir() else []


def find(config: str | Path) -> Path:
    """A config file: an existing path, or the name of a shipped config (with or without `.yaml`)."""
    p = Path(config)
    if p.is_file():
        return p
    for cand in (CONFIG_DIR / p.name, CONFIG_DIR / f"{p.name}.yaml"):
        if str(config) == p.name and cand.is_file():
            return cand
    names = available()
    hint = f"; shipped configs: {', '.join(names)}" if names else ""
    raise SerializationError(f"no pipeline config {str(config)!r} (not a file){hint}")


def load(config: str | Path, *, data: str | Path | None = None, batch_size: int | None = None,
         overrides: dict[str, Any] | None = None, allow_modules: Iterable[str] | None = None,
         **pipeline_kwargs: Any) -> Pipeline:
    """A config as an unbuilt Pipeline, with `data`, `batch_size` and `overrides` applied."""
    path = find(config)
    overrides = dict(overrides or {})
    params = {k: overrides.pop(k) for k in list(overrides) if "." not in k}
    bad = set(params) - set(PIPELINE_KEYS)
    if bad:
        raise ArgumentError(f"unknown pipeline setting(s) {', '.join(sorted(bad))}; a pipeline setting is "
                            f"one of {', '.join(PIPELINE_KEYS)}, an op argument is written `NodeName.arg`")
    params.update(pipeline_kwargs)
    if batch_size is not None:
        params["batch_size"] = batch_size
    if allow_modules:
        params["allow_modules"] = list(allow_modules)
    try:
        pipe = Pipeline.deserialize(filename=str(path), **params)
    except ArgumentError as e:  # a bad pipeline setting, e.g. batch_size=0
        raise ArgumentError(f"{path}: {e}") from None
    edits = data_overrides(pipe, data) if data is not None else {}
    edits.update(overrides)
    apply_overrides(pipe, edits, allow_modules)
    return pipe


# -- overrides -------------------------------------------------------------------------------------

def parse_set(item: str) -> tuple[str, Any]:
    """`Reader.random_shuffle=false` -> ("Reader.random_shuffle", False): the value is read as YAML."""
    key, sep, text = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ArgumentError(f"--set expects KEY=VALUE (e.g. Reader.random_shuffle=false), got {item!r}")
    try:
        value = yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError as e:
        raise ArgumentError(f"--set {key}: the value {text!r} is not valid YAML: {e}") from None
    return key, value


def find_node(pipe: Pipeline, ref: str) -> Node:
    """A node by its name, else by its op (`Resize`, `resize`, `MXNetReader`) when only one node has it."""
    nodes = pipe.graph.nodes
    for n in nodes:
        if n.name == ref:
            return n
    by_op = [n for n in nodes if ref in (n.schema.name, n.schema.class_name, *n.schema.legacy_names)]
    if len(by_op) == 1:
        return by_op[0]
    if by_op:
        raise GraphError(f"'{ref}' matches {len(by_op)} ops ({', '.join(n.name for n in by_op)}); "
                         "use the node's name")
    names = [n.name for n in nodes]
    hint = difflib.get_close_matches(ref, names, n=1)
    raise GraphError(f"no op named '{ref}' in this pipeline" + (f" (did you mean '{hint[0]}'?)" if hint else "")
                     + f"; its ops: {', '.join(names)}")


def set_arg(pipe: Pipeline, key: str, value: Any, allow_modules: Iterable[str] | None = None) -> None:
    """Sets one constant argument `NodeName.arg` of an unbuilt pipeline, checked by the op's schema."""
    if pipe._built:
        raise GraphError(f"cannot override {key}: the pipeline is already built")
    ref, _, arg_name = key.rpartition(".")
    node = find_node(pipe, ref)
    schema = node.schema
    op = f"{schema.display_name()} '{node.name}'"
    arg = schema.arg(arg_name)
    if arg is None:
        known = sorted(a.name for a in schema.args)
        hint = difflib.get_close_matches(arg_name, known, n=1)
        raise ArgumentError(f"{op}: unknown argument `{arg_name}`" + (f" (did you mean `{hint[0]}`?)" if hint else "")
                            + f"; its arguments are: {', '.join(known)}")
    if arg.kind == "callable" and isinstance(value, str):
        value = resolve_function(value, f"{op} argument `{arg.name}`", allow_modules)
    if value is None and arg.default is None:
        new = None
    else:
        new = coerce(op, arg, value)
    args = {**node.args, arg.name: new}
    if schema.outputs_for(args) != len(node.outputs):
        raise ArgumentError(f"{op}: overriding `{arg.name}` would change the number of outputs; edit the YAML")
    node.args = args
    node.arg_inputs.pop(arg.name, None)  # a constant replaces a per-sample input


def apply_overrides(pipe: Pipeline, overrides: dict[str, Any], allow_modules: Iterable[str] | None = None) -> None:
    for key, value in overrides.items():
        if "." not in key:
            raise ArgumentError(f"override {key!r}: write `NodeName.arg` (pipeline settings go to load())")
        set_arg(pipe, key, value, allow_modules)


def readers(pipe: Pipeline) -> list[Node]:
    return [n for n in pipe.graph.reachable() if n.schema.name.startswith("readers.")]


def data_overrides(pipe: Pipeline, data: str | Path) -> dict[str, Any]:
    """The overrides that point the pipeline's one reader at `data` (see the module doc)."""
    nodes = readers(pipe)
    if len(nodes) != 1:
        raise GraphError(f"--data needs exactly one reader in the pipeline, found {len(nodes)}; "
                         "set paths with NodeName.arg overrides instead")
    node = nodes[0]
    p = Path(data)
    if node.schema.name == "readers.file":
        if not p.is_dir():
            raise ArgumentError(f"--data {data}: not a folder (readers.file wants one subfolder per class)")
        return {f"{node.name}.file_root": str(p)}
    if node.schema.name == "readers.mxnet":
        recs = sorted(p.glob("*.rec")) if p.is_dir() else [p] if p.suffix == ".rec" and p.is_file() else []
        if not recs:
            raise ArgumentError(f"--data {data}: give a .rec file or a folder holding .rec files")
        idx = [r.with_suffix(".idx") for r in recs]
        missing = [str(i) for i in idx if not i.is_file()]
        if missing:
            raise ArgumentError(f"--data {data}: no index beside the RecordIO file(s): {', '.join(missing)}")
        return {f"{node.name}.path": [str(r) for r in recs], f"{node.name}.index_path": [str(i) for i in idx]}
    raise GraphError(f"--data does not know how to point {node.schema.display_name()} at data; "
                     "use NodeName.arg overrides")


def missing_data(pipe: Pipeline) -> list[str]:
    """Reader paths that do not exist (the shipped configs hold placeholders until --data is given)."""
    out = []
    for n in readers(pipe):
        keys = {"readers.file": ("file_root", "file_list"), "readers.mxnet": ("path", "index_path")}
        for k in keys.get(n.schema.name, ()):
            v = n.args.get(k)
            for path in ([v] if isinstance(v, str) else v or []):
                if not Path(path).exists():
                    out.append(f"{n.schema.display_name()} '{n.name}': `{k}` {path} does not exist")
    return out


# -- validation: every problem, each with its line ---------------------------------------------------

class _Loader(yaml.SafeLoader):
    """Safe loader keeping each mapping's line and each key's line (`__line__`, `__lines__`)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        mapping = super().construct_mapping(node, deep=True)
        mapping["__lines__"] = {k.value: k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
        mapping["__line__"] = node.start_mark.line + 1
        return mapping


def _keys(d: dict) -> list[str]:
    return [k for k in d if k not in ("__line__", "__lines__")]


def check(config: str | Path, allow_modules: Iterable[str] | None = None) -> list[str]:
    """Every problem found in a config, as `FILE line N: message`; empty when it loads.

    Goes on after a problem where it can (each op, each argument, each reference), then, if nothing
    was found, loads the file for real so nothing the loader refuses is missed."""
    from .ops._registry import all_schemas, lookup
    from .ops._schema import COMMON_ARGS

    path = find(config)
    src = str(path)
    problems: list[str] = []

    def bad(line: Any, msg: str) -> None:
        problems.append(f"{src} line {line}: {msg}")

    try:
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        return [f"{src} line {mark.line + 1 if mark else '?'}: not valid YAML: {getattr(e, 'problem', e)}"]
    if not isinstance(doc, dict) or "torch_dali_pipeline" not in doc:
        return [f"{src} line 1: not a torch_dali pipeline (no `torch_dali_pipeline: 1` key)"]
    lines = doc["__lines__"]
    for key in _keys(doc):
        if key not in ("torch_dali_pipeline", "pipeline", "ops", "outputs"):
            bad(lines[key], f"unknown top-level key `{key}`")
    params = doc.get("pipeline") or {}
    if isinstance(params, dict):
        for key in _keys(params):
            if key not in PIPELINE_KEYS:
                hint = difflib.get_close_matches(key, PIPELINE_KEYS, n=1)
                bad(params["__lines__"][key], f"unknown pipeline setting `{key}`"
                    + (f" (did you mean `{hint[0]}`?)" if hint else ""))
        try:
            Pipeline(**{k: params[k] for k in _keys(params) if k in PIPELINE_KEYS})
        except (TorchDaliError, TypeError, ValueError) as e:
            bad(params["__line__"], str(e))
    ops = doc.get("ops")
    if not isinstance(ops, list) or not ops:
        bad(lines.get("ops", 1), "`ops` must be a non-empty list")
        ops = []
    defined: set[str] = set()
    loose: set[str] = set()  # names of ops that could not be checked: any `name:k` is accepted

    def ref_ok(name: Any) -> bool:
        return isinstance(name, str) and (name in defined or name.split(":")[0] in loose)

    for entry in ops:
        if not isinstance(entry, dict):
            bad(lines.get("ops", "?"), f"each entry of `ops` must be a mapping, got {entry!r}")
            continue
        line, elines = entry["__line__"], entry["__lines__"]
        name, op_name = entry.get("name"), entry.get("op")
        label = f"op '{name}'"
        if not isinstance(name, str) or not name:
            bad(line, "an op needs a `name`")
        elif name in defined or name in loose:
            bad(elines["name"], f"{label}: the name is used twice")
        try:
            schema = lookup(op_name)
        except (KeyError, TypeError):
            hint = difflib.get_close_matches(str(op_name), [s.name for s in all_schemas()], n=1)
            bad(elines.get("op", line), f"{label}: unknown op {op_name!r}" + (f" (did you mean {hint[0]!r}?)" if hint else ""))
            loose.add(str(name))
            continue
        label = f"{schema.display_name()} '{name}'"
        for key in _keys(entry):
            if key not in ("name", "op", "device", "seed", "args", "inputs", "arg_inputs"):
                bad(elines[key], f"{label}: unknown key `{key}`")
        device = entry.get("device", schema.devices[0])
        if device not in schema.devices:
            bad(elines.get("device", line), f"{label}: device must be one of {', '.join(schema.devices)}, got {device!r}")
        seed = entry.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            bad(elines["seed"], f"{label}: `seed` must be an integer, got {seed!r}")
        raw = entry.get("args") or {}
        consts: dict[str, Any] = {}
        args_ok = isinstance(raw, dict)
        if not args_ok:
            bad(elines.get("args", line), f"{label}: `args` must be a mapping")
            raw = {}
        for key in _keys(raw):
            kline, arg = raw["__lines__"][key], schema.arg(key)
            if key in COMMON_ARGS:
                continue
            if arg is None:
                known = sorted(a.name for a in schema.args)
                hint = difflib.get_close_matches(key, known, n=1)
                bad(kline, f"{label}: unknown argument `{key}`" + (f" (did you mean `{hint[0]}`?)" if hint else "")
                    + f"; its arguments are: {', '.join(known)}")
                args_ok = False
                continue
            value = raw[key]
            try:
                if arg.kind == "callable" and isinstance(value, str):
                    value = resolve_function(value, f"{label} argument `{key}`", allow_modules)
                consts[arg.name] = value if value is None and arg.default is None else coerce(label, arg, value)
            except TorchDaliError as e:
                bad(kline, str(e))
                args_ok = False
        arg_inputs = entry.get("arg_inputs") or {}
        if not isinstance(arg_inputs, dict):
            bad(elines.get("arg_inputs", line), f"{label}: `arg_inputs` must be a mapping")
            arg_inputs = {}
        for key in _keys(arg_inputs):
            arg = schema.arg(key)
            if arg is None or not arg.tensor:
                bad(arg_inputs["__lines__"][key], f"{label}: `{key}` cannot be a per-sample input")
            if not ref_ok(arg_inputs[key]):
                bad(arg_inputs["__lines__"][key], f"{label}: input {arg_inputs[key]!r} is not the output of an op defined above it")
        for a in schema.args:
            if a.required and a.name not in consts and a.name not in arg_inputs and args_ok:
                bad(elines.get("args", line), f"{label}: argument `{a.name}` is required ({a.doc})")
                args_ok = False
        inputs = entry.get("inputs") or []
        if not isinstance(inputs, list):
            bad(elines.get("inputs", line), f"{label}: `inputs` must be a list")
            inputs = []
        for x in inputs:
            if not ref_ok(x):
                bad(elines.get("inputs", line), f"{label}: input {x!r} is not the output of an op defined above it")
        if not schema.min_inputs <= len(inputs) <= schema.max_inputs:
            bad(elines.get("inputs", line), f"{label}: expected {schema.min_inputs} to {schema.max_inputs} inputs, got {len(inputs)}")
        if not isinstance(name, str):
            continue
        if args_ok:
            full = {a.name: consts.get(a.name, a.default) for a in schema.args}
            n_out = schema.outputs_for(full)
            defined.update([name] + [f"{name}:{k}" for k in range(1, n_out)])
        else:
            loose.add(name)
    outs = doc.get("outputs")
    if not isinstance(outs, list) or not outs:
        bad(lines.get("outputs", doc["__line__"]), "`outputs` must be a non-empty list of op names")
    else:
        for o in outs:
            if not ref_ok(o):
                bad(lines["outputs"], f"output {o!r} is not the output of an op defined in `ops`")
    if not problems:
        try:
            Pipeline.deserialize(filename=src, allow_modules=list(allow_modules or ()))
        except TorchDaliError as e:
            problems.append(str(e) if str(e).startswith(src) else f"{src}: {e}")
    return problems
