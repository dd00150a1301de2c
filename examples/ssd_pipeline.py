"""An SSD-style detection input pipeline on a COCO data set, written as for DALI with torch_dali's imports.

    python examples/ssd_pipeline.py --images DIR --annotations instances.json [--batch-size 8] [--steps 2]
                                    [--no-crop] [--flip always|never|random] [--device cpu|gpu]

COCO reader (ltrb boxes relative to the image) -> decode -> random_bbox_crop -> cut the window out of
the image -> resize to 300x300 -> flip image and boxes together (bb_flip) -> crop_mirror_normalize ->
box_encoder on SSD300's 8732 default boxes. `--no-crop --flip always` is the deterministic part (the
test compares its boxes and labels with DALI's). The window is cut with `fn.slice` where torch_dali
has it, else `fn.decoders.image_slice`, else a torch function (a plain crop of the decoded image).
"""
from __future__ import annotations

import argparse
import itertools
import math
import time
from typing import Any

import torch

import torch_dali.plugin.pytorch
from torch_dali import fn, pipeline_def, types

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def default_boxes(fig_size: int = 300, feat_size: tuple[int, ...] = (38, 19, 10, 5, 3, 1),
                  steps: tuple[int, ...] = (8, 16, 32, 64, 100, 300),
                  scales: tuple[int, ...] = (21, 45, 99, 153, 207, 261, 315),
                  aspect_ratios: tuple[tuple[int, ...], ...] = ((2,), (2, 3), (2, 3), (2, 3), (2,), (2,))) -> list[float]:
    """SSD300's default boxes as a flat ltrb list (8732 boxes with the defaults), clipped to [0, 1]."""
    out: list[float] = []
    for idx, sfeat in enumerate(feat_size):
        sk1, sk2 = scales[idx] / fig_size, scales[idx + 1] / fig_size
        sizes = [(sk1, sk1), (math.sqrt(sk1 * sk2),) * 2]
        for alpha in aspect_ratios[idx]:
            w, h = sk1 * math.sqrt(alpha), sk1 / math.sqrt(alpha)
            sizes += [(w, h), (h, w)]
        fk = fig_size / steps[idx]
        for w, h in sizes:
            for i, j in itertools.product(range(sfeat), repeat=2):
                cx, cy = (j + 0.5) / fk, (i + 0.5) / fk
                out += [min(max(v, 0.0), 1.0) for v in (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)]
    return out


def cut_window(image: torch.Tensor, anchor: torch.Tensor, shape: torch.Tensor) -> torch.Tensor:
    """The relative window (anchor x, y; shape w, h) of an HWC image, rounded to whole pixels."""
    h, w = image.shape[0], image.shape[1]
    x0, y0 = int(round(float(anchor[0]) * w)), int(round(float(anchor[1]) * h))
    x1, y1 = int(round(float(anchor[0] + shape[0]) * w)), int(round(float(anchor[1] + shape[1]) * h))
    return image[max(y0, 0):max(y1, y0 + 1), max(x0, 0):max(x1, x0 + 1)]


def decode_and_crop(jpegs: Any, anchor: Any, shape: Any, device: str) -> Any:
    decoder = "mixed" if device == "gpu" else "cpu"
    if anchor is None:
        return fn.decoders.image(jpegs, device=decoder, output_type=types.RGB)
    if hasattr(fn, "slice"):
        images = fn.decoders.image(jpegs, device=decoder, output_type=types.RGB)
        return fn.slice(images, anchor, shape, normalized_anchor=True, normalized_shape=True, axis_names="WH")
    if hasattr(fn.decoders, "image_slice"):
        return fn.decoders.image_slice(jpegs, anchor, shape, device=decoder, output_type=types.RGB,
                                       normalized_anchor=True, normalized_shape=True, axis_names="WH")
    images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
    images = fn.torch_python_function(images, anchor, shape, function=cut_window, output_layouts="HWC")
    return images.gpu() if device == "gpu" else images


@pipeline_def
def ssd_pipeline(file_root: str, annotations_file: str, anchors: list[float], random_crop: bool = True,
                 flip: str = "random", device: str = "cpu", size: int = 300, shard_id: int = 0, num_shards: int = 1):
    jpegs, boxes, labels = fn.readers.coco(file_root=file_root, annotations_file=annotations_file, ltrb=True,
                                           ratio=True, skip_empty=True, shard_id=shard_id, num_shards=num_shards,
                                           random_shuffle=random_crop, name="Reader")
    # random draws first: their seeds follow the node order, which then does not depend on the device
    mirror: Any = fn.random.coin_flip(probability=0.5) if flip == "random" else int(flip == "always")
    anchor = shape = None
    if random_crop:
        anchor, shape, boxes, labels = fn.random_bbox_crop(
            boxes, labels, aspect_ratio=[0.5, 2.0], thresholds=[0, 0.1, 0.3, 0.5, 0.7, 0.9],
            scaling=[0.3, 1.0], bbox_layout="xyXY", allow_no_crop=True, num_attempts=50)
    images = decode_and_crop(jpegs, anchor, shape, device)
    boxes = fn.bb_flip(boxes, ltrb=True, horizontal=mirror)
    images = fn.resize(images, resize_x=size, resize_y=size)
    images = fn.crop_mirror_normalize(images, mirror=mirror, mean=MEAN, std=STD, dtype=types.FLOAT,
                                      output_layout="CHW")
    if device == "gpu":
        boxes, labels = boxes.gpu(), labels.gpu()
    boxes, labels = fn.box_encoder(boxes, labels, anchors=anchors, criteria=0.5, offset=True, scale=1.0,
                                   stds=[0.1, 0.1, 0.2, 0.2])
    return images, boxes, labels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", required=True)
    ap.add_argument("--annotations", required=True)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-crop", action="store_true")
    ap.add_argument("--flip", choices=("always", "never", "random"), default="random")
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    pipe = ssd_pipeline(a.images, a.annotations, default_boxes(), random_crop=not a.no_crop, flip=a.flip,
                        device=a.device, batch_size=a.batch_size, num_threads=a.threads, seed=a.seed,
                        device_id=0 if a.device == "gpu" else None)
    pipe.build()
    t0 = time.perf_counter()
    for step in range(a.steps):
        images, boxes, labels = (torch_dali.plugin.pytorch.to_torch(x) for x in pipe.run())
        matched = int((labels > 0).sum())
        print(f"step {step}: images {tuple(images.shape)} {images.dtype}, boxes {tuple(boxes.shape)}, "
              f"labels {tuple(labels.shape)}, {matched} anchors matched")
    n = a.steps * a.batch_size
    print(f"{n / (time.perf_counter() - t0):.1f} images/s")


if __name__ == "__main__":
    main()
