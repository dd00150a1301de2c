"""One check for the native stand-ins of spec functions (ops/fast, `_dispatch.call`): a pipeline
gives the same batches with them and with the spec alone, and the helper really ran."""
from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from torch_dali._native import build, helpers
from torch_dali.ops import _dispatch


def need(lib: Any) -> None:
    """Skips the test when the C helper `lib` (helpers.CPU_IMAGE, ...) cannot be built here."""
    why = build.skip_reason(lib)
    if why:
        pytest.skip(why)


def batches(pipe: Any) -> list[list[torch.Tensor]]:
    """One run of a built pipeline, every output's samples as tensors (copies)."""
    return [[torch.as_tensor(t).clone() for t in out] for out in pipe.run()]


def same_with_and_without(monkeypatch: pytest.MonkeyPatch, make_pipe: Callable[[], Any], helper_names: list[str],
                          min_calls: int, same: Callable[[torch.Tensor, torch.Tensor], bool] = torch.equal) -> None:
    """`make_pipe()` (a built pipeline) run with the stand-ins, counting calls of `helpers.<name>`
    (at least `min_calls`), then with none registered: the same batches (`same` per sample)."""
    calls: list[int] = []
    for name in helper_names:
        monkeypatch.setattr(helpers, name, lambda *a, run=getattr(helpers, name): calls.append(1) or run(*a))
    fast = batches(make_pipe())
    assert len(calls) >= min_calls, f"the helpers {helper_names} ran {len(calls)} times"
    monkeypatch.setattr(_dispatch, "_FAST_FN", {})
    spec = batches(make_pipe())
    assert len(fast) == len(spec)
    for a, b in zip(fast, spec):
        assert len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
