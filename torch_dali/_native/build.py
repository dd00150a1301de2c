"""Builds a small plain-C helper library with the system compiler and caches it.

`build(src, libs)` compiles `src` (`cc -O2 -shared -fPIC -o <out> src -l<lib>...`) into
`$TORCH_DALI_EXT_DIR` (default `~/.cache/torch_dali`) as `<stem>-<hash>.so`, the hash covering the
source and the flags, so an edited source or changed flags rebuild and an unchanged one is reused.
Callers load the result with ctypes (which releases the GIL during calls) and keep a pure-Python
path for when this raises (no compiler, missing headers, read-only cache, ...).

Tests ask `skip_reason(lib)`: a helper may be missing only where no working C compiler is (or its
variable disables it); where one is, a helper that does not build is an error, never a skip.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import _knobs

_FLAGS = ("-O2", "-shared", "-fPIC")


def cache_dir() -> Path:
    """TORCH_DALI_EXT_DIR, else ~/.cache/torch_dali."""
    return Path(_knobs.cache_dir())


def check_private(path: str | Path) -> None:
    """Raises RuntimeError unless `path` (a cache folder, or a library in one) is this user's (or
    root's) and writable by no one else: loading a shared library runs its code, and a shared or
    pre-made cache folder (TORCH_DALI_EXT_DIR=/tmp/...) could hold one planted under the name a build
    would give. Follows links: what counts is the file that would be loaded."""
    if not hasattr(os, "geteuid"):  # no POSIX owners (Windows): nothing to compare
        return
    try:
        st = os.stat(path)
    except OSError as e:
        raise RuntimeError(f"cannot inspect the native build cache {path}: {e.strerror or e}") from None
    if st.st_uid not in (os.geteuid(), 0):
        raise RuntimeError(f"refusing the native build cache {path}: it belongs to user id {st.st_uid}, not "
                           f"to this user ({os.geteuid()}); point TORCH_DALI_EXT_DIR at a folder of your own")
    if st.st_mode & 0o022:
        raise RuntimeError(f"refusing the native build cache {path}: other users may write to it (mode "
                           f"{st.st_mode & 0o777:o}); run `chmod go-w {path}` or point TORCH_DALI_EXT_DIR "
                           "at a private folder")


class BuildError(RuntimeError):
    """A C helper did not build although a working C compiler is present."""


_PROBE: tuple[bool, str] | None = None


def compiler_works() -> tuple[bool, str]:
    """(whether the C compiler builds a trivial shared library here, why not); probed once."""
    global _PROBE
    if _PROBE is None:
        try:
            cc = _compiler()
            with tempfile.TemporaryDirectory() as d:
                src = Path(d) / "probe.c"
                src.write_text("int td_probe(void) { return 1; }\n")
                r = subprocess.run([cc, *_FLAGS, "-o", str(Path(d) / "probe.so"), str(src)],
                                   capture_output=True, text=True, timeout=120)
            _PROBE = (r.returncode == 0, (r.stderr or r.stdout).strip()[-300:])
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            _PROBE = (False, str(e))
    return _PROBE


def _compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise RuntimeError("no C compiler (cc/gcc/clang) on PATH and $CC is not set")
    return cc


def build(src: Path, libs: Sequence[str] = (), flags: Sequence[str] = ()) -> Path:
    """Compiles `src` once per (source, flags) hash and returns the .so path; raises RuntimeError
    (or OSError) saying why when it cannot. `libs` are library names: ["jpeg"] -> -ljpeg; `flags`
    are extra compiler flags."""
    src = Path(src)
    try:
        text = src.read_bytes()
        # the headers it includes from its own folder ("x.h"), so that editing one rebuilds it
        for name in dict.fromkeys(re.findall(rb'#include "([^"/]+)"', text)):
            header = src.parent / name.decode()
            if header != src and header.exists():
                text += b"\0" + header.read_bytes()
    except OSError as e:
        raise RuntimeError(f"cannot read the C source {src}: {e.strerror or e}") from None
    link = [f"-l{lib}" for lib in libs]
    opts = _FLAGS + tuple(flags)
    key = hashlib.sha256(text + "\0".join(opts + tuple(link)).encode()).hexdigest()[:16]
    out_dir = cache_dir()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    out_dir.mkdir(mode=0o700, exist_ok=True)
    check_private(out_dir)
    so = out_dir / f"{src.stem}-{key}.so"
    if so.exists():
        check_private(so)
        return so
    cc = _compiler()
    # build under a unique name, then rename: concurrent builders never load a half-written file
    fd, tmp = tempfile.mkstemp(prefix=f".{src.stem}-{key}-", suffix=".so", dir=out_dir)
    os.close(fd)
    try:
        try:
            r = subprocess.run([cc, *opts, "-o", tmp, str(src), *link],
                               capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RuntimeError(f"cannot run the C compiler {cc!r}: {e}") from None
        if r.returncode != 0:
            raise RuntimeError(f"compiling {src.name} failed: {(r.stderr or r.stdout).strip()[-600:]}")
        os.chmod(tmp, 0o755)  # whatever the umask: check_private refuses a group-writable library
        os.replace(tmp, so)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return so


class CLibrary:
    """A C helper built on first use and loaded with ctypes, once per process and thread-safe.

    `load()` gives the library, or None when it cannot be had (no compiler or headers, a read-only
    cache, or `disable_env` set), `reason` then saying why. `configure(lib)` declares the functions'
    signatures."""

    def __init__(self, src: Path, libs: Sequence[str] = (), flags: Sequence[str] = (),
                 disable_env: str | None = None, configure: Callable[[ctypes.CDLL], None] | None = None) -> None:
        LIBRARIES.append(self)
        self.src, self.libs, self.flags = Path(src), tuple(libs), tuple(flags)
        self.disable_env, self.configure = disable_env, configure
        self.lib: ctypes.CDLL | None = None
        self.tried = False
        self.reason = ""
        self.path = ""
        self._lock = threading.Lock()
        self._holding: dict[tuple[str, str], Any] = {}

    def load(self) -> ctypes.CDLL | None:
        if self.tried:
            return self.lib
        with self._lock:
            if not self.tried:
                try:
                    if self.disable_env and _knobs.get(self.disable_env):
                        raise RuntimeError(f"disabled by {self.disable_env}")
                    if not self.src.exists():
                        raise RuntimeError(f"source {self.src} not found")
                    path = str(build(self.src, self.libs, self.flags))
                    lib = ctypes.CDLL(path)
                    if self.configure is not None:
                        self.configure(lib)
                    self.lib, self.path = lib, path
                except Exception as e:  # no compiler, missing headers, read-only cache, disabled, ...
                    self.lib, self.reason = None, f"{type(e).__name__}: {e}"
                self.tried = True
        return self.lib

    def holding_gil(self, name: str) -> Any:
        """Function `name` of the library called through ctypes.PyDLL, which keeps the GIL (CDLL
        releases it): for short calls a thread makes every batch, where a release lets another
        thread keep the GIL for up to Python's switch interval. Same signature; None without the
        library."""
        lib = self.load()
        if lib is None:
            return None
        key = (self.path, name)
        f = self._holding.get(key)
        if f is None:
            f = getattr(ctypes.PyDLL(self.path), name)
            f.argtypes, f.restype = getattr(lib, name).argtypes, getattr(lib, name).restype
            self._holding[key] = f
        return f


LIBRARIES: list[CLibrary] = []  # every helper made, in import order (the tests check each one builds)


def skip_reason(lib: CLibrary) -> str:
    """'' when `lib` loads; else why a test may skip it: its variable disables it, or no working C
    compiler is here. Raises BuildError when a compiler works but `lib` did not build."""
    if lib.load() is not None:
        return ""
    if lib.disable_env and _knobs.get(lib.disable_env):
        return lib.reason
    ok, why = compiler_works()
    if not ok:
        return f"no working C compiler: {why}"
    raise BuildError(f"{lib.src.name} did not build although the C compiler works: {lib.reason}")
