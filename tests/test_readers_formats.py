"""readers.numpy, readers.tfrecord and readers.webdataset against DALI 2.4's CPU readers on the same
files (tests/reference/readers_cases.py writes them; readers_make_tables.py stored DALI's outputs):
same samples, same order, same dtypes and shapes, bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

import torch_dali.tfrecord as tfrecord
from torch_dali import fn, pipeline_def, types
from tests.reference import readers_cases as C
from tests.reference import readers_tables as T
from tests.reference.readers_tools import TOOL_OF


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    r = str(tmp_path_factory.mktemp("reader_data"))
    C.build(r)
    return r


def ours(case: str, root: str) -> dict[str, np.ndarray]:
    return C.run_case(case, root, fn, pipeline_def, tfrecord, types, lambda tl, s: np.asarray(tl.at(s)))


@pytest.mark.parametrize("source", ["table", "live"])
@pytest.mark.parametrize("case", sorted(C.CASES))
def test_reader_matches_dali(case, source, root):
    if C.CASES[case][0].startswith("caffe"):
        pytest.importorskip("lmdb", reason="the LMDB cases write their databases with the lmdb package")
    if case in TOOL_OF:
        pytest.importorskip(TOOL_OF[case], reason=f"{case} reads files written by {TOOL_OF[case]}")
    want = T.expected(source, case, root)
    got = ours(case, root)
    assert sorted(got) == sorted(want), case
    for key in want:
        assert got[key].dtype == want[key].dtype, (case, key)
        np.testing.assert_array_equal(got[key], want[key], err_msg=f"{case} {key}")


def test_tables_come_from_dali_2_4():
    assert T.meta()["dali"].startswith("2.4")
