"""Tensors of enum values and the enums' numbers, as DALI 2.4's CPU backend gives them (measured):
`types.Constant(types.INTERP_CUBIC)` is a tensor of element type INTERP_TYPE holding 2; `fn.cast`
converts such tensors to and from integers, never floats; arithmetic on them fails when the
pipeline runs; NumPy views of them are a TypeError."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types

INTERPS = [types.INTERP_CUBIC, types.INTERP_GAUSSIAN, types.INTERP_LANCZOS3]


def _run(make):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return make()

    p = pipe()
    p.build()
    return p.run()


def test_enum_numbers_are_dalis():
    assert [types.UINT8.value, types.INT16.value, types.FLOAT.value, types.BOOL.value] == [0, 5, 9, 11]
    assert [types.DATA_TYPE.value, types.INTERP_TYPE.value, types.IMAGE_TYPE.value] == [21, 22, 20]
    assert [m.value for m in INTERPS] == [2, 5, 3] and types.RGB.value == 0 and types.GRAY.value == 2
    # found by DALI's number and by torch_dali's name alike
    assert types.DALIDataType(9) is types.FLOAT and types.DALIDataType("float32") is types.FLOAT
    assert types.DALIInterpType("linear") is types.INTERP_LINEAR and types.INTERP_LINEAR.key == "linear"


@pytest.mark.parametrize("make", [
    lambda: (types.Constant(types.INT16), types.Constant(INTERPS)),
    lambda: (fn.copy(types.INT16), fn.copy(INTERPS)),
    lambda: (types.Constant(5, dtype=types.DATA_TYPE), types.Constant([2, 5, 3], dtype=types.INTERP_TYPE)),
], ids=["constant", "copy", "numbers_with_dtype"])
def test_enum_constants(make):
    def pipe():
        scalar, tensor = make()
        return (scalar, tensor, fn.cast(scalar, dtype=types.INT32), fn.cast(tensor, dtype=types.INT32),
                fn.reshape(tensor, shape=[3, 1]))
    scalar, tensor, scalar_int, tensor_int, reshaped = _run(pipe)
    assert scalar.dtype == types.DATA_TYPE and scalar.shape() == [(), ()]
    assert tensor.dtype == types.INTERP_TYPE and tensor.shape() == [(3,), (3,)]
    assert reshaped.dtype == types.INTERP_TYPE and reshaped.shape() == [(3, 1), (3, 1)]
    assert scalar_int.dtype == types.INT32 and tensor_int.dtype == types.INT32
    for i in range(2):
        assert np.array_equal(scalar_int.at(i), 5) and np.array_equal(tensor_int.at(i), [2, 5, 3])
    for read in (lambda: scalar.as_array(), lambda: tensor.at(0), lambda: tensor.as_cpu().at(1)):
        with pytest.raises(TypeError, match="enum values"):
            read()


def test_cast_between_enum_types_and_integers():
    to_enum, to_other_enum, to_bool = _run(lambda: (
        fn.cast(types.Constant(np.uint8([1, 4])), dtype=types.INTERP_TYPE),
        fn.cast(types.Constant(types.RGB), dtype=types.DATA_TYPE),
        fn.cast(types.Constant(types.INTERP_CUBIC), dtype=types.BOOL)))
    assert to_enum.dtype == types.INTERP_TYPE and to_other_enum.dtype == types.DATA_TYPE
    assert to_bool.dtype == types.BOOL and bool(to_bool.at(0)) is True


@pytest.mark.parametrize("make", [
    lambda: fn.cast(types.Constant(types.INTERP_CUBIC), dtype=types.FLOAT),
    lambda: fn.cast(types.Constant(np.float32([1.0])), dtype=types.INTERP_TYPE),
    lambda: fn.cast(1.0, dtype=types.DATA_TYPE),
    lambda: types.Constant(types.INTERP_CUBIC) + 1,
], ids=["enum_to_float", "float_to_enum", "python_float_to_enum", "arithmetic"])
def test_refused_when_the_pipeline_runs(make):
    with pytest.raises(RuntimeError, match="enum"):
        _run(make)


def test_one_enum_per_tensor():
    with pytest.raises(TypeError, match="one enum"):
        types.Constant([types.INTERP_NN, types.RGB])


def test_resize_filters_per_sample():
    """DALI's resize family takes `interp_type`, `min_filter` and `mag_filter` as per-sample inputs
    (tensors of INTERP_TYPE); each sample is then resampled as with that filter given as a constant
    (outputs equal to DALI 2.4's CPU resize, measured)."""
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 255, (9, 13, 3), dtype=np.uint8) for _ in range(2)]
    chosen = [types.INTERP_NN, types.INTERP_CUBIC]

    def pipe():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        per_sample = fn.cast(fn.external_source(source=lambda: [np.int32(m.value) for m in chosen]),
                             dtype=types.INTERP_TYPE)
        return (fn.resize(x, size=[5, 7], interp_type=per_sample),
                fn.resize(x, size=[17, 6], mag_filter=per_sample, min_filter=types.INTERP_LINEAR),
                *[fn.resize(x, size=[5, 7], interp_type=m) for m in chosen],
                *[fn.resize(x, size=[17, 6], mag_filter=m, min_filter=types.INTERP_LINEAR) for m in chosen])
    shrunk, grown, nn, cubic, nn_up, cubic_up = _run(pipe)
    assert not np.array_equal(nn.at(1), cubic.at(1))
    for i, (down, up) in enumerate([(nn, nn_up), (cubic, cubic_up)]):
        assert np.array_equal(shrunk.at(i), down.at(i)) and np.array_equal(grown.at(i), up.at(i))


