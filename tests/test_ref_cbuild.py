"""The C helpers build wherever a working C compiler is: a failed build there fails the suite,
it is not skipped; only a machine without a compiler (or a variable disabling a helper) skips."""
from __future__ import annotations

import pytest

import torch_dali.functional.crop_window  # noqa: F401 - each of these makes its C helper
import torch_dali.io.host_io  # noqa: F401
import torch_dali.io.jpeg_roi  # noqa: F401
from torch_dali._native import build as _cbuild

HELPERS = list(_cbuild.LIBRARIES)


def test_every_helper_module_is_listed():
    assert {lib.src.name for lib in HELPERS} >= {"crop_windows.c", "host_io.c", "jpeg_roi.c"}


@pytest.mark.parametrize("lib", HELPERS, ids=lambda lib: lib.src.name)
def test_helper_builds_where_a_compiler_works(lib):
    reason = _cbuild.skip_reason(lib)  # raises BuildError: a compiler works and the build failed
    if reason:
        pytest.skip(reason)
    assert lib.load() is not None


def test_a_broken_helper_fails_when_a_compiler_works(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_DALI_EXT_DIR", str(tmp_path / "cache"))
    src = tmp_path / "broken.c"
    src.write_text("int td_broken(void) { return ; }}\n")
    lib = _cbuild.CLibrary(src)
    try:
        monkeypatch.setattr(_cbuild, "_PROBE", (True, ""))
        with pytest.raises(_cbuild.BuildError, match="broken.c did not build"):
            _cbuild.skip_reason(lib)
        monkeypatch.setattr(_cbuild, "_PROBE", (False, "cc: not found"))
        assert _cbuild.skip_reason(lib) == "no working C compiler: cc: not found"
    finally:
        _cbuild.LIBRARIES.remove(lib)


def test_a_disabled_helper_is_a_skip(tmp_path, monkeypatch):
    src = tmp_path / "fine.c"
    src.write_text("int td_fine(void) { return 1; }\n")
    lib = _cbuild.CLibrary(src, disable_env="TORCH_DALI_NO_JPEG_ROI")  # any flag knob
    try:
        monkeypatch.setenv("TORCH_DALI_NO_JPEG_ROI", "1")
        assert "TORCH_DALI_NO_JPEG_ROI" in _cbuild.skip_reason(lib)
    finally:
        _cbuild.LIBRARIES.remove(lib)


def test_the_compiler_probe_sees_this_machine():
    ok, why = _cbuild.compiler_works()
    try:
        _cbuild._compiler()
        has_cc = True
    except RuntimeError:
        has_cc = False
    assert ok == has_cc or not ok, why  # a compiler on PATH that cannot build is reported, not hidden


def test_an_edited_local_header_rebuilds_the_helper(tmp_path, monkeypatch):
    if not _cbuild.compiler_works()[0]:
        pytest.skip("no working C compiler")
    monkeypatch.setenv("TORCH_DALI_EXT_DIR", str(tmp_path / "cache"))
    (tmp_path / "value.h").write_text("#define TD_VALUE 1\n")
    src = tmp_path / "uses_header.c"
    src.write_text('#include "value.h"\nint td_value(void) { return TD_VALUE; }\n')
    first = _cbuild.build(src)
    assert _cbuild.build(src) == first  # unchanged: the cached library
    (tmp_path / "value.h").write_text("#define TD_VALUE 2\n")
    second = _cbuild.build(src)
    assert second != first
    import ctypes
    assert ctypes.CDLL(str(second)).td_value() == 2
