"""DALI's deprecated spellings of ops that still run in DALI 2.4 code: `fn.file_reader`,
`fn.image_decoder`, `fn.uniform`, `fn.experimental.decoders.image`, `ops.NormalDistribution`...
Each is the current op under its old name. Top-level class names (`ops.FileReader`) are the
schemas' `legacy_names`; this table holds the functional names and the class names that live in a
namespace. DALI's `hidden.*` names are its internals, not API, and are left out.

As in DALI 2.4, every call made through a deprecated name (these, `DEPRECATED_CLASSES`, and the ops
of `OPS`, which DALI deprecates under their own name) gives a DeprecationWarning, when the op is
added to the graph (not when the pipeline is built), each time, shown whatever filters hide
DeprecationWarnings by default. Calls made by torch_dali itself through a current name (`.shape()`
adds a `shapes` node) give none."""
from __future__ import annotations

import os
import sys
import warnings
from typing import Any

# old functional name -> current op
FN = {
    "file_reader": "readers.file", "mxnet_reader": "readers.mxnet", "caffe_reader": "readers.caffe",
    "caffe2_reader": "readers.caffe2", "coco_reader": "readers.coco", "numpy_reader": "readers.numpy",
    "tfrecord_reader": "readers.tfrecord", "sequence_reader": "readers.sequence",
    "image_decoder": "decoders.image", "image_decoder_crop": "decoders.image_crop",
    "image_decoder_random_crop": "decoders.image_random_crop", "image_decoder_slice": "decoders.image_slice",
    "experimental.decoders.image": "decoders.image", "experimental.decoders.image_crop": "decoders.image_crop",
    "experimental.decoders.image_random_crop": "decoders.image_random_crop",
    "experimental.decoders.image_slice": "decoders.image_slice",
    "experimental.peek_image_shape": "peek_image_shape",
    "coin_flip": "random.coin_flip", "normal_distribution": "random.normal", "uniform": "random.uniform",
    "transform_translation": "transforms.translation",
    "audio_decoder": "decoders.audio", "nemo_asr_reader": "readers.nemo_asr",
    "experimental.audio_resample": "audio_resample",
    "experimental.decoders.video": "decoders.video", "video_reader": "readers.video",
    "video_reader_resize": "readers.video_resize",
    "experimental.inflate": "decoders.inflate",
}
# old class name in a namespace (or without a schema entry) -> current op
CLASSES = {
    "experimental.decoders.Image": "decoders.image", "experimental.decoders.ImageCrop": "decoders.image_crop",
    "experimental.decoders.ImageRandomCrop": "decoders.image_random_crop",
    "experimental.decoders.ImageSlice": "decoders.image_slice",
    "experimental.PeekImageShape": "peek_image_shape", "NormalDistribution": "random.normal",
    "experimental.AudioResample": "audio_resample",
    "experimental.decoders.Video": "decoders.video",
    "experimental.Inflate": "decoders.inflate",
}

# ops DALI 2.4 deprecates under their own name -> the op to use instead ("": none named)
OPS = {
    "experimental.tensor_resize": "tensor_resize", "experimental.filter": "filter",
    "experimental.equalize": "equalize", "experimental.debayer": "debayer",
    "fast_resize_crop_mirror": "resize_crop_mirror", "ssd_random_crop": "random_bbox_crop",
    "shapes": "", "readers.sequence": "",
}
# DALI 2.4 ops torch_dali does not provide, with why: `fn.<name>` / `ops.<Class>` raise an
# AttributeError saying so (still an AttributeError: `hasattr` and DALI's `has_operator` say False)
NOT_PROVIDED = {
    "optical_flow": "it runs on NVIDIA's optical-flow hardware (NVOFA) through the Optical Flow SDK, "
                    "which has no PyTorch or CPU counterpart here; compute flow with a model (e.g. "
                    "torchvision.models.optical_flow.raft_small) on the pipeline's output instead",
}
NOT_PROVIDED_CLASSES = {"OpticalFlow": "optical_flow"}


def not_provided(module: str, name: str) -> AttributeError:
    """The AttributeError for `module.name`: why, when it is a DALI op torch_dali leaves out."""
    op = NOT_PROVIDED_CLASSES.get(name, name)
    why = NOT_PROVIDED.get(op)
    if why is None:
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    return AttributeError(f"{module}.{name}: DALI's {op} is not provided by torch_dali: {why}")


