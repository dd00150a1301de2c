"""`tfrecord2idx`: the index file `readers.tfrecord` needs ("offset size" a line, one line per
record), made by walking a TFRecord file's framing. DALI installs a script of that name and its
examples call it (`tfrecord2idx train train.idx`); torch_dali installs one too (pyproject's
[project.scripts]), so those examples run with only torch_dali installed. Also
`python -m torch_dali.io.tfrecord_index FILE INDEX`.

Framing of one record: uint64 length (little-endian), uint32 CRC of it, the payload, uint32 CRC of
the payload. CRCs are not checked (the reader does not check them either); a record cut short, or
a length past the end of the file, is an error naming the offset.
"""
from __future__ import annotations

import os
import struct
import sys
from typing import Sequence

from ..errors import DataError
from . import host_io

_HEAD = 12  # uint64 length + uint32 CRC
_TAIL = 4   # uint32 CRC


def scan(path: str | os.PathLike) -> list[tuple[int, int]]:
    """(offset, size with framing) of every record of a TFRecord file, in file order."""
    path = os.fspath(path)
    # a regular file only, opened without blocking: open() of a FIFO waited for a writer for ever
    fd = host_io.open_regular(path)
    total = os.fstat(fd).st_size
    out: list[tuple[int, int]] = []
    with open(fd, "rb") as f:
        off = 0
        while off < total:
            head = f.read(_HEAD)
            if len(head) < _HEAD:
                raise DataError(f"{path}: not a TFRecord file: {total - off} stray bytes at offset {off} "
                                f"(a record starts with a {_HEAD}-byte header)")
            (length,) = struct.unpack("<Q", head[:8])
            size = _HEAD + length + _TAIL
            if off + size > total:
                raise DataError(f"{path}: not a TFRecord file: the record at offset {off} says {length} "
                                f"bytes, past the end of the file ({total} bytes)")
            off += size
            f.seek(off)
            out.append((off - size, size))
    return out


def write_index(path: str | os.PathLike, index_path: str | os.PathLike) -> int:
    """Writes the index of `path` to `index_path`; returns the number of records."""
    entries = scan(path)
    with open(index_path, "w") as f:
        f.writelines(f"{o} {n}\n" for o, n in entries)
    return len(entries)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: tfrecord2idx TFRECORD_FILE INDEX_FILE  (writes the index readers.tfrecord reads)",
              file=sys.stderr)
        return 2
    try:
        write_index(args[0], args[1])
    except (OSError, DataError) as e:
        print(f"tfrecord2idx: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
