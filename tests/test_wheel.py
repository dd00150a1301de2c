"""A built wheel carries what an installed torch_dali reads at run time (issue 17): the native
sources the C helpers (and the CUDA extension) build from, the shipped YAML configs and the sample
photos; installed outside the checkout, the helpers build, the configs load and the demo runs.

The wheel is built with `pip wheel --no-build-isolation` (no download: setuptools comes from the
test extra) from a copy of the package, so a stale `build/` folder in the checkout cannot leak into
it; it is installed with `pip install --target` into a fresh folder and run with this Python, from
a folder outside the checkout, with PYTHONPATH pointing only there: the editable install is not what
runs (the child checks where torch_dali was imported from). About 20-40 s on 2 cores."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from torch_dali import configs
from torch_dali._native.build import LIBRARIES, compiler_works
from torch_dali.shipped_configs import write_shipped

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "torch_dali"
# what the package reads from its own folder at run time
SHIPPED_TREES = ("_native/csrc", "data/configs", "data/photos")

CHILD = r"""
import json, sys
import torch_dali
from torch_dali import configs
from torch_dali._native.build import LIBRARIES
out = {"torch_dali": torch_dali.__file__, "configs": configs.available(), "config_dir": str(configs.CONFIG_DIR),
       "problems": {}, "libs": {}}
for name in out["configs"]:
    out["problems"][name] = configs.check(name)
    configs.load(name)  # the placeholders stay: nothing is read before build()
for lib in LIBRARIES:
    lib.load()
    out["libs"][lib.src.stem] = {"src": str(lib.src), "loaded": lib.lib is not None, "reason": lib.reason}
print(json.dumps(out))
"""


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 180) -> str:
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r.stdout


def _pip(*args: str, cwd: Path) -> str:
    return _run([sys.executable, "-m", "pip", *args, "--no-index", "--no-cache-dir",
                 "--disable-pip-version-check"], cwd)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(PKG, src / "torch_dali", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
    _pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"), str(src), cwd=tmp)
    wheels = list((tmp / "dist").glob("torch_dali-*.whl"))
    assert len(wheels) == 1, wheels
    site = tmp / "site"
    _pip("install", "--no-deps", "--target", str(site), str(wheels[0]), cwd=tmp)
    env = dict(os.environ)  # the knobs as here (the checkout's helpers are compared under them)
    # only the installed copy on the path; a fresh cache: a helper that loads was built from the wheel
    env.update(PYTHONPATH=str(site), TORCH_DALI_EXT_DIR=str(tmp / "cache"), PYTHONDONTWRITEBYTECODE="1")
    return {"tmp": tmp, "wheel": wheels[0], "site": site, "env": env}  # type: ignore[dict-item]


def test_the_wheel_holds_the_native_sources_configs_and_photos(built: dict) -> None:
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    for tree in SHIPPED_TREES:
        files = [p for p in (PKG / tree).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        assert files, tree
        missing = [str(p.relative_to(ROOT)) for p in files if str(p.relative_to(ROOT)) not in names]
        assert missing == [], f"not in the wheel: {missing}"


def test_the_wheel_is_marked_typed(built: dict) -> None:
    # PEP 561: without torch_dali/py.typed mypy skips an installed torch_dali ("missing library stubs
    # or py.typed marker"); DALI's wheel carries nvidia/dali/py.typed
    assert "torch_dali/py.typed" in zipfile.ZipFile(built["wheel"]).namelist()


def test_installed_wheel_builds_the_c_helpers_and_loads_the_configs(built: dict) -> None:
    out = json.loads(_run([sys.executable, "-c", CHILD], built["tmp"], built["env"]).splitlines()[-1])
    site = str(built["site"])
    assert out["torch_dali"].startswith(site), f"imported {out['torch_dali']}, not the installed wheel"
    assert out["config_dir"].startswith(site)
    assert out["configs"] == sorted(configs.SHIPPED) and out["configs"]
    assert out["problems"] == {name: [] for name in out["configs"]}
    ok, why = compiler_works()
    assert sorted(out["libs"]) == sorted(lib.src.stem for lib in LIBRARIES)
    for name, lib in out["libs"].items():
        assert lib["src"].startswith(site), lib
        # where the checkout's copy builds, the installed one must: same sources, now from the wheel
        here = next(x for x in LIBRARIES if x.src.stem == name).load() is not None
        assert lib["loaded"] == here, f"{name}: {lib['reason']} (in the checkout: {here}; compiler: {ok} {why})"
    if ok:
        built_libs = {p.name.split("-")[0] for p in (built["tmp"] / "cache").glob("*.so")}
        assert {n for n, lib in out["libs"].items() if lib["loaded"]} <= built_libs


def test_installed_wheel_runs_the_demo(built: dict) -> None:
    out_dir = built["tmp"] / "demo"
    text = _run([sys.executable, "-m", "torch_dali.cli", "demo", "--out", str(out_dir), "--batches", "1",
                 "--batch-size", "8", "--images-per-class", "2", "--threads", "2"], built["tmp"], built["env"])
    assert "reloaded copy gives identical batches: True" in text, text
    assert (out_dir / "batch.png").is_file() and (out_dir / "pipeline.yaml").is_file()


def test_shipped_config_files_are_their_definitions_byte_for_byte(tmp_path: Path) -> None:
    """The YAML files in the package are write_shipped()'s output, comments included."""
    for path in write_shipped(tmp_path):
        assert path.read_text() == (configs.CONFIG_DIR / path.name).read_text(), path.name
    assert sorted(p.name for p in configs.CONFIG_DIR.glob("*.yaml")) == sorted(f"{n}.yaml" for n in configs.SHIPPED)
