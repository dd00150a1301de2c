"""NumPy `.npy` files as `numpy.save` writes them: the header, and the array (or a region of it).

Format: the magic `\\x93NUMPY`, a version (1.0: 2-byte header length; 2.0/3.0: 4 bytes), then a
Python dict literal with 'descr', 'fortran_order' and 'shape', padded, then the raw data. The
header is parsed with a strict pattern, never evaluated. Types are DALI 2.4's: bool, signed and
unsigned 8/16/32/64-bit integers, float16/32/64, little-endian (or byte-order free); anything else
(complex, strings, objects, structured, big-endian) is refused naming the file. Versions 2 and 3
are read too (DALI reads only 1.0). Fortran-order arrays come out in C order with their shape.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from typing import Callable

import torch

from ..errors import DataError

MAGIC = b"\x93NUMPY"
MAX_HEADER = 65535  # a version-1 header's limit; larger ones (v2/v3) are refused as suspicious
_TYPES = {
    "b1": torch.bool, "i1": torch.int8, "u1": torch.uint8, "i2": torch.int16, "u2": torch.uint16,
    "i4": torch.int32, "u4": torch.uint32, "i8": torch.int64, "u8": torch.uint64, "f2": torch.float16,
    "f4": torch.float32, "f8": torch.float64,
}
_DESCR = re.compile(r"""['"]descr['"]\s*:\s*(['"])([^'"]*)\1""")
_FORTRAN = re.compile(r"""['"]fortran_order['"]\s*:\s*(True|False)\b""")
_SHAPE = re.compile(r"""['"]shape['"]\s*:\s*\(([^()]*)\)""")
_DIM = re.compile(r"\s*([0-9]+)\s*")
_INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class NpyHeader:
    dtype: torch.dtype
    shape: tuple[int, ...]
    fortran_order: bool
    data_offset: int

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * torch.empty(0, dtype=self.dtype).element_size()


def header_size(prefix: bytes, where: str) -> tuple[int, int]:
    """(offset of the dict, its length) from the file's first 12 bytes."""
    if len(prefix) < 10 or not prefix.startswith(MAGIC):
        raise DataError(f"{where}: not a NumPy .npy file (no \\x93NUMPY magic)")
    major = prefix[6]
    if major == 1:
        return 10, struct.unpack_from("<H", prefix, 8)[0]
    if major in (2, 3):
        if len(prefix) < 12:
            raise DataError(f"{where}: the .npy header is truncated")
        n = struct.unpack_from("<I", prefix, 8)[0]
        if n > MAX_HEADER:
            raise DataError(f"{where}: the .npy header claims {n} bytes, more than {MAX_HEADER}")
        return 12, n
    raise DataError(f"{where}: unsupported .npy format version {major}.{prefix[7]}")


def parse_header(text: bytes, offset: int, where: str) -> NpyHeader:
    """The dict of a .npy header (bytes after the length field), with the data's offset."""
    try:
        s = text.decode("latin-1" if offset == 10 else "utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{where}: the .npy header is not text") from None
    if not s.lstrip().startswith("{"):
        raise DataError(f"{where}: the .npy header is not a dict")
    d, f, sh = _DESCR.search(s), _FORTRAN.search(s), _SHAPE.search(s)
    if d is None:
        if re.search(r"""['"]descr['"]\s*:\s*\[""", s):
            raise DataError(f"{where}: structured NumPy arrays are not supported")
        raise DataError(f"{where}: the .npy header has no 'descr'")
    if f is None or sh is None:
        raise DataError(f"{where}: the .npy header lacks 'fortran_order' or 'shape'")
    descr = d.group(2)
    order, code = (descr[0], descr[1:]) if descr[:1] in "<>|=" and descr else ("|", descr)
    if order == ">" and code not in ("b1", "i1", "u1"):
        raise DataError(f"{where}: big-endian .npy data ({descr!r}) is not supported")
    dtype = _TYPES.get(code)
    if dtype is None:
        raise DataError(f"{where}: Unknown Numpy type string {descr!r}: not supported (bool, integers and float16/32/64 "
                        "are read; complex, strings, objects and long double are not)")
    dims = [p for p in sh.group(1).split(",")]
    if dims and not dims[-1].strip():
        dims.pop()
    shape = []
    for p in dims:
        m = _DIM.fullmatch(p)
        if m is None:
            raise DataError(f"{where}: bad .npy shape ({sh.group(1)!r})")
        digits = m.group(1).lstrip("0") or "0"
        if len(digits) > 19:  # int() of over 4300 digits raises ValueError
            raise DataError(f"{where}: the .npy shape has an extent of {len(digits)} digits, "
                            "which does not fit 64 bits")
        shape.append(int(digits))
    if len(shape) > 64:
        raise DataError(f"{where}: the .npy array has {len(shape)} dimensions (at most 64)")
    # a zero extent makes nbytes 0 whatever the others are; tensors' strides still multiply them
    if math.prod(max(n, 1) for n in shape) * torch.empty(0, dtype=dtype).element_size() > _INT64_MAX:
        raise DataError(f"{where}: the .npy shape {tuple(shape)} has extents whose product does not "
                        "fit 64 bits")
    return NpyHeader(dtype, tuple(shape), f.group(1) == "True", offset + len(text))


def read_header(read: Callable[[int, int], bytes], size: int, where: str) -> NpyHeader:
    """The header of a file of `size` bytes, read through `read(offset, n)`."""
    prefix = read(0, min(12, size))
    start, n = header_size(prefix, where)
    if start + n > size:
        raise DataError(f"{where}: the .npy header runs past the end of the file ({size} bytes)")
    h = parse_header(read(start, n), start, where)
    if h.data_offset + h.nbytes > size:
        raise DataError(f"{where}: the .npy data ({h.nbytes} bytes for shape {h.shape}) runs past the "
                        f"end of the file ({size} bytes): it is truncated")
    return h



def as_array(h: NpyHeader, data: bytes | bytearray | memoryview) -> torch.Tensor:
    """The array from its raw bytes (at least nbytes), as a view with its logical shape."""
    n = math.prod(h.shape)
    flat = (torch.frombuffer(data, dtype=h.dtype, count=n) if n else torch.empty(0, dtype=h.dtype))
    if h.fortran_order and len(h.shape) > 1:
        return flat.view(tuple(reversed(h.shape))).permute(*reversed(range(len(h.shape))))
    return flat.view(h.shape)
