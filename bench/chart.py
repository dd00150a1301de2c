"""A PNG of bench/matrix.py's result: per reference pipeline, torch_dali / DALI images/s (each
round's pair, and the median) against the 1.0 line and the project's 1.25 goal, and GPU memory of
both libraries; the feed fractions in the title.

    python bench/chart.py bench/results/matrix_h200.json bench/results/matrix_h200.png
"""
from __future__ import annotations

import json
import sys
from typing import Any


def write_chart(result: dict[str, Any], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    summary = {k: v for k, v in result["summary"].items() if isinstance(v, dict) and "ratios" in v}
    names = list(summary)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for i, name in enumerate(names):
        s = summary[name]
        for r in s["ratios"]:
            ax1.plot(i, r, "o", color="0.6", markersize=4)
        if s["ratio_median"] is not None:
            ax1.bar(i, s["ratio_median"], color="tab:green" if s["ratio_median"] >= 1.0 else "tab:orange", alpha=0.8)
    ax1.axhline(1.0, color="k", linewidth=1)
    ax1.axhline(1.25, color="k", linewidth=1, linestyle="--")
    ax1.set_xticks(range(len(names)), names, rotation=35, ha="right")
    ax1.set_ylabel("images/s, torch_dali / DALI (same run)")
    ax1.set_title("speed (bars: median; dots: each pair; dashed: goal 1.25)")
    width = 0.4
    for j, (lib, color) in enumerate((("torch_dali", "tab:blue"), ("dali", "tab:gray"))):
        vals = [summary[n]["gpu_mem_mib"][lib] or 0 for n in names]
        ax2.bar([i + (j - 0.5) * width for i in range(len(names))], vals, width, label=lib, color=color)
    ax2.set_xticks(range(len(names)), names, rotation=35, ha="right")
    ax2.set_ylabel("GPU memory taken, MiB")
    ax2.legend()
    ax2.set_title("memory")
    feed = result["summary"].get("feed_fraction_of_synthetic")
    title = f"{result.get('machine', '')} {result.get('date', '')}"
    if feed:
        title += "   ResNet-50 fed, fraction of synthetic: " + ", ".join(f"{k} {v:.2f}" for k, v in feed.items())
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    write_chart(json.loads(open(sys.argv[1]).read()), sys.argv[2])
