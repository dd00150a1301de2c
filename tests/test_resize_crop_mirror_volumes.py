"""resize_crop_mirror on volumes, as DALI 2.4 does it (measured with its CPU backend, 2026-12-05):
`size`/`resize_z` size the depth, `crop` of three values (or crop_d with crop_h and crop_w) crops
it, crop_pos_z places the window, mirror bit k flips the layout's axis at position 2 - k when it is
D, H or W (DHWC: 1 width, 2 height, 4 depth; CDHW: 1 height, 2 depth). `crop` of two values
crops height and width only. Digests of DALI's outputs."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from torch_dali import fn, pipeline_def

VOL = (np.arange(12 * 20 * 16 * 2) % 251).astype(np.uint8).reshape(12, 20, 16, 2)


def _run(data, layout, **kw):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.resize_crop_mirror(fn.external_source(source=lambda: [data], batch=True, layout=layout), **kw)

    p = pipe()
    p.build()
    out = p.run()[0]
    return np.asarray(out.at(0)), out.layout()


@pytest.mark.parametrize("mirror,digest", [
    (1, "e7711188fa7335805efda08b5cd0053415403bc963076b4466f4e4a043186fc2"),
    (2, "628015079ea089da9ea164129e46c0745a480fea21c53dd0b3721d78aa85878e"),
    (4, "ec5f3b630f5b9e283d615090de0a4f5031659cd66de7c6343d8f8d3d4ccd71f8"),
    (7, "8fee0ab66ca0645246aa9fb41d8775581d070d62c1db76c9fbb179765ab11b76"),
])
def test_dhwc_crop_and_mirror(mirror, digest):
    out, layout = _run(VOL, "DHWC", size=[10, 15, 12], crop=(8, 9, 10), mirror=mirror)
    assert out.shape == (8, 9, 10, 2) and layout == "DHWC"
    assert hashlib.sha256(out.tobytes()).hexdigest() == digest


def test_resize_z_and_crop_d():
    out, _ = _run(VOL, "DHWC", resize_z=7, resize_x=9, crop_d=5, crop_h=6, crop_w=7, crop_pos_z=0.2)
    assert out.shape == (5, 6, 7, 2)
    assert hashlib.sha256(out.tobytes()).hexdigest() == \
        "b84bdc2543667e87f6ee8802b786ac47b8944d0bb413aac0dc40699a0eda421b"


def test_cdhw_mirror_bits_flip_height_and_depth():
    cdhw = np.ascontiguousarray(VOL.transpose(3, 0, 1, 2))
    out, layout = _run(cdhw, "CDHW", size=[10, 15, 12], crop=(8, 9, 10), mirror=3)
    assert out.shape == (2, 8, 9, 10) and layout == "CDHW"
    assert hashlib.sha256(out.tobytes()).hexdigest() == \
        "91f612d9bb232d3c738ea3c4735bc3aef324e07850d0b882c2926fa4d21cb115"


def test_two_value_crop_keeps_the_depth():
    out, _ = _run(VOL, "DHWC", size=[10, 15, 12], crop=(6, 7))
    assert out.shape == (10, 6, 7, 2)
