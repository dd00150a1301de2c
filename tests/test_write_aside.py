"""Files torch_dali writes into folders someone else may control: the annotation cache of
readers.coco, dump_image's working folder, a dynamic-mode checkpoint folder. They were written to
`.<name>.<pid>.tmp` (or `<path>.tmp`) with open(), which follows a link: a link planted under that
guessable name made a save overwrite the link's target (measured: a coco save into a folder holding
`.boxes.dat.<pid>.tmp -> VICTIM` rewrote VICTIM)."""
from __future__ import annotations

import json
import os
import stat

import numpy as np

from torch_dali.io import coco as C
from torch_dali.io import coco_preprocessed as P
from torch_dali.io.write_aside import write_aside


def _victim(tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    return victim


def test_write_aside_replaces_links_and_leaves_no_temporary(tmp_path):
    victim = _victim(tmp_path)
    (tmp_path / "out").symlink_to(victim)
    old = os.umask(0o022)
    try:
        write_aside(str(tmp_path / "out"), b"new")
    finally:
        os.umask(old)
    assert victim.read_bytes() == b"precious"
    assert (tmp_path / "out").read_bytes() == b"new" and not (tmp_path / "out").is_symlink()
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o644  # as open() would make it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "victim"]


def test_a_coco_save_does_not_follow_links_at_the_old_temporary_names(tmp_path):
    victim = _victim(tmp_path)
    folder = tmp_path / "pre"
    folder.mkdir()
    names = ("boxes.dat", "labels.dat", "offsets.dat", "counts.dat", "filenames.dat")
    for name in names:
        (folder / f".{name}.{os.getpid()}.tmp").symlink_to(victim)
    s = C.CocoSample("a.jpg", 1, 8, 8, np.ones((1, 4), np.float32), np.ones(1, np.int32))
    P.save([s], str(folder), False, False, False)
    assert victim.read_bytes() == b"precious"
    assert (folder / "filenames.dat").read_bytes() == b"a.jpg\n"
    assert [x.file_name for x in P.load(str(folder), False, False, False)] == ["a.jpg"]


def test_a_dynamic_checkpoint_save_does_not_follow_a_link_at_path_tmp(tmp_path):
    import torch_dali.experimental.dynamic as ndd
    victim = _victim(tmp_path)
    (tmp_path / "ck_000.json.tmp").symlink_to(victim)
    rng = ndd.random.RNG(seed=42)
    ckpt = ndd.checkpoint.Checkpoint()
    ckpt.register(rng)
    ckpt.collect()
    path = ckpt.save(str(tmp_path / "ck_{seq:03d}.json"))
    assert path.endswith("ck_000.json") and victim.read_bytes() == b"precious"
    assert json.loads(open(path).read())["version"] == 2
