"""segmentation.select_masks, random_object_bbox, random_mask_pixel against DALI 2.4's CPU backend
(cases in tests/reference/tensor_cases_more.py; "live" runs DALI now when it imports):
select_masks exactly (DALI keeps the last polygon row of a mask id listed twice; so do we), the
refusals where DALI refuses; the random ops in distribution (DALI's generator is not reproduced):
on a batch of copies of one mask, an outcome (box, class, pixel) DALI never drew is rare in ours, the
outcomes DALI draws often we draw too, and the frequencies pass a chi-square test of homogeneity
(p > 1e-3; fixed seeds on both sides make it deterministic). Connected components are checked
against scipy.ndimage.label (face connectivity)."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch
from scipy import ndimage, stats

from torch_dali import fn, pipeline_def
from torch_dali.functional import segmentation as K

from reference import tensor_cases_more as M
from reference.tensor_check import SOURCES, compare, dali, ours


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", list(M.SEGMENTATION))
def test_matches_dali(name, source):
    compare(ours(name), dali(source, name))


def _outcomes(result):
    outs = result["outputs"]
    return Counter(tuple(int(v) for o in outs for v in np.asarray(o[i]).ravel()) for i in range(len(outs[0])))


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", list(M.SEGMENTATION_RANDOM))
def test_outcomes_match_dali_in_distribution(name, source):
    want, got = dali(source, name), ours(name)
    assert "error" not in got, got["error"]
    assert got["layouts"] == want["layouts"]
    for g, w in zip(got["outputs"], want["outputs"]):
        assert {(x.shape, x.dtype) for x in g} == {(x.shape, x.dtype) for x in w}
    g, w = _outcomes(got), _outcomes(want)
    assert all(g[k] <= 5 for k in set(g) - set(w)), {k: g[k] for k in set(g) - set(w)}  # rare, if DALI missed it
    assert {k for k, c in w.items() if c >= 10} <= set(g)
    keys = sorted(set(g) | set(w))
    if len(keys) > 1:
        table = np.array([[g[k] for k in keys], [w[k] for k in keys]])
        assert stats.chi2_contingency(table).pvalue > 1e-3, (keys, table)


@pytest.mark.parametrize("shape,labels,seed", [((40, 50), 2, 0), ((12, 13, 14), 3, 1), ((200,), 2, 2),
                                               ((30, 30), 1, 3), ((6, 7, 5, 4), 2, 4)])
def test_components_match_scipy(shape, labels, seed):
    rng = np.random.default_rng(seed)
    mask = rng.integers(0, labels + 1, shape).astype(np.int32)
    roots = K.components(torch.from_numpy(mask)).numpy().reshape(shape)
    for v in range(labels + 1):
        ref, n = ndimage.label(mask == v)
        ours_ids = roots[mask == v]
        ref_ids = ref[mask == v]
        pairs = set(zip(ours_ids.tolist(), ref_ids.tolist()))
        assert len(pairs) == n == len(set(ours_ids.tolist()))  # a bijection between the two labelings


def test_a_snake_is_one_object():
    """A one-pixel-wide spiral (the worst case for label propagation) is one component."""
    m = np.zeros((21, 21), np.int32)
    lo, hi = 0, 20
    while lo <= hi:
        m[lo, lo:hi + 1] = m[lo:hi + 1, hi] = 1
        m[hi, lo:hi + 1] = 1
        if lo + 2 <= hi:
            m[lo + 2:hi + 1, lo] = 1
            m[lo + 2, lo:lo + 3] = 1
        lo, hi = lo + 2, hi - 2
    roots = K.components(torch.from_numpy(m))
    ref, n = ndimage.label(m == 1)
    assert len(set(roots[torch.from_numpy(m == 1).reshape(-1)].tolist())) == n


def _boxes(threads, seed=5):
    mask = M.inputs()["seg_map"][0]

    @pipeline_def(batch_size=16, num_threads=threads, device_id=None, seed=seed)
    def pipe():
        m = fn.external_source(source=lambda: [mask] * 16, batch=True)
        box, cls = fn.segmentation.random_object_bbox(m, format="box", output_class=True)
        return box, cls, fn.segmentation.random_mask_pixel(m, foreground=1)

    p = pipe()
    p.build()
    return [[np.asarray(o.at(i)).tolist() for i in range(len(o))] for o in p.run()]


def test_same_seed_same_boxes_whatever_the_threads():
    a = _boxes(1)
    assert a == _boxes(3)
    assert a != _boxes(1, seed=6)


def _bbox_class(data, **kw):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1234)
    def pipe():
        return tuple(fn.segmentation.random_object_bbox(data, format="box", output_class=True, **kw))

    p = pipe()
    p.build()
    return [np.asarray(o.at(0)).tolist() for o in p.run()]


@pytest.mark.parametrize("classes,bg", [([0, -1], -2), ([1, 2], 0), ([-2**31, 2**31 - 1, 0, 2**31 - 2], 2**31 - 3)])
def test_default_background_below_the_classes_with_int32_wrap(classes, bg):
    """DALI 2.4: the background is 0, or (0 a class) one below the smallest class, wrapping around int32 and
    stepping down past labels that are classes (values DALI's CPU backend gives for these classes)."""
    assert _bbox_class(np.int32([0, 1, 2, 3]), foreground_prob=1e-9, classes=classes) == [[0, 4], bg]


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32])
def test_unsigned_masks_with_classes(dtype):
    assert _bbox_class(np.array([[0, 1, 1], [2, 2, 0]], dtype), classes=[2]) == [[1, 0, 2, 2], 2]  # DALI's too


