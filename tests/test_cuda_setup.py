"""With TORCH_DALI_CUDA_CONNECTIONS above 0, `import torch_dali` sets CUDA_DEVICE_MAX_CONNECTIONS
before any CUDA context exists, never over the user's value or into a context already made; by
default it sets nothing (torch_dali/_cuda_setup.py)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from torch_dali import _cuda_setup

VAR = _cuda_setup.CONNECTIONS


@pytest.mark.parametrize("user, knob, context, expected", [
    (None, None, False, None),         # off by default
    (None, "32", False, "32"),
    (None, "16", False, "16"),
    (None, "0", False, None),          # the knob turns it off
    ("1", None, False, "1"),           # the user's value stays
    ("4", "32", False, "4"),
    (None, "32", True, None),          # a context exists: too late, nothing set
    ("", "32", False, "32"),           # set but empty counts as unset
])
def test_connections_set_only_where_it_takes_effect(monkeypatch: pytest.MonkeyPatch, user: str | None,
                                                    knob: str | None, context: bool,
                                                    expected: str | None) -> None:
    for name, value in ((VAR, user), ("TORCH_DALI_CUDA_CONNECTIONS", knob)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    monkeypatch.setattr(_cuda_setup, "_context_exists", lambda: context)
    did = _cuda_setup.set_connections()
    assert os.environ.get(VAR) == expected
    assert did == (expected is not None and expected != user)


@pytest.mark.parametrize("initialized", [False, True])
def test_a_context_is_torchs_initialized_state(monkeypatch: pytest.MonkeyPatch, initialized: bool) -> None:
    import torch
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: initialized)
    assert _cuda_setup._context_exists() is initialized


def test_import_sets_it_before_torch_makes_a_context() -> None:
    env = {k: v for k, v in os.environ.items() if k not in (VAR, "TORCH_DALI_CUDA_CONNECTIONS")}
    code = ("import os, torch; assert not torch.cuda.is_initialized(); import torch_dali; "
            f"print(os.environ.get('{VAR}'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "None"  # the default sets nothing
    env["TORCH_DALI_CUDA_CONNECTIONS"] = "32"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "32"
    env[VAR] = "2"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "2"
