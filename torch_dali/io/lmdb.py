"""LMDB databases (a folder's `data.mdb`) read without liblmdb: the main database's B+tree is walked
from the newest valid meta page, and every record is located as byte ranges of the file (its key,
its value), in key order, as an LMDB cursor visits them.

Why not the `lmdb` package: liblmdb trusts the file. Header bytes of a few pages changed at random
crashed the reading process in 7 of 300 tries here (SIGBUS, or an assertion's abort). Here every
page number, pointer and length is checked against the page and the file that hold it, a page is
visited at most once and the tree's depth is bounded, so a corrupt or forged file is a DataError
naming it: no crash, no loop, memory in proportion to the records listed. Listing reads the branch
and leaf pages only; values (inline, or on overflow pages, whose header is checked when read) are
read per sample.

Read: the unnamed database of an LMDB written by a 64-bit little-endian build (8-byte page
numbers; any page size). Refused with a DataError: DUPSORT records and named sub-databases (caffe
and caffe2 databases use neither).
"""
from __future__ import annotations

import struct
from typing import Callable, NamedTuple

import numpy as np

from ..errors import DataError

MAGIC = 0xBEEFC0DE
DATA_VERSION = 1
PAGE_HEADER = 16  # pgno u64, pad u16, flags u16, lower u16, upper u16 (or overflow pages u32)
NODE_HEADER = 8  # lo u16, hi u16, flags u16, key size u16
P_BRANCH, P_LEAF, P_OVERFLOW, P_META, P_LEAF2 = 0x01, 0x02, 0x04, 0x08, 0x20
F_BIGDATA, F_SUBDATA, F_DUPDATA = 0x01, 0x02, 0x04
NO_ROOT = (1 << 64) - 1
MAX_DEPTH = 64  # a B+tree of 4 KiB pages is under 10 levels deep for any file that fits a disk

# read(offset, size) -> bytes: exactly `size` bytes (the caller's file raises when it cannot)
Read = Callable[[int, int], "bytes | bytearray"]


class Entries(NamedTuple):
    """Where each record is, in key order: int64 arrays of file offsets and sizes; `big` marks a
    value on overflow pages (its offset is then the first overflow page, header included)."""
    key_offset: np.ndarray
    key_size: np.ndarray
    value_offset: np.ndarray
    value_size: np.ndarray
    big: np.ndarray
    page_size: int


class _Meta(NamedTuple):
    page_size: int
    depth: int
    entries: int
    root: int
    last_page: int
    txnid: int
    flags: int


def _meta(raw: bytes | bytearray, page: int, page_size: int | None) -> _Meta | None:
    """A meta page's main-database record, or None where the page is not a valid meta page."""
    if len(raw) < 152:
        return None
    pgno, _, flags = struct.unpack_from("<QHH", raw, 0)
    magic, version = struct.unpack_from("<II", raw, 16)
    if magic != MAGIC or version != DATA_VERSION or not flags & P_META or pgno != page:
        return None
    psize = struct.unpack_from("<I", raw, 40)[0]  # kept in the free database's pad field
    db_flags, depth = struct.unpack_from("<HH", raw, 92)
    entries, root = struct.unpack_from("<QQ", raw, 120)
    last_page, txnid = struct.unpack_from("<QQ", raw, 136)
    if page_size is not None and psize != page_size:
        return None
    return _Meta(psize, depth, entries, root, last_page, txnid, db_flags)


