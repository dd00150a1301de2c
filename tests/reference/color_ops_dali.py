"""Runs a case of color_ops_cases through NVIDIA DALI's CPU backend (needs `nvidia.dali`); used by
color_ops_make.py to write the stored tables and by the tests' live comparisons. DALI and NumPy
only, never torch_dali."""
from __future__ import annotations

import numpy as np
from nvidia.dali import fn, pipeline_def, types

from . import color_ops_cases as C


_CV_BORDER = {"constant": "BORDER_CONSTANT", "replicate": "BORDER_REPLICATE", "reflect": "BORDER_REFLECT",
              "reflect_101": "BORDER_REFLECT_101", "wrap": "BORDER_WRAP"}


def _opencv_plane(case: dict, plane: np.ndarray) -> np.ndarray:
    """One H x W (x C, channels last) image through OpenCV as DALI's GPU operator's tests do."""
    import cv2
    args = case.get("args", {})
    if case["op"] == "experimental.median_blur":
        w = args.get("window_size", 3)
        return cv2.medianBlur(np.ascontiguousarray(plane), int(w[0] if isinstance(w, list) else w))
    w, h = args.get("mask_size", [3, 3])
    ax, ay = args.get("anchor", [-1, -1])
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (w, h))
    morph = cv2.dilate if case["op"] == "experimental.dilate" else cv2.erode
    return morph(np.ascontiguousarray(plane), kernel, anchor=(ax, ay), iterations=args.get("iterations", 1),
                 borderType=getattr(cv2, _CV_BORDER[args.get("border_mode", "constant")]))


def opencv_case(case: dict, batch: list[np.ndarray]) -> list[np.ndarray]:
    layout = case.get("layout", "HWC")
    out = []
    for x in batch:
        frames = x if layout.startswith("F") else x[None]
        lay = layout[1:] if layout.startswith("F") else layout
        res = []
        for f in frames:
            if lay == "CHW":
                res.append(np.stack([_opencv_plane(case, c) for c in f]))
            else:
                r = _opencv_plane(case, f)
                res.append(r.reshape(f.shape))
        out.append(np.stack(res) if layout.startswith("F") else res[0])
    return out


def run_case(name: str, seed: int = 1234) -> list[np.ndarray]:
    """DALI's output samples for case `name` (OpenCV's for cases marked ref="opencv")."""
    case = C.CASES[name]
    batch = C.inputs()[case["input"]]
    if case.get("ref") == "opencv":
        return opencv_case(case, batch) + [np.array(case.get("layout", "HWC"))]

    @pipeline_def(batch_size=len(batch), num_threads=1, device_id=None, seed=seed)
    def pipe():
        return C.graph(fn, types, case, batch)

    p = pipe()
    p.build()
    out, = p.run()
    return [np.array(out.at(i)) for i in range(len(out))] + [np.array(out.layout())]
