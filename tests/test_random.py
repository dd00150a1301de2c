"""random.uniform / coin_flip / normal: shapes and types, distributions, determinism, errors.

Draws compared with DALI 2.4's own (distributions, types, sample shapes): test_ref_random.py."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import ArgumentError, Pipeline, PipelineError, fn, ops, pipeline_def, types
from torch_dali.ops._operator import SampleContext


def run(graph, batch_size: int = 8, num_threads: int = 1, seed: int = 11, iterations: int = 1):
    @pipeline_def(batch_size=batch_size, num_threads=num_threads, device_id=None, seed=seed)
    def pipe():
        return graph()

    p = pipe()
    p.build()
    outs = [p.run() for _ in range(iterations)]
    return outs[0] if iterations == 1 else outs


def values(tl) -> np.ndarray:
    return np.stack([np.asarray(tl.at(i)) for i in range(len(tl))])


def test_default_shapes_and_types_match_dali():
    u, c, n, u2, c2, ui, n64, cu8, uv = run(lambda: (
        fn.random.uniform(), fn.random.coin_flip(), fn.random.normal(),
        fn.random.uniform(range=(256, 480), shape=(2, 3)), fn.random.coin_flip(shape=2, probability=0.3),
        fn.random.uniform(dtype=types.INT32, range=(0, 3)), fn.random.normal(dtype=types.FLOAT64, shape=[3]),
        fn.random.coin_flip(dtype=types.UINT8), fn.random.uniform(values=[1, 2, 5], dtype=types.INT32)))
    # scalars are 0-d; coin_flip is int32; uniform and normal are float32 (as DALI: test_ref_random.py)
    want = [(u, np.float32, ()), (c, np.int32, ()), (n, np.float32, ()), (u2, np.float32, (2, 3)),
            (c2, np.int32, (2,)), (ui, np.int32, ()), (n64, np.float64, (3,)), (cu8, np.uint8, ()),
            (uv, np.int32, ())]
    for tl, dtype, shape in want:
        a = tl.at(0)
        assert a.dtype == dtype and a.shape == shape
    assert set(values(uv).tolist()) <= {1, 2, 5}
    r = values(u2)
    assert (r >= 256).all() and (r < 480).all()


def test_input_gives_the_shape():
    x, y, z = run(lambda: (lambda s: (s, fn.random.normal(s), fn.random.coin_flip(s)))(
        fn.random.uniform(shape=(3, 4))))
    assert y.at(0).shape == (3, 4) and y.at(0).dtype == np.float32
    assert z.at(0).shape == (3, 4)


def test_draws_shaped_like_a_laid_out_input_have_no_layout():
    # DALI 2.4: uniform/normal/coin_flip shaped like an HWC batch give layout "" (its shape only)
    img = np.zeros((4, 5, 3), np.uint8)
    outs = run(lambda: (lambda x: (x, fn.random.uniform(x), fn.random.uniform(x, values=[1, 2.5]),
                                   fn.random.normal(x), fn.random.coin_flip(x)))(
        fn.external_source(source=lambda: [img] * 2, layout="HWC")), batch_size=2)
    assert outs[0].layout() == "HWC"
    for tl in outs[1:]:
        assert tl.layout() == "" and tl.at(0).shape == (4, 5, 3)


def test_uniform_distribution():
    a, = run(lambda: (fn.random.uniform(range=(2.0, 5.0), shape=(500,)),), batch_size=4)
    v = values(a).ravel()
    assert (v >= 2).all() and (v < 5).all()
    assert abs(v.mean() - 3.5) < 0.08 and abs(v.var() - 0.75) < 0.08
    s, = run(lambda: (fn.random.uniform(range=(2.0, 5.0)),), batch_size=1000)
    assert abs(values(s).mean() - 3.5) < 0.15


def test_integer_uniform_rounds_a_truncated_range():
    # ends truncated, draws rounded, end values half as likely (DALI's frequencies: test_ref_random.py)
    a, b = run(lambda: (fn.random.uniform(range=(0, 3), dtype=types.INT32, shape=(500,)),
                        fn.random.uniform(range=(-2.5, 1.7), dtype=types.INT32, shape=(500,))), batch_size=4)
    for tl, lo in ((a, 0), (b, -2)):
        v = values(tl).ravel() - lo
        freq = np.bincount(v, minlength=4) / v.size
        assert freq.size == 4
        assert np.allclose(freq, [1 / 6, 1 / 3, 1 / 3, 1 / 6], atol=0.03)
    s, = run(lambda: (fn.random.uniform(range=(0, 3), dtype=types.INT32),), batch_size=600)
    assert set(values(s).tolist()) == {0, 1, 2, 3}


def test_discrete_values_coin_flip_and_normal_distributions():
    v, c, n = run(lambda: (fn.random.uniform(values=[1.0, 2.5, 7.0], shape=(600,)),
                           fn.random.coin_flip(probability=0.3, shape=(600,)),
                           fn.random.normal(mean=3.0, stddev=2.0, shape=(600,))), batch_size=4)
    vv = values(v).ravel()
    assert set(np.unique(vv).tolist()) == {1.0, 2.5, 7.0}
    assert abs((vv == 7.0).mean() - 1 / 3) < 0.04
    assert abs(values(c).mean() - 0.3) < 0.03 and set(np.unique(values(c)).tolist()) == {0, 1}
    nn = values(n).ravel()
    assert abs(nn.mean() - 3.0) < 0.12 and abs(nn.std() - 2.0) < 0.1
    cs, ns = run(lambda: (fn.random.coin_flip(probability=0.3), fn.random.normal(mean=3.0, stddev=2.0)),
                 batch_size=1000)
    assert abs(values(cs).mean() - 0.3) < 0.05
    assert abs(values(ns).mean() - 3.0) < 0.2 and abs(values(ns).std() - 2.0) < 0.15


def test_per_sample_arguments():
    def graph():
        p = fn.random.uniform(values=[0.0, 1.0])
        m = fn.random.uniform(values=[-100.0, 100.0])
        k = fn.random.uniform(values=[1, 2, 3], shape=1, dtype=types.INT32)
        return (p, fn.random.coin_flip(probability=p), m, fn.random.normal(mean=m, stddev=0.01),
                k, fn.random.uniform(shape=k))

    p, c, m, n, k, u = run(graph, batch_size=16)
    assert np.array_equal(values(c), values(p).astype(np.int32))  # probability 0 or 1 decides the flip
    assert 0 < values(p).sum() < 16
    assert np.array_equal(np.sign(values(n)), np.sign(values(m)))
    assert [u.at(i).shape for i in range(16)] == [tuple(k.at(i).tolist()) for i in range(16)]
    assert len({u.at(i).shape for i in range(16)}) > 1


def test_determinism_seeds_threads_iterations():
    def graph():
        return (fn.random.uniform(range=(0, 10)), fn.random.normal(shape=(4,)), fn.random.coin_flip(),
                fn.random.uniform(values=[1.0, 2.0, 3.0], shape=3))

    a = run(graph, num_threads=1, iterations=2)
    b = run(graph, num_threads=2, iterations=2)
    c = run(graph, num_threads=1, seed=12, iterations=2)
    for it in range(2):
        for k in range(4):
            assert np.array_equal(values(a[it][k]), values(b[it][k]))
    assert not np.array_equal(values(a[0][0]), values(c[0][0]))
    assert not np.array_equal(values(a[0][0]), values(a[1][0]))  # a new draw each iteration
    assert len(set(values(a[0][0]).tolist())) > 1  # and per sample


def test_legacy_classes_and_two_ops_differ():
    class P(Pipeline):
        def __init__(self):
            super().__init__(batch_size=8, num_threads=1, device_id=None, seed=5)
            self.u1 = ops.Uniform(range=(256.0, 480.0))
            self.u2 = ops.random.Uniform(range=(256.0, 480.0))
            self.flip = ops.CoinFlip(probability=0.5)
            self.noise = ops.Normal(stddev=0.1)

        def define_graph(self):
            return self.u1(), self.u2(), self.flip(), self.noise()

    p = P()
    p.build()
    u1, u2, f, n = p.run()
    assert u1.at(0).dtype == np.float32 and f.at(0).dtype == np.int32
    assert ((values(u1) >= 256) & (values(u1) < 480)).all()
    assert not np.array_equal(values(u1), values(u2))  # each op has its own seed


@pytest.mark.parametrize("make,err,msg", [
    (lambda: fn.random.uniform(range=(1.0, 1.0)), ArgumentError, "range"),
    (lambda: fn.random.uniform(range=(1.0, 2.0, 3.0)), ArgumentError, "range"),
    (lambda: fn.random.coin_flip(probability=1.5), ArgumentError, "probability"),
    (lambda: fn.random.normal(stddev=-1.0), ArgumentError, "stddev"),
    (lambda: fn.random.uniform(shape=(-1, 2)), ArgumentError, "shape"),
    (lambda: fn.random.uniform(dtype="nope"), ArgumentError, "dtype"),  # a ValueError, as DALI 2.4
    (lambda: fn.random.uniform(bogus=1), ArgumentError, "bogus"),
    (lambda: fn.random.coin_flip(probability=fn.random.uniform(range=(1.5, 2.0))), PipelineError, "probability"),
])
def test_argument_errors(make, err, msg):
    with pytest.raises(err, match=msg):
        run(lambda: (make(),))


def test_runs_on_explicit_torch_device_tensors():
    from torch_dali.rng import SampleRNG  # noqa: F401 - the op draws from it on any device
    u, = run(lambda: (fn.random.uniform(shape=(2, 2)),))
    assert isinstance(u[0], torch.Tensor) and u[0].device.type == "cpu"


@pytest.mark.parametrize("make", [
    lambda: fn.random.coin_flip(probability=0.3),
    lambda: fn.random.uniform(range=(-2.0, 5.0)),
    lambda: fn.random.uniform(range=(-3, 4), dtype=types.INT32),
])
def test_vectorised_scalar_draws_equal_the_per_sample_path(make):
    """Scalar draws with no per-sample arguments come in one vectorised pass: the same values as
    each sample's own counter RNG (the per-sample path, forced through a dummy input's shape)."""
    def build(seed):
        pipe = Pipeline(batch_size=37, num_threads=2, device_id=None, seed=seed)
        with pipe:
            pipe.set_outputs(make())
        pipe.build()
        return pipe
    pipe = build(11)
    op = next(o for o in pipe.executor.plan.ops.values() if hasattr(o, "vectorised"))
    assert op.vectorised and not op.sample_wise
    got = [pipe.run()[0].as_tensor() for _ in range(3)]
    ref = build(11)
    rop = next(o for o in ref.executor.plan.ops.values() if hasattr(o, "vectorised"))
    rop.vectorised = False  # the per-sample path the vectorised one stands in for
    for k in range(3):
        want = torch.stack([rop.run_sample(SampleContext(rop.node.seed, k, i), [], {}) for i in range(37)])
        assert got[k].dtype == want.dtype
        assert torch.equal(got[k], want)
