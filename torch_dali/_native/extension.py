"""The optional C++/CUDA extension (nvJPEG decoder + fused image kernels), JIT-built on first use.

`load()` builds `csrc/` (beside this file, shipped in the wheel) once per process with torch.utils.cpp_extension and returns the
module, or None when it cannot (no CUDA, no compiler, `TORCH_DALI_NO_EXT=1`, build error): the
pure-torch ops then run instead, and `load_error()` / `status()` say why. Importing torch_dali
never builds or fails because of the extension.
"""
from __future__ import annotations

import atexit
import contextlib
import glob
import os
import shutil
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator, Optional

import torch

from .. import _knobs
from .build import check_private

_NAME = "torch_dali_ext"
_SRC = Path(__file__).resolve().parent / "csrc"
_SOURCES = ("bindings.cpp", "image_ops.cpp", "worker_pool.cpp", "nvjpeg_decoder.cpp", "stream_queues.cpp",
            "cpu/image_kernels_cpu.cpp", "cuda/image_kernels.cu")

_lock = threading.Lock()
_tried = False
_module: Optional[ModuleType] = None
_error: Optional[str] = None
_nvjpeg: Optional[tuple[str, str]] = None
_fakes_registered = False
_ready = False  # set once `_module` is final: later calls return it without the lock


def load(verbose: bool = False) -> Optional[ModuleType]:
    """Builds (first call only) and returns the extension module, or None if unavailable."""
    global _tried, _module, _error, _ready
    if _ready:  # every batch asks: a contended lock would hand the GIL to another thread
        return _module
    with _lock:
        if _tried:
            return _module
        _tried = True
        try:
            reason = _unavailable_reason()
            if reason is not None:
                _error = reason
                return None
            _module = _load_built() or _build(verbose)
            _register_fakes()
            _module.set_fused_tap_tables(bool(_knobs.get("TORCH_DALI_FUSED_TAP_TABLES")))
        except Exception as exc:  # a failed build must never break torch_dali
            _module = None
            _error = f"build failed: {type(exc).__name__}: {exc}"
            # CUDA is there, so GPU pipelines now run their pure-torch paths, several times slower:
            # say so once rather than only in load_error() (a refused cache, a broken toolkit)
            import warnings
            warnings.warn(f"torch_dali: the CUDA extension is unavailable ({_error}); GPU ops run their "
                          "pure-torch versions", RuntimeWarning, stacklevel=2)
        _ready = True
        return _module


_PRELOAD_EXIT_WAIT_S = 10.0


def preload() -> None:
    """Starts loading a finished build on a background thread (`import torch_dali` calls this):
    the ~0.5 s of mapping the module and its CUDA libraries then overlaps the caller's own set-up
    (creating the CUDA context, defining the pipeline) instead of delaying the first batch. Only
    in a main process (not in DataLoader workers), only when a build of these sources exists (no
    compiling behind the user's back), never when TORCH_DALI_PRELOAD_EXT=0 or TORCH_DALI_NO_EXT=1."""
    import multiprocessing
    if _tried or not _knobs.get("TORCH_DALI_PRELOAD_EXT") or _knobs.get("TORCH_DALI_NO_EXT") \
            or multiprocessing.parent_process() is not None:
        return

    def run() -> None:
        try:
            if _built_key() is not None and torch.cuda.is_available():
                load()
        except Exception:  # noqa: BLE001 - load() on first use reports whatever this met
            pass

    thread = threading.Thread(target=run, name="torch_dali-preload", daemon=True)
    thread.start()
    # a script that ends while the thread is inside torch (CUDA's start, the module's mapping)
    # would finalize under it and abort ("terminate called without an active exception"): the
    # exit waits for it, bounded (a load takes ~0.5 s)
    atexit.register(thread.join, _PRELOAD_EXIT_WAIT_S)


def _after_fork_in_child() -> None:
    """A fork while the preload thread held the lock would leave it held forever in the child."""
    global _lock, _tried, _ready
    _lock = threading.Lock()
    if _module is None:
        _tried = _ready = False


os.register_at_fork(after_in_child=_after_fork_in_child)


def load_error() -> Optional[str]:
    """Why `load()` returned None (None if it succeeded or was not called yet)."""
    return _error


def available() -> bool:
    return load() is not None


