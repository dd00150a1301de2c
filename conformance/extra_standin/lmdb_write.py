"""A minimal LMDB writer (no liblmdb here): one database file `data.mdb` holding the sorted
records in a B+tree of 4 KiB pages, as liblmdb lays it out on a 64-bit little-endian machine: two
meta pages, overflow pages for values that do not fit a node, leaf pages, branch pages above them.
Written once, read-only after: no free list, both metas the same transaction."""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterable

PAGE = 4096
HEADER = 16  # pgno u64, pad u16, flags u16, lower u16, upper u16 (overflow: page count u32)
NODE = 8  # lo u16, hi u16, flags u16, key size u16
P_BRANCH, P_LEAF, P_OVERFLOW, P_META = 0x01, 0x02, 0x04, 0x08
F_BIGDATA = 0x01
NODE_MAX = ((PAGE - HEADER) // 2 & -2) - 2  # liblmdb's me_nodemax: bigger nodes go to overflow pages
INVALID = (1 << 64) - 1


def _even(n: int) -> int:
    return n + (n & 1)


class _Pages:
    def __init__(self) -> None:
        self.pages: list[bytes] = [b"", b""]  # the two metas, written last

    def add(self, raw: bytes) -> int:
        assert len(raw) % PAGE == 0
        first = len(self.pages)
        self.pages.extend(raw[i:i + PAGE] for i in range(0, len(raw), PAGE))
        return first


def _page(pgno: int, flags: int, nodes: list[bytes]) -> bytes:
    """A leaf or branch page: node offsets after the header, nodes packed from the page's end."""
    buf = bytearray(PAGE)
    upper = PAGE
    ptrs = []
    for node in nodes:
        upper -= len(node)
        buf[upper:upper + len(node)] = node
        ptrs.append(upper)
    lower = HEADER + 2 * len(nodes)
    assert lower <= upper
    struct.pack_into("<QHHHH", buf, 0, pgno, 0, flags, lower, upper)
    struct.pack_into(f"<{len(ptrs)}H", buf, HEADER, *ptrs)
    return bytes(buf)


def _pack(items: list[tuple[bytes, bytes]]) -> list[list[tuple[bytes, bytes]]]:
    """Items split into pages greedily: each takes its node and a 2-byte offset."""
    groups, cur, room = [], [], PAGE - HEADER
    for key, node in items:
        need = len(node) + 2
        if cur and need > room:
            groups.append(cur)
            cur, room = [], PAGE - HEADER
        cur.append((key, node))
        room -= need
    if cur:
        groups.append(cur)
    return groups


def write(folder: Path, records: Iterable[tuple[bytes, bytes]]) -> None:
    pages = _Pages()
    leaves, overflow = [], 0
    for key, value in sorted(records):
        if NODE + len(key) + len(value) > NODE_MAX:  # the value goes to overflow pages
            n = -(-(HEADER + len(value)) // PAGE)
            raw = bytearray(n * PAGE)
            pgno = len(pages.pages)
            struct.pack_into("<QHHI", raw, 0, pgno, 0, P_OVERFLOW, n)
            raw[HEADER:HEADER + len(value)] = value
            pages.add(bytes(raw))
            overflow += n
            # the node keeps the value's size and, as its data, the first overflow page
            node = (struct.pack("<HHHH", len(value) & 0xFFFF, len(value) >> 16, F_BIGDATA, len(key)) + key
                    + struct.pack("<Q", pgno))
        else:
            node = struct.pack("<HHHH", len(value) & 0xFFFF, len(value) >> 16, 0, len(key)) + key + value
        leaves.append((key, node + b"\0" * (_even(len(node)) - len(node))))
    entries = len(leaves)
    level, flags, depth, counts = leaves, P_LEAF, 0, {P_LEAF: 0, P_BRANCH: 0}
    while True:
        depth += 1
        groups = _pack(level)
        above = []
        for g in groups:
            pgno = pages.add(_page(len(pages.pages), flags, [n for _, n in g]))
            counts[flags] += 1
            above.append((g[0][0], pgno))
        if len(above) == 1:
            root = above[0][1]
            break
        level, flags = [], P_BRANCH
        for i, (key, pgno) in enumerate(above):
            k = b"" if i == 0 else key  # a branch page's first key is never compared
            node = struct.pack("<HHHH", pgno & 0xFFFF, pgno >> 16 & 0xFFFF, pgno >> 32 & 0xFFFF, len(k)) + k
            level.append((key, node + b"\0" * (_even(len(node)) - len(node))))
    last = len(pages.pages) - 1
    mapsize = max(1 << 24, (last + 1) * PAGE)
    for m in (0, 1):
        raw = bytearray(PAGE)
        struct.pack_into("<QHHHH", raw, 0, m, 0, P_META, 0, 0)
        # magic, version, address, mapsize; FREE_DBI (pad = page size), MAIN_DBI; last page, txnid
        off = struct.calcsize("<QHHHH")
        struct.pack_into("<IIQQ", raw, off, 0xBEEFC0DE, 1, 0, mapsize)
        off += 24
        struct.pack_into("<IHHQQQQQ", raw, off, PAGE, 0x08, 0, 0, 0, 0, 0, INVALID)  # INTEGERKEY
        off += 48
        struct.pack_into("<IHHQQQQQ", raw, off, 0, 0, depth, counts[P_BRANCH], counts[P_LEAF],
                         overflow, entries, root)
        off += 48
        struct.pack_into("<QQ", raw, off, last, 1)
        pages.pages[m] = bytes(raw)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.mdb").write_bytes(b"".join(pages.pages))
