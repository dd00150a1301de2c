"""The class API of the dynamic mode (`ndd._ops.Resize(...)`, `ndd.ops` too): values, outputs and
errors as DALI 2.4's CPU backend gave them (measured 2026-12-05 with the same calls)."""
from __future__ import annotations

import numpy as np
import pytest

import torch_dali.experimental.dynamic as ndd

O = ndd._ops
IMG = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)


def test_where_the_classes_are():
    assert ndd.ops.Resize is O.Resize
    assert ndd.ops.random.Uniform is O.random.Uniform
    for cls in (O.Resize, O.Flip, O.decoders.Image, O.reductions.Sum, O.transforms.Translation,
                O.random.Normal, O.noise.Gaussian, O.experimental.WarpPerspective):
        assert issubclass(cls, O.Operator)
    # DALI 2.4: readers are classes at ndd.readers only, subclasses of _ops.Reader and _ops.Operator
    assert [c.__name__ for c in ndd.readers.File.__mro__] == ["File", "Reader", "Operator", "object"]
    assert not hasattr(O, "readers")


def test_values_match_dali():
    r = O.Resize(size=[2, 3])
    out = r(IMG)
    assert isinstance(out, ndd.Tensor) and out.layout == "HWC" and out.dtype == ndd.uint8
    assert np.asarray(out).tolist() == [[[13, 14, 15], [19, 20, 21], [24, 25, 26]],
                                        [[45, 46, 47], [50, 51, 52], [56, 57, 58]]]
    crop = O.Crop(crop=(2, 2))(IMG, crop_pos_x=0.0, crop_pos_y=1.0)
    assert np.asarray(crop).tolist() == [[[36, 37, 38], [39, 40, 41]], [[54, 55, 56], [57, 58, 59]]]
    assert np.asarray(O.Flip(horizontal=1)(IMG))[0, :, 0].tolist() == [15, 12, 9, 6, 3, 0]
    assert np.asarray(O.Flip()(IMG, horizontal=1, vertical=0))[0, :, 0].tolist() == [15, 12, 9, 6, 3, 0]
    assert int(np.asarray(O.reductions.Sum(axes=0)(np.int32([1, 2, 3])))) == 6
    assert np.asarray(O.transforms.Translation(offset=[1, 2])()).tolist() == [[1, 0, 1], [0, 1, 2]]
    assert np.asarray(O.Normalize(mean=1.0, stddev=2.0)(np.float32([1, 3, 5]))).tolist() == [0, 1, 2]
    assert O.Cast(dtype=ndd.float32)(np.uint8([1, 2])).dtype == ndd.float32
    assert O.Cat(axis=0)(IMG, IMG).shape == (8, 6, 3)


def test_outputs():
    outs = O.RandomBBoxCrop()(np.float32([[0.1, 0.1, 0.5, 0.5]]), np.int32([1]))
    assert isinstance(outs, tuple) and [o.shape for o in outs] == [(2,), (2,), (1, 4), (1,)]
    b = O.random.CoinFlip(probability=1.0)(batch_size=2)
    assert isinstance(b, ndd.Batch) and b.shape == [(), ()] and b.dtype == ndd.int32
    u = O.random.Uniform(range=[0, 1], shape=[3])()
    assert isinstance(u, ndd.Tensor) and u.shape == (3,) and u.dtype == ndd.float32


def test_argument_errors():
    with pytest.raises(TypeError):
        O.Resize(foo=1)
    with pytest.raises(TypeError):  # not a per-sample argument: only the constructor takes it
        O.Resize(size=[2, 2])(IMG, antialias=False)
    with pytest.raises(TypeError):  # a required argument that is not per-sample
        O.Cast()
    with pytest.raises(ValueError):
        O.Resize(device="xpu")
    with pytest.raises(TypeError):
        O.Flip()(IMG, IMG)
    with pytest.raises(TypeError):  # a Batch belongs to the call (DALI 2.4 raises at the call)
        O.Flip(horizontal=ndd.batch([1, 0]))(ndd.batch([IMG] * 2))
    assert np.asarray(O.Flip(horizontal=ndd.tensor(1))(np.uint8([[[1], [2]]]))).ravel().tolist() == [2, 1]
    for k in ("device", "name", "rng", "foo"):  # none of them is a call's keyword
        with pytest.raises(TypeError):
            O.Flip()(IMG, **{k: 1})
    with pytest.raises(TypeError):
        O.random.Uniform()(seed=3)
    with pytest.raises(RuntimeError):  # the op's own check (no way of sizing given)
        O.Resize()(IMG)


