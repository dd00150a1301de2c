"""How a reader names its samples' sources (DALI's source_info()): listed files relative to
`file_root`, and the lazily formatted names of a batch."""
from __future__ import annotations

import os
from typing import Any, Sequence


def relative_name(name: str, args: dict[str, Any]) -> str:
    """A listed file as DALI's source_info() names it: a `files` entry as given, else the path
    relative to `file_root` when it lies under it."""
    files = args.get("files")
    if files is not None and name in ([files] if isinstance(files, str) else files):
        return name
    root = args.get("file_root")
    prefix = os.path.join(root, "") if root else None
    return name[len(prefix):] if prefix and name.startswith(prefix) else name


class Sources(Sequence[str]):
    """The printable names of a batch's samples, made only when asked for (an error message, a
    Python op's SampleInfo): formatting 256 paths per batch is otherwise wasted host time."""

    __slots__ = ("_fn", "_indices", "_cache")

    def __init__(self, fn: Any, indices: list[int]) -> None:
        self._fn = fn
        self._indices = indices
        self._cache: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if i not in self._cache:
            self._cache[i] = self._fn(self._indices[i])
        return self._cache[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))
