"""`resize`, defined in functional/geometry.py (kept importable under DALI's module name)."""
from .geometry import resize  # noqa: F401
