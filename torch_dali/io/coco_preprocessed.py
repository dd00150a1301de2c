"""readers.coco's preprocessed annotations (`save_preprocessed_annotations` /
`preprocessed_annotations`): parsed annotations kept as a folder of flat binary files, so that a
large annotation file is parsed once. The folder layout is DALI 2.4's, so either library reads a
folder the other wrote.

Each `<list>.dat` is a little-endian uint32 count N followed by N values, nothing else:
- per image: `offsets`, `counts` (int32: its first object, its number of objects), `original_ids`
  (int32, saved with image ids); per object: `boxes` (4 float32), `labels` (int32);
- with polygons: `polygon_data` (3 int32 per polygon: its object, first and end vertex, counted
  within its image), `vertices` (2 float32 each), and per image `polygon_offset`, `polygons_count`,
  `vertices_offset`, `vertices_count` (int64);
- with pixel-wise masks also `masks_rles` (per mask: height, width and number of runs as uint64,
  then the runs as uint32), `masks_rles_idx` (int32: each mask's object), and per image
  `masks_offset`, `mask_count` (int64), `heights`, `widths` (int32).
`filenames.dat` lists the image file names, one per line. An empty list is not written and a
missing file reads as empty (DALI's rules); a save also removes the layout's files it does not
write, so a folder never mixes two saves. The stored values have the parse options applied (ltrb,
ratio, size_threshold, skip_empty, images), which is why those options cannot be given when reading.

The files are untrusted input: each is bounded, must be exactly its count's length, and every
offset, count and index is checked against the lists it points into: a DataError naming the file.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import DataError
from .bounded_file import FileTooLarge, NotRegularFile, read_regular_file
from .coco import CocoSample
from .coco_masks import MAX_MASK_PIXELS, rle_from_string
from .write_aside import write_aside

#: the largest preprocessed file read
MAX_FILE_BYTES = 1 << 32
LISTS = {"offsets": (np.int32, 1), "counts": (np.int32, 1), "boxes": (np.float32, 4), "labels": (np.int32, 1),
         "original_ids": (np.int32, 1), "polygon_data": (np.int32, 3), "vertices": (np.float32, 2),
         "polygon_offset": (np.int64, 1), "polygons_count": (np.int64, 1), "vertices_offset": (np.int64, 1),
         "vertices_count": (np.int64, 1), "masks_rles_idx": (np.int32, 1), "masks_offset": (np.int64, 1),
         "mask_count": (np.int64, 1), "heights": (np.int32, 1), "widths": (np.int32, 1)}
#: the lists whose count is of whole rows (DALI stores them as vectors of small structs); the others'
#: count is of single values (boxes: 4 per object)
ROW_COUNTED = ("polygon_data", "vertices")
ALL_FILES = tuple(f"{k}.dat" for k in LISTS) + ("masks_rles.dat", "filenames.dat")


def _read_bytes(path: str) -> bytes | None:
    """The file's bytes; None if it does not exist."""
    try:
        return read_regular_file(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return None
    except NotRegularFile:
        raise DataError(f"readers.coco: {path} is not a regular file") from None
    except FileTooLarge as e:
        raise DataError(f"readers.coco: {path} is {e.size} bytes, more than the {MAX_FILE_BYTES} a "
                        "preprocessed annotation file may have") from None
    except OSError as e:
        raise DataError(f"readers.coco: cannot read {path}: {e.strerror or e}") from None


def _array(folder: str, name: str) -> np.ndarray:
    dtype, width = LISTS[name]
    path = os.path.join(folder, name + ".dat")
    data = _read_bytes(path)
    if data is None:
        return np.zeros((0, width) if width > 1 else 0, dtype)
    if len(data) < 4:
        raise DataError(f"readers.coco: {path} is {len(data)} bytes, shorter than its 4-byte count")
    n = int(np.frombuffer(data, "<u4", 1)[0])
    values = n * width if name in ROW_COUNTED else n
    item = np.dtype(dtype).itemsize
    if len(data) != 4 + values * item:
        raise DataError(f"readers.coco: {path} says it holds {values} values of {item} bytes but has "
                        f"{len(data) - 4} bytes of values")
    if values % width:
        raise DataError(f"readers.coco: {path} holds {values} values, not a multiple of {width}")
    a = np.frombuffer(data, np.dtype(dtype).newbyteorder("<"), values, 4).astype(dtype)
    return a.reshape(-1, width) if width > 1 else a


def _rles(folder: str) -> list[tuple[int, int, np.ndarray]]:
    path = os.path.join(folder, "masks_rles.dat")
    data = _read_bytes(path)
    if data is None:
        return []
    if len(data) < 4:
        raise DataError(f"readers.coco: {path} is {len(data)} bytes, shorter than its 4-byte count")
    n, p, out = int(np.frombuffer(data, "<u4", 1)[0]), 4, []
    for k in range(n):
        if p + 24 > len(data):
            raise DataError(f"readers.coco: {path} ends inside mask {k} of {n}")
        h, w, m = (int(v) for v in np.frombuffer(data, "<u8", 3, p))
        if not (0 < h and 0 < w and h * w <= MAX_MASK_PIXELS):
            raise DataError(f"readers.coco: {path}: mask {k} is {w}x{h}; a mask needs a positive width and "
                            f"height, at most {MAX_MASK_PIXELS} pixels")
        if m > (len(data) - p - 24) // 4:
            raise DataError(f"readers.coco: {path}: mask {k} says it has {m} runs, more than the file holds")
        out.append((h, w, np.frombuffer(data, "<u4", m, p + 24).astype(np.int64)))
        p += 24 + 4 * m
    if p != len(data):
        raise DataError(f"readers.coco: {path} has {len(data) - p} bytes after its {n} masks")
    return out


def _file_names(folder: str) -> list[str]:
    path = os.path.join(folder, "filenames.dat")
    data = _read_bytes(path)
    if data is None:
        raise DataError(f"readers.coco: preprocessed annotations {folder} have no filenames.dat")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"readers.coco: {path} is not UTF-8 text: {e}") from None
    return [line for line in text.split("\n") if line.strip()]


