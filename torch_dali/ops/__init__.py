"""The class API (`ops.Resize(...)`, DALI's legacy names included), generated from the schemas."""
from __future__ import annotations

import importlib
import sys
from types import ModuleType

from . import _registry
from ._registry import all_schemas, lookup, make_class  # noqa: F401
from ._naming import op_name as _op_name  # noqa: F401 - DALI's `ops._op_name(schema_name, api)`

# Each family module registers its schemas on import.
_FAMILIES = ("basic", "arithmetic", "random", "geometry", "flip", "random_resized_crop", "normalize", "color", "readers.file", "readers.mxnet", "readers.npy", "readers.tfrecord",
             "readers.webdataset", "readers.caffe", "readers.nemo_asr",
             "decoders.image", "python_function", "numba_function", "external_source",
             "color_adjust", "filters", "noise", "normalization", "morphology", "histogram", "distort",
             "warp", "transforms", "coords", "regions", "slicing", "crop_generators",
             "decoders.crop", "resize_crop_mirror", "multi_paste", "remap",
             "warp_perspective",
             "tensor_create", "tensor_shape", "conditional",
             "detection", "detection_crop", "readers.coco",
             "tensor_axes", "tensor_join", "tensor_values", "batch_permute", "reductions", "tensor_resize", "random_draws", "segmentation",
             "subscript", "branches", "per_frame", "sequence", "decoders.npy", "decoders.audio", "audio",
             "audio_spectral", "audio_mel", "audio_region", "audio_resample",
             "bbox_rotate", "debayer", "io_file", "readers.sequence", "dump_image", "decoders.video", "readers.video", "readers.fits", "decoders.inflate", "video_input",
             "experimental_resize")
for _fam in _FAMILIES:
    try:
        importlib.import_module(f"{__name__}.{_fam}")
    except ModuleNotFoundError as e:  # a family not written yet must not break the rest
        if e.name != f"{__name__}.{_fam}":
            raise
from .compose import Compose  # noqa: E402,F401 - DALI's `ops.Compose`
from .fast import cpu_audio, cpu_bbox, cpu_box_moves, cpu_boxes, cpu_color, cpu_convert, cpu_filters, cpu_image, cpu_masks, cpu_reduce, cpu_tables, cpu_warp, image_kernels  # noqa: E402,F401 - register the fast kernels with the dispatch
from .python_function import dlpack_from_array as _dlpack_from_array  # noqa: E402,F401 - DALI's names
from .python_function import dlpack_to_array as _dlpack_to_array  # noqa: E402,F401


def _namespace(path: str) -> ModuleType:
    """`ops.readers` for `readers.File`, `ops.io.file` for `io.file.Read`: made where missing."""
    space: ModuleType = sys.modules[__name__]
    parts = path.split(".")
    for depth, part in enumerate(parts):
        full = f"{__name__}." + ".".join(parts[: depth + 1])
        mod = sys.modules.get(full)
        if mod is None:
            mod = ModuleType(full)
            sys.modules[full] = mod
        if getattr(space, part, None) is None:
            setattr(space, part, mod)
        space = getattr(space, part)
    return space


# DALI's Python-function op classes take these constructor arguments by position too
# (`ops.PythonFunction(f, 2)`)
_POSITIONAL = {
    "PythonFunction": ("function", "num_outputs", "device", "batch_processing"),
    "TorchPythonFunction": ("function", "num_outputs", "device", "batch_processing"),
    "DLTensorPythonFunction": ("function", "num_outputs", "device", "synchronize_stream", "batch_processing"),
}


def _plain_class(cls: type) -> type:
    """The op class taking what DALI's takes: constants as inputs, NumPy scalars and
    `types.Constant` as arguments, in the constructor and the call."""
    from ._schema import plain_inputs, plain_kwargs
    init, call = cls.__init__, cls.__call__
    positional = _POSITIONAL.get(cls.__name__, ())

    def __init__(self, *args, **kwargs):  # noqa: N807
        if args and positional:
            if len(args) > len(positional):
                raise TypeError(f"{cls.__name__}() takes at most {len(positional)} positional arguments "
                                f"({', '.join(positional)}), got {len(args)}")
            twice = [k for k in positional[:len(args)] if k in kwargs]
            if twice:
                raise TypeError(f"{cls.__name__}() got multiple values for argument {twice[0]!r}")
            kwargs = {**dict(zip(positional, args)), **kwargs}
            args = ()
        init(self, *args, **plain_kwargs(kwargs))

    def __call__(self, *inputs, **kwargs):  # noqa: N807
        kwargs = plain_kwargs(kwargs)
        return call(self, *plain_inputs(cls.__name__, inputs, {**getattr(self, "_kwargs", {}), **kwargs}),
                    **kwargs)

    cls.__init__, cls.__call__ = __init__, __call__  # type: ignore[method-assign]
    return cls


def _generate() -> None:
    this = sys.modules[__name__]
    for schema in all_schemas():
        if schema.name == "external_source":  # DALI's signature: the source may be positional
            from .external_source_api import ExternalSourceClass
            setattr(this, "ExternalSource", ExternalSourceClass)
            continue
        cls = _plain_class(make_class(schema))
        parts = schema.name.split(".")
        if len(parts) > 1:
            setattr(_namespace(".".join(parts[:-1])), schema.class_name, cls)
        else:
            setattr(this, schema.class_name, cls)
        for legacy in schema.legacy_names:
            setattr(this, legacy, _plain_class(make_class(schema, legacy)))



def _generate_legacy() -> None:
    """DALI's deprecated class names that live in a namespace (ops/legacy.py)."""
    from .legacy import CLASSES
    this = sys.modules[__name__]
    for old, new in CLASSES.items():
        parts = old.split(".")
        space: ModuleType = this
        for depth, part in enumerate(parts[:-1]):
            sub = getattr(space, part, None)
            if sub is None:
                full = f"{__name__}." + ".".join(parts[: depth + 1])
                sub = sys.modules.get(full) or ModuleType(full)
                sys.modules[full] = sub
                setattr(space, part, sub)
            space = sub
        setattr(space, parts[-1], _plain_class(make_class(lookup(new), old)))


_generate()
_generate_legacy()

from ..graph.node import DataNode as _DataNode  # noqa: E402,F401 - DALI's `from nvidia.dali.ops import _DataNode`


def __getattr__(name: str) -> Any:
    """A DALI op torch_dali leaves out (ops.OpticalFlow) says why; any other name is missing."""
    from .legacy import not_provided
    raise not_provided(__name__, name)

