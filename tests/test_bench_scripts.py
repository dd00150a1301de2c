"""The benchmark scripts parse their results and draw their chart (the GPU runs happen elsewhere)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


def test_throughput_chart_and_ratios_from_recorded_results(tmp_path):
    import throughput
    recorded = json.loads((ROOT / "bench" / "results" / "throughput_h200.json").read_text())
    results = {"machine": recorded["machine"], "sections": recorded["sections"], "batch_size": 256}
    rows = throughput.chart_rows(results)
    assert ("throughput_torch_dali", 24890.0) in rows
    assert ("dali_same_run q90_420_hw0.9", 26522.0) in rows
    got, want = throughput.vs_dali(results), recorded["vs_dali"]
    assert got["q90_420"] == want["q90_420"]
    assert got["q95_444"]["ratio"] == want["q95_444"]["ratio"]
    out = tmp_path / "chart.png"
    throughput.write_chart(results, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cpu_ops_vs_dali_runs_every_op_of_its_table_with_torch_dali():
    """bench/cpu_ops_vs_dali.py's DALI code runs as written with torch_dali (its timings are for
    the bench; here only that each op builds and runs)."""
    import cpu_ops_vs_dali
    for op in cpu_ops_vs_dali.OPS:
        row = cpu_ops_vs_dali.one("torch_dali", op, 0.0)
        assert row["op"] == op and row["batches"] >= 3 and row["ms_per_batch"] > 0
