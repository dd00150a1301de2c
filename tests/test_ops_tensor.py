"""transpose, squeeze, expand_dims, element_extract, cat, stack, one_hot, get_property,
permute_batch and batch_permutation: against DALI 2.4's CPU backend on the cases of
tests/reference/tensor_cases.py (tables in tensor_tables.npz; "live" runs DALI now when it
imports): exact values, shapes, types and layouts, and a refusal wherever DALI refuses. Then what
DALI's tables cannot show: per-sample squeeze axes (DALI 2.4 refuses them as an argument input),
source_info, batch_permutation's draws."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, ops, pipeline_def

from reference import tensor_cases as C
from reference.tensor_check import SOURCES, compare, dali, ours


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", list(C.CASES))
def test_matches_dali(name, source):
    compare(ours(name), dali(source, name))


def _run(body, batch_size=3, seed=5, threads=1, iterations=1):
    @pipeline_def(batch_size=batch_size, num_threads=threads, device_id=None, seed=seed)
    def pipe():
        return body()

    p = pipe()
    p.build()
    return [p.run() for _ in range(iterations)]


def _feed(samples, layout=None):
    return fn.external_source(source=lambda: list(samples), batch=True, layout=layout)


def test_squeeze_axes_per_sample():
    xs = [np.zeros((1, 4, 1), np.uint8), np.zeros((1, 2, 1), np.uint8)]
    axes = [np.array([0, 2], np.int32), np.array([2, 0], np.int32)]
    (out,), = _run(lambda: fn.squeeze(_feed(xs, "ABC"), axes=_feed(axes)), batch_size=2)
    assert [o.shape for o in out] == [(4,), (2,)] and out.layout() == "B"


def test_dense_and_ragged_batches_agree():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 9, (2, 3, 4, 2)).astype(np.int32)
    c = rng.integers(0, 9, (5, 4, 2)).astype(np.int32)

    def body(xs):
        x = _feed(xs, "HWC")
        return (fn.transpose(x, perm=[2, 0, 1]), fn.expand_dims(x, axes=[0], new_axis_names="F"),
                fn.stack(x, x, axis=3), fn.cat(x, x, axis=1), fn.one_hot(x, num_classes=9),
                fn.permute_batch(x, indices=[1, 0]))

    dense, = _run(lambda: body([a, b]), batch_size=2)
    ragged, = _run(lambda: body([a, c]), batch_size=2)
    for d, r in zip(dense, ragged):
        assert d.layout() == r.layout()
    for d, r in zip(dense[:5], ragged[:5]):
        np.testing.assert_array_equal(np.asarray(d[0]), np.asarray(r[0]))
    np.testing.assert_array_equal(np.asarray(dense[5][1]), np.asarray(ragged[5][1]))


def test_source_info_names_the_file(tmp_path):
    for k in range(3):
        (tmp_path / "a").mkdir(exist_ok=True)
        (tmp_path / "a" / f"{k}.jpg").write_bytes(bytes([k]) * 4)

    def body():
        data, _ = fn.readers.file(file_root=str(tmp_path))
        return fn.get_property(data, key="source_info")

    (out,), = _run(body)
    names = sorted(bytes(np.asarray(t)).decode() for t in out)
    # DALI 2.4 (measured): the sample's source_info(), the path relative to file_root (was the full path)
    assert names == [f"a/{k}.jpg" for k in range(3)]
    assert all(np.asarray(t).dtype == np.uint8 for t in out)


def test_source_info_follows_the_first_input_to_its_reader(tmp_path):
    # as DALI 2.4 (measured): the label output carries no name; an op's output carries the names
    # of the first reader found through its inputs; nemo_asr names nothing
    for k in range(2):
        np.save(tmp_path / f"n{k}.npy", np.arange(3))
        (tmp_path / f"f{k}.bin").write_bytes(b"abc")

    def body():
        files, label = fn.readers.file(file_root=str(tmp_path), files=["f0.bin", "f1.bin"])
        ext = fn.external_source(source=lambda: [np.zeros(3, np.int64)] * 2, batch=True)
        mixed = ext + fn.readers.numpy(file_root=str(tmp_path), files=["n0.npy", "n1.npy"])
        return tuple(fn.get_property(x, key="source_info") for x in (files, label, ext, mixed))

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return body()

    p = pipe()
    p.build()
    got = [[bytes(np.asarray(t)).decode() for t in out] for out in p.run()]
    assert got == [["f0.bin", "f1.bin"], ["", ""], ["", ""], ["n0.npy", "n1.npy"]]


@pytest.mark.parametrize("repetitions,no_fixed", [(False, False), (False, True), (True, False), (True, True)])
def test_batch_permutation_draws(repetitions, no_fixed):
    n = 6
    runs = _run(lambda: fn.batch_permutation(allow_repetitions=repetitions, no_fixed_points=no_fixed),
                batch_size=n, iterations=40)
    seen = set()
    for (out,) in runs:
        idx = [int(np.asarray(t)) for t in out]
        assert all(np.asarray(t).shape == () and np.asarray(t).dtype == np.int32 for t in out)
        if not repetitions:
            assert sorted(idx) == list(range(n))
        assert all(0 <= v < n for v in idx)
        if no_fixed:
            assert all(v != i for i, v in enumerate(idx))
        seen.add(tuple(idx))
    assert len(seen) > 30  # draws differ from batch to batch
    again = _run(lambda: fn.batch_permutation(allow_repetitions=repetitions, no_fixed_points=no_fixed),
                 batch_size=n, iterations=40, threads=3)
    assert [[int(np.asarray(t)) for t in o] for (o,) in runs] == [[int(np.asarray(t)) for t in o] for (o,) in again]


def test_batch_permutation_is_uniform():
    """Every position takes every index about equally often (chi-square over 600 batches)."""
    from scipy import stats
    n, iters = 4, 600
    runs = _run(lambda: fn.batch_permutation(), batch_size=n, iterations=iters)
    counts = np.zeros((n, n))
    for (out,) in runs:
        for i, t in enumerate(out):
            counts[i, int(np.asarray(t))] += 1
    assert stats.chisquare(counts.ravel()).pvalue > 1e-3


def test_permute_batch_follows_a_permutation():
    xs = [np.full((2, 2), k, np.uint8) for k in range(5)]

    def body():
        perm = fn.batch_permutation(seed=3)
        return fn.permute_batch(_feed(xs, "HW"), indices=perm), perm

    (out, perm), = _run(body, batch_size=5)
    for t, p in zip(out, perm):
        np.testing.assert_array_equal(np.asarray(t), xs[int(np.asarray(p))])
    assert out.layout() == "HW"


@pytest.mark.parametrize("dtype, ok", [(np.int32, True), (np.int64, True), (np.float32, False), (np.bool_, False)])
def test_permute_batch_index_batches_must_be_integers(dtype, ok):
    # DALI 2.4 (measured) refuses float and bool index batches at run time (a RuntimeError); it refuses
    # int64 too, which torch_dali takes
    xs = [np.full((2,), k, np.uint8) for k in range(3)]
    idx = [np.array(v, dtype) for v in (1, 0, 1)]

    def body():
        return fn.permute_batch(_feed(xs), indices=_feed(idx))

    if ok:
        (out,), = _run(body)
        assert [int(np.asarray(t)[0]) for t in out] == [1, 0, 1]
    else:
        with pytest.raises(RuntimeError, match="must be integers"):
            _run(body)


def test_class_names_are_dalis():
    for name in ("Transpose", "Squeeze", "ExpandDims", "ElementExtract", "Cat", "Stack", "OneHot", "GetProperty",
                 "PermuteBatch", "BatchPermutation"):
        assert hasattr(ops, name), name


def test_argument_refusals_name_the_argument():
    with pytest.raises(ValueError, match="axis_name"):
        _run(lambda: fn.cat(_feed([np.zeros((2, 2), np.uint8)] * 3, "HW"), axis=1, axis_name="W"))
    with pytest.raises(RuntimeError, match="element_map"):  # when it runs, as in DALI
        _run(lambda: fn.element_extract(_feed([np.zeros((2, 2), np.uint8)] * 3, "FX"), element_map=[-1]))
    with pytest.raises(ValueError, match="output_layout"):
        _run(lambda: fn.transpose(_feed([np.zeros((2, 2), np.uint8)] * 3, "HW"), output_layout=""))


@pytest.mark.parametrize("perm", [[1, 1], [0, 2], [-1, 0]])
def test_a_perm_that_is_no_permutation_is_refused_at_build(perm):
    """DALI 2.4 (measured) refuses these at build, whatever the input; a perm of the wrong length
    for the input fails when it runs, in both."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.transpose(_feed([np.zeros((2, 3), np.uint8)], "HW"), perm=perm)

    p = pipe()
    with pytest.raises(RuntimeError, match="perm"):
        p.build()


