"""`ops.Compose`: DALI's chain of op instances used as one op."""
from __future__ import annotations

from typing import Any, Sequence


class Compose:
    """Calls the ops of `op_list` in turn: the first with the call's inputs and keyword arguments,
    each next one with the outputs of the one before (several outputs become several inputs).
    A Compose is itself an op instance, so Composes nest."""

    def __init__(self, op_list: Sequence[Any]) -> None:
        self._ops = list(op_list)
        if not self._ops:
            raise ValueError("Compose: the list of ops is empty")

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        out = self._ops[0](*inputs, **kwargs)
        for op in self._ops[1:]:
            out = op(*out) if isinstance(out, (list, tuple)) else op(out)
        return out
