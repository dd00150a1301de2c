"""Data sets of the stand-in in the readers' formats (db/recordio, db/tfrecord, db/lmdb, db/coco, ...)."""
from __future__ import annotations

from pathlib import Path


def make(root: Path) -> None:
    pass
