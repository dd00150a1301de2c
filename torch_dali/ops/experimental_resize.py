"""experimental.resize: DALI 2.4's GPU-only resize (CV-CUDA's kernels there) has fn.resize's
arguments, defaults and sizing rules exactly, so here it is fn.resize's schema and kernels under the
experimental name (same results as fn.resize, not CV-CUDA's bits). DALI lists volumes (DHWC, ...)
among its layouts; fn.resize here refuses volumes, and so does this. Like experimental.remap, it
also runs on the CPU here, where DALI runs it on the GPU only."""
from __future__ import annotations

import dataclasses

from . import geometry  # noqa: F401 - registers resize first
from ._registry import lookup, register

_RESIZE = lookup("resize")

register(dataclasses.replace(
    _RESIZE, name="experimental.resize", _by_name={},
    doc="fn.resize under DALI's experimental name (DALI: GPU only, CV-CUDA); the same arguments and results "
        "as fn.resize here. " + _RESIZE.doc,
))
