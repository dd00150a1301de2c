"""Fuzz targets for the data entry points: the C header table (host_io), JPEG region windows
(jpeg_roi), PNG decoding, TIFFs read by io.tiff, the RecordIO reader, the crop-window helper
(crop_windows.c); the CPU image kernels (resize, crop_mirror_normalize, colour, warps) in
tests/_fuzz_image.py, the detection helpers in tests/_fuzz_detection.py, the readers' file parsers
(LMDB, caffe records, tf.train.Example, .npy, tar) in tests/_fuzz_readers.py.

Each target takes mutated bytes (seeded, deterministic: input i of a run is a function of the run's
seed and i alone) and checks an oracle besides "no crash": the C and Python header parsers agree and
read the size libjpeg decodes; ROI windows outside the image are refused and inside ones give the
pixels of a full decode; decoded PNGs and TIFFs have their header's size (TIFFs: and channels);
mapped and pread RecordIO reads agree; C and Python crop windows are equal and inside the image;
the image kernels give the spec's bits (tests/_fuzz_image.py). Only the library's own errors (DataError, ...) may be raised.

    python -m tests._fuzz --iterations 2000        # every target in-process, fixed seed (CI runs fewer)
    make fuzz FUZZ_SECONDS=600                     # each target 10 min in a child, C under ASan+UBSan

Each target runs in a child process; a child that dies (a crash, a sanitizer report) is reported
with the input that killed it, saved under --out, and the command that replays it.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import mmap
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torchvision.io  # noqa: F401  (registers torch.ops.image; torch_dali imports torchvision only when it decodes)

from torch_dali import types
from torch_dali.errors import TorchDaliError
from torch_dali.rng import SampleRNG
from torch_dali.functional import crop_window as CW
from torch_dali.ops.fast import windows as FW
from torch_dali._native import helpers
from torch_dali.io import decode as D
from torch_dali.io import headers
from torch_dali.io import host_io as H
from torch_dali.io import jpeg_roi as R
from torch_dali.io.recordio import RecordFile

try:
    from tests._fuzz_detection import TARGETS as DETECTION_TARGETS
    from tests._fuzz_image import TARGETS as IMAGE_TARGETS
    from tests._fuzz_readers import TARGETS as READER_TARGETS
except ImportError:
    from _fuzz_detection import TARGETS as DETECTION_TARGETS  # type: ignore[no-redef]
    from _fuzz_image import TARGETS as IMAGE_TARGETS  # type: ignore[no-redef]
    from _fuzz_readers import TARGETS as READER_TARGETS  # type: ignore[no-redef]
try:
    from tests._fuzz_inputs import fix_png_crcs, guard, jpeg_seeds, mutate, mutate_png_pixels, png_seeds, rec_seed
except ImportError:
    from _fuzz_inputs import (fix_png_crcs, guard, jpeg_seeds, mutate,  # type: ignore[no-redef]
                              mutate_png_pixels, png_seeds, rec_seed)
try:
    from tests.reference import tiff_ref
except ImportError:
    from reference import tiff_ref  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
INT_MAX = 2**31 - 1


# -- targets ---------------------------------------------------------------------------------------

class Fail(AssertionError):
    """An oracle violation (the input is reported; the reader targets raise their own AssertionError
    subclass)."""


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise Fail(what)


def _t(b: bytes) -> torch.Tensor:
    return torch.frombuffer(bytearray(b), dtype=torch.uint8) if b else torch.empty(0, dtype=torch.uint8)


def target_headers(data: bytes, rnd: random.Random) -> None:
    """C header table == Python parse; both read the size libjpeg reads; scans counted, bounded."""
    py = H._py_info(_t(data))
    if H.available():
        c = H.image_infos([guard(0).place(data)])[0]
        _check(c == py, f"C {c} != Python {py}")
    if data[:2] == b"\xff\xd8":
        _check(headers.jpeg_scans(data, 20) <= 21, "scan count past its limit")
        if R.available():
            try:
                h, w = R.jpeg_header(data, lenient=True)[:2]
            except TorchDaliError:
                return
            _check(py is not None and (py.height, py.width) == (h, w),
                   f"libjpeg reads {w}x{h}, the parser {py}")


def _window(rnd: random.Random, h: int, w: int) -> tuple[int, int, int, int]:
    edge = [0, 1, 7, 8, 15, 16, h - 1, w - 1, h, w, INT_MAX, INT_MAX - 1, INT_MAX - 8, -1, -INT_MAX - 1]
    if rnd.random() < 0.6:
        y, x = rnd.randrange(h), rnd.randrange(w)
        return y, x, rnd.randint(1, h - y), rnd.randint(1, w - x)
    pick = (lambda: rnd.choice(edge) if rnd.random() < 0.7 else rnd.randint(-3, 100))
    return pick(), pick(), pick(), pick()


_ROI_FULL: dict[bytes, torch.Tensor] = {}


def target_roi(data: bytes, rnd: random.Random) -> None:
    """tdj_decode_roi with a guarded output buffer of exactly the window's size: windows outside
    the image are BAD_ARGS, nothing written past the buffer; a valid file's window equals the
    full decode's crop. decode_roi (Python) refuses outside windows before allocating."""
    lib = R.LIB.load()
    if lib is None:
        return
    try:
        H_, W_ = R.jpeg_header(data)[:2]  # libjpeg's size (warnings are errors, as in the decode)
    except TorchDaliError:
        H_ = W_ = None
    y, x, h, w = _window(rnd, H_ or 37, W_ or 53)
    gray = rnd.random() < 0.3
    c = 1 if gray else 3
    want = h * w * c if h > 0 and w > 0 else 0
    out = guard(1).place(b"\x77" * (want if 0 < want <= 1 << 16 else 64))
    src = guard(0).place(data)
    msg = ctypes.create_string_buffer(256)
    rc = lib.tdj_decode_roi(src.data_ptr(), len(data), y, x, h, w, int(gray), out.data_ptr(), out.numel(),
                            msg, 256)
    _check(rc in (0, 1, 2, 3), f"return code {rc}")
    if H_ is None:
        return
    inside = h > 0 and w > 0 and 0 <= y and 0 <= x and y + h <= H_ and x + w <= W_
    if h > 0 and w > 0:
        _check(rc != 0 or inside, f"decoded window {(y, x, h, w)} outside {H_}x{W_}")
        _check(inside or rc == 3, f"window {(y, x, h, w)} outside {H_}x{W_}: rc {rc} ({msg.value!r})")
    if data in _ROI_FULL and inside and not gray:
        _check(rc == 0, f"valid file, window {(y, x, h, w)}: rc {rc} ({msg.value!r})")
        got = out[:want].view(h, w, c)
        _check(torch.equal(got, _ROI_FULL[data][y:y + h, x:x + w]), f"window {(y, x, h, w)} pixels differ")
    try:  # the Python wrapper
        got = R.decode_roi(_t(data), (y, x, h, w), gray)
        _check(inside and tuple(got.shape) == (h, w, c), f"decode_roi gave {tuple(got.shape)} for {(y, x, h, w)}")
    except (ValueError, TorchDaliError):
        pass


