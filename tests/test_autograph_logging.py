"""DALI's `nvidia.dali._autograph` package as code written for DALI imports it (with only the
import changed): `_autograph.utils.ag_logging` (debug-log verbosity) and the names re-exported at
the package's top; a definition that imports them still builds and runs with conditionals."""
from __future__ import annotations

import logging

import numpy as np

from torch_dali import fn, pipeline_def
import torch_dali._autograph as autograph
from torch_dali._autograph.utils import ag_logging


def test_package_names():
    from torch_dali.conditionals import is_autograph_artifact
    from torch_dali.pipeline import do_not_convert
    assert autograph.is_autograph_artifact is is_autograph_artifact
    assert autograph.do_not_convert is do_not_convert
    assert autograph.ag_logging is ag_logging and autograph.utils.ag_logging is ag_logging


def test_verbosity_gates_log_and_error(monkeypatch, caplog, capsys):
    monkeypatch.setattr(ag_logging, "_level", None)
    monkeypatch.setattr(ag_logging, "_to_stdout", False)
    monkeypatch.setenv(ag_logging.ENV_VAR, "3")
    assert ag_logging.get_verbosity() == 3 and ag_logging.has_verbosity(3) and not ag_logging.has_verbosity(4)
    ag_logging.set_verbosity(1)  # over the environment
    assert ag_logging.get_verbosity() == 1
    with caplog.at_level(logging.INFO, logger="torch_dali.autograph"):
        ag_logging.log(2, "hidden %d", 2)
        ag_logging.log(1, "shown %d", 1)
        ag_logging.error(5, "hidden error")
        ag_logging.warning("always %s", "warned")
    assert [r.getMessage() for r in caplog.records] == ["shown 1", "always warned"]
    assert capsys.readouterr().out == ""
    ag_logging.set_verbosity(1, alsologtostdout=True)
    ag_logging.error(1, "bad %s", "thing")
    ag_logging.trace("traced", 3)
    assert capsys.readouterr().out == "ERROR: bad thing\ntraced 3\n"
    ag_logging.set_verbosity(0)
    assert not ag_logging.has_verbosity(1)


def _rotate(image, label):
    return fn.rotate(image, angle=42), label


def _twist(image, label):
    return fn.color_twist(image, saturation=0), label


def _pick(lo, hi, branches, idx, image, label):
    if lo == hi:
        return branches[lo](image, label)
    mid = (lo + hi) // 2
    if idx <= mid:  # a DataNode predicate inside a recursive helper: rewritten on each call
        a, b = _pick(lo, mid, branches, idx, image, label)
    else:
        a, b = _pick(mid + 1, hi, branches, idx, image, label)
    return a, b


def test_recursive_helper_returning_tuples_with_verbosity_set():
    ag_logging.set_verbosity(0)

    @pipeline_def(enable_conditionals=True, batch_size=4, num_threads=1, device_id=None, seed=3)
    def pipe():
        image = fn.external_source(source=lambda: [np.full((20, 30, 3), 42, np.uint8)] * 4, layout="HWC")
        idx = fn.random.uniform(values=[0, 1])
        return _pick(0, 1, [_rotate, _twist], idx, image, idx)

    p = pipe()
    p.build()
    images, labels = p.run()
    assert len(images) == 4 and len(labels) == 4
