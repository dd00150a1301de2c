"""Where the samples of a webdataset tar are: from DALI's index files (`wds2idx`, versions 1.1 and
1.2) or by scanning the tar's headers (data is skipped with seeks, never read).

A sample is a run of consecutive regular files sharing a basename: the name up to the first dot
after the last '/'; the extension is the rest (it may hold dots). As DALI 2.4's own scan: files
whose basename is empty (hidden files at the top level) are left out, other entries (folders,
links) are skipped without ending a sample, and a name without a dot is its own basename and
extension. An index gives the samples its tool wrote (`wds2idx` also leaves out hidden files in
folders). Malformed tars and indexes are DataErrors naming the file (and line); one header read
is capped (`MAX_HEADER_READ`), so a forged pax or long-name header cannot exhaust memory.
"""
from __future__ import annotations

import io
import re
import tarfile
from typing import IO, NamedTuple

from ..errors import DataError

BLOCK = 512
MAX_HEADER_READ = 1 << 20  # a tar header (pax records, GNU long names) read in one piece


class Component(NamedTuple):
    ext: str
    offset: int  # of the data, in bytes from the start of the tar
    size: int
    name: str


def split_name(name: str) -> tuple[str, str]:
    """(basename, extension) as DALI's loader splits a member name."""
    dot = name.find(".", name.rfind("/") + 1)
    if dot < 0:
        return name, name
    return name[:dot], name[dot + 1:]


class _Capped(io.RawIOBase):
    """A seekable file whose single reads are capped: tarfile reads headers (and pax/long-name
    payloads) whole, with sizes taken from the file."""

    def __init__(self, f: IO[bytes], where: str) -> None:
        self._f, self._where = f, where

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0 or n > MAX_HEADER_READ:
            raise DataError(f"{self._where}: a tar header asks to read {n} bytes at once (more than "
                            f"{MAX_HEADER_READ}); the tar is corrupt or forged")
        return self._f.read(n)

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._f.seek(pos, whence)

    def tell(self) -> int:
        return self._f.tell()


_PAX_RECORD = re.compile(rb"([0-9]+) ")
_DIGIT_RUN = re.compile(rb"[0-9]{65,}")


def check_pax(buf: bytes, where: str) -> None:
    """Refuses a pax header that tarfile (before Python 3.11.10, CVE-2024-6232) parses in quadratic
    time or memory: its regular expressions backtrack over long runs of digits and over repeated
    `hdrcharset=`, and a record whose `=` lies past its end made a keyword of the rest of the header,
    once per record. Valid headers have short numbers, one charset, and `len keyword=value\n`
    records; this walk is linear."""
    run = _DIGIT_RUN.search(buf)
    if run is not None:
        raise DataError(f"{where}: a pax header holds a run of {len(run.group())} digits (numbers in "
                        "tar headers have at most 20); the tar is corrupt or forged")
    if buf.count(b"hdrcharset=") > 1:
        raise DataError(f"{where}: a pax header names its charset more than once; the tar is corrupt or forged")
    pos = 0
    while (m := _PAX_RECORD.match(buf, pos)) is not None and int(m.group(1)) > 0:
        end = pos + int(m.group(1))
        if end > len(buf) or buf.find(b"=", m.end() + 1, end) < 0:
            raise DataError(f"{where}: a pax record at byte {pos} of its header is malformed (no "
                            "`keyword=value` within its length); the tar is corrupt or forged")
        pos = end


class _TarInfo(tarfile.TarInfo):
    """tarfile's member, with each pax header checked (`check_pax`) before tarfile parses it."""

    def _proc_pax(self, tf: tarfile.TarFile) -> tarfile.TarInfo:  # type: ignore[override]
        f = tf.fileobj
        if f is None:  # scan_tar always opens the tar over a file object
            raise RuntimeError("tarindex: a tar scanned without a file object")
        at = f.tell()
        check_pax(f.read(self._block(self.size)), getattr(f, "_where", "tar"))  # type: ignore[attr-defined]
        f.seek(at)
        return super()._proc_pax(tf)  # type: ignore[misc]