def target_png(data: bytes, rnd: random.Random) -> None:
    """Decoding raises DataError or gives an image of the header's (oriented) size."""
    out_type = rnd.choice([types.RGB, types.GRAY, types.ANY_DATA])
    try:
        img = D.decode_image(_t(data), out_type, dtype=rnd.choice([torch.uint8, torch.uint16]))
    except TorchDaliError:
        return
    info = D.peek_image_info(data)
    _check(tuple(img.shape[:2]) == D.oriented_size(info), f"decoded {tuple(img.shape)} for {info}")


def target_tiff(data: bytes, rnd: random.Random) -> None:
    """Multi-sample / 16-bit TIFFs (io.tiff): DataError, or the header's oriented size and channels."""
    out_type = rnd.choice([types.RGB, types.GRAY, types.ANY_DATA])
    try:
        img = D.decode_image(_t(data), out_type, dtype=rnd.choice([torch.uint8, torch.uint16]))
    except TorchDaliError:
        return
    info = D.peek_image_info(data)
    _check(tuple(img.shape[:2]) == D.oriented_size(info) and img.shape[2] == D.output_channels(info, out_type),
           f"decoded {tuple(img.shape)} for {info}")


_REC_DIR = tempfile.mkdtemp(prefix="td-fuzz-rec-")


