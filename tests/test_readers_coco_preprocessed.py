"""readers.coco's preprocessed annotations against NVIDIA DALI 2.4: the folders DALI's readers.coco saved
for the COCO sample (tests/reference/coco_preprocessed/, coco_preprocessed_make.py) are what our
save writes, byte for byte, and reading one gives what parsing the JSON gives. The folder is
untrusted input: a damaged file is a DataError naming it, never a crash, a hang or a huge allocation."""
from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError, DataError, PipelineError
from torch_dali.io import coco as C
from torch_dali.io import coco_preprocessed as P

try:
    from reference import detection_cases as S
except ImportError:  # in a child process of tests/_isolate.py (the repository root on the path)
    from tests.reference import detection_cases as S

DALI_DIR = Path(S.__file__).with_name("coco_preprocessed")


def _flags(kw: dict[str, Any]) -> tuple[bool, bool, bool]:
    pixelwise = bool(kw.get("pixelwise_masks"))
    return bool(kw.get("polygon_masks")) or pixelwise, pixelwise, bool(kw.get("image_ids"))


def _parse(ann: Path, kw: dict[str, Any]) -> list[C.CocoSample]:
    polygons, pixelwise, _ = _flags(kw)
    return C.parse(str(ann), C.CocoOptions(ltrb=kw.get("ltrb", False), ratio=kw.get("ratio", False),
                                           skip_empty=kw.get("skip_empty", False), polygons=polygons,
                                           rles=pixelwise, images=kw.get("images")))


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return S.write_coco_sample(tmp_path_factory.mktemp("coco"))


@pytest.mark.parametrize("case", sorted(S.PRE_CASES))
def test_save_writes_dalis_bytes(sample, tmp_path, case):
    kw = S.PRE_CASES[case]
    P.save(_parse(sample[1], kw), str(tmp_path / "pre"), *_flags(kw))
    ours, dalis = tmp_path / "pre", DALI_DIR / case
    assert sorted(os.listdir(ours)) == sorted(os.listdir(dalis))
    for name in os.listdir(dalis):
        assert (ours / name).read_bytes() == (dalis / name).read_bytes(), name


def _reader(root: Path, iterations: int = 3, **kw: Any) -> list[list[np.ndarray]]:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        return tuple(fn.readers.coco(file_root=str(root), name="Reader", **kw))
    p = pipe()
    p.build()
    return [[np.array(t.at(i)) for t in p.run() for i in range(2)] for _ in range(iterations)]


@pytest.mark.parametrize("case", sorted(S.PRE_CASES))
def test_reading_dalis_folder_equals_parsing_the_json(sample, case):
    kw = S.PRE_CASES[case]
    outputs = {k: v for k, v in kw.items() if k in ("polygon_masks", "pixelwise_masks", "image_ids")}
    parsed = _reader(sample[0], annotations_file=str(sample[1]), **kw)
    read = _reader(sample[0], preprocessed_annotations=str(DALI_DIR / case), **outputs)
    assert len(parsed) == len(read)
    for a, b in zip(parsed, read):
        assert len(a) == len(b) and all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a, b))


def test_the_reader_saves_then_reads_its_folder_and_dalis_names_work(sample, tmp_path):
    images, ann = sample
    folder = tmp_path / "made" / "pre"  # made with its parent
    kw = dict(pixelwise_masks=True, image_ids=True)
    first = _reader(images, annotations_file=str(ann), save_preprocessed_annotations=True,
                    save_preprocessed_annotations_dir=str(folder), **kw)
    assert sorted(os.listdir(folder)) == sorted(os.listdir(DALI_DIR / "pixelwise"))
    again = _reader(images, meta_files_path=str(folder), **kw)  # DALI's deprecated names
    assert all(np.array_equal(x, y) for a, b in zip(first, again) for x, y in zip(a, b))
    _reader(images, annotations_file=str(ann), dump_meta_files=True, dump_meta_files_path=str(folder),
            skip_empty=True)
    assert sorted(os.listdir(folder)) == sorted(os.listdir(DALI_DIR / "plain_skip_empty"))  # no stale masks


@pytest.mark.parametrize("kw,message", [
    (dict(preprocessed_annotations="x", ratio=True), "`ratio` cannot be given with `preprocessed_annotations`"),
    (dict(preprocessed_annotations="x", annotations_file="a.json"), "`annotations_file` cannot be given"),
    (dict(preprocessed_annotations="x", skip_empty=False), "`skip_empty` cannot be given"),
    (dict(annotations_file="a.json", save_preprocessed_annotations=True), "together"),
    (dict(annotations_file="a.json", save_preprocessed_annotations_dir="d"), "together"),
    (dict(), "`annotations_file` .* or `preprocessed_annotations`"),
])
def test_argument_errors(sample, kw, message):
    with pytest.raises(ArgumentError, match=message):
        _reader(sample[0], **kw)


def _copy(tmp_path: Path, case: str = "pixelwise") -> Path:
    folder = tmp_path / case
    shutil.copytree(DALI_DIR / case, folder)
    return folder


def _u32(n: int) -> bytes:
    return np.array([n], "<u4").tobytes()


