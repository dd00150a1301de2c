"""DALI's reference pipelines as DALI code, for either library (`lib` = "torch_dali" or
"nvidia.dali"): the same definitions as ../shared/bench (bench_anchors.py, bench_more.py), so our
own harness measures what users run.

kinds: fused (decoders.image_random_crop mixed + resize 224 + CMN, DALI's ResNet-50 recipe),
unfused (decoders.image mixed + random_resized_crop 224 + CMN), flip_builtin / flip_pyfn (unfused
+ a horizontal flip as fn.flip or a TorchPythonFunction), decode_only, seed (the Serialization
example's pipeline on a RecordIO file, ops API), val (decode + resize_shorter 256 + CMN centre crop).
"""
from __future__ import annotations

import importlib
import os
from typing import Any

BS = int(os.environ.get("REF_BS", "256"))
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
KINDS = ("fused", "unfused", "flip_builtin", "flip_pyfn", "decode_only", "seed", "val")


def hflip_hwc(t: Any) -> Any:
    """Per-sample torch flip for the Python-op cost comparison (same as fn.flip(horizontal=1))."""
    return t.flip(1)


def make(lib: str, kind: str, data: str, threads: int | None = None, hw_load: float | None = None,
         batch_size: int = BS) -> Any:
    """An unbuilt pipeline of `kind` over `data` (a JPEG class folder; a .rec file for "seed").
    hw_load: the decoder's hw_decoder_load, by default what the judge's reference.sh asks for
    (1.0 for fused, DALI's ResNet-50 recipe; 0.65 otherwise)."""
    if hw_load is None:
        hw_load = 1.0 if kind == "fused" else 0.65
    nd = importlib.import_module(lib)
    fn, types, ops = nd.fn, nd.types, nd.ops
    plugin = importlib.import_module(lib + ".plugin.pytorch")
    threads = threads or os.cpu_count() or 1
    if kind == "seed":
        Pipeline = importlib.import_module(lib + ".pipeline").Pipeline

        class SerializedPipeline(Pipeline):  # type: ignore[misc, valid-type]
            def __init__(self) -> None:
                super().__init__(batch_size, threads, 0, seed=12)
                self.input = ops.MXNetReader(path=[data], index_path=[data[:-4] + ".idx"],
                                             random_shuffle=True)
                self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
                self.resize = ops.Resize(device="gpu", interp_type=types.INTERP_LINEAR)
                self.cmnp = ops.CropMirrorNormalize(device="gpu", dtype=types.FLOAT, crop=(224, 224),
                                                    mean=MEAN, std=STD)
                self.res_uniform = ops.random.Uniform(range=(256.0, 480.0))
                self.uniform = ops.random.Uniform(range=(0.0, 1.0))

            def define_graph(self) -> Any:
                jpegs, labels = self.input(name="Reader")
                images = self.decode(jpegs)
                images = self.resize(images, resize_shorter=self.res_uniform())
                output = self.cmnp(images, crop_pos_x=self.uniform(), crop_pos_y=self.uniform())
                return output, labels
        return SerializedPipeline()

    @nd.pipeline_def(batch_size=batch_size, num_threads=threads, device_id=0, seed=1,
                     prefetch_queue_depth=2)
    def p() -> Any:
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=(kind != "val"), name="Reader")
        if kind == "fused":
            images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB,
                                                   hw_decoder_load=hw_load)
            images = fn.resize(images, resize_x=224, resize_y=224)
        elif kind == "val":
            images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
            images = fn.resize(images, resize_shorter=256)
            return fn.crop_mirror_normalize(images, crop=(224, 224), dtype=types.FLOAT,
                                            output_layout="CHW", mean=MEAN, std=STD), labels
        else:
            images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB,
                                       hw_decoder_load=hw_load)
            if kind == "decode_only":
                return images, labels
            images = fn.random_resized_crop(images, size=[224, 224])
            if kind == "flip_builtin":
                images = fn.flip(images, horizontal=1)
            elif kind == "flip_pyfn":
                images = plugin.TorchPythonFunction(function=hflip_hwc, device="gpu")(images)
        mirror = fn.random.coin_flip(probability=0.5)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                          mean=MEAN, std=STD, mirror=mirror)
        return images, labels
    return p()
