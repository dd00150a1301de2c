"""A config file cannot make the loader run code nobody allowed (issue 16, item 1).

Each hostile config goes through every way in (Pipeline.deserialize, configs.check, `torch-dali
validate`, `torch-dali run`) in a child process (tests/_config_child.py), since resolving or running
some of these references would kill the process (`os.abort`, a `__main__` module's `sys.exit`).
Each must be refused by each way: load raises SerializationError, check and validate report it
(validate exits 2, never "OK"), run exits 2, nothing runs (no marker file, no module imported)."""
from __future__ import annotations

import base64
import os
import pickle

import pytest

from _config_child import finished, run_configs

HEADER = "torch_dali_pipeline: 1\npipeline: {batch_size: 1, num_threads: 1, device_id: null, seed: 1}\n"


def _function(ref: str) -> str:
    return HEADER + f"ops:\n- name: F\n  op: python_function\n  args: {{function: '{ref}'}}\n  inputs: []\noutputs: [F]\n"


def _source(ref: str) -> str:
    return HEADER + f"ops:\n- name: S\n  op: external_source\n  args: {{source: '{ref}'}}\n  inputs: []\noutputs: [S]\n"


class _Shell:
    """A pickle that runs a shell command when loaded."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _unpickle(marker: str, ref: str, data: str) -> str:
    payload = pickle.dumps(_Shell(marker))
    value = f"!!binary {base64.b64encode(payload).decode()}" if data == "binary" else str(list(payload))
    return (HEADER + f"ops:\n- name: R\n  op: readers.dataset\n  args:\n    dataset: [[{value}]]\n"
            f"    num_outputs: 1\n  inputs: []\n- name: P\n  op: python_function\n  args: {{function: '{ref}'}}\n"
            "  inputs: [R]\noutputs: [P]\n")


# name: (config text (a maker taking the marker path), what a refusal says, options for the loaders)
CASES = {
    # attribute chains out of an allowed-looking module (the references)
    "torch_os_system": (_function("torch:os.system"), "no attribute chain", {}),
    "cli_os_system": (_function("torch_dali.cli:os.system"), "no attribute chain", {}),
    "torch_builtins_exec": (_function("torch:builtins.exec"), "no attribute chain", {}),
    "torch_pickle_loads": (_function("torch:serialization.pickle.loads"), "no attribute chain", {}),
    "source_os_abort": (_source("torch:os.abort"), "no attribute chain", {}),
    # a shell command through unpickling, as data and as a function (a marker file must not appear)
    "binary_pickle": (lambda m: _unpickle(m, "torch:serialization.pickle.loads", "binary"),
                      "tag !!binary is not allowed", {}),
    "pickle_allowed_module": (lambda m: _unpickle(m, "pickle:loads", "ints"), "cannot come from a YAML file",
                              {"allow_modules": ["pickle"]}),
    # whole packages are not open by default; an opened module lends its own `def` functions only
    "torch_not_default": (_function("torch:load"), "'torch:load' is not allowed in this load", {}),
    "main_not_default": (_function("__main__:main"), "'__main__:main' is not allowed in this load", {}),
    "torch_dali_not_default": (_function("torch_dali.cli:main"), "is not allowed in this load", {}),
    "parent_does_not_open_child": (_function("torch.serialization:load"), "is not allowed in this load",
                                   {"allow_modules": ["torch"]}),
    "os_system_c_function": (_function("os:system"), "is a builtin_function_or_method, not a Python function",
                             {"allow_modules": ["os"]}),
    "os_abort_c_function": (_source("os:abort"), "is a builtin_function_or_method", {"allow_modules": ["os"]}),
    "builtins_exec": (_function("builtins:exec"), "is a builtin_function_or_method", {"allow_modules": ["builtins"]}),
    "pickle_loads": (_function("pickle:loads"), "is a builtin_function_or_method", {"allow_modules": ["pickle"]}),
    "class_popen": (_function("subprocess:Popen"), "is a type, not a Python function",
                    {"allow_modules": ["subprocess"]}),
    "imported_function": (_function("torch_dali.configs:read_file"), "defined elsewhere and imported",
                          {"allow_modules": ["torch_dali.configs"]}),
    "augment_helper_not_default": (_function("torch_dali.augment:_hwc"), "is not allowed in this load", {}),
    # modules that run a tool when imported are never imported
    "package_main_module": (_function("torch.utils.model_dump.__main__:main"), "never imported",
                            {"allow_modules": ["torch.utils.model_dump.__main__"], "watch": "torch.utils.model_dump.__main__"}),
    "unnamed_submodule": (_function("json.tool:main"), "is not allowed in this load",
                          {"allow_modules": ["json"], "watch": "json.tool"}),
    "source_as_inline_data": (HEADER + "ops:\n- name: S\n  op: external_source\n  args: {source: [[1]]}\n"
                              "  inputs: []\noutputs: [S]\n", "must be a function written as 'module:name'", {}),
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("attacks")
    cases = []
    for name, (content, _, options) in CASES.items():
        marker = folder / f"{name}.marker"
        path = folder / f"{name}.yaml"
        path.write_text(content(str(marker)) if callable(content) else content, encoding="utf-8")
        case = {"name": name, "path": str(path), "ways": ["load", "check", "validate", "run"]}
        case.update({k: v for k, v in options.items() if k.startswith("allow_")})
        case["watch"] = options.get("watch", "")
        cases.append(case)
    return {"folder": folder, **run_configs(cases)}


@pytest.mark.parametrize("name", list(CASES))
def test_config_cannot_run_code(results, name):
    _, says, options = CASES[name]
    r = finished(results, name)
    load, problems, validate, run = r["load"], r["check"]["problems"], r["validate"], r["run"]
    assert load.get("type") == "SerializationError" and says in load["error"], load
    assert problems and any(says in p for p in problems), problems
    assert validate["rc"] == 2 and says in validate["stderr"] and "OK" not in validate["stdout"], validate
    assert run["rc"] == 2 and says in run["stderr"], run
    assert not (results["folder"] / f"{name}.marker").exists(), "the shell command ran"
    if options.get("watch"):
        assert not r["imported"], f"{options['watch']} was imported"