def target_recordio(data: bytes, rnd: random.Random) -> None:
    """The batched read (`simple_records`) and record-by-record reads of the same offsets agree
    where the batch reads them; a file cut while open gives DataErrors, never a signal."""
    path = os.path.join(_REC_DIR, "x.rec")
    offsets = sorted({rnd.randrange(len(data) + 8) & ~3 for _ in range(6)} | {0})
    cut = rnd.randrange(len(data) + 1) if rnd.random() < 0.3 else None
    with open(path, "wb") as f:
        f.write(data)
    got: list[bytes | str] = []
    with RecordFile(path) as rf:
        if cut is not None:
            os.truncate(path, cut)
        batch = rf.simple_records(np.array(offsets, dtype=np.int64))
        for off in offsets:
            try:
                got.append(bytes(rf.record(off, "r")))
            except TorchDaliError as e:
                got.append(str(e))
    if batch is not None:
        buf, starts, sizes, _ = batch
        parts = [bytes(buf[a:a + n].numpy()) for a, n in zip(starts.tolist(), sizes.tolist())]
        _check(all(isinstance(g, bytes) and g[24:] == p for g, p in zip(got, parts)),
               f"batched {parts!r} != per record {got!r}")


def target_crop_windows(data: bytes, rnd: random.Random) -> None:
    """C windows == Python windows, inside the image, for random sizes and ranges."""
    n = rnd.randint(1, 8)
    sizes = [(rnd.choice([1, 2, 3, rnd.randint(1, 70000), rnd.randint(1, INT_MAX)]),
              rnd.choice([1, 2, 5, rnd.randint(1, 70000), rnd.randint(1, INT_MAX)])) for _ in range(n)]
    lo = rnd.choice([0.0, 0.08, rnd.random()])
    area = (lo, rnd.choice([lo, 1.0, lo + rnd.random() * (1 - lo)]))
    r0 = rnd.choice([0.01, 0.75, rnd.uniform(0.05, 2)])
    ratio = (r0, rnd.choice([r0, 4 / 3, r0 * rnd.uniform(1, 50)]))
    attempts = rnd.choice([0, 1, 10, 100])
    seed, it = rnd.getrandbits(64), rnd.getrandbits(32)
    got = FW.random_crop_window_array(seed, it, sizes, area, ratio, attempts).tolist()
    for i, ((hh, ww), win) in enumerate(zip(sizes, got)):
        ref = list(CW.random_crop_window(SampleRNG(seed, it, i), hh, ww, area, ratio, attempts))
        _check(win == ref, f"C {win} != Python {ref} for {(hh, ww)} {area} {ratio} {attempts}")
        y, x, h, w = win
        _check(0 < h <= hh and 0 < w <= ww and 0 <= y <= hh - h and 0 <= x <= ww - w, f"{win} outside {(hh, ww)}")


Target = Callable[[bytes, random.Random], None]
TARGETS: dict[str, tuple[Target, Callable[[], list[bytes]]]] = {
    "headers": (target_headers, lambda: jpeg_seeds() + png_seeds()),
    "roi": (target_roi, lambda: [s for s in jpeg_seeds() if b"Exif" not in s][:3]),
    "png": (target_png, png_seeds),
    "tiff": (target_tiff, lambda: [bytes(tiff_ref.encoded(n)) for n in tiff_ref.CASES]),
    "recordio": (target_recordio, lambda: [rec_seed()]),
    "crop_windows": (target_crop_windows, lambda: [b""]),
    **IMAGE_TARGETS,  # warp, cpu_image (tests/_fuzz_image.py)
    **DETECTION_TARGETS,  # bbox_crop, box_encoder (tests/_fuzz_detection.py)
    **READER_TARGETS,  # lmdb, caffe, tfexample, npy, tar (tests/_fuzz_readers.py)
}


