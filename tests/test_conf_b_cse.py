"""Duplicate ops run once (DALI's common subgraph elimination at build); named ops, readers,
external sources and Python functions are never merged; the traced graph and its YAML keep
every op."""
from __future__ import annotations

import numpy as np

from torch_dali import fn, pipeline_def, types
from torch_dali.graph.cse import eliminate_common_subgraphs


@pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=7)
def _dups():
    a = fn.random.uniform(range=[0, 1], shape=(1,), seed=123)
    b = fn.random.uniform(range=[0, 1], shape=(1,), seed=123)  # same seed: same draws, merged
    other = fn.random.uniform(range=[0, 1], shape=(1,), seed=124)
    unseeded1, unseeded2 = fn.random.uniform(shape=(1,)), fn.random.uniform(shape=(1,))  # seeds differ
    named = fn.random.uniform(range=[0, 1], shape=(1,), seed=123, name="kept")
    g = a[0] + b[0] - a[0]
    h = b[0] + a[0] - b[0]  # the same after merging a and b
    return a, b, other, unseeded1, unseeded2, named, g, h


def test_duplicates_share_one_result():
    pipe = _dups()
    a, b, other, u1, u2, named, g, h = pipe.run()
    assert a.data_ptr() == b.data_ptr() and g.data_ptr() == h.data_ptr()
    for x in (other, u1, named):
        assert x.data_ptr() != a.data_ptr()
    assert u1.data_ptr() != u2.data_ptr()
    assert np.array_equal(np.asarray(named.as_tensor()), np.asarray(a.as_tensor()))  # same seed: same values
    plan_names = {n.name for n in pipe.executor.plan.nodes}
    assert "kept" in plan_names
    assert len(pipe.executor.plan.nodes) < len(pipe.graph.reachable())
    assert pipe.serialize().count("op: random.uniform") == 6  # the traced graph keeps every op


def test_constants_in_arguments_compare_by_value():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=7)
    def p():
        x = fn.random.uniform(shape=(3,), seed=1)
        return (fn.cast(x * np.float32([1, 2, 3]), dtype=types.FLOAT16), fn.cast(x * np.float32([1, 2, 3]), dtype=types.FLOAT16),
                fn.cast(x * np.float32([1, 2, 4]), dtype=types.FLOAT16))
    a, b, c = p().run()
    assert a.data_ptr() == b.data_ptr() and a.data_ptr() != c.data_ptr()


def test_sources_and_python_functions_are_not_merged():
    data = [np.float32([1, 2, 3])]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=7)
    def p():
        e1 = fn.external_source(source=data, cycle=True, batch=False)
        e2 = fn.external_source(source=data, cycle=True, batch=False)
        f = abs  # one function object for both
        return e1, e2, fn.python_function(e1, function=f), fn.python_function(e1, function=f)
    pipe = p()
    e1, e2, f1, f2 = pipe.run()
    assert e1.data_ptr() != e2.data_ptr() and f1.data_ptr() != f2.data_ptr()
    assert eliminate_common_subgraphs(pipe.graph) is pipe.graph  # nothing to merge: the graph itself


def test_readers_are_not_merged(tmp_path):
    (tmp_path / "c").mkdir()
    for k in range(2):
        (tmp_path / "c" / f"{k}.jpg").write_bytes(bytes([k]) * 4)

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=7)
    def p():
        r1, _ = fn.readers.file(file_root=str(tmp_path))
        r2, _ = fn.readers.file(file_root=str(tmp_path))
        return r1, r2
    pipe = p()
    r1, r2 = pipe.run()
    assert len(pipe.reader_names()) == 2 and r1.data_ptr() != r2.data_ptr()
