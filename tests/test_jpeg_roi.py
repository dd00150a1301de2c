"""io.jpeg_roi: region decoding equals the crop of torchvision's full decode, exactly."""
from __future__ import annotations

import io
import random
import threading

import numpy as np
import pytest
import torch
import torchvision.io  # noqa: F401  (registers torch.ops.image; torch_dali imports torchvision only when it decodes)
from PIL import Image

from torch_dali._native import build as _cbuild
from torch_dali.errors import DataError
from torch_dali.rng import SampleRNG
from torch_dali.io import decode as D
from torch_dali.io import jpeg_roi as R
from torch_dali.functional.crop_window import random_crop_window

try:
    from tests._isolate import Died, run_isolated
except ImportError:
    from _isolate import Died, run_isolated  # type: ignore[no-redef]

_SKIP = _cbuild.skip_reason(R.LIB)  # raises where a C compiler works but the helper did not build
pytestmark = pytest.mark.skipif(bool(_SKIP), reason=f"jpeg_roi unavailable: {_SKIP}")


def _photo(h: int, w: int, seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([xx * 255 // w, yy * 255 // h, (xx * 3 + yy) % 256], -1)
    return Image.fromarray(np.clip(base + rng.integers(0, 60, (h, w, 3)), 0, 255).astype(np.uint8))


def _jpeg(im: Image.Image, **kw) -> torch.Tensor:
    buf = io.BytesIO()
    im.save(buf, "JPEG", **kw)
    return torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8)


def _variants(h: int, w: int) -> dict[str, torch.Tensor]:
    im = _photo(h, w, seed=h * 7 + w)
    return {
        "420": _jpeg(im, quality=90, subsampling=2),
        "422": _jpeg(im, quality=90, subsampling=1),
        "444": _jpeg(im, quality=90, subsampling=0),
        "gray": _jpeg(im.convert("L"), quality=90),
        "progressive": _jpeg(im, quality=85, progressive=True),
        "restart": _jpeg(im, quality=90, restart_marker_blocks=2),
    }


def _full(data: torch.Tensor, gray: bool) -> torch.Tensor:
    return torch.ops.image.decode_jpeg(data, 1 if gray else 3, False).permute(1, 2, 0)


def _windows(h: int, w: int, n: int, seed: int) -> list[tuple[int, int, int, int]]:
    rnd = random.Random(seed)
    wins = [(0, 0, h, w), (0, 0, 1, 1), (h - 1, w - 1, 1, 1), (0, w - 1, h, 1), (h - 1, 0, 1, w),
            (h // 2, w // 2, h - h // 2, w - w // 2)]
    for _ in range(n):
        y, x = rnd.randrange(h), rnd.randrange(w)
        wins.append((y, x, rnd.randint(1, h - y), rnd.randint(1, w - x)))
    return wins


def test_restart_markers_present() -> None:
    assert b"\xff\xd0" in bytes(_variants(64, 64)["restart"].tolist())


@pytest.mark.parametrize("size", [(257, 333), (416, 438), (75, 100), (17, 9), (1, 1), (8, 40)])
def test_windows_equal_cropped_full_decode(size: tuple[int, int]) -> None:
    h, w = size
    for name, data in _variants(h, w).items():
        for gray in (False, True):
            full = _full(data, gray)
            assert full.shape[:2] == (h, w)
            for win in _windows(h, w, 25, seed=h + w):
                y, x, wh, ww = win
                got = R.decode_roi(data, win, gray)
                ref = full[y:y + wh, x:x + ww]
                assert got.shape == ref.shape and got.is_contiguous()
                diff = (got.int() - ref.int()).abs().max().item()
                assert diff == 0, f"{name} gray={gray} window={win}: max diff {diff}"
            assert torch.equal(R.decode_roi(data, None, gray), full)


def test_header_and_out_buffer() -> None:
    v = _variants(257, 333)
    assert R.jpeg_header(v["420"]) == (257, 333, 3, False)
    assert R.jpeg_header(v["gray"]) == (257, 333, 1, False)
    assert R.jpeg_header(v["progressive"])[3] is True
    out = torch.empty((10, 20, 3), dtype=torch.uint8)
    assert R.decode_roi(v["420"], (5, 6, 10, 20), out=out) is out
    assert torch.equal(out, _full(v["420"], False)[5:15, 6:26])
    with pytest.raises(ValueError):
        R.decode_roi(v["420"], (250, 0, 10, 10))
    # bytes input works too
    assert torch.equal(R.decode_roi(bytes(v["444"].tolist()), (1, 2, 3, 4)), _full(v["444"], False)[1:4, 2:6])


def test_corrupt_and_truncated_raise_data_error() -> None:
    data = _variants(257, 333)["420"]
    with pytest.raises(DataError, match="(?i)premature end|corrupt|suspension"):
        R.decode_roi(data[: data.numel() // 2], (0, 0, 8, 8))  # truncated: noticed below the window too
    with pytest.raises(DataError, match="(?i)not a jpeg|SOI"):
        R.decode_roi(torch.zeros(100, dtype=torch.uint8), (0, 0, 1, 1))
    with pytest.raises(DataError):
        R.jpeg_header(torch.tensor([0xFF, 0xD8, 0xFF], dtype=torch.uint8))
    bad = data.clone()
    sos = bytes(bad.tolist()).index(b"\xff\xda")
    bad[sos + 40: sos + 400] = 0xFF  # garbage inside the entropy-coded data
    with pytest.raises(DataError, match="(?i)corrupt"):
        R.decode_roi(bad, None)


def test_cmyk_is_unsupported() -> None:
    data = _jpeg(_photo(40, 48).convert("CMYK"), quality=90)
    with pytest.raises(R.Unsupported):
        R.decode_roi(data, (0, 0, 4, 4))
    # the decoders fall back to torchvision for it
    ref = D.decode_image(data, D.RGB)
    rng = SampleRNG(3, 0, 0)
    win = random_crop_window(SampleRNG(3, 0, 0), 40, 48)
    got = D.decode_image_crop(data, lambda h, w: random_crop_window(rng, h, w))
    y, x, h, w = win
    assert torch.equal(got, ref[y:y + h, x:x + w])


def _decoders_outputs(datas: list[torch.Tensor]) -> list[torch.Tensor]:
    outs = []
    for i, d in enumerate(datas):
        for ot in (D.RGB, D.BGR, D.GRAY, D.YCBCR, D.ANY):
            rng = SampleRNG(7, 0, i)
            outs.append(D.decode_image_crop(d, lambda h, w: random_crop_window(rng, h, w), ot))
            outs.append(D.decode_image(d, ot, torch.float32))
    return outs


def test_decoders_same_with_and_without_roi(monkeypatch: pytest.MonkeyPatch) -> None:
    datas = list(_variants(111, 97).values())
    buf = io.BytesIO()
    _photo(30, 50).save(buf, "JPEG", exif=_exif(6))  # rotated: the reference path
    datas.append(torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8))
    fast = _decoders_outputs(datas)
    monkeypatch.setattr(R, "available", lambda: False)
    slow = _decoders_outputs(datas)
    assert len(fast) == len(slow)
    for a, b in zip(fast, slow):
        assert a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)


def _exif(orientation: int) -> bytes:
    ex = Image.Exif()
    ex[0x0112] = orientation
    return ex.tobytes()


def test_decoders_errors_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _variants(64, 80)["420"]
    trunc = data[: data.numel() // 2]

    def errors() -> list[str]:
        msgs = []
        for call in (lambda: D.decode_image(trunc, source="a.jpg"),
                     lambda: D.decode_image_crop(trunc, lambda h, w: (0, 0, 4, 4), source="a.jpg")):
            with pytest.raises(DataError) as e:
                call()
            msgs.append(str(e.value))
        return msgs

    fast = errors()
    monkeypatch.setattr(R, "available", lambda: False)
    assert errors() == fast
    assert "a.jpg" in fast[0]


def test_unavailable_library_keeps_decoders_working(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from torch_dali import fn, pipeline_def, types
    monkeypatch.setattr(R.LIB, "lib", None)
    monkeypatch.setattr(R.LIB, "tried", True)
    monkeypatch.setattr(R.LIB, "reason", "monkeypatched")
    assert not R.available() and R.unavailable_reason() == "monkeypatched"
    for i in range(3):
        (tmp_path / "c").mkdir(exist_ok=True)
        _photo(60 + i, 70).save(tmp_path / "c" / f"{i}.jpg", quality=90)

    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=5)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=str(tmp_path))
        return fn.decoders.image_random_crop(jpegs, output_type=types.RGB), fn.decoders.image(jpegs)

    p = pipe()
    p.build()
    crops, fulls = p.run()
    for crop, full in zip(list(crops), list(fulls)):
        assert crop.shape[2] == 3 and crop.shape[0] <= full.shape[0] and crop.shape[1] <= full.shape[1]
    p.shutdown()


def test_build_failure_is_recorded(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(R.LIB, "lib", None)
    monkeypatch.setattr(R.LIB, "tried", False)
    monkeypatch.setattr(R.LIB, "reason", "")
    monkeypatch.setenv("TORCH_DALI_EXT_DIR", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    assert R.available() is False
    assert R.unavailable_reason()
    with pytest.raises(RuntimeError):
        R.decode_roi(torch.zeros(4, dtype=torch.uint8))


def test_threads_give_same_results() -> None:
    datas = [d for s in ((257, 333), (75, 100)) for d in _variants(*s).values()]
    jobs = [(d, win) for d in datas for win in _windows(*R.jpeg_header(d)[:2], 8, seed=1)]
    ref = [R.decode_roi(d, win) for d, win in jobs]
    results: dict[int, list[torch.Tensor]] = {}

    def work(k: int) -> None:
        results[k] = [R.decode_roi(d, win) for d, win in jobs]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):
        assert all(torch.equal(a, b) for a, b in zip(results[k], ref))


@pytest.mark.parametrize("kind", ["420", "progressive", "restart", "gray"])
def test_truncated_anywhere_is_an_error_like_torchvision(kind: str) -> None:
    data = _variants(257, 333)[kind]
    for frac in (0.2, 0.5, 0.9, 0.995):
        cut = data[: int(data.numel() * frac)]
        with pytest.raises(RuntimeError):
            torch.ops.image.decode_jpeg(cut, 3, False)
        for win in ((0, 0, 8, 8), (120, 100, 30, 30), (250, 300, 7, 33)):
            with pytest.raises(DataError):
                R.decode_roi(cut, win)


def test_trailing_bytes_after_eoi_decode() -> None:
    data = _variants(75, 100)["420"]
    padded = torch.cat([data, torch.tensor([1, 2, 3, 0], dtype=torch.uint8)])
    full = _full(data, False)
    assert torch.equal(R.decode_roi(padded, (3, 4, 20, 30)), full[3:23, 4:34])


# -- windows near and past the C int range (issue 16: an overflowing bounds check) ------------------

INT_MAX = 2**31 - 1
NEAR_MAX = [(0, INT_MAX - 3, 8, 8), (INT_MAX - 3, 0, 8, 8), (0, INT_MAX, 1, 1), (INT_MAX, INT_MAX, 1, 1),
            (0, 8, 8, INT_MAX - 4), (8, 0, INT_MAX - 4, 8), (INT_MAX - 20, 0, 30, 8)]


def _c_windows(req: list) -> list[list]:
    """Child side: tdj_decode_roi itself on windows near INT_MAX with a small canary-filled output
    buffer: (return code, message, whether the buffer was left as it was) per window."""
    lib = R.LIB.load()
    data = _variants(57, 83)["420"]
    out = []
    for y, x, h, w in req:
        buf = torch.full((64,), 77, dtype=torch.uint8)
        msg = __import__("ctypes").create_string_buffer(256)
        rc = lib.tdj_decode_roi(data.data_ptr(), data.numel(), y, x, h, w, 0, buf.data_ptr(), 64, msg, 256)
        out.append([rc, msg.value.decode(), bool((buf == 77).all())])
    return out


def test_c_window_check_does_not_overflow() -> None:
    got = run_isolated("tests.test_jpeg_roi:_c_windows", [NEAR_MAX])[0]
    assert not isinstance(got, Died), got
    for win, (rc, msg, untouched) in zip(NEAR_MAX, got):
        assert (rc, msg, untouched) == (3, "crop window is outside the image", True), (win, rc, msg)


@pytest.mark.parametrize("window", NEAR_MAX + [(0, 2**32 + 4, 8, 8), (2**32, 0, 8, 8), (0, -2**32 + 4, 8, 8),
                                               (0, 2**40, 8, 8), (0, 0, 2**33, 8)])
def test_python_window_check(window) -> None:
    """Checked against the header before allocating; ctypes would wrap 2**32 + 4 to 4, a valid
    window of other pixels."""
    data = _variants(57, 83)["420"]
    with pytest.raises(ValueError, match=r"crop window .* is outside the image \(57x83\)"):
        R.decode_roi(data, window)
