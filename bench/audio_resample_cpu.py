"""Audio resampling on the CPU: the same DALI code run with NVIDIA DALI's CPU backend and with
torch_dali, each (library, case) in its own process, alternating: a batch of 8 clips of 3-5 s
(seeded), 2 threads, the median time of a batch over >= 7 runs after warm-up.

Cases: `decode_16k` decodes 44.1 kHz stereo 16-bit WAVs held in memory with
`fn.decoders.audio(..., sample_rate=16000)`; `resample_down` / `resample_up` run
`fn.audio_resample` on float32 mono clips 44100 -> 16000 / 16000 -> 44100; `resample_st_q100`
on int16 stereo clips 44100 -> 22050 at quality 100.

    python bench/audio_resample_cpu.py [--dali-python ../dali-venv/bin/python] [--rounds 3]
    python bench/audio_resample_cpu.py --one LIB CASE      (child: prints one JSON line)
"""
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
import wave
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = {
    "decode_16k": "fn.decoders.audio(x, sample_rate=16000, dtype=types.FLOAT)[0]",
    "resample_down": "fn.audio_resample(x, in_rate=44100, out_rate=16000)",
    "resample_up": "fn.audio_resample(x, in_rate=16000, out_rate=44100)",
    "resample_st_q100": "fn.audio_resample(x, in_rate=44100, out_rate=22050, quality=100)",
}


def _clips(case: str) -> list:
    import numpy as np
    rng = np.random.default_rng(0)
    out = []
    for _ in range(8):
        n = int(rng.integers(3 * 44100, 5 * 44100))
        t = np.arange(n) / 44100.0
        wave_ = 0.5 * np.sin(2 * np.pi * rng.uniform(100, 4000) * t) + 0.1 * rng.standard_normal(n)
        if case == "decode_16k":
            st = (np.clip(np.stack([wave_, wave_[::-1]], 1), -1, 1) * 32767).astype(np.int16)
            buf = io.BytesIO()
            with wave.open(buf, "wb") as w:
                w.setnchannels(2), w.setsampwidth(2), w.setframerate(44100)
                w.writeframes(st.tobytes())
            out.append(np.frombuffer(buf.getvalue(), dtype=np.uint8))
        elif case == "resample_st_q100":
            out.append((np.clip(np.stack([wave_, -wave_], 1), -1, 1) * 32767).astype(np.int16))
        else:
            out.append(wave_.astype(np.float32))
    return out


def one(lib: str, case: str, runs: int) -> dict:
    import numpy as np
    if lib == "dali":
        from nvidia.dali import fn, pipeline_def, types
    else:
        from torch_dali import fn, pipeline_def, types
    clips = _clips(case)

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: clips)
        return eval(CASES[case], {"fn": fn, "types": types, "np": np, "x": x})  # our own table above

    p = pipe()
    p.build()
    for _ in range(2):
        p.run()
    ts: list[float] = []
    for _ in range(max(7, runs)):
        t = time.perf_counter()
        p.run()
        ts.append(time.perf_counter() - t)
    return {"lib": lib, "case": case, "ms_per_batch": round(1000 * statistics.median(ts), 2), "runs": len(ts)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--one", nargs=2, metavar=("LIB", "CASE"))
    ap.add_argument("--dali-python", default=os.environ.get("DALI_PYTHON", str(HERE.parent.parent / "dali-venv/bin/python")))
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--rounds", type=int, default=1, help="pairs of runs per case (median reported)")
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one[0], a.one[1], a.runs)))
        return 0
    libs = [("torch_dali", sys.executable)]
    if Path(a.dali_python).exists():
        libs.insert(0, ("dali", a.dali_python))
    for case in a.cases.split(","):
        times: dict[str, list[float]] = {lib: [] for lib, _ in libs}
        for _ in range(max(1, a.rounds)):
            for lib, py in libs:
                r = subprocess.run([py, __file__, "--one", lib, case, "--runs", str(a.runs)], capture_output=True,
                                   text=True, env=dict(os.environ, PYTHONPATH=str(HERE.parent)), timeout=600)
                line = [s for s in r.stdout.splitlines() if s.startswith("{")]
                if line:
                    times[lib].append(json.loads(line[-1])["ms_per_batch"])
                else:
                    print(f"{case} {lib}: {(r.stderr.strip().splitlines() or ['no output'])[-1][:200]}", flush=True)
        row = {"case": case, **{f"{lib}_ms": statistics.median(v) for lib, v in times.items() if v}}
        if row.get("dali_ms") and row.get("torch_dali_ms"):  # > 1: torch_dali faster
            row["dali_over_torch_dali"] = round(row["dali_ms"] / row["torch_dali_ms"], 2)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