def _spans(folder: str, what: str, offsets: np.ndarray, counts: np.ndarray, total: int, n: int) -> None:
    if len(offsets) != n or len(counts) != n:
        raise DataError(f"readers.coco: preprocessed annotations {folder}: {what} give {len(offsets)} offsets and "
                        f"{len(counts)} counts for {n} images")
    # compared without adding: int64 offsets near 2**63 would wrap around
    if n and ((offsets < 0).any() or (counts < 0).any() or (offsets > total).any() or (counts > total - offsets).any()):
        raise DataError(f"readers.coco: preprocessed annotations {folder}: {what} point outside the "
                        f"{total} entries stored")


def load(folder: str, polygons: bool, pixelwise: bool, image_ids: bool) -> list[CocoSample]:
    """The samples a save wrote into `folder`, in its order; DataError naming the file at fault."""
    if not os.path.isdir(folder):
        raise DataError(f"readers.coco: preprocessed annotations {folder} is not a folder")
    names = _file_names(folder)
    n = len(names)
    a = {k: _array(folder, k) for k in ("offsets", "counts", "boxes", "labels")}
    if len(a["boxes"]) != len(a["labels"]):
        raise DataError(f"readers.coco: preprocessed annotations {folder}: {len(a['boxes'])} boxes for "
                        f"{len(a['labels'])} labels")
    _spans(folder, "offsets.dat and counts.dat", a["offsets"], a["counts"], len(a["labels"]), n)
    ids = _array(folder, "original_ids")
    if image_ids and len(ids) != n:
        raise DataError(f"readers.coco: preprocessed annotations {folder}: image_ids=True needs original_ids.dat "
                        f"with one id per image ({n}), found {len(ids)} (saved without image_ids?)")
    poly = verts = None
    if polygons or pixelwise:
        p = {k: _array(folder, k) for k in ("polygon_data", "vertices", "polygon_offset", "polygons_count",
                                            "vertices_offset", "vertices_count")}
        # DALI's rule: without these lists every image has no polygons
        if len(p["polygon_offset"]) or len(p["vertices_offset"]) or len(p["polygon_data"]):
            _spans(folder, "polygon_offset.dat and polygons_count.dat", p["polygon_offset"],
                   p["polygons_count"], len(p["polygon_data"]), n)
            _spans(folder, "vertices_offset.dat and vertices_count.dat", p["vertices_offset"],
                   p["vertices_count"], len(p["vertices"]), n)
            poly, verts = p, p["vertices"]
    rles = masks = None
    if pixelwise:
        rles = _rles(folder)
        masks = {k: _array(folder, k) for k in ("masks_rles_idx", "masks_offset", "mask_count", "heights", "widths")}
        if len(masks["masks_rles_idx"]) != len(rles):
            raise DataError(f"readers.coco: preprocessed annotations {folder}: {len(rles)} masks for "
                            f"{len(masks['masks_rles_idx'])} entries of masks_rles_idx.dat")
        _spans(folder, "masks_offset.dat and mask_count.dat", masks["masks_offset"], masks["mask_count"],
               len(rles), n)
        if len(masks["heights"]) != n or len(masks["widths"]) != n:
            raise DataError(f"readers.coco: preprocessed annotations {folder}: pixel-wise masks need heights.dat "
                            f"and widths.dat with one value per image ({n})")
    out = []
    for i, name in enumerate(names):
        o, c = int(a["offsets"][i]), int(a["counts"][i])
        s = CocoSample(name, int(ids[i]) if len(ids) == n else -1,
                       int(masks["widths"][i]) if masks else 0, int(masks["heights"][i]) if masks else 0,
                       a["boxes"][o:o + c].copy(), a["labels"][o:o + c].copy())
        if poly is not None:
            po, pc = int(poly["polygon_offset"][i]), int(poly["polygons_count"][i])
            vo, vc = int(poly["vertices_offset"][i]), int(poly["vertices_count"][i])
            s.polygons = poly["polygon_data"][po:po + pc].copy()
            s.vertices = verts[vo:vo + vc].copy()
            if len(s.polygons) and ((s.polygons[:, 0] < 0).any() or (s.polygons[:, 0] >= c).any()
                                    or (s.polygons[:, 1] < 0).any() or (s.polygons[:, 1] > s.polygons[:, 2]).any()
                                    or (s.polygons[:, 2] > vc).any()):
                raise DataError(f"readers.coco: preprocessed annotations {folder}: polygon_data.dat: image {name}'s "
                                f"polygons name objects or vertices it does not have")
        if rles is not None and masks is not None:
            mo, mc = int(masks["masks_offset"][i]), int(masks["mask_count"][i])
            for k in range(mo, mo + mc):
                obj = int(masks["masks_rles_idx"][k])
                if not 0 <= obj < c:
                    raise DataError(f"readers.coco: preprocessed annotations {folder}: masks_rles_idx.dat: mask {k} "
                                    f"names object {obj} of image {name}, which has {c}")
                h, w, runs = rles[k]
                s.rles.append((obj, h, w, runs))
        out.append(s)
    return out


