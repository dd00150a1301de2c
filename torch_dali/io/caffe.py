"""Caffe `Datum` and caffe2 `TensorProtos` records parsed from the protobuf wire format, as DALI
2.4's caffe and caffe2 readers turn them into outputs.

Datum { int32 channels = 1; int32 height = 2; int32 width = 3; bytes data = 4; int32 label = 5;
repeated float float_data = 6; bool encoded = 7 }. TensorProtos { repeated TensorProto protos = 1 };
TensorProto { repeated int64 dims = 1; DataType data_type = 2 [default FLOAT]; repeated float
float_data = 3; repeated int32 int32_data = 4; bytes byte_data = 5; repeated bytes string_data = 6;
repeated int64 int64_data = 10; ... }. A later occurrence of a singular field wins, as in protobuf.
Where DALI would copy a size it did not check (raw pixels whose count differs from the header's
shape, a missing tensor) this is a DataError naming the record.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ..errors import DataError
from . import protowire as pw

# caffe2 TensorProto.DataType
FLOAT, INT32, BYTE, STRING, INT64 = 1, 2, 3, 4, 10
TYPE_NAMES = {0: "UNDEFINED", 1: "FLOAT", 2: "INT32", 3: "BYTE", 4: "STRING", 5: "BOOL", 6: "UINT8",
              7: "INT8", 8: "UINT16", 9: "INT16", 10: "INT64", 12: "FLOAT16", 13: "DOUBLE"}
# caffe2 label types (DALI's `label_type`)
SINGLE_LABEL, MULTI_LABEL_SPARSE, MULTI_LABEL_DENSE, MULTI_LABEL_WEIGHTED_SPARSE, NO_LABEL = range(5)


def _u8(data: bytes | memoryview) -> torch.Tensor:
    return torch.frombuffer(bytearray(data), dtype=torch.uint8) if len(data) else torch.zeros(0, dtype=torch.uint8)


def _wire(want: int, got: int, name: str, where: str) -> None:
    if got != want:
        raise DataError(f"{where}: malformed record (field '{name}' has protobuf wire type {got}, "
                        f"expected {want})")


def datum(raw: bytes | bytearray, where: str, image: bool, label: bool) -> list[torch.Tensor]:
    """A caffe Datum's outputs: the image (its bytes when encoded, else raw pixels of shape
    (height, width, channels)), then the label (int32, shape (1,)); each only when asked for. A
    record without data or without a label gives an empty output, as DALI 2.4's."""
    buf = memoryview(raw)
    dims = {1: 0, 2: 0, 3: 0}
    data: tuple[int, int] | None = None
    lab: int | None = None
    encoded: int | None = None
    for num, wt, v in pw.fields(buf, 0, len(buf), where):
        if num in dims:
            _wire(pw.VARINT, wt, ("channels", "height", "width")[num - 1], where)
            dims[num] = pw.int32(v)  # type: ignore[arg-type]
        elif num == 4:
            _wire(pw.LEN, wt, "data", where)
            data = v  # type: ignore[assignment]
        elif num == 5:
            _wire(pw.VARINT, wt, "label", where)
            lab = pw.int32(v)  # type: ignore[arg-type]
        elif num == 7:
            _wire(pw.VARINT, wt, "encoded", where)
            encoded = int(v)  # type: ignore[arg-type]
    out: list[torch.Tensor] = []
    if image:
        if data is None:
            out.append(torch.zeros(0, dtype=torch.uint8))
        elif encoded is None or encoded:  # DALI: raw only when `encoded` is present and false
            out.append(_u8(buf[data[0]:data[1]]))
        else:
            c, h, w = dims[1], dims[2], dims[3]
            n = data[1] - data[0]
            if min(c, h, w) < 0 or h * w * c != n:
                raise DataError(f"{where}: the Datum holds {n} bytes of raw pixels, its shape "
                                f"(height {h}, width {w}, channels {c}) needs {max(h * w * c, 0)}")
            out.append(_u8(buf[data[0]:data[1]]).reshape(h, w, c))
    if label:
        out.append(torch.tensor([lab], dtype=torch.int32) if lab is not None
                   else torch.zeros(0, dtype=torch.int32))
    return out


class TensorProto:
    """One caffe2 TensorProto: its dims, type and value fields (spans of the record)."""

    __slots__ = ("buf", "where", "dims", "data_type", "values")

    def __init__(self, buf: memoryview, span: tuple[int, int], where: str) -> None:
        self.buf, self.where = buf, where
        self.dims: list[tuple[int, Any]] = []
        self.data_type = FLOAT  # protobuf default
        self.values: dict[int, list[tuple[int, Any]]] = {}
        for num, wt, v in pw.fields(buf, span[0], span[1], where):
            if num == 1:
                self.dims.append((wt, v))
            elif num == 2:
                _wire(pw.VARINT, wt, "data_type", where)
                self.data_type = int(v)  # type: ignore[arg-type]
            elif num in (3, 4, 5, 6, 10):
                self.values.setdefault(num, []).append((wt, v))

    @property
    def type_name(self) -> str:
        return TYPE_NAMES.get(self.data_type, str(self.data_type))

    def shape(self) -> list[int]:
        return pw.repeated_ints(self.buf, self.dims, self.where).tolist()

    def numbers(self) -> torch.Tensor:
        """The values of a FLOAT (float32), INT32 (int32) or INT64 (int64) tensor, 1-D."""
        got = self.values.get({FLOAT: 3, INT32: 4, INT64: 10}.get(self.data_type, -1), [])
        if self.data_type == FLOAT:
            a = pw.repeated_fixed(self.buf, got, "<f4", self.where).astype(np.float32)
        elif self.data_type == INT32:
            a = pw.repeated_ints(self.buf, got, self.where).astype(np.int32)  # int32: the low 32 bits
        elif self.data_type == INT64:
            a = pw.repeated_ints(self.buf, got, self.where)
        else:
            raise DataError(f"{self.where}: a tensor of type {self.type_name}, where FLOAT, INT32 or "
                            "INT64 values are read")
        return torch.from_numpy(np.ascontiguousarray(a))

    def bytes_field(self, num: int) -> memoryview | None:
        got = self.values.get(num)
        if not got:
            return None
        wt, v = got[-1] if num == 5 else got[0]
        _wire(pw.LEN, wt, "byte_data" if num == 5 else "string_data", self.where)  # before unpacking v
        a, b = v  # type: ignore[misc]
        return self.buf[a:b]


