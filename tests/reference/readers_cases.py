"""Data sets and reader configurations for the readers' reference tests (stdlib + NumPy only).

`build(root)` writes every data set under `root` deterministically (the same files on every
machine and in either venv); `CASES` names each reader configuration: the reader, its arguments
(with "{root}" standing for the data folder; tfrecord features and webdataset dtypes in a neutral
form each side turns into its own objects), the batch size and the number of batches to run.
DALI's outputs for them are stored by readers_make_tables.py; the tests run torch_dali on the same
files and compare.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from . import readers_formats as W
from . import readers_lmdb, readers_tools

TABLES = "readers_tables.npz"

NUMPY_DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                "float16", "float32", "float64")


def build_numpy(root: str) -> None:
    rng = np.random.default_rng(1505)
    d = W.ensure_dir(os.path.join(root, "npy"))
    for k, dt in enumerate(NUMPY_DTYPES):  # one file per dtype, shapes of 0 to 3 dims
        shape = [(), (7,), (5, 6), (3, 4, 2)][k % 4]
        a = (rng.random(shape) * 200 - 50)
        arr = (a > 0) if dt == "bool" else a.astype(dt)
        np.save(os.path.join(d, f"t_{k:02d}_{dt}.npy"), np.asfortranarray(arr) if k % 3 == 2 else arr)
    r = W.ensure_dir(os.path.join(root, "npy_roi"))  # same ndim and dtype: ROI cases
    for k, shape in enumerate([(10, 10), (12, 10), (10, 12), (20, 15), (13, 11), (19, 10)]):
        arr = rng.integers(0, 255, shape).astype(np.uint8)
        np.save(os.path.join(r, f"r_{k}.npy"), np.asfortranarray(arr) if k % 2 else arr)
    sub = W.ensure_dir(os.path.join(r, "sub"))
    np.save(os.path.join(sub, "s_0.npy"), rng.integers(0, 255, (9, 14)).astype(np.uint8))
    deep = W.ensure_dir(os.path.join(sub, "deeper"))
    np.save(os.path.join(deep, "d_0.npy"), np.zeros((4, 4), np.uint8))  # not listed: too deep
    np.save(os.path.join(r, "other.npz.npy"), rng.integers(0, 255, (8, 9)).astype(np.uint8))
    with open(os.path.join(r, "list.txt"), "w") as f:
        f.write("r_3.npy\nsub/s_0.npy\n\nr_0.npy\n")


def _examples(n: int, seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        nbox = int(rng.integers(0, 4))
        feats: dict[str, tuple[str, Any]] = {
            "image/encoded": ("bytes", [bytes(rng.integers(0, 255, int(rng.integers(1, 40)), dtype=np.uint8))]),
            "image/class/label": ("int64", [int(rng.integers(-5, 1000))]),
            "image/object/bbox": ("float", rng.random(4 * nbox).astype(np.float32).tolist()),
            "ids": ("int64", rng.integers(-2**40, 2**40, 3).tolist()),
            "pair": ("float", rng.random(2).astype(np.float32).tolist()),
        }
        out.append(W.encode_example(feats, packed=(i % 3 != 1)))
    return out


def build_tfrecord(root: str) -> None:
    d = W.ensure_dir(os.path.join(root, "tfr"))
    W.write_tfrecord(os.path.join(d, "a.tfrecord"), _examples(7, 1), os.path.join(d, "a.idx"))
    W.write_tfrecord(os.path.join(d, "b.tfrecord"), _examples(5, 2), os.path.join(d, "b.idx"))


def _wds_members(k: int, n: int, seed: int) -> list[tuple[str, bytes]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        key = f"shard{k}/s{i:03d}"
        if i % 4 != 3:
            out.append((f"{key}.jpg" if i % 5 else f"{key}.PNG", bytes(rng.integers(0, 255, 10 + i, dtype=np.uint8))))
        out.append((f"{key}.cls", str(i + 100 * k).encode()))
        if i % 2 == 0:
            out.append((f"{key}.seg.i16", rng.integers(-300, 300, 3 + i % 3).astype("<i2").tobytes()))
    return out


def build_webdataset(root: str) -> None:
    d = W.ensure_dir(os.path.join(root, "wds"))
    for k, n in enumerate((9, 6, 4)):
        tar = os.path.join(d, f"part{k}.tar")
        W.write_tar(tar, _wds_members(k, n, 30 + k), dirs=[f"shard{k}/"])
        W.wds_index(tar, os.path.join(d, f"part{k}.idx"))


def build(root: str) -> None:
    build_numpy(root)
    build_tfrecord(root)
    build_webdataset(root)
    readers_lmdb.build(root)
    readers_tools.build(root)


_NPY = "{root}/npy"
_ROI = "{root}/npy_roi"
_TFR = {"path": ["{root}/tfr/a.tfrecord", "{root}/tfr/b.tfrecord"],
        "index_path": ["{root}/tfr/a.idx", "{root}/tfr/b.idx"]}
_WDS = {"paths": [f"{{root}}/wds/part{k}.tar" for k in range(3)]}
_WDS_IDX = {**_WDS, "index_paths": [f"{{root}}/wds/part{k}.idx" for k in range(3)]}
_FEATURES = {
    "image/encoded": ("fixed", [], "string", ""),
    "image/class/label": ("fixed", [1], "int64", -1),
    "image/object/bbox": ("var", [4], "float32", 0.0),
    "ids": ("var", None, "int64", 0),
    "pair": ("fixed", [2], "float32", 0.0),
}

# name -> (reader, arguments, batch size, batches)
CASES: dict[str, tuple[str, dict[str, Any], int, int]] = {
    "numpy_all_types": ("numpy", {"file_root": _NPY}, 1, len(NUMPY_DTYPES)),
    "numpy_tree": ("numpy", {"file_root": _ROI}, 2, 5),
    "numpy_files": ("numpy", {"file_root": _ROI, "files": ["r_5.npy", "sub/s_0.npy", "r_1.npy"]}, 2, 3),
    "numpy_list": ("numpy", {"file_root": _ROI, "file_list": "{root}/npy_roi/list.txt"}, 3, 2),
    "numpy_filter": ("numpy", {"file_root": _ROI, "file_filter": "r_[1-3].npy"}, 3, 2),
    "numpy_shard": ("numpy", {"file_root": _ROI, "num_shards": 3, "shard_id": 1}, 2, 5),
    "numpy_shard_pad": ("numpy", {"file_root": _ROI, "num_shards": 3, "shard_id": 2, "pad_last_batch": True}, 2, 5),
    "numpy_stick": ("numpy", {"file_root": _ROI, "num_shards": 2, "shard_id": 1, "stick_to_shard": True}, 3, 4),
    "numpy_nommap": ("numpy", {"file_root": _ROI, "dont_use_mmap": True}, 4, 2),
    "numpy_roi_start": ("numpy", {"file_root": _ROI, "roi_start": [1, 2]}, 4, 2),
    "numpy_roi_rel": ("numpy", {"file_root": _ROI, "rel_roi_start": [0.15, 0.25], "rel_roi_end": [0.55, 0.95]}, 4, 2),
    "numpy_roi_shape": ("numpy", {"file_root": _ROI, "roi_start": [2, 1], "roi_shape": [5, 7]}, 4, 2),
    "numpy_roi_rel_shape": ("numpy", {"file_root": _ROI, "rel_roi_start": [0.05, 0.35], "rel_roi_shape": [0.45, 0.25]}, 4, 2),
    "numpy_roi_axis": ("numpy", {"file_root": _ROI, "roi_start": [3], "roi_end": [8], "roi_axes": [1]}, 4, 2),
    "numpy_roi_neg_axis": ("numpy", {"file_root": _ROI, "rel_roi_end": [0.5], "roi_axes": [-2]}, 4, 2),
    "numpy_roi_pad": ("numpy", {"file_root": _ROI, "roi_start": [-3, 2], "roi_end": [14, 20],
                                "out_of_bounds_policy": "pad", "fill_value": 7.6}, 4, 2),
    "numpy_roi_trim": ("numpy", {"file_root": _ROI, "roi_start": [-3, 2], "roi_end": [14, 20],
                                 "out_of_bounds_policy": "trim_to_shape"}, 4, 2),
    "tfrecord": ("tfrecord", {**_TFR, "features": _FEATURES}, 3, 5),
    "tfrecord_shard": ("tfrecord", {**_TFR, "features": _FEATURES, "num_shards": 3, "shard_id": 2,
                                    "pad_last_batch": True}, 3, 3),
    "tfrecord_nommap": ("tfrecord", {**_TFR, "features": {"ids": ("var", None, "int64", 0)},
                                     "dont_use_mmap": True}, 5, 3),
    "wds_scan": ("webdataset", {**_WDS, "ext": ["jpg;png", "cls", "seg.i16"]}, 4, 5),
    "wds_index": ("webdataset", {**_WDS_IDX, "ext": ["jpg;png", "cls", "seg.i16"]}, 4, 5),
    "wds_nocase": ("webdataset", {**_WDS_IDX, "ext": ["jpg;png", "cls"], "case_sensitive_extensions": False}, 5, 4),
    "wds_skip": ("webdataset", {**_WDS_IDX, "ext": ["jpg", "seg.i16"], "missing_component_behavior": "skip",
                                "dtypes": ["UINT8", "INT16"]}, 2, 4),
    "wds_shard": ("webdataset", {**_WDS, "ext": ["cls", "jpg"], "num_shards": 4, "shard_id": 3,
                                 "pad_last_batch": True}, 3, 4),
    "wds_nommap": ("webdataset", {**_WDS_IDX, "ext": ["cls"], "dont_use_mmap": True}, 6, 4),
    # files written by the tfrecord and webdataset packages (readers_tools.py)
    "tfrecord_pkg": ("tfrecord", {"path": ["{root}/tfr_pkg/p0.tfrecord", "{root}/tfr_pkg/p1.tfrecord"],
                                  "index_path": ["{root}/tfr_pkg/p0.idx", "{root}/tfr_pkg/p1.idx"],
                                  "features": {"image/encoded": ("fixed", [], "string", ""),
                                               "label": ("fixed", [1], "int64", -1),
                                               "bbox": ("var", [4], "float32", 0.0),
                                               "ids": ("var", None, "int64", 0)}}, 5, 2),
    "wds_pkg": ("webdataset", {"paths": ["{root}/wds_pkg/w0.tar", "{root}/wds_pkg/w1.tar"],
                               "ext": ["jpg", "cls", "json"]}, 4, 2),
    # LMDB (readers_lmdb.py; these need the lmdb package to write the databases)
    "caffe": ("caffe", {"path": "{root}/lmdb/caffe_a"}, 8, 13),
    "caffe_two_dbs": ("caffe", {"path": ["{root}/lmdb/caffe_b", "{root}/lmdb/caffe_a"]}, 16, 2),
    "caffe_raw": ("caffe", {"path": "{root}/lmdb/caffe_raw"}, 4, 3),
    "caffe_no_label": ("caffe", {"path": "{root}/lmdb/caffe_raw", "label_available": False}, 5, 2),
    "caffe_no_image": ("caffe", {"path": "{root}/lmdb/caffe_a", "image_available": False}, 16, 7),
    "caffe_shard": ("caffe", {"path": "{root}/lmdb/caffe_a", "num_shards": 3, "shard_id": 2,
                              "pad_last_batch": True}, 9, 4),
    "caffe_stick": ("caffe", {"path": "{root}/lmdb/caffe_raw", "num_shards": 2, "shard_id": 1,
                              "stick_to_shard": True}, 4, 3),
    "caffe_nommap_ahead_lazy": ("caffe", {"path": "{root}/lmdb/caffe_b", "dont_use_mmap": True,
                                          "read_ahead": True, "lazy_init": True}, 4, 3),
    "caffe2": ("caffe2", {"path": "{root}/lmdb/caffe2_a", "additional_inputs": 2, "bbox": True}, 5, 5),
    "caffe2_one_more": ("caffe2", {"path": "{root}/lmdb/caffe2_a", "additional_inputs": 1}, 6, 4),
    "caffe2_dense": ("caffe2", {"path": "{root}/lmdb/caffe2_dense", "label_type": 2}, 5, 3),
    "caffe2_no_label": ("caffe2", {"path": "{root}/lmdb/caffe2_a", "label_type": 4}, 5, 3),
    "caffe2_shard": ("caffe2", {"path": "{root}/lmdb/caffe2_a", "num_shards": 4, "shard_id": 3,
                                "pad_last_batch": True}, 4, 3),
}


def _resolve(v: Any, root: str) -> Any:
    if isinstance(v, str):
        return v.replace("{root}", root)
    if isinstance(v, list):
        return [_resolve(x, root) for x in v]
    return v


def reader_args(case: str, root: str, tfrecord: Any, types: Any) -> tuple[str, dict[str, Any], int, int]:
    """The case's reader and arguments for one library (its `tfrecord` and `types` modules)."""
    reader, args, bs, n = CASES[case]
    kw = {k: _resolve(v, root) for k, v in args.items()}
    if "features" in kw:
        feats = {}
        for name, (kind, shape, dtype, default) in kw["features"].items():
            t = getattr(tfrecord, "string" if dtype == "string" else dtype)
            if kind == "fixed":
                feats[name] = tfrecord.FixedLenFeature(shape, t, default)
            else:
                feats[name] = (tfrecord.VarLenFeature(t, default) if shape is None
                               else tfrecord.VarLenFeature(shape, t, default))
        kw["features"] = feats
    if "dtypes" in kw:
        kw["dtypes"] = [getattr(types, d) for d in kw["dtypes"]]
    return reader, kw, bs, n


def run_case(case: str, root: str, fn: Any, pipeline_def: Any, tfrecord: Any, types: Any,
             as_array: Any) -> dict[str, np.ndarray]:
    """{"<batch>/<output>/<sample>": array} of a case, run by a library with DALI's API."""
    reader, kw, bs, n = reader_args(case, root, tfrecord, types)

    @pipeline_def(batch_size=bs, num_threads=2, device_id=None, seed=7)
    def pipe():
        out = getattr(fn.readers, reader)(name="Reader", **kw)
        if isinstance(out, dict):
            return tuple(out.values())
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    p = pipe()
    p.build()
    got: dict[str, np.ndarray] = {}
    for b in range(n):
        for o, tl in enumerate(p.run()):
            for s in range(len(tl)):
                got[f"{b}/{o}/{s}"] = np.asarray(as_array(tl, s))
    return got
