"""Batched host work in one C call each: reading a batch of files, parsing a batch of image headers.

Per-sample Python (open/fstat/readinto, struct-based header parsing) holds the GIL for ~10 µs a
sample, which is what bounds the host side of a GPU pipeline. `_native/csrc/cpu/host_io.c` does
the same work for a whole batch in one ctypes call (file reads release the GIL; the header parse,
short, keeps it). It is built on first use (`torch_dali._native.helpers`); without a compiler, or
with `TORCH_DALI_NO_HOST_IO=1`, `available()` is False and the same functions run in pure Python
with identical results (`headers` is the Python parse the C one mirrors).
"""
from __future__ import annotations

import ctypes
import errno
import itertools
import os
import stat
from typing import Any, Callable, Sequence

import numpy as np
import torch

from .._native import helpers
from ..packed import PackedSamples
from . import headers

_GREW = -1  # TD_GREW: the file holds more bytes than its stat said
_FIELDS = 8  # int32s per header in td_image_infos' output
_CHUNK = 64  # files per C call when a batch is read on a pool's threads
_INT32_MAX = 2**31 - 1
_PNG_SIG = b"\x89PNG\r\n\x1a\n"


LIB = helpers.HOST_IO
_load = LIB.load


def available() -> bool:
    """Whether the C library is built and loaded (builds it on the first call)."""
    return _load() is not None


def unavailable_reason() -> str:
    """Why `available()` is False ("" when it is True or was not asked yet)."""
    return LIB.reason


# -- files -----------------------------------------------------------------------------------------

NOT_REGULAR = "not a regular file (a FIFO, socket or device)"


def _error(code: int | None, path: object) -> OSError:
    code = code or errno.EIO
    text = os.strerror(code)
    if code == errno.EISDIR:  # the C reader's code for every file that is not a regular one
        try:
            text = text if stat.S_ISDIR(os.stat(path).st_mode) else NOT_REGULAR  # type: ignore[arg-type]
        except (OSError, TypeError, ValueError):
            text = NOT_REGULAR
    return OSError(code, text, path)  # OSError(ENOENT, ...) is a FileNotFoundError


def _nul_error(path: object) -> OSError:
    return OSError(errno.EINVAL, "embedded null byte in the file name", path)


def _too_large(path: object, size: int) -> OSError:
    return OSError(errno.ENOMEM, f"{os.strerror(errno.ENOMEM)} for its {size} bytes", path)


def _slab(size: int) -> torch.Tensor | None:
    """A batch's uint8 buffer, or None when it cannot be allocated (a huge sparse file's size)."""
    try:
        return torch.empty(size, dtype=torch.uint8)
    except (RuntimeError, MemoryError):  # torch's "DefaultCPUAllocator: can't allocate memory"
        return None


