"""readers.coco beyond the DALI comparison (tests/test_ref_detection.py): the annotation file is
untrusted (bounded, checked field by field, errors name the file and the field, never a crash),
file names stay inside file_root, sharding covers every image once."""
from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import DataError, PipelineError
from torch_dali.io import coco as C

try:
    from reference import detection_cases as S
except ImportError:  # in a child process of tests/_isolate.py (the repository root on the path)
    from tests.reference import detection_cases as S


def _write(tmp: Path, doc: Any) -> Path:
    p = tmp / "ann.json"
    p.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return p


def _parse(tmp: Path, doc: Any, **opts: Any) -> list[C.CocoSample]:
    return C.parse(str(_write(tmp, doc)), C.CocoOptions(**opts))


def _mutate(f: Callable[[dict], None]) -> dict:
    d = copy.deepcopy(S.coco_annotations())
    f(d)
    return d


BAD: list[tuple[str, Callable[[dict], None], str, dict]] = [
    ("images not a list", lambda d: d.update(images={"a": 1}), "`images` must be a list", {}),
    ("image without file_name", lambda d: d["images"][1].pop("file_name"), "`images[1]` has no `file_name`", {}),
    ("file_name a number", lambda d: d["images"][0].update(file_name=7), "`images[0].file_name` must be a string", {}),
    ("id a string", lambda d: d["images"][2].update(id="19"), "`images[2].id` must be an integer", {}),
    ("id a bool", lambda d: d["images"][2].update(id=True), "`images[2].id` must be an integer", {}),
    ("id too big", lambda d: d["images"][2].update(id=2**40), "`images[2].id` must fit in 32 bits", {}),
    ("category without id", lambda d: d["categories"][1].pop("id"), "`categories[1]` has no `id`", {}),
    ("annotation not an object", lambda d: d["annotations"].insert(0, [1, 2]), "`annotations[0]` must be an object", {}),
    ("bbox of 3", lambda d: d["annotations"][0].update(bbox=[1, 2, 3]), "`annotations[0].bbox` must hold 4", {}),
    ("bbox with a string", lambda d: d["annotations"][0].update(bbox=[1, "2", 3, 4]),
     "`annotations[0].bbox[1]` must be a finite number", {}),
    ("no bbox", lambda d: d["annotations"][3].pop("bbox"), "`annotations[3]` has no `bbox`", {}),
    ("no category_id", lambda d: d["annotations"][0].pop("category_id"), "`annotations[0]` has no `category_id`", {}),
    ("odd polygon", lambda d: d["annotations"][0].update(segmentation=[[1, 2, 3]]),
     "`annotations[0].segmentation[0]` must hold x, y pairs", dict(polygons=True)),
    ("polygon with null", lambda d: d["annotations"][0].update(segmentation=[[1, 2, None, 4]]),
     "`annotations[0].segmentation[0][2]` must be a finite number", dict(polygons=True)),
    ("rle without size", lambda d: d["annotations"][4]["segmentation"].pop("size"),
     "`annotations[4].segmentation` has no `size`", dict(polygons=True, rles=True)),
    ("rle counts a dict", lambda d: d["annotations"][4]["segmentation"].update(counts={}),
     "`annotations[4].segmentation.counts` must be a string or a list", dict(polygons=True, rles=True)),
    ("ratio without width", lambda d: d["images"][0].pop("width"), "needs a positive width and height", dict(ratio=True)),
    ("top level a list", lambda d: (d.clear(), d.update(images=None)), "`images` must be a list", {}),
]


@pytest.mark.parametrize("name,mutate,message,opts", BAD, ids=[b[0] for b in BAD])
def test_bad_structure_names_file_and_field(tmp_path, name, mutate, message, opts):
    with pytest.raises(DataError) as e:
        _parse(tmp_path, _mutate(mutate), **opts)
    assert message in str(e.value) and str(tmp_path / "ann.json") in str(e.value)


@pytest.mark.parametrize("text,message", [
    ("[1, 2]", "`(top level)` must be an object"),
    ('{"images": [NaN]}', "is not valid JSON"),
    ('{"images": [', "is not valid JSON"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    (b"\xff\xfe{}".decode("latin-1"), "not valid JSON"),
])
def test_bad_json(tmp_path, text, message):
    with pytest.raises(DataError, match="readers.coco") as e:
        _parse(tmp_path, text)
    assert message in str(e.value)


def test_size_bound(tmp_path):
    p = _write(tmp_path, S.coco_annotations())
    C.parse(str(p), C.CocoOptions(), max_bytes=os.path.getsize(p))
    with pytest.raises(DataError, match="more than the 100 an annotation file may have"):
        C.parse(str(p), C.CocoOptions(), max_bytes=100)


def test_fifo_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "ann.json"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="not a regular file"):
        C.parse(str(fifo), C.CocoOptions())


