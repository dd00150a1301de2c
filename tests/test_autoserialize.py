"""nvidia.dali.plugin.triton.autoserialize / nvidia.dali._utils.autoserialize.invoke_autoserialize:
the one marked pipeline_def of a module tree is found (also through a sibling module that imports
it) and its pipeline written to a file that deserializes to the same pipeline."""
from __future__ import annotations

import importlib
import sys
import textwrap

import numpy as np
import pytest

from torch_dali import Pipeline
from torch_dali._utils.autoserialize import invoke_autoserialize

MARKED = """
from torch_dali.plugin.triton import autoserialize
from torch_dali import fn, pipeline_def, types


@autoserialize
@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def {name}():
    return fn.cast(types.Constant(np.arange(3), dtype=types.INT32) * {k}, dtype=types.FLOAT)
"""


@pytest.fixture
def package(tmp_path, monkeypatch):
    """Makes `pkg_<n>.<module>` modules from sources; returns an importer."""
    made = []

    def make(pkg, **sources):
        root = tmp_path / pkg
        root.mkdir()
        (root / "__init__.py").write_text("")
        for mod, src in sources.items():
            (root / f"{mod}.py").write_text("import numpy as np\n" + textwrap.dedent(src))
        made.append(pkg)
        return lambda mod: importlib.import_module(f"{pkg}.{mod}")

    monkeypatch.syspath_prepend(str(tmp_path))
    yield make
    for name in [m for m in sys.modules if m.split(".")[0] in made]:
        del sys.modules[name]


def test_the_marked_pipeline_is_found_and_written(package, tmp_path):
    load = package("pkg_direct", model=MARKED.format(name="pipe", k=3), other="from . import model\n")
    for mod in ("model", "other"):  # directly, and through a module that imports it
        out = tmp_path / f"{mod}.yaml"
        invoke_autoserialize(load(mod), str(out))
        pipe = Pipeline.deserialize(filename=str(out))
        pipe.build()
        (x,) = pipe.run()
        np.testing.assert_array_equal(np.asarray(x.as_tensor()), [[0, 3, 6]] * 2)


def test_exactly_one_marked_pipeline(package, tmp_path):
    two = MARKED.format(name="a", k=1) + MARKED.format(name="b", k=2)
    load = package("pkg_count", two=two, none="x = 1\n")
    for mod, words in (("two", "found 2"), ("none", "found 0")):
        with pytest.raises(RuntimeError, match=f"exactly one @autoserialize pipeline; {words}"):
            invoke_autoserialize(load(mod), str(tmp_path / "out.yaml"))
    assert not (tmp_path / "out.yaml").exists()


def test_only_pipeline_defs_can_be_marked():
    from torch_dali.plugin.triton import autoserialize

    with pytest.raises(TypeError, match="@pipeline_def"):
        autoserialize(lambda: 42)
