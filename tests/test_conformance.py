"""The conformance runner itself: nose2-rule collection, process isolation, the shim, counting."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.collect import collect
from conformance.runner import Settings, TaskResult, run_module
from conformance.suite import compress_ids, expand_ids, make_baseline

REPO = Path(__file__).resolve().parent.parent
DALI_TESTS = REPO.parent / "shared" / "dali_conformance" / "tests"

SYNTH_COLLECT = '''
import unittest
calls = []

def test_plain():
    calls.append("plain")

def test_gen():
    yield check, 1, 2
    yield check, (3, 4)          # nose2 unpacks a tuple given as the only argument
    yield check, [5, 6]

def check(*a):
    calls.append(("check", a))

def test_params(x, y):
    calls.append(("params", x, y))
test_params.paramList = [(1, 2), (3, 4)]

def test_broken_gen():
    yield check, "ok"
    raise RuntimeError("generator broke")

def test_needs_args(x):          # not a test: takes arguments
    pass

def test_hidden():
    pass
test_hidden.__test__ = False

def helper_not_a_test():
    pass

class TestThing:
    def setUp(self):
        self.ready = True
    def test_a(self):
        calls.append(("a", self.ready))
    def test_p(self, v):
        calls.append(("p", v))
    test_p.paramList = [7]

class Case(unittest.TestCase):
    def test_b(self):
        calls.append("b")
'''


def _load(tmp_path: Path, name: str, src: str):
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_collector_follows_nose2_rules(tmp_path):
    mod = _load(tmp_path, "synth_collect", SYNTH_COLLECT)
    cases = list(collect(mod))
    assert [c.id for c in cases] == [
        "synth_collect.Case.test_b",
        "synth_collect.TestThing.test_a", "synth_collect.TestThing.test_p:1",
        "synth_collect.test_broken_gen:1", "synth_collect.test_broken_gen:collect",
        "synth_collect.test_gen:1", "synth_collect.test_gen:2", "synth_collect.test_gen:3",
        "synth_collect.test_params:1", "synth_collect.test_params:2",
        "synth_collect.test_plain",
    ]
    errors = []
    for c in cases:
        try:
            c.run()
        except RuntimeError as e:
            errors.append((c.id, str(e)))
    assert errors == [("synth_collect.test_broken_gen:collect", "generator broke")]
    assert mod.calls == ["b", ("a", True), ("p", 7), ("check", ("ok",)), ("check", (1, 2)), ("check", (3, 4)),
                         ("check", ([5, 6],)), ("params", 1, 2), ("params", 3, 4), "plain"]



SYNTH_CLASS_FIXTURES = '''
import unittest
calls = []

class Ready(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        calls.append("up")
        cls.data = 5
    @classmethod
    def tearDownClass(cls):
        calls.append("down")
    def test_a(self):
        calls.append(("a", self.data))
    def test_b(self):
        calls.append(("b", self.data))

class Broken(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        calls.append("broken up")
        raise OSError("no data here")
    def test_c(self):
        calls.append("c")
    def test_d(self):
        calls.append("d")
'''


def test_collector_runs_class_fixtures_once(tmp_path):
    mod = _load(tmp_path, "synth_class", SYNTH_CLASS_FIXTURES)
    errors = []
    for c in collect(mod):
        try:
            c.run()
        except OSError as e:
            errors.append((c.id, str(e)))
    # setUpClass once per class, before its first case; when it raises, each case fails with its error
    assert mod.calls == ["broken up", "up", ("a", 5), ("b", 5), "down"]
    assert errors == [("synth_class.Broken.test_c", "no data here"), ("synth_class.Broken.test_d", "no data here")]

SYNTH_ISOLATION = '''
import os, signal, time

def test_cases():
    yield ok,
    yield bad,
    yield segfault,
    yield ok,
    yield hang,
    yield ok,
    yield flood,
    yield ok,

def ok():
    pass

def bad():
    assert 1 == 2, "one is not two"

def segfault():
    os.kill(os.getpid(), signal.SIGSEGV)

def hang():
    time.sleep(120)

def flood():
    while True:
        print("warning: can't open file " * 100)
'''

SYNTH_SHIM = '''
import nvidia.dali.types  # through the shim, at import, as DALI's files do

def test_shim_maps_modules():
    import nvidia.dali.fn, nvidia.dali.backend_impl, torch_dali
    from nvidia.dali.pipeline import Pipeline
    assert nvidia.dali.types is torch_dali.types
    assert nvidia.dali.fn is torch_dali.fn and Pipeline is torch_dali.Pipeline
    assert nvidia.dali.backend_impl.TensorListCPU is torch_dali.TensorListCPU

def test_missing_stays_missing():
    from nvidia.dali import no_such_module_xyz  # torch_dali has none: must stay missing

def test_device_id_patched():
    from nvidia.dali.pipeline import Pipeline
    assert Pipeline(batch_size=1, num_threads=1, device_id=0).device_id is None
    assert Pipeline(1, 1, 0).device_id is None
'''


def _synth_dir(tmp_path: Path, name: str, src: str) -> Path:
    tests = tmp_path / "tests"
    tests.mkdir(exist_ok=True)
    (tests / f"{name}.py").write_text(src)
    (tests / "wds2idx.py").write_text("")
    return tests


def test_runner_isolates_crashes_hangs_and_floods(tmp_path):
    tests = _synth_dir(tmp_path, "test_synth_iso", SYNTH_ISOLATION)
    settings = Settings(tests_dir=tests, work_dir=tmp_path / "work", timeout=10, import_timeout=120,
                        log_limit=1 << 20)
    res = run_module(sys.executable, "ours", "test_synth_iso", settings)
    got = {cid.rsplit(":", 1)[1]: (c["status"], c["reason"]) for cid, c in res.cases.items()}
    assert res.import_error is None and not res.stopped
    assert got["1"] == ("pass", "")
    assert got["2"] == ("fail", "AssertionError: one is not two")
    assert got["3"][0] == "crash" and "SIGSEGV" in got["3"][1]
    assert got["4"] == ("pass", "")  # a new worker took over after the crash
    assert got["5"][0] == "timeout" and "no result within 10 s" in got["5"][1]
    assert got["6"] == ("pass", "")
    assert got["7"][0] == "timeout" and "printed more than 1 MB" in got["7"][1]
    assert got["8"] == ("pass", "")
    assert (tmp_path / "work" / "logs" / "ours-test_synth_iso.log").stat().st_size < 3 << 20
    # only the requested ids run, the others are not even started
    res2 = run_module(sys.executable, "ours", "test_synth_iso", settings,
                      ids=["test_synth_iso.test_cases:1", "test_synth_iso.test_cases:2"])
    assert sorted(res2.cases) == ["test_synth_iso.test_cases:1", "test_synth_iso.test_cases:2"]


def test_shim_maps_what_exists_and_patches_device_id(tmp_path):
    tests = _synth_dir(tmp_path, "test_synth_shim", SYNTH_SHIM)
    settings = Settings(tests_dir=tests, work_dir=tmp_path / "work", timeout=60, import_timeout=120)
    res = run_module(sys.executable, "ours", "test_synth_shim", settings)
    assert res.import_error is None and not res.leaks
    got = {cid.split(".")[-1]: c for cid, c in res.cases.items()}
    assert got["test_shim_maps_modules"]["status"] == "pass", got["test_shim_maps_modules"]
    assert got["test_missing_stays_missing"]["status"] == "error"
    assert "no_such_module_xyz" in got["test_missing_stays_missing"]["reason"]
    assert got["test_device_id_patched"]["status"] == "pass", got["test_device_id_patched"]


def test_baseline_categories_and_id_ranges(tmp_path):
    ids = ["m.f:1", "m.f:2", "m.f:3", "m.f:7", "m.g", "m.h:10"]
    assert compress_ids(ids) == {"m.f": "1-3,7", "m.g": "", "m.h": "10"}
    assert sorted(expand_ids(compress_ids(ids))) == sorted(ids)
    (tmp_path / "test_x.py").write_text("x = 1\n")
    res = TaskResult("dali", "test_x", cases={
        "test_x.f:1": {"status": "pass", "reason": "", "where": "", "summary": "'cpu'"},
        "test_x.f:2": {"status": "error", "reason": "RuntimeError: The pipeline requires a CUDA-capable GPU "
                       "but the CUDA driver is not installed", "where": "", "summary": "'gpu'"},
        "test_x.f:3": {"status": "error", "reason": "RuntimeError: Directory /w/DALI_extra-not-available/db "
                       "does not exist", "where": "", "summary": ""},
        "test_x.f:4": {"status": "error", "reason": "ModuleNotFoundError: No module named 'paddle'",
                       "where": "", "summary": ""},
        "test_x.f:5": {"status": "fail", "reason": "AssertionError: 1 != 2", "where": "", "summary": "'cpu'"},
        "test_x.f:6": {"status": "timeout", "reason": "runner: no result; its output names the missing "
                       "DALI_extra-not-available folder", "where": "", "summary": ""},
    })
    entry = make_baseline({"test_x": res}, tmp_path, "2.4.0")["modules"]["test_x"]
    counts = {k: v for k, v in entry["counts"].items() if v}
    assert counts == {"pass": 1, "gpu": 1, "extra": 2, "package": 1, "dali_fails": 1}
    assert entry["passed"] == {"test_x.f": "1"}


@pytest.mark.skipif(not (DALI_TESTS / "test_coin_flip.py").exists(), reason="no shared/dali_conformance")
def test_run_counts_a_real_dali_file_against_the_baseline(tmp_path):
    """End to end without DALI: one of DALI's files, counted against the committed baseline."""
    doc = tmp_path / "conformance.md"
    cmd = [sys.executable, "-m", "conformance", "run", "--files", "test_coin_flip", "--dali-python", "none",
           "--ours-python", sys.executable, "--work", str(tmp_path / "work"), "--doc", str(doc),
           "--tests", str(DALI_TESTS), "--timeout", "60"]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    baseline = json.loads((REPO / "conformance" / "baseline.json").read_text())
    counted = expand_ids(baseline["modules"]["test_coin_flip"]["passed"])
    assert counted  # DALI passes its CPU cases here
    res = json.loads((tmp_path / "work" / "results" / "ours" / "test_coin_flip.json").read_text())
    assert res["import_error"] is None
    assert sorted(res["cases"]) == sorted(counted)  # exactly the counted cases ran, GPU ones did not
    n_pass = sum(c["status"] == "pass" for c in res["cases"].values())
    row = next(ln for ln in doc.read_text().splitlines() if ln.startswith("| `test_coin_flip.py`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == str(len(counted)) and cells[7] == str(n_pass)


def test_device_id_patch_keeps_the_constructor_signature():
    """DALI's pipeline_def reads Pipeline.__init__ with getfullargspec (which ignores __wrapped__)."""
    import inspect

    from conformance.patches import patch_device_id

    class Pipe:
        def __init__(self, batch_size=None, num_threads=None, device_id=None, *, seed=None):
            self.device_id = device_id

    spec = inspect.getfullargspec(Pipe.__init__)
    patch_device_id(Pipe)
    assert inspect.getfullargspec(Pipe.__init__) == spec
    assert Pipe(1, 1, 0).device_id is None and Pipe(device_id=0).device_id is None
    assert Pipe(1, 1, 3).device_id == 3 and Pipe(device_id=False).device_id is False
