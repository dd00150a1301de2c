"""decoders.image_crop, decoders.image_slice and peek_image_shape against DALI 2.4's CPU backend,
on the encoded files stored with the decoder tables (JPEG 4:2:0 / 4:4:4 / gray, PNG RGBA, BMP):
exact windows and pixels (the same libjpeg-turbo decode; our CPU path decodes only the window of
a JPEG; float outputs within 1 ulp, decoders.image's own scaling), exact shapes and types from the
headers; windows leaving the image are refused."""
from __future__ import annotations

import numpy as np
import pytest

from reference import geometry_cases as G
from reference.geometry_cases_regions import encoded
from reference.geometry_tables import SOURCES, check_refused, dali, ours

CASES = [k for k in G.CASES if k.startswith("decoders/")]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", CASES)
def test_matches_dali(name, source):
    want = dali(source, name)
    if isinstance(want, str):
        check_refused(name, want)
        return
    got = ours(name)
    for g_out, w_out in zip(got, want):
        assert len(g_out) == len(w_out)
        for g, w in zip(g_out, w_out):
            assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
            if g.dtype.kind == "f":  # decoders.image's scaling to [0, 1] rounds within 1 ulp of DALI's
                np.testing.assert_allclose(g, w, rtol=2.4e-7, atol=0)
            else:
                np.testing.assert_array_equal(g, w)


def test_crop_decoder_equals_decode_then_crop():
    """The window decode gives the crop of the whole decode (same pixels as fn.crop after it)."""
    import torch
    from torch_dali import fn, pipeline_def
    data = torch.from_numpy(encoded()["jpeg_420"].copy())

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        x = fn.external_source(source=lambda: [data], batch=True)
        return (fn.decoders.image_crop(x, crop=(9, 11), crop_pos_x=0.7, crop_pos_y=0.2),
                fn.crop(fn.decoders.image(x), crop=(9, 11), crop_pos_x=0.7, crop_pos_y=0.2))
    pipe = p()
    pipe.build()
    a, b = pipe.run()
    np.testing.assert_array_equal(a.at(0), b.at(0))
