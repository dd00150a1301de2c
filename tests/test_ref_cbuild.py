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


# A cache another user can write to could hold a library planted under the name a build gives:
# loading it would run its constructor. The library below records that it was loaded.
PLANTED = ('#include <stdio.h>\n__attribute__((constructor)) static void td_ran(void) '
           '{ FILE *f = fopen("%s", "w"); if (f) fclose(f); }\nint td_v(void) { return 666; }\n')


def _plant(tmp_path, monkeypatch, dir_mode, owner):
    if not _cbuild.compiler_works()[0]:
        pytest.skip("no working C compiler")
    import os
    import subprocess
    cache = tmp_path / "cache"
    monkeypatch.setenv("TORCH_DALI_EXT_DIR", str(cache))
    src = tmp_path / "good.c"
    src.write_text("int td_v(void) { return 1; }\n")
    so = _cbuild.build(src)  # the name a build gives this source
    marker = tmp_path / "ran"
    (tmp_path / "planted.c").write_text(PLANTED % marker)
    subprocess.run([_cbuild._compiler(), "-shared", "-fPIC", "-o", str(so), str(tmp_path / "planted.c")], check=True)
    if owner is not None:
        os.chown(so, owner, owner)
    os.chmod(cache, dir_mode)
    lib = _cbuild.CLibrary(src)
    _cbuild.LIBRARIES.remove(lib)
    return lib, marker


def test_a_cache_others_may_write_to_is_refused(tmp_path, monkeypatch):
    lib, marker = _plant(tmp_path, monkeypatch, 0o1777, None)
    assert lib.load() is None and not marker.exists()
    assert "other users may write to it" in lib.reason and str(tmp_path / "cache") in lib.reason


def test_a_library_of_another_user_is_refused(tmp_path, monkeypatch):
    import os
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    lib, marker = _plant(tmp_path, monkeypatch, 0o700, 65534)
    assert lib.load() is None and not marker.exists()
    assert "belongs to user id 65534" in lib.reason


def test_a_build_under_a_loose_umask_loads_again(tmp_path, monkeypatch):
    if not _cbuild.compiler_works()[0]:
        pytest.skip("no working C compiler")
    import os
    monkeypatch.setenv("TORCH_DALI_EXT_DIR", str(tmp_path / "cache"))
    src = tmp_path / "fine.c"
    src.write_text("int td_fine(void) { return 1; }\n")
    old = os.umask(0)
    try:
        so = _cbuild.build(src)
    finally:
        os.umask(old)
    assert _cbuild.build(src) == so  # the cached library passes the check (mode 755, folder 700)


def test_the_extension_refuses_a_build_folder_others_may_write_to(tmp_path, monkeypatch):
    import os
    from torch_dali._native import extension
    monkeypatch.setenv("TORCH_DALI_EXT_DIR", str(tmp_path))
    monkeypatch.setattr(extension, "_built_key", lambda: "stamp")  # a finished build, as far as it knows
    os.makedirs(extension._build_dir())
    open(os.path.join(extension._build_dir(), extension._NAME + ".so"), "wb").close()
    os.chmod(extension._build_dir(), 0o777)
    with pytest.raises(RuntimeError, match="other users may write to it"):
        extension._load_built()


def test_a_refused_extension_build_warns_once(tmp_path, monkeypatch):
    """Where CUDA is there but the extension cannot load (here: a cache others may write to), the
    GPU ops run their pure-torch versions: load() says so with one RuntimeWarning."""
    import os
    import warnings
    from torch_dali._native import extension
    monkeypatch.setenv("TORCH_DALI_EXT_DIR", str(tmp_path))
    monkeypatch.setattr(extension, "_unavailable_reason", lambda: None)  # as on a CUDA machine
    monkeypatch.setattr(extension, "_built_key", lambda: "stamp")
    monkeypatch.setattr(extension, "_tried", False)
    monkeypatch.setattr(extension, "_ready", False)
    monkeypatch.setattr(extension, "_module", None)
    monkeypatch.setattr(extension, "_error", None)
    os.makedirs(extension._build_dir())
    open(os.path.join(extension._build_dir(), extension._NAME + ".so"), "wb").close()
    os.chmod(extension._build_dir(), 0o777)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert extension.load() is None and extension.load() is None
    msgs = [str(w.message) for w in seen if issubclass(w.category, RuntimeWarning)]
    assert len(msgs) == 1 and "other users may write to it" in msgs[0]
