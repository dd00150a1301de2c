"""bb_flip and bbox_paste's stand-ins (ops/fast/cpu_box_moves.py: C, `_native/csrc/cpu/box_moves.c`,
and NumPy without it) give the specs' (`functional.detection.bb_flip_batch`, `bbox_paste_batch`)
boxes byte for byte: (N, 4), (4,), (N, 8) and strided samples, empty ones, float16/float64 inputs
(left to the specs), NaN and out-of-range values, per-sample flags and parameters, both layouts;
and the ops give the same batches with and without them."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torch_dali.functional.detection as K
from torch_dali import fn, pipeline_def, types
from torch_dali._native import helpers
from torch_dali.ops import _dispatch
from torch_dali.ops.fast import cpu_box_moves as M

try:
    from tests._stand_ins import need
except ImportError:
    from _stand_ins import need  # type: ignore[no-redef]


def _samples(rs: np.random.RandomState, uniform: bool) -> list[torch.Tensor]:
    n = rs.randint(1, 9)
    kinds = [(rs.randint(0, 30), 4), (4,), (2, 8), (0, 4)]
    shapes = [(7, 4)] * n if uniform else [kinds[rs.randint(4)] for _ in range(n)]
    out = []
    for s in shapes:
        v = rs.uniform(-0.2, 1.2, s)
        v[rs.uniform(size=s) < 0.05] = np.nan
        dtype = [np.float32, np.float32, np.float16, np.float64][rs.randint(4)] if not uniform else np.float32
        t = torch.from_numpy(v.astype(dtype))
        if len(s) == 2 and s[1] == 4 and rs.randint(4) == 0:  # a strided view: NumPy's path, not C's
            t = torch.from_numpy(np.ascontiguousarray(v.T.astype(dtype))).T
        out.append(t)
    return out


def _bytes(x: list[torch.Tensor] | torch.Tensor) -> list[tuple]:
    return [(tuple(t.shape), t.dtype, t.numpy().tobytes()) for t in x]


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("uniform", [False, True])
def test_the_stand_ins_give_the_specs_bytes(monkeypatch: pytest.MonkeyPatch, uniform: bool, native: bool) -> None:
    ran: list[int] = []
    if native:
        need(helpers.BOX_MOVES)
        monkeypatch.setattr(helpers, "box_moves", lambda *a, run=helpers.box_moves: ran.append(1) or run(*a))
    else:  # the NumPy path, taken without the C helper
        monkeypatch.setattr(helpers, "box_moves", lambda *a: None)
    rs = np.random.RandomState(1 + uniform)
    taken = 0
    for trial in range(300):
        s = _samples(rs, uniform)
        n, ltrb = len(s), bool(trial % 2)
        h = [int(rs.randint(2)) for _ in range(n)]
        v = [torch.tensor(rs.randint(2)) for _ in range(n)]  # tensor arguments arrive as 0-d tensors
        ratios = [float(rs.choice([1.0, 1.5, 3.7])) if rs.randint(3) else float(rs.uniform(1, 10)) for _ in range(n)]
        px, py = [float(rs.uniform(0, 1)) for _ in range(n)], [float(rs.choice([0.0, 1.0, 0.3])) for _ in range(n)]
        flipped, pasted = M.bb_flip_batch(s, ltrb, h, v), M.bbox_paste_batch(s, ltrb, ratios, px, py)
        if any(t.dtype != torch.float32 for t in s):
            assert flipped is None and pasted is None
            continue
        taken += 1
        assert _bytes(flipped) == _bytes(K.bb_flip_batch(s, ltrb, h, v)), trial
        assert _bytes(pasted) == _bytes(K.bbox_paste_batch(s, ltrb, ratios, px, py)), trial
    assert taken > 30 and (len(ran) > 50) == native


def test_a_batch_of_one_shape_comes_back_dense_and_the_input_untouched() -> None:
    s = [torch.rand(5, 4) for _ in range(3)]
    before = [t.clone() for t in s]
    got = M.bb_flip_batch(s, False, [1, 0, 1], [0, 1, 1])
    assert isinstance(got, torch.Tensor) and got.shape == (3, 5, 4)
    assert all(torch.equal(a, b) for a, b in zip(s, before))
    one = [torch.rand(6, 4)]
    M.bbox_paste_batch(one, True, [2.0], [0.5], [0.5])
    M.bb_flip_batch(one, True, [1], [1])
    assert M.bb_flip_batch([], True, [], []) is None
    assert M.bb_flip_batch([torch.rand(2, 4, dtype=torch.float64)], True, [1], [0]) is None


def _run(make_op) -> list[list[bytes]]:
    rs = np.random.RandomState(5)
    boxes = [rs.uniform(0, 0.5, (k, 4)).astype(np.float32) for k in (3, 0, 5, 5)]
    flags = [np.array(k % 2, np.int32) for k in range(4)]

    @pipeline_def(batch_size=4, num_threads=2, device_id=None)
    def pipe():
        b = fn.external_source(source=lambda: boxes)
        f = fn.external_source(source=lambda: flags)
        return tuple(make_op(b, f))
    p = pipe()
    p.build()
    return [[np.asarray(t).tobytes() for t in out] for out in p.run()]


@pytest.mark.parametrize("make_op", [
    lambda b, f: [fn.bb_flip(b, ltrb=True, horizontal=f, vertical=1), fn.bb_flip(b, horizontal=0, vertical=f)],
    lambda b, f: [fn.bbox_paste(b, ratio=fn.cast(f, dtype=types.FLOAT) + 1.5, paste_x=0.2),
                  fn.bbox_paste(b, ltrb=True, ratio=2.0)],
])
def test_the_ops_give_the_same_batches_with_and_without_them(monkeypatch: pytest.MonkeyPatch, make_op) -> None:
    calls: list[int] = []
    for name in ("bb_flip_batch", "bbox_paste_batch"):
        monkeypatch.setattr(M, name, lambda *a, run=getattr(M, name): calls.append(1) or run(*a))
    monkeypatch.setattr(_dispatch, "_FAST_FN", {K.bb_flip_batch: [M.bb_flip_batch],
                                                K.bbox_paste_batch: [M.bbox_paste_batch]})
    fast = _run(make_op)
    assert len(calls) >= 2
    monkeypatch.setattr(_dispatch, "_FAST_FN", {})
    assert _run(make_op) == fast