def scan_tar(f: IO[bytes], where: str) -> list[list[Component]]:
    """The samples of the tar open in `f` (seekable), from its headers."""
    samples: list[list[Component]] = []
    last, at = None, -1
    try:
        with tarfile.open(fileobj=_Capped(f, where), mode="r:", tarinfo=_TarInfo) as tf:  # type: ignore[arg-type]
            for m in tf:
                # a base-256 size field may be negative; checked for every member: tarfile moves
                # past one of an unknown type by its size, so -512 brought it back to the same
                # header for ever (a 2 KiB tar looped, its member list growing until memory ran out)
                if m.size < 0:
                    raise DataError(f"{where}: member {m.name[:80]!r} has a negative size ({m.size})")
                if m.offset <= at:  # the same for a GNU sparse member, whose size is then its real size
                    raise DataError(f"{where}: member {m.name[:80]!r} leads back to byte {m.offset} (a "
                                    "negative size field); the tar is corrupt or forged")
                at = m.offset
                if not m.isreg():
                    continue
                base, ext = split_name(m.name)
                if not base:
                    continue
                c = Component(ext, m.offset_data, m.size, m.name)
                if base != last or not samples:
                    samples.append([c])
                    last = base
                else:
                    samples[-1].append(c)
    except DataError:
        raise
    except RecursionError:  # tarfile reads each pax / GNU long-name header's member by recursing
        raise DataError(f"{where}: a member has hundreds of extended (pax or GNU long-name) headers "
                        "in a row; the tar is corrupt or forged") from None
    except (tarfile.TarError, EOFError, OSError, ValueError, OverflowError, UnicodeError, IndexError) as e:
        raise DataError(f"{where}: not a readable tar file ({type(e).__name__}: {e})") from None
    return samples


def parse_index(text: str, where: str) -> list[list[Component]]:
    """The samples listed by a `wds2idx` index (v1.1: "ext offset size" groups; v1.2 adds the
    member's name)."""
    lines = text.split("\n")
    head = lines[0].split()
    if not head:
        raise DataError(f"{where}, line 0: no version signature found")
    if head[0] not in ("v1.1", "v1.2"):
        raise DataError(f"{where}, line 0: unsupported index version {head[0][:20]!r} (v1.1 and "
                        "v1.2 are read)")
    # the count is read as a C++ stream reads an integer (DALI 2.4): its leading [+-]digits, the
    # rest of the token ignored ("3x" is 3)
    lead = re.match(r"\+?0*([0-9]{1,19})(?![0-9])", head[1]) if len(head) > 1 else None
    if lead is None or int(lead.group(1)) <= 0:  # int() of 4300+ digits raised ValueError
        raise DataError(f"{where}, line 0: the sample count must be a positive integer of at most 19 digits")
    count, width = int(lead.group(1)), 4 if head[0] == "v1.2" else 3
    if count > len(lines) - 1:
        raise DataError(f"{where}: the header says {count} samples, the file has {len(lines) - 1} lines")
    samples: list[list[Component]] = []
    for no in range(1, count + 1):
        parts = lines[no].split()
        if not parts or len(parts) % width:
            raise DataError(f"{where}, line {no}: expected groups of `<ext> <offset> <size>"
                            f"{' <name>' if width == 4 else ''}`, got {len(parts)} fields")
        comps = []
        for k in range(0, len(parts), width):
            ext, off, size = parts[k:k + 3]
            if not (off.isascii() and off.isdigit() and size.isascii() and size.isdigit()):  # not '²'
                raise DataError(f"{where}, line {no}: offset and size must be non-negative integers "
                                f"(got {off[:20]!r}, {size[:20]!r})")
            off, size = off.lstrip("0") or "0", size.lstrip("0") or "0"
            if len(off) > 19 or len(size) > 19:  # int() of 4300+ digits raises ValueError
                raise DataError(f"{where}, line {no}: offset and size must fit 64 bits (got {len(off)} and "
                                f"{len(size)} digits)")
            if int(off) % BLOCK:
                raise DataError(f"{where}, line {no}: offset {off} is not a multiple of the tar block "
                                f"size ({BLOCK})")
            comps.append(Component(ext, int(off), int(size), parts[k + 3] if width == 4 else ""))
        samples.append(comps)
    return samples
