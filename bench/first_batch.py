"""Time to the first batch of a reference pipeline in a fresh process, and what it is made of.

    python bench/first_batch.py KIND DATA [--split] [--timeline]

Without --split: the clock starts after torch_dali is imported and the CUDA context exists (as
../shared/bench does) and stops when the first batch from DALIGenericIterator is on the GPU. With --split: the same, after first
timing, one after the other, the pieces the first batch would otherwise pay for (importing
torch_dali, loading the extension, making the nvJPEG decoder), so the remainder shows.
With --timeline: a thread samples every thread's stack each 5 ms from the clock's start to the
first batch and reports, per thread, the spans spent in each innermost torch_dali function (what
the first batch waits for). Prints one JSON line.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


class Timeline:
    """Samples every thread's innermost torch_dali frame (else its innermost frame) each `period`
    seconds; `spans()` merges consecutive equal samples into (start ms, end ms, where) per thread."""

    def __init__(self, period: float = 0.005) -> None:
        self.period = period
        self.t0 = time.perf_counter()
        self.samples: list[tuple[float, dict[str, str]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="timeline")
        self._thread.start()

    @staticmethod
    def _where(frame: object) -> str:
        f = frame
        fallback = None
        while f is not None:
            code = f.f_code  # type: ignore[attr-defined]
            if fallback is None:
                fallback = f"{os.path.basename(code.co_filename)}:{code.co_name}"
            if "torch_dali" in code.co_filename:
                return f"{code.co_filename.split('torch_dali/')[-1]}:{code.co_name}:{f.f_lineno}"  # type: ignore[attr-defined]
            f = f.f_back  # type: ignore[attr-defined]
        return fallback or "?"

    def _run(self) -> None:
        names = {}
        while not self._stop.is_set():
            now = time.perf_counter() - self.t0
            for t in threading.enumerate():
                names[t.ident] = t.name
            frames = sys._current_frames()
            self.samples.append((now, {names.get(k, str(k)): self._where(f) for k, f in frames.items()
                                       if names.get(k) != "timeline"}))
            time.sleep(self.period)

    def spans(self) -> dict[str, list[tuple[int, int, str]]]:
        self._stop.set()
        self._thread.join()
        out: dict[str, list[tuple[int, int, str]]] = {}
        for t, row in self.samples:
            ms = int(t * 1000)
            for name, where in row.items():
                seq = out.setdefault(name, [])
                if seq and seq[-1][2] == where:
                    seq[-1] = (seq[-1][0], ms, where)
                else:
                    seq.append((ms, ms, where))
        return {k: [s for s in v if s[1] - s[0] >= 10 or len(v) < 40] for k, v in out.items()}


def main() -> None:
    kind, data = sys.argv[1], sys.argv[2]
    split = "--split" in sys.argv
    import torch
    if not split:  # as ../shared/bench does: the library imported, then the context, then the clock
        t = time.perf_counter()
        import torch_dali.plugin.pytorch  # noqa: F401
        import_s = round(time.perf_counter() - t, 3)
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    res: dict = {"kind": kind, "split": split}
    if not split:
        res["import_before_clock_s"] = import_s
    timeline = Timeline() if "--timeline" in sys.argv else None
    t0 = time.perf_counter()
    if split:
        import torch_dali  # noqa: F401
        res["import_s"] = round(time.perf_counter() - t0, 3)
        t = time.perf_counter()
        from torch_dali._native import extension as _extension
        _extension.load()
        res["extension_s"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        from torch_dali.io import nvjpeg
        dec = nvjpeg._nvjpeg_decoder(torch.device("cuda", 0), 0.65 if kind != "fused" else 1.0)
        res["decoder_s"] = round(time.perf_counter() - t, 3)
        if dec is not None and hasattr(dec, "build_stats"):
            time.sleep(2)  # the other slots, made in the background
            res["decoder_build_us"] = dict(dec.build_stats)
    import reference_pipes as R
    import torch_dali.plugin.pytorch as plugin
    t = time.perf_counter()
    pipe = R.make("torch_dali", kind, data)
    pipe.build()
    res["build_s"] = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    it = plugin.DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                                    last_batch_policy=plugin.LastBatchPolicy.DROP, auto_reset=True)
    next(iter(it))
    torch.cuda.synchronize()
    res["first_batch_after_build_s"] = round(time.perf_counter() - t, 3)
    res["total_s"] = round(time.perf_counter() - t0, 3)
    if not split:  # after the clock: how the decoder's construction went (its background part too)
        from torch_dali.io import nvjpeg
        time.sleep(1.0)
        res["decoder_build_us"] = {f"{k[1]}:{name}": us for k, d in list(nvjpeg._NVJPEG.items()) if d is not None
                                   for name, us in dict(getattr(d, "build_stats", {})).items()}
    if timeline is not None:
        res["timeline_ms"] = timeline.spans()
    print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
