"""Seeds for the several random draws of one automatic augmentation call.

DALI passes the call's `seed` to each draw unchanged, and draws with one seed are the same
stream: with a seed given, TrivialAugment's choice of augmentation and its magnitude bin move
together (sample i gets op ~ u_i * 14 and bin ~ u_i * 31 from one u_i). Here each draw gets its
own seed, derived from the given one: the same seed still gives the same augmentations, and the
draws are independent. Without a seed every draw gets one from the pipeline's seed, as any op."""
from __future__ import annotations

import numbers
from typing import Optional

from ..errors import ArgumentTypeError
from ..rng import hash_key

_TAG = 0xA7A7  # separates these seeds from those the graph derives for ops


def derived_seeds(seed: Optional[int], count: int) -> list[Optional[int]]:
    """`count` seeds for the draws of one call made with `seed` (None: all None)."""
    if seed is None or seed == -1:
        return [None] * count
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ArgumentTypeError(f"`seed` must be an integer, got {seed!r}")
    seed = int(seed)
    return [hash_key(seed, k, _TAG) & 0x7FFFFFFF for k in range(count)]
