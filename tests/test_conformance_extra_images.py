"""conformance.extra_standin.images: the stand-in's image files are written where DALI's test files
read them, deterministically, small, and as the kinds of image the tests need (sizes, EXIF
orientation, palette and 16-bit files, files named as another format)."""
from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conformance.extra_standin import _synth, images, images_other
from torch_dali.io import decode as D

# files DALI's tests name (test_constant, test_tiff_palette, test_jpeg_compression_distortion,
# test_image_slice_on_exif_rotated, test_image_decoder_tiff_with_alpha_16bit, test_resize's 3-D loader)
NAMED = ["db/single/jpeg/241/cute-4074304_1280.jpg", "db/single/jpeg/image_list.txt",
         "db/single/tiff/0/cat-300572_640.tiff", "db/single/tiff/0/cat-300572_640_palette.tiff",
         "db/single/multichannel/with_alpha_16bit/4ch16bpp.png", "db/imgproc/checkerboard_22_22.npy",
         "db/single/case_sensitive/113/SNaiL-4345504_1280.jPg",
         "db/imgproc/ref/resampling/checkerboard_cubic_antialias_17_13.npy"] + \
    [f"db/single/tiff/0/{n}.tiff" for n in ("cat-3449999_640", "cat-1046544_640", "cat-1245673_640",
                                            "cat-300572_640", "domestic-cat-726989_640", "cat-3504008_640",
                                            "cat-3591348_640", "cat-2184682_640", "cat-3113513_640")] + \
    [f"db/imgcodec/jpeg/orientation/padlock-406986_640_{s}.jpg" for s in
     ("rotate_90", "rotate_270", "mirror_horizontal_rotate_90", "mirror_horizontal_rotate_270")] + \
    [f"db/3D/MRI/Knee/Jpegs/STU00001/{s}/0.jpg" for s in images.MRI_SERIES]
# folders test_image / test_peek_image_shape decode with file_root (class folders below them)
GOOD = ["jpeg", "mixed", "png", "tiff", "pnm", "bmp", "jpeg2k", "webp"]


@pytest.fixture(scope="module")
def extra(tmp_path_factory):
    root = tmp_path_factory.mktemp("extra")
    return root, images.make(root)


def test_writes_the_named_files_small(extra):
    root, written = extra
    assert len(written) == len(set(written)) > 200
    for rel in NAMED:
        assert (root / rel).stat().st_size > 0, rel
    assert sum((root / r).stat().st_size for r in written) < 100 << 20
    assert {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} == set(written)


def test_every_image_has_a_readable_header(extra):
    """Sizes from torch_dali's header parser: the fused-crop folders hold nothing under 250 px but
    the one 2x4 JPEG; each good folder has images in class folders; the orientations swap sides."""
    root, written = extra
    for fmt in GOOD:
        files = [r for r in written if r.startswith(f"db/single/{fmt}/") and r.count("/") == 4
                 and not r.endswith(".txt")]
        assert len(files) >= 4, fmt
        for r in files:
            h, w, _ = D.peek_image_shape(np.fromfile(root / r, np.uint8))
            assert min(h, w) >= 250 or r.endswith("2x4.jpg"), (r, h, w)
    turned = np.fromfile(root / "db/imgcodec/jpeg/orientation/padlock-406986_640_rotate_90.jpg", np.uint8)
    assert D.peek_image_shape(turned) == (505, 480, 3)  # stored 480x505, EXIF orientation 6


def test_kinds_of_file(extra):
    root, _ = extra
    orient = {s: Image.open(root / f"db/imgcodec/jpeg/orientation/padlock-406986_640_{s}.jpg").getexif().get(0x0112)
              for s in images.ORIENTATION}
    assert orient == images.ORIENTATION
    assert Image.open(root / "db/single/tiff/0/cat-300572_640_palette.tiff").mode == "P"
    ihdr = (root / "db/single/multichannel/with_alpha_16bit/4ch16bpp.png").read_bytes()[16:26]
    assert struct.unpack(">IIBB", ihdr) == (240, 160, 16, 6)  # 16-bit RGBA
    assert (root / "db/single/missnamed/pnm/0/jpeg.pnm").read_bytes()[:2] == b"\xff\xd8"
    lines = (root / "db/single/jpeg/image_list.txt").read_text().split("\n")[:-1]
    assert all((root / "db/single/jpeg" / ln.split(" ")[0]).is_file() for ln in lines)
    assert np.load(root / "db/imgproc/checkerboard_22_22.npy").shape == (22, 22)


def test_onnx_reference_resize():
    """The reference Resize keeps a constant image constant and, without antialiasing, samples a
    2x upscale of [0, 4] at the half-pixel positions ONNX's specification gives."""
    from conformance.extra_standin import _onnx_resize as O
    for coeffs in (O.linear, O.cubic, O.linear_antialias, O.cubic_antialias):
        np.testing.assert_allclose(O.resize(np.full((5, 6), 7.0), (3, 4), coeffs), 7.0)
    np.testing.assert_allclose(O.resize(np.array([[0.0, 4.0]]), (1, 4), O.linear), [[0, 1, 3, 4]])


def test_multichannel_tiff_writer_round_trips():
    a = _synth.photo(np.random.default_rng(3), 9, 11, 5)
    lay = D._tiff.reads_here(_synth.tiff(a))
    np.testing.assert_array_equal(D._tiff.decode(_synth.tiff(a), lay), a)


def test_deterministic(tmp_path):
    def digests(root: Path) -> dict[str, str]:
        w = images._Writer(root)
        images._jpeg_folder(w)
        images_other._orientation(w)
        return {r: hashlib.sha256((root / r).read_bytes()).hexdigest() for r in w.written}

    assert digests(tmp_path / "a") == digests(tmp_path / "b")