def kernels() -> Any:
    """The extension's image ops (`torch.ops.torch_dali`) when it is loaded, else None."""
    return torch.ops.torch_dali if load() is not None else None


def status() -> str:
    """One line for diagnostics: built, not tried, or why not."""
    if not _tried:
        return "torch_dali extension: not loaded yet (call torch_dali._native.extension.load())"
    if _module is None:
        return f"torch_dali extension: unavailable ({_error})"
    nvjpeg = f"nvJPEG from {_nvjpeg[1]}" if _nvjpeg else "no nvJPEG (decoder not built)"
    return f"torch_dali extension: loaded from {_build_dir()} ({nvjpeg})"


def build_dir() -> str:
    return _build_dir()


def _unavailable_reason() -> Optional[str]:
    if _knobs.get("TORCH_DALI_NO_EXT"):
        return "disabled by TORCH_DALI_NO_EXT"
    if not torch.cuda.is_available():
        return "CUDA is not available"
    if torch.version.cuda is None:
        return "torch was built without CUDA"
    if not all((_SRC / s).is_file() for s in _SOURCES):
        return f"extension sources not found under {_SRC}"
    if _built_key() is not None:  # built before from these sources: no toolchain needed
        return None
    from torch.utils import cpp_extension
    if cpp_extension.CUDA_HOME is None:
        return "CUDA toolkit not found (set CUDA_HOME)"
    if not cpp_extension.is_ninja_available():
        return "ninja is not installed"
    if shutil.which(os.environ.get("CXX", "c++")) is None:
        return "no C++ compiler on PATH"
    return None


def _build_dir() -> str:
    base = _knobs.cache_dir()
    tag = f"torch{torch.__version__}-cu{torch.version.cuda}-py{sys.version_info[0]}{sys.version_info[1]}"
    return os.path.join(base, "ext-" + tag.replace("+", "_"))


def _source_key() -> str:
    """What the build depends on: sources, headers, torch and CUDA versions, the compiler flags."""
    import hashlib
    h = hashlib.sha256(f"{torch.__version__}|{torch.version.cuda}|{sys.version_info[:2]}|{_arch_flags()}"
                       .encode())
    for f in sorted(p for p in _SRC.rglob("*") if p.suffix in (".cpp", ".cu", ".h", ".c")):
        h.update(str(f.relative_to(_SRC)).encode())
        h.update(f.read_bytes())
    h.update(Path(__file__).read_bytes())  # the flags below
    return h.hexdigest()


def _built_key() -> Optional[str]:
    """The key of a finished build of the current sources in the build folder, or None."""
    path = _build_dir()
    try:
        stamp = Path(path, "built.key").read_text().strip()
    except OSError:
        return None
    if not os.path.isfile(os.path.join(path, _NAME + ".so")) or stamp != _source_key():
        return None
    return stamp


def _load_built() -> Optional[ModuleType]:
    """The module of a finished build of the current sources, imported directly: torch's JIT
    loader re-hashes and runs ninja on every load (~0.3-0.4 s of the first batch)."""
    global _nvjpeg
    if _built_key() is None:
        return None
    import importlib.machinery
    import importlib.util
    so = os.path.join(_build_dir(), _NAME + ".so")
    for path in (_knobs.cache_dir(), _build_dir(), so):  # a build another user could have planted
        check_private(path)
    loader = importlib.machinery.ExtensionFileLoader(_NAME, so)
    spec = importlib.util.spec_from_file_location(_NAME, so, loader=loader)
    if spec is None:
        return None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    from torch.utils import cpp_extension
    _nvjpeg = _find_nvjpeg(cpp_extension.CUDA_HOME) if cpp_extension.CUDA_HOME else None
    return module


def _find_nvjpeg(cuda_home: str) -> Optional[tuple[str, str]]:
    """(include dir, library file) of nvJPEG: $CUDA_HOME first, then the nvidia wheels."""
    roots = [(os.path.join(cuda_home, "include"), [os.path.join(cuda_home, d) for d in
                                                   ("lib64", "lib", "targets/x86_64-linux/lib",
                                                    "targets/sbsa-linux/lib")])]
    for site in sys.path:
        for sub in ("nvidia/cu13", "nvidia/nvjpeg"):
            root = os.path.join(site, sub)
            roots.append((os.path.join(root, "include"), [os.path.join(root, "lib")]))
    for inc, libdirs in roots:
        if not os.path.isfile(os.path.join(inc, "nvjpeg.h")):
            continue
        for libdir in libdirs:
            libs = sorted(glob.glob(os.path.join(libdir, "libnvjpeg.so*")), key=len)
            if libs:
                return inc, libs[0]
    return None