def test_later_calls_must_match_the_first():
    # (DALI 2.4 raises when the result is evaluated; here at the call)
    batch4 = ndd.batch([IMG] * 4)
    r = O.Resize(size=[2, 3])
    assert r(batch4).shape == [(2, 3, 3)] * 4  # without max_batch_size the first call may be any size
    with pytest.raises(RuntimeError):  # ... then it is 1, as in DALI 2.4
        r(batch4).evaluate()
    assert r(ndd.batch([IMG])).shape == [(2, 3, 3)]
    with pytest.raises(RuntimeError):  # a Tensor after Batches
        r(IMG).evaluate()
    r8 = O.Resize(size=[2, 3], max_batch_size=8)
    r8(batch4)
    for other in (ndd.batch([IMG.astype(np.float32)] * 4), ndd.batch([IMG[:, :, 0].copy()] * 4),
                  ndd.batch([IMG] * 4, layout="HWC")):
        with pytest.raises(RuntimeError):  # dtype, dimensions, layout
            r8(other).evaluate()
    with pytest.raises(RuntimeError):  # an argument the first call did not have
        r8(batch4, resize_x=3).evaluate()
    s = O.Resize(max_batch_size=8)
    assert s(ndd.batch([IMG] * 2), size=[3, 3]).shape == [(3, 3, 3)] * 2
    # an argument's type may change (DALI converts it), a Tensor argument may become a Batch
    assert s(ndd.batch([IMG] * 2), size=[3.5, 3.0]).shape == [(4, 3, 3)] * 2
    assert s(ndd.batch([IMG] * 2), size=ndd.batch([np.float32([3, 3])] * 2)).shape == [(3, 3, 3)] * 2
    with pytest.raises(RuntimeError):  # an argument of the first call left out
        s(ndd.batch([IMG] * 2)).evaluate()
    # a stateless op made with a small max_batch_size still runs a larger first batch (DALI 2.4)
    assert O.Resize(max_batch_size=2, size=[2, 2])(ndd.batch([IMG] * 3)).shape == [(2, 2, 3)] * 3
    with pytest.raises(RuntimeError):  # a random op checks it at once
        O.random.Uniform(max_batch_size=2, range=[0, 1])(batch_size=3).evaluate()


def test_random_streams():
    a = O.random.Uniform(range=[0, 1], shape=[10])
    rng1, rng2 = ndd.random.RNG(seed=1234), ndd.random.RNG(seed=1234)
    x1, x2, x3 = a(rng=rng1), a(rng=rng1), a(rng=rng2)
    assert not np.array_equal(np.asarray(x1), np.asarray(x2))
    assert np.array_equal(np.asarray(x1), np.asarray(x3))
    # as in DALI 2.4 the constructor's seed does not pick the stream: rng / the default RNG does
    u1 = O.random.Uniform(seed=42)(range=[0, 1], shape=[10], rng=ndd.random.RNG(seed=1))
    u2 = O.random.Uniform(seed=42)(range=[0, 1], shape=[10], rng=ndd.random.RNG(seed=2))
    assert not np.array_equal(np.asarray(u1), np.asarray(u2))
    ndd.random.set_seed(7)
    v1 = O.random.Normal(seed=3)(shape=[4])
    ndd.random.set_seed(7)
    v2 = O.random.Normal(seed=5)(shape=[4])
    assert np.array_equal(np.asarray(v1), np.asarray(v2))


def test_batch_permutation_needs_a_batch_size():
    # DALI 2.4: the function refuses to guess (ValueError), the class gives one sample (0)
    with pytest.raises(ValueError, match="batch_size.*batch_permutation"):
        ndd.batch_permutation(rng=ndd.random.RNG(seed=1234))
    assert sorted(np.asarray(ndd.batch_permutation(batch_size=4)).tolist()) == [0, 1, 2, 3]
    one = O.BatchPermutation()()
    assert isinstance(one, ndd.Tensor) and one.shape == () and int(np.asarray(one)) == 0


