"""`pad` and `_pad` (DALI's names), defined in functional/geometry.py (kept importable under DALI's module name)."""
from .geometry import pad, pad_image as _pad  # noqa: F401
