"""Defining pipelines as DALI code does: ops called outside any pipeline then named by
`pipe.set_outputs(...)`, `Pipeline.current()`, constants as outputs, pipeline_def tracing at once,
and nodes made outside used inside."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import ArgumentError, PipelineError
from torch_dali.pipeline import DataNode, Pipeline, do_not_convert


def test_ops_outside_any_pipeline_join_the_one_naming_them():
    a = fn.random.uniform(range=[0, 1], shape=[2])  # no pipeline yet: DALI allows this
    b = a * 10
    assert isinstance(b, DataNode)
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=3)
    pipe.set_outputs(a, b)  # outside `with pipe:`
    x, y = pipe.run()
    np.testing.assert_allclose(np.asarray(y.at(0)), np.asarray(x.at(0)) * 10, rtol=1e-6)
    other = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=3)
    other.set_outputs(a, b)  # the same nodes in a second pipeline: copied, same seed -> same data
    x2, _ = other.run()
    assert np.array_equal(np.asarray(x.at(0)), np.asarray(x2.at(0)))


def test_free_nodes_used_inside_a_pipeline_definition():
    src = fn.external_source(name="input_0")

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p(x):
        return x + 1

    pipe = p(src)
    pipe.feed_input("input_0", [np.int32([1]), np.int32([2])])
    (out,) = pipe.run()
    assert [o.tolist() for o in out.as_tensor()] == [[2], [3]]


def test_pipeline_current():
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    assert Pipeline.current() is None
    with pipe:
        assert Pipeline.current() is pipe
        seen = []

        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def inner():
            seen.append(Pipeline.current())
            return fn.random.uniform()

        made = inner()
        assert seen == [made] and Pipeline.current() is pipe
        pipe.set_outputs(fn.random.uniform())
    assert Pipeline.current() is None


def test_constants_as_outputs():
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    kinds = [bool, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.float32]
    pipe.set_outputs(np.array([[1, 2], [3, 4]]), 10, *[t(42) for t in kinds])
    a, b, *rest = pipe.run()
    assert a.at(0).tolist() == [[1, 2], [3, 4]] and b.at(0) == 10
    for t, o in zip(kinds, rest):
        assert o.at(0) == t(42) and o.at(0).dtype == t


def test_pipeline_def_traces_at_once_and_refuses_do_not_convert():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def broken():
        return fn.random.uniform() + [fn.random.uniform()]
    with pytest.raises(TypeError, match="nested DataNode"):
        broken()  # DALI reports definition errors when the pipeline is made

    @do_not_convert
    def helper():
        return fn.random.uniform()
    with pytest.raises(ArgumentError, match="do_not_convert"):
        pipeline_def(helper)
    assert Pipeline(batch_size=1, device_id=types.CPU_ONLY_DEVICE_ID).device_id is None  # DALI's CPU-only id


def test_declared_output_types_and_dimensions():
    def make(**kw):
        pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, **kw)
        pipe.set_outputs(types.Constant(np.zeros((2, 2), np.uint8), device="cpu"), fn.random.uniform())
        return pipe
    ok = make(output_dtype=[types.UINT8, None], output_ndim=[2, 0])
    assert ok.output_dtype() == [types.UINT8, None] and ok.output_ndim() == [2, 0]
    ok.run()
    with pytest.raises(RuntimeError, match="Data type"):
        make(output_dtype=types.UINT8).run()  # one value for all: the second output is FLOAT
    with pytest.raises(RuntimeError, match="Number of dimensions"):
        make(output_ndim=[2, 1]).run()
    with pytest.raises(RuntimeError, match="Lengths"):
        make(output_ndim=[2]).build()
    with pytest.raises(ValueError, match="non-negative"):
        make(output_ndim=-1)
    with pytest.raises(TypeError, match="must be either"):
        make(output_dtype=int)
    with pytest.raises(ValueError, match="NO_TYPE"):
        make(output_dtype=types.NO_TYPE)


def test_compose_chains_op_instances_and_nests():
    from torch_dali import ops
    inner = ops.Compose([ops.transforms.Translation(offset=[1, 2]), ops.transforms.Scale(scale=[2, 3])])
    outer = ops.Compose([inner, ops.transforms.Scale(scale=[1, -1])])

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return outer(fn.transforms.scale(scale=[5, 5]))

    p = pipe()
    p.build()
    (m,) = p.run()
    # scale 5, then translate (1, 2), then scale (2, 3), then scale (1, -1)
    assert np.allclose(np.asarray(m[0]), [[10, 0, 2], [0, -15, -6]])


def test_methods_of_a_node_made_outside_the_pipeline_it_is_used_in():
    """`src.shape()` (and `.gpu()`/`.cpu()`) on a node made before the pipeline: the node is copied in first."""
    src = fn.external_source(source=lambda: [np.zeros((2, 3), np.uint8)] * 2)

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe(s):
        return s.shape(), s.cpu()

    p = pipe(src)
    p.build()
    shapes, data = p.run()
    assert np.asarray(shapes.at(1)).tolist() == [2, 3] and data.shape() == [(2, 3), (2, 3)]


def test_default_device_id_is_decided_at_build_as_dalis():
    """DALI 2.4: left at its default, `device_id` is None before the build, and after it the
    current device if the graph has GPU ops, else None; a saved pipeline keeps the default (-1)."""
    @pipeline_def(batch_size=1, num_threads=1)
    def cpu_only():
        return types.Constant(42, device="cpu")

    p = cpu_only()
    assert p.device_id is None and p.device_id_setting == -1
    p.build()
    assert p.device_id is None
    assert "device_id: -1" in p.serialize()


def test_a_negative_device_id_other_than_minus_one_is_refused_at_build():
    p = Pipeline(batch_size=1, num_threads=1, device_id=-123)
    with p:
        p.set_outputs(types.Constant(1, device="cpu"))
    with pytest.raises(PipelineError, match="device_id -123 is invalid"):
        p.build()


def test_op_instances_report_device_preserve_and_schema_name():
    # DALI 2.4's values (its test_spectrogram branches on `self.fft.device` in define_graph)
    from torch_dali import ops
    cases = [(ops.Spectrogram(nfft=10), "Spectrogram", "cpu", False),
             (ops.Spectrogram(device="gpu", preserve=True), "Spectrogram", "gpu", True),
             (ops.readers.File(files=["a"]), "readers__File", "cpu", False),
             (ops.decoders.Image(device="mixed"), "decoders__Image", "mixed", False),
             (ops.noise.Gaussian(), "noise__Gaussian", "cpu", False),
             (ops.PythonFunction(function=lambda x: x), "PythonFunction", "cpu", True)]
    for op, schema_name, device, preserve in cases:
        assert (op.schema_name, op.device, op.preserve) == (schema_name, device, preserve)
    assert (ops.ExternalSource().device, ops.ExternalSource(device="gpu").device) == ("cpu", "gpu")


@pytest.mark.parametrize("value, dtype, shape", [
    ([1, 2], types.INT32, (2,)), ([True, False], types.BOOL, (2,)), ([1e40], types.FLOAT, (1,)),
    ([2**40, 1.5], types.FLOAT, (2,)), ([-2**40], types.INT32, (1,)), ([], types.FLOAT, (0,)),
])
def test_a_pipeline_def_returning_a_list_of_numbers_has_one_constant_output(value, dtype, shape):
    """DALI 2.4 (measured): a @pipeline_def function unpacks only a returned tuple; a list of numbers
    is one constant output, as `set_outputs([1, 2])` and unlike define_graph's list."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return value

    p = pipe()
    p.build()
    outs = p.run()
    assert len(outs) == 1 and outs[0].dtype == dtype and outs[0].shape() == [shape]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def two():
        return (1, 2)

    p = two()
    p.build()
    assert len(p.run()) == 2
