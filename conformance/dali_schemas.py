"""Extracts DALI's operator schemas into a JSON snapshot (run under the DALI venv's python).

`python -m conformance.dali_schemas OUT.json`. Sources, all DALI's own API: the `nvidia.dali.fn`
namespace (each generated function names its schema in `_schema_name`), `nvidia.dali.ops` (class
paths), and `nvidia.dali.backend.GetSchema` (arguments, devices, deprecation). Ops whose schema is
internal (`IsInternal()`, a name starting with `_`) are left out. A deprecated schema that is an
alias of another (`FileReader` for `readers.file`) is recorded as a legacy name of that op.
"""
from __future__ import annotations

import inspect
import json
import sys
from types import ModuleType
from typing import Any


def _walk(mod: ModuleType, prefix: str, seen: set[int]) -> list[tuple[str, Any]]:
    out = []
    if id(mod) in seen:
        return out
    seen.add(id(mod))
    for name in sorted(dir(mod)):
        if name.startswith("_"):
            continue
        obj = getattr(mod, name)
        path = f"{prefix}{name}"
        if isinstance(obj, ModuleType) and obj.__name__.startswith(mod.__name__ + "."):
            out += _walk(obj, path + ".", seen)
        elif callable(obj):
            out.append((path, obj))
    return out


def _public_first(path: str) -> tuple[bool, str]:
    """`shapes` before `hidden.shapes`: the name to list an op under is its public one."""
    return ("hidden" in path.split("."), path)


def _named_params(func: Any) -> list[str]:
    """Named keyword parameters of a Python function (generated ops take only *inputs, **kwargs)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _args(b: Any, schema: Any) -> dict[str, dict[str, Any]]:
    out = {}
    for a in schema.GetArgumentNames():
        info: dict[str, Any] = {"type": str(schema.GetArgumentType(a)).replace("DALIDataType.", ""),
                                "optional": bool(schema.IsArgumentOptional(a)),
                                "tensor": bool(schema.IsTensorArgument(a))}
        if schema.IsDeprecatedArg(a):
            info["deprecated"] = True
            try:
                meta = schema.DeprecatedArgInfo(a)
                renamed = getattr(meta, "renamed_to", "") or (meta.get("renamed_to") if isinstance(meta, dict) else "")
                if renamed:
                    info["renamed_to"] = renamed
            except Exception:
                pass
        out[a] = info
    return out


def extract() -> dict[str, Any]:
    import nvidia.dali as dali
    import nvidia.dali.backend as b
    import nvidia.dali.fn as fn
    import nvidia.dali.ops as ops

    fn_spaces: list[tuple[Any, str]] = [(fn, "")]
    op_spaces: list[tuple[Any, str]] = [(ops, "")]
    try:  # the PyTorch plugin's ops (TorchPythonFunction); needs torch in the DALI venv
        import nvidia.dali.plugin.pytorch as plugin
        fn_spaces.append((plugin.fn, "plugin.pytorch.fn."))
        op_spaces.append((plugin, "plugin.pytorch."))
    except ImportError:
        pass
    fn_paths: dict[str, list[str]] = {}
    py_args: dict[str, list[str]] = {}  # arguments a Python-level fn wrapper adds (external_source)
    for space, prefix in fn_spaces:
        for path, obj in _walk(space, prefix, set()):
            schema_name = getattr(obj, "_schema_name", None)
            if schema_name:
                fn_paths.setdefault(schema_name, []).append(path)
                py_args.setdefault(schema_name, []).extend(_named_params(obj))
    cls_paths: dict[str, list[str]] = {}
    for space, prefix in op_spaces:
        for path, obj in _walk(space, prefix, set()):
            if inspect.isclass(obj) and getattr(obj, "schema_name", None):
                cls_paths.setdefault(obj.schema_name, []).append(path)

    ops_out: dict[str, dict[str, Any]] = {}
    aliases: dict[str, str] = {}
    for schema_name in sorted(set(fn_paths) | set(cls_paths)):
        schema = b.TryGetSchema(schema_name)
        if schema is None or schema.IsInternal() or schema_name.startswith("_"):
            continue
        target = schema.AliasFor() or (schema.DeprecatedInFavorOf() if schema.IsDeprecated() else "")
        if target and b.TryGetSchema(target) is not None:
            aliases[schema_name] = target
            continue
        fns = sorted(fn_paths.get(schema_name, []), key=_public_first)
        ops_out[schema_name] = {
            "fn": fns[0] if fns else "",
            "fn_other": fns[1:],
            "classes": sorted(cls_paths.get(schema_name, []), key=_public_first),
            "devices": sorted(schema.GetSupportedBackends()) if hasattr(schema, "GetSupportedBackends") else [],
            "deprecated": bool(schema.IsDeprecated()),
            "doc_hidden": bool(schema.IsDocHidden()),
            "inputs": [int(schema.MinNumInput()), int(schema.MaxNumInput())],
            "args": {**{a: {"type": "python", "optional": True, "tensor": False}
                        for a in py_args.get(schema_name, [])}, **_args(b, schema)},
            "legacy": [],
        }
    for alias, target in sorted(aliases.items()):
        while target in aliases:
            target = aliases[target]
        if target in ops_out:
            ops_out[target]["legacy"] += sorted(set(fn_paths.get(alias, []) + cls_paths.get(alias, [])))
    by_fn = {}
    for schema_name, entry in ops_out.items():
        key = entry["fn"] or entry["classes"][0]
        entry["schema"] = schema_name
        by_fn[key] = entry
    return {"dali_version": dali.__version__, "ops": dict(sorted(by_fn.items()))}


if __name__ == "__main__":
    data = extract()
    with open(sys.argv[1], "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{len(data['ops'])} ops written to {sys.argv[1]}", file=sys.stderr)
