"""examples/ssd_pipeline.py: runs on the COCO sample, and its deterministic part (no random crop,
flips fixed) gives DALI's boxes and labels (tests/reference/detection_tables.npz, or DALI live)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from reference import detection_cases as C

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "ssd_pipeline.py"


def _example():
    spec = importlib.util.spec_from_file_location("ssd_pipeline_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_runs_with_random_crops(tmp_path):
    images, ann = C.write_coco_sample(tmp_path)
    r = subprocess.run([sys.executable, str(EXAMPLE), "--images", str(images), "--annotations", str(ann),
                        "--batch-size", "2", "--steps", "3"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "step 2: images (2, 3, 300, 300) torch.float32, boxes (2, 8732, 4)" in r.stdout


def test_default_boxes_are_ssd300s():
    anchors = np.array(_example().default_boxes()).reshape(-1, 4)
    assert anchors.shape == (8732, 4) and (anchors >= 0).all() and (anchors <= 1).all()


@pytest.mark.parametrize("source", ["table", "live"])
def test_deterministic_part_matches_dali(tmp_path, source):
    from torch_dali.plugin.pytorch import to_torch
    images, ann = C.write_coco_sample(tmp_path / "ours")
    pipe = _example().ssd_pipeline(str(images), str(ann), C.anchors(), random_crop=False, flip="always",
                                   batch_size=1, num_threads=2, device_id=None, seed=3)
    pipe.build()
    n = pipe.epoch_size("Reader")
    got = []
    for _ in range(n):
        img, boxes, labels = pipe.run()
        assert tuple(img.at(0).shape) == (3, 300, 300)
        got.append((np.array(boxes.at(0)), np.array(labels.at(0))))
    if source == "live":
        try:
            from reference import detection_dali
        except Exception as e:
            pytest.skip(f"live DALI comparison needs nvidia.dali ({type(e).__name__}); the table was compared")
        want = detection_dali.ssd_boxes(tmp_path / "dali")
    else:
        with np.load(Path(C.__file__).with_name(C.TABLES)) as z:
            want = [(z[f"ssd_example/{k}/boxes"], z[f"ssd_example/{k}/labels"]) for k in range(n)]
    assert len(got) == len(want) == 5
    for k, ((gb, gl), (wb, wl)) in enumerate(zip(got, want)):
        assert gl.dtype == wl.dtype and gb.dtype == wb.dtype
        np.testing.assert_array_equal(gl, wl, err_msg=f"labels of sample {k}")
        np.testing.assert_array_equal(gb, wb, err_msg=f"boxes of sample {k}")
    assert sum(int((lab > 0).sum()) for _, lab in got) > 0  # some anchors matched
