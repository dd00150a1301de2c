"""A file the process may not read (EACCES) gives a PermissionError naming it, through the C reader
and the Python fallback, also when the tests run as root (who reads any file whatever its mode).

The error is injected below the reader: a preloaded shim makes the C library's open() (and Python's)
fail with EACCES for one file name, so the real code paths see what the kernel would return.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torch_dali._native import build as _cbuild

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
static int denied(const char *p) { return p && strstr(p, "td-eacces-") != NULL; }
#define WRAP(name)                                                              \
  int name(const char *p, int flags, ...) {                                     \
    va_list ap; va_start(ap, flags); int mode = va_arg(ap, int); va_end(ap);    \
    if (denied(p)) { errno = EACCES; return -1; }                               \
    int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, #name);              \
    return real(p, flags, mode);                                                \
  }
#define WRAP_AT(name)                                                           \
  int name(int dir, const char *p, int flags, ...) {                            \
    va_list ap; va_start(ap, flags); int mode = va_arg(ap, int); va_end(ap);    \
    if (denied(p)) { errno = EACCES; return -1; }                               \
    int (*real)(int, const char *, int, ...) = dlsym(RTLD_NEXT, #name);         \
    return real(dir, p, flags, mode);                                           \
  }
WRAP(open) WRAP(open64) WRAP_AT(openat) WRAP_AT(openat64)
"""

CHILD = r"""
import errno, json, sys
from torch_dali.io import host_io as H
from torch_dali import fn, pipeline_def
ok, denied = sys.argv[1], sys.argv[2]
got = H.read_files([ok, denied])
report = {"c": H.available(), "ok_bytes": int(got[0].numel()) if hasattr(got[0], "numel") else -1,
          "type": type(got[1]).__name__, "errno": getattr(got[1], "errno", None),
          "filename": getattr(got[1], "filename", None)}

@pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
def pipe():
    data, _ = fn.readers.file(files=[ok, denied], name="Reader")
    return data

p = pipe()
p.build()
try:
    p.run()
    report["reader"] = ["read", ""]
except Exception as e:
    report["reader"] = [type(e).__name__, str(e)]
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("shim")
    src = d / "eacces_shim.c"
    src.write_text(SHIM)
    ok, why = _cbuild.compiler_works()
    if not ok:
        pytest.skip(f"no working C compiler to build the EACCES shim: {why}")
    return _cbuild.build(src, ["dl"])


@pytest.mark.parametrize("path", ["c", "python"])
def test_unreadable_file_is_a_permission_error(shim, tmp_path, path):
    ok = tmp_path / "fine.jpg"
    ok.write_bytes(b"x" * 10)
    denied = tmp_path / "td-eacces-secret.jpg"
    denied.write_bytes(b"y" * 10)  # it exists and root could read it: only the shim says no
    env = dict(os.environ, LD_PRELOAD=str(shim), PYTHONPATH=os.pathsep.join(sys.path))
    if path == "python":
        env["TORCH_DALI_NO_HOST_IO"] = "1"
    r = subprocess.run([sys.executable, "-c", CHILD, str(ok), str(denied)], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    rep = json.loads(r.stdout.strip().splitlines()[-1])
    assert rep["c"] == (path == "c")
    assert rep["ok_bytes"] == 10  # the shim only denies the one file
    assert rep["type"] == "PermissionError" and rep["errno"] == 13 and rep["filename"] == str(denied)
    name, text = rep["reader"]  # the file reader op names the file and the reason
    assert name != "read" and str(denied) in text and "Permission denied" in text, rep["reader"]
