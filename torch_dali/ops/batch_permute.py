"""permute_batch (out[i] = in[indices[i]]) and batch_permutation (random indices for it).

batch_permutation draws with per-sample keyed generators (pipeline seed, op seed, iteration,
sample), so the same seed gives the same permutation whatever the threads; DALI's generator is not
reproduced (same distribution, other values). A permutation is the order of one uniform draw per
sample; with `no_fixed_points` it is drawn again (next draws of the same keys) until no sample stays
in place: a uniformly random derangement. With `allow_repetitions` each sample draws its index
alone (`no_fixed_points`: among the others)."""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError
from ..rng import SampleRNG
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema


def _index(v: Any) -> int:
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise ArgumentError(f"PermuteBatch: each per-sample index must be a scalar, got {v!r}")
        v = v[0]
    if isinstance(v, (bool, float)):  # DALI 2.4 takes only integer index batches (it refuses float and bool)
        raise ArgumentError(f"PermuteBatch: the per-sample indices must be integers, got {type(v).__name__} {v!r}")
    return int(v)


class PermuteBatch(Operator):
    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        n = len(tl)
        if "indices" in args:
            idx = [_index(v) for v in args["indices"]]
        else:
            idx = [int(v) for v in self.args["indices"]]
            if len(idx) != n:
                raise ArgumentError(f"{self.name}: {len(idx)} indices given for a batch of {n} samples")
        bad = [(k, v) for k, v in enumerate(idx) if not 0 <= v < n]
        if bad:
            raise ArgumentError(f"{self.name}: indices[{bad[0][0]}] = {bad[0][1]} is not a sample of a batch of {n}")
        ctx.source_picks = [[(0, v)] for v in idx]  # a sample keeps its source_info() (DALI 2.4)
        if tl.dense is not None:
            return [TensorList(tl.dense[torch.tensor(idx, device=tl.dense.device)], tl.layout())]
        return [TensorList([tl[v] for v in idx], tl.layout())]


def permutation(seed: int, iteration: int, n: int, repetitions: bool, no_fixed_points: bool) -> list[int]:
    """The indices batch_permutation gives a batch of `n` (see the module's docstring)."""
    rngs = [SampleRNG(seed, iteration, i) for i in range(n)]
    fixed_ok = not no_fixed_points or n == 1
    if repetitions:
        if fixed_ok:
            return [r.randint(0, n - 1) for r in rngs]
        return [(i + 1 + r.randint(0, n - 2)) % n for i, r in enumerate(rngs)]
    while True:
        keys = [r.uniform() for r in rngs]
        perm = sorted(range(n), key=lambda i: keys[i])
        if fixed_ok or all(p != i for i, p in enumerate(perm)):
            return perm


class BatchPermutation(Operator):
    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        perm = permutation(self.node.seed, ctx.iteration, ctx.batch_size, bool(self.args["allow_repetitions"]),
                           bool(self.args["no_fixed_points"]))
        return [TensorList(torch.tensor(perm, dtype=torch.int32), "")]

    def output_layout(self, index: int) -> str:
        return ""


register(OpSchema(
    name="permute_batch", impl=PermuteBatch,
    doc="A batch made of the input's samples in another order: out[i] = in[indices[i]] (repetitions and "
        "omissions allowed).",
    args=(Arg("indices", "int_list", doc="one index per sample (a list as long as the batch, or a batch of "
              "scalars)", tensor=True),),
))
register(OpSchema(
    name="batch_permutation", impl=BatchPermutation, devices=("cpu",), min_inputs=0, max_inputs=0, random=True,
    doc="Random sample indices for permute_batch: a permutation of the batch (or draws with repetitions).",
    args=(Arg("allow_repetitions", "bool", False, "draw each index independently (repetitions, omissions)"),
          Arg("no_fixed_points", "bool", False, "no index equals its position (ignored for a batch of 1)")),
))
