"""examples/train_resnet.py runs its loop with torch_dali.DataLoader (CPU here)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from torch_dali.sample_data import make_image_folder

ROOT = Path(__file__).resolve().parents[1]


def test_train_resnet_example_runs(tmp_path):
    make_image_folder(tmp_path / "images", images_per_class=2, seed=0, mean_hw=(64, 64))
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "train_resnet.py"), "--loader", "torch_dali",
                        "--data", str(tmp_path / "images"), "--batch-size", "4", "--workers", "2",
                        "--max-steps", "2"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "images/s on rank 0 (torch_dali)" in r.stdout
