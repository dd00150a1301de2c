"""docs/dali_coverage.md stays what the DALI schema snapshot and torch_dali's registry say."""
from __future__ import annotations

import copy

from conformance import coverage


def test_coverage_doc_is_current():
    expected = coverage.render(coverage.load_snapshot())
    actual = coverage.DOC.read_text() if coverage.DOC.exists() else ""
    assert actual == expected, (
        "docs/dali_coverage.md is out of date with torch_dali's op registry or "
        "conformance/dali_schemas.json; regenerate it with `python -m conformance coverage` "
        "(or `make conformance`)")


def test_snapshot_holds_dali_ops_and_arguments():
    snap = coverage.load_snapshot()
    assert snap["dali_version"].startswith("2.4")
    ops = snap["ops"]
    assert len(ops) > 120
    assert {"resize_x", "resize_y", "interp_type"} <= set(ops["resize"]["args"])
    assert "FileReader" in ops["readers.file"]["legacy"]
    assert ops["decoders.image"]["devices"] == ["cpu", "mixed"]


def test_rows_follow_our_registry():
    snap = coverage.load_snapshot()
    rows = {r["op"]: r for r in coverage.compare(snap)}
    assert rows["resize"]["ours"] == "resize"
    assert rows["transforms.crop"]["ours"] == "transforms.crop"  # `transforms.Crop` is not `Crop`
    # an argument DALI gains is reported missing for an op we have
    fake = copy.deepcopy(snap)
    fake["ops"]["resize"]["args"]["no_such_argument"] = {"type": "INT32", "optional": True, "tensor": False}
    row = next(r for r in coverage.compare(fake) if r["op"] == "resize")
    assert "no_such_argument" in row["args_missing"]
    assert coverage.render(fake) != coverage.render(snap)
