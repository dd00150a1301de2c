"""`nvidia.dali._utils.external_source_impl`: the external source's helpers DALI code imports."""
from __future__ import annotations

from ..ops.external_source_checks import accepted_arg_count

__all__ = ["accepted_arg_count"]
