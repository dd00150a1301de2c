"""Engine: the three ways to define a pipeline, input sets, outputs, errors, state."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torch_dali as td
from torch_dali import fn, ops, types
from torch_dali.errors import ArgumentError, ArgumentTypeError, GraphError, PipelineError
from torch_dali.pipeline import Pipeline, pipeline_def


class SubclassPipe(Pipeline):
    def __init__(self, **kw):
        super().__init__(batch_size=4, num_threads=2, device_id=None, seed=3, **kw)
        self.src = ops.TestImages()
        self.cast = ops.Cast(dtype=types.FLOAT)

    def define_graph(self):
        images, labels = self.src()
        return self.cast(images), labels


def test_three_ways_give_the_same_batches():
    a = SubclassPipe()
    a.build()

    b = Pipeline(batch_size=4, num_threads=2, device_id=None, seed=3)
    with b:
        images, labels = fn._test_images()
        b.set_outputs(fn.cast(images, dtype=types.FLOAT), labels)
    b.build()

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=3)
    def c_def():
        images, labels = fn._test_images()
        return fn.cast(images, dtype=types.FLOAT), labels

    c = c_def()
    c.build()
    for _ in range(2):
        outs = [p.run() for p in (a, b, c)]
        for k in range(4):
            ref = outs[0][0].at(k)
            assert ref.dtype == np.float32 and ref.ndim == 3
            for o in outs[1:]:
                np.testing.assert_array_equal(o[0].at(k), ref)
                np.testing.assert_array_equal(o[1].at(k), outs[0][1].at(k))


def test_tensor_list_api():
    pipe = SubclassPipe()
    pipe.build()
    images, labels = pipe.run()
    assert len(images) == 4 and images.layout() == "HWC"
    assert isinstance(images.at(0), np.ndarray)
    assert images.shape()[0] == images.at(0).shape
    assert labels.as_tensor().shape == (4, 1) and labels.as_tensor().dtype == torch.int32
    assert images.as_cpu() is images and images.asCPU() is images
    dense = torch.from_dlpack(labels)
    assert torch.equal(dense, labels.as_tensor())
    if not images.is_dense_tensor():
        with pytest.raises(ArgumentError, match="different shapes"):
            images.as_tensor()


def test_input_sets_return_lists():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def p():
        a, _ = fn._test_images(fixed_size=True)
        b, _ = fn._test_images(fixed_size=True)
        cast = ops.Cast(dtype=types.INT32)
        x, y = cast([a, b])
        return x, y

    pipe = p()
    pipe.build()
    x, y = pipe.run()
    assert x.at(0).dtype == np.int32 and y.at(0).dtype == np.int32



def test_input_sets_of_a_multi_output_op_group_by_output():
    """DALI 2.4 returns a multi-output op's input sets grouped by output: [[out0 of set 0, out0 of
    set 1], [out1 of set 0, out1 of set 1]] (its test_pipeline.test_multiple_input_sets unpacks
    `boxes, labels = box_encoder([b0, b1], [l0, l1])`); torch_dali grouped them by set, so `boxes`
    held set 0's boxes and labels. Values from DALI 2.4's CPU backend."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        b0 = types.Constant(np.array([[0.1, 0.2, 0.3, 0.4]], np.float32))
        b1 = types.Constant(np.array([[0.5, 0.6, 0.7, 0.8]], np.float32))
        labels = [types.Constant(np.array([1], np.int32)), types.Constant(np.array([2], np.int32))]
        boxes, labs = fn.box_encoder([b0, b1], labels, anchors=[0.0, 0.0, 1.0, 1.0])
        one_set = ops.BoxEncoder(anchors=[0.0, 0.0, 1.0, 1.0])(b0, labels)  # a plain input repeated
        return (*boxes, *labs, *one_set[1])

    pipe = p()
    pipe.build()
    out = [np.asarray(t.at(0)).ravel().tolist() for t in pipe.run()]
    np.testing.assert_allclose(out[0], [0.2, 0.3, 0.2, 0.2], rtol=1e-6)
    np.testing.assert_allclose(out[1], [0.6, 0.7, 0.2, 0.2], rtol=1e-6)
    assert out[2:] == [[1], [2], [1], [2]]