DAMAGE = [  # (file, new bytes given the old, what the error says)
    ("boxes.dat", lambda b: b[:-3], "boxes.dat says it holds"),
    ("labels.dat", lambda b: _u32(10**9) + b[4:], "labels.dat says it holds"),
    ("counts.dat", lambda b: b[:2], "shorter than its 4-byte count"),
    ("offsets.dat", lambda b: b[:4] + np.array([10**6] * ((len(b) - 4) // 4), "<i4").tobytes(), "point outside"),
    ("counts.dat", lambda b: b[:4] + np.array([-1] * ((len(b) - 4) // 4), "<i4").tobytes(), "point outside"),
    ("polygon_data.dat", lambda b: b[:4] + np.full((len(b) - 4) // 4, 10**6, "<i4").tobytes(),
     "polygons name objects or vertices"),
    ("vertices_count.dat", lambda b: b[:4] + np.full((len(b) - 4) // 8, 2**40, "<i8").tobytes(), "point outside"),
    # an offset near 2**63: offset + count wraps around in int64 (found by the coco_pre fuzz target)
    ("masks_offset.dat", lambda b: b[:12] + np.array([2**63 - 1], "<i8").tobytes() + b[20:], "point outside"),
    ("masks_rles.dat", lambda b: b[:4] + np.array([2**31, 2**31, 1], "<u8").tobytes() + b[28:], "at most"),
    ("masks_rles.dat", lambda b: b[:20] + np.array([2**40], "<u8").tobytes() + b[28:], "more than the file holds"),
    ("masks_rles.dat", lambda b: b + b"\0", "bytes after"),
    ("masks_rles_idx.dat", lambda b: b[:4] + np.full((len(b) - 4) // 4, 99, "<i4").tobytes(), "names object 99"),
    ("heights.dat", lambda b: _u32(1) + b[4:8], "heights.dat and widths.dat"),
    ("filenames.dat", lambda b: b"\xff\xfe" + b, "not UTF-8"),
    ("filenames.dat", None, "no filenames.dat"),
    ("original_ids.dat", None, "needs original_ids.dat"),
]


@pytest.mark.parametrize("name,change,message", DAMAGE, ids=[f"{d[0]}-{i}" for i, d in enumerate(DAMAGE)])
def test_damaged_folder_names_the_file(tmp_path, name, change, message):
    folder = _copy(tmp_path)
    path = folder / name
    if change is None:
        path.unlink()
    else:
        path.write_bytes(change(path.read_bytes()))
    with pytest.raises(DataError, match=message) as e:
        P.load(str(folder), True, True, True)
    assert str(folder) in str(e.value)


def test_a_fifo_in_place_of_a_file_is_refused_without_hanging(tmp_path):
    folder = _copy(tmp_path, "default")
    (folder / "boxes.dat").unlink()
    os.mkfifo(folder / "boxes.dat")
    with pytest.raises(DataError, match="not a regular file"):
        P.load(str(folder), False, False, True)


def test_random_damage_only_raises_data_errors(tmp_path):
    """Bytes of every file flipped, cut or appended at random: each load gives samples or a DataError."""
    rnd = random.Random(7)
    base = _copy(tmp_path)
    names = sorted(os.listdir(base))
    originals = {n: (base / n).read_bytes() for n in names}
    outcomes = {"ok": 0, "error": 0}
    for _ in range(300):
        name = rnd.choice(names)
        data = bytearray(originals[name])
        op = rnd.randrange(3)
        if op == 0 and data:
            for _ in range(rnd.randint(1, 4)):
                data[rnd.randrange(len(data))] = rnd.randrange(256)
        elif op == 1:
            data = data[:rnd.randrange(len(data) + 1)]
        else:
            data += bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 12)))
        (base / name).write_bytes(bytes(data))
        try:
            samples = P.load(str(base), True, True, True)
            for s in samples:
                assert s.boxes.shape == (len(s.labels), 4)
            outcomes["ok"] += 1
        except DataError:
            outcomes["error"] += 1
        (base / name).write_bytes(originals[name])
    assert outcomes["error"] > 100  # most damage is caught, the rest reads as other valid values


def test_pixelwise_masks_of_a_damaged_rle_are_an_error_naming_the_image(sample, tmp_path):
    folder = _copy(tmp_path)
    rles = bytearray((folder / "masks_rles.dat").read_bytes())
    rles[28:32] = np.array([7], "<u4").tobytes()  # the first mask's runs no longer cover its image
    (folder / "masks_rles.dat").write_bytes(bytes(rles))
    with pytest.raises((DataError, PipelineError), match="RLE counts cover"):
        _reader(sample[0], iterations=3, preprocessed_annotations=str(folder), pixelwise_masks=True)


def test_save_refuses_a_file_name_with_a_line_break(tmp_path):
    s = C.CocoSample("a\nb.jpg", 1, 10, 10, np.zeros((0, 4), np.float32), np.zeros(0, np.int32))
    with pytest.raises(DataError, match="line break"):
        P.save([s], str(tmp_path / "pre"), False, False, False)


def test_a_yaml_pipeline_reads_and_saves_preprocessed_annotations(sample, tmp_path):
    """The new arguments go through the YAML file like any other (a config names the folder)."""
    from torch_dali import Pipeline
    images, ann = sample
    folder = tmp_path / "pre"

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def saving():
        return tuple(fn.readers.coco(file_root=str(images), annotations_file=str(ann), polygon_masks=True,
                                     save_preprocessed_annotations=True, save_preprocessed_annotations_dir=str(folder)))

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def reading():
        return tuple(fn.readers.coco(file_root=str(images), preprocessed_annotations=str(folder), polygon_masks=True))

    text = saving().serialize()
    assert "save_preprocessed_annotations_dir" in text
    a = Pipeline.deserialize(text)
    a.build()
    b = Pipeline.deserialize(reading().serialize())
    b.build()
    for _ in range(3):
        for x, y in zip(a.run(), b.run()):
            assert all(np.array_equal(np.array(x.at(i)), np.array(y.at(i))) for i in range(2))
