"""box_encoder in C (`_native/csrc/cpu/box_encoder.c`), a stand-in for
`functional.detection.box_encoder_batch` (registered with the dispatch): one scan per sample over its
real boxes and the anchors, then each anchor's encoding, where the spec builds B x N x M IoU tensors
and some thirty passes over them (SSD's 8732 anchors: ~25x DALI's CPU time). CPU float32; the
labels are gathered by torch; NaN IoUs go to the spec (tests/test_box_encoder_native.py holds it to
the spec, bit for bit)."""
from __future__ import annotations

import torch

from ..._native import helpers
from ...functional import detection as K
from .._dispatch import register_fast_function


def box_encoder_batch(boxes: torch.Tensor, labels: torch.Tensor, counts: torch.Tensor, anchors: torch.Tensor,
                      criteria: float, offset: bool, scale: float, means: list[float], stds: list[float],
                      plain: bool = False) -> tuple[torch.Tensor, torch.Tensor] | None:
    """`K.box_encoder_batch`, or None for a call the helper does not take."""
    if plain or boxes.device.type != "cpu" or anchors.device.type != "cpu" or boxes.dtype != torch.float32 \
            or anchors.dtype != torch.float32 or boxes.dim() != 3 or boxes.shape[1] == 0 or anchors.shape[0] == 0:
        return None
    got = helpers.box_encode(boxes, counts, anchors, criteria, offset, scale, means, stds)
    if got is None:
        return None
    enc, best_box, matched = got
    out_labels = torch.where(matched, torch.gather(labels, 1, best_box), torch.zeros((), dtype=labels.dtype))
    return enc, out_labels


register_fast_function(K.box_encoder_batch, box_encoder_batch)
