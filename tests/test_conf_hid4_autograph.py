"""What DALI's conditionals tests ask of the rewrite beyond outputs: which functions run rewritten
code (`is_autograph_artifact`, DALI's `nvidia.dali._autograph` name), and that
`torch_dali.pipeline.experimental` is a submodule one can import by its dotted name."""
from __future__ import annotations

import importlib
import importlib.util

import numpy as np

from torch_dali import fn, pipeline_def
from torch_dali.conditionals import is_autograph_artifact
from torch_dali.pipeline import do_not_convert


def test_functions_defined_in_or_returned_by_converted_code_are_artifacts():
    seen = {}

    def factory(n):
        def source(si):
            seen["factory"] = is_autograph_artifact(source)
            return np.full((n,), 7)
        return source

    @do_not_convert
    def plain_factory(n):
        def source(si):
            seen["plain"] = is_autograph_artifact(source)
            return np.full((n,), 5)
        return source

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        def local(si):
            seen["local"] = is_autograph_artifact(local)
            return np.full((1,), 1)
        made, plain = factory(2), plain_factory(3)
        seen["made_at_trace"], seen["plain_at_trace"] = is_autograph_artifact(made), is_autograph_artifact(plain)
        return (fn.external_source(source=local, batch=False), fn.external_source(source=made, batch=False),
                fn.external_source(source=plain, batch=False))

    p = pipe()
    outs = p.run()
    assert [np.asarray(o[0]).tolist() for o in outs] == [[1], [7, 7], [5, 5, 5]]
    assert seen == {"local": True, "factory": True, "plain": False, "made_at_trace": True, "plain_at_trace": False}


def test_functions_outside_conditional_pipelines_are_not_artifacts():
    def f(x):
        return x
    assert not is_autograph_artifact(f)
    assert not is_autograph_artifact(len)
    assert not is_autograph_artifact(lambda: 0)


def test_do_not_convert_marks_an_artifact_but_not_what_it_returns():
    @do_not_convert
    def factory():
        def inner():
            return 1
        return inner
    assert is_autograph_artifact(factory)
    assert not is_autograph_artifact(factory())


def test_pipeline_experimental_is_an_importable_submodule():
    spec = importlib.util.find_spec("torch_dali.pipeline.experimental")
    assert spec is not None
    mod = importlib.import_module("torch_dali.pipeline.experimental")
    assert mod.pipeline_def is pipeline_def
