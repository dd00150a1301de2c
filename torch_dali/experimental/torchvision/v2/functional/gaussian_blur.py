"""`gaussian_blur`, defined in functional/filters.py (kept importable under DALI's module name)."""
from .filters import gaussian_blur  # noqa: F401
