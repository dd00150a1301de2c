"""Randomness of the dynamic mode: `RNG` (a seeded generator of 32-bit words), the thread's default
RNG (`set_seed`, `get_default_rng`), and the random ops (`uniform`, `normal`, `coin_flip`...,
placed here from torch_dali's schemas).

Every random op call draws two words from its RNG (`rng=`, else the thread's default) and uses them
to pick its random stream: the op's outputs are a pure function of (op, arguments, those words), so
an RNG with the same seed or state gives the same results (`RNG.clone()`, `set_seed`). The numbers
are torch_dali's (its counter-based generator), not DALI's Philox streams."""
from __future__ import annotations

import random as _py_random
import threading as _threading
from typing import TYPE_CHECKING, Any

from ...rng import hash_key as _hash_key

__all__ = ["RNG", "get_default_rng", "set_seed"]

_MASK64 = (1 << 64) - 1


class RNG:
    """A generator of uint32 words: `RNG(seed=1234)`, `rng()` draws one; `clone()` continues the same
    sequence independently; `state` (a string) saves and restores the position."""

    def __init__(self, seed: int | None = None, state: Any = None) -> None:
        if state is not None:
            if seed is not None:
                raise ValueError("RNG: give either seed or state, not both")
            self.set_state(state)
        else:
            self.seed = _py_random.randint(0, _MASK64) if seed is None else seed

    def __call__(self) -> int:
        self._counter += 1
        return _hash_key(self._seed, self._counter) & 0xFFFFFFFF

    @property
    def seed(self) -> int:
        raise AttributeError("seed is write-only")  # as DALI 2.4: read `state` instead

    @seed.setter
    def seed(self, value: int) -> None:
        self._seed = int(value) & _MASK64
        self._counter = 0

    def advance(self, n: int) -> None:
        """Skips `n` draws."""
        if int(n) < 0:
            raise ValueError("Cannot advance by a negative number")
        self._counter += int(n)

    def clone(self) -> "RNG":
        return RNG(state=self.state)

    @property
    def state(self) -> str:
        return self.get_state()

    @state.setter
    def state(self, value: Any) -> None:
        self.set_state(value)

    def get_state(self, *, cuda_stream: Any = None) -> str:
        return f"{self._seed:x}:{self._counter:x}"

    def set_state(self, value: Any) -> None:
        try:
            seed, counter = str(value).split(":")
            self._seed, self._counter = int(seed, 16), int(counter, 16)
        except ValueError:
            raise ValueError(f"RNG: {value!r} is not a state of an RNG") from None

    def __repr__(self) -> str:
        return f"RNG(state='{self.state}')"


_local = _threading.local()


def get_default_rng() -> RNG:
    """This thread's default RNG (random ops without `rng=` draw from it)."""
    if not hasattr(_local, "rng"):
        _local.rng = RNG()
    return _local.rng


def set_seed(seed: int) -> None:
    """Reseeds this thread's default RNG: the random ops that follow repeat their results."""
    get_default_rng().seed = seed


def draw_for_call(rng: Any = None, seed: int | None = None) -> int:
    """The stream number of one random op call: two words of `rng` (a fresh RNG of `seed` if one
    is given, else the thread's default)."""
    if rng is None:
        rng = RNG(seed=seed) if seed is not None else get_default_rng()
    if not isinstance(rng, RNG):
        raise ValueError(f"rng must be an ndd.random.RNG, got {type(rng).__module__}.{type(rng).__qualname__}")
    hi, lo = rng(), rng()
    return (hi << 32) | lo


if TYPE_CHECKING:
    # the random ops (`uniform`, `coin_flip`...) are placed by _ops.install at import, invisible
    # to mypy: a type checker reads them as Any
    def __getattr__(name: str) -> Any: ...
