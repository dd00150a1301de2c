"""Files torch_dali writes into folders others may control (a dataset's annotation cache, the
working folder of dump_image, a checkpoint folder): written under a fresh name beside the target,
then renamed over it, so a reader never sees half a file and no link planted there is followed."""
from __future__ import annotations

import contextlib
import os
import secrets


def write_aside(path: str, data: bytes) -> None:
    """`data` into `path`, replacing what is there (a link is replaced, not followed). The
    temporary name is random and made with O_EXCL (a link planted under a guessable name such as
    `.x.<pid>.tmp` would have been followed and its target overwritten). Raises OSError."""
    folder, base = os.path.split(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for attempt in range(8):
        tmp = os.path.join(folder, f".{base}.{secrets.token_hex(8)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)  # the umask applies, as to an open(path, "wb")
            break
        except FileExistsError:
            if attempt == 7:
                raise
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