@pytest.mark.parametrize("kw, want", [
    ({"dtype": 5}, ("dtype", types.INT16)), ({"dtype": np.int64(9)}, ("dtype", types.FLOAT)),
    ({"interp_type": 0}, ("interp_type", types.INTERP_NN)), ({"image_type": 1}, ("image_type", types.BGR)),
])
def test_enum_arguments_take_dalis_numbers(kw: dict, want: tuple) -> None:
    """DALI 2.4 takes an enum argument's number (`dtype=5` is INT16, `interp_type=0` nearest): its CPU
    backend ran each of these."""
    op = {"dtype": fn.cast, "interp_type": fn.resize, "image_type": fn.color_space_conversion}[want[0]]
    extra = {"interp_type": {"resize_x": 4}, "image_type": {"output_type": types.RGB}}.get(want[0], {})
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(op(types.Constant(np.zeros((2, 2, 3), np.uint8)), **kw, **extra))
    (node,) = [n for n in pipe.graph.nodes if n.op == op.__name__]
    assert node.args[want[0]] is want[1]


@pytest.mark.parametrize("bad", [True, 5.0, 1000, -7])
def test_enum_arguments_refuse_bools_fractions_and_unknown_numbers(bad: object) -> None:
    with pytest.raises(ArgumentTypeError, match=r"Cast: `dtype` must be a data type"):
        ops.Cast(dtype=bad)