def make_input(name: str, seed: int, i: int, corpus: list[bytes]) -> tuple[bytes, random.Random]:
    """Input i of a run: a function of (seed, target, i) alone, so any input can be replayed."""
    rnd = random.Random(f"{seed}:{name}:{i}")
    if name in ("crop_windows", "bbox_crop", "box_encoder", "warp", "cpu_image"):  # draw their arguments from rnd
        return b"", rnd
    base = rnd.choice(corpus)
    if name == "roi" and rnd.random() < 0.5:
        return base, rnd  # a valid file: exercise the windows and check pixels
    data = mutate(base, rnd, corpus)
    if name == "png":
        if rnd.random() < 0.3:
            data = mutate_png_pixels(base, rnd)
        if rnd.random() < 0.6:
            data = fix_png_crcs(data)
    return data, rnd


def _corpus(name: str) -> list[bytes]:
    corpus = TARGETS[name][1]()
    if name == "roi":
        for s in corpus:
            _ROI_FULL[s] = torch.ops.image.decode_jpeg(_t(s), 3, False).permute(1, 2, 0).contiguous()
    return corpus


def run_fixed(req: list) -> dict:
    """Child side of the CI run: `iterations` inputs of one target; the oracle violations found."""
    name, seed, iterations = req
    fn, corpus = TARGETS[name][0], _corpus(name)
    fails = []
    for i in range(iterations):
        data, rnd = make_input(name, seed, i, corpus)
        try:
            fn(data, rnd)
        except AssertionError as e:  # Fail, or the reader targets' own
            fails.append(f"input {i}: {e}")
    return {"target": name, "iterations": iterations, "failures": fails[:5], "failed": len(fails)}


# -- the long run (make fuzz) ----------------------------------------------------------------------

ASAN_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g")


def _use_sanitized_builds() -> None:
    """Loads the C helpers built with ASan + UBSan (the process runs with libasan preloaded)."""
    from torch_dali._native import build as _cbuild
    for lib in (H.LIB, R.LIB, helpers.CROP_WINDOWS, helpers.CPU_WARP, helpers.CPU_IMAGE, helpers.CPU_RESIZE):
        so = _cbuild.build(lib.src, lib.libs, lib.flags + ASAN_FLAGS)
        cdll = ctypes.CDLL(str(so))
        if lib.configure is not None:
            lib.configure(cdll)
        lib.lib, lib.tried, lib.path = cdll, True, str(so)


def _child(name: str, seed: int, start: int, seconds: float, progress: str, asan: bool) -> None:
    if asan:
        _use_sanitized_builds()
    fn, corpus = TARGETS[name][0], _corpus(name)
    fd = os.open(progress, os.O_RDWR)
    mark = mmap.mmap(fd, 8)
    end, i, fails = time.monotonic() + seconds, start, 0
    while time.monotonic() < end:
        struct.pack_into("<q", mark, 0, i)  # the input being tried: the parent replays it on a crash
        data, rnd = make_input(name, seed, i, corpus)
        try:
            fn(data, rnd)
        except AssertionError as e:
            fails += 1
            print(json.dumps({"target": name, "input": i, "failure": str(e)}), flush=True)
        i += 1
    print(json.dumps({"target": name, "done": i - start, "failures": fails}), flush=True)


