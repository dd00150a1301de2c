"""`normalize`, defined in functional/filters.py (kept importable under DALI's module name)."""
from .filters import normalize  # noqa: F401
