"""JPEG limits that hold for whatever libjpeg decodes: `max_pixels` cannot be bypassed by bytes our
header parse skips the way libjpeg does, an unreadable header is refused (its size is unknown), and a
progressive JPEG, or a sequential one whose scans each code some of its components, may not have more
than MAX_JPEG_SCANS scans."""
from __future__ import annotations

import io
import struct
import warnings

import numpy as np
import pytest
import torch
from PIL import Image

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import DataError, PipelineError
from torch_dali.io import decode as D
from torch_dali.io import headers
from torch_dali.io import host_io as H

try:
    from tests.corruption import huge_header_jpeg, image, many_scans_jpeg, multi_scan_baseline_jpeg
except ImportError:
    from corruption import huge_header_jpeg, image, many_scans_jpeg, multi_scan_baseline_jpeg  # type: ignore[no-redef]


def _t(b: bytes) -> torch.Tensor:
    return torch.frombuffer(bytearray(b), dtype=torch.uint8)


def _entry_points(b: bytes, **kw) -> list:
    """What each CPU decode entry point does with b: the shape decoded or the DataError's text."""
    calls = [lambda: D.decode_image(_t(b), source="x.jpg", **kw),
             lambda: D.decode_image(_t(b), types.GRAY, source="x.jpg", **kw),
             lambda: D.decode_image_crop(_t(b), lambda h, w: (0, 0, 8, 8), source="x.jpg", **kw),
             lambda: D.decode_chw(_t(b), types.ANY_DATA, source="x.jpg", **kw)]
    out = []
    for call in calls:
        try:
            out.append(tuple(call().shape))
        except DataError as e:
            out.append(str(e))
    return out


STRAY = {  # bytes libjpeg skips before a marker (it warns, then decodes the declared size)
    "0x00 after SOI": lambda b: b[:2] + b"\x00" + b[2:],
    "0xFF00 after SOI": lambda b: b[:2] + b"\xff\x00" + b[2:],
    "fill bytes and garbage before SOF": lambda b: b.replace(b"\xff\xc0", b"\x17\xff\x00\x33\xff\xff\xc0", 1),
}


@pytest.mark.parametrize("damage", sorted(STRAY))
def test_stray_bytes_do_not_bypass_max_pixels(damage):
    b = STRAY[damage](huge_header_jpeg(2000, 1500))
    for got in _entry_points(b, max_pixels=1_000_000):
        assert isinstance(got, str) and "x.jpg declares 2000x1500 pixels; more than the limit " \
            "`max_pixels` (1000000)" in got, (damage, got)
    info = D.peek_image_info(b)
    assert (info.height, info.width) == (1500, 2000)
    if H.available():  # the batch parser (the mixed decoder's) reads the same size
        assert H.image_infos([_t(b)]) == [info]


def test_stray_bytes_in_a_small_image_still_decode():
    good = image(1)
    for damage in STRAY.values():
        assert _entry_points(damage(good))[:2] == [(24, 32, 3), (24, 32, 1)]


