"""`RandomApply`: a list of transforms applied, in order, with probability `p` (one draw per sample)."""
from __future__ import annotations

from typing import Any, Callable, Literal, Sequence

from .... import fn, types
from .operator import Operator, ValidateIfZeroOneRange, branch


class RandomApply(Operator):
    arg_rules = (ValidateIfZeroOneRange,)

    def __init__(self, op_list: Sequence[Callable], p: float = 0.5, device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(device=device, p=p)
        self.p = p
        self._op_list = op_list

    def _kernel(self, data_input: Any) -> Any:
        def apply_all() -> Any:
            out = data_input
            for op in self._op_list:
                out = op.invoke(out)
            return out

        apply = fn.random.coin_flip(dtype=types.DALIDataType.BOOL, probability=self.p)
        return branch(apply, apply_all, lambda: data_input)
