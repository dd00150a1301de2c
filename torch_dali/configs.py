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

from .errors import ArgumentError, GraphError, SerializationError
from .graph.node import Node
from .graph.pipeline import Pipeline
from .ops._schema import coerce
from .serialization.callables import allow_list, resolve_function
from .serialization.document import parse, plain, read_file
from .serialization.validate import PIPELINE_KEYS, validate

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
    if p.exists() and not p.is_dir():  # reading refuses what is not a regular file, with the reason
        return p
    for cand in (CONFIG_DIR / p.name, CONFIG_DIR / f"{p.name}.yaml"):
        if str(config) == p.name and cand.is_file():
            return cand
    names = available()
    hint = f"; shipped configs: {', '.join(names)}" if names else ""
    raise SerializationError(f"no pipeline config {str(config)!r} (not a file){hint}")


def load(config: str | Path, *, data: str | Path | None = None, batch_size: int | None = None,
         overrides: dict[str, Any] | None = None, allow_modules: Iterable[str] | None = None,
         allow_functions: Iterable[str] | None = None, **pipeline_kwargs: Any) -> Pipeline:
    """A config as an unbuilt Pipeline, with `data`, `batch_size` and `overrides` applied.

    Python functions named in the config (or in `overrides`) resolve only to torch_dali's own
    augmentations and to what `allow_modules` / `allow_functions` open (see
    torch_dali/serialization/callables.py)."""
    path = find(config)
    allow = allow_list(allow_modules, allow_functions)
    overrides = dict(overrides or {})
    params = {k: overrides.pop(k) for k in list(overrides) if "." not in k}
    bad = set(params) - set(PIPELINE_KEYS)
    if bad:
        raise ArgumentError(f"unknown pipeline setting(s) {', '.join(sorted(bad))}; a pipeline setting is "
                            f"one of {', '.join(PIPELINE_KEYS)}, an op argument is written `NodeName.arg`")
    params.update(pipeline_kwargs)
    if batch_size is not None:
        params["batch_size"] = batch_size
    params.update(allow_modules=allow.modules, allow_functions=allow.functions)
    try:
        pipe = Pipeline.deserialize(filename=str(path), **params)
    except ArgumentError as e:  # a bad pipeline setting, e.g. batch_size=0
        raise ArgumentError(f"{path}: {e}") from None
    edits = data_overrides(pipe, data) if data is not None else {}
    edits.update(overrides)
    apply_overrides(pipe, edits, allow.modules, allow.functions)
    return pipe


# -- overrides -------------------------------------------------------------------------------------

def parse_set(item: str) -> tuple[str, Any]:
    """`Reader.random_shuffle=false` -> ("Reader.random_shuffle", False): the value is read as YAML."""
    key, sep, text = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ArgumentError(f"--set expects KEY=VALUE (e.g. Reader.random_shuffle=false), got {item!r}")
    try:  # the config files' own reader: the same tags and limits
        value = plain(parse(text, f"--set {key}")) if text.strip() else ""
    except SerializationError as e:
        raise ArgumentError(f"the value {text!r} cannot be read: {e}") from None
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


def set_arg(pipe: Pipeline, key: str, value: Any, allow_modules: Iterable[str] | None = None,
            allow_functions: Iterable[str] | None = None) -> None:
    """Sets one constant argument `NodeName.arg` of an unbuilt pipeline, checked by the op's schema;
    a function given as 'module:name' resolves as in a config file."""
    if pipe.built:
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
    if arg.kind in ("callable", "source") and isinstance(value, str):
        value = resolve_function(value, f"{op} argument `{arg.name}`", allow_list(allow_modules, allow_functions))
    if value is None and arg.default is None:
        new = None
    else:
        new = coerce(op, arg, value)
    args = {**node.args, arg.name: new}
    if schema.outputs_for(args, len(node.inputs)) != len(node.outputs):
        raise ArgumentError(f"{op}: overriding `{arg.name}` would change the number of outputs; edit the YAML")
    node.args = args
    node.explicit.add(arg.name)  # a saved config shows the override, even when it equals the default
    node.arg_inputs.pop(arg.name, None)  # a constant replaces a per-sample input


def apply_overrides(pipe: Pipeline, overrides: dict[str, Any], allow_modules: Iterable[str] | None = None,
                    allow_functions: Iterable[str] | None = None) -> None:
    for key, value in overrides.items():
        if "." not in key:
            raise ArgumentError(f"override {key!r}: write `NodeName.arg` (pipeline settings go to load())")
        set_arg(pipe, key, value, allow_modules, allow_functions)


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


# -- validation: the loaders' own validator, every problem with its line -----------------------------

def check(config: str | Path, allow_modules: Iterable[str] | None = None,
          allow_functions: Iterable[str] | None = None) -> list[str]:
    """Every problem found in a config, as `FILE line N: message`; empty when it loads.

    The same reading (limits included) and the same validator as `load()`, reporting every problem
    instead of raising."""
    path = find(config)
    try:
        doc = parse(read_file(path), str(path))
    except SerializationError as e:
        return [str(e)]
    _, _, report = validate(doc, str(path), allow_list(allow_modules, allow_functions), make_pipeline=Pipeline)
    return report.problems