def test_yaml_round_trip_gives_the_same_batch():
    from torch_dali import types
    from torch_dali.pipeline import Pipeline

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
    def pipe():
        x = fn.reshape(fn.random.uniform(range=[0, 20], shape=[2, 3, 4]), layout="FBC")
        first, second = fn.element_extract(x, element_map=[0, 1])
        return (fn.transpose(x, perm=[2, 0, 1]), fn.cat(x, x, axis_name="C"), fn.stack(x, x, axis=1, axis_name="N"),
                fn.one_hot(fn.cast(x, dtype=types.INT32), num_classes=30, axis=0),
                fn.permute_batch(x, indices=fn.batch_permutation()), first, second,
                fn.squeeze(fn.expand_dims(x, axes=[0], new_axis_names="Z"), axis_names="Z"),
                fn.reductions.std_dev(x, fn.reductions.mean(x, axes=[1]), axes=[1], ddof=1),
                fn.tensor_resize(x, sizes=[5, 6], axes=[1, 2], interp_type=types.INTERP_CUBIC),
                fn.random.beta(alpha=0.5, shape=[3]), fn.random.choice(5, p=[0.2] * 5),
                fn.segmentation.random_object_bbox(fn.cast(x, dtype=types.INT32), format="box"),
                fn.get_property(x, key="layout"))

    p = pipe()
    p.build()
    first_run = p.run()
    again = Pipeline.deserialize(p.serialize())
    again.build()
    for a, b in zip(first_run, again.run()):
        assert a.layout() == b.layout()
        for i in range(2):
            np.testing.assert_array_equal(np.asarray(a.at(i)), np.asarray(b.at(i)))
    assert bytes(np.asarray(first_run[-1].at(0))) == b"FBC"


def test_permute_batch_samples_keep_their_source_info(tmp_path):
    # DALI 2.4 (measured): a permuted sample keeps the name it was read with
    for k in range(3):
        np.save(tmp_path / f"m{k}.npy", np.full(2, k, np.uint8))

    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def pipe():
        x = fn.readers.numpy(file_root=str(tmp_path), files=["m0.npy", "m1.npy", "m2.npy"])
        p = fn.permute_batch(x, indices=[2, 2, 0])
        return p, fn.get_property(p, key="source_info")

    p = pipe()
    p.build()
    out, prop = p.run()
    assert [t.source_info() for t in out] == ["m2.npy", "m2.npy", "m0.npy"]
    assert [bytes(np.asarray(t)).decode() for t in prop] == ["m2.npy", "m2.npy", "m0.npy"]
