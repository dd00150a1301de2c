"""Which of the keyword arguments given to an automatic augmentation each augmentation takes.

An augmentation is a function `op(data, parameter, ...)`; the names it declares after those two
(keyword or positional-or-keyword, `**kwargs` not counted) are the extra arguments it receives
(`shape`, `fill_value`, `interp_type` for the geometric ones)."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable

from ...errors import ArgumentError

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_POSITIONAL = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY)


class MissingArgException(ArgumentError):
    """An augmentation was called without an argument it requires (its `augmentation` and
    `missing_args` say which)."""

    def __init__(self, message: str, augmentation: Any, missing_args: list[str]) -> None:
        super().__init__(message)
        self.augmentation = augmentation
        self.missing_args = missing_args


class UnusedArgException(ArgumentError):
    """An automatic augmentation got keyword arguments none of its augmentations takes."""

    def __init__(self, message: str, unused_args: list[str]) -> None:
        super().__init__(message)
        self.unused_args = unused_args


def _extra_params(fun: Callable[..., Any], skip_positional: int) -> list[inspect.Parameter]:
    """The parameters of `fun` after its first `skip_positional` positional ones."""
    out = []
    for i, p in enumerate(inspect.signature(fun).parameters.values()):
        if i < skip_positional and p.kind in _POSITIONAL:
            continue
        out.append(p)
    return out


def num_positional_args(fun: Callable[..., Any]) -> int:
    """How many arguments `fun` takes by position."""
    return sum(p.kind in _POSITIONAL for p in inspect.signature(fun).parameters.values())


def accepted_kwargs(fun: Callable[..., Any], kwargs: dict[str, Any], skip_positional: int = 0) -> dict[str, Any]:
    """The entries of `kwargs` that `fun` declares by name (after `skip_positional` positional ones)."""
    names = {p.name for p in _extra_params(fun, skip_positional) if p.kind in _NAMED}
    return {k: v for k, v in kwargs.items() if k in names}


def required_kwargs(fun: Callable[..., Any], skip_positional: int = 0) -> list[str]:
    """The names `fun` declares (after `skip_positional` positional ones) without a default."""
    return [p.name for p in _extra_params(fun, skip_positional)
            if p.kind in _NAMED and p.default is inspect.Parameter.empty]


def missing_kwargs(fun: Callable[..., Any], kwargs: dict[str, Any], skip_positional: int = 0) -> list[str]:
    return [k for k in required_kwargs(fun, skip_positional) if k not in kwargs]


def unused_kwargs(augmentations: Iterable[Any], kwargs: dict[str, Any]) -> list[str]:
    """The names in `kwargs` that no augmentation of `augmentations` takes."""
    used: set[str] = set()
    for aug in augmentations:
        used.update(accepted_kwargs(aug.op, kwargs, 2))
    return [k for k in kwargs if k not in used]


def forbid_unused_kwargs(augmentations: Iterable[Any], kwargs: dict[str, Any], call_name: str) -> None:
    unused = unused_kwargs(augmentations, kwargs)
    if unused:
        which = "argument" if len(unused) == 1 else "arguments"
        raise UnusedArgException(f"{call_name}: the keyword {which} {', '.join(f'`{k}`' for k in unused)} "
                                 f"{'is' if len(unused) == 1 else 'are'} not taken by any of the augmentations",
                                 unused_args=unused)