def open_regular(path: str | bytes | os.PathLike) -> int:
    """A read-only descriptor of a regular file (symlinks followed). Never blocks: opened with
    O_NONBLOCK, so a path swapped for a FIFO cannot hang the caller in open(), then refused by
    fstat (OSError EISDIR, "not a regular file ...") before anything is read."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise OSError(errno.EISDIR, os.strerror(errno.EISDIR) if stat.S_ISDIR(mode) else NOT_REGULAR,
                      os.fsdecode(path) if isinstance(path, bytes) else path)
    return fd


def read_file(path: str | os.PathLike) -> torch.Tensor:
    """One whole regular file as a 1-D uint8 tensor, never blocking on a FIFO; raises OSError."""
    got = _read_one(path, os.fsencode(path))
    if isinstance(got, OSError):
        raise got
    return got


def _read_one(path: object, name: bytes) -> torch.Tensor | OSError:
    """One whole file, as the C code reads it (regular files only, never blocking on a FIFO)."""
    if b"\0" in name:
        return _nul_error(path)
    try:
        fd = open_regular(name)
    except OSError as e:
        return _error(e.errno, path)
    try:
        with open(fd, "rb", buffering=0) as f:
            st = os.fstat(fd)
            try:
                buf, got = bytearray(st.st_size), 0
            except MemoryError:  # a huge (sparse) file: name it, not the allocator
                return _too_large(path, st.st_size)
            with memoryview(buf) as view:
                while got < len(buf):
                    k = f.readinto(view[got:])
                    if not k:
                        break
                    got += k
            if got < len(buf):  # shrank since the fstat
                del buf[got:]
            else:
                buf += f.read()  # grew since the fstat: the rest, up to EOF
    except OSError as e:
        return _error(e.errno, path)
    return torch.frombuffer(buf, dtype=torch.uint8) if buf else torch.empty(0, dtype=torch.uint8)


def read_files(paths: Sequence[str | os.PathLike]) -> list[torch.Tensor | OSError]:
    """Each file whole, as a 1-D uint8 tensor: views into one slab for the batch (so keeping one
    keeps the batch's bytes alive), or an OSError (errno, strerror, filename) in a failing file's
    place. Only regular files are read; anything else is EISDIR."""
    names = [os.fsencode(p) for p in paths]
    n = len(names)
    lib = _load()
    if lib is None or n == 0:
        return [_read_one(p, b) for p, b in zip(paths, names)]
    c_names: list[bytes | None] = names
    if b"\0" in b"".join(names):  # C would read a shorter name: pass NULL (EFAULT) instead
        c_names = [None if b"\0" in b else b for b in names]
    c_paths = (ctypes.c_char_p * n)(*c_names)
    sizes, stat_errs = (ctypes.c_int64 * n)(), (ctypes.c_int * n)()
    bad = lib.td_file_sizes(c_paths, n, sizes, stat_errs)  # a failure's size is -1: not read
    caps = [max(c, 0) for c in sizes] if bad else sizes[:]
    offsets = (ctypes.c_int64 * (n + 1))(*itertools.accumulate(caps, initial=0))
    slab = _slab(offsets[n])
    if slab is None:  # file by file: each that fits is read, the one too large is named
        return [_read_one(p, b) for p, b in zip(paths, names)]
    got, read_errs = (ctypes.c_int64 * n)(), (ctypes.c_int * n)()
    bad += lib.td_read_files(c_paths, n, slab.data_ptr(), offsets, sizes, got, read_errs)
    out: list[torch.Tensor | OSError] = list(torch.split(slab, caps))
    gots = got[:]
    if not bad and gots == caps:
        return out
    for i, (p, cap, k, se, re) in enumerate(zip(paths, caps, gots, stat_errs[:], read_errs[:])):
        if c_names[i] is None:
            out[i] = _nul_error(p)
        elif se:
            out[i] = _error(se, p)
        elif re == _GREW:
            out[i] = _read_one(p, names[i])
        elif re:
            out[i] = _error(re, p)
        elif k != cap:  # shrank since the stat
            out[i] = out[i][:k]
    return out


def read_files_packed(paths: Sequence[str | os.PathLike],
                      run: Callable[[Callable[[int], Any], int], Any] | None = None) -> PackedSamples | None:
    """Each file whole, as parts of one slab (no tensor per file), or None when the C library is
    not there or any file fails, is not regular or changed size upwards since its stat
    (`read_files` then says which, naming it). `run(fn, k)` runs fn(0..k-1) (a pool's `map`): the
    files are stat'ed, then read, in chunks of 64 on its threads, the GIL released."""
    lib = _load()
    n = len(paths)
    if lib is None or n == 0:
        return None
    names = [os.fsencode(p) for p in paths]
    if b"\0" in b"".join(names):
        return None
    c_paths = (ctypes.c_char_p * n)(*names)
    step = ctypes.sizeof(ctypes.c_char_p)
    sizes, got = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    errs = np.zeros(n, dtype=np.intc)
    offsets = np.zeros(n, dtype=np.int64)
    chunks = [(a, min(a + _CHUNK, n)) for a in range(0, n, _CHUNK)]
    run = run or (lambda fn, k: [fn(i) for i in range(k)])

    def at(a: int) -> Any:
        return ctypes.cast(ctypes.addressof(c_paths) + a * step, ctypes.POINTER(ctypes.c_char_p))

    def ptr(arr: np.ndarray, a: int, kind: Any) -> Any:
        return ctypes.cast(arr.ctypes.data + a * arr.itemsize, ctypes.POINTER(kind))

    def stat(k: int) -> int:
        a, b = chunks[k]
        return lib.td_file_sizes(at(a), b - a, ptr(sizes, a, ctypes.c_int64), ptr(errs, a, ctypes.c_int))

    if sum(run(stat, len(chunks))):
        return None
    np.cumsum(sizes[:-1], out=offsets[1:])
    slab = _slab(int(sizes.sum()))
    if slab is None:
        return None
    base = slab.data_ptr()

    def read(k: int) -> int:
        a, b = chunks[k]
        return lib.td_read_files(at(a), b - a, base, ptr(offsets, a, ctypes.c_int64), ptr(sizes, a, ctypes.c_int64),
                                 ptr(got, a, ctypes.c_int64), ptr(errs, a, ctypes.c_int))

    if sum(run(read, len(chunks))):
        return None
    return PackedSamples.make(slab, offsets, got)  # a file that shrank since its stat: the bytes read


def pread_ranges(fd: int, src: np.ndarray, sizes: np.ndarray, buf: torch.Tensor, dst: np.ndarray) -> np.ndarray:
    """Reads `sizes[i]` bytes at `src[i]` of the open file `fd` into the uint8 tensor `buf` at
    `dst[i]`, for every i, in one C call (the GIL released); the bytes read for each (fewer where
    the file ended: it shrank). The caller checks that every range fits `buf`."""
    src, sizes, dst = (np.ascontiguousarray(a, dtype=np.int64) for a in (src, sizes, dst))
    got = np.zeros(len(src), dtype=np.int64)
    lib = _load()
    if lib is not None:
        p64 = ctypes.POINTER(ctypes.c_int64)
        lib.td_pread_ranges(fd, len(src), src.ctypes.data_as(p64), sizes.ctypes.data_as(p64), buf.data_ptr(),
                            dst.ctypes.data_as(p64), got.ctypes.data_as(p64))
        return got
    view = memoryview(buf.numpy()).cast("B")
    for i, (a, n, d) in enumerate(zip(src.tolist(), sizes.tolist(), dst.tolist())):
        got[i] = pread_into(fd, view[d:d + n], a)
    return got


def pread_into(fd: int, view: memoryview, offset: int) -> int:
    """Fills `view` from `offset` of the open file `fd` (preadv until full or the file ends); the
    bytes read (fewer: the file ended there, or shrank since its size was taken)."""
    got, n = 0, len(view)
    while got < n:
        k = os.preadv(fd, [view[got:]], offset + got)
        if k <= 0:
            break
        got += k
    return got


# -- image headers ---------------------------------------------------------------------------------

def _usable(d: object) -> bool:
    return (isinstance(d, torch.Tensor) and d.dtype == torch.uint8 and d.dim() == 1 and d.is_cpu
            and d.is_contiguous())


def _py_info(d: object) -> headers.ImageInfo | None:
    """What the C code answers, in Python: decode.py's JPEG/PNG parse, None where it would raise."""
    if not _usable(d) or d.numel() == 0:
        return None
    b = memoryview(d.numpy())
    head = bytes(b[:8])
    try:
        if head[:2] == b"\xff\xd8":
            info = headers.jpeg_info(b)
        elif head == _PNG_SIG:
            info = headers.png_info(b)
        else:
            return None
    except Exception:
        return None
    return info if info.height <= _INT32_MAX and info.width <= _INT32_MAX else None


def image_infos(datas: Sequence[torch.Tensor]) -> list[headers.ImageInfo | None]:
    """`peek_image_info` for a batch of encoded JPEG/PNG buffers (1-D uint8 CPU tensors). None
    where the header is not a JPEG/PNG one this parser takes, or is one `peek_image_info` would
    reject, or the tensor is not contiguous 1-D uint8 CPU: call `peek_image_info` for those."""
    table = image_info_table(datas)
    if table is None:
        return [_py_info(d) for d in datas]
    return [None if row[0] else _info(tuple(row[1:])) for row in table.tolist()]


def image_info_table(datas: Sequence[torch.Tensor] | PackedSamples) -> np.ndarray | None:
    """The C parse of a batch's headers as one (n, 8) int32 array, no object per sample: columns
    failed (non-zero: what `image_infos` gives None for), format (1 JPEG, 2 PNG), height, width,
    channels, EXIF orientation, progressive, bit depth. None when the C helper is not built.
    The parse holds the GIL (a few microseconds a header): a decoding lane asks every batch, and
    a short release lets another thread take the GIL for up to Python's switch interval. Packed
    samples (one uint8 CPU buffer) are read in place, with no Python work per sample."""
    n = len(datas)
    parse = LIB.holding_gil("td_image_infos")
    if parse is None:
        return None
    out = np.zeros((n, _FIELDS), dtype=np.int32)
    if n == 0:
        return out
    if isinstance(datas, PackedSamples):
        if not _usable(datas.buffer):
            return None
        # NumPy arrays of the same layout as C's void*[] and int64_t[]: no ctypes object per sample
        addrs = datas.addresses()
        lens = np.ascontiguousarray(datas.sizes, dtype=np.int64)
        parse(addrs.ctypes.data_as(ctypes.POINTER(ctypes.c_void_p)), lens.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
              n, out.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)))
        return out
    ok = [_usable(d) for d in datas]
    ptrs = (ctypes.c_void_p * n)(*[d.data_ptr() if u else None for d, u in zip(datas, ok)])
    lens = (ctypes.c_int64 * n)(*[d.numel() if u else 0 for d, u in zip(datas, ok)])
    parse(ptrs, lens, n, out.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)))
    return out


_infos: dict[tuple[int, ...], headers.ImageInfo] = {}


def _info(key: tuple[int, ...]) -> headers.ImageInfo:
    """ImageInfo is frozen, so equal headers share one: a dict hit costs a fraction of building one."""
    info = _infos.get(key)
    if info is None:
        if len(_infos) >= 4096:  # datasets of many sizes: bound the memory, not the hit rate
            _infos.clear()
        fmt, h, w, c, orientation, progressive, depth = key
        info = _infos[key] = headers.ImageInfo("jpeg" if fmt == 1 else "png", h, w, c, orientation,
                                               progressive == 1, depth, progressive == 2)
    return info