def _runs(counts: Any, where: str) -> np.ndarray:
    runs = np.asarray(rle_from_string(counts, where) if isinstance(counts, str) else list(counts), dtype=np.int64)
    if len(runs) and (runs.min() < 0 or runs.max() >= 1 << 32):
        raise DataError(f"{where}: an RLE count does not fit in 32 bits")
    return runs


def save(samples: list[CocoSample], folder: str, polygons: bool, pixelwise: bool, image_ids: bool) -> None:
    """Writes `samples` as preprocessed annotations into `folder` (made if missing), DALI's layout."""
    for s in samples:
        if "\n" in s.file_name or "\r" in s.file_name:
            raise DataError(f"readers.coco: cannot save preprocessed annotations: the file name {s.file_name!r} "
                            "holds a line break")
    counts = np.array([len(s.labels) for s in samples], np.int64)
    lists: dict[str, np.ndarray] = {
        "offsets": np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32) if len(samples) else
        np.zeros(0, np.int32),
        "counts": counts.astype(np.int32),
        "boxes": np.concatenate([s.boxes.reshape(-1, 4) for s in samples] or [np.zeros((0, 4))]).astype(np.float32),
        "labels": np.concatenate([s.labels for s in samples] or [np.zeros(0)]).astype(np.int32)}
    if image_ids:
        lists["original_ids"] = np.array([s.image_id for s in samples], np.int32)
    rle_blobs: list[bytes] = []
    if polygons or pixelwise:
        npoly = np.array([len(s.polygons) for s in samples], np.int64)
        nvert = np.array([len(s.vertices) for s in samples], np.int64)
        lists.update(
            polygon_data=np.concatenate([s.polygons.reshape(-1, 3) for s in samples] or [np.zeros((0, 3))]).astype(np.int32),
            vertices=np.concatenate([s.vertices.reshape(-1, 2) for s in samples] or [np.zeros((0, 2))]).astype(np.float32),
            polygon_offset=np.cumsum(npoly) - npoly, polygons_count=npoly,
            vertices_offset=np.cumsum(nvert) - nvert, vertices_count=nvert)
    if pixelwise:
        nmask = np.array([len(s.rles) for s in samples], np.int64)
        idx = []
        for s in samples:
            for obj, h, w, cnts in s.rles:
                runs = _runs(cnts, f"readers.coco: image {s.file_name} (id {s.image_id}), object {obj}")
                rle_blobs.append(np.array([h, w, len(runs)], "<u8").tobytes() + runs.astype("<u4").tobytes())
                idx.append(obj)
        lists.update(masks_rles_idx=np.array(idx, np.int32), masks_offset=np.cumsum(nmask) - nmask, mask_count=nmask,
                     heights=np.array([s.height for s in samples], np.int32),
                     widths=np.array([s.width for s in samples], np.int32))
    files: dict[str, bytes] = {}
    for name, arr in lists.items():
        dtype, _ = LISTS[name]
        flat = np.ascontiguousarray(arr, dtype=np.dtype(dtype).newbyteorder("<")).reshape(-1)
        if len(flat):
            n = len(flat) // LISTS[name][1] if name in ROW_COUNTED else len(flat)
            files[name + ".dat"] = np.array([n], "<u4").tobytes() + flat.tobytes()
    if rle_blobs:
        files["masks_rles.dat"] = np.array([len(rle_blobs)], "<u4").tobytes() + b"".join(rle_blobs)
    if samples:
        files["filenames.dat"] = "".join(s.file_name + "\n" for s in samples).encode("utf-8")
    try:
        os.makedirs(folder, exist_ok=True)
        for name in ALL_FILES:  # the layout's files this save does not write: gone, not stale
            if name not in files and os.path.lexists(os.path.join(folder, name)):
                os.unlink(os.path.join(folder, name))
        for name, data in files.items():
            # written aside and renamed: a link planted under the final name is replaced, not followed
            write_aside(os.path.join(folder, name), data)
    except OSError as e:
        raise DataError(f"readers.coco: cannot save preprocessed annotations into {folder}: "
                        f"{e.strerror or e}") from None