def test_a_class_that_is_the_background_is_refused():
    with pytest.raises(RuntimeError, match="background"):
        _bbox_class(np.int32([0, 1]), classes=[0, 1], background=0)


@pytest.mark.parametrize("bg,labels", [(0, {1, 2, 3}), (1, {0, 2, 3}), (2, {0, 1, 3}), (5, {0, 1, 2})])
def test_weights_without_classes_take_the_first_labels_but_the_background(bg, labels):
    """What DALI 2.4's CPU backend draws: class_weights of length n without classes weigh the first n
    labels from 0 up, the background skipped (1, 2, ... only for the default background 0)."""
    m = np.int32([[1, 0, 2, 2], [3, 3, 0, 1]])
    seen = set()
    for seed in range(40):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=seed)
        def pipe():
            return tuple(fn.segmentation.random_object_bbox(m, format="box", output_class=True,
                                                            class_weights=[1, 1, 1], background=bg))
        p = pipe()
        p.build()
        seen.add(int(np.asarray(p.run()[1].at(0))))
    assert seen == labels


@pytest.mark.parametrize("ids,vertices", [
    (np.int32([[0]]), np.zeros((5, 2), np.float32)),     # 2-D mask ids
    (np.int32(0), np.zeros((5, 2), np.float32)),         # 0-d mask id
    (np.int32([0]), np.arange(5, dtype=np.float32)),     # 1-D vertices
    (np.int32([0]), np.zeros((5, 2, 2), np.float32)),    # 3-D vertices
])
def test_select_masks_refuses_the_ranks_dali_refuses(ids, vertices):
    """DALI 2.4 (measured): mask_ids must be 1-D and vertices 2-D (RuntimeError when the pipeline runs)."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        i, p, v = (fn.external_source(source=(lambda a: lambda: [a])(a), batch=True)
                   for a in (ids, np.int32([[0, 0, 3]]), vertices))
        return tuple(fn.segmentation.select_masks(i, p, v))
    p = pipe()
    p.build()
    with pytest.raises(RuntimeError, match="1-D.*2-D"):
        p.run()


@pytest.mark.parametrize("shape", [(), (1,) * 7])
def test_random_object_bbox_refuses_0d_and_over_6d_masks(shape):
    """DALI 2.4 (measured on a 0-d int32 label): masks of 1 to 6 dimensions only (RuntimeError)."""
    with pytest.raises(RuntimeError, match="1 to 6 dimensions"):
        _bbox_class(np.ones(shape, np.int32))


@pytest.mark.parametrize("prob,want", [(2.0, [[0, 1, 1, 3], 1]), (-0.5, [[0, 0, 2, 3], 0])])
def test_foreground_prob_outside_0_1_is_taken(prob, want):
    """DALI 2.4 (measured): any foreground_prob is accepted; from 1 up an object is always picked,
    from 0 down never (the whole input, class = background)."""
    assert _bbox_class(np.int32([[0, 1, 1], [0, 0, 0]]), foreground_prob=prob) == want
