"""The shipped configs (`torch_dali/data/configs/*.yaml`, package data, so an installed wheel has
them), defined in Python: each YAML file is the serialize() output of its definition here plus
comments, and the tests check that they agree byte for byte."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .graph.pipeline import Pipeline

CONFIG_DIR = Path(__file__).resolve().parent / "data" / "configs"

IMAGENET_MEAN = [123.675, 116.28, 103.53]
IMAGENET_STD = [58.395, 57.12, 57.375]


def _imagenet_train() -> Pipeline:
    from . import fn, pipeline_def, types

    @pipeline_def(batch_size=256, num_threads=8, device_id=0, seed=12)
    def pipe():
        jpegs, labels = fn.readers.file(file_root="/path/to/imagenet/train", random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB, name="Decoder")
        images = fn.random_resized_crop(images, size=(224, 224), name="RandomResizedCrop")
        images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(name="Flip"), mean=IMAGENET_MEAN,
                                          std=IMAGENET_STD, dtype=types.FLOAT, output_layout="CHW",
                                          name="Normalize")
        return images, labels
    return pipe()


def _imagenet_val() -> Pipeline:
    from . import fn, pipeline_def, types

    @pipeline_def(batch_size=256, num_threads=8, device_id=0, seed=12)
    def pipe():
        jpegs, labels = fn.readers.file(file_root="/path/to/imagenet/val", name="Reader")
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB, name="Decoder")
        images = fn.resize(images, resize_shorter=256, interp_type=types.INTERP_LINEAR, name="Resize")
        images = fn.crop_mirror_normalize(images, crop=(224, 224), mean=IMAGENET_MEAN, std=IMAGENET_STD,
                                          dtype=types.FLOAT, output_layout="CHW", name="Normalize")
        return images, labels
    return pipe()


def _recordio_train() -> Pipeline:
    from . import fn, pipeline_def, types

    @pipeline_def(batch_size=16, num_threads=2, device_id=0, seed=12)
    def pipe():
        jpegs, labels = fn.readers.mxnet(path=["/path/to/recordio/train.rec"],
                                         index_path=["/path/to/recordio/train.idx"], name="Reader")
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB, name="Decoder")
        images = fn.resize(images, resize_shorter=fn.random.uniform(range=(256.0, 480.0), name="ShorterSide"),
                           interp_type=types.INTERP_LINEAR, name="Resize")
        images = fn.crop_mirror_normalize(images, crop=(224, 224), mean=[0.0, 0.0, 0.0], std=[1.0, 1.0, 1.0],
                                          dtype=types.FLOAT, name="Normalize")
        return images, labels
    return pipe()


def _torchvision_augment() -> Pipeline:
    from . import fn, pipeline_def, types
    from .augment import color_jitter

    @pipeline_def(batch_size=64, num_threads=4, device_id=0, seed=12)
    def pipe():
        jpegs, labels = fn.readers.file(file_root="/path/to/imagenet/train", random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB, name="Decoder")
        images = fn.random_resized_crop(images, size=(224, 224), name="RandomResizedCrop")
        images = fn.torch_python_function(images, function=color_jitter, name="ColorJitter")
        images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(name="Flip"), mean=IMAGENET_MEAN,
                                          std=IMAGENET_STD, dtype=types.FLOAT, output_layout="CHW",
                                          name="Normalize")
        return images, labels
    return pipe()


_RUN = ("# Run:      torch-dali run {name} --data {data} [--batches N] [--set Node.arg=value]\n"
        "#           (a shipped config by name; a path runs an edited copy of this file)\n")
SHIPPED: dict[str, tuple[Any, str]] = {
    "imagenet_train": (_imagenet_train, (
        "# ImageNet training: decode (nvJPEG when CUDA is there), random-resized-crop 224, random flip,\n"
        "# normalize to CHW float with ImageNet mean/std. Without CUDA the gpu/mixed ops run on the CPU.\n"
        + _RUN.format(name="imagenet_train", data="/data/imagenet/train"))),
    "imagenet_val": (_imagenet_val, (
        "# ImageNet evaluation: decode, resize the shorter side to 256, center crop 224, normalize.\n"
        + _RUN.format(name="imagenet_val", data="/data/imagenet/val"))),
    "recordio_train": (_recordio_train, (
        "# DALI's Serialization example: MXNet RecordIO, decode, resize the shorter side to a random\n"
        "# 256..480, center crop 224, mean 0 / std 1 (pixel values as floats).\n"
        "# --data takes a .rec file (its .idx beside it) or a folder of .rec/.idx pairs.\n"
        + _RUN.format(name="recordio_train", data="/data/recordio/train.rec"))),
    "torchvision_augment": (_torchvision_augment, (
        "# ImageNet training with a torchvision v2 ColorJitter as a torch_python_function, referenced by\n"
        "# import path (torch_dali.augment:color_jitter); seeded per sample, so it is reproducible.\n"
        + _RUN.format(name="torchvision_augment", data="/data/imagenet/train"))),
}
_FOOTER = ("# Paths under /path/to are placeholders: --data (or configs.load(data=...)) replaces them.\n"
           "# Generated from the Python definitions in torch_dali/shipped_configs.py by write_shipped();\n"
           "# the tests check that file and definition agree.\n")
_NOTES = {  # a comment above each op of that name
    "Reader": "the data: point it elsewhere with --data PATH or --set Reader.<arg>=<value>",
    "Decoder": "mixed: nvJPEG on the GPU when CUDA is available, else the CPU decoder",
    "Flip": "per-sample 0/1 feeding CropMirrorNormalize's `mirror`",
    "ShorterSide": "per-sample shorter side feeding Resize's `resize_shorter`",
    "ColorJitter": "torchvision.transforms.v2.ColorJitter on HWC uint8 images (torch_dali/augment.py)",
}


def _annotate(text: str) -> str:
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("- name: ") and line[8:].strip() in _NOTES:
            lines.append(f"# {_NOTES[line[8:].strip()]}\n")
        lines.append(line)
    return "".join(lines)


def shipped_pipeline(name: str) -> Pipeline:
    """The Python definition of a shipped config."""
    return SHIPPED[name][0]()


def write_shipped(folder: str | Path = CONFIG_DIR) -> list[Path]:
    """(Re)writes the shipped configs from their Python definitions."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name, (make, header) in SHIPPED.items():
        path = folder / f"{name}.yaml"
        path.write_text(header + _FOOTER + _annotate(make().serialize()), encoding="utf-8")
        out.append(path)
    return out
