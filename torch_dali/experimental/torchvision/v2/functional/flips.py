"""`horizontal_flip,vertical_flip`, defined in functional/geometry.py (kept importable under DALI's module name)."""
from .geometry import horizontal_flip,vertical_flip  # noqa: F401
