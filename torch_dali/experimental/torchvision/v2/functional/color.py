"""`to_grayscale` / `rgb_to_grayscale`, defined in functional/filters.py (kept importable under DALI's module name)."""
from .filters import rgb_to_grayscale, to_grayscale  # noqa: F401
