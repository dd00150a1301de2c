"""Arguments as DALI takes them: the external source's `source` positionally, NumPy scalars
anywhere a number is taken, bools where an integer is taken, None meaning "not given", constants
as op inputs, `types.Constant` as arguments, and `DataNode.shape()`."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, ops, pipeline_def, types
from torch_dali.pipeline import Pipeline


def _first(pipe):
    return [np.asarray(o.at(0)).tolist() for o in pipe.run()]


def test_external_source_takes_the_source_positionally():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        a = fn.external_source([[np.int32([1]), np.int32([2])]], cycle=True)
        b = ops.ExternalSource(lambda: [np.int32([3]), np.int32([4])])()
        c = ops.ExternalSource()(source=lambda: [np.int32([5]), np.int32([6])])
        return a, b, c
    assert _first(p()) == [[1], [3], [5]]


def test_numpy_scalars_and_bools_where_dali_takes_numbers():
    pipe = Pipeline(batch_size=np.int64(2), num_threads=np.int32(1), device_id=None, seed=np.int64(7),
                    prefetch_queue_depth=np.int64(1))
    assert pipe.batch_size == 2 and type(pipe.batch_size) is int and pipe.seed == 7
    with pipe:
        img = fn.external_source(lambda: [np.arange(6, dtype=np.uint8).reshape(1, 2, 3)] * 2, layout="HWC")
        flipped = fn.flip(img, horizontal=True, vertical=np.int64(0), seed=np.int32(3))
        cmn = fn.crop_mirror_normalize(img, mirror=False, mean=[np.float32(0)], std=np.float64(1.0))
        u = fn.random.uniform(range=[np.float32(2), np.float64(3)], shape=None)
        pipe.set_outputs(flipped, cmn, u)
    flipped, cmn, u = _first(pipe)
    assert flipped == [[[3, 4, 5], [0, 1, 2]]] and np.array(cmn).shape == (3, 1, 2) and 2 <= u < 3
    with pytest.raises(ValueError, match="batch_size"):
        Pipeline(batch_size=np.float64(2.5))


def test_none_means_not_given():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        img = types.Constant(np.zeros((4, 6, 3), np.uint8), device="cpu")
        return fn.crop(img, crop=(2, 2), fill_values=None, dtype=None), fn.random.uniform(range=None, seed=None)
    crop, u = p().run()
    assert crop.shape() == [(2, 2, 3)] and -1 <= float(np.asarray(u.at(0))) < 1  # the default range


def test_constants_as_inputs_and_arguments():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        return (fn.full(5, shape=[2]), fn.cast(np.array([1.5, 2.0]), dtype=types.INT32),
                fn.random.uniform(range=[types.Constant(1.0), types.Constant(1.5)]))
    full, cast, u = _first(p())
    assert full == [5, 5] and cast == [2, 2] and 1.0 <= u < 1.5


def test_datanode_shape():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        x = fn.random.uniform(shape=[3, 4])
        return x.shape(), x.shape(dtype=types.INT32)
    a, b = p().run()
    assert a.at(0).tolist() == [3, 4] and a.dtype == types.INT64 and b.dtype == types.INT32


def test_missing_required_argument_is_a_runtime_error_too():
    # DALI raises RuntimeError for a required argument left out (DALI code asserts that type);
    # torch_dali's ArgumentError (a ValueError) is kept for its own callers
    from torch_dali.errors import ArgumentError

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        return fn.clahe(types.Constant(np.zeros((4, 4, 1), np.uint8)), tiles_x=2, tiles_y=2)

    for kind in (RuntimeError, ArgumentError):
        with pytest.raises(kind, match="`clip_limit` is required"):
            p().build()


def test_torch_scalars_where_dali_takes_numbers():
    # DALI 2.4 takes a 0-d torch tensor, or a one-element 1-D one, as the number it holds, for
    # per-sample and plain arguments alike (refused here before). Shapes and sums as DALI 2.4 gave
    # them for this image; each equals the call with the Python number.
    import torch
    img = (np.arange(6 * 8 * 3, dtype=np.uint8) * 5).reshape(6, 8, 3)
    t = torch.tensor
    cases = [(lambda x: fn.rotate(x, angle=t(30.0)), lambda x: fn.rotate(x, angle=30.0), (10, 10, 3), 36437),
             (lambda x: fn.rotate(x, angle=t([30.0])), lambda x: fn.rotate(x, angle=30.0), (10, 10, 3), 36437),
             (lambda x: fn.resize(x, resize_x=t(4)), lambda x: fn.resize(x, resize_x=4), (3, 4, 3), 4367),
             (lambda x: fn.flip(x, horizontal=t([1], dtype=torch.int32)), lambda x: fn.flip(x, horizontal=1), (6, 8, 3), 17432),
             (lambda x: fn.rotate(x, angle=10, keep_size=t(True)), lambda x: fn.rotate(x, angle=10, keep_size=True), (6, 8, 3), 17662),
             (lambda x: fn.hsv(x, hue=t(20.0)), lambda x: fn.hsv(x, hue=20.0), (6, 8, 3), 17523),
             (lambda x: fn.brightness_contrast(x, brightness=t(1.5), contrast=t(0.5)),
              lambda x: fn.brightness_contrast(x, brightness=1.5, contrast=0.5), (6, 8, 3), 26610),
             (lambda x: fn.crop(x, crop=[2, 3], crop_pos_x=t(0.7)), lambda x: fn.crop(x, crop=[2, 3], crop_pos_x=0.7), (2, 3, 3), 1962)]
    for with_torch, with_number, shape, total in cases:
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def p():
            x = fn.external_source(lambda: [img], layout="HWC")
            return with_torch(x), with_number(x)
        pipe = p()
        pipe.build()
        a, b = (np.asarray(o.at(0)) for o in pipe.run())
        assert a.shape == shape and int(a.astype(np.int64).sum()) == total and np.array_equal(a, b)


def test_seed_as_numpy_integer_or_one_element_tensor():
    """DALI 2.4 takes `seed=` as a NumPy integer or a one-element array / tensor holding a whole
    number (np.int64(3), np.array([3]), torch.tensor(3), torch.tensor([3.0]): measured, the same
    draws as seed=3 there); a two-element one is refused."""
    import numpy as np
    import torch
    from torch_dali import fn, pipeline_def

    def draw(seed):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def p():
            return fn.random.uniform(range=[0, 1], shape=[3], seed=seed)
        pipe = p()
        pipe.build()
        return [t.clone() for t in pipe.run()[0]]

    want = draw(3)
    for seed in (np.int64(3), np.array([3]), np.array(3), torch.tensor(3), torch.tensor([3.0])):
        assert all(torch.equal(a, b) for a, b in zip(draw(seed), want)), seed
    import pytest
    from torch_dali.errors import ArgumentError
    for bad in (torch.tensor([3, 4]), 3.5, torch.tensor([3.5])):
        with pytest.raises(ArgumentError, match="seed"):
            draw(bad)
