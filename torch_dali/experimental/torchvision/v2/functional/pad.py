"""`pad,_pad`, defined in functional/geometry.py (kept importable under DALI's module name)."""
from .geometry import pad,_pad  # noqa: F401