def test_a_nested_list_argument_is_a_tensor_argument():
    # DALI 2.4's ndd turns `matrix=[[...], [...]]` into a 2x3 argument tensor (ndd.tensor's types);
    # it was refused here as "not a list of numbers". Values measured with DALI 2.4 (CPU).
    img = (np.arange(4 * 5 * 3, dtype=np.uint8) * 7).reshape(4, 5, 3)
    mtx = [[0.9, 0.1, 1.5], [-0.1, 0.9, -0.5]]
    out = np.asarray(ndd.warp_affine(ndd.tensor(img, layout="HWC"), matrix=mtx))
    assert out.dtype == np.uint8 and out.ravel().tolist() == [
        32, 39, 46, 50, 57, 64, 69, 76, 83, 84, 91, 98, 84, 91, 98, 65, 72, 79, 73, 80, 87, 82, 89,
        96, 84, 91, 98, 84, 91, 98, 162, 133, 140, 155, 152, 159, 179, 186, 193, 179, 186, 193, 168,
        175, 182, 233, 55, 62, 88, 18, 25, 45, 52, 59, 68, 75, 82, 83, 90, 97]
    m = [[1, 0], [0, 2]]
    b = ndd.coord_transform(ndd.batch([np.float32([[1, 2], [3, 4]]), np.float32([[0, 1]])]), M=m, T=[0.5, 1])
    assert [np.asarray(t).tolist() for t in b.tensors] == [[[1.5, 5.0], [3.5, 9.0]], [[0.5, 3.0]]]
    m2 = ((1.5, 0), (0, 2))
    c = np.asarray(ndd.coord_transform(ndd.tensor(np.float32([[1, 2]])), M=m2))
    assert c.dtype == np.float32 and c.tolist() == [[1.5, 4.0]]


@pytest.mark.parametrize("call", [
    lambda x: ndd.resize(x, x, size=[2, 2]), lambda x: ndd.resize(size=[2, 2]), lambda x: ndd.flip(x, x),
    lambda x: ndd.full(shape=[2]), lambda x: ndd.full(1.0, 2.0, shape=[2]), lambda x: ndd.zeros(x),
    lambda x: ndd.slice(x, x, x, x), lambda x: ndd.cat(), lambda x: ndd.random.uniform(x, x),
])
def test_a_wrong_number_of_positional_inputs_is_a_type_error(call):
    # DALI 2.4's functions have the op's inputs as positional parameters, so Python raises a
    # TypeError (measured for each of these calls); it was a GraphError (a ValueError) here
    with pytest.raises(TypeError):
        call(ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC"))
    # the counts DALI takes still work
    x = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")
    assert np.asarray(ndd.random.uniform(x, range=[0, 1])).shape == (4, 4, 3)
    assert np.asarray(ndd.stack(x, x, x)).shape == (3, 4, 4, 3)


def test_deprecated_experimental_decoder_names():
    # DALI 2.4's dynamic mode keeps ndd.experimental.decoders.image / image_crop / image_random_crop
    # / image_slice and ndd.experimental.peek_image_shape (and their classes under
    # ndd._ops.experimental): the current ops under the old names, with a DeprecationWarning
    # (measured: the same values as ndd.decoders.*, peek_image_shape int64 by default)
    import io
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray((np.arange(7 * 9 * 3) % 251).astype(np.uint8).reshape(7, 9, 3)).save(buf, "JPEG")
    data = np.frombuffer(buf.getvalue(), np.uint8)
    with pytest.warns(DeprecationWarning):
        old = ndd.experimental.decoders.image(data)
    assert np.array_equal(np.asarray(old), np.asarray(ndd.decoders.image(data))) and old.layout == "HWC"
    with pytest.warns(DeprecationWarning):
        crop = ndd.experimental.decoders.image_crop(data, crop=[3, 4], crop_pos_x=0.3)
    assert np.array_equal(np.asarray(crop), np.asarray(ndd.decoders.image_crop(data, crop=[3, 4], crop_pos_x=0.3)))
    with pytest.warns(DeprecationWarning):
        shape = ndd.experimental.peek_image_shape(data)
    assert np.asarray(shape).dtype == np.int64 and np.asarray(shape).tolist() == [7, 9, 3]
    assert hasattr(ndd.experimental.decoders, "image_random_crop") and hasattr(ndd.experimental.decoders, "image_slice")
    assert ndd._ops.experimental.decoders.Image is ndd._ops.decoders.Image
    assert np.asarray(ndd._ops.experimental.PeekImageShape()(data)).tolist() == [7, 9, 3]
