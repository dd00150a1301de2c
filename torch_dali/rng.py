"""Counter-based randomness. Every draw is a pure function of (op seed, iteration, sample, counter),
so results never depend on thread count, prefetch depth or a YAML round trip."""
from __future__ import annotations

import math

import numpy as np
import torch

_MASK = (1 << 64) - 1


def _mix(z: int) -> int:
    """splitmix64's finalizer: a bijective avalanche over 64 bits."""
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def hash_key(*parts: int) -> int:
    h = 0x243F6A8885A308D3
    for p in parts:
        h = _mix(h ^ (int(p) & _MASK))
    return h


def derive_seed(pipeline_seed: int, index: int) -> int:
    """An op's seed from the pipeline seed and its position in the graph (31 bits, as DALI)."""
    return hash_key(pipeline_seed, index, 0x5EED) & 0x7FFFFFFF


class SampleRNG:
    """Random draws for one (op, iteration, sample). Cheap to make; draw as many values as needed."""

    __slots__ = ("_key", "_n")

    def __init__(self, seed: int, iteration: int, sample: int) -> None:
        self._key = hash_key(seed, iteration, sample)
        self._n = 0

    def bits64(self) -> int:
        self._n += 1
        return _mix(self._key ^ _mix(self._n))

    def uniform(self, lo: float = 0.0, hi: float = 1.0) -> float:
        """A float in [lo, hi)."""
        u = (self.bits64() >> 11) * (1.0 / (1 << 53))
        return lo + (hi - lo) * u

    def normal(self, mean: float = 0.0, std: float = 1.0) -> float:
        u1 = 1.0 - self.uniform()  # (0, 1]: log is finite
        u2 = self.uniform()
        return mean + std * math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)

    def randint(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]."""
        return lo + int(self.uniform() * (hi - lo + 1))

    def bernoulli(self, p: float) -> bool:
        return self.uniform() < p

    def seed63(self) -> int:
        """A seed for a torch.Generator (for ops that draw tensors of noise)."""
        return self.bits64() & 0x7FFFFFFFFFFFFFFF

    def generator(self, device: str | torch.device = "cpu") -> torch.Generator:
        g = torch.Generator(device=device)
        g.manual_seed(self.seed63())
        return g


def _mix_np(z: np.ndarray) -> np.ndarray:
    """`_mix` over a uint64 array (numpy's uint64 arithmetic wraps like the masks above)."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def first_uniforms(seed: int, iteration: int, n: int) -> np.ndarray:
    """The first `SampleRNG(seed, iteration, i).uniform()` of samples i = 0..n-1, as float64, in
    one vectorised pass: ops drawing one scalar per sample use it instead of n Python RNGs."""
    h = _mix(_mix(0x243F6A8885A308D3 ^ (int(seed) & _MASK)) ^ (int(iteration) & _MASK))
    keys = _mix_np(np.uint64(h) ^ np.arange(n, dtype=np.uint64))
    bits = _mix_np(keys ^ np.uint64(_mix(1)))
    return (bits >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def permutation(seed: int, epoch: int, n: int) -> list[int]:
    """A seeded global permutation of range(n) for one epoch, the same on every rank.

    Drawn exactly as torch's DistributedSampler draws it (`randperm` seeded with seed + epoch), so
    shards can match a DistributedSampler's index sets."""
    g = torch.Generator()
    g.manual_seed(int(seed) + int(epoch))
    return torch.randperm(n, generator=g).tolist()


def state_rng(state: object, sample: int) -> SampleRNG:
    """The draws of one sample of an op given `_random_state` (DALI's internal argument through
    which dynamic mode hands an op its random state): keyed by the state's words and the sample
    index only, so the same state gives the same draws in every op and every iteration (DALI 2.4,
    measured), while the samples of a batch still differ."""
    words = np.asarray(state, dtype=np.int64).reshape(-1).tolist()
    return SampleRNG(hash_key(0x5747E, *words), 0, sample)
