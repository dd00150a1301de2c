"""The geometry ops survive a YAML round trip with identical outputs, including required
arguments fed per sample (rotate's and transforms.rotation's `angle` from random.uniform)."""
from __future__ import annotations

import numpy as np
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.pipeline import Pipeline

IMGS = [torch.from_numpy(np.random.default_rng(i).integers(0, 255, (20, 24, 3)).astype(np.uint8)) for i in range(2)]


@pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
def geometry_pipeline():
    x = fn.external_source(name="src", layout="HWC")
    m = fn.transforms.rotation(fn.transforms.scale(scale=[1.2, 0.8], center=[10, 12]),
                               angle=fn.random.uniform(range=(-30, 30)), center=[12, 10])
    return (fn.warp_affine(x, m, fill_value=0.0, interp_type=types.INTERP_NN),
            fn.rotate(x, angle=fn.random.uniform(range=(-30, 30)), keep_size=True),
            fn.erase(x, anchor=[1, 2], shape=[3, 4], fill_value=[1.0, 2.0, 3.0]),
            fn.slice(x, rel_start=[0.1, 0.1], rel_shape=[0.5, 0.5], out_of_bounds_policy="reflect_101"),
            fn.pad(x, axis_names="HW", align=[16, 16]),
            fn.experimental.warp_perspective(x, matrix=[1, 0.1, 0, 0, 1, 0, 0, 0.001, 1], border_mode="wrap"),
            fn.multi_paste(x, in_ids=[0, 1], output_size=[30, 30], out_anchors=[[0, 0], [5, 5]]),
            fn.resize_crop_mirror(x, resize_shorter=16, crop=(12, 12), mirror=1),
            fn.roi_random_crop(crop_shape=[5, 5], roi_start=[2, 2], roi_shape=[8, 8], in_shape=[20, 24]),
            fn.coord_transform(fn.transforms.translation(offset=[1.0, 2.0]), M=[2.0]))


def _run(pipe):
    pipe.build()
    pipe.feed_input("src", IMGS, layout="HWC")
    return [[np.asarray(o.at(i)) for i in range(len(o))] for o in pipe.run()]


def test_yaml_round_trip_gives_identical_outputs():
    pipe = geometry_pipeline()
    first = _run(pipe)
    again = _run(Pipeline.deserialize(pipe.serialize()))
    for a, b in zip(first, again):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
