"""The op reference in docs/ops.md is generated from the schemas and must be current."""
from __future__ import annotations

from pathlib import Path

from torch_dali.docs import ops_markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "ops.md"


def test_ops_reference_is_current():
    assert DOC.read_text() == ops_markdown(), "regenerate: python -m torch_dali.docs > docs/ops.md"


def test_every_public_op_is_documented():
    text = DOC.read_text()
    for name in ("readers.file", "readers.mxnet", "decoders.image", "resize", "crop_mirror_normalize",
                 "random_resized_crop", "random.uniform", "python_function", "external_source"):
        assert f"## {name}\n" in text
