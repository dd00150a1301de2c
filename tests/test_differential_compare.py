"""The differential fuzzer's comparison (conformance/differential/compare.py), without DALI."""
import numpy as np

from conformance.differential.compare import compare, compare_values, gist
from conformance.differential.registry import OPS, make_case


def _res(*samples, dtype="UINT8", layout="HWC"):
    meta = {"outputs": [{"dtype": dtype, "layout": layout, "shapes": [list(s.shape) for s in samples]}]}
    return meta, {f"o0_{i}": s for i, s in enumerate(samples)}


def _err(kind="RuntimeError", msg="bad"):
    return {"error": kind, "message": msg}, {}


def test_integers_exact_floats_close():
    a = np.arange(6, dtype=np.uint8)
    assert compare(_res(a), _res(a.copy()))["verdict"] == "agree"
    v = compare(_res(a), _res(a + np.uint8(1)))
    assert (v["verdict"], v["cause"], v["detail"]["max_abs"], v["detail"]["bad"]) == ("differ", "values", 1, 6)
    f = np.linspace(0, 100, 7, dtype=np.float32)
    assert compare_values(f, f + np.float32(1e-5)) is None  # within 1e-5 of the output's scale
    d = compare_values(f, f + np.float32(0.5))
    assert d["bad"] == 7 and abs(d["max_abs"] - 0.5) < 1e-6 and d["ulps"] > 0
    nan = np.array([np.nan, 1], np.float32)
    assert compare_values(nan, nan.copy()) is None
    assert compare_values(nan, np.array([0, 1], np.float32)) is not None


def test_refusals_and_metadata():
    a = np.zeros((2, 2, 3), np.uint8)
    assert compare(_err(), _err("ValueError"))["verdict"] == "both_refuse"
    assert compare(_err(), _res(a))["cause"] == "dali_refuses"
    assert compare(_res(a), _err())["cause"] == "ours_refuses"
    assert compare(_err("Crash"), _res(a))["verdict"] == "skip"
    assert compare(_res(a), _res(a, dtype="FLOAT"))["cause"] == "dtype"
    assert compare(_res(a), _res(a, layout="CHW"))["cause"] == "layout"
    assert compare(_res(a), _res(a[:1]))["cause"] == "shape"
    assert compare(_res(a), _res(a + 1), values=False)["verdict"] == "agree"


def test_gist_takes_dalis_reason():
    msg = ("Critical error in pipeline:\nError in CPU operator `x`,\n  File \"w.py\", line 3\n\nencountered:\n\n"
           "[/opt/dali/dali/a.cc:12] Assert on \"n > 0\" failed: no\nStacktrace (3 entries):\n[frame 0]")
    assert gist(msg) == 'Assert on "n > 0" failed: no'
    assert gist("one\ntwo") == "two"
    msg = ("Error in CPU operator `pad`,\n\nencountered:\n\nUnsupported number of dimensions 0\n"
           "C++ context: [/opt/dali/dali/operators/generic/pad.cc:218] \nCurrent pipeline object is no longer valid.")
    assert gist(msg) == "Unsupported number of dimensions 0"


def test_cases_are_seeded_json():
    for op in OPS:
        assert make_case(op, 7) == make_case(op, 7)
    assert make_case("resize", 1) != make_case("resize", 2)
