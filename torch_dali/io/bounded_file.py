"""Reading a whole small file (annotations, a pipeline document) from an untrusted path.

The open does not block (a FIFO put in the file's place must not hang it); only a regular file is
read (a FIFO or a device may never end); its size is checked against the cap before reading, and the
read is sized to the file. A read of n bytes allocates n up front, so reading "at most the cap"
made every small file cost a cap-sized buffer: 4 GiB per preprocessed COCO file, a MemoryError
wherever the address space is limited or memory is small. A file that grows while it is read is
read on, in steps, up to the cap.
"""
from __future__ import annotations

import os
import stat

_STEP = 1 << 20  # bytes read at a time past the size fstat gave
#: list and index files (file_list, .idx, manifests) are read whole and held as lines; one larger
#: is refused (DALI has no limit: a sparse file of 20 GB took all of memory, 1.2 GB under a 2 GB
#: cap an empty-message error). 1 GiB is tens of millions of lines
MAX_LIST_BYTES = 1 << 30


def list_too_large(path: str | os.PathLike[str], size: int | None = None) -> str | None:
    """Why a list or index file of `size` bytes (None: the size of the file at `path`, when it
    can be found) is not read, or None."""
    if size is None:
        try:
            size = os.stat(path).st_size
        except (OSError, ValueError):
            return None  # the read reports it
    if size <= MAX_LIST_BYTES:
        return None
    return f"it is {size} bytes, more than a list or index file may hold ({MAX_LIST_BYTES})"


class NotRegularFile(Exception):
    """The path names a FIFO, a device, a directory, ...: not read."""


class FileTooLarge(Exception):
    """The file holds more than the cap: `size` bytes (at least cap + 1 if it grew while read)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def read_regular_file(path: str | os.PathLike[str], cap: int) -> bytes:
    """The bytes of the regular file at `path`, which may hold at most `cap`. Raises OSError
    (FileNotFoundError, PermissionError, ...) from the open and the read, NotRegularFile and
    FileTooLarge."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path)
        if st.st_size > cap:
            raise FileTooLarge(st.st_size)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        data = f.read(st.st_size + 1)
        if len(data) > st.st_size:  # it grew since fstat
            grown = bytearray(data)
            while len(grown) <= cap:
                more = f.read(min(_STEP, cap + 1 - len(grown)))
                if not more:
                    break
                grown += more
            data = bytes(grown)
    if len(data) > cap:
        raise FileTooLarge(len(data))
    return data