def _loaded_libstdcxx() -> Optional[str]:
    """Path of the shared libstdc++ mapped into this process (torch loads it), if any."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if os.path.basename(path).startswith("libstdc++.so") and os.path.isfile(path):
                    return path
    except OSError:
        pass
    return None


def _arch_flags() -> list[str]:
    """SASS for sm_90 (H100/H200) and the current GPU, plus PTX so newer GPUs can JIT it."""
    archs = {(9, 0)}
    try:
        archs.add(torch.cuda.get_device_capability())
    except Exception:
        pass
    flags = [f"-gencode=arch=compute_{a}{b},code=sm_{a}{b}" for a, b in sorted(archs)]
    hi = max(archs)
    flags.append(f"-gencode=arch=compute_{hi[0]}{hi[1]},code=compute_{hi[0]}{hi[1]}")
    return flags


STALE_LOCK_S = 900  # a build takes ~1-2 min; a lock this old was left by a killed process


def clear_stale_lock(path: str) -> None:
    """torch's JIT build guards the folder with a `lock` file that a killed build leaves behind;
    some torch versions then wait on it forever, silently. Remove one far older than a build."""
    import time
    lock = os.path.join(path, "lock")
    try:
        age = time.time() - os.path.getmtime(lock)
    except OSError:
        return
    if age > STALE_LOCK_S:
        _remove_lock(lock, f"left {age / 60:.0f} min ago by a build that did not finish")


def _remove_lock(lock: str, why: str) -> None:
    import warnings
    warnings.warn(f"torch_dali: removing the extension build lock {lock}, {why}", RuntimeWarning, stacklevel=4)
    try:
        os.unlink(lock)
    except OSError:
        pass


def _orphans(path: str) -> list[int]:
    """Processes working in the build folder (Linux): a killed build's compiler jobs run on after
    it, writing their objects there."""
    real, found = os.path.realpath(path), []
    try:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return []
    for pid in pids:
        try:
            if pid != os.getpid() and os.readlink(f"/proc/{pid}/cwd") == real:
                found.append(pid)
        except OSError:
            continue
    return found


def _wait_for_orphans(path: str) -> None:
    """Waits (at most STALE_LOCK_S) until no process works in the folder, so a new build never
    writes the objects a killed build's leftover jobs are still writing."""
    import time
    deadline = time.monotonic() + STALE_LOCK_S
    while _orphans(path) and time.monotonic() < deadline:
        time.sleep(0.5)


