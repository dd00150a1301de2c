"""bench/matrix.py's summary (ratios of the pairs measured back to back, medians, feed fractions)
and bench/chart.py's PNG, on made-up rows (the measurements themselves need the GPU machine)."""
from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import chart  # noqa: E402
import matrix  # noqa: E402


def _rows():
    rows = []
    for rnd, (td, dl) in enumerate([(300.0, 200.0), (180.0, 200.0)]):
        rows.append({"row": "fused", "round": rnd, "lib": "torch_dali", "images_per_s": td, "gpu_mem_mib": 1500,
                     "first_batch_s": 1.9})
        rows.append({"row": "fused", "round": rnd, "lib": "nvidia.dali", "images_per_s": dl, "gpu_mem_mib": 700,
                     "first_batch_s": 1.8})
    rows.append({"row": "val", "round": 0, "lib": "torch_dali", "images_per_s": 100.0, "gpu_mem_mib": 900})
    rows.append({"row": "seed", "round": 0, "lib": "torch_dali", "error": "timed out"})
    return rows


def test_summary_pairs_each_round_and_takes_medians():
    feeds = [{"feed": "synthetic", "images_per_s": 1000.0}, {"feed": "td", "images_per_s": 900.0},
             {"feed": "synthetic", "images_per_s": 1200.0}, {"feed": "dali", "images_per_s": 1045.0}]
    s = matrix.summarize(_rows(), feeds)
    assert s["fused"]["ratios"] == [1.5, 0.9]  # each round's own pair, not best against best
    assert s["fused"]["ratio_median"] == 1.2
    assert s["fused"]["gpu_mem_mib"] == {"torch_dali": 1500, "dali": 700}
    assert s["val"]["ratios"] == [] and s["val"]["ratio_median"] is None  # no DALI run: no ratio
    assert "seed" not in s  # only a failed run
    assert s["feed_fraction_of_synthetic"] == {"td": 0.818, "dali": 0.95}  # over the median synthetic speed


def test_chart_is_written(tmp_path):
    result = {"machine": "test", "date": "2026-12-01", "summary": matrix.summarize(_rows(), [])}
    out = tmp_path / "m.png"
    chart.write_chart(result, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000