def test_random_choice_among_enum_values():
    """Picks among enum values are enum values (DALI 2.4: INTERP_TYPE), usable as a per-sample
    filter; one enum value is not a number of choices (RuntimeError when the pipeline runs)."""
    interps = [types.INTERP_LINEAR, types.INTERP_CUBIC]

    def pipe():
        picks = fn.random.choice(interps, shape=[20], seed=5)
        img = fn.random.uniform(range=[0, 255], dtype=types.UINT8, shape=(10, 10, 3), seed=6)
        return picks, fn.cast(picks, dtype=types.INT32), fn.resize(img, size=(5, 5), interp_type=picks[0])
    picks, as_int, resized = _run(pipe)
    assert picks.dtype == types.INTERP_TYPE and resized.shape() == [(5, 5, 3)] * 2
    assert set(np.concatenate([as_int.at(i) for i in range(2)]).tolist()) == {1, 2}
    with pytest.raises(RuntimeError, match="must be an integer.*got DALIInterpType"):
        _run(lambda: fn.random.choice(types.INTERP_CUBIC))


@pytest.mark.parametrize("make", [
    lambda: fn.slice(types.Constant([types.INTERP_NN, types.INTERP_CUBIC]), [0], [1], axes=[0]),
    lambda: fn.cat(types.Constant([types.INTERP_NN]), types.Constant([types.INTERP_CUBIC])),
    lambda: fn.transpose(fn.reshape(types.Constant([2, 3], dtype=types.INTERP_TYPE), shape=[1, 2]), perm=[1, 0]),
    lambda: fn.python_function(types.Constant(types.RGB), function=lambda x: x),
    lambda: types.Constant(types.INTERP_CUBIC) == 2,
], ids=["slice", "cat", "transpose", "python_function", "compare"])
def test_ops_that_take_no_enum_values(make):
    """DALI 2.4 runs only a few ops on enum values (copy, reshape, squeeze, expand_dims, subscripts,
    element_extract, permute_batch, reinterpret, cast, cast_like...); the others fail when the
    pipeline runs (measured), here too."""
    with pytest.raises(RuntimeError, match="enum values"):
        _run(make)


def test_element_moving_ops_keep_enum_values():
    src = lambda: fn.reshape(types.Constant([types.INTERP_NN, types.INTERP_CUBIC, types.INTERP_LINEAR]),  # noqa: E731
                             shape=[1, 3])
    outs = _run(lambda: (src()[0, 1:], fn.squeeze(src(), axes=[0]), fn.expand_dims(src(), axes=[0]),
                         fn.reinterpret(src(), shape=[3]), fn.cast_like(np.int32([1]), src()),
                         fn.permute_batch(src(), indices=[1, 0])))
    assert [o.dtype for o in outs] == [types.INTERP_TYPE] * 6
    assert [o.shape()[0] for o in outs] == [(2,), (3,), (1, 1, 3), (3,), (1,), (1, 3)]
