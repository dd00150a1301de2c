"""Arguments DALI 2.4 deprecates (its schemas' IsDeprecatedArg: `output_dtype`, `image_type`, the
decoders' `memory_stats`/`split_stages`/`use_chunk_allocator`, readers.coco's old names...) give a
DeprecationWarning when an op is made with them, one per argument, as DALI's do (counts measured
with DALI 2.4 on these calls: core/test_pipeline.py's test_output_dtype_deprecation and
test_image_type_deprecation check two of them), and `seed` given to an op that draws no random
numbers (test_seed_deprecated). The warning points at the caller's line."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from torch_dali import fn, ops, types
from torch_dali.pipeline import Pipeline

IMG = np.zeros((8, 8, 3), np.uint8)
ENC = np.zeros(10, np.uint8)
COCO = dict(file_root="/nonexistent/images", annotations_file="/nonexistent/instances.json")


def _warnings(make):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
        with pipe:
            make()
    return [x for x in w if issubclass(x.category, DeprecationWarning)]


CASES = [  # (call, DeprecationWarnings DALI 2.4 gives)
    (lambda: fn.crop_mirror_normalize(types.Constant(IMG), output_dtype=types.FLOAT), 1),
    (lambda: fn.crop_mirror_normalize(types.Constant(IMG), image_type=types.RGB), 1),
    (lambda: fn.crop_mirror_normalize(types.Constant(IMG), image_type=types.RGB, output_dtype=types.FLOAT), 2),
    (lambda: fn.crop(types.Constant(IMG), crop=(2, 2), output_dtype=types.FLOAT), 1),
    (lambda: fn.slice(types.Constant(IMG), 0, 1, axes=[0], image_type=types.RGB), 1),
    (lambda: fn.resize(types.Constant(IMG), size=4, image_type=types.RGB), 1),
    (lambda: fn.rotate(types.Constant(IMG), angle=10.0, output_dtype=types.FLOAT), 1),
    (lambda: fn.warp_affine(types.Constant(IMG), matrix=[1.0, 0, 0, 0, 1, 0], output_dtype=types.FLOAT), 1),
    (lambda: fn.lookup_table(types.Constant(IMG), keys=[0], values=[1.0], output_dtype=types.FLOAT), 1),
    (lambda: fn.shapes(types.Constant(IMG), type=types.INT32), 2),  # fn.shapes itself is deprecated too
    (lambda: fn.decoders.image(types.Constant(ENC), memory_stats=False), 1),
    (lambda: fn.decoders.image(types.Constant(ENC), split_stages=True, use_chunk_allocator=True), 2),
    (lambda: fn.decoders.image_crop(types.Constant(ENC), crop=(2, 2), split_stages=True), 1),
    (lambda: fn.readers.coco(**COCO, save_img_ids=True), 1),
    (lambda: fn.readers.coco(**COCO, masks=False), 1),
    (lambda: fn.readers.coco(**COCO, dump_meta_files=True, dump_meta_files_path="/tmp"), 2),
    (lambda: fn.readers.nemo_asr(manifest_filepaths=["/nonexistent.json"], normalize_text=True), 1),
    (lambda: fn.crop_mirror_normalize(types.Constant(IMG), dtype=types.FLOAT), 0),
]


@pytest.mark.parametrize("k", range(len(CASES)))
def test_deprecated_arguments_warn(k):
    make, count = CASES[k]
    got = _warnings(make)
    assert len(got) == count, [str(x.message) for x in got]  # none before
    assert all(x.filename == __file__ for x in got)


def test_class_api_warns_once_when_made():
    def make():
        op = ops.CropMirrorNormalize(output_dtype=types.FLOAT)
        op(types.Constant(IMG))
        op(types.Constant(IMG))
    got = _warnings(make)
    assert len(got) == 1 and "dtype" in str(got[0].message)


SEED_CASES = [  # `seed` given to ops that draw no random numbers warns; DALI 2.4's counts
    (lambda: fn.reshape(types.Constant(np.float32([1, 2])), shape=[2], seed=123), 1),
    (lambda: fn.flip(types.Constant(IMG), seed=5), 1),
    (lambda: fn.crop_mirror_normalize(types.Constant(IMG), seed=5), 1),
    (lambda: fn.decoders.image(types.Constant(ENC), seed=5), 1),
    (lambda: fn.python_function(types.Constant(IMG), function=lambda x: x, seed=5), 1),
    (lambda: fn.cast(types.Constant(IMG), dtype=types.FLOAT, seed=5), 1),
    (lambda: ops.Flip(seed=5)(types.Constant(IMG)), 1),
    (lambda: fn.random.uniform(seed=5), 0),
    (lambda: fn.random_resized_crop(types.Constant(IMG), size=4, seed=5), 0),
    (lambda: fn.readers.file(files=["/nonexistent.jpg"], seed=5), 0),
    (lambda: fn.external_source(source=lambda: [IMG], seed=5), 0),
]


@pytest.mark.parametrize("k", range(len(SEED_CASES)))
def test_seed_on_ops_without_randomness_warns(k):
    make, count = SEED_CASES[k]
    got = _warnings(make)
    assert len(got) == count, [str(x.message) for x in got]  # none before
    assert all("seed" in str(x.message) and x.filename == __file__ for x in got)