def test_no_type_is_refused_at_build_in_plain_words() -> None:
    """dtype=-1 is DALI's NO_TYPE: a member, but no tensor has it (DALI fails when it runs)."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.cast(fn.random.uniform(range=[0, 1], shape=[3]), dtype=-1)
    with pytest.raises(GraphError, match=r"^Cast '__Cast_\d+' \(defined at .*\): types.NO_TYPE is not an element type"):
        pipe().build()


def test_a_build_error_without_text_says_its_type(monkeypatch) -> None:
    """A MemoryError() while an op is made (a reader listing a huge file_list under a memory cap)
    was "FileReader '__File_0' (defined at ...): " and nothing more."""
    from torch_dali.ops.readers.file import FileReader

    def no_memory(self) -> int:
        raise MemoryError()
    monkeypatch.setattr(FileReader, "_list", no_memory)
    monkeypatch.setattr(FileReader, "_ensure_listed", lambda self: no_memory(self))
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.readers.file(files=[__file__])[0])
    with pytest.raises(GraphError, match=r"^FileReader '__File_\d+' \(defined at .*\): MemoryError$"):
        pipe.build()


def test_argument_errors_name_op_and_argument():
    with pytest.raises(ArgumentError, match=r"Cast: unknown argument `dtyp`"):
        ops.Cast(dtyp=types.FLOAT)
    with pytest.raises(ArgumentTypeError, match=r"Cast: `dtype` must be a data type"):
        ops.Cast(dtype=3.5)
    free = fn._test_images()  # outside any pipeline: nodes that join the pipeline naming them (as DALI)
    assert all(type(x).__name__ == "DataNode" for x in free)
    with pytest.raises(ArgumentTypeError, match="input 0 must be a DataNode"):  # constants become nodes; None not
        fn.cast(None, dtype=types.FLOAT)
    with pytest.raises(ArgumentError, match="batch_size"):
        Pipeline(batch_size=0)


def test_error_in_op_names_op_sample_and_definition_line():
    def boom(x):
        if int(x.sum()) % 7 == 0 or True:
            raise ValueError("bad pixel")
        return x

    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
    def p():
        images, _ = fn._test_images()
        return fn.torch_python_function(images, function=boom)

    pipe = p()
    pipe.build()
    with pytest.raises(PipelineError) as e:
        pipe.run()
    msg = str(e.value)
    assert "TorchPythonFunction" in msg and "boom" in msg and "sample 0" in msg
    assert "test-image-0-0" in msg and "bad pixel" in msg and "test_pipeline.py:" in msg
    # the failure is sticky and does not hang; shutting down works
    with pytest.raises(PipelineError):
        pipe.run()
    pipe.shutdown()


def test_error_in_chain_reports_sample_source():
    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
    def p():
        images, _ = fn._test_images()
        return fn.cast(fn.cast(images, dtype=types.FLOAT), dtype=types.UINT8)

    pipe = p()
    pipe.build()
    assert len(pipe.run()[0]) == 4


def test_exec_modes_and_prefetch_give_identical_outputs():
    def run(**kw):
        @pipeline_def(batch_size=5, device_id=None, seed=9, **kw)
        def p():
            images, labels = fn._test_images()
            return fn.cast(images, dtype=types.FLOAT), labels

        pipe = p()
        pipe.build()
        out = [[t.copy() for t in (pipe.run()[0].at(i) for i in range(5))] for _ in range(3)]
        pipe.shutdown()
        return out

    ref = run(num_threads=1, prefetch_queue_depth=1)
    for kw in (dict(num_threads=4, prefetch_queue_depth=3), dict(num_threads=2, exec_async=False,
                                                                    exec_pipelined=False)):
        got = run(**kw)
        for a, b in zip(ref, got):
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)


def test_state_dict_resume_skips_nothing_and_repeats_nothing():
    pipe = SubclassPipe(prefetch_queue_depth=3)
    pipe.build()
    pipe.run()
    state = pipe.state_dict()
    expected = [pipe.run()[1].as_tensor().clone() for _ in range(2)]
    fresh = SubclassPipe()
    fresh.build()
    fresh.load_state_dict(state)
    for e in expected:
        assert torch.equal(fresh.run()[1].as_tensor(), e)


def test_gpu_ops_fall_back_to_cpu_with_one_warning():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the fallback is for machines without it")

    @pipeline_def(batch_size=2, num_threads=1, device_id=0, seed=1)
    def p():
        images, _ = fn._test_images()
        return fn.cast(images.gpu(), dtype=types.FLOAT)

    import torch_dali.executor.plan as plan
    plan._warned = False
    pipe = p()
    with pytest.warns(RuntimeWarning, match="run on the CPU"):
        pipe.build()
    second = p()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second.build()  # one warning per process, not one per pipeline
    (out,) = pipe.run()
    assert out.device.type == "cpu"

    strict = p(strict_device=True)
    with pytest.raises(GraphError, match="GPU ops"):
        strict.build()


def test_datanode_has_no_truth_value():
    pipe = Pipeline(batch_size=1, device_id=None)
    with pipe:
        images, _ = fn._test_images()
        with pytest.raises(GraphError, match="truth value"):
            bool(images)


def test_version_and_top_level_names():
    assert td.__version__
    assert issubclass(td.TensorListCPU, td.TensorList) and issubclass(td.TensorListGPU, td.TensorList)
    assert types.FLOAT is types.DALIDataType.FLOAT and types.to_torch_dtype(types.FLOAT) == torch.float32


def _noisy(x):
    return x.float() + torch.rand(x.shape)  # draws from torch's global RNG


def test_python_op_randomness_is_per_sample_and_isolated():
    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=5, prefetch_queue_depth=3)
    def p():
        images, _ = fn._test_images(fixed_size=True)
        return fn.torch_python_function(images, function=_noisy)

    a, b = p(), p()
    a.build()
    b.build()
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    for _ in range(3):  # two pipelines prefetching at once: each still reproducible
        xa, xb = a.run()[0].as_tensor(), b.run()[0].as_tensor()
        assert torch.equal(xa, xb)
    a.shutdown()  # (a draw made by this thread *while* a Python op runs could still interleave)
    b.shutdown()
    assert torch.equal(torch.rand(3), expected_next)  # the caller's RNG stream is untouched


def _hangs(x):
    import time
    time.sleep(600)  # far past the bound below: the report must not wait for the call
    return x


def test_python_function_timeout_reports_and_pipeline_shuts_down():
    import time

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def p():
        images, _ = fn._test_images(fixed_size=True)
        return fn.torch_python_function(images, function=_hangs, timeout=0.3)

    pipe = p()
    t0 = time.perf_counter()
    with pytest.raises(PipelineError, match=r"_hangs failed on sample 0.*did not return within timeout=0.3 s"):
        pipe.run()
    assert time.perf_counter() - t0 < 60  # generous for a loaded CI machine; the call itself takes 600 s
    pipe.shutdown()


def test_python_function_bad_returns_are_reported():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def p(f, **kw):
        images, _ = fn._test_images(fixed_size=True)
        return fn.torch_python_function(images, function=f, **kw)

    with pytest.raises(PipelineError, match="returned str, expected a torch.Tensor"):
        p(_return_text).run()
    with pytest.raises(PipelineError, match="expected a tuple of num_outputs=2"):
        p(_return_one, num_outputs=2).run()
    with pytest.raises(PipelineError, match="inconsistent across the batch"):
        p(_return_ragged).run()


def _return_text(x):
    return "text"


def _return_one(x):
    return x


def _return_ragged(x):
    return x if int(x.sum()) % 2 else x.float()


def test_a_stale_extension_build_lock_is_removed(tmp_path):
    """A killed JIT build leaves `lock` behind; a later build would wait on it forever."""
    import os
    import time
    import warnings

    from torch_dali._native import extension as _extension
    lock = tmp_path / "lock"
    lock.write_text("")
    _extension.clear_stale_lock(str(tmp_path))
    assert lock.exists()  # fresh: a build may be running
    old = time.time() - 2 * _extension.STALE_LOCK_S
    os.utime(lock, (old, old))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _extension.clear_stale_lock(str(tmp_path))
    assert not lock.exists() and any("build lock" in str(w.message) for w in seen)


def test_definition_without_outputs_is_accepted_until_build():
    # DALI 2.4: a @pipeline_def function that returns None (or ()) makes a pipeline with no
    # outputs; only building it fails
    calls = []

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def nothing(ret):
        calls.append(1)
        fn.random.uniform(range=[0, 1])
        return ret

    for ret in (None, ()):
        pipe = nothing(ret)
        assert calls
        with pytest.raises(GraphError):
            pipe.build()


def test_an_operator_of_another_pipeline_is_refused_at_build():
    """DALI 2.4 refuses (RuntimeError at build) a pipeline that uses a node made inside another
    pipeline; here it would silently be a copy with its own state and seed."""
    import numpy as np

    from torch_dali import Pipeline, fn
    from torch_dali.graph.build_checks import ForeignNodeError
    p1 = Pipeline(batch_size=1, device_id=None, num_threads=1, seed=3)
    p2 = Pipeline(batch_size=1, device_id=None, num_threads=1, seed=3)
    with p1:
        x = fn.external_source(source=[np.int32([1])], cycle=True, batch=False, name="src") + 1
        p1.set_outputs(x)
    with p2:
        p2.set_outputs(x + fn.external_source(source=[np.int32([5])], cycle=True, batch=False))
    with pytest.raises(RuntimeError, match="made inside another pipeline") as err:
        p2.build()
    assert isinstance(err.value, ForeignNodeError) and "2 such" in str(err.value)
    p1.build()  # the pipeline the nodes belong to is unaffected
    assert p1.run()[0].as_array().tolist() == [[2]]
    # made outside any pipeline: joins each pipeline that uses it
    shared = fn.external_source(source=[np.int32([7])], cycle=True, batch=False)
    for _ in range(2):
        with Pipeline(batch_size=1, device_id=None, num_threads=1, seed=3) as p:
            p.set_outputs(shared * 2)
        p.build()
        assert p.run()[0].as_array().tolist() == [[14]]


def test_run_feeds_inputs_given_by_name():
    """DALI 2.4's `run(name=batch)`: the batch goes to the external source of that name first
    (feed_input), with prefetch_queue_depth=1 or exec_pipelined=False only; an unknown name is a
    KeyError."""
    import numpy as np

    from torch_dali import fn, pipeline_def

    def make(**kw):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None, **kw)
        def p():
            return fn.external_source(name="x") * 2
        pipe = p()
        pipe.build()
        return pipe

    pipe = make(prefetch_queue_depth=1)
    for k in range(3):
        (out,) = pipe.run(x=np.full((2, 3), k, np.int16))
        assert [np.asarray(out.at(i)).tolist() for i in range(2)] == [[2 * k] * 3] * 2
    (out,) = make(exec_pipelined=False).run(x=[np.arange(2), np.arange(3)])
    assert [np.asarray(out.at(i)).tolist() for i in range(2)] == [[0, 2], [0, 2, 4]]
    with pytest.raises(KeyError):
        make(prefetch_queue_depth=1).run(y=np.zeros((2, 3)))
    with pytest.raises(RuntimeError, match="prefetch_queue_depth=1"):
        make().run(x=np.zeros((2, 3)))


def test_pipeline_def_keyword_the_function_names_goes_to_the_function():
    """DALI 2.4: a call keyword that the definition function names goes to the function even when
    a Pipeline argument has that name (with a warning); the Pipeline keeps the decorator's value.
    torch_dali gave it to the Pipeline, and the call failed with the function's parameter missing."""
    @pipeline_def(batch_size=2, num_threads=3, device_id=None)
    def p(num_threads, seed=5):
        return types.Constant(np.array([num_threads, seed], np.int32))

    with pytest.warns(UserWarning, match="num_threads, seed"):
        pipe = p(num_threads=42, seed=7, prefetch_queue_depth=1)
    assert (pipe.num_threads, pipe.prefetch_queue_depth) == (3, 1)
    pipe.build()
    assert np.asarray(pipe.run()[0].at(0)).tolist() == [42, 7]


def test_enable_api_check_is_accepted_and_mixing_calls_is_allowed():
    """DALI's enable_api_check() exists on every pipeline (torch_dali had none: AttributeError);
    mixing run() with schedule_run()/outputs() is allowed here (conformance/on_purpose.md)."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        return fn.external_source(source=lambda info: np.array([info.iteration], np.int32), batch=False)

    pipe = p()
    pipe.build()
    assert int(pipe.run()[0].at(0)[0]) == 0
    pipe.enable_api_check(False)
    pipe.schedule_run()
    assert int(pipe.outputs()[0].at(0)[0]) == 1
    pipe.enable_api_check(True)
    assert int(pipe.run()[0].at(0)[0]) == 2


def test_private_shutdown_alias():
    # DALI's tests call the private Pipeline._shutdown() (test_dali_proxy.py); it stops the pipeline
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def p():
        images, _ = fn._test_images()
        return images

    pipe = p()
    pipe.build()
    pipe.run()
    assert pipe._shutdown() is None and pipe._executor is None
