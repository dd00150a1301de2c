"""`nvidia.dali.plugin.triton`: the `@autoserialize` decorator marking the pipeline Triton's DALI
backend serializes (torch_dali._utils.autoserialize has the search and the writing)."""
from __future__ import annotations

from .._utils.autoserialize import autoserialize

__all__ = ["autoserialize"]
