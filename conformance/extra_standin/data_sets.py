"""Data sets of the stand-in in the readers' formats, at the paths DALI's test files read:
db/coco, db/coco_pixelwise, db/coco_dummy (coco.py), db/tfrecord and db/recordio (records.py),
db/webdataset (wds.py), db/sequence, db/audio, db/3D/MRI/Knee/npy_2d_slices (misc.py), db/lmdb,
db/c2lmdb, db/c2lmdb_no_label (caffe_dbs.py, through our own LMDB writer: no liblmdb here),
db/video/vfr (video.py, VP9, where PyAV is installed). Not made: the GPU readers' videos
(db/video/small, db/optical_flow). Files whose content DALI's tests pin (test_get_property's
byte offsets, test_coco's image names, ids and classes) are laid out to match; values computed from
the real files (decoded pixels, hashes) cannot be."""
from __future__ import annotations

from pathlib import Path

from . import caffe_dbs, coco, misc, records, video, wds


def make(root: Path) -> None:
    coco.make(root)
    records.make(root)
    wds.make(root)
    misc.make(root)
    caffe_dbs.make(root)
    video.make(root)
