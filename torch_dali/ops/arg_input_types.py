"""The element type a per-sample argument's data must have (an argument given a DataNode, or an
array of several values, which DALI makes a constant node: float64 arrays as float32, int64 as
int32).

DALI 2.4 reads an argument input as exactly its schema's type, float32 for a number argument and
int32 for an integer one, and fails when the pipeline runs for any other (measured for every
per-sample argument of its CPU ops with `python -m conformance.arg_sweep`: float64 and int32 data
for `rotate(angle=...)`, int64 for `flip(horizontal=...)`, float32 for `crop(crop=...)`...). Ops
that convert a few arguments themselves are listed in `_ANY_NUMBER`."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from .enum_data import enum_type_of

_WANT = {"int": torch.int32, "ints": torch.int32, "int_list": torch.int32,
         "float": torch.float32, "floats": torch.float32, "float_list": torch.float32}
# (op, argument) taking other number types (DALI 2.4, measured), or typed otherwise in DALI
_ONE = ("int", "float")
# NumPy arrays made constants: as DALI's `types.Constant` converts them
_CONSTANT = {torch.float64: torch.float32, torch.int64: torch.int32}
# (permute_batch's indices: any integer type, on purpose: conformance/on_purpose.md)
_ANY_NUMBER = frozenset({("bbox_rotate", "size"), ("bbox_rotate", "input_shape"), ("audio_resample", "out_length"),
                         ("permute_batch", "indices"), ("rotate", "size"), ("rotate", "axis"),
                         ("warp_affine", "size"), ("reshape", "src_dims"),
                         # read only for volumes: DALI checks nothing for a 2-D image
                         ("crop", "crop_pos_z"), ("crop_mirror_normalize", "crop_pos_z"),
                         ("decoders.image_crop", "crop_pos_z"), ("resize_crop_mirror", "crop_pos_z")})


def data_dtype(kind: str) -> torch.dtype | None:
    """The element type DALI reads an argument of `kind` as (None: not a number argument)."""
    return _WANT.get(kind)


def wanted(node: Any) -> dict[str, tuple[torch.dtype, bool]]:
    """Argument name -> (the torch dtype its data must have, whether one value per sample), for the
    per-sample arguments of `node` that DALI types (internal ops, named with `_`, are torch_dali's own and take what they take)."""
    schema = node.schema
    if schema.name.startswith("_"):
        return {}
    out = {}
    for k, d in node.arg_inputs.items():
        arg = schema.arg(k)
        if arg is not None and arg.kind in _WANT and (schema.name, arg.name) not in _ANY_NUMBER \
                and not arg.name.startswith("_"):  # (`_random_state`: torch_dali's own)
            # one value per sample, unless given per frame (fn.per_frame: one per frame)
            out[k] = (_WANT[arg.kind], arg.kind in _ONE and d.node.schema.name != "per_frame")
        elif arg is not None and arg.kind == "interp_type" and enum_type_of(d) is not types.INTERP_TYPE:
            out[k] = (None, False)  # DALI takes only interpolation-type data there (not int32 numbers)
    return out


def check(node: Any, name: str, t: torch.Tensor, want: tuple[torch.dtype | None, bool]) -> None:
    """Refuses one sample `t` of argument `name` holding several values where the argument takes
    one (`want[1]`; DALI 2.4 takes shape () and (1,)), or of another type than `want[0]` (DALI checks
    in that order)."""
    op = node.schema.display_name()
    if want[0] is None:
        raise ArgumentTypeError(f"{op}: per-sample argument `{name}` must hold interpolation types "
                                f"(types.Constant(types.INTERP_LINEAR), fn.cast(..., dtype=types.INTERP_TYPE)), "
                                f"got {_name(t.dtype)} numbers")
    if want[1] and t.dim() > 0 and tuple(t.shape) != (1,):
        from ._operator import not_scalar
        raise ArgumentError(f"{op}: `{name}` takes one number per sample, got a sample of shape "
                            f"{tuple(t.shape)}: {not_scalar(t.dim())}")
    if t.dtype != want[0]:
        what = "numbers" if want[0].is_floating_point else "integers"
        raise ArgumentTypeError(f"{op}: per-sample argument `{name}` must hold {what} of type {_name(want[0])}, "
                                f"got {_name(t.dtype)} data; fn.cast it first")


def _name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def constant_mismatch(kind: str, v: Any) -> bool:
    """Whether the constant node DALI makes of array `v` (float64 as float32, int64 as int32) holds
    another type than an argument of `kind` reads."""
    want = _WANT.get(kind)
    if want is None:
        return False
    dtype = v.dtype if isinstance(v, torch.Tensor) else torch.from_numpy(np.empty(0, v.dtype)).dtype
    return _CONSTANT.get(dtype, dtype) != want if isinstance(v, np.ndarray) else dtype != want


def check_batch(node: Any, want: dict[str, tuple[torch.dtype, bool]], data: Any) -> None:
    """Checks each argument's data of `node`: `data(key)` is the argument's batch or sample."""
    for k, w in want.items():
        d = data(k)
        t = d if isinstance(d, torch.Tensor) else (d[0] if len(d) else None)
        if t is not None:
            check(node, k, t, w)


def check_step(nodes: list[Any], want: dict[int, dict[str, tuple[torch.dtype, bool]]], values: dict) -> None:
    """`check_batch` for each op of an executor step (`values`: the batches by (node id, output))."""
    for n in nodes:
        if n.id in want:
            check_batch(n, want[n.id], lambda k: values[(n.arg_inputs[k].node.id, n.arg_inputs[k].index)])