def list_entries(read: Read, file_size: int, where: str) -> Entries:
    """Every record of the database in `read` (a file of `file_size` bytes), in key order."""
    if file_size < 2 * 512:
        raise DataError(f"{where}: not an LMDB database ({file_size} bytes; the two meta pages "
                        "alone are larger)")
    m0 = _meta(read(0, 152), 0, None)
    if m0 is None:
        raise DataError(f"{where}: not an LMDB database (no valid meta page at byte 0: the magic "
                        f"number {MAGIC:#x} and version {DATA_VERSION} are missing)")
    psize = m0.page_size
    if psize < 512 or psize > 1 << 16 or psize & (psize - 1):
        raise DataError(f"{where}: corrupt LMDB meta page (page size {psize})")
    m1 = _meta(read(psize, 152), 1, psize) if file_size >= psize + 152 else None
    meta = m0 if m1 is None or m0.txnid >= m1.txnid else m1
    if meta.flags & 0x04:  # MDB_DUPSORT
        raise DataError(f"{where}: the LMDB database has duplicate keys (DUPSORT); not supported")
    pages = min(file_size // psize, meta.last_page + 1)
    empty = np.zeros(0, np.int64)
    if meta.root == NO_ROOT or meta.entries == 0:
        return Entries(empty, empty, empty, empty, np.zeros(0, bool), psize)
    if meta.depth < 1 or meta.depth > MAX_DEPTH:
        raise DataError(f"{where}: corrupt LMDB meta page (tree depth {meta.depth})")
    walker = _Walker(read, psize, pages, meta.depth, where)
    walker.walk(meta.root)
    out = walker.entries()
    if len(out.key_offset) != meta.entries:
        raise DataError(f"{where}: corrupt LMDB database (the meta page counts {meta.entries} records, "
                        f"its tree holds {len(out.key_offset)})")
    return out


class _Walker:
    """Walks the tree depth-first, children in order, collecting the leaves' records."""

    def __init__(self, read: Read, psize: int, pages: int, depth: int, where: str) -> None:
        self.read, self.psize, self.pages, self.depth, self.where = read, psize, pages, depth, where
        self.seen: set[int] = set()
        self.parts: list[tuple[np.ndarray, ...]] = []

    def _corrupt(self, pgno: int, why: str) -> DataError:
        return DataError(f"{self.where}: corrupt LMDB database (page {pgno}: {why})")

    def walk(self, root: int) -> None:
        stack = [(root, 1)]
        while stack:
            pgno, level = stack.pop()
            if pgno < 2 or pgno >= self.pages:
                raise self._corrupt(pgno, f"page number outside the file's {self.pages} pages")
            if pgno in self.seen:
                raise self._corrupt(pgno, "reached twice (the tree has a cycle)")
            self.seen.add(pgno)
            page = np.frombuffer(bytes(self.read(pgno * self.psize, self.psize)), np.uint8)
            ptrs, nodes = self._nodes(page, pgno, leaf=level == self.depth)
            if level < self.depth:
                lo, hi, fl = (nodes[:, k].astype(np.int64) for k in range(3))
                children = lo | hi << 16 | fl << 32
                stack.extend((int(c), level + 1) for c in children[::-1])
            else:
                self._leaf(page, pgno, ptrs, nodes)

    def _nodes(self, page: np.ndarray, pgno: int, leaf: bool) -> tuple[np.ndarray, np.ndarray]:
        """The page's node offsets and their four u16 header fields (n x 4), checked."""
        p_pgno, _, flags, lower, upper = struct.unpack_from("<QHHHH", page, 0)
        if p_pgno != pgno:
            raise self._corrupt(pgno, f"its header says page {p_pgno}")
        want = P_LEAF if leaf else P_BRANCH
        if flags & P_LEAF2:
            raise DataError(f"{self.where}: the LMDB database has fixed-size duplicate records "
                            "(DUPFIXED); not supported")
        if not flags & want or flags & (P_OVERFLOW | P_META):
            kind = "leaf" if leaf else "branch"
            raise self._corrupt(pgno, f"a {kind} page was expected at this depth, flags are {flags:#x}")
        if not PAGE_HEADER <= lower <= upper <= self.psize or lower % 2:
            raise self._corrupt(pgno, f"free space bounds {lower}..{upper}")
        ptrs = page[PAGE_HEADER:lower].view("<u2").astype(np.int64)
        if ptrs.size == 0:
            raise self._corrupt(pgno, "no records")
        if (ptrs < upper).any() or (ptrs + NODE_HEADER > self.psize).any() or (ptrs % 2).any():
            raise self._corrupt(pgno, "a record pointer outside the page's data")
        words = page.view("<u2")
        idx = ptrs // 2
        nodes = np.stack([words[idx + k] for k in range(4)], axis=1)
        return ptrs, nodes

    def _leaf(self, page: np.ndarray, pgno: int, ptrs: np.ndarray, nodes: np.ndarray) -> None:
        lo, hi, fl, ks = (nodes[:, k].astype(np.int64) for k in range(4))
        if (fl & (F_SUBDATA | F_DUPDATA)).any():
            raise DataError(f"{self.where}: the LMDB database holds named sub-databases or duplicate "
                            "keys; only a plain key-value database is read")
        dsize = lo | hi << 16
        key_at = ptrs + NODE_HEADER
        data_at = key_at + ks
        big = (fl & F_BIGDATA) != 0
        end = data_at + np.where(big, 8, dsize)
        if (end > self.psize).any():
            raise self._corrupt(pgno, "a record runs past the end of its page")
        base = pgno * self.psize
        value = base + data_at
        for k in np.flatnonzero(big):
            ov = int.from_bytes(page[data_at[k]:data_at[k] + 8].tobytes(), "little")
            if ov < 2 or ov >= self.pages:
                raise self._corrupt(pgno, f"a value's overflow page {ov} is outside the file")
            value[k] = ov * self.psize
        self.parts.append((base + key_at, ks, value, dsize, big))

    def entries(self) -> Entries:
        if not self.parts:
            e = np.zeros(0, np.int64)
            return Entries(e, e, e, e, np.zeros(0, bool), self.psize)
        cols = [np.concatenate([p[k] for p in self.parts]) for k in range(5)]
        return Entries(*cols, page_size=self.psize)


def read_value(read: Read, entries: Entries, i: int, where: str) -> bytearray:
    """Record `i`'s value (a new buffer); an overflow value's page header is checked first."""
    off, n = int(entries.value_offset[i]), int(entries.value_size[i])
    if not entries.big[i]:
        return bytearray(read(off, n))
    raw = bytearray(read(off, PAGE_HEADER + n))
    pgno, _, flags, pages = struct.unpack_from("<QHHI", raw, 0)
    psize = entries.page_size
    if pgno * psize != off or not flags & P_OVERFLOW or pages * psize < PAGE_HEADER + n:
        raise DataError(f"{where}: corrupt LMDB database (the overflow page at byte {off} does not "
                        f"hold a {n}-byte value)")
    del raw[:PAGE_HEADER]
    return raw


def read_key(read: Read, entries: Entries, i: int) -> bytes:
    return bytes(read(int(entries.key_offset[i]), int(entries.key_size[i])))