def test_random_field_values_only_raise_data_errors(tmp_path):
    """A few hundred documents with one field replaced by a random JSON value: parsed or refused with
    a DataError, nothing else (no TypeError, KeyError, IndexError...)."""
    rng = random.Random(5)
    values = [None, True, -1, 0, 2**31, 1.5, -1e308, "", "x", [], [1], [[]], {}, {"a": 1}, [None] * 4, ["1"] * 4]
    base = S.coco_annotations()
    paths = [("images", k, f) for k in range(len(base["images"])) for f in ("id", "file_name", "width", "height")]
    paths += [("annotations", k, f) for k in range(len(base["annotations"]))
              for f in ("image_id", "category_id", "bbox", "iscrowd", "segmentation")]
    paths += [("categories", k, "id") for k in range(len(base["categories"]))]
    opts = [dict(), dict(polygons=True), dict(polygons=True, rles=True, ratio=True, ltrb=True)]
    for _ in range(300):
        d = copy.deepcopy(base)
        top, k, f = rng.choice(paths)
        d[top][k][f] = rng.choice(values)
        try:
            samples = _parse(tmp_path, d, **rng.choice(opts))
        except DataError:
            continue
        for s in samples:
            assert s.boxes.dtype == np.float32 and s.boxes.shape[1:] == (4,)


def _reader_pipe(images: Path, ann: Path, batch: int = 1, **kw: Any):
    @pipeline_def(batch_size=batch, num_threads=1, device_id=None, seed=1)
    def pipe():
        return tuple(fn.readers.coco(file_root=str(images), annotations_file=str(ann), name="Reader",
                                     image_ids=True, **kw))
    p = pipe()
    p.build()
    return p


def test_file_names_outside_root_are_refused(tmp_path):
    images, ann = S.write_coco_sample(tmp_path)
    d = json.loads(ann.read_text())
    d["images"][0]["file_name"] = "../instances.json"
    ann.write_text(json.dumps(d))
    with pytest.raises(DataError, match="outside file_root"):
        _reader_pipe(images, ann)
    p = _reader_pipe(images, ann, allow_outside_root=True)
    ids = [int(p.run()[3].at(0)[0]) for _ in range(p.epoch_size("Reader"))]
    assert 42 in ids  # coffee.jpg's entry now reads instances.json


def test_missing_image_file_names_the_file(tmp_path):
    images, ann = S.write_coco_sample(tmp_path)
    (images / "astronaut.jpg").unlink()  # image id 3: the first read
    p = _reader_pipe(images, ann)
    with pytest.raises(PipelineError, match="astronaut.jpg"):
        p.run()


def test_shards_cover_every_image_once_in_order(tmp_path):
    images, ann = S.write_coco_sample(tmp_path)
    seen = []
    for shard in range(3):
        p = _reader_pipe(images, ann, num_shards=3, shard_id=shard)
        seen += [int(p.run()[3].at(0)[0]) for _ in range(2)]  # 6 images, 2 per shard
    assert seen == [3, 7, 19, 42, 55, 100]  # sorted by id, split into contiguous shards


def test_batches_and_output_shapes(tmp_path):
    images, ann = S.write_coco_sample(tmp_path)
    p = _reader_pipe(images, ann, batch=3, polygon_masks=True, ltrb=True)
    jpegs, boxes, labels, polys, verts, ids = p.run()
    assert [int(ids.at(i)[0]) for i in range(3)] == [3, 7, 19]
    for i in range(3):
        assert boxes.at(i).shape == (labels.at(i).shape[0], 4) and boxes.at(i).dtype == np.float32
        assert labels.at(i).dtype == np.int32 and polys.at(i).dtype == np.int32 and verts.at(i).dtype == np.float32
        assert bytes(jpegs.at(i)[:2]) == b"\xff\xd8"
    assert polys.at(1).tolist() == [[0, 0, 3], [0, 3, 6]]  # a two-polygon object


def pixelwise_of_far_vertex(req: list) -> str:
    """Child side of the test below: the reader's error for a polygon vertex far outside the image."""
    root, x = Path(req[0]), float(req[1])
    images, ann = S.write_coco_sample(root)
    d = json.loads(ann.read_text())
    first = min(d["images"], key=lambda im: im["id"])["id"]
    d["annotations"] = [a for a in d["annotations"] if a["image_id"] != first]
    d["annotations"].append(dict(id=999, image_id=first, category_id=d["categories"][0]["id"], iscrowd=0,
                                 bbox=[1, 1, 5, 5], segmentation=[[0, 0, x, 0, 0, 1]]))
    ann.write_text(json.dumps(d))
    try:
        _reader_pipe(images, ann, pixelwise_masks=True).run()
    except (DataError, PipelineError) as e:
        return str(e)
    return "no error"


