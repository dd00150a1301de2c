"""multi_paste against DALI 2.4's CPU backend (cases in tests/reference/geometry_cases.py): exact
outputs for in_ids and positional inputs, absolute and relative coordinates (relative anchors
round down, relative shapes up, as DALI's), overlapping pastes in order, type conversion; the
cases DALI refuses are refused, each error naming its facts in our own words."""
from __future__ import annotations

import numpy as np
import pytest

from reference import geometry_cases as G
from reference.geometry_tables import SOURCES, check_refused, dali, ours

CASES = [k for k in G.CASES if k.startswith("multi_paste/")]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", CASES)
def test_matches_dali(name, source):
    want = dali(source, name)
    if isinstance(want, str):
        check_refused(name, want)
        return
    got = ours(name)
    for g, w in zip(got[0], want[0]):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name,key", [("multi_paste/err_idx", r"`in_ids` of output \d+ names sample \d+, but the "
                                                         r"input batch has \d+ samples"),
                                      ("multi_paste/err_sizes", r"must all be one size; got samples of \(\d+, \d+\) and"),
                                      ("multi_paste/err_channels", r"different channel counts \(\[\d+, \d+\]\)")])
def test_refusals_name_their_facts(name, key):
    from torch_dali.errors import TorchDaliError
    with pytest.raises(TorchDaliError, match=key):
        ours(name)


def test_outputs_name_the_samples_pasted_into_them(tmp_path):
    # DALI 2.4 (measured): an output's source_info() joins the non-empty names of the samples
    # pasted into it with ";" (in_ids order, or input order); get_property gives the same
    from torch_dali import fn as F, pipeline_def as P
    for i in range(3):
        np.save(tmp_path / f"m{i}.npy", np.full((4, 4, 1), i, np.uint8))
    ids = [np.array([0, 0], np.int32), np.array([2, 1, 0], np.int32), np.array([], np.int32)]

    @P(batch_size=3, num_threads=1, device_id=None)
    def pipe():
        x = F.readers.numpy(file_root=str(tmp_path), files=["m0.npy", "m1.npy", "m2.npy"])
        y = F.readers.numpy(file_root=str(tmp_path), files=["m2.npy", "m0.npy", "m1.npy"])
        e = F.external_source(source=lambda: [np.zeros((4, 4, 1), np.uint8)] * 3, batch=True, layout="HWC")
        picked = F.multi_paste(x, in_ids=F.external_source(source=lambda: ids, batch=True), output_size=[4, 4])
        return (picked, F.multi_paste(x, y, output_size=[4, 4]), F.multi_paste(e, x, output_size=[4, 4]),
                F.get_property(picked, key="source_info"))

    p = pipe()
    p.build()
    picked, both, mixed, prop = p.run()
    assert [t.source_info() for t in picked] == ["m0.npy;m0.npy", "m2.npy;m1.npy;m0.npy", ""]
    assert [t.source_info() for t in both] == ["m0.npy;m2.npy", "m1.npy;m0.npy", "m2.npy;m1.npy"]
    assert [t.source_info() for t in mixed] == ["m0.npy", "m1.npy", "m2.npy"]
    assert [bytes(np.asarray(t)).decode() for t in prop] == ["m0.npy;m0.npy", "m2.npy;m1.npy;m0.npy", ""]
