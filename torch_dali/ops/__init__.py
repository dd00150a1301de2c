"""The class API (`ops.Resize(...)`, DALI's legacy names included), generated from the schemas."""
from __future__ import annotations

import importlib
import sys
from types import ModuleType

from . import _registry
from ._registry import all_schemas, lookup, make_class  # noqa: F401

# Each family module registers its schemas on import.
_FAMILIES = ("basic", "arithmetic", "random", "geometry", "normalize", "color", "readers.file", "readers.mxnet",
             "decoders.image", "python_function", "external_source",
             "color_adjust", "filters", "noise", "normalization", "morphology", "histogram", "distort",
             "detection", "detection_crop", "readers.coco")
for _fam in _FAMILIES:
    try:
        importlib.import_module(f"{__name__}.{_fam}")
    except ModuleNotFoundError as e:  # a family not written yet must not break the rest
        if e.name != f"{__name__}.{_fam}":
            raise


def _namespace(path: str) -> ModuleType:
    """`ops.readers` for `readers.File`; made if the family is a module, created if missing."""
    full = f"{__name__}.{path}"
    mod = sys.modules.get(full)
    if mod is None:
        mod = ModuleType(full)
        sys.modules[full] = mod
        setattr(sys.modules[__name__], path, mod)
    return mod


def _generate() -> None:
    this = sys.modules[__name__]
    for schema in all_schemas():
        cls = make_class(schema)
        parts = schema.name.split(".")
        if len(parts) > 1:
            setattr(_namespace(parts[0]), schema.class_name, cls)
        else:
            setattr(this, schema.class_name, cls)
        for legacy in schema.legacy_names:
            setattr(this, legacy, make_class(schema, legacy))


_generate()