# the schemas' top-level legacy class names that DALI 2.4 deprecates (the others, `ops.PythonFunction`,
# `ops.ExternalSource`, `ops.PeekImageShape`, are current names there)
DEPRECATED_CLASSES = frozenset({
    "AudioDecoder", "COCOReader", "Caffe2Reader", "CaffeReader", "CoinFlip", "FastResizeCropMirror", "FileReader",
    "ImageDecoder", "ImageDecoderCrop", "ImageDecoderRandomCrop", "ImageDecoderSlice", "MXNetReader",
    "NemoAsrReader", "NormalDistribution", "NumpyReader", "SequenceReader", "TransformTranslation", "Uniform",
    "VideoReader", "VideoReaderResize",
})

# arguments DALI 2.4's schemas deprecate (IsDeprecatedArg), by op: the argument that replaces
# each ("" for one that does nothing any more). Giving one warns once per op made with it.
_NO_EFFECT = ""
_DECODER = {"memory_stats": _NO_EFFECT, "split_stages": _NO_EFFECT, "use_chunk_allocator": _NO_EFFECT}
ARGS: dict[str, dict[str, str]] = {
    **{op: {"image_type": _NO_EFFECT, "output_dtype": "dtype"} for op in ("crop", "crop_mirror_normalize", "slice")},
    **{op: {"output_dtype": "dtype"} for op in ("rotate", "warp_affine", "lookup_table")},
    "resize": {"image_type": _NO_EFFECT}, "experimental.resize": {"image_type": _NO_EFFECT},
    "shapes": {"type": "dtype"},
    **{f"decoders.{op}": _DECODER for op in ("image", "image_crop", "image_random_crop", "image_slice")},
    "readers.coco": {"dump_meta_files": "save_preprocessed_annotations",
                     "dump_meta_files_path": "save_preprocessed_annotations_dir",
                     "meta_files_path": "preprocessed_annotations", "save_img_ids": "image_ids",
                     "masks": "polygon_masks"},
    "readers.nemo_asr": {"normalize_text": _NO_EFFECT},
}


# ops that take `seed` although their schema is not `random`: DALI 2.4's readers (shuffling);
# and the ones DALI never warns for (Python-side there, or torch_dali's internal ops)
_SEEDED = ("readers.", "experimental.readers.", "_")
_SEED_QUIET = frozenset({"external_source", "arithmetic"})


def warn_args(op: str, given: Any, random: bool = True) -> None:
    """A DeprecationWarning for each argument of `given` (names) that DALI deprecates for `op`;
    `seed` is one for ops that draw no random numbers (`random` False: DALI 2.4 gives ops a seed
    argument only where they draw, HasRandomSeedArg)."""
    if "seed" in given and not random and not op.startswith(_SEEDED) and op not in _SEED_QUIET:
        warn(f"{op}: `seed` is deprecated in DALI for ops that draw no random numbers, as this one; "
             "leave it out")
    table = ARGS.get(op)
    if not table:
        return
    for key in given:
        if key not in table:
            continue
        new = table[key]
        if key == "masks":
            warn(f"{op}: `masks` is deprecated in DALI; use `polygon_masks` (its polygons hold vertex "
                 "indices, where `masks` gave coordinate indices, twice as large)")
        elif new:
            warn(f"{op}: `{key}` is deprecated in DALI, an old name of `{new}`; write `{new}`")
        else:
            warn(f"{op}: `{key}` is deprecated in DALI and has no effect; leave it out")


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def message(old: str, new: str) -> str:
    """The warning for a call through `old` (`fn.file_reader`, `ops.FileReader`); `new` the fn name
    to use (`fn.readers.file`), or ""."""
    return f"{old} is deprecated in DALI; use {new}" if new else f"{old} is deprecated in DALI"


def warn(msg: str) -> None:
    """One call through a deprecated name: a DeprecationWarning pointing at the caller's line (the
    first frame outside torch_dali), shown at every call as DALI's is (its own "default" filter, set
    afresh each time, so no earlier call or filter hides it)."""
    level, f = 2, sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PKG_DIR):
        f, level = f.f_back, level + 1
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.warn(msg, DeprecationWarning, stacklevel=level)