def tensor_protos(raw: bytes | bytearray, where: str) -> list[TensorProto]:
    buf = memoryview(raw)
    out = []
    for num, wt, v in pw.fields(buf, 0, len(buf), where):
        if num == 1:
            _wire(pw.LEN, wt, "protos", where)
            out.append(TensorProto(buf, v, where))  # type: ignore[arg-type]
    return out


def caffe2_image(t: TensorProto, where: str) -> torch.Tensor:
    """STRING: the first string's bytes (an encoded image); BYTE: raw pixels (H, W[, C])."""
    if t.data_type == STRING:
        s = t.bytes_field(6)
        if s is None:
            raise DataError(f"{where}: the image tensor (STRING) holds no string")
        return _u8(s)
    if t.data_type == BYTE:
        dims = t.shape()
        if len(dims) not in (2, 3) or min(dims) < 0:
            raise DataError(f"{where}: the image tensor (BYTE) has dims {dims}; (H, W) or (H, W, C) "
                            "are read")
        h, w, c = dims[0], dims[1], dims[2] if len(dims) == 3 else 1
        data = t.bytes_field(5)
        n = 0 if data is None else len(data)
        if n != h * w * c:
            raise DataError(f"{where}: Image data size mismatch: the image tensor holds {n} bytes, its dims "
                            f"{dims} need {h * w * c}")
        return _u8(data if data is not None else b"").reshape(h, w, c)
    raise DataError(f"{where}: the image tensor has type {t.type_name}; STRING (encoded) or BYTE "
                    "(raw pixels) are read")


def label_outputs(label_type: int) -> int:
    """How many outputs DALI gives a caffe2 label type: none without labels, two for the sparse
    types (indices, and weights for the weighted one), one otherwise."""
    if label_type == NO_LABEL:
        return 0
    return 2 if label_type in (MULTI_LABEL_SPARSE, MULTI_LABEL_WEIGHTED_SPARSE) else 1


def _check_sparse(protos: list[TensorProto], k: int, where: str, label_type: int, num_labels: int) -> None:
    """Sparse labels: the indices are checked against `num_labels` (a record naming a class out of
    range is an error, as in DALI); in range, the record is refused all the same, as DALI 2.4
    fails on it (it never fills the label outputs it declares)."""
    t = protos[k]
    if t.data_type not in (INT32, INT64):
        raise DataError(f"{where}: the sparse label tensor has type {t.type_name}; INT32 indices are read")
    idx = t.numbers()
    bad = idx[(idx < 0) | (idx >= num_labels)]
    if bad.numel():
        raise DataError(f"{where}: Label index out of bounds: the sparse label names class {int(bad[0])}, "
                        f"num_labels is {num_labels} (classes 0..{num_labels - 1})")
    raise DataError(f"{where}: label_type {label_type} (sparse labels) cannot be read: DALI 2.4 declares "
                    "two label outputs for it and fails to fill them; store dense labels (label_type=2)")


def caffe2(raw: bytes | bytearray, where: str, image: bool, label_type: int, additional: int,
           bbox: bool, num_labels: int = 1) -> list[torch.Tensor]:
    """A caffe2 record's outputs: image, label, `additional` tensors, then the box (int32, 4)."""
    protos = tensor_protos(raw, where)
    label_protos = 2 if label_type == MULTI_LABEL_WEIGHTED_SPARSE else int(label_type != NO_LABEL)
    want = int(image) + label_protos + additional + int(bbox)
    if len(protos) < want:
        raise DataError(f"{where}: the record holds {len(protos)} tensors, the reader's arguments "
                        f"(image_available, label_type, additional_inputs, bbox) need {want}")
    out: list[torch.Tensor] = []
    k = 0
    if image:
        out.append(caffe2_image(protos[0], where))
        k = 1
    if label_type in (MULTI_LABEL_SPARSE, MULTI_LABEL_WEIGHTED_SPARSE):
        _check_sparse(protos, k, where, label_type, num_labels)
    if label_type != NO_LABEL:
        t = protos[k]
        if t.data_type not in (FLOAT, INT32):
            raise DataError(f"{where}: the label tensor has type {t.type_name}; FLOAT or INT32 are read")
        values = t.numbers()
        if label_type == SINGLE_LABEL and values.numel() != 1:
            raise DataError(f"{where}: label_type 0 (single label) needs one label value, the "
                            f"record has {values.numel()}")
        out.append(values)
        k += 1
    for t in protos[k:k + additional]:
        out.append(t.numbers())
    k += additional
    if bbox:
        t = protos[k]
        box = t.numbers() if t.data_type == INT32 else None
        if box is None or box.numel() != 4:
            raise DataError(f"{where}: the bounding box tensor must be INT32 with 4 values, got "
                            f"{t.type_name} with {math.prod(box.shape) if box is not None else '?'}")
        out.append(box)
    return out
