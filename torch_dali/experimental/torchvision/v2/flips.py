"""`RandomHorizontalFlip` / `RandomVerticalFlip`: `fn.flip` with a coin flip per sample."""
from __future__ import annotations

from typing import Any, Literal

from .... import fn
from .operator import Operator


class RandomFlip(Operator):
    """Flips along W (`horizontal`) or H with probability `p`."""

    def __init__(self, p: float = 0.5, horizontal: bool = True, device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(device=device)
        self.prob = p
        self.horizontal = horizontal

    def _kernel(self, data_input: Any) -> Any:
        coin = fn.random.coin_flip(probability=self.prob)
        h, v = (coin, 0) if self.horizontal else (0, coin)
        return fn.flip(data_input, horizontal=h, vertical=v, device=self.device)


class RandomHorizontalFlip(RandomFlip):
    def __init__(self, p: float = 0.5, device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(p, True, device)


class RandomVerticalFlip(RandomFlip):
    def __init__(self, p: float = 0.5, device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(p, False, device)
