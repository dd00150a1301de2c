"""experimental.resize: DALI 2.4 has it on the GPU only (no CPU output to compare), with fn.resize's
argument list; here it is fn.resize's schema and kernels under that name. Checked: its arguments
and defaults are DALI's (the list below is DALI 2.4's signature, read once in /work/dali-venv), and
through the pipeline it gives DALI's CPU fn.resize values (tests/reference/dali_tables.npz) on a
few of test_ref_resize's cases, and fn.resize's outputs exactly."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from reference import cases as C
from reference.tables import stored
from test_ref_resize import assert_close_to_dali
from torch_dali import fn, ops, pipeline_def, types
from torch_dali.ops import lookup

# DALI 2.4's fn.experimental.resize keywords and defaults (common ones left out)
DALI_ARGS = {"antialias": True, "dtype": None, "interp_type": types.INTERP_LINEAR,
             "mag_filter": types.INTERP_LINEAR, "max_size": None, "min_filter": types.INTERP_LINEAR,
             "minibatch_size": 32, "mode": "default", "resize_longer": 0.0, "resize_shorter": 0.0,
             "resize_x": 0.0, "resize_y": 0.0, "resize_z": 0.0, "roi_end": None, "roi_relative": False,
             "roi_start": None, "save_attrs": False, "size": None, "subpixel_scale": True, "temp_buffer_hint": 0}
_INTERP = {"nn": types.INTERP_NN, "linear": types.INTERP_LINEAR, "cubic": types.INTERP_CUBIC,
           "lanczos3": types.INTERP_LANCZOS3, "triangular": types.INTERP_TRIANGULAR, "gaussian": types.INTERP_GAUSSIAN}


def test_arguments_are_dalis():
    schema = lookup("experimental.resize")
    for name, default in DALI_ARGS.items():
        arg = schema.arg(name)
        assert arg is not None, name
        if name in ("mag_filter", "min_filter") and arg.default is None:
            continue  # fn.resize's None: "interp_type's filter", which is DALI's default (linear) unless given
        assert arg.default == default, (name, arg.default)
    assert ops.experimental.Resize is not None and lookup("Resize").name == "resize"


def _run(op, case: dict) -> np.ndarray:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: [torch.from_numpy(C.RESIZE_IMG)], batch=True, layout="HWC")
        kw = {"size": list(case["size"]), "antialias": case["antialias"], "interp_type": _INTERP[case["filter"]]}
        if "roi" in case:
            y0, x0, h, w = case["roi"]  # (y, x, height, width), as the table generator reads it
            kw.update(roi_start=[y0, x0], roi_end=[y0 + h, x0 + w])
        return op(x, **kw)

    p = pipe()
    p.build()
    (out,) = p.run()
    return out[0].numpy()


@pytest.mark.parametrize("name", ["linear_aa_down", "cubic_noaa_up", "lanczos3_aa_down", "nn_aa_up", "linear_roi_0"])
def test_matches_dali_cpu_resize(name):
    if name not in C.RESIZE_CASES:
        name = next(n for n in C.RESIZE_CASES if n.startswith(name.rsplit("_", 1)[0]))
    case = C.RESIZE_CASES[name]
    got = _run(fn.experimental.resize, case)
    assert_close_to_dali(got, stored()[f"resize/{name}"])
    np.testing.assert_array_equal(got, _run(fn.resize, case))