@contextlib.contextmanager
def build_guard(path: str) -> Iterator[None]:
    """Holds an OS lock on the build folder through a build. The kernel drops it when its process
    dies, however it dies, so whoever holds it knows no build of this host is running: a torch
    `lock` left by this host's last builder (the owner file says which host) is stale once that
    build's leftover compiler jobs have ended, where waiting on it hung the next run (a first run
    stopped with Ctrl-C mid-build). A lock left by another host sharing the folder still waits for
    STALE_LOCK_S."""
    import socket
    try:
        import fcntl
    except ImportError:  # not POSIX: torch's own lock alone
        clear_stale_lock(path)
        yield
        return
    fd = os.open(os.path.join(path, "build.flock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits while another process of this host builds
        except OSError:  # a file system without locks (some network mounts): torch's lock alone
            clear_stale_lock(path)
            yield
            return
        owner, lock, host = os.path.join(path, "build.owner"), os.path.join(path, "lock"), socket.gethostname()
        try:
            prev = Path(owner).read_text().split()
        except OSError:
            prev = []
        if prev[:1] == [host] and os.path.exists(lock):
            _wait_for_orphans(path)
            pid = prev[1] if len(prev) > 1 else "?"
            _remove_lock(lock, f"left by process {pid} of this host, whose build did not finish")
        else:
            clear_stale_lock(path)
        Path(owner).write_text(f"{host} {os.getpid()}\n")
        yield
    finally:
        os.close(fd)  # releases the OS lock


def _build(verbose: bool) -> ModuleType:
    global _nvjpeg
    from torch.utils import cpp_extension
    cuda_home = cpp_extension.CUDA_HOME
    if cuda_home is None:
        raise RuntimeError("CUDA toolkit not found")
    sources = [str(_SRC / s) for s in _SOURCES]
    cflags = ["-O3"]
    # Link the libstdc++ this process already uses, by path and first: a toolchain whose search
    # path holds only libstdc++.a (the GPU image's /opt/gcc g++) gives the module a private static
    # copy whose iostreams crash when TORCH_CHECK formats a message.
    ldflags: list[str] = [_loaded_libstdcxx() or "-lstdc++"]
    includes = [str(_SRC)]
    _nvjpeg = _find_nvjpeg(cuda_home)
    if _nvjpeg is not None:
        inc, lib = _nvjpeg
        cflags.append("-DTORCH_DALI_WITH_NVJPEG")
        includes.append(inc)
        libdir = os.path.dirname(lib)
        ldflags += [lib, f"-Wl,-rpath,{libdir}"]
    else:
        sources.remove(str(_SRC / "nvjpeg_decoder.cpp"))
    # No fused multiply-adds and IEEE division: contractions differ between kernels (the fused
    # resize+crop kernel must give resize_batch's bits: a rounding at .5 flips), and an approximate
    # in/out scale moves DALI's tap positions off the spec's at exact boundaries (whole rows differ)
    cuda_flags = ["-O3", "--ftz=true", "--prec-div=true", "--prec-sqrt=false", "--fmad=false", *_arch_flags()]
    path = _build_dir()
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    os.makedirs(path, mode=0o700, exist_ok=True)
    check_private(os.path.dirname(path))
    check_private(path)
    with build_guard(path):
        module = cpp_extension.load(
            name=_NAME, sources=sources, extra_cflags=cflags, extra_cuda_cflags=cuda_flags,
            extra_ldflags=ldflags, extra_include_paths=includes, build_directory=path,
            with_cuda=True, verbose=verbose)
        Path(path, "built.key").write_text(_source_key())
    return module


def _register_fakes() -> None:
    """Shape functions so torch.compile / opcheck can trace the ops without running them."""
    global _fakes_registered
    if _fakes_registered:
        return
    _fakes_registered = True

    @torch.library.register_fake("torch_dali::resized_crop_mirror_normalize")
    def _rcmn_fake(images: list[torch.Tensor], windows: torch.Tensor, mirror: torch.Tensor,
                   mean: torch.Tensor, std: torch.Tensor, out_h: int, out_w: int,
                   antialias: bool, dtype: torch.dtype, nchw: bool,
                   regions: torch.Tensor | None = None) -> torch.Tensor:
        if len(images) == 0:
            raise ValueError("torch_dali::resized_crop_mirror_normalize: `images` is empty")
        c = images[0].shape[2]
        shape = (len(images), c, out_h, out_w) if nchw else (len(images), out_h, out_w, c)
        return images[0].new_empty(shape, dtype=dtype)

    @torch.library.register_fake("torch_dali::resize_crop_mirror_normalize")
    def _rscmn_fake(images: list[torch.Tensor], resized: torch.Tensor, anchors: torch.Tensor,
                    mirror: torch.Tensor, mean: torch.Tensor, std: torch.Tensor, out_h: int, out_w: int,
                    interp: int, antialias: bool, round_resized: bool, dtype: torch.dtype,
                    nchw: bool, source: torch.Tensor | None = None) -> torch.Tensor:
        if len(images) == 0:
            raise ValueError("torch_dali::resize_crop_mirror_normalize: `images` is empty")
        c = images[0].shape[2]
        shape = (len(images), c, out_h, out_w) if nchw else (len(images), out_h, out_w, c)
        return images[0].new_empty(shape, dtype=dtype)

    @torch.library.register_fake("torch_dali::resize_batch")
    def _resize_fake(images: list[torch.Tensor], sizes: torch.Tensor, antialias: bool,
                     interp: int, source: torch.Tensor | None = None) -> list[torch.Tensor]:
        if len(images) == 0:
            raise ValueError("torch_dali::resize_batch: `images` is empty")
        ctx: Any = torch.library.get_ctx()
        return [img.new_empty((ctx.new_dynamic_size(), ctx.new_dynamic_size(), img.shape[2]))
                for img in images]
