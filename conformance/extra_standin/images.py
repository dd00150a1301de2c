"""Image files of the stand-in (db/single/<format>/..., and the other image folders DALI's op tests read)."""
from __future__ import annotations

from pathlib import Path


def make(root: Path) -> None:
    pass