def test_mixed_decoder_refuses_it_too(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.jpg").write_bytes(STRAY["0x00 after SOI"](huge_header_jpeg(2000, 1500)))

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        data, _ = fn.readers.file(file_root=str(tmp_path))
        return (fn.decoders.image(data, device="mixed", max_pixels=1_000_000),)
    pipe = p()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # mixed without CUDA runs on the CPU
        with pytest.raises(PipelineError, match="declares 2000x1500 pixels"):
            pipe.build()
            pipe.run()
    pipe.shutdown()


def test_unreadable_jpeg_header_is_refused_before_decoding(monkeypatch):
    """No frame header found: the size is unknown, so the image is not handed to libjpeg."""
    b = b"\xff\xd8" + bytes(range(0, 250, 7)) * 4 + b"\xff\xd9"
    monkeypatch.setattr(D, "_tv_decode_jpeg", lambda *a: pytest.fail("decoded an unreadable header"))
    for got in _entry_points(b):
        assert ": cannot decode x.jpg: JPEG header has no frame (SOF) marker" in got, got


# -- scans -----------------------------------------------------------------------------------------

def _jpeg(progressive: bool, mode: str = "RGB", **kw) -> bytes:
    buf = io.BytesIO()
    a = np.random.default_rng(0).integers(0, 256, (40, 48, 3), dtype=np.uint8)
    Image.fromarray(a).convert(mode).save(buf, "JPEG", progressive=progressive, **kw)
    return buf.getvalue()


def test_scan_counts():
    assert headers.jpeg_scans(_jpeg(True), 100) == 10  # libjpeg's standard progression
    assert headers.jpeg_scans(_jpeg(True, "L"), 100) == 6
    assert headers.jpeg_scans(_jpeg(False), 100) == 1
    assert headers.jpeg_scans(many_scans_jpeg(37), 100) == 37
    assert headers.jpeg_scans(many_scans_jpeg(1000), 100) == 101  # stops counting past the limit
    # an EXIF thumbnail holds SOS markers of its own: inside APP1, not scans of this image
    thumb = _jpeg(True)
    assert b"\xff\xda" in thumb
    with_thumb = _jpeg(True, exif=b"Exif\0\0" + b"MM\0\x2a\0\0\0\x08\0\0" + thumb)
    assert headers.jpeg_scans(with_thumb, 100) == 10
    # stray bytes between scans are skipped as libjpeg skips them
    b = many_scans_jpeg(5)
    k = b.rindex(b"\xff\xda")
    assert headers.jpeg_scans(b[:k] + b"\x00\x00\xff\x00" + b[k:], 100) == 5


def test_too_many_scans_are_refused(monkeypatch):
    b = many_scans_jpeg(1000, 256, 256)
    for got in _entry_points(b):
        assert isinstance(got, str) and "x.jpg is a progressive JPEG of more than 256 scans" in got, got
    assert _entry_points(many_scans_jpeg(256, 256, 256))[0] == (256, 256, 3)  # at the limit (DALI's 256)
    assert _entry_points(b, max_pixels=None)[0] != (256, 256, 3)  # no pixel limit: scans still
    monkeypatch.setattr(D, "MAX_JPEG_SCANS", 2000)
    assert _entry_points(b)[0] == (256, 256, 3)
    monkeypatch.setattr(D, "MAX_JPEG_SCANS", None)
    assert _entry_points(b)[0] == (256, 256, 3)
    assert "of more than 10 scans" in str(pytest.raises(DataError, D.check_pixels, _t(b), None,
                                                        max_scans=10).value)


def test_multi_scan_baseline_jpegs_are_limited_too():
    """A sequential JPEG whose first scan codes fewer components than the frame has makes libjpeg
    keep every coefficient and pass over the image once per scan, like a progressive one: 4,096
    empty scans of an 8192x8192 image are 41 kB and took 45 s and 1.3 GB to decode."""
    b = multi_scan_baseline_jpeg(300, 256, 256)
    info = D.peek_image_info(b)
    assert info.multi_scan and not info.progressive and headers.jpeg_scans(b, 1000) == 300
    assert H.image_infos([_t(b)]) == [info]  # the C parse says the same
    from torch_dali.io import nvjpeg
    assert not nvjpeg.gpu_decodable(info)  # the GPU path leaves it to the CPU decoder's check
    for got in _entry_points(b):
        assert isinstance(got, str) and "x.jpg is a multi-scan JPEG of more than 256 scans" in got, got
    assert _entry_points(multi_scan_baseline_jpeg(256, 256, 256))[0] == (256, 256, 3)  # at the limit
    one_pass = _jpeg(False)  # libjpeg's usual baseline file: one scan of every component
    assert not D.peek_image_info(one_pass).multi_scan and H.image_infos([_t(one_pass)])[0].multi_scan is False


def test_baseline_jpegs_are_not_scanned(monkeypatch):
    """Only progressive and multi-scan files pay for counting (a single scan's cost follows its data)."""
    monkeypatch.setattr(headers, "jpeg_scans", lambda *a: pytest.fail("counted a baseline JPEG"))
    assert D.decode_image(_t(_jpeg(False))).shape == (40, 48, 3)


def test_sof_with_a_bad_length_word():
    b = image(3)
    i = b.index(b"\xff\xc0")
    cut = b[:i + 2] + struct.pack(">H", 5) + b[i + 4:]  # SOF body shorter than its fields
    with pytest.raises(DataError, match="cannot decode x.jpg: JPEG header has no frame"):
        D.decode_image(_t(cut), source="x.jpg")