@pytest.mark.parametrize("x", [2e8, 1e30, 1e39])
def test_far_polygon_vertex_is_refused_without_hanging(tmp_path, x):
    """A polygon vertex far outside the image once meant billions of outline steps (a hang, then
    memory exhaustion) for pixel-wise masks, or an OverflowError past float32's range: now a
    DataError naming the image and object, in well under the timeout."""
    from _isolate import Died, run_isolated
    got = run_isolated("tests.test_readers_coco:pixelwise_of_far_vertex", [[str(tmp_path), x]], timeout=60)[0]
    assert not isinstance(got, Died), got
    assert "astronaut.jpg" in got and "object" in got and ("polygon" in got), got


def test_pixelwise_masks_with_ratio_scale_the_vertices_back_as_dali(tmp_path):
    """ratio=True divides the vertices by the image size; DALI 2.4 rasterizes the pixel-wise mask
    from them multiplied back in float32, so the mask is ratio=False's but for edge pixels that
    rounding moves (here 4). torch_dali drew the relative vertices as pixel coordinates: the
    objects vanished from the mask. Digests and pixels measured with DALI 2.4."""
    import hashlib
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.jpg").write_bytes(b"x")  # masks only: the image is not decoded
    doc = {"images": [{"file_name": "a.jpg", "width": 91, "height": 82, "id": 1}],
           "categories": [{"id": 2, "name": "p"}, {"id": 5, "name": "q"}],
           "annotations": [
               {"id": 0, "image_id": 1, "bbox": [2, 49, 11, 32], "category_id": 2, "iscrowd": 0,
                "segmentation": [[7.5, 50, 12, 65.0, 7.5, 80, 3, 65.0]]},
               {"id": 1, "image_id": 1, "bbox": [13, 36, 27, 25], "category_id": 5, "iscrowd": 0,
                "segmentation": [[26.5, 37, 39, 48.5, 26.5, 60, 14, 48.5]]}]}
    ann = _write(tmp_path, doc)
    masks = []
    for ratio in (False, True):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def pipe():
            return fn.readers.coco(file_root=str(tmp_path / "img"), annotations_file=str(ann),
                                   pixelwise_masks=True, ratio=ratio)[3]
        p = pipe()
        p.build()
        masks.append(np.asarray(p.run()[0].at(0)))
    assert [hashlib.sha256(m.tobytes()).hexdigest()[:16] for m in masks] == ["082f4a96cf4821ea", "ed99f3c3937b0dc4"]
    assert np.argwhere(masks[0] != masks[1])[:, :2].tolist() == [[40, 30], [42, 20], [52, 18], [53, 33]]


def test_polygons_of_one_image_share_an_outline_budget(tmp_path, monkeypatch):
    """Each polygon's outline was capped, the image's were not: a file of thousands of polygons,
    each just under the cap (2 s and 1 GB of tracing here), took hours per image. Here the budget
    is lowered to 3,000 points: two triangles spanning the 100x100 image (1,488 points each) fit,
    a third is a DataError naming the image and the object."""
    from torch_dali.io import coco_masks as M
    monkeypatch.setattr(M, "MAX_IMAGE_OUTLINE_POINTS", 3000, raising=False)
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.jpg").write_bytes(b"x")  # masks only: the image is not decoded
    tri = [0, 0, 99, 0, 0, 99]
    assert M.outline_points(np.array(tri, np.float64).reshape(-1, 2)) == 1488
    for n in (2, 3):
        doc = {"images": [{"file_name": "a.jpg", "width": 100, "height": 100, "id": 1}],
               "categories": [{"id": 1, "name": "p"}],
               "annotations": [{"id": k, "image_id": 1, "bbox": [0, 0, 99, 99], "category_id": 1, "iscrowd": 0,
                                "segmentation": [tri]} for k in range(n)]}
        ann = _write(tmp_path, doc)

        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def pipe():
            return fn.readers.coco(file_root=str(tmp_path / "img"), annotations_file=str(ann),
                                   pixelwise_masks=True)[3]
        p = pipe()
        p.build()
        if n == 2:
            assert int(np.asarray(p.run()[0].at(0)).sum()) > 0
            continue
        with pytest.raises(PipelineError, match=r"a\.jpg \(id 1\), object 2: the image's polygons trace more than 3000"):
            p.run()
