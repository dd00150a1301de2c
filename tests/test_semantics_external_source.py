"""External source semantics DALI 2.4 has (found by DALI's test_external_source_dali.py): the info
classes are types', layouts travel with fed pipeline outputs, each output of a multi-output source
can be fed alone, and outputs nothing reads are never asked for."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import torch_dali.fn as fn
import torch_dali.ops as ops
from torch_dali import types
from torch_dali.errors import DataError, PipelineError
from torch_dali.pipeline import Pipeline


def _run(pipe: Pipeline):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pipe.run()


def test_callables_get_types_info_classes():
    seen = []

    def batch_cb(info):
        seen.append(isinstance(info, types.BatchInfo))
        return [np.zeros(1)] * 2

    def sample_cb(info):
        seen.append(isinstance(info, types.SampleInfo))
        return np.zeros(1)

    pipe = Pipeline(2, 1, None)
    with pipe:
        pipe.set_outputs(fn.external_source(batch_cb, batch_info=True),
                         fn.external_source(sample_cb, batch=False))
    _run(pipe)
    assert seen and all(seen)


def _xy_pipe() -> Pipeline:
    src = Pipeline(2, 1, None)
    batch = [np.ones((2, 3), np.float32), np.zeros((3, 2), np.float32)]
    src.set_outputs(fn.external_source(source=[batch], cycle=True, layout="XY"))
    return src


@pytest.mark.parametrize("as_samples", [False, True])
@pytest.mark.parametrize("layout", [None, "AB"])
def test_a_fed_pipeline_output_keeps_its_layout(as_samples, layout):
    src = _xy_pipe()

    def cb():
        tl = _run(src)[0]
        return [tl[i] for i in range(len(tl))] if as_samples else tl

    dst = Pipeline(2, 1, None)
    dst.set_outputs(fn.external_source(source=cb, layout=layout))
    (out,) = _run(dst)
    assert out.layout() == (layout or "XY")  # DALI 2.4: the `layout` argument wins, else the batch's
    assert out.shape() == [(2, 3), (3, 2)]


def test_feed_input_of_a_pipeline_output_keeps_its_layout():
    src = _xy_pipe()
    dst = Pipeline(2, 1, None)
    dst.set_outputs(fn.external_source(name="ext"))
    dst.feed_input("ext", _run(src)[0])
    assert _run(dst)[0].layout() == "XY"


def test_feed_input_layout_must_match_the_layout_argument():
    pipe = Pipeline(1, 1, None, prefetch_queue_depth=1)
    pipe.set_outputs(fn.external_source(name="input", layout="H"))
    pipe.feed_input("input", [np.zeros(1)], layout="W")
    with pytest.raises(PipelineError, match="'W'.*'H'"):
        pipe.run()


@pytest.mark.parametrize("mask", [[False, True], [True, False, True, True], [False, False, True]])
def test_each_output_of_a_multi_output_source_is_fed_alone(mask):
    class OldStyle(Pipeline):
        def __init__(self) -> None:
            super().__init__(batch_size=4, num_threads=1, device_id=None)
            self.inp = ops.ExternalSource(num_outputs=len(mask))

        def define_graph(self):
            self.used = [o for o, u in zip(self.inp(), mask) if u]
            return tuple(o * 2 for o in self.used)

        def iter_setup(self):
            for i, o in enumerate(self.used):
                self.feed_input(o, np.full((4, 2), i, np.int32))

    pipe = OldStyle()
    for _ in range(2):
        outs = pipe.run()
        assert [o.as_tensor()[:, 0].tolist() for o in outs] == [[2 * i] * 4 for i in range(sum(mask))]


def test_feeding_one_output_by_name_and_index():
    pipe = Pipeline(2, 1, None)
    with pipe:
        a, b = fn.external_source(num_outputs=2, name="es")
        pipe.set_outputs(a, b)
    pipe.feed_input("es", ([np.zeros(1)] * 2, [np.ones(1)] * 2))  # a name: one batch per output
    with pytest.raises(DataError, match="tuple of 2"):
        pipe.feed_input("es", [np.full(1, 5)] * 3)
    pipe.feed_input("es:1", [np.full(1, 7.0)] * 2)  # "name:k" and the DataNode: that output alone
    pipe.feed_input(a, [np.full(1, 6.0)] * 2)
    outs = [[o.as_tensor().flatten().tolist() for o in pipe.run()] for _ in range(2)]
    assert outs == [[[0, 0], [1, 1]], [[6, 6], [7, 7]]]


def test_a_used_output_left_unfed_is_named():
    pipe = Pipeline(2, 1, None)
    with pipe:
        a, b = fn.external_source(num_outputs=2, name="es")
        pipe.set_outputs(a, b)
    pipe.feed_input(a, [np.zeros(1)] * 2)
    with pytest.raises(PipelineError, match="for output 1"):
        pipe.run()


def test_unused_outputs_of_a_source_warn_at_build():
    pipe = Pipeline(2, 1, None)
    with pipe:
        outs = fn.external_source(lambda: tuple([np.full(1, k)] * 2 for k in range(3)), num_outputs=3)
        pipe.set_outputs(outs[1])
    with pytest.warns(UserWarning, match="gives 3 outputs and its outputs at the indices 0, 2 are not used"):
        pipe.build()
    assert _run(pipe)[0].as_tensor().flatten().tolist() == [1, 1]


@pytest.mark.parametrize("batch,source", [
    (True, lambda: [np.zeros((2,), np.float32), np.zeros((2, 2), np.float32)]),
    (True, lambda: [np.array([1.5, 2.5], np.float32), np.array([7, 8], np.int32)]),
    (False, lambda i: np.array([1.5], np.float32) if i.idx_in_batch == 0 else np.array([7], np.int64)),
    (True, lambda: np.array([[1 + 2j], [3 + 4j]])),
])
def test_a_batch_of_mixed_or_complex_samples_is_refused(batch, source):
    """DALI 2.4 refuses a batch whose samples differ in element type or number of dimensions
    (RuntimeError) and has no complex type; the batch's dtype would otherwise not be its samples'."""
    from torch_dali import fn, pipeline_def

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        return fn.external_source(source=source, batch=batch)

    pipe = p()
    pipe.build()
    with pytest.raises(RuntimeError, match="share one element type|complex"):
        pipe.run()


def test_feed_input_refusals_have_dalis_exception_types():
    # DALI 2.4 (measured, CPU): feeding a source that has a `source` is a RuntimeError (DALI's
    # external_source/test_multiple_sources.py); a name that is not an external source a KeyError
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        a = fn.external_source(source=lambda: [np.zeros(2)] * 2, name="src")
        b = fn.cast(fn.external_source(name="fed"), dtype=types.FLOAT, name="castop")
        pipe.set_outputs(a, b)
    pipe.build()
    with pytest.raises(RuntimeError, match="src"):
        pipe.feed_input("src", [np.zeros(2)] * 2)
    for name in ("castop", "nope"):
        with pytest.raises(KeyError, match=name):
            pipe.feed_input(name, [np.zeros(2)] * 2)


def test_dlpack_capsules_are_samples_and_batches():
    # DALI 2.4 (measured, CPU; DALI's test_external_source_pytorch_dlpack.py feeds them): a list
    # of DLPack capsules is a batch of samples, one capsule a batch with a leading dimension, from
    # feed_input and from a source (batch or per sample)
    import torch
    from torch.utils.dlpack import to_dlpack

    def build(**kw):
        pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
        with pipe:
            pipe.set_outputs(fn.external_source(**kw))
        pipe.build()
        return pipe

    def values(pipe):
        return [t.tolist() for t in _run(pipe)[0]]

    pipe = build(name="s")
    pipe.feed_input("s", [to_dlpack(torch.arange(3.0)), to_dlpack(torch.arange(3.0) + 1)])
    pipe.feed_input("s", to_dlpack(torch.arange(6.0).reshape(2, 3)))
    assert values(pipe) == [[0, 1, 2], [1, 2, 3]]
    assert values(pipe) == [[0, 1, 2], [3, 4, 5]]
    assert values(build(source=lambda: [to_dlpack(torch.tensor([1.5])), to_dlpack(torch.tensor([2.5]))])) == \
        [[1.5], [2.5]]
    assert values(build(source=lambda: to_dlpack(torch.ones(2, 2)))) == [[1, 1], [1, 1]]
    assert values(build(source=lambda si: to_dlpack(torch.full((2,), float(si.idx_in_epoch))), batch=False)) == \
        [[0, 0], [1, 1]]
