"""A five-file tree of two classes for the dynamic mode's reader tests (the bytes are not images:
the readers only list and read them)."""
from __future__ import annotations

import pytest

FILES = {"a/0.jpg": b"ab", "a/1.jpg": b"cde", "b/2.jpg": b"f", "b/3.jpg": b"ghij", "b/4.jpg": b"kl"}


@pytest.fixture
def root(tmp_path):
    for name, data in FILES.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(data)
    return str(tmp_path)
