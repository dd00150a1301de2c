"""`center_crop`, defined in functional/geometry.py (kept importable under DALI's module name)."""
from .geometry import center_crop  # noqa: F401
