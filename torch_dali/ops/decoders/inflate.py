"""decoders.inflate (also experimental.inflate): LZ4 block-compressed chunks -> tensors.

Each input sample is 1-D uint8 bytes holding one LZ4 block (no frame, no stored size: what
`lz4.block.compress(data, store_size=False)` writes), or several when `chunk_offsets` and/or
`chunk_sizes` are given (as constants or per-sample inputs). `shape` (per sample: a scalar, a 1-D
list, or [] for a scalar output) and `dtype` (default uint8) describe one inflated chunk. As DALI
2.4 documents and tests (operator_1/test_inflate.py):

* no chunk arguments: the output is one chunk of `shape`, layout `layout`;
* with chunk arguments (even an empty list): chunks are stacked along a new outer axis (0 chunks
  give shape (0, *shape)), layout `sequence_axis_name` + `layout` when `layout` is given, else none;
* only offsets: chunks run to the next offset, the last to the sample's end; only sizes: chunks
  are packed from byte 0; both: paired, in the order given (a subset, permuted, is fine);
* a chunk that inflates to fewer bytes than `shape` needs leaves the rest zero; one that would
  inflate to more is a DataError (DALI checks that only with `check_output_size`; here always);
* offsets/sizes outside the sample, non-positive sizes, mismatched counts, a 2-D `shape`, a
  non-numeric `dtype`, non-uint8 or 0-D input, an algorithm other than LZ4, a `sequence_axis_name`
  that is not one character: errors, as DALI's.

DALI runs it on the GPU only. Here the blocks are inflated on the CPU with the `lz4` package
(`pip install torch_dali[inflate]`) and, for device="gpu", the output is moved to the input's
GPU; device="cpu" works too. Corrupt data is a DataError naming the sample, never a crash.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import torch

from ... import types
from ...errors import ArgumentError, ArgumentTypeError, DataError
from .._operator import SampleContext, Operator
from .._registry import register
from .._schema import REQUIRED, Arg, OpSchema

_NUMERIC = {torch.uint8, torch.int8, torch.uint16, torch.int16, torch.uint32, torch.int32,
            torch.uint64, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64}
_CHUNK_ARGS = ("chunk_offsets", "chunk_sizes")


def _lz4_block() -> Any:
    try:
        import lz4.block
    except ImportError:
        raise ArgumentError("decoders.inflate needs the `lz4` package (pip install "
                            "'torch_dali[inflate]' or pip install lz4)") from None
    return lz4.block


def _ints(v: Any) -> list[int] | None:
    if v is None:
        return None
    if isinstance(v, (int, np.integer)):
        return [int(v)]
    if isinstance(v, torch.Tensor):
        v = v.tolist()
    v = np.asarray(v)
    return [int(x) for x in v.reshape(-1)]


class Inflate(Operator):
    def setup(self) -> None:
        a = self.args
        self.block = _lz4_block()
        algo = str(a.get("algorithm") or "").upper()
        if algo != "LZ4":
            raise ArgumentError(f"{self.name}: unknown inflate algorithm {a.get('algorithm')!r}; "
                                "only 'LZ4' is supported")
        try:
            self.dtype = types.to_torch_dtype(a["dtype"])
        except (KeyError, ValueError, TypeError):
            self.dtype = None
        if self.dtype not in _NUMERIC:
            raise ArgumentError(f"{self.name}: the output type must be an integer or floating-point "
                                f"type, got {a['dtype']!r}")
        seq = a.get("sequence_axis_name")
        seq = "F" if seq is None else str(seq)
        if len(seq) != 1:
            raise ArgumentError(f"{self.name}: `sequence_axis_name` must be one character, got {seq!r}")
        self.seq_name = seq
        self.chunked = any(a.get(k) is not None or k in self.node.arg_inputs for k in _CHUNK_ARGS)
        self.layout = str(a.get("layout") or "")
        if "shape" not in self.node.arg_inputs:
            self._shape(a["shape"])  # a constant shape is checked at build

    def output_layout(self, index: int) -> str:
        if not self.layout:
            return ""
        return self.seq_name + self.layout if self.chunked else self.layout

    def _shape(self, v: Any) -> list[int]:
        arr = np.asarray(v.tolist() if isinstance(v, torch.Tensor) else v)
        if arr.ndim > 1:
            raise ArgumentError(f"{self.name}: `shape` must be a scalar or a 1-D list, got a "
                                f"{arr.ndim}-D one")
        dims = [int(x) for x in arr.reshape(-1)]
        if any(d < 0 for d in dims):
            raise ArgumentError(f"{self.name}: `shape` {dims} cannot have negative extents")
        return dims

    def _chunks(self, where: str, n: int, offsets: list[int] | None,
                sizes: list[int] | None) -> list[tuple[int, int]]:
        if offsets is not None and sizes is not None and len(offsets) != len(sizes):
            raise DataError(f"{where}: {len(offsets)} chunk offsets and {len(sizes)} chunk sizes; "
                            "give as many of each")
        if offsets is not None and any(o < 0 for o in offsets):
            raise DataError(f"{where}: chunk offsets must be non-negative, got {offsets}")
        if offsets is not None:
            for o in offsets:
                if o >= n:
                    raise DataError(f"{where}: chunk offset {o} is past the sample's {n} bytes")
        if sizes is None:
            if offsets is None:  # _chunks runs only when one of the two is given
                raise ArgumentError(f"{where}: give `chunk_offsets`, `chunk_sizes` or both")
            sizes = [(offsets[k + 1] if k + 1 < len(offsets) else n) - o for k, o in enumerate(offsets)]
            if any(s <= 0 for s in sizes):
                raise DataError(f"{where}: with only `chunk_offsets` each chunk runs to the next "
                                f"offset (the last to the end); that makes a chunk of {min(sizes)} bytes")
        for s in sizes:
            if s <= 0:
                raise DataError(f"{where}: chunk size {s}; chunk sizes must be positive")
            if s > n:
                raise DataError(f"{where}: a chunk of {s} bytes is larger than the sample ({n} bytes)")
        if offsets is None:
            if sum(sizes) > n:
                raise DataError(f"{where}: the chunk sizes add up to {sum(sizes)} bytes, more than "
                                f"the sample's {n}")
            offsets = list(itertools.accumulate(sizes, initial=0))[:-1]  # linear: a sum per chunk was quadratic
        for o, s in zip(offsets, sizes):
            if o + s > n:
                raise DataError(f"{where}: the chunk at {o} of {s} bytes runs past the sample's "
                                f"end ({n} bytes)")
        return list(zip(offsets, sizes))

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = inputs[0]
        where = f"{self.name}: sample {ctx.index}"
        if x.dtype != torch.uint8:
            raise ArgumentTypeError(f"{where}: the input must be uint8 bytes, got "
                                    f"{str(x.dtype).replace('torch.', '')}")
        if x.dim() != 1:
            raise ArgumentTypeError(f"{where}: the input must be a 1-D tensor of bytes, got "
                                    f"{x.dim()} dimensions")
        shape = self._shape(args.get("shape", self.args.get("shape")))
        item = torch.empty((), dtype=self.dtype).element_size()
        frame = int(np.prod(shape, dtype=np.int64)) * item
        raw = x.contiguous().cpu().numpy().tobytes()
        offsets = _ints(args.get("chunk_offsets", self.args.get("chunk_offsets")))
        sizes = _ints(args.get("chunk_sizes", self.args.get("chunk_sizes")))
        if self.chunked:
            spans = self._chunks(where, len(raw), offsets, sizes)
        else:
            spans = [(0, len(raw))]
        out = np.zeros(len(spans) * frame, np.uint8)
        for k, (o, s) in enumerate(spans):
            try:
                got = self.block.decompress(raw[o:o + s], uncompressed_size=frame) if frame else b""
            except Exception as e:  # noqa: BLE001 - lz4's error on corrupt data (LZ4BlockError)
                raise DataError(f"{where}: chunk {k} (bytes {o}..{o + s}) is not an LZ4 block that "
                                f"inflates to at most {frame} bytes ({e})") from None
            out[k * frame:k * frame + len(got)] = np.frombuffer(got, np.uint8)
        # an empty uint8 array cannot be viewed as a wider type: the empty result is made directly
        t = torch.from_numpy(out).view(self.dtype) if out.size else torch.empty(0, dtype=self.dtype)
        t = t.reshape([len(spans)] + shape if self.chunked else shape)
        return t if x.device.type == "cpu" else t.to(x.device)


register(OpSchema(
    name="decoders.inflate", impl=Inflate, devices=("cpu", "gpu"),
    doc="Inflates LZ4-compressed chunks (uint8 bytes) into tensors of a given shape and type; "
        "several chunks per sample are stacked along a new outer axis.",
    args=(
        Arg("shape", "ints", REQUIRED, "shape of one inflated chunk (a scalar, a list, or [] for a "
            "scalar)", tensor=True),
        Arg("dtype", "dtype", types.UINT8, "type of the inflated data"),
        Arg("layout", "layout", "", "layout of one inflated chunk"),
        Arg("chunk_offsets", "ints", None, "where each chunk starts in the sample", tensor=True),
        Arg("chunk_sizes", "ints", None, "the size of each chunk in the sample", tensor=True),
        Arg("sequence_axis_name", "layout", "F", "name of the chunks' axis (with `layout`)"),
        Arg("algorithm", "str", "LZ4", "the compression: only 'LZ4'"),
        Arg("check_output_size", "bool", False, "accepted; a chunk that would inflate to more than "
            "`shape` is always an error here"),
    ),
))