def _sanitizer_env() -> dict[str, str]:
    cc = os.environ.get("CC", "cc")
    libs = [subprocess.run([cc, f"-print-file-name={n}"], capture_output=True, text=True).stdout.strip()
            for n in ("libasan.so", "libstdc++.so")]
    return {"LD_PRELOAD": " ".join(libs),  # libstdc++ too: ASan must see __cxa_throw at start-up
            "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
            "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}


HANG_S = 60  # seconds past a child's time budget after which its current input counts as a hang


def long_run(names: list[str], seconds: float, seed: int, asan: bool, out: Path) -> int:
    """Each target for `seconds` in a child; after a crash, saves the input and goes on from the
    next one. Returns the number of problems found."""
    problems = 0
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONFAULTHANDLER="1", **(_sanitizer_env() if asan else {}))
    if asan:
        env["TORCH_DALI_EXT_DIR"] = str(out / "asan-build")
    out.mkdir(parents=True, exist_ok=True)
    if asan and names:  # the sanitized builds first, outside every target's time: a child that spent
        # its budget compiling them (minutes on a busy machine) was reported as hanging at its last input
        with tempfile.NamedTemporaryFile(dir=out, delete=False) as f:
            f.write(struct.pack("<q", -1))
        subprocess.run([sys.executable, "-m", "tests._fuzz", "--child", names[0], "--seed", str(seed), "--seconds", "0",
                        "--progress", f.name, "--asan"], cwd=ROOT, env=env, capture_output=True, timeout=3600)
        os.unlink(f.name)
    for name in names:
        start, left = 0, seconds
        while left > 1:
            with tempfile.NamedTemporaryFile(dir=out, delete=False) as f:
                f.write(struct.pack("<q", -1))
            t0 = time.monotonic()
            cmd = [sys.executable, "-m", "tests._fuzz", "--child", name, "--seed", str(seed), "--start", str(start),
                   "--seconds", str(left), "--progress", f.name, *(["--asan"] if asan else [])]
            try:  # an input that hangs the child is a finding too: past the run's time plus HANG_S, stop it
                r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=left + HANG_S)
            except subprocess.TimeoutExpired as e:
                r = subprocess.CompletedProcess(cmd, 124, (e.stdout or b"").decode("utf-8", "replace")
                                                if isinstance(e.stdout, bytes) else (e.stdout or ""),
                                                f"HANG: no end {HANG_S} s past the run's time")
            left -= time.monotonic() - t0
            last = struct.unpack("<q", Path(f.name).read_bytes()[:8])[0]
            os.unlink(f.name)
            for line in r.stdout.splitlines():
                print(line)
                problems += '"failure"' in line
            if r.returncode == 0:
                break
            problems += 1
            data, _ = make_input(name, seed, last, _corpus(name))
            saved = out / f"{name}-seed{seed}-input{last}.bin"
            saved.write_bytes(data)
            tail = "\n".join(r.stderr.strip().splitlines()[-25:])
            kind = "HANG" if r.returncode == 124 else "CRASH"  # 124: as timeout(1) says it
            print(f"{kind} {name} input {last} (exit {r.returncode}); saved {saved}; replay: python -m "
                  f"tests._fuzz --targets {name} --seed {seed} --only {last}\n{tail}", flush=True)
            start = last + 1
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", "0")))
    ap.add_argument("--seconds", type=float, help="per target (default: FUZZ_SECONDS or 60)")
    ap.add_argument("--iterations", type=int, help="a fixed number of inputs per target, in-process")
    ap.add_argument("--only", type=int, help="replay one input, in-process")
    ap.add_argument("--asan", action="store_true", help="C helpers built with ASan + UBSan")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "torch_dali-fuzz"),
                    help="where crashing inputs (and the sanitized builds) go")
    ap.add_argument("--child")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--progress")
    a = ap.parse_args()
    if a.child:
        _child(a.child, a.seed, a.start, a.seconds, a.progress, a.asan)
        return 0
    names = a.targets.split(",")
    if a.only is not None or a.iterations is not None:
        if a.asan:
            _use_sanitized_builds()
        bad = 0
        for name in names:
            fn, corpus = TARGETS[name][0], _corpus(name)
            t0 = time.perf_counter()
            for i in ([a.only] if a.only is not None else range(a.iterations)):
                data, rnd = make_input(name, a.seed, i, corpus)
                try:
                    fn(data, rnd)
                except AssertionError as e:
                    bad += 1
                    print(f"{name} input {i}: {e}")
            print(f"{name}: done in {time.perf_counter() - t0:.2f} s")
        return 1 if bad else 0
    seconds = a.seconds if a.seconds is not None else float(os.environ.get("FUZZ_SECONDS", "60"))
    problems = long_run(names, seconds, a.seed, a.asan, Path(a.out))
    print(f"fuzz: {problems} problem(s) in {len(names)} target(s), {seconds:.0f} s each, seed {a.seed}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
